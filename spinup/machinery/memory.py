"""Memory refusals: how many bytes a model's training takes at least, how many this process
can still get, and the refusal to rebuild a saved model that cannot fit."""
import numbers


# Networks of each algorithm's default actor-critic: (trained with Adam, target copies).
_NETWORKS = dict(vpg=(2, 0), ppo=(2, 0), trpo=(2, 0), npg=(2, 0), a2c=(2, 0), a3c=(2, 0),
                 ddpg=(2, 2), td3=(3, 3), sac=(3, 3), dqn=(1, 1))
_FLOAT_BYTES = 4  # float32 parameters


def hidden_parameters(sizes):
    """Parameters of an MLP's hidden layers (weights between them and their biases): a
    lower bound of its size, as the env decides the outer layers."""
    sizes = [int(size) for size in sizes]
    return sum(a * b for a, b in zip(sizes, sizes[1:])) + sum(sizes)


def available_memory():
    """Bytes of memory this process can still get: ``psutil.virtual_memory().available``,
    or less under a cgroup v2 limit; ``None`` if psutil cannot tell."""
    from pathlib import Path

    import psutil
    try:
        avail = int(psutil.virtual_memory().available)
    except (OSError, AttributeError):
        avail = None
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        if limit.isdigit():
            room = max(int(limit) - used, 0)
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError):
        pass
    return avail


def _gigabytes(n):
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def estimate_training_bytes(algo, sizes, workers=1):
    """A lower bound of the bytes that training ``algo``'s default model takes, and the
    parameters of one of its networks (:func:`hidden_parameters`, float32).

    A trained network counts 4 times (weights, gradients, Adam's two moments), a target
    network once, and each of A3C's ``workers`` adds a copy of the trained networks with
    gradients (2 times). Activations, buffers and the env are left out.
    """
    trained, copies = _NETWORKS.get(algo, (2, 0))
    per_net = hidden_parameters(sizes)
    weights = per_net * _FLOAT_BYTES
    total = trained * 4 * weights + copies * weights
    if algo == "a3c":
        total += workers * trained * 2 * weights
    return total, per_net


def check_saved_model_memory(path, ac_class, ac_kwargs, state_dict=None):
    """Refuse to rebuild a saved model whose ``hidden_sizes`` cannot fit in memory (the
    networks of the algorithm named in ``ac_class``, 2 if unknown, at 4 bytes per
    parameter, twice: model and loaded weights), or, given ``state_dict``, that asks for
    more parameters than those weights hold.

    Raises:
        ValueError: one line naming the file, the sizes, the bytes and what is available.
    """
    import re
    sizes = ac_kwargs.get("hidden_sizes") if isinstance(ac_kwargs, dict) else None
    if not (isinstance(sizes, (list, tuple)) and all(
            isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in sizes)):
        return
    found = re.match(r"spinup\.algos\.(\w+)\.", str(ac_class))
    nets = _NETWORKS.get(found.group(1) if found else None, (2, 0))[0]
    wanted = nets * hidden_parameters(sizes)
    if found and isinstance(state_dict, dict):
        held = sum(int(t.numel()) for t in state_dict.values() if hasattr(t, "numel"))
        if wanted > held:
            raise ValueError(f"{path}: its ac_kwargs ask for hidden_sizes={list(sizes)}, at "
                             f"least {wanted:,} parameters, but its weights hold {held:,}; "
                             "the kwargs and the weights of the file disagree")
    need = wanted * _FLOAT_BYTES * 2
    avail = available_memory()
    if avail is not None and need > avail:
        raise ValueError(f"{path}: its ac_kwargs ask for hidden_sizes={list(sizes)}, which needs "
                         f"at least {_gigabytes(need)} to build ({nets} networks, 4 bytes per "
                         f"parameter, model and loaded weights) but only {_gigabytes(avail)} "
                         "of memory is available; the file is damaged or not meant for "
                         "this machine")


def replay_bytes(space, replay_size, frames=1):
    """Bytes of the observations a replay buffer of ``replay_size`` transitions keeps for
    ``space``: ``s`` and ``s'`` of every transition, in the space's own dtype for images
    (float32 otherwise), and with frame stacks (``frames`` > 1) only the newest frame of
    each, plus one byte saying how many earlier frames belong to the episode."""
    import numpy as np

    from spinup.utils.torch_tools import is_image_space
    cells = int(np.prod(space.shape))
    if frames > 1:
        cells //= space.shape[0]
    size = np.dtype(space.dtype).itemsize if is_image_space(space) else _FLOAT_BYTES
    return replay_size * (2 * cells * size + (frames > 1))


def check_replay_memory(algo, config, space, frames=1, close=None):
    """Refuse (one line, before any file is written) a ``replay_size`` whose image
    observations cannot fit in :func:`available_memory`; vector observations are left to
    the argument rules (:mod:`spinup.machinery.arg_checks`). ``close`` is called first.

    Raises:
        ValueError: naming the bytes per transition, the total and what is available.
    """
    from spinup.utils.torch_tools import is_image_space
    size = config.get("replay_size")
    if not isinstance(size, numbers.Integral) or not is_image_space(space):
        return
    need, avail = replay_bytes(space, size, frames), available_memory()
    if avail is None or need <= avail:
        return
    if close is not None:
        close()
    how = (f"the newest of {frames} stacked frames of s and s'" if frames > 1
           else "s and s'")
    raise ValueError(f"{algo}: replay_size={size} would keep {_gigabytes(need)} of "
                     f"observations ({how}, {need // size:,} bytes per transition) but "
                     f"{_gigabytes(avail)} of memory is available; use a smaller replay_size")
