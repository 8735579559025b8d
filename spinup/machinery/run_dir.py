"""A run's directory: who may write to it, and what a new run does with an old one.

Every way of starting a run (Python, ``python -m spinup.run``, a grid, ``--resume``) obeys
these rules: one live process per directory (:func:`lock_run_dir`), what a run does with an
old one (:func:`decide_start`), when it may resume one (:func:`check_same_call`,
:func:`plan_resume`), and which base and names are allowed, checked before anything is written.
"""
import atexit
import contextlib
import inspect
import json
import os
import os.path as osp
import re
import shutil
import weakref

from spinup.machinery.provenance import PROVENANCE_NAME
from spinup.machinery.serialization_utils import convert_json


class LaunchError(ValueError):
    """An experiment cannot start (unusable ``data_dir``, too many MPI processes,
    two variants sharing a directory, a run that cannot be resumed). Raised before
    anything is written."""


def decide_start(output_dir, resume=False, overwrite=False, table_name="progress.txt"):
    """What a run does with ``output_dir`` (which need not exist; its table is ``table_name``)
    when asked to ``resume`` the run there, or allowed to ``overwrite`` it. The
    :class:`~spinup.utils.logx.Logger` and the grid launcher (for every variant, before any
    starts) both ask, so both refuse alike.

    Returns:
        str: ``'resume'``; ``'new'`` (no table there); ``'reuse'`` (the run there stopped
        before its first epoch ended, see :func:`holds_run`: its files go); ``'replace'``
        (a run is there and ``overwrite`` is set: its files go).

    Raises:
        FileNotFoundError: ``resume`` and no run there.
        FileExistsError: a run is there, and neither ``resume`` nor ``overwrite`` is set.
    """
    table_path = osp.join(output_dir, table_name)
    if resume:
        # A deleted table comes back from the checkpoint, which carries its text.
        if not osp.exists(table_path) and not osp.isdir(osp.join(output_dir, "pyt_save")):
            raise FileNotFoundError(f"{output_dir}: no run to resume "
                                    f"({table_name} does not exist)")
        return "resume"
    if not osp.exists(table_path):
        return "new"
    if not holds_run(output_dir, table_name):
        return "reuse"
    if not overwrite:
        raise FileExistsError(refusal_to_overwrite(table_path))
    return "replace"


def resume_point(run_dir):
    """Where ``--resume`` continues the run in ``run_dir`` (CLI and grid alike).

    Returns:
        tuple: ``(done, ranks)``: the epochs that every MPI rank's checkpoint has (the lowest:
        ranks stopped mid-write may be one ahead), and the number of ranks.

    Raises:
        FileNotFoundError: no checkpoint (``pyt_save/checkpoint.pt``).
        ValueError: a checkpoint cannot be read (see ``load_checkpoint``).
    """
    from spinup.machinery.checkpoint import checkpoint_ranks, load_checkpoint
    ranks = checkpoint_ranks(run_dir)
    try:
        done = min(int(load_checkpoint(run_dir, rank=r, mmap=True)["epoch"])
                   for r in range(max(1, ranks)))
    except KeyError as e:
        raise ValueError(f"{run_dir}: its checkpoint has no {e} entry") from None
    return done, ranks


def read_run_config(run_dir):
    """A run's ``config.json`` as a dict; :class:`LaunchError` (one line naming the file) if
    the file cannot be read, is not JSON, or holds no JSON object."""
    path = osp.join(run_dir, "config.json")
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise LaunchError(f"cannot read {path} ({getattr(e, 'strerror', None) or e}); "
                          "it is not a run's configuration") from None
    if not isinstance(config, dict):
        raise LaunchError(f"{path} holds a JSON {type(config).__name__}, not the object of "
                          "a run's configuration")
    return config


#: The arguments a resumed run may change: its number of epochs, and where it trains (an
#: optimizer's state moves between devices: :func:`spinup.machinery.device.load_optimizer`).
#: ``--resume DIR`` and a grid's ``--resume`` both go by it (:func:`check_same_call`).
RESUME_MAY_CHANGE = ("epochs", "device", "cuda_graph")

#: Arguments :func:`check_same_call` does not compare: how the run reports, and its env
#: function (compared as the id it makes).
_NOT_COMPARED = {"logger_kwargs", "env_fn"}

_SAVED_ENV = re.compile(r"(?:gym\.make(?:_vec)?|spinup\.envs\.atari)\((['\"])(.+?)\1")


def is_batched_id(env_id):
    """Whether ``env_id`` names one of spinup's batched tasks (:mod:`spinup.envs`)."""
    import gymnasium as gym

    import spinup.envs  # noqa: F401  (registers the tasks)
    entry = getattr(gym.registry.get(str(env_id)), "vector_entry_point", None)
    where = entry if isinstance(entry, str) else getattr(entry, "__module__", "")
    return where.startswith("spinup.envs")


def env_maker(env_id, num_envs=None, device=None):
    """The ``env_fn`` of a run given a gymnasium id (``--env``): ``gymnasium.make(env_id)``,
    written in ``config.json`` as ``gym.make('<id>')``, which :func:`saved_env_id` reads.
    A batched task's id (:func:`is_batched_id`) makes ``num_envs`` copies (1 if None) on
    ``device`` (the CPU for None or ``'auto'``) with ``gymnasium.make_vec``. An Atari id
    (``ALE/...``) gets the standard preprocessing (:func:`spinup.envs.pixels.atari`), a
    MinAtar id its registration first."""
    if is_batched_id(env_id):
        n, where = num_envs or 1, "cpu" if device in (None, "auto") else device

        def env_fn():
            import gymnasium as gym

            import spinup.envs  # noqa: F401
            return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                                device=where)
        env_fn.__qualname__ = f"gym.make_vec({env_id!r}, num_envs={n}, device={where!r})"
        return env_fn

    from spinup.envs import pixels
    if pixels.is_atari_id(env_id):   # the standard preprocessing (spinup.envs.pixels)
        return pixels.atari(env_id)

    def env_fn():
        import gymnasium as gym
        if pixels.is_minatar_id(env_id):
            pixels.register_minatar()
        return gym.make(env_id)
    env_fn.__qualname__ = f"gym.make({env_id!r})"   # how config.json shows it
    return env_fn


def saved_env_id(config):
    """The gymnasium id that a run's ``env_fn`` makes, from its ``config.json`` (``config``,
    a dict); None for an ``env_fn`` not made by :func:`env_maker` (a run started from Python)."""
    found = _SAVED_ENV.search(str(config.get("env_fn", "")))
    return found.group(2) if found else None


def resume_may_change():
    """:data:`RESUME_MAY_CHANGE` as flags, in words: ``--epochs, --device and --cuda_graph``."""
    flags = [f"--{key}" for key in RESUME_MAY_CHANGE]
    return ", ".join(flags[:-1]) + " and " + flags[-1]


def check_same_call(run_dir, fn, kwargs, config=None):
    """Refuse to resume the run in ``run_dir`` with arguments it was not started with.

    The rule of ``--resume DIR`` and of a grid's ``--resume``: every argument of ``fn`` (its
    default where ``kwargs`` lacks it) must equal the one in ``config.json`` (``config``, read
    when ``None``), except :data:`RESUME_MAY_CHANGE` (and ``logger_kwargs``); an ``env_name``
    must be the id the saved ``env_fn`` makes. Arguments the saved run does not list (added
    since) are not compared.

    Raises:
        LaunchError: one line naming the run and every differing argument; or
            :func:`read_run_config`'s, or a run of another algorithm.
    """
    config = read_run_config(run_dir) if config is None else config
    try:
        check_same_algorithm(fn.__name__, fn, run_dir, config)
    except ValueError as e:
        raise LaunchError(str(e)) from None
    differ = []
    for key, param in inspect.signature(fn).parameters.items():
        value = kwargs.get(key, param.default)
        if (key not in RESUME_MAY_CHANGE and key not in _NOT_COMPARED and key in config
                and value is not inspect.Parameter.empty
                and convert_json(value) != config[key]):
            differ.append(f"{key} {convert_json(value)!r} (the run has {config[key]!r})")
    saved_env = saved_env_id(config)
    if "env_name" in kwargs and saved_env and saved_env != kwargs["env_name"]:
        differ.append(f"env_name {kwargs['env_name']!r} (the run has {saved_env!r})")
    if differ:
        raise LaunchError(f"--resume: {run_dir} was started with other arguments: "
                          + "; ".join(differ) + f". Only {resume_may_change()} may change: "
                          "give the original values, or a new --exp_name for a new run")


def _count_rows(output_dir):
    try:
        with open(osp.join(output_dir, "progress.txt")) as f:
            return max(0, sum(1 for line in f if line.strip()) - 1)
    except OSError:
        return 0


def plan_resume(run, num_cpu):
    """Mark the grid's ``run`` (a ``_Run``) to be skipped, resumed or started again, for a
    grid's ``--resume`` with ``num_cpu`` processes per run.

    Raises:
        LaunchError: the checkpoint cannot be read, was written by another number of MPI
            processes, or is past ``run.epochs``; epochs were logged but no checkpoint was
            kept; or the run was started with other arguments (:func:`check_same_call`).
    """
    from spinup.machinery.cores import physical_cores
    if not can_resume(run.output_dir):
        if not holds_run(run.output_dir):
            return   # new, or stopped before its first epoch ended: (re)started as new
        # Epochs logged but no checkpoint (deleted: a replay buffer is large). Never
        # overwritten by --resume: skipped if finished with these arguments, else refused.
        check_same_call(run.output_dir, run.fn, run.kwargs)
        rows = _count_rows(run.output_dir)
        if run.epochs is not None and rows == run.epochs:
            run.state, run.shown = "skip", rows
            return
        raise LaunchError(f"--resume: {run.output_dir} has {rows} epoch(s) logged but no "
                          "checkpoint (pyt_save/checkpoint.pt), so it cannot be continued; "
                          "nothing was changed. Give a new --exp_name, or delete the "
                          "directory to start it again")
    try:
        done, ranks = resume_point(run.output_dir)   # as --resume DIR reads it
    except ValueError as e:
        raise LaunchError(f"--resume: {run.label}: {e}") from None
    check_same_call(run.output_dir, run.fn, run.kwargs)
    wanted = physical_cores() if num_cpu == "auto" else int(num_cpu)
    if ranks != wanted:
        raise LaunchError(f"--resume: {run.output_dir} was run with --cpu {ranks}, this grid "
                          f"asks for --cpu {num_cpu}; give the grid its original --cpu")
    if run.epochs is not None and done > run.epochs:   # as --resume DIR --epochs N says
        raise LaunchError(f"--resume: {run.output_dir} has done {done} epochs already; "
                          f"--epochs {run.epochs} would undo them (give --epochs {done} or "
                          "more, or a new --exp_name)")
    if run.epochs is not None and done == run.epochs:
        run.state, run.shown = "skip", done
        return
    # Rows after the checkpoint (if any) are stale: not reported before the run cuts them.
    run.state, run.epochs_before = "resume", done
    run.shown = max(done, _count_rows(run.output_dir))
    lk = run.kwargs["logger_kwargs"]
    lk.pop("overwrite", None)
    lk["resume"] = True


def refusal_to_overwrite(table_path):
    """The one-line message for an output directory that already holds a run (with the
    way to continue it, when the run stopped with a checkpoint before its last epoch)."""
    run_dir = osp.dirname(table_path) or "."
    resume = ""
    try:
        planned = read_run_config(run_dir).get("epochs")
        with open(table_path) as f:
            done = max(0, len(f.read().splitlines()) - 1)
    except (OSError, ValueError):   # LaunchError is a ValueError
        planned = None
    if isinstance(planned, int) and 0 < done < planned and can_resume(run_dir):
        resume = (f" The run stopped after epoch {done} of {planned}: continue it with "
                  f"--resume {run_dir} (a grid: the same command and --resume; Python: "
                  "logger_kwargs=dict(..., resume=True)).")
    return (f"{run_dir} already holds a run ({osp.basename(table_path)} exists); refusing to "
            "overwrite it. Choose a new --exp_name, add --dt for date-stamped directories, "
            "or pass --overwrite (Python: overwrite=True in an algorithm's logger_kwargs, in "
            "ExperimentGrid.run or in EpochLogger)." + resume)


def can_resume(output_dir):
    """Whether ``output_dir`` holds a checkpoint (``pyt_save/checkpoint.pt``) that ``--resume``
    continues: every message that advises ``--resume`` asks this first."""
    from spinup.machinery.checkpoint import checkpoint_path
    return output_dir is not None and osp.exists(checkpoint_path(output_dir))


def holds_run(output_dir, table_name="progress.txt"):
    """Whether ``output_dir`` holds a run that finished at least one epoch: its table has a
    row after the header, or ``pyt_save/`` holds a checkpoint or a model. (A run interrupted
    while starting holds none: the same command may reuse its directory.)"""
    with contextlib.suppress(OSError), open(osp.join(output_dir, table_name)) as f:
        if len(f.readlines(1 << 16)) > 1:  # the header and at least one row
            return True
    try:
        saved = os.listdir(osp.join(output_dir, "pyt_save"))
    except OSError:
        return False
    return any(name.endswith(".pt") for name in saved)


def _clear_run(output_dir, table_name):
    """Delete what a run wrote to ``output_dir``, so that nothing of it is left next to a new
    run; an ``output.log`` that is this process's stdout (opened for the new run) stays."""
    for name in os.listdir(output_dir):
        path = osp.join(output_dir, name)
        if name in ("pyt_save", "tb", "wandb", "videos") and osp.isdir(path):
            shutil.rmtree(path)
        elif (name in (table_name, "config.json", PROVENANCE_NAME, "tracking.json")
              or re.fullmatch(r"vars\d*\.json", name)
              or (name == "output.log" and not osp.samestat(os.stat(path), os.fstat(1)))):
            os.remove(path)


#: Name of the lock file in a run directory; see :func:`lock_run_dir`.
LOCK_NAME = ".spinup.lock"


class RunInProgressError(FileExistsError):
    """Another live process is writing to the run directory (it holds the lock)."""


class _RunDirLock:
    """An open ``.spinup.lock`` with an exclusive ``flock``; deleting and closing it (when
    the last reference goes, or the process exits) releases the directory."""

    def __init__(self, lock_file):
        self._file = lock_file
        atexit.register(lambda ref=weakref.ref(self): ref() and ref().release())

    def release(self):
        if not self._file.closed:
            # a finished run keeps no lock file (a killed one does; it is harmless)
            with contextlib.suppress(OSError):
                os.unlink(self._file.name)
            self._file.close()

    __del__ = release


# real path of a run directory -> its lock, while some logger of this process uses it
_held_locks = weakref.WeakValueDictionary()


def _lock_path(output_dir):
    return osp.join(osp.realpath(output_dir), LOCK_NAME)


def _flock_or_refuse(output_dir, mode):
    """Open ``output_dir``'s lock file with ``mode`` and lock it: the open file, ``None`` where
    files cannot be locked, or :class:`RunInProgressError` if another process has it."""
    try:
        import fcntl
        lock_file = open(_lock_path(output_dir), mode)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.seek(0)
        owner = lock_file.read().strip() or "unknown"
        lock_file.close()
        raise RunInProgressError(
            f"{output_dir} is in use by another running process (pid {owner}); wait for "
            "it to end, or stop it, before starting, resuming or overwriting a run there") \
            from None
    except OSError:  # no flock on this file system
        lock_file.close()
        return None
    return lock_file


def lock_run_dir(output_dir):
    """Claim ``output_dir`` (an existing run directory) for this process.

    The claim is an exclusive ``flock`` on ``output_dir/.spinup.lock`` (which holds the
    owner's pid), shared by this process's loggers and dropped by the OS when the process
    ends however it ends.

    Returns:
        object or None: the claim, held until every reference to it is dropped; ``None``
        (nothing locked) where ``flock`` is unavailable.

    Raises:
        RunInProgressError: another process holds the lock; the message names its pid.
    """
    path = _lock_path(output_dir)
    held = _held_locks.get(path)
    if held is not None:
        return held
    lock_file = _flock_or_refuse(output_dir, "a+")
    if lock_file is None:
        return None
    lock_file.seek(0)
    lock_file.truncate()
    lock_file.write(f"{os.getpid()}\n")
    lock_file.flush()
    held = _held_locks[path] = _RunDirLock(lock_file)
    return held


def check_run_dir_free(output_dir):
    """Raise :class:`RunInProgressError` if another process holds ``output_dir``'s
    lock (see :func:`lock_run_dir`). Takes nothing and writes nothing; a directory
    without a lock file is free."""
    path = _lock_path(output_dir)
    if path in _held_locks or not osp.exists(path):
        return
    probe = _flock_or_refuse(output_dir, "r")
    if probe is not None:
        probe.close()


def run_algorithm(config):
    """The algorithm that wrote a run's ``config.json`` (the dict ``config``), or ``None``.

    That is its ``_algorithm`` entry (see :func:`spinup.machinery.arg_checks.check_args`); older
    runs are told by their default actor-critic's module, TRPO with ``algo='npg'`` as ``npg``.
    """
    if not isinstance(config, dict):
        return None
    if isinstance(config.get("_algorithm"), str):
        return config["_algorithm"]
    found = re.match(r"spinup\.algos\.(\w+)\.core\.", str(config.get("actor_critic", "")))
    if found is None:
        return None
    return "npg" if found.group(1) == "trpo" and config.get("algo") == "npg" else found.group(1)


def check_same_algorithm(algo, fn, run_dir, config):
    """Refuse (ValueError, one line) to resume the run in ``run_dir`` (``config``: its
    ``config.json`` dict) with the algorithm ``fn``, named ``algo``, when another algorithm
    wrote it; for a run that does not say which, when it has arguments ``fn`` does not take."""
    other = run_algorithm(config)
    if other is None and isinstance(config, dict):
        params = inspect.signature(fn).parameters
        foreign = sorted(k for k in config
                         if k not in params and not k.startswith("_") and k != "exp_name")
        if foreign:
            raise ValueError(f"{algo}: cannot resume {run_dir}: its config.json has arguments "
                             f"that {algo} does not take ({', '.join(foreign)}), so another "
                             "algorithm wrote it; nothing was changed")
    elif other is not None and other != algo:
        raise ValueError(f"{algo}: cannot resume {run_dir}: it is a {other} run (its "
                         f"config.json says so), not a {algo} run; nothing was changed. Resume "
                         f"it with {other}: python -m spinup.run {other} --resume {run_dir}")


def check_resume_algorithm(algo, fn, logger_kwargs):
    """:func:`check_same_algorithm` on ``D/config.json`` when ``logger_kwargs`` is
    ``dict(output_dir=D, resume=True)``; a file that cannot be read is left to the logger."""
    run_dir = logger_kwargs.get("output_dir") if isinstance(logger_kwargs, dict) else None
    if not isinstance(run_dir, str) or not logger_kwargs.get("resume"):
        return
    try:
        config = read_run_config(run_dir)
    except LaunchError:
        return
    check_same_algorithm(algo, fn, run_dir, config)


def check_data_dir(data_dir, default):
    """The base directory of runs: ``data_dir`` (``default`` when ``None``), ``~`` expanded;
    ValueError if it is empty or not a path."""
    data_dir = default if data_dir is None else data_dir
    if not isinstance(data_dir, (str, os.PathLike)) or not os.fspath(data_dir):
        raise ValueError(f"data_dir={data_dir!r} is not allowed: a directory path (leave "
                         f"--data_dir out for the default, {default})")
    return osp.expanduser(os.fspath(data_dir))


def check_run_name(exp_name):
    """Refuse (ValueError) an ``exp_name`` that is not a single directory name inside
    ``data_dir``: not a string; empty, ``.`` or ``..``; or holding a path separator (``a/b``,
    ``/abs``) or a control character (NUL, newline, tab ...)."""
    if (not isinstance(exp_name, str) or exp_name in ("", ".", "..") or min(exp_name) < " "
            or any(sep in exp_name for sep in filter(None, ("/", os.sep, os.altsep)))):
        raise ValueError(f"exp_name={exp_name!r} is not allowed: a non-empty name without "
                         "'/' or control characters such as a newline (it becomes a "
                         "directory inside data_dir; choose the base directory with --data_dir)")


def check_name_lengths(exp_name, data_dir, names):
    """Refuse (ValueError, for the first) directory ``names`` (made from ``exp_name``, to be
    created under ``data_dir``) whose UTF-8 length is over the file system's limit:
    ``PC_NAME_MAX`` of the nearest existing ancestor of ``data_dir``, else 255."""
    probe = osp.abspath(data_dir)
    while not osp.exists(probe) and osp.dirname(probe) != probe:
        probe = osp.dirname(probe)
    try:
        limit = os.pathconf(probe, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    for name in names:
        size = len(name.encode("utf-8", "surrogateescape"))
        if size > limit:
            short = exp_name if len(exp_name) <= 40 else exp_name[:37] + "..."
            raise ValueError(f"exp_name={short!r} ({len(exp_name)} characters) is not allowed: "
                             f"the directory name made from it would be {size} bytes and the "
                             f"file system allows {limit}; use a shorter --exp_name")
