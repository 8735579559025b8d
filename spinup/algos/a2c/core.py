"""Actor-critics for A2C: MLP categorical / diagonal-Gaussian policies and an MLP value function."""
import numpy as np
import scipy.signal
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal


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


def discount_cumsum(x, discount):
    """Discounted cumulative sums of vector ``x`` (via ``scipy.signal.lfilter``).

    input: ``[x0, x1, x2]``; output:
    ``[x0 + discount * x1 + discount^2 * x2, x1 + discount * x2, x2]``.
    """
    return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]


class Actor(nn.Module):
    """Base policy: ``forward(obs, act=None) -> (pi, logp_a)``."""

    def _distribution(self, obs):
        raise NotImplementedError

    def _log_prob_from_distribution(self, pi, act):
        raise NotImplementedError

    def forward(self, obs, act=None):
        """Produce the action distribution for ``obs`` (batch, obs_dim) and,
        optionally, the log-likelihood (batch,) of ``act`` under it."""
        pi = self._distribution(obs)
        logp_a = None
        if act is not None:
            logp_a = self._log_prob_from_distribution(pi, act)
        return pi, logp_a


class MLPCategoricalActor(Actor):
    """Categorical policy: the MLP outputs one logit per discrete action."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.logits_net = mlp([obs_dim] + list(hidden_sizes) + [act_dim], activation)

    def _distribution(self, obs):
        return Categorical(logits=self.logits_net(obs), validate_args=False)

    def _log_prob_from_distribution(self, pi, act):
        return pi.log_prob(act)

    def mode(self, pi):
        return pi.probs.argmax(dim=-1)

    def entropy(self, pi):
        """Entropy H[pi(.|s)] of each distribution in the batch: (batch,)."""
        return pi.entropy()


class MLPGaussianActor(Actor):
    """Diagonal Gaussian policy: the MLP outputs the mean; ``log_std`` is a free
    state-independent parameter vector initialised to -0.5."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.log_std = nn.Parameter(-0.5 * torch.ones(act_dim, dtype=torch.float32))
        self.mu_net = mlp([obs_dim] + list(hidden_sizes) + [act_dim], activation)

    def _distribution(self, obs):
        return Normal(self.mu_net(obs), torch.exp(self.log_std), validate_args=False)

    def _log_prob_from_distribution(self, pi, act):
        return pi.log_prob(act).sum(axis=-1)  # Last axis sum needed for Torch Normal distribution

    def mode(self, pi):
        return pi.mean

    def entropy(self, pi):
        """Entropy of each diagonal Gaussian in the batch (sum over action dims): (batch,)."""
        return pi.entropy().sum(axis=-1)


class MLPCritic(nn.Module):
    """State-value function ``V(s)``: obs (batch, obs_dim) -> (batch,)."""

    def __init__(self, obs_dim, hidden_sizes, activation):
        super().__init__()
        self.v_net = mlp([obs_dim] + list(hidden_sizes) + [1], activation)

    def forward(self, obs):
        return torch.squeeze(self.v_net(obs), -1)  # Critical to ensure v has right shape.


class MLPActorCritic(nn.Module):
    """Policy ``pi`` and value function ``v`` for a ``Box`` observation space and a
    ``Box`` (diagonal Gaussian) or ``Discrete`` (categorical) action space.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (Box or Discrete): actions.
        hidden_sizes (list of int): hidden layer sizes of both networks.
        activation (nn.Module class): activation of the hidden layers.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(64, 64),
                 activation=nn.Tanh):
        super().__init__()
        obs_dim = observation_space.shape[0]
        if type(action_space).__name__ == "Box":
            self.pi = MLPGaussianActor(obs_dim, action_space.shape[0], hidden_sizes, activation)
        elif type(action_space).__name__ == "Discrete":
            self.pi = MLPCategoricalActor(obs_dim, action_space.n, hidden_sizes, activation)
        else:
            raise ValueError(f"MLPActorCritic supports Box or Discrete action spaces, "
                             f"not {action_space}")
        self.v = MLPCritic(obs_dim, hidden_sizes, activation)

    @torch.no_grad()
    def step(self, obs):
        """Sample ``a ~ pi(.|obs)``; return numpy ``(a, v(obs), logp(a))``."""
        pi = self.pi._distribution(obs)
        a = pi.sample()
        logp_a = self.pi._log_prob_from_distribution(pi, a)
        v = self.v(obs)
        return a.numpy(), v.numpy(), logp_a.numpy()

    @torch.no_grad()
    def act(self, obs, deterministic=False):
        """Action for ``obs`` as numpy: a sample, or the mode when ``deterministic``."""
        if deterministic:
            return self.pi.mode(self.pi._distribution(obs)).numpy()
        return self.step(obs)[0]
