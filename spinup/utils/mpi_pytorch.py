"""Keep one PyTorch model identical on every MPI rank (spec: "MPI Tools").

Data-parallel training in three calls: :func:`setup_pytorch_for_mpi` once,
:func:`sync_params` after building the model (all ranks start from rank 0's
weights), and :func:`mpi_avg_grads` between ``backward()`` and ``step()`` (all
ranks take the same step). With one process each call returns at once.

Parameters are exchanged through numpy views that share memory with the torch
tensors, so the MPI calls write straight into the model (CPU tensors only).
"""
import numpy as np
import torch

from spinup.utils.mpi_tools import broadcast, mpi_avg, num_procs


def _numpy_views(tensors):
    """Numpy arrays sharing memory with each tensor (writing to one writes the other)."""
    return [t.numpy() for t in tensors]


def setup_pytorch_for_mpi():
    """Split torch's intra-op threads fairly between the ranks on this machine.

    ``N`` ranks each get ``threads // N`` threads (at least one), so they do not
    oversubscribe the cores. A single process keeps torch's setting.
    """
    ranks = num_procs()
    if ranks > 1:
        torch.set_num_threads(max(1, torch.get_num_threads() // ranks))


def mpi_avg_grads(module):
    """Replace each parameter's ``.grad`` by its mean over all ranks (in place).

    Call it after ``loss.backward()`` and before ``optimizer.step()``. Parameters
    without a gradient are skipped.

    Args:
        module (torch.nn.Module): the model (or a part of it, e.g. ``ac.pi``).
    """
    if num_procs() == 1:
        return
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    for grad in _numpy_views(grads):
        grad[:] = mpi_avg(grad)


def sync_params(module):
    """Copy rank 0's parameter values into ``module`` on every other rank (in place).

    Args:
        module (torch.nn.Module): the model, built on every rank.
    """
    if num_procs() == 1:
        return
    for values in _numpy_views(p.data for p in module.parameters()):
        broadcast(values)


def flat_params_equal_across_ranks(module):
    """Return True when every rank holds (numerically) the same parameters.

    A check for tests: compares this rank's flattened parameters with their
    mean over the ranks.
    """
    flat = torch.cat([p.data.reshape(-1) for p in module.parameters()]).numpy()
    return bool(np.allclose(mpi_avg(flat), flat))
