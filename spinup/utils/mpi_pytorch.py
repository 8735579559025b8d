"""PyTorch + MPI: data-parallel training by gradient averaging (spec: "MPI Tools").

With one process every function here is (almost) free and touches no MPI.
"""
import numpy as np
import torch

from spinup.utils.mpi_tools import broadcast, mpi_avg, num_procs


def setup_pytorch_for_mpi():
    """Give each MPI process a fair share of torch threads (at least one).

    Under MPI, ``N`` processes share the machine, so each gets
    ``cpu_threads // N``; a single process keeps torch's default.
    """
    if num_procs() == 1:
        return
    fair_num_threads = max(int(torch.get_num_threads() / num_procs()), 1)
    torch.set_num_threads(fair_num_threads)


def mpi_avg_grads(module):
    """Average the ``.grad`` of every parameter of ``module`` across MPI processes
    (in place). Call between ``loss.backward()`` and ``optimizer.step()``."""
    if num_procs() == 1:
        return
    for p in module.parameters():
        if p.grad is None:
            continue
        p_grad_numpy = p.grad.numpy()  # shares memory with p.grad
        p_grad_numpy[:] = mpi_avg(p.grad.numpy())


def sync_params(module):
    """Copy rank 0's parameters of ``module`` to every other process (in place)."""
    if num_procs() == 1:
        return
    for p in module.parameters():
        p_numpy = p.data.numpy()
        broadcast(p_numpy)


def flat_params_equal_across_ranks(module):
    """True when every rank holds the same parameters (used by the MPI tests)."""
    flat = torch.cat([p.data.reshape(-1) for p in module.parameters()]).numpy()
    return bool(np.allclose(mpi_avg(flat), flat))
