"""Data-parallel runs with MPI: launching, ranks, and reductions (docs/utils/mpi.rst).

Outside ``mpiexec`` nothing here imports :mod:`mpi4py`: ``proc_id()`` is 0, ``num_procs()``
is 1 and every reduction returns its input, so one-process runs need no working MPI.
"""
import functools
import os
import shutil
import subprocess
import sys

import numpy as np

# Set by MPI launchers (MPICH/Hydra, Open MPI, PMIx, Slurm) in what they start; IN_MPI by mpi_fork.
_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")

_COMM = None


def _in_mpi_launch():
    return "IN_MPI" in os.environ or any(name in os.environ for name in _LAUNCHER_VARS)


def _comm():
    """``MPI.COMM_WORLD`` under an MPI launcher (importing mpi4py on first use), else ``None``."""
    global _COMM
    if _COMM is None and _in_mpi_launch():
        from mpi4py import MPI
        _COMM = MPI.COMM_WORLD
        if _COMM.Get_size() > 1:
            _abort_job_on_uncaught_exception(_COMM)
    return _COMM


def _abort_job_on_uncaught_exception(comm):
    """Chain ``sys.excepthook`` so that a rank dying of an exception ends every rank."""
    report = sys.excepthook

    def report_then_abort(exc_type, exc, tb):
        report(exc_type, exc, tb)
        sys.stderr.flush()
        # Abort also ends mpiexec's proxy: give it a moment to forward the traceback.
        import time
        time.sleep(1.0)
        comm.Abort(1)

    sys.excepthook = report_then_abort


def _physical_cores():
    """Number of physical cores (hyper-threads not counted), for ``num_cpu='auto'``."""
    import psutil
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


def find_mpiexec():
    """The ``mpiexec`` to launch with: the one beside ``sys.executable`` (where the PyPI
    ``mpich`` wheel installs it), else the first on ``PATH``, else ``None``."""
    beside_python = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside_python if os.path.exists(beside_python) else shutil.which("mpiexec")


def available_cores():
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


def check_num_cpu(n, oversubscribe=False):
    """Raise ValueError if ``n`` MPI processes exceed :func:`available_cores`, unless
    ``oversubscribe`` (``n='auto'`` and runs already under an MPI launcher pass)."""
    if n == "auto" or oversubscribe or _in_mpi_launch():
        return
    cores = available_cores()
    if int(n) > cores:
        raise ValueError(f"--cpu {n} asks for more MPI processes than the {cores} CPU cores "
                         f"available here; use --cpu {cores} or less, or add --oversubscribe "
                         "(Python: oversubscribe=True) to start them anyway")


def _is_open_mpi(mpiexec):
    """True when ``mpiexec`` is Open MPI's (which refuses to oversubscribe by default)."""
    try:
        banner = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                                timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in banner or "OpenRTE" in banner


def die_with_parent():
    """A ``preexec_fn`` for ``subprocess``: the new process gets SIGTERM when the
    process that started it dies, even by ``kill -9``, so no orphan trains on.
    Linux only (``prctl(PR_SET_PDEATHSIG)``); elsewhere ``None`` (no ``preexec_fn``).
    """
    if not sys.platform.startswith("linux"):
        return None
    from spinup.launch.run_entrypoint import _die_with
    return functools.partial(_die_with, os.getpid())


def mpi_fork(n, bind_to_core=False, *, oversubscribe=False):
    """Turn the current program into an ``n``-process MPI job: run ``mpiexec -n n <python>
    <the same arguments>`` (``IN_MPI=1``, one OpenMP thread each) and exit with its exit
    code; the code after ``mpi_fork`` runs in each process. Does nothing when ``n <= 1``
    or already under an MPI launcher.

    Args:
        n (int or str): number of processes, or ``'auto'`` for one per physical core.
        bind_to_core (bool): pin each process to one core (``mpiexec -bind-to core``).
        oversubscribe (bool, keyword only): allow more processes than cores (see
            :func:`check_num_cpu`); Open MPI's ``mpiexec`` gets ``--oversubscribe``.

    Raises:
        ValueError: ``n`` is above the core count and ``oversubscribe`` is False.
        RuntimeError: ``n > 1`` and no ``mpiexec`` was found (``pip install mpich``).
    """
    requested, n = n, (_physical_cores() if n == "auto" else int(n))
    if n <= 1 or _in_mpi_launch():
        return
    check_num_cpu(requested, oversubscribe)
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise RuntimeError("num_cpu > 1 needs an MPI launcher, but no 'mpiexec' was found. "
                           "Install one with: pip install mpi4py mpich")
    extra = ["--oversubscribe"] if oversubscribe and _is_open_mpi(mpiexec) else []
    if bind_to_core:
        extra += ["-bind-to", "core"]  # spelled so that MPICH's Hydra and Open MPI both read it
    env = dict(os.environ, MKL_NUM_THREADS="1", OMP_NUM_THREADS="1", IN_MPI="1")
    sys.exit(subprocess.call([mpiexec, *extra, "-n", str(n), sys.executable, *sys.argv],
                             env=env, preexec_fn=die_with_parent()))


def proc_id():
    """Rank of this process: 0 to ``num_procs() - 1`` (0 without MPI)."""
    comm = _comm()
    return comm.Get_rank() if comm is not None else 0


def num_procs():
    """Number of processes in the job (1 without MPI)."""
    comm = _comm()
    return comm.Get_size() if comm is not None else 1


def broadcast(x, root=0):
    """Overwrite the numpy array ``x`` on every rank with rank ``root``'s ``x`` (in place)."""
    if num_procs() > 1:
        _comm().Bcast(x, root=root)


def mpi_op(x, op):
    """Combine ``x`` element-wise across all ranks.

    Args:
        x: a number or an array (the same shape on every rank).
        op (str): ``'sum'``, ``'min'`` or ``'max'``.

    Returns:
        The combined value as float64: a number for a number, else an array.
    """
    shape = np.shape(x)
    values = np.array(x, dtype=np.float64, ndmin=1)  # a copy; MPI buffers are >= 1-d
    if num_procs() > 1:
        from mpi4py import MPI
        combined = np.empty_like(values)
        reduction = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op]
        _comm().Allreduce(values, combined, op=reduction)
        values = combined
    values = values.reshape(shape)
    return values[()] if np.isscalar(x) else values


def mpi_sum(x):
    """Element-wise sum of ``x`` over all ranks (see :func:`mpi_op`)."""
    return mpi_op(x, "sum")


def mpi_avg(x):
    """Element-wise mean of ``x`` over all ranks (see :func:`mpi_op`)."""
    return mpi_sum(x) / num_procs()


def mpi_statistics_scalar(x, with_min_and_max=False):
    """Mean and standard deviation (and min, max) of the samples of all ranks, on every
    rank; the standard deviation is the population one (divided by the number of samples).

    Args:
        x: this rank's samples (any shape, flattened); may be empty on some ranks
            (empty on all: the results are ``nan``).
        with_min_and_max (bool): also return the minimum and maximum.

    Returns:
        tuple: ``(mean, std)``, or ``(mean, std, min, max)``.
    """
    samples = np.asarray(x, dtype=np.float64).ravel()
    total, count = mpi_sum([samples.sum(), samples.size])
    if count == 0:
        return (np.nan,) * (4 if with_min_and_max else 2)
    mean = total / count
    std = np.sqrt(mpi_sum(((samples - mean) ** 2).sum()) / count)
    if not with_min_and_max:
        return mean, std
    lowest = mpi_op(samples.min() if samples.size else np.inf, "min")
    highest = mpi_op(samples.max() if samples.size else -np.inf, "max")
    return mean, std, lowest, highest
