"""Actor-critic for TD3: a deterministic MLP policy and two MLP Q-functions.

Inside the algorithm every action lives in the policy's units, the box
``[-1, 1]^act_dim`` that the ``tanh`` output layer produces. Only
``MLPActorCritic.act`` maps an action to the environment's ``[low, high]`` (the
bounds are registered buffers, so they are saved with the model).
"""
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


class MLPActor(nn.Module):
    """Deterministic policy ``mu(s)``: obs (batch, obs_dim) -> action in ``[-1, 1]``."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.pi = mlp([obs_dim] + list(hidden_sizes) + [act_dim], activation, nn.Tanh)

    def forward(self, obs):
        return self.pi(obs)


class MLPQFunction(nn.Module):
    """``Q(s, a)``: obs (batch, obs_dim), act (batch, act_dim) -> (batch,)."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp([obs_dim + act_dim] + list(hidden_sizes) + [1], activation)

    def forward(self, obs, act):
        q = self.q(torch.cat([obs, act], dim=-1))
        return torch.squeeze(q, -1)  # Critical to ensure q has right shape.


class MLPActorCritic(nn.Module):
    """Deterministic policy ``pi`` and twin Q-functions ``q1``, ``q2`` for a flat
    ``Box`` observation space and a bounded ``Box`` action space.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Box): actions with finite ``low``/``high``.
        hidden_sizes (list of int): hidden layer sizes of all three networks.
        activation (nn.Module class): activation of the hidden layers.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(256, 256),
                 activation=nn.ReLU):
        super().__init__()
        obs_dim = observation_space.shape[0]
        act_dim = action_space.shape[0]
        low = np.asarray(action_space.low, dtype=np.float64)
        high = np.asarray(action_space.high, dtype=np.float64)
        # a_env = act_bias + act_scale * a maps [-1, 1] onto [low, high] (any bounds)
        self.register_buffer("act_scale", torch.as_tensor((high - low) / 2, dtype=torch.float32))
        self.register_buffer("act_bias", torch.as_tensor((high + low) / 2, dtype=torch.float32))

        self.pi = MLPActor(obs_dim, act_dim, hidden_sizes, activation)
        self.q1 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)
        self.q2 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)

    @torch.no_grad()
    def act(self, obs, deterministic=False):
        """Action ``mu(obs)`` in env units (numpy, ready for ``env.step``). The policy
        is deterministic, so ``deterministic`` changes nothing."""
        return (self.act_bias + self.act_scale * self.pi(obs)).numpy()
