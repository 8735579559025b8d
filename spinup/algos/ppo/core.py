"""Networks for PPO: a stochastic policy pi(a|s) and a state-value function V(s).

Both are multi-layer perceptrons. The policy is a categorical distribution for a
``Discrete`` action space and a diagonal Gaussian for a ``Box`` action space (its
mean comes from the network, its log standard deviation is one free parameter per
action dimension), as described on docs/algorithms/ppo.rst under "Exploration vs.
Exploitation". :class:`MLPActorCritic` puts the two together; it is what ``ppo``
builds unless you pass your own ``actor_critic``.

The attribute names (``pi``, ``v``, ``logits_net``, ``mu_net``, ``log_std``,
``v_net``) are the keys of the saved ``state_dict``: renaming one would stop
existing ``model.pt`` files from loading.
"""

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal
from spinup.utils.torch_tools import (MLP, finite_logp, sample_categorical,
                                      sample_diag_gaussian,
                                      conv_front, features_space, is_image_space)


# ---- Small helpers ----

def combined_shape(length, shape=None):
    """The shape of an array of ``length`` (int) items of shape ``shape``: ``(length,)``
    for ``None`` (scalars), ``(length, shape)`` for an int, ``(length, *shape)`` for a tuple."""
    item = () if shape is None else (shape,) if np.isscalar(shape) else tuple(shape)
    return (length, *item)


def mlp(sizes, activation, output_activation=nn.Identity):
    """A fully connected network with layer widths ``sizes``.

    Every ``nn.Linear`` is followed by an activation module: ``activation`` for the
    hidden layers and ``output_activation`` for the last one, so the
    ``nn.Sequential`` alternates Linear (even indices) and activation (odd indices).

    Args:
        sizes (list of int): input width, hidden widths, output width.
        activation (type): ``nn.Module`` class for the hidden layers, e.g. ``nn.Tanh``.
        output_activation (type): ``nn.Module`` class after the last layer.

    Returns:
        MLP (an ``nn.Sequential``)
    """
    modules = []
    for index, (width_in, width_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        modules.append(nn.Linear(width_in, width_out))
        modules.append(output_activation() if index == len(sizes) - 2 else activation())
    return MLP(*modules)


def count_vars(module):
    """Number of scalar parameters (weights and biases) of ``module``."""
    return sum(param.numel() for param in module.parameters())


# ---- Policies ----

class Actor(nn.Module):
    """A stochastic policy. Subclasses build the action distribution for a batch
    of observations (``distribution``) and score actions under it (``log_prob``)."""

    def distribution(self, obs):
        """The policy's ``torch.distributions`` object for ``obs`` (batch, obs_dim)."""
        raise NotImplementedError

    def log_prob(self, pi, act):
        """Log-likelihood, shape (batch,), of ``act`` under the distribution ``pi``."""
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
        """Evaluate the policy.

        Args:
            obs (torch.Tensor): observations, shape (batch, obs_dim).
            act (torch.Tensor or None): actions to score, shape (batch,) for
                discrete actions or (batch, act_dim) for continuous ones.

        Returns:
            tuple: ``(pi, logp_a)``, the distribution and the log-likelihood of
            ``act`` with shape (batch,) (``None`` when ``act`` is not given).
        """
        pi = self.distribution(obs)
        logp_a = None if act is None else self.log_prob(pi, act)
        return pi, logp_a


class MLPCategoricalActor(Actor):
    """Policy over ``act_dim`` discrete actions: the MLP outputs one logit per action."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.logits_net = mlp([obs_dim, *hidden_sizes, act_dim], activation)

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
        """Most likely action of each row (used for deterministic evaluation)."""
        return pi.probs.argmax(dim=-1)


class MLPGaussianActor(Actor):
    """Diagonal Gaussian policy: mean ``mu_net(obs)``, standard deviation
    ``exp(log_std)``, where ``log_std`` does not depend on the observation and
    starts at -0.5 (standard deviation about 0.61)."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5, dtype=torch.float32))
        self.mu_net = mlp([obs_dim, *hidden_sizes, act_dim], activation)

    def distribution(self, obs):
        return Normal(self.mu_net(obs), self.log_std.exp(), validate_args=False)

    def log_prob(self, pi, act):
        # The action dimensions are independent: the joint log-density is the sum.
        return pi.log_prob(act).sum(dim=-1)

    def sample(self, obs):
        """Acting path: ``(a, logp_a)`` for one draw ``a ~ N(mu(obs), std^2)``, the
        numbers a ``Normal`` would give, without building one
        (:func:`spinup.utils.torch_tools.sample_diag_gaussian`)."""
        return sample_diag_gaussian(self.mu_net(obs), self.log_std)

    def mode(self, pi):
        """The mean action (used for deterministic evaluation)."""
        return pi.mean


# ---- Value function ----

class MLPCritic(nn.Module):
    """State-value function: ``forward(obs)`` maps (batch, obs_dim) to (batch,)."""

    def __init__(self, obs_dim, hidden_sizes, activation):
        super().__init__()
        self.v_net = mlp([obs_dim, *hidden_sizes, 1], activation)

    def forward(self, obs):
        # Drop the trailing width-1 axis: a (batch, 1) value broadcast against
        # (batch,) returns would silently give a (batch, batch) loss.
        return self.v_net(obs).squeeze(-1)


# ---- Actor-critic ----

class MLPActorCritic(nn.Module):
    """The default actor-critic of PPO: policy ``pi`` plus value function ``v``.

    =================================  ==================================================
    Member                             Shapes
    =================================  ==================================================
    ``pi(obs, act=None)``              obs (batch, obs_dim) -> (distribution, logp_a
                                       of shape (batch,) or ``None``)
    ``v(obs)``                         obs (batch, obs_dim) -> values (batch,)
    ``step(obs)``                      obs (obs_dim,) or (batch, obs_dim) -> numpy
                                       ``(a, v, logp_a)``
    ``act(obs, deterministic=False)``  obs -> numpy action (a sample, or the mode)
    =================================  ==================================================

    Args:
        observation_space (gymnasium.spaces.Box): flat observations, shape (obs_dim,).
        action_space (gymnasium.spaces.Box or Discrete): the actions.
        hidden_sizes (sequence of int): hidden widths, the same for ``pi`` and ``v``.
        activation (type): ``nn.Module`` class used after each hidden layer.

    Raises:
        ValueError: ``action_space`` is neither ``Box`` nor ``Discrete``.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(64, 64),
                 activation=nn.Tanh):
        super().__init__()
        (obs_dim,) = observation_space.shape  # flat observations only
        body = dict(hidden_sizes=hidden_sizes, activation=activation)
        if isinstance(action_space, gym.spaces.Box):
            self.pi = MLPGaussianActor(obs_dim, action_space.shape[0], **body)
        elif isinstance(action_space, gym.spaces.Discrete):
            self.pi = MLPCategoricalActor(obs_dim, int(action_space.n), **body)
        else:
            raise ValueError(f"MLPActorCritic: action space {action_space} is not "
                             "supported (use a Box or a Discrete space)")
        self.v = MLPCritic(obs_dim, **body)

    @torch.inference_mode()
    def step(self, obs):
        """Sample an action and evaluate it, without building a graph.

        The acting path, run once per env step: one no-grad call, the policy's
        ``sample`` (no ``torch.distributions`` object, see the actors) and the
        value of the same observation; the losses keep the distributions.

        Returns:
            tuple of np.ndarray: the sampled action ``a``, the value ``v`` of
            ``obs`` and the log-likelihood ``logp_a`` of ``a``.
        """
        a, logp_a = self.pi.sample(obs)
        return a.numpy(), self.v(obs).numpy(), finite_logp(logp_a.numpy())

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """Action for ``obs`` as a numpy array: a sample from the policy, or its
        mode (argmax / mean) when ``deterministic``."""
        if not deterministic:
            return self.step(obs)[0]
        return self.pi.mode(self.pi.distribution(obs)).numpy()


class CNNActorCritic(MLPActorCritic):
    """The actor-critic ppo builds for images (Atari frames, MinAtar grids): the heads
    of :class:`MLPActorCritic`, each reading the image through its own
    :class:`~spinup.utils.torch_tools.ConvTorso` (``torso``: its ``kind``); shapes as
    there, ``obs_dim`` being ``(C, H, W)`` or ``(H, W, C)``. Raises as both do."""

    def __init__(self, observation_space, action_space, hidden_sizes=(512,),
                 activation=nn.ReLU, torso="auto"):
        super().__init__(features_space(observation_space, torso), action_space,
                         hidden_sizes, activation)
        head = "mu_net" if hasattr(self.pi, "mu_net") else "logits_net"
        conv_front(self.pi, head, observation_space, torso)
        conv_front(self.v, "v_net", observation_space, torso)


def default_actor_critic(observation_space):
    """ppo's default model: :class:`CNNActorCritic` for images, else :class:`MLPActorCritic`."""
    return CNNActorCritic if is_image_space(observation_space) else MLPActorCritic
