"""How many cores a run may use: the physical cores (``num_cpu='auto'``), the cores this
process may run on, and the check of an MPI process count against them."""
import os

from spinup.utils.mpi_tools import _in_mpi_launch


def physical_cores():
    """Number of physical cores (hyper-threads not counted), for ``num_cpu='auto'``."""
    import psutil
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


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
