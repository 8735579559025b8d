"""Exercise 1.1: Diagonal Gaussian Likelihood.

Write a function that takes in PyTorch Tensors for the means and log stds of a batch
of diagonal Gaussian distributions, along with a PyTorch Tensor for (previously
generated) samples from those distributions, and returns a Tensor containing the log
likelihoods of those samples. This is tensor-based, so don't use
``torch.distributions`` (the checker compares against it).

Run this file to check your work::

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


if __name__ == "__main__":
    from spinup.exercises.checks import check_exercise1_1
    from spinup.exercises.common import finish
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_soln", action="store_true",
                        help="check the reference solution instead of your code")
    args = parser.parse_args()
    if args.use_soln:
        from spinup.exercises.problem_set_1_solutions.exercise1_1_soln import (
            gaussian_likelihood)
    correct, _ = check_exercise1_1(gaussian_likelihood)  # prints what failed
    finish(correct)
