"""Data-parallel runs with MPI: ranks and reductions (docs/utils/mpi.rst). Starting the
processes (``mpi_fork``) is the launcher's: :mod:`spinup.launch.mpi_launch`.

Outside ``mpiexec`` nothing here imports :mod:`mpi4py`: ``proc_id()`` is 0, ``num_procs()``
is 1 and every reduction returns its input, so one-process runs need no working MPI.
"""
import os
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


def __getattr__(name):
    """``mpi_fork`` and the core counts, still importable from here (their home is the
    launcher, :mod:`spinup.launch.mpi_launch`, which a reader of the algorithms skips)."""
    if name in _LAUNCHING:
        import importlib
        return getattr(importlib.import_module("spinup.launch.mpi_launch"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_LAUNCHING = ("mpi_fork", "find_mpiexec", "available_cores", "check_num_cpu", "die_with_parent")
