"""Networks and small helpers for A2C (``a2c.py``).

The actor ``pi`` is a categorical distribution over a ``Discrete`` action space or a
diagonal Gaussian over a ``Box`` one, and can report its entropy for the entropy bonus
of Mnih et al. 2016 (arXiv:1602.01783, Sec. 4); the critic ``v`` is a state-value
network. Actor and critic are separate MLPs, so the combined A2C loss still gives
each of them only its own gradient.
"""

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Normal
from spinup.utils.torch_tools import (MLP, finite_logp, sample_categorical,
                                      sample_diag_gaussian,
                                      conv_front, features_space, is_image_space)


# ---- Helpers shared by the buffer and the update ----

def combined_shape(length, shape=None):
    """Shape of an array holding ``length`` items of shape ``shape``.

    Args:
        length (int): number of items (the rollout length).
        shape (None, int or tuple): shape of one item; ``None`` for a scalar.

    Returns:
        tuple: ``(length,)``, ``(length, shape)`` or ``(length, *shape)``.
    """
    if shape is None:
        return (length,)
    if np.isscalar(shape):
        return (length, shape)
    return (length,) + tuple(shape)


def mlp(sizes, activation, output_activation=nn.Identity):
    """A fully connected network through the layer widths ``sizes``.

    Each ``nn.Linear`` is followed by an activation module (``activation`` for hidden
    layers, ``output_activation`` for the last), which fixes the ``state_dict`` keys
    ``0.weight``, ``2.weight``, ... of saved models.

    Args:
        sizes (list of int): ``[n_in, hidden..., n_out]``.
        activation (type): ``nn.Module`` class after each hidden layer.
        output_activation (type): ``nn.Module`` class after the output layer.

    Returns:
        MLP (an ``nn.Sequential``)
    """
    n_layers = len(sizes) - 1
    modules = []
    for i in range(n_layers):
        modules.append(nn.Linear(sizes[i], sizes[i + 1]))
        modules.append(activation() if i < n_layers - 1 else output_activation())
    return MLP(*modules)


def count_vars(module):
    """Total number of scalar parameters in ``module`` (int)."""
    return sum(p.numel() for p in module.parameters())


def discount_cumsum(x, discount):
    """``y[t] = x[t] + discount * y[t+1]``: discounted sums from each index to the end.

    ``[x0, x1, x2]`` -> ``[x0 + d x1 + d^2 x2, x1 + d x2, x2]`` (``d = discount``),
    computed by that recursion, walking ``x`` backwards from its last element, in float64.

    Args:
        x (np.ndarray): 1-D sequence (TD errors here).
        discount (float): ``gamma * lam``.

    Returns:
        np.ndarray of the same length, float64.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    running, discount = 0.0, float(discount)
    for t in range(len(x) - 1, -1, -1):
        running = x[t] + discount * running
        out[t] = running
    return out


# ---- Actors ----

class Actor(nn.Module):
    """A stochastic policy ``pi(a|s)``.

    Subclasses build the action distribution for a batch of observations
    (``_distribution``), score actions under it (``_log_prob_from_distribution``),
    and report its mode and entropy.
    """

    def _distribution(self, obs):
        raise NotImplementedError

    def _log_prob_from_distribution(self, pi, act):
        raise NotImplementedError

    def sample(self, obs):
        """One draw ``a ~ pi(.|obs)`` and its log-likelihood, for acting.

        Returns:
            tuple of torch.Tensor: ``(a, logp_a)``. This generic version goes
            through the distribution; the MLP actors below override it with the
            same numbers computed from the network output directly.
        """
        pi = self._distribution(obs)
        a = pi.sample()
        return a, self._log_prob_from_distribution(pi, a)

    def forward(self, obs, act=None):
        """Distribution for ``obs`` (batch, obs_dim), and the (batch,)
        log-probabilities of ``act`` under it (``None`` when ``act`` is not given)."""
        dist = self._distribution(obs)
        logp = None if act is None else self._log_prob_from_distribution(dist, act)
        return dist, logp


class MLPCategoricalActor(Actor):
    """Policy over ``Discrete`` actions; ``logits_net`` scores every action."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.logits_net = mlp([obs_dim, *hidden_sizes, act_dim], activation)

    def _distribution(self, obs):
        return Categorical(logits=self.logits_net(obs), validate_args=False)

    def _log_prob_from_distribution(self, pi, act):
        return pi.log_prob(act)

    def sample(self, obs):
        """Acting path: ``(a, logp_a)`` for one draw ``a ~ pi(.|obs)``, the numbers a
        ``Categorical`` would give, without building one
        (:func:`spinup.utils.torch_tools.sample_categorical`)."""
        return sample_categorical(self.logits_net(obs))

    def mode(self, pi):
        """The most probable action of each distribution in the batch."""
        return torch.argmax(pi.probs, dim=-1)

    def entropy(self, pi):
        """``H[pi(.|s)] = -sum_a p(a) log p(a)`` for each state: (batch,)."""
        return pi.entropy()


class MLPGaussianActor(Actor):
    """Diagonal Gaussian policy over ``Box`` actions.

    ``mu_net`` gives the mean; the standard deviation ``exp(log_std)`` is a learned
    vector shared by all states, starting at ``exp(-0.5) = 0.61``.
    """

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5, dtype=torch.float32))
        self.mu_net = mlp([obs_dim, *hidden_sizes, act_dim], activation)

    def _distribution(self, obs):
        return Normal(self.mu_net(obs), self.log_std.exp(), validate_args=False)

    def _log_prob_from_distribution(self, pi, act):
        # The action dimensions are independent: add their log-densities.
        return pi.log_prob(act).sum(dim=-1)

    def sample(self, obs):
        """Acting path: ``(a, logp_a)`` for one draw ``a ~ N(mu(obs), std^2)``, the
        numbers a ``Normal`` would give, without building one
        (:func:`spinup.utils.torch_tools.sample_diag_gaussian`)."""
        return sample_diag_gaussian(self.mu_net(obs), self.log_std)

    def mode(self, pi):
        """The mean action of each distribution in the batch."""
        return pi.mean

    def entropy(self, pi):
        """Entropy of each diagonal Gaussian, ``sum_i 1/2 log(2 pi e sigma_i^2)``:
        (batch,)."""
        return pi.entropy().sum(dim=-1)


# ---- Critic ----

class MLPCritic(nn.Module):
    """State-value network ``V_psi(s)``: observations (batch, obs_dim) -> (batch,)."""

    def __init__(self, obs_dim, hidden_sizes, activation):
        super().__init__()
        self.v_net = mlp([obs_dim, *hidden_sizes, 1], activation)

    def forward(self, obs):
        # Remove the size-1 output axis: values must line up with (batch,) targets.
        return self.v_net(obs).squeeze(-1)


# ---- The actor-critic A2C trains by default ----

class MLPActorCritic(nn.Module):
    """Actor ``pi`` and critic ``v`` as two separate MLPs.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Box or Discrete): ``Box`` gets a diagonal
            Gaussian actor, ``Discrete`` a categorical one.
        hidden_sizes (sequence of int): hidden layer widths of both networks.
        activation (type): ``nn.Module`` class after every hidden layer.

    Raises:
        ValueError: for any other kind of action space.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(64, 64),
                 activation=nn.Tanh):
        super().__init__()
        n_obs = observation_space.shape[0]
        space_kind = type(action_space).__name__  # gym and gymnasium spaces alike
        if space_kind == "Box":
            self.pi = MLPGaussianActor(n_obs, action_space.shape[0], hidden_sizes, activation)
        elif space_kind == "Discrete":
            self.pi = MLPCategoricalActor(n_obs, action_space.n, hidden_sizes, activation)
        else:
            raise ValueError(f"MLPActorCritic supports Box or Discrete action spaces, "
                             f"not {action_space}")
        self.v = MLPCritic(n_obs, hidden_sizes, activation)

    @torch.inference_mode()
    def step(self, obs):
        """Act during training: numpy ``(a, v, logp_a)``, a sampled action, the
        critic's ``V(obs)`` and the action's log-probability.

        The acting path, run once per env step: one no-grad call, the policy's
        ``sample`` (no ``torch.distributions`` object, see the actors) and the
        value of the same observation; the losses keep the distributions.
        """
        a, logp_a = self.pi.sample(obs)
        return a.numpy(), self.v(obs).numpy(), finite_logp(logp_a.numpy())

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """Only the action (numpy): a sample, or the mode when ``deterministic``."""
        if not deterministic:
            return self.step(obs)[0]
        return self.pi.mode(self.pi._distribution(obs)).numpy()


class CNNActorCritic(MLPActorCritic):
    """The actor-critic a2c builds for images (Atari frames, MinAtar grids): the heads
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
    """a2c's default model: :class:`CNNActorCritic` for images, else :class:`MLPActorCritic`."""
    return CNNActorCritic if is_image_space(observation_space) else MLPActorCritic
