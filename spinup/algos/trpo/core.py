"""Networks and numerical helpers for TRPO and NPG (``trpo.py``).

The policy ``pi`` is a categorical distribution over a ``Discrete`` action space or a
diagonal Gaussian over a ``Box`` one; ``v`` is a state-value network. TRPO also needs
the average KL-divergence between the policy before and after a step (``mean_kl``, the
constraint of Schulman et al. 2015, arXiv:1502.05477, eq. 12), and the direction
``x = H^-1 g`` of the natural gradient: products ``H v`` by double backpropagation
(``hessian_vector_product``) fed to ``conjugate_gradient``, on the policy parameters
seen as one flat vector (``get_flat_params``, ``set_flat_params``, ``flat_grad``).
"""

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Normal, kl_divergence

from spinup.utils.mpi_tools import mpi_avg
from spinup.utils.torch_tools import (MLP, finite_logp, sample_categorical,
                                      sample_diag_gaussian)


# ---- Helpers shared by the buffer and the update ----

def combined_shape(length, shape=None):
    """Shape of an array holding ``length`` items of shape ``shape``.

    Args:
        length (int): number of items (the buffer size).
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
    """A fully connected network whose layer widths are ``sizes``.

    Every ``nn.Linear`` is followed by an activation module: ``activation`` after the
    hidden layers, ``output_activation`` after the last one. (The layout, Linear then
    activation, fixes the ``state_dict`` keys ``0.weight``, ``2.weight`` ...)

    Args:
        sizes (list of int): ``[n_in, hidden..., n_out]``.
        activation (type): ``nn.Module`` class for the hidden layers.
        output_activation (type): ``nn.Module`` class for the output layer.

    Returns:
        MLP (an ``nn.Sequential``)
    """
    layers = []
    last = len(sizes) - 2  # index of the output layer
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(n_in, n_out))
        layers.append(output_activation() if i == last else activation())
    return MLP(*layers)


def count_vars(module):
    """Total number of scalar parameters in ``module`` (int)."""
    return sum(p.numel() for p in module.parameters())


def discount_cumsum(x, discount):
    """Discounted sums from every index to the end: ``y[t] = x[t] + discount * y[t+1]``.

    For ``x = [x0, x1, x2]`` this is
    ``[x0 + discount x1 + discount^2 x2,  x1 + discount x2,  x2]``, computed by that
    recursion from the last element back to the first (``y`` is zero past the end), in
    float64.

    Args:
        x (np.ndarray): 1-D sequence (rewards or TD errors).
        discount (float): ``gamma`` for returns, ``gamma * lam`` for GAE.

    Returns:
        np.ndarray of the same length, float64.
    """
    x = np.asarray(x, dtype=np.float64)
    summed = np.empty_like(x)
    running, discount = 0.0, float(discount)
    for t in reversed(range(len(x))):
        running = x[t] + discount * running
        summed[t] = running
    return summed


def mean_kl(pi_old, pi):
    """Average KL-divergence ``mean_s D_KL(pi_old(.|s) || pi(.|s))`` over a batch of states.

    Both families have a closed form (``torch.distributions.kl_divergence``):

    * categorical: ``sum_a p_old(a) (log p_old(a) - log p(a))``;
    * diagonal Gaussian, per action dimension:
      ``log(s / s_old) + (s_old^2 + (m_old - m)^2) / (2 s^2) - 1/2``. The dimensions are
      independent, so the KL of the joint distribution is the sum over them.

    Args:
        pi_old: batch of distributions of the policy before the step (held fixed).
        pi: batch of the same family and shape; gradients flow through it.

    Returns:
        Scalar tensor.

    Source:
        Schulman et al. 2015, eq. 12 (the sample average of the KL).
    """
    per_state = kl_divergence(pi_old, pi)
    if isinstance(pi, Normal):
        per_state = per_state.sum(dim=-1)
    return per_state.mean()


# ---- The natural-gradient direction: parameters as one vector, H v, conjugate gradient ----

def get_flat_params(module):
    """Copy of all parameters of ``module``, concatenated into one 1-D tensor theta."""
    return torch.cat([param.detach().flatten() for param in module.parameters()])


def set_flat_params(module, flat):
    """Load the 1-D tensor ``flat`` into the parameters of ``module``, in their order."""
    flat = torch.as_tensor(flat, dtype=torch.float32)
    offset = 0
    with torch.no_grad():
        for param in module.parameters():
            n = param.numel()
            param.copy_(flat[offset:offset + n].view_as(param))
            offset += n


def flat_grad(y, params, **kwargs):
    """Gradient of the scalar ``y`` with respect to ``params`` as one 1-D tensor.

    ``kwargs`` go to ``torch.autograd.grad`` (``create_graph``, ``retain_graph``).
    """
    parts = torch.autograd.grad(y, params, **kwargs)
    return torch.cat([part.flatten() for part in parts])


def hessian_vector_product(kl, params, damping_coeff):
    """Build ``Hx(v) = (H + damping_coeff * I) v``, ``H`` the Hessian of ``kl`` [TRPO line 7].

    ``H`` (parameters x parameters) is never formed. The gradient ``grad_kl`` is kept
    as a differentiable expression, and ``H v = grad(grad_kl . v)``: one more
    backward pass per product. The damping keeps ``H`` safely positive definite for
    conjugate gradient. Products are averaged over MPI processes, like ``g``.

    Args:
        kl (Tensor): scalar mean KL, still attached to the graph of ``params``.
        params (list of Tensor): the policy parameters.
        damping_coeff (float): ``>= 0``.

    Returns:
        function: 1-D numpy array ``v`` -> 1-D float64 numpy array ``(H + d I) v``.

    Source:
        Schulman et al. 2015, Appendix C.
    """
    grad_kl = flat_grad(kl, params, create_graph=True)  # differentiable: used again

    def Hx(v):   # numpy in and out; the product itself runs where the parameters live
        v_t = torch.as_tensor(v, dtype=torch.float32, device=grad_kl.device)
        h_v = flat_grad(grad_kl @ v_t, params, retain_graph=True)  # keep for the next v
        return mpi_avg(h_v.cpu().numpy()) + damping_coeff * np.asarray(v, dtype=np.float64)
    return Hx


def conjugate_gradient(Ax, b, cg_iters=10, residual_tol=1e-10):
    """Approximate solution of ``A x = b`` for a symmetric positive-definite ``A``
    (the ``x = H^-1 g`` of [TRPO line 8]).

    Starting at ``x = 0``, each iteration moves along a direction conjugate (with
    respect to ``A``) to all previous ones, so ``n`` iterations solve an ``n``-dim
    system exactly; TRPO stops much earlier, and only ever calls ``Ax``.

    Args:
        Ax (function): 1-D numpy array ``v`` -> ``A v``.
        b (np.ndarray): right-hand side (for TRPO, the policy gradient ``g``).
        cg_iters (int): iteration limit.
        residual_tol (float): stop once the squared residual ``|b - A x|^2`` is
            smaller.

    Returns:
        np.ndarray (float64): ``x``, approximately ``A^-1 b``.

    Source:
        Hestenes and Stiefel 1952; Nocedal and Wright, "Numerical Optimization",
        Algorithm 5.2.
    """
    x = np.zeros_like(b, dtype=np.float64)
    resid = np.array(b, dtype=np.float64)   # b - A x, with x = 0
    direction = resid.copy()
    resid_sq = resid @ resid
    for _ in range(cg_iters):
        if resid_sq < residual_tol:
            break
        A_dir = Ax(direction)
        step = resid_sq / (direction @ A_dir)  # exact minimiser along the direction
        x += step * direction
        resid -= step * A_dir
        new_resid_sq = resid @ resid
        direction = resid + (new_resid_sq / resid_sq) * direction
        resid_sq = new_resid_sq
    return x


# ---- Policies ----

class Actor(nn.Module):
    """A stochastic policy ``pi(a|s)``.

    A subclass says how to build the action distribution for a batch of observations
    (``_distribution``) and how to score actions under it
    (``_log_prob_from_distribution``); ``forward`` combines the two.
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
        """Distribution for ``obs``, and the log-probability of ``act`` under it.

        Args:
            obs (Tensor): (batch, obs_dim).
            act (Tensor or None): (batch,) discrete or (batch, act_dim) continuous.

        Returns:
            ``(pi, logp_a)``: a batch of distributions and a (batch,) tensor, or
            ``None`` in place of ``logp_a`` when ``act`` is not given.
        """
        dist = self._distribution(obs)
        if act is None:
            return dist, None
        return dist, self._log_prob_from_distribution(dist, act)


class MLPCategoricalActor(Actor):
    """Categorical policy for ``Discrete`` actions: ``logits_net`` maps an observation
    to one unnormalised log-probability per action."""

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
        """Most probable action of each distribution in the batch."""
        return torch.argmax(pi.probs, dim=-1)


class MLPGaussianActor(Actor):
    """Diagonal Gaussian policy for ``Box`` actions.

    ``mu_net`` gives the mean for each observation; the standard deviation is
    ``exp(log_std)``, a learned vector that does not depend on the state, starting at
    ``exp(-0.5) = 0.61`` in every dimension.
    """

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5, dtype=torch.float32))
        self.mu_net = mlp([obs_dim, *hidden_sizes, act_dim], activation)

    def _distribution(self, obs):
        mean = self.mu_net(obs)
        return Normal(mean, self.log_std.exp(), validate_args=False)

    def _log_prob_from_distribution(self, pi, act):
        # Independent dimensions: the joint log-density is the sum over the last axis.
        return pi.log_prob(act).sum(dim=-1)

    def sample(self, obs):
        """Acting path: ``(a, logp_a)`` for one draw ``a ~ N(mu(obs), std^2)``, the
        numbers a ``Normal`` would give, without building one
        (:func:`spinup.utils.torch_tools.sample_diag_gaussian`)."""
        return sample_diag_gaussian(self.mu_net(obs), self.log_std)

    def mode(self, pi):
        """The mean action of each distribution in the batch."""
        return pi.mean


# ---- Value function ----

class MLPCritic(nn.Module):
    """State-value network ``V_phi(s)``: observations (batch, obs_dim) -> (batch,)."""

    def __init__(self, obs_dim, hidden_sizes, activation):
        super().__init__()
        self.v_net = mlp([obs_dim, *hidden_sizes, 1], activation)

    def forward(self, obs):
        # Drop the trailing size-1 axis so that v lines up with the (batch,) returns.
        return self.v_net(obs).squeeze(-1)


# ---- The actor-critic TRPO trains by default ----

class MLPActorCritic(nn.Module):
    """Policy ``pi`` and value function ``v`` as two separate MLPs.

    Args:
        observation_space (gymnasium.spaces.Box): flat observations.
        action_space (gymnasium.spaces.Box or Discrete): a ``Box`` gets a diagonal
            Gaussian policy, a ``Discrete`` one a categorical policy.
        hidden_sizes (sequence of int): hidden layer widths of both networks.
        activation (type): ``nn.Module`` class used after every hidden layer.

    Raises:
        ValueError: for any other kind of action space.
    """

    def __init__(self, observation_space, action_space, hidden_sizes=(64, 64),
                 activation=nn.Tanh):
        super().__init__()
        n_obs = observation_space.shape[0]
        kind = type(action_space).__name__  # works for gym and gymnasium spaces alike
        if kind == "Box":
            self.pi = MLPGaussianActor(n_obs, action_space.shape[0], hidden_sizes, activation)
        elif kind == "Discrete":
            self.pi = MLPCategoricalActor(n_obs, action_space.n, hidden_sizes, activation)
        else:
            raise ValueError(f"MLPActorCritic supports Box or Discrete action spaces, "
                             f"not {action_space}")
        self.v = MLPCritic(n_obs, hidden_sizes, activation)

    @torch.inference_mode()
    def step(self, obs):
        """Act in the environment during training.

        The acting path, run once per env step: one no-grad call, the policy's
        ``sample`` (no ``torch.distributions`` object, see the actors) and the
        value of the same observation; the losses keep the distributions.

        Args:
            obs (Tensor): (obs_dim,) or (batch, obs_dim).

        Returns:
            numpy ``(a, v, logp_a)``: a sampled action, ``V(obs)``, and the
            log-probability of that action under the current policy.
        """
        a, logp_a = self.pi.sample(obs)
        return a.numpy(), self.v(obs).numpy(), finite_logp(logp_a.numpy())

    @torch.inference_mode()
    def act(self, obs, deterministic=False):
        """Only the action (numpy): a sample, or the mode when ``deterministic``."""
        if not deterministic:
            return self.step(obs)[0]
        return self.pi.mode(self.pi._distribution(obs)).numpy()
