"""Building blocks of DQN: the Q-network (one MLP with a value per action, or its
dueling variant) and the sum-tree under prioritized replay.

Source: Mnih et al. 2015 (Nature 518, 529-533) for the Q-network with one output per
action; Wang et al. 2016, arXiv:1511.06581, Eq. 9 for the dueling aggregation;
Schaul et al. 2016, arXiv:1511.05952, Section 3.3 for sampling from a sum-tree;
docs/algorithms/dqn.rst.
"""
import numpy as np
import torch
from torch import nn
from spinup.utils.torch_tools import MLP  # nn.Sequential with a leaner forward
from spinup.utils.torch_tools import conv_front, features_space, is_image_space


def combined_shape(length, shape=None):
    """Shape of a buffer that holds ``length`` items of shape ``shape``.

    Args:
        length (int): number of items.
        shape (None, int or tuple): shape of one item (``None``: a scalar).

    Returns:
        tuple: ``(length,)``, ``(length, shape)`` or ``(length, *shape)``.
    """
    if shape is None:
        return (length,)
    if np.isscalar(shape):
        return (length, shape)
    return (length, *shape)


def next_states(obs, final_obs, ended):
    """The state each env copy's step led to, for the replay buffer: ``obs`` (what
    ``envs.step`` returned), except that a copy whose episode ``ended`` has already been
    reset, so its row is ``final_obs[i]``, the episode's last observation.

    Args:
        obs (np.ndarray): ``(num_envs, *obs_shape)``, the copies' current observations.
        final_obs (list or np.ndarray): row ``i`` valid where ``ended[i]``.
        ended (np.ndarray): ``(num_envs,)`` bool, terminated or truncated.

    Returns:
        np.ndarray: ``obs`` itself when no episode ended, else a copy with those rows
        replaced.
    """
    if not ended.any():
        return obs
    s2 = obs.copy()
    for i in np.flatnonzero(ended):
        s2[i] = final_obs[i]
    return s2


def mlp(sizes, activation, output_activation=nn.Identity):
    """Fully connected network ``sizes[0] -> ... -> sizes[-1]``.

    Each ``nn.Linear`` is followed by an activation module (``activation`` after
    hidden layers, ``output_activation`` after the last), which fixes the
    ``state_dict`` keys (``0.weight``, ``2.weight``, ...).

    Args:
        sizes (list of int): layer widths, input first.
        activation (type): ``nn.Module`` class after each hidden layer.
        output_activation (type): ``nn.Module`` class after the last layer.

    Returns:
        MLP (an ``nn.Sequential``)
    """
    n_linear = len(sizes) - 1
    modules = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        modules.append(nn.Linear(fan_in, fan_out))
        modules.append(activation() if i < n_linear - 1 else output_activation())
    return MLP(*modules)


def count_vars(module):
    """Number of scalar parameters of ``module`` (for the log)."""
    return sum(np.prod(p.shape) for p in module.parameters())


class MLPQFunction(nn.Module):
    """All action values ``Q(s, .)`` of a ``Discrete`` action space at once.

    Plain (``dueling=False``): one MLP ``q`` maps an observation to ``n`` values.
    Dueling (``dueling=True``, Wang et al. 2016): an MLP ``trunk`` feeds a value head
    ``v_head`` and an advantage head ``a_head``, combined as in Eq. 9 of
    arXiv:1511.06581,

        ``Q(s, a) = V(s) + A(s, a) - (1/n) sum_b A(s, b)``.

    Subtracting the mean advantage fixes the split between ``V`` and ``A`` (without
    it a constant could move freely between them).

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Discrete): ``n`` actions.
        hidden_sizes (list of int): hidden widths (of the trunk when dueling).
        activation (type): ``nn.Module`` class of the hidden activations.
        dueling (bool): use the dueling architecture.

    Raises:
        ValueError: the action space is not ``Discrete``.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(256, 256),
                 activation=nn.ReLU, dueling=False):
        super().__init__()
        if type(action_space).__name__ != "Discrete":
            raise ValueError(f"MLPQFunction needs a Discrete action space, not {action_space}")
        (obs_dim,) = observation_space.shape
        n_actions = int(action_space.n)
        self.dueling = dueling
        if dueling:
            self.trunk = mlp([obs_dim, *hidden_sizes], activation, activation)
            width = hidden_sizes[-1] if len(hidden_sizes) else obs_dim  # () : heads read obs
            self.v_head = nn.Linear(width, 1)
            self.a_head = nn.Linear(width, n_actions)
        else:
            self.q = mlp([obs_dim, *hidden_sizes, n_actions], activation)

    def forward(self, obs):
        """``(batch, obs_dim)`` -> ``(batch, n)`` action values (or ``(obs_dim,)`` ->
        ``(n,)``)."""
        if not self.dueling:
            return self.q(obs)
        features = self.trunk(obs)
        advantages = self.a_head(features)
        mean_advantage = advantages.mean(dim=-1, keepdim=True)
        return self.v_head(features) + advantages - mean_advantage

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """Greedy action ``argmax_a Q(obs, a)``.

        Args:
            obs (torch.Tensor): ``(obs_dim,)`` or ``(batch, obs_dim)``.
            deterministic (bool): accepted because ``test_policy`` passes it; the
                greedy action is deterministic either way. Epsilon-greedy
                exploration belongs to the algorithm (``dqn.py``), not the network.

        Returns:
            numpy.ndarray: int64 action index, shape ``()`` or ``(batch,)``.
        """
        return self.forward(obs).argmax(dim=-1).numpy()


class CNNQFunction(MLPQFunction):
    """The Q-network DQN builds for image observations: :class:`MLPQFunction`'s heads
    (plain or dueling) reading the image through a
    :class:`~spinup.utils.torch_tools.ConvTorso`. With its defaults on 84x84 Atari
    frames it is the network of Mnih et al. 2015: three convolutions, one hidden layer
    of 512 ReLUs, a value per action. Pixel values are scaled inside the torso, so the
    replay buffer keeps ``uint8`` frames.

    Args:
        observation_space (gymnasium.spaces.Box): images, ``(C, H, W)`` or ``(H, W, C)``,
            ``uint8`` or ``bool``.
        action_space (gymnasium.spaces.Discrete): ``n`` actions.
        hidden_sizes (list of int): hidden widths after the torso.
        activation (type): ``nn.Module`` class of the hidden activations.
        dueling (bool): use the dueling heads.
        torso (str): ``"auto"``, ``"nature"`` or ``"small"`` (``ConvTorso``'s ``kind``).

    Raises:
        ValueError: the action space is not ``Discrete``, or ``torso`` does not fit.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(512,),
                 activation=nn.ReLU, dueling=False, torso="auto"):
        super().__init__(features_space(observation_space, torso), action_space,
                         hidden_sizes, activation, dueling)
        conv_front(self, "trunk" if dueling else "q", observation_space, torso)


def default_q_function(observation_space):
    """The class DQN builds when ``actor_critic`` is left at its default:
    :class:`CNNQFunction` for image observations, else :class:`MLPQFunction`."""
    return CNNQFunction if is_image_space(observation_space) else MLPQFunction


class SumTree:
    """Binary tree of partial sums over ``size`` leaves, in one array: node 1 is the
    root, node ``k`` has children ``2k`` and ``2k + 1``, leaf ``i`` is node
    ``capacity + i`` (``size`` rounded up to a power of two, so all leaves share one
    level). Each inner node holds the sum of its children, so the root is the total
    and the leaf at a prefix sum is one O(log N) walk down. ``update`` and ``find``
    treat a whole batch one level at a time."""

    def __init__(self, size):
        self.capacity = 1 << int(np.ceil(np.log2(max(size, 1))))
        self.tree = np.zeros(2 * self.capacity, dtype=np.float64)

    def total(self):
        """Sum of all leaves (the root)."""
        return self.tree[1]

    def get(self, idxs):
        """Values of leaves ``idxs``."""
        return self.tree[np.asarray(idxs) + self.capacity]

    def update(self, idxs, priorities):
        """Set leaves ``idxs`` to ``priorities``; refresh their ancestors."""
        nodes = np.atleast_1d(np.asarray(idxs)) + self.capacity
        self.tree[nodes] = priorities
        parents = np.unique(nodes // 2)
        while parents[0] >= 1:   # a batch's nodes always share one level
            self.tree[parents] = self.tree[2 * parents] + self.tree[2 * parents + 1]
            parents = np.unique(parents // 2)

    def find(self, u):
        """Leaf index ``i`` with ``sum_{j<i} p_j <= u < sum_{j<=i} p_j``, for each
        ``u`` in ``[0, total)``: go left when ``u`` is below the left child's sum,
        else subtract that sum and go right."""
        u = np.array(u, dtype=np.float64)
        nodes = np.ones(len(u), dtype=np.int64)
        while nodes[0] < self.capacity:
            left_sum = self.tree[2 * nodes]
            right = u >= left_sum
            u -= left_sum * right
            nodes = 2 * nodes + right
        return nodes - self.capacity
