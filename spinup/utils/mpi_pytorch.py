"""Keep one PyTorch model identical on every MPI rank (spec: "MPI Tools").

Data-parallel training in three calls: :func:`setup_pytorch_for_mpi` once,
:func:`sync_params` after building the model (all ranks start from rank 0's
weights), and :func:`mpi_avg_grads` between ``backward()`` and ``step()`` (all
ranks take the same step). With one process each call returns at once. The MPI
calls write straight into the model through numpy views of its (CPU) tensors.
"""
import numpy as np
import torch

from spinup.utils.mpi_tools import broadcast, mpi_avg, num_procs


def setup_pytorch_for_mpi():
    """Give each of ``N > 1`` ranks ``threads // N`` of torch's intra-op threads (at
    least one), so they do not oversubscribe the cores; one process keeps its setting."""
    ranks = num_procs()
    if ranks > 1:
        torch.set_num_threads(max(1, torch.get_num_threads() // ranks))


def mpi_avg_grads(module):
    """Replace each parameter's ``.grad`` (where it has one) by its mean over all ranks,
    in place: call it between ``loss.backward()`` and ``optimizer.step()``.

    Args:
        module (torch.nn.Module): the model (or a part of it, e.g. ``ac.pi``).
    """
    if num_procs() == 1:
        return
    for p in module.parameters():
        if p.grad is not None:
            grad = p.grad.numpy()
            grad[:] = mpi_avg(grad)


def sync_params(module):
    """Copy rank 0's parameter values into ``module`` on every other rank (in place).

    Args:
        module (torch.nn.Module): the model, built on every rank.
    """
    if num_procs() == 1:
        return
    for p in module.parameters():
        broadcast(p.data.numpy())


def flat_params_equal_across_ranks(module):
    """True when every rank holds (numerically) the same parameters (a check for tests)."""
    flat = torch.cat([p.data.reshape(-1) for p in module.parameters()]).numpy()
    return bool(np.allclose(mpi_avg(flat), flat))
