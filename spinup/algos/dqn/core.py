"""Q-networks for DQN: a plain MLP Q-function and its dueling variant."""
import numpy as np
import torch
import torch.nn as nn


def combined_shape(length, shape=None):
    """``(length,)`` for scalars, ``(length, *shape)`` otherwise (buffer shapes)."""
    if shape is None:
        return (length,)
    return (length, shape) if np.isscalar(shape) else (length, *shape)


def mlp(sizes, activation, output_activation=nn.Identity):
    """``Linear -> activation`` for each consecutive pair in ``sizes``; the last layer
    uses ``output_activation``."""
    layers = []
    for j in range(len(sizes) - 1):
        act = activation if j < len(sizes) - 2 else output_activation
        layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
    return nn.Sequential(*layers)


def count_vars(module):
    """Number of scalar parameters in ``module``."""
    return sum(np.prod(p.shape) for p in module.parameters())


class MLPQFunction(nn.Module):
    """Action values ``Q(s, .)`` for a flat ``Box`` observation space and a
    ``Discrete`` action space: obs (batch, obs_dim) -> (batch, n_actions).

    With ``dueling=False`` one MLP outputs the ``n`` action values. With
    ``dueling=True`` (Wang et al. 2016) a shared MLP trunk feeds a state-value
    head ``V(s)`` and an advantage head ``A(s, a)``, aggregated as

        ``Q(s, a) = V(s) + A(s, a) - mean_a' A(s, a')``.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Discrete): actions.
        hidden_sizes (list of int): hidden layer sizes (of the trunk when dueling).
        activation (nn.Module class): activation of the hidden layers.
        dueling (bool): use the dueling architecture.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(256, 256),
                 activation=nn.ReLU, dueling=False):
        super().__init__()
        if type(action_space).__name__ != "Discrete":
            raise ValueError(f"MLPQFunction needs a Discrete action space, not {action_space}")
        obs_dim, n_act = observation_space.shape[0], int(action_space.n)
        self.dueling = dueling
        if dueling:
            self.trunk = mlp([obs_dim] + list(hidden_sizes), activation, activation)
            self.v_head = nn.Linear(hidden_sizes[-1], 1)
            self.a_head = nn.Linear(hidden_sizes[-1], n_act)
        else:
            self.q = mlp([obs_dim] + list(hidden_sizes) + [n_act], activation)

    def forward(self, obs):
        if not self.dueling:
            return self.q(obs)
        h = self.trunk(obs)
        adv = self.a_head(h)
        # Mean-subtracted advantages make V and A identifiable.
        return self.v_head(h) + adv - adv.mean(dim=-1, keepdim=True)

    @torch.no_grad()
    def act(self, obs, deterministic=False):
        """Greedy action ``argmax_a Q(obs, a)`` as numpy (an int array of shape ``()``
        for one observation). The greedy policy is already deterministic, so
        ``deterministic`` is accepted (for ``test_policy``) and ignored; DQN's
        epsilon-greedy exploration lives in ``dqn.py``."""
        return self.forward(obs).argmax(dim=-1).numpy()
