"""Solution to Exercise 3.3: Double-DQN targets with n-step returns.

``spinup/algos/dqn/dqn.py`` computes the same targets (``ReplayBuffer.get`` for the
n-step sums, ``q_target`` for the Double-DQN bootstrap).
"""
import torch


def double_dqn_next_values(q_online_next, q_targ_next):
    # The online net selects, the target net evaluates: this decoupling removes most
    # of the overestimation of max_a Q_targ(s', a).
    a2 = q_online_next.argmax(dim=1, keepdim=True)
    return q_targ_next.gather(1, a2).squeeze(1)


def n_step_targets(rews, terminated, ends, next_vals, gamma, n):
    T = len(rews)
    y = torch.zeros(T, dtype=next_vals.dtype)
    for t in range(T):
        ret, disc, j = 0.0, 1.0, t
        for k in range(n):
            j = t + k
            ret = ret + disc * rews[j]
            disc = disc * gamma
            if ends[j] or j == T - 1:   # the sum stops at the episode's (or data's) end
                break
        # disc = gamma^m; bootstrap from s'_j unless it is a terminal state
        y[t] = ret + disc * (1 - terminated[j]) * next_vals[j]
    return y
