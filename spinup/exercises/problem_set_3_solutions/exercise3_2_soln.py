"""Solution to Exercise 3.2: conjugate gradient and the KL Hessian-vector product.

``spinup/algos/trpo/core.py`` (used by ``trpo.py``) has the same two functions (on numpy arrays, with the
products averaged over MPI processes).
"""
import torch


def flat_grad(y, params, **kwargs):
    grads = torch.autograd.grad(y, params, **kwargs)
    return torch.cat([g.reshape(-1) for g in grads])


def conjugate_gradient(Ax, b, cg_iters=10, residual_tol=1e-10):
    """Hestenes-Stiefel CG (Nocedal & Wright, Algorithm 5.2) from x = 0."""
    x = torch.zeros_like(b)
    r = b.clone()        # residual b - A x
    p = r.clone()        # search direction, A-conjugate to the previous ones
    r_dot_r = r @ r
    for _ in range(cg_iters):
        if r_dot_r < residual_tol:
            break
        Ap = Ax(p)
        alpha = r_dot_r / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        r_dot_r_new = r @ r
        p = r + (r_dot_r_new / r_dot_r) * p
        r_dot_r = r_dot_r_new
    return x


def hessian_vector_product(kl, params, damping_coeff):
    """H x = grad_theta (grad_theta KL . x): differentiate the gradient (kept in the
    graph with ``create_graph=True``) along x; ``retain_graph=True`` so the same
    graph serves every call."""
    g_kl = flat_grad(kl, params, create_graph=True)

    def Hx(x):
        return flat_grad(g_kl @ x, params, retain_graph=True) + damping_coeff * x
    return Hx
