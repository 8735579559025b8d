"""Networks and small helpers for A3C.

The actor-critic is the usual pair of multilayer perceptrons: a policy ``pi`` (a
categorical distribution over discrete actions, or a diagonal Gaussian over
continuous ones) and a state-value function ``v``. What is particular to A3C is
:class:`SharedAdam`, the optimizer whose statistics all worker processes share.

The member names (``pi``, ``v``, ``logits_net``, ``mu_net``, ``log_std``, ``v_net``)
are the keys of the saved ``state_dict`` and must not change.
"""

import numpy as np
import torch
import torch.nn as nn
from gymnasium import spaces
from torch.distributions import Categorical, Normal
from spinup.utils.torch_tools import (MLP, finite_logp, sample_categorical,
                                      sample_diag_gaussian)


def combined_shape(length, shape=None):
    """Shape of a buffer that holds ``length`` items of shape ``shape``.

    Args:
        length (int): number of items.
        shape (None, int or tuple): shape of one item; ``None`` for a scalar.

    Returns:
        tuple: ``(length,)``, ``(length, shape)`` or ``(length, *shape)``.
    """
    if shape is None:
        item = ()
    elif np.isscalar(shape):
        item = (shape,)
    else:
        item = tuple(shape)
    return (length,) + item


def mlp(sizes, activation, output_activation=nn.Identity):
    """A fully connected network ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``.

    Every ``nn.Linear`` is followed by ``activation()``, except the last, which is
    followed by ``output_activation()``. The layers are numbered 0, 1, 2, ... in
    that order (``0`` is the first ``Linear``, ``2`` the second), which fixes the
    names in the saved ``state_dict``.

    Args:
        sizes (sequence of int): input size, hidden sizes, output size.
        activation (type): ``nn.Module`` class for the hidden layers.
        output_activation (type): ``nn.Module`` class after the last layer.

    Returns:
        MLP (an ``nn.Sequential``)
    """
    net = MLP()
    n_layers = len(sizes) - 1
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        net.append(nn.Linear(fan_in, fan_out))
        net.append(output_activation() if i == n_layers - 1 else activation())
    return net


def count_vars(module):
    """Number of scalar parameters of ``module`` (int)."""
    return sum(int(p.numel()) for p in module.parameters())


def discount_cumsum(x, discount):
    """Discounted sums from each index to the end of a 1-D array.

    ``y[t] = x[t] + discount * y[t + 1]``, with ``y`` zero after the last element;
    e.g. ``[x0, x1, x2] -> [x0 + d x1 + d^2 x2, x1 + d x2, x2]``. Rollouts are at
    most ``n_steps`` long, so the plain backward recursion is cheap.

    Args:
        x (np.ndarray): shape (n,).
        discount (float): the factor ``d`` (``gamma`` or ``gamma * lam``).

    Returns:
        np.ndarray of shape (n,), float64.
    """
    x = np.asarray(x, dtype=np.float64)  # sum in float64 whatever the input
    out = np.zeros_like(x)
    running = 0.0
    for t in range(len(x) - 1, -1, -1):
        running = x[t] + discount * running
        out[t] = running
    return out


class Actor(nn.Module):
    """A stochastic policy. Subclasses say how an observation batch becomes a
    ``torch.distributions`` object (:meth:`distribution`) and how to score actions
    under it (:meth:`log_prob`); calling the module returns both."""

    def distribution(self, obs):
        """The policy's distribution for a batch of observations (batch, obs_dim)."""
        raise NotImplementedError

    def log_prob(self, pi, act):
        """Log-likelihood (batch,) of ``act`` under the distribution ``pi``."""
        raise NotImplementedError

    def sample(self, obs):
        """One draw ``a ~ pi(.|obs)`` and its log-likelihood, for acting.

        Returns:
            tuple of torch.Tensor: ``(a, logp_a)``. This generic version goes
            through the distribution; the MLP actors below override it with the
            same numbers computed from the network output directly.
        """
        pi = self.distribution(obs)
        a = pi.sample()
        return a, self.log_prob(pi, a)

    def forward(self, obs, act=None):
        """Returns ``(pi, logp_a)``: the distribution for ``obs`` and the
        log-likelihood (batch,) of ``act`` under it, or ``None`` without ``act``."""
        pi = self.distribution(obs)
        return pi, (None if act is None else self.log_prob(pi, act))


class MLPCategoricalActor(Actor):
    """Policy over ``Discrete(n)`` actions: an MLP gives one logit per action."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.logits_net = mlp((obs_dim, *hidden_sizes, act_dim), activation)

    def distribution(self, obs):
        return Categorical(logits=self.logits_net(obs), validate_args=False)

    def log_prob(self, pi, act):
        return pi.log_prob(act)

    def sample(self, obs):
        """Acting path: ``(a, logp_a)`` for one draw ``a ~ pi(.|obs)``, the numbers a
        ``Categorical`` would give, without building one
        (:func:`spinup.utils.torch_tools.sample_categorical`)."""
        return sample_categorical(self.logits_net(obs))

    def mode(self, pi):
        """The most likely action of each distribution (batch,)."""
        return torch.argmax(pi.probs, dim=-1)

    def entropy(self, pi):
        """Entropy H[pi(.|s)] of each distribution in the batch: (batch,)."""
        return pi.entropy()


class MLPGaussianActor(Actor):
    """Policy over ``Box`` actions: a Gaussian with independent dimensions whose
    mean is an MLP of the observation and whose log standard deviation is one
    learned vector, the same for every state, starting at -0.5 (std about 0.6)."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))
        self.mu_net = mlp((obs_dim, *hidden_sizes, act_dim), activation)

    def distribution(self, obs):
        return Normal(self.mu_net(obs), self.log_std.exp(), validate_args=False)

    def log_prob(self, pi, act):
        # The dimensions are independent: the joint log-density is their sum.
        return pi.log_prob(act).sum(-1)

    def sample(self, obs):
        """Acting path: ``(a, logp_a)`` for one draw ``a ~ N(mu(obs), std^2)``, the
        numbers a ``Normal`` would give, without building one
        (:func:`spinup.utils.torch_tools.sample_diag_gaussian`)."""
        return sample_diag_gaussian(self.mu_net(obs), self.log_std)

    def mode(self, pi):
        """The mean of each Gaussian (batch, act_dim)."""
        return pi.mean

    def entropy(self, pi):
        """Entropy of each diagonal Gaussian in the batch (sum over action dims): (batch,)."""
        return pi.entropy().sum(-1)


class MLPCritic(nn.Module):
    """State-value function ``V(s)``: obs (batch, obs_dim) -> (batch,)."""

    def __init__(self, obs_dim, hidden_sizes, activation):
        super().__init__()
        self.v_net = mlp((obs_dim, *hidden_sizes, 1), activation)

    def forward(self, obs):
        # Drop the trailing size-1 axis: a (batch, 1) value would broadcast
        # against (batch,) returns into a (batch, batch) loss.
        return self.v_net(obs).squeeze(-1)


def _make_policy(obs_dim, action_space, hidden_sizes, activation):
    """The policy network that fits ``action_space``."""
    if isinstance(action_space, spaces.Box):
        return MLPGaussianActor(obs_dim, action_space.shape[0], hidden_sizes, activation)
    if isinstance(action_space, spaces.Discrete):
        return MLPCategoricalActor(obs_dim, int(action_space.n), hidden_sizes, activation)
    raise ValueError(f"MLPActorCritic supports Box or Discrete action spaces, "
                     f"not {action_space}")


class MLPActorCritic(nn.Module):
    """Policy ``pi`` and value function ``v`` for a flat ``Box`` observation space
    and a ``Box`` (diagonal Gaussian) or ``Discrete`` (categorical) action space.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (Box or Discrete): actions.
        hidden_sizes (sequence of int): hidden layer sizes of both networks.
        activation (type): ``nn.Module`` class of the hidden layers.

    Raises:
        ValueError: the action space is neither ``Box`` nor ``Discrete``.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(64, 64),
                 activation=nn.Tanh):
        super().__init__()
        (obs_dim,) = observation_space.shape
        # pi before v: the order in which their weights are drawn from the seed.
        self.pi = _make_policy(obs_dim, action_space, hidden_sizes, activation)
        self.v = MLPCritic(obs_dim, hidden_sizes, activation)

    @torch.inference_mode()
    def step(self, obs):
        """Sample ``a ~ pi(.|obs)``; return numpy ``(a, v(obs), logp(a))``.

        The acting path, run once per env step: one no-grad call, the policy's
        ``sample`` (no ``torch.distributions`` object, see the actors) and the
        value of the same observation; the losses keep the distributions.
        """
        a, logp_a = self.pi.sample(obs)
        return a.numpy(), self.v(obs).numpy(), finite_logp(logp_a.numpy())

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """Action for ``obs`` as numpy: a sample, or the mode when ``deterministic``."""
        if deterministic:
            return self.pi.mode(self.pi.distribution(obs)).numpy()
        return self.step(obs)[0]


class SharedAdam(torch.optim.Adam):
    """Adam whose moment estimates (and step counts) live in shared memory.

    A3C's workers all step *one* optimizer: each worker process holds its own
    Python copy of this object, but the state tensors are the same memory, like
    the shared RMSProp statistics of Mnih et al. 2016. Updates to them are
    lock-free (Hogwild), exactly like the updates to the shared parameters.

    Args:
        params: the shared model's parameters (already in shared memory).
        lr (float): learning rate, > 0.
        betas (tuple of float): decay rates of the first and second moments.
        eps (float): added to the denominator for numerical stability.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, lr=lr, betas=betas, eps=eps)
        # Adam would create its state lazily at the first step, in whichever
        # process steps first, where no other process could see it. Create it
        # here, in the main process, and move it to shared memory before the
        # workers are started.
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.zeros((), dtype=torch.float32)
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_avg_sq"] = torch.zeros_like(p.data)
                for tensor in state.values():
                    tensor.share_memory_()
