"""Automatic checks of the function-level exercises (1.1, 1.3's pieces, 3.1, 3.2, 3.3).

Every ``check_exerciseX_Y(...)`` takes the student's functions, runs them on random
inputs against the reference solution (and, where one exists, an independent
brute-force or library computation) and returns ``(correct, message)``: ``message``
lists what failed, with hints for the usual mistakes. Starter code that is not filled
in (returns ``None`` or raises ``NotImplementedError``) is reported as such.
"""
import numpy as np
import torch

from spinup.exercises.common import Incorrect, call_student, require, run_checks


def _result(title, checks):
    ok, failures = run_checks(title, checks)
    return ok, "\n".join("- " + f for f in failures)


def _as_tensor(out, name, shape=None):
    require(isinstance(out, torch.Tensor),
            f"{name} should return a torch.Tensor, got {type(out).__name__}")
    if shape is not None:
        require(tuple(out.shape) == tuple(shape),
                f"{name} returned shape {tuple(out.shape)}, expected {tuple(shape)}")
    return out


def _close(a, b, atol=1e-4, rtol=1e-4):
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       atol=atol, rtol=rtol)


# --------------------------------------------------------------------------- 1.1
def check_exercise1_1(gaussian_likelihood):
    """Exercise 1.1: ``gaussian_likelihood(x, mu, log_std)`` against the solution and
    ``torch.distributions.Normal`` on random batches."""
    from spinup.exercises.problem_set_1_solutions import exercise1_1_soln as soln
    name = "gaussian_likelihood"
    gen = torch.Generator().manual_seed(0)

    def batch(b, d, shared_std):
        x = torch.randn(b, d, generator=gen)
        mu = torch.randn(b, d, generator=gen)
        log_std = torch.randn(d if shared_std else (b, d), generator=gen) * 0.5
        return x, mu, log_std

    def compare(shared_std):
        for b, d in [(32, 7), (1, 1), (100, 3)]:
            x, mu, log_std = batch(b, d, shared_std)
            out = _as_tensor(call_student(gaussian_likelihood, x, mu, log_std, name=name),
                             name, (b,)).detach()
            want = soln.gaussian_likelihood(x, mu, log_std)
            ref = torch.distributions.Normal(mu, log_std.exp()).log_prob(x).sum(-1)
            require(_close(want, ref), "internal error: solution disagrees with torch")
            if not _close(out, want):
                raise Incorrect(_diagnose_1_1(out, want, x, mu, log_std, d))

    def gradient():
        x, mu, log_std = batch(8, 4, False)
        mu.requires_grad_(True)
        log_std.requires_grad_(True)
        out = call_student(gaussian_likelihood, x, mu, log_std, name=name)
        require(isinstance(out, torch.Tensor) and out.requires_grad,
                "the result carries no gradient: compute it with torch operations on the "
                "input tensors (no numpy, no .detach(), no .item())")
        out.sum().backward()
        mu_ref, ls_ref = mu.detach().clone().requires_grad_(True), \
            log_std.detach().clone().requires_grad_(True)
        soln.gaussian_likelihood(x, mu_ref, ls_ref).sum().backward()
        require(_close(mu.grad, mu_ref.grad) and _close(log_std.grad, ls_ref.grad),
                "gradients with respect to mu / log_std are wrong")

    return _result("Exercise 1.1 (gaussian_likelihood)", [
        ("log-likelihoods match on random batches (log_std per sample)", lambda: compare(False)),
        ("log-likelihoods match with a shared log_std of shape [dim]", lambda: compare(True)),
        ("gradients flow to mu and log_std", gradient),
    ])


def _diagnose_1_1(out, want, x, mu, log_std, d):
    """Name the usual mistakes from the difference between the answer and the truth."""
    diff = (out - want).double()
    k_log2pi = 0.5 * d * np.log(2 * np.pi)
    sum_log_std = log_std.expand_as(x).sum(-1).double()
    hints = [
        (torch.allclose(diff, torch.full_like(diff, k_log2pi), atol=1e-3),
         "the result is too high by k/2 * log(2*pi): you are missing the log(2*pi) term"),
        (torch.allclose(diff, torch.full_like(diff, -k_log2pi), atol=1e-3),
         "the log(2*pi) term is counted twice (it is -k/2 * log(2*pi))"),
        (d > 1 and torch.allclose(diff, torch.full_like(diff, k_log2pi * (1 - 1 / d)),
                                  atol=1e-3),
         "the log(2*pi) term is added once, not once per dimension (-k/2 * log(2*pi))"),
        (torch.allclose(diff, sum_log_std, atol=1e-3),
         "you are missing the -log(sigma) normalisation term"),
        (torch.allclose(out.double(), -want.double(), atol=1e-3),
         "the sign is flipped: a log-likelihood is -0.5 * (...)"),
        (torch.allclose(diff, -sum_log_std, atol=1e-3) or
         torch.allclose(diff, 2 * sum_log_std, atol=1e-3),
         "the log(sigma) term has the wrong factor (it is -sum_i log sigma_i)"),
    ]
    for cond, hint in hints:
        if cond:
            return hint
    return ("values differ from the reference (max abs error %.3g); remember to divide "
            "(x - mu) by sigma = exp(log_std), and to sum over the last dimension"
            % diff.abs().max().item())
