"""Exercise 3.2: Conjugate Gradient and the KL Hessian-Vector Product (TRPO).

TRPO's step direction is x = H^{-1} g, where H is the Hessian of the mean KL divergence
between the old and the new policy. H has one row per policy parameter, so TRPO never
builds it: it needs only products H x (two backward passes, "double backprop"), and
solves H x = g with the conjugate gradient method, which uses nothing but such products.

Write both, on 1-D PyTorch tensors:

- ``conjugate_gradient(Ax, b, cg_iters, residual_tol)``: at most ``cg_iters`` CG
  iterations from x = 0 (stop early once r^T r < residual_tol);
- ``hessian_vector_product(kl, params, damping_coeff)``: return a function
  ``Hx(x) = (H + damping_coeff * I) x``, callable many times.

Run this file to check your work::

    python -m spinup.exercises.problem_set_3.exercise3_2
"""
import torch


def flat_grad(y, params, **kwargs):
    """(Given.) Gradient of the scalar ``y`` with respect to the list of tensors
    ``params``, concatenated into one 1-D tensor; ``kwargs`` go to
    ``torch.autograd.grad`` (e.g. ``create_graph=True``, ``retain_graph=True``)."""
    grads = torch.autograd.grad(y, params, **kwargs)
    return torch.cat([g.reshape(-1) for g in grads])


def conjugate_gradient(Ax, b, cg_iters=10, residual_tol=1e-10):
    """
    Approximately solve A x = b for a symmetric positive-definite A.

    Args:
        Ax: function, 1-D tensor v -> 1-D tensor A v (the only access to A).
        b: 1-D tensor, the right-hand side.
        cg_iters (int): maximum number of iterations (call Ax at most once each).
        residual_tol (float): stop as soon as r^T r < residual_tol.

    Returns:
        1-D tensor x (same shape and dtype as b).
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def hessian_vector_product(kl, params, damping_coeff):
    """
    Args:
        kl: scalar tensor, the mean KL divergence, a function of ``params``.
        params: list of the policy's parameter tensors.
        damping_coeff (float): the damping added to H (keeps CG stable).

    Returns:
        A function Hx: 1-D tensor x (one entry per parameter, in the order of
        ``params``) -> 1-D tensor (H + damping_coeff * I) x, where H is the Hessian
        of ``kl`` with respect to ``params``. It must work when called several times.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


if __name__ == "__main__":
    import argparse
    from spinup.exercises.checks import check_exercise3_2
    from spinup.exercises.common import finish
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_soln", action="store_true")
    if parser.parse_args().use_soln:
        from spinup.exercises.problem_set_3_solutions.exercise3_2_soln import (
            conjugate_gradient, hessian_vector_product)
    finish(check_exercise3_2(conjugate_gradient, hessian_vector_product)[0])
