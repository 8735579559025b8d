"""Solution to Exercise 1.1: Diagonal Gaussian Likelihood.

For a diagonal Gaussian with mean :math:`\\mu` and standard deviation
:math:`\\sigma = e^{\\log\\sigma}` over ``k`` dimensions,

.. math::

    \\log \\pi(x) = -\\frac{1}{2}\\left(\\sum_{i=1}^k \\left(\\frac{(x_i - \\mu_i)^2}
    {\\sigma_i^2} + 2 \\log \\sigma_i\\right) + k \\log 2\\pi \\right).
"""
import numpy as np
import torch

EPS = 1e-8


def gaussian_likelihood(x, mu, log_std):
    """Log-likelihood (shape [batch]) of ``x`` [batch, dim] under N(mu, exp(log_std)^2)
    (``log_std`` [batch, dim] or [dim])."""
    pre_sum = -0.5 * (((x - mu) / (torch.exp(log_std) + EPS)) ** 2 + 2 * log_std
                      + np.log(2 * np.pi))
    return pre_sum.sum(dim=-1)
