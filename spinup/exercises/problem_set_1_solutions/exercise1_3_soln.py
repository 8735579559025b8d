"""Solution to Exercise 1.3: the TD3 computations.

These five functions fill the holes of ``problem_set_1/exercise1_3.py``; the complete
algorithm is ``spinup/algos/td3/td3.py`` (``compute_loss_q``, ``compute_loss_pi``,
``update``).
"""
import torch


def target_actions(pi_targ, target_noise, noise_clip):
    """Target policy smoothing   [TD3 line 12]:
    ``a'(s') = clip(mu_targ(s') + clip(eps, -c, c), -1, 1)``, ``eps ~ N(0, sigma^2)``,
    fresh noise for every element."""
    noise = (target_noise * torch.randn_like(pi_targ)).clamp(-noise_clip, noise_clip)
    return (pi_targ + noise).clamp(-1.0, 1.0)


def bellman_backup(r, d, q1_pi_targ, q2_pi_targ, gamma):
    """Clipped double-Q target   [TD3 line 13]:
    ``y = r + gamma * (1 - d) * min(Q1_targ(s', a'), Q2_targ(s', a'))``."""
    return r + gamma * (1 - d) * torch.min(q1_pi_targ, q2_pi_targ)


def q_loss(q1, q2, backup):
    """Both Q-functions regress to the same target   [TD3 line 14]: the sum of the
    two mean squared errors."""
    return ((q1 - backup) ** 2).mean() + ((q2 - backup) ** 2).mean()


def pi_loss(q1_pi):
    """Deterministic policy gradient ascent on ``Q1(s, mu(s))``   [TD3 line 16]:
    minimise its negative mean."""
    return -q1_pi.mean()


def policy_update_due(timer, policy_delay):
    """Delayed policy updates   [TD3 line 15]: the policy (and the target networks)
    are updated once for every ``policy_delay`` Q-updates."""
    return timer % policy_delay == 0
