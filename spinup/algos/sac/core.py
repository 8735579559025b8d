"""Actor-critic for SAC: a squashed-Gaussian MLP policy and two MLP Q-functions.

Inside the algorithm every action lives in the policy's units, the box
``[-1, 1]^act_dim`` that ``tanh`` produces. Only ``MLPActorCritic.act`` maps an action
to the environment's ``[low, high]`` (the bounds are registered buffers, so they are
saved with the model).
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LOG_STD_MAX = 2
LOG_STD_MIN = -20
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


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


def squashed_gaussian_log_prob(u, mu, log_std):
    """Log-density of ``a = tanh(u)`` where ``u ~ N(mu, exp(log_std)^2)`` (diagonal).

    Change of variables: ``log pi(a) = log N(u; mu, std) - sum_i log(1 - tanh(u_i)^2)``.
    ``log(1 - tanh(u)^2)`` is computed as ``2 * (log 2 - u - softplus(-2u))``, which is
    exact and stays finite when ``tanh(u)`` rounds to +-1 (SAC paper, appendix C).
    Shapes: ``(..., act_dim)`` in, ``(...)`` out.
    """
    z = (u - mu) / torch.exp(log_std)
    logp_u = (-0.5 * z.pow(2) - log_std - LOG_SQRT_2PI).sum(dim=-1)
    log_det_jacobian = (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(dim=-1)
    return logp_u - log_det_jacobian


class SquashedGaussianMLPActor(nn.Module):
    """``a = tanh(mu(s) + std(s) * xi)``, ``xi ~ N(0, I)``: mean and (clamped)
    log-std both come from the network, so the spread depends on the state."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.net = mlp([obs_dim] + list(hidden_sizes), activation, activation)
        self.mu_layer = nn.Linear(hidden_sizes[-1], act_dim)
        self.log_std_layer = nn.Linear(hidden_sizes[-1], act_dim)

    def forward(self, obs, deterministic=False, with_logprob=True):
        """Return ``(a, logp_a)``: an action in ``[-1, 1]^act_dim`` (a reparameterized
        sample, or ``tanh(mu)`` when ``deterministic``) and its log-prob (``None``
        unless ``with_logprob``). Differentiable through the sampling."""
        net_out = self.net(obs)
        mu = self.mu_layer(net_out)
        log_std = torch.clamp(self.log_std_layer(net_out), LOG_STD_MIN, LOG_STD_MAX)

        if deterministic:
            u = mu  # only used for evaluating the policy at test time
        else:
            u = mu + torch.exp(log_std) * torch.randn_like(mu)  # reparameterization trick

        logp_a = squashed_gaussian_log_prob(u, mu, log_std) if with_logprob else None
        return torch.tanh(u), logp_a


class MLPQFunction(nn.Module):
    """``Q(s, a)``: obs (batch, obs_dim), act (batch, act_dim) -> (batch,)."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp([obs_dim + act_dim] + list(hidden_sizes) + [1], activation)

    def forward(self, obs, act):
        q = self.q(torch.cat([obs, act], dim=-1))
        return torch.squeeze(q, -1)  # Critical to ensure q has right shape.


class MLPActorCritic(nn.Module):
    """Squashed-Gaussian policy ``pi`` and twin Q-functions ``q1``, ``q2`` for a flat
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

        self.pi = SquashedGaussianMLPActor(obs_dim, act_dim, hidden_sizes, activation)
        self.q1 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)
        self.q2 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)

    @torch.no_grad()
    def act(self, obs, deterministic=False):
        """Action for ``obs`` in env units (numpy, ready for ``env.step``): a sample,
        or the mean action ``tanh(mu)`` when ``deterministic``."""
        a, _ = self.pi(obs, deterministic, False)
        return (self.act_bias + self.act_scale * a).numpy()
