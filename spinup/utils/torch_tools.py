"""Small PyTorch helpers that every algorithm uses the same way: Adam, the thread count,
target-network updates, the networks' :class:`MLP`, the on-policy actors' draws and the
``device`` argument (:func:`resolve_device`, :class:`Placement`)."""
import contextlib
import copy
import math
import re

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# torch.optim.Adam(fused=True) takes CPU tensors from torch 2.4 on.
_TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
FUSED_ADAM_ON_CPU = _TORCH_VERSION >= (2, 4)

#: The torch intra-op thread count every algorithm trains with, however it was launched
#: (the count changes the order of sums, so the last bits of a loss on some CPUs).
RUN_THREADS = 1


def adam(params, lr, fused=None):
    """Return ``torch.optim.Adam(params, lr=lr)``. On a GPU it is the fused Adam with
    ``capturable=True`` and a tensor step size, so that a CUDA graph can hold the step
    (docs/user/gpu.rst).

    Args:
        params: iterable of parameters (or parameter groups) to optimize.
        lr (float): learning rate, > 0.
        fused (bool or None): on the CPU, use the fused Adam (the same update in one kernel
            per step); ``None``: :data:`FUSED_ADAM_ON_CPU`.
    """
    params = list(params)
    tensors = [t for g in params for t in (g["params"] if isinstance(g, dict) else [g])]
    if tensors and tensors[0].is_cuda:
        return torch.optim.Adam(params, lr=torch.tensor(float(lr), device=tensors[0].device),
                                capturable=True, fused=True)
    fused = FUSED_ADAM_ON_CPU if fused is None else fused
    return torch.optim.Adam(params, lr=lr, fused=True if fused else None)


def set_lr(optimizer, value):
    """Set every parameter group's step size to ``value`` (float). A tensor step size (a
    GPU optimizer's, from :func:`adam`) is refilled in place, so that a CUDA graph holding
    the optimizer's step reads the new value."""
    for group in optimizer.param_groups:
        if torch.is_tensor(group["lr"]):
            group["lr"].fill_(value)
        else:
            group["lr"] = value


def load_optimizer(optimizer, state):
    """``optimizer.load_state_dict(state)``, keeping the settings this device built it
    with: a run trained on a GPU (capturable Adam, tensor step size) goes on on the CPU
    (fused Adam, float step size) and the reverse. The saved step size is kept as a value.
    """
    built = [dict(group) for group in optimizer.param_groups]
    optimizer.load_state_dict(state)
    for group, mine in zip(optimizer.param_groups, built):
        lr = float(group["lr"])
        for key in ("capturable", "fused", "foreach", "differentiable"):
            if key in mine:
                group[key] = mine[key]
        group["lr"] = mine["lr"].fill_(lr) if torch.is_tensor(mine["lr"]) else lr
        for p in group["params"]:
            step = optimizer.state.get(p, {}).get("step")
            if torch.is_tensor(step):   # a capturable or fused Adam keeps it on p's device
                on_p = group.get("capturable") or group.get("fused")
                optimizer.state[p]["step"] = step.to(p.device if on_p else "cpu", torch.float32)


@contextlib.contextmanager
def torch_threads(n):
    """Context manager: ``torch.set_num_threads(n)`` inside the block (``n=None`` leaves
    the count alone), the previous count restored on exit, also by an exception."""
    previous = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@torch.no_grad()
def polyak_update(net, net_targ, polyak):
    """``theta_targ <- polyak * theta_targ + (1 - polyak) * theta`` for every parameter
    (Lillicrap et al. 2016, Alg. 1); ``polyak = 0`` copies ``net`` (DQN's hard update).

    Args:
        net (torch.nn.Module): online network.
        net_targ (torch.nn.Module): target network with the same parameter layout.
        polyak (float): in ``[0, 1]``.
    """
    first = next(net.parameters(), None)
    if first is not None and first.is_cuda:   # one kernel for all, not one per tensor
        torch._foreach_lerp_(list(net_targ.parameters()), list(net.parameters()), 1.0 - polyak)
        return
    for p, p_targ in zip(net.parameters(), net_targ.parameters()):
        p_targ.lerp_(p, 1.0 - polyak)


class MLP(nn.Sequential):
    """An ``nn.Sequential`` whose ``forward`` skips the per-layer hook bookkeeping (acting
    runs it every env step): same layers, parameter names and results, but hooks on the
    inner layers do not fire (hooks on the ``MLP`` itself do)."""

    def forward(self, x):
        for layer in self:
            if type(layer) is nn.Linear:
                x = F.linear(x, layer._parameters["weight"], layer._parameters["bias"])
            else:
                x = layer.forward(x)
        return x


def sample_categorical(logits):
    """Draw ``a ~ Categorical(logits)`` and return ``(a, log p(a))``: the numbers and random
    stream of ``torch.distributions`` (tests/algos/test_acting.py) without building one per
    env step. Like ``torch.multinomial``, the draw is ``argmax_i p_i / E_i`` with
    ``E_i ~ Exp(1)`` (an "exponential race", which ``i`` wins with probability ``p_i``).

    Args:
        logits (torch.Tensor): unnormalised log-probabilities, (..., n_actions).

    Returns:
        tuple of torch.Tensor: actions (...,) as int64 and their log-probabilities (...,),
        non-finite for non-finite logits (check with :func:`finite_logp`).
    """
    logp_all = logits - logits.logsumexp(dim=-1, keepdim=True)
    p = torch.softmax(logp_all, dim=-1)
    a = (p / torch.empty_like(p).exponential_()).argmax(dim=-1, keepdim=True)
    return a.squeeze(-1), logp_all.gather(-1, a).squeeze(-1)


def sample_diag_gaussian(mu, log_std):
    """Draw ``a ~ N(mu, diag(exp(log_std))^2)`` and return ``(a, log p(a))``: the numbers of
    ``Normal(mu, std)``'s ``sample()`` and ``log_prob(a).sum(-1)``, without building one.

    Args:
        mu (torch.Tensor): means, (..., act_dim).
        log_std (torch.Tensor): log standard deviations, (act_dim,), broadcast over mu.

    Returns:
        tuple of torch.Tensor: actions (..., act_dim) and their log-densities (...,),
        non-finite for non-finite means (check with :func:`finite_logp`).

    Raises:
        ValueError: a NaN standard deviation (``torch.normal`` refuses it).
    """
    std = log_std.exp()
    try:
        a = torch.normal(mu, std.expand_as(mu))
    except RuntimeError:   # a NaN std
        raise ValueError(_DIVERGED) from None
    logp = -((a - mu) ** 2) / (2 * std ** 2) - std.log() - math.log(math.sqrt(2 * math.pi))
    return a, logp.sum(dim=-1)


def finite_logp(logp):
    """Return ``logp`` (a numpy array of log-probabilities from :func:`sample_categorical`
    or :func:`sample_diag_gaussian`); checked on numpy, cheaper than on the tensor.

    Raises:
        ValueError: a NaN or infinite entry (the policy's weights have diverged).
    """
    if not np.isfinite(logp).all():
        raise ValueError(_DIVERGED)
    return logp


_DIVERGED = ("the policy's output (logits, or mean and log std) is NaN or infinite: its "
             "weights have diverged (try a lower learning rate)")


#: What the ``device`` argument accepts, in the words of its error messages.
DEVICE_CHOICES = ("'cpu', 'cuda', 'cuda:N' (N a GPU index) or 'auto' (a GPU for ddpg, td3, "
                  "sac and dqn when torch sees one, else the CPU)")

#: The algorithms that ``device='auto'`` trains on a GPU: their updates, replayed as CUDA
#: graphs, ran 2.3x to 5x faster than on the CPU (docs/benchmarks/device.rst); the on-policy
#: ones gained at most 1.2x (A2C and one-env PPO lost), so ``'auto'`` keeps them on the CPU.
AUTO_GPU = ("ddpg", "td3", "sac", "dqn")


def resolve_device(algo, device, num_procs=1):
    """The ``torch.device`` a run of ``algo`` trains on, from its ``device`` argument.
    ``'auto'`` is a GPU if there is one, the run has one process and ``algo`` gains from
    it (:data:`AUTO_GPU`), else the CPU. CUDA is left uninitialised.

    Args:
        algo (str): the algorithm, for messages (``'a3c'`` refuses every GPU).
        device (str or torch.device): ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or ``'auto'``.
        num_procs (int): MPI processes of the run (``--cpu``).

    Returns:
        torch.device: ``cpu``, or ``cuda:N`` with its index filled in.

    Raises:
        TypeError: ``device`` is not a string or a ``torch.device``.
        ValueError: ``<algo>: device=<value> is not allowed: <why>`` for an unknown string,
            a GPU this machine lacks, a GPU for several MPI processes, or one for A3C.
    """
    def refuse(why, error=ValueError):
        raise error(f"{algo}: device={device!r} is not allowed: {why}")

    if not isinstance(device, (str, torch.device)):
        refuse(f"a string, {DEVICE_CHOICES}", TypeError)
    text = str(device)
    if text == "cpu":
        return torch.device("cpu")
    if text == "auto":   # A3C is not in AUTO_GPU
        if algo in AUTO_GPU and num_procs == 1 and torch.cuda.is_available():
            return torch.device("cuda", _current_gpu())
        return torch.device("cpu")
    found = re.fullmatch(r"cuda(?::(\d+))?", text)
    if found is None:
        refuse(DEVICE_CHOICES)
    if algo == "a3c":
        refuse("A3C's Hogwild workers are separate processes that update networks kept in "
               "shared CPU memory, which a GPU cannot share; use device='cpu', or a2c "
               "(the synchronous form of the same update) with a CUDA device")
    if num_procs > 1:
        refuse(f"the run has {num_procs} MPI processes (--cpu {num_procs}) and they cannot "
               "share one GPU here; use a CUDA device with one process, or device='cpu' "
               "(or 'auto') with MPI")
    if not torch.cuda.is_available():
        refuse("torch.cuda.is_available() is False here (no GPU, no driver, or a CPU-only "
               "torch build); use device='cpu' or device='auto'")
    count = torch.cuda.device_count()
    index = _current_gpu() if found.group(1) is None else int(found.group(1))
    if index >= count:
        refuse(f"this machine has only {count} GPU{'s' * (count != 1)} (cuda:0 to "
               f"cuda:{count - 1}); use one of those, or device='cpu'")
    return torch.device("cuda", index)


def _current_gpu():
    """The GPU ``'cuda'`` means: torch's current one once CUDA is initialised, else 0."""
    return torch.cuda.current_device() if torch.cuda.is_initialized() else 0


def device_label(config, num_procs=1):
    """The device a run's ``config`` (its ``save_config`` dict) trains on, as
    ``provenance.json`` records it: ``'cpu'`` (also without ``device``), or
    ``'cuda:N (<GPU name>)'``; a value :func:`resolve_device` refuses is written as given.
    """
    value = config.get("device", "cpu")
    try:
        device = resolve_device(config.get("_algorithm", "spinup"), value, num_procs)
    except (TypeError, ValueError):
        return str(value)
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return str(device)


class Placement:
    """Where an algorithm's networks train (``device``) and where it acts (the CPU). On a
    GPU ``net`` moves there (build target networks and optimizers after this, from ``net``),
    :meth:`batch` copies each batch there, and acting uses :attr:`actor`, a CPU copy that
    :meth:`refresh` updates. On the CPU ``actor`` is ``net`` and both methods do nothing.

    Args:
        net (torch.nn.Module): the actor-critic (or Q-network), on the CPU.
        device (torch.device): from :func:`resolve_device`.

    Attributes:
        net: the module that trains (on ``device``).
        actor: the module to act with, on the CPU (``net`` itself on the CPU).
        device: ``device``.
    """

    #: True: take the GPU path (a separate acting copy) on the CPU too (for tests).
    copy_on_cpu = False

    def __init__(self, net, device):
        self.device = torch.device(device)
        self.net = net
        self.actor = net
        self._separate = self.device.type != "cpu" or self.copy_on_cpu
        if self._separate:
            self.actor = copy.deepcopy(net).requires_grad_(False)
            net.to(self.device)

    def batch(self, data):
        """``data`` (a dict) with its tensors on :attr:`device` (the dict itself on the CPU)."""
        if self.device.type == "cpu":
            return data
        return {key: value.to(self.device) if torch.is_tensor(value)
                else value for key, value in data.items()}

    def refresh(self):
        """Copy the trained weights into :attr:`actor` (nothing to do when they are one)."""
        if self._separate:
            with torch.no_grad():
                self.actor.load_state_dict(self.net.state_dict())
