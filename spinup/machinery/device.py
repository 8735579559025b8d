"""Where a run trains and with how many threads: the ``device`` argument
(:func:`resolve_device`, :class:`Placement`), optimizers moved between devices
(:func:`load_optimizer`) and the torch thread count every run fixes (:func:`torch_threads`)."""
import contextlib
import copy
import re

import torch

#: The torch intra-op thread count every algorithm trains with, however it was launched
#: (the count changes the order of sums, so the last bits of a loss on some CPUs).
RUN_THREADS = 1


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


def acts_on_a_copy(device):
    """Whether a run training on ``device`` acts with a separate CPU copy of its networks:
    on every device but the CPU (a one-observation forward is cheaper on the CPU)."""
    return device.type != "cpu"


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

    def __init__(self, net, device):
        self.device = torch.device(device)
        self.net = net
        self.actor = net
        self._separate = acts_on_a_copy(self.device)
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
