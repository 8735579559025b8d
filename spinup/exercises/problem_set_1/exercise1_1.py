"""Exercise 1.1: the log-likelihood of a diagonal Gaussian.

A Gaussian policy for continuous actions needs log pi(a|s), and with a diagonal
covariance that is a sum over action dimensions of one-dimensional terms. Fill in
``gaussian_likelihood`` below so that, given sampled points ``x``, means ``mu`` and log
standard deviations ``log_std`` (all PyTorch tensors), it returns one log-likelihood per
row of ``x``. Build it from tensor operations yourself: ``torch.distributions`` is what
the checker compares your answer with, so using it would teach you nothing.

Check your answer with::

    python -m spinup.exercises.problem_set_1.exercise1_1
"""
import argparse

import numpy as np
import torch

EPS = 1e-8


def gaussian_likelihood(x, mu, log_std):
    """
    Args:
        x: Tensor with shape [batch, dim]
        mu: Tensor with shape [batch, dim]
        log_std: Tensor with shape [batch, dim] or [dim]

    Returns:
        Tensor with shape [batch]: the log-likelihood of each row of ``x`` under the
        diagonal Gaussian with mean ``mu`` and standard deviation ``exp(log_std)``.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    return None


def main(argv=None):
    """Check ``gaussian_likelihood`` (or, with ``--use_soln``, the solution's) and exit
    with 0 when it is right, 1 when it is not."""
    from spinup.exercises.checks import check_exercise1_1
    from spinup.exercises.common import finish
    cli = argparse.ArgumentParser(description="Exercise 1.1: check gaussian_likelihood")
    cli.add_argument("--use_soln", action="store_true",
                     help="check the reference solution instead of your code")
    chosen = gaussian_likelihood
    if cli.parse_args(argv).use_soln:
        from spinup.exercises.problem_set_1_solutions import exercise1_1_soln
        chosen = exercise1_1_soln.gaussian_likelihood
    correct, _ = check_exercise1_1(chosen)  # prints what failed
    finish(correct)


if __name__ == '__main__':
    main()
