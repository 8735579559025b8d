"""MPI helpers (spec: "MPI Tools").

All functions work without MPI: in a plain single process (no ``mpiexec``) they
never import :mod:`mpi4py`, so importing spinup and running with ``num_cpu=1``
needs no working MPI runtime. Inside ``mpiexec`` they use ``MPI.COMM_WORLD``.
"""
import os
import shutil
import subprocess
import sys

import numpy as np

# Environment variables set by MPI launchers (MPICH/Hydra, Open MPI, PMIx, Slurm).
_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")

_COMM = None


def _in_mpi_launch():
    return os.getenv("IN_MPI") is not None or any(v in os.environ for v in _LAUNCHER_VARS)


def _comm():
    """Return ``MPI.COMM_WORLD`` when launched by mpiexec, else ``None``."""
    global _COMM
    if _COMM is None and _in_mpi_launch():
        from mpi4py import MPI
        _COMM = MPI.COMM_WORLD
        if _COMM.Get_size() > 1:
            _install_abort_hook(_COMM)
    return _COMM


def _install_abort_hook(comm):
    """Make an uncaught exception on any rank abort the whole job (no hang)."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = hook


def _physical_cores():
    try:
        import psutil
        n = psutil.cpu_count(logical=False)
        if n:
            return n
    except ImportError:
        pass
    try:  # Linux: count distinct (physical id, core id) pairs
        cores, phys = set(), "0"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("physical id"):
                    phys = line.split(":")[1].strip()
                elif line.startswith("core id"):
                    cores.add((phys, line.split(":")[1].strip()))
        if cores:
            return len(cores)
    except OSError:
        pass
    return os.cpu_count() or 1


def find_mpiexec():
    """Path of ``mpiexec``: the one next to ``sys.executable`` (the pip ``mpich``
    package puts it there), else the first on ``PATH``, else ``None``."""
    local = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(local):
        return local
    return shutil.which("mpiexec")


def mpi_fork(n, bind_to_core=False):
    """Re-launch the current script with ``n`` processes linked by MPI.

    The parent runs ``mpiexec -n n python <same argv>`` with ``IN_MPI=1`` and
    one OpenMP/MKL thread per process, waits for it, and exits with its code.
    Does nothing when ``n <= 1`` or when already running under MPI (e.g. an
    external ``mpiexec`` across several hosts).

    Args:
        n (int or 'auto'): number of processes; ``'auto'`` = physical cores.
        bind_to_core (bool): bind each process to a core (``-bind-to core``).

    Raises:
        RuntimeError: no ``mpiexec`` was found (install ``mpich`` from PyPI).
    """
    if n == "auto":
        n = _physical_cores()
    n = int(n)
    if n <= 1 or _in_mpi_launch():
        return
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise RuntimeError("num_cpu > 1 needs an MPI launcher, but no 'mpiexec' was found. "
                           "Install one with: pip install mpi4py mpich")
    env = os.environ.copy()
    env.update(MKL_NUM_THREADS="1", OMP_NUM_THREADS="1", IN_MPI="1")
    args = [mpiexec, "-n", str(n)]
    if bind_to_core:
        args += ["-bind-to", "core"]
    args += [sys.executable] + sys.argv
    rc = subprocess.call(args, env=env)
    sys.exit(rc)


def msg(m, string=""):
    print(("Message from %d: %s \t " % (proc_id(), string)) + str(m))


def proc_id():
    """Rank of this process (0 when not under MPI)."""
    comm = _comm()
    return 0 if comm is None else comm.Get_rank()


def num_procs():
    """Number of MPI processes (1 when not under MPI)."""
    comm = _comm()
    return 1 if comm is None else comm.Get_size()


def allreduce(*args, **kwargs):
    return _comm().Allreduce(*args, **kwargs)


def broadcast(x, root=0):
    """Broadcast numpy array ``x`` in place from rank ``root`` to all ranks."""
    if num_procs() > 1:
        _comm().Bcast(x, root=root)


def mpi_op(x, op):
    """Reduce scalar or array ``x`` over ranks with ``op`` ('sum'|'min'|'max')."""
    x, scalar = ([x], True) if np.isscalar(x) else (x, False)
    x = np.asarray(x, dtype=np.float64)
    if num_procs() == 1:
        buff = x.copy()
    else:
        from mpi4py import MPI
        buff = np.zeros_like(x)
        allreduce(x, buff, op={"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op])
    return buff[0] if scalar else buff


def mpi_sum(x):
    """Sum of ``x`` over all ranks."""
    return mpi_op(x, "sum")


def mpi_avg(x):
    """Average a scalar or vector over MPI processes."""
    return mpi_sum(x) / num_procs()


def mpi_statistics_scalar(x, with_min_and_max=False):
    """Get mean/std and optional min/max of scalar ``x`` across MPI processes.

    Args:
        x: an array of samples of the scalar (any shape; flattened). May be empty
            on some ranks; if it is empty on all of them, the results are ``nan``.
        with_min_and_max (bool): also return min and max.

    Returns:
        ``(mean, std)`` or ``(mean, std, min, max)`` as floats.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    global_sum, global_n = mpi_sum([np.sum(x), len(x)])
    if global_n == 0:
        return (np.nan,) * (4 if with_min_and_max else 2)
    mean = global_sum / global_n
    global_sum_sq = mpi_sum(np.sum((x - mean) ** 2))
    std = np.sqrt(global_sum_sq / global_n)
    if with_min_and_max:
        global_min = mpi_op(np.min(x) if len(x) > 0 else np.inf, "min")
        global_max = mpi_op(np.max(x) if len(x) > 0 else -np.inf, "max")
        return mean, std, global_min, global_max
    return mean, std
