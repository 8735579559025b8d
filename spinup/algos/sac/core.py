"""Networks for SAC: a tanh-squashed Gaussian policy and two Q-functions.

Every action inside SAC is in *policy units*, the box ``[-1, 1]^act_dim`` that ``tanh``
maps onto. The environment's units appear in one place only, ``MLPActorCritic.act``,
through the affine map ``a_env = act_bias + act_scale * a``; the two vectors of that
map are registered buffers, so a saved model carries them.

Source: Haarnoja et al. 2018, arXiv:1801.01290, Eq. 11 (the reparameterised action)
and Appendix C (the log-likelihood of a squashed action); docs/algorithms/sac.rst.
"""
import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from spinup.utils.torch_tools import MLP  # nn.Sequential with a leaner forward

#: Bounds on the policy's log standard deviation: below -20 the Gaussian is a point
#: mass for float32, above 2 (std ~ 7.4) tanh saturates for almost every sample.
LOG_STD_MIN = -20
LOG_STD_MAX = 2
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_2 = math.log(2.0)


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
    """Fully connected network ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``.

    Every ``nn.Linear`` is followed by an activation module: ``activation`` after the
    hidden layers, ``output_activation`` after the last one (so the modules alternate
    Linear, activation, Linear, activation, ..., which fixes the ``state_dict`` keys).

    Args:
        sizes (list of int): layer widths, input first.
        activation (type): ``nn.Module`` class used after each hidden layer.
        output_activation (type): ``nn.Module`` class used after the last layer.

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


def squashed_gaussian_log_prob(u, mu, log_std):
    """Log-density of ``a = tanh(u)`` when ``u ~ N(mu, diag(exp(log_std))^2)``.

    By the change of variables of Appendix C of arXiv:1801.01290,
    ``log pi(a) = log N(u; mu, std) - sum_i log(1 - tanh(u_i)^2)``. The correction is
    evaluated through the identity ``1 - tanh(u)^2 = 4 / (e^u + e^-u)^2``, i.e.
    ``log(1 - tanh(u)^2) = 2 * (log 2 - u - softplus(-2 u))``: exact, and finite even
    where ``tanh(u)`` rounds to +-1 in float32 and the naive form gives ``log 0``.

    Args:
        u (torch.Tensor): pre-squash sample, shape ``(..., act_dim)``.
        mu (torch.Tensor): Gaussian mean, same shape.
        log_std (torch.Tensor): Gaussian log standard deviation, same shape.

    Returns:
        torch.Tensor: ``log pi(tanh(u))``, shape ``(...)`` (summed over actions).

    Source:
        Haarnoja et al. 2018, arXiv:1801.01290, Appendix C.
    """
    standardized = (u - mu) / torch.exp(log_std)
    gaussian = -0.5 * standardized.pow(2) - log_std - _HALF_LOG_2PI
    log_tanh_slope = 2 * (_LOG_2 - u - F.softplus(-2 * u))
    return gaussian.sum(dim=-1) - log_tanh_slope.sum(dim=-1)


class SquashedGaussianMLPActor(nn.Module):
    """Policy ``a = tanh(mu(s) + std(s) * xi)``, ``xi ~ N(0, I)``.

    A shared MLP body ``net`` feeds two linear heads, ``mu_layer`` and
    ``log_std_layer``, so both the mean and the spread depend on the state. The
    log-std is clamped to ``[LOG_STD_MIN, LOG_STD_MAX]``.

    Args:
        obs_dim (int): observation size.
        act_dim (int): action size.
        hidden_sizes (list of int): widths of the body's layers.
        activation (type): ``nn.Module`` class of the body's activations.
    """

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        width = hidden_sizes[-1] if len(hidden_sizes) else obs_dim  # () : heads read obs
        self.net = mlp([obs_dim, *hidden_sizes], activation, activation)
        self.mu_layer = nn.Linear(width, act_dim)
        self.log_std_layer = nn.Linear(width, act_dim)

    def forward(self, obs, deterministic=False, with_logprob=True):
        """Act in policy units.

        Args:
            obs (torch.Tensor): ``(batch, obs_dim)`` or ``(obs_dim,)``.
            deterministic (bool): return the mean action ``tanh(mu)`` instead of a
                sample (test episodes, ``test_policy -d``).
            with_logprob (bool): also compute ``log pi(a|s)``.

        Returns:
            tuple: ``a`` of shape ``(batch, act_dim)`` in ``[-1, 1]``, differentiable
            with respect to the parameters (reparameterisation, Eq. 11 of
            arXiv:1801.01290); ``logp_a`` of shape ``(batch,)``, or ``None`` when
            ``with_logprob`` is false.
        """
        features = self.net(obs)
        mu = self.mu_layer(features)
        log_std = self.log_std_layer(features).clamp(LOG_STD_MIN, LOG_STD_MAX)
        if deterministic:
            u = mu
        else:
            u = mu + log_std.exp() * torch.randn_like(mu)
        logp_a = squashed_gaussian_log_prob(u, mu, log_std) if with_logprob else None
        return torch.tanh(u), logp_a


class MLPQFunction(nn.Module):
    """``Q(s, a)`` as one MLP ``q`` on the concatenation ``[s, a]``.

    Args:
        obs_dim (int): observation size.
        act_dim (int): action size (actions in policy units).
        hidden_sizes (list of int): hidden layer widths.
        activation (type): ``nn.Module`` class of the hidden activations.
    """

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp([obs_dim + act_dim, *hidden_sizes, 1], activation)

    def forward(self, obs, act):
        """``(batch, obs_dim)``, ``(batch, act_dim)`` -> Q-values of shape ``(batch,)``
        (the trailing unit dimension is dropped so that targets broadcast correctly)."""
        return self.q(torch.cat([obs, act], dim=-1)).squeeze(-1)


class MLPActorCritic(nn.Module):
    """The default SAC actor-critic: policy ``pi`` and Q-functions ``q1``, ``q2``.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Box): actions with finite ``low``/``high``.
        hidden_sizes (list of int): hidden widths shared by the three networks
            (256, 256 by default, the size of the SAC papers' networks).
        activation (type): ``nn.Module`` class of the hidden activations.

    Attributes:
        act_scale (torch.Tensor): ``(high - low) / 2``, shape ``(act_dim,)``.
        act_bias (torch.Tensor): ``(high + low) / 2``, shape ``(act_dim,)``.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(256, 256),
                 activation=nn.ReLU):
        super().__init__()
        (obs_dim,) = observation_space.shape
        (act_dim,) = action_space.shape
        low = np.asarray(action_space.low, dtype=np.float64)
        high = np.asarray(action_space.high, dtype=np.float64)
        half_width = torch.as_tensor((high - low) / 2, dtype=torch.float32)
        centre = torch.as_tensor((high + low) / 2, dtype=torch.float32)
        self.register_buffer("act_scale", half_width)
        self.register_buffer("act_bias", centre)

        # The three networks are built in this order (pi, q1, q2) from one seed.
        layout = (obs_dim, act_dim, hidden_sizes, activation)
        self.pi = SquashedGaussianMLPActor(*layout)
        self.q1 = MLPQFunction(*layout)
        self.q2 = MLPQFunction(*layout)

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """Environment action for ``obs`` as a numpy array (what ``test_policy`` runs).

        Args:
            obs (torch.Tensor): ``(obs_dim,)`` or ``(batch, obs_dim)``.
            deterministic (bool): the mean action ``tanh(mu)`` instead of a sample.

        Returns:
            numpy.ndarray: ``act_bias + act_scale * a``, within ``[low, high]``.
        """
        a, _ = self.pi(obs, deterministic, with_logprob=False)
        return (self.act_bias + self.act_scale * a).numpy()
