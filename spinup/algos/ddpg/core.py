"""Networks for DDPG: one deterministic policy ``mu(s)`` and one critic ``Q(s, a)``.

Both are plain multilayer perceptrons. Every action the algorithm handles is in the
policy's own units: the box ``[-1, 1]^act_dim`` that the ``tanh`` output of ``mu``
spans. The environment's bounds enter only in :meth:`MLPActorCritic.act`, through
the buffers ``act_scale`` and ``act_bias`` (part of the ``state_dict``, so a saved
model carries them).
"""
import numpy as np
import torch
from torch import nn
from spinup.utils.torch_tools import MLP  # nn.Sequential with a leaner forward


def combined_shape(length, shape=None):
    """Shape of an array that holds ``length`` items of shape ``shape``.

    Args:
        length (int): number of items (the buffer's capacity).
        shape (None, int or tuple): shape of one item; ``None`` for a scalar.

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
    """A fully connected network through the widths in ``sizes``.

    Layer ``i`` maps ``sizes[i]`` features to ``sizes[i + 1]`` and is followed by
    ``activation()``, except the last one, which is followed by
    ``output_activation()``. The modules alternate ``Linear``, nonlinearity, so the
    last ``Linear`` is at index ``-2``.

    Args:
        sizes (sequence of int): input width, hidden widths, output width.
        activation (type): ``nn.Module`` class placed after the hidden layers.
        output_activation (type): ``nn.Module`` class placed after the last layer.

    Returns:
        MLP (an ``nn.Sequential``)
    """
    last = len(sizes) - 2
    modules = []
    for i, (width_in, width_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        nonlinearity = output_activation if i == last else activation
        modules.extend((nn.Linear(width_in, width_out), nonlinearity()))
    return MLP(*modules)


def count_vars(module):
    """Total number of scalar parameters of ``module`` (for the log)."""
    return sum(int(np.prod(p.shape)) for p in module.parameters())


class MLPActor(nn.Module):
    """The deterministic policy ``mu(s)``.

    Maps observations ``(batch, obs_dim)`` to actions ``(batch, act_dim)`` in
    ``[-1, 1]`` (a ``tanh`` output layer).
    """

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.pi = mlp((obs_dim, *hidden_sizes, act_dim), activation, nn.Tanh)

    def forward(self, obs):
        """The policy's action for each observation.

        Args:
            obs (Tensor): ``(batch, obs_dim)`` or ``(obs_dim,)``.

        Returns:
            Tensor: ``mu(obs)``, ``(batch, act_dim)`` or ``(act_dim,)``, in ``[-1, 1]``.
        """
        return self.pi(obs)


class MLPQFunction(nn.Module):
    """The critic ``Q(s, a)`` on the concatenation of observation and action.

    Maps ``obs (batch, obs_dim)`` and ``act (batch, act_dim)`` to ``(batch,)``. The
    trailing dimension of size one is squeezed away: a ``(batch, 1)`` Q-value
    compared with a ``(batch,)`` Bellman target would broadcast to ``(batch,
    batch)`` and silently compute the wrong loss (exercise 2.2).
    """

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp((obs_dim + act_dim, *hidden_sizes, 1), activation)

    def forward(self, obs, act):
        """The critic's value of each observation-action pair.

        Args:
            obs (Tensor): ``(batch, obs_dim)``.
            act (Tensor): ``(batch, act_dim)``, in the policy's units ``[-1, 1]``.

        Returns:
            Tensor: ``Q(obs, act)``, shape ``(batch,)``.
        """
        return self.q(torch.cat((obs, act), dim=-1)).squeeze(-1)


class MLPActorCritic(nn.Module):
    """DDPG's default actor-critic: ``pi`` (:class:`MLPActor`) and ``q``
    (:class:`MLPQFunction`), each with its own hidden layers.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Box): actions with finite ``low`` and ``high``.
        hidden_sizes (sequence of int): hidden widths of both networks.
        activation (type): ``nn.Module`` class used after every hidden layer.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(256, 256),
                 activation=nn.ReLU):
        super().__init__()
        obs_dim, act_dim = observation_space.shape[0], action_space.shape[0]
        low = np.asarray(action_space.low, dtype=np.float64)
        high = np.asarray(action_space.high, dtype=np.float64)
        # env action = act_bias + act_scale * a sends -1 to low and +1 to high.
        half_width, centre = (high - low) / 2, (high + low) / 2
        self.register_buffer("act_scale", torch.as_tensor(half_width, dtype=torch.float32))
        self.register_buffer("act_bias", torch.as_tensor(centre, dtype=torch.float32))

        layout = (obs_dim, act_dim, hidden_sizes, activation)
        self.pi = MLPActor(*layout)
        self.q = MLPQFunction(*layout)

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """The policy's action for ``obs``, in the environment's units.

        Args:
            obs (torch.Tensor): ``(obs_dim,)`` or ``(batch, obs_dim)``.
            deterministic (bool): accepted for a common interface with the
                stochastic policies; ``mu`` is deterministic either way.

        Returns:
            numpy.ndarray: ``(act_dim,)`` or ``(batch, act_dim)``, in ``[low, high]``.
        """
        return (self.act_bias + self.act_scale * self.pi(obs)).numpy()
