"""Starting an MPI job: :func:`mpi_fork` turns the current program into ``n`` processes
(``mpiexec`` from the PyPI ``mpich`` wheel), after checking the core count."""
import functools
import os
import shutil
import subprocess
import sys

from spinup.machinery.cores import available_cores, check_num_cpu, physical_cores  # noqa: F401
from spinup.utils.mpi_tools import _in_mpi_launch


def find_mpiexec():
    """The ``mpiexec`` to launch with: the one beside ``sys.executable`` (where the PyPI
    ``mpich`` wheel installs it), else the first on ``PATH``, else ``None``."""
    beside_python = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside_python if os.path.exists(beside_python) else shutil.which("mpiexec")






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
    from spinup.machinery.stopping import die_with
    return functools.partial(die_with, os.getpid())


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
    check_num_cpu(n, oversubscribe)
    fork_checked(n, bind_to_core, oversubscribe)


def fork_checked(n, bind_to_core=False, oversubscribe=False):
    """:func:`mpi_fork` once the core count was checked (by the launcher that started this
    process, so that each count is checked once)."""
    n = physical_cores() if n == "auto" else int(n)
    if n <= 1 or _in_mpi_launch():
        return
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
