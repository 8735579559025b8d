"""Solution to Exercise 3.1: GAE-lambda advantages and rewards-to-go.

Both are discounted cumulative sums read backwards, which ``scipy.signal.lfilter``
computes in one call (``y[t] = x[t] + discount * y[t+1]``); ``spinup.algos.ppo``'s
``PPOBuffer.finish_path`` does exactly this.
"""
import numpy as np
import scipy.signal


def discount_cumsum(x, discount):
    """``[x0 + d x1 + d^2 x2, x1 + d x2, x2]`` for ``x = [x0, x1, x2]``."""
    return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]


def rewards_to_go(rews, last_val, gamma):
    # Append the bootstrap value as a final "reward", sum, and drop it again.
    return discount_cumsum(np.append(rews, last_val), gamma)[:-1]


def gae_advantages(rews, vals, last_val, gamma, lam):
    vals = np.append(vals, last_val)
    deltas = rews + gamma * vals[1:] - vals[:-1]
    return discount_cumsum(deltas, gamma * lam)
