"""Rewards-to-go and GAE advantages of a whole epoch, every env copy and trajectory at once.

An on-policy buffer holds an epoch as arrays of shape (T, N): row ``t`` is a time step,
column ``i`` an env copy. Each column is cut into pieces of trajectory (an episode, or the
part of one that fits in the epoch); a piece of rows ``a .. b`` ends with ``v_end``, the
value of the state after row ``b``: 0 after a terminal state, else the critic's
``V(s_T)``. On each piece, going backwards from ``b``:

    R_t = r_t + gamma * R_{t+1},                  R_{b+1} = v_end      (rewards-to-go)
    delta_t = r_t + gamma * V(s_{t+1}) - V(s_t),  V(s_{b+1}) = v_end   (TD residual)
    A_t = delta_t + gamma * lam * A_{t+1},        A_{b+1} = 0          (GAE)

GAE: Schulman, Moritz, Levine, Jordan, Abbeel (2016), "High-dimensional continuous control
using generalized advantage estimation", arXiv:1506.02438, Eq. 16.
"""
import numpy as np


def gae_returns(rew, val, piece_end, end_val, end_terminal, gamma, lam):
    """``(adv, ret)``: GAE advantages and rewards-to-go of every step of an epoch.

    One backward pass over the rows does every column (copy) at once; where a piece of
    trajectory ends the running sums restart from its ``v_end``.

    Args:
        rew (np.ndarray): float32 (T, N), the rewards r_t.
        val (np.ndarray): float32 (T, N), the critic's V(s_t) when acting.
        piece_end (np.ndarray): bool (T, N), True where a piece ends after row t; the
            last row must end every column's piece.
        end_val (np.ndarray): (T, N), ``v_end`` where ``piece_end`` (read nowhere else).
        end_terminal (np.ndarray): bool (T, N), where ``piece_end``: whether the piece
            ended in a terminal state (its ``v_end`` is 0).
        gamma (float): discount factor; lam (float): GAE's lambda.

    Returns:
        tuple of np.ndarray: ``adv`` and ``ret``, float64 (T, N).

    The sums are float64. The TD residuals of a piece that ended in a terminal state are
    float64 too and those of a piece cut short float32 (NumPy's type rules applied to the
    float32 ``V(s_T)`` when one piece is computed at a time, as this project did before;
    kept so that a run with one env reproduces earlier runs bit for bit).
    """
    steps, copies = rew.shape
    adv, ret = np.empty((steps, copies)), np.empty((steps, copies))
    gamma32, gamma_lam = np.float32(gamma), float(gamma * lam)
    run_ret, run_adv = np.zeros(copies), np.zeros(copies)
    terminal = np.zeros(copies, dtype=bool)
    for t in range(steps - 1, -1, -1):
        end = piece_end[t]
        v_next = np.where(end, end_val[t], val[min(t + 1, steps - 1)])   # V(s_{t+1})
        terminal = np.where(end, end_terminal[t], terminal)
        run_ret = np.where(end, end_val[t], run_ret)
        run_adv = np.where(end, 0.0, run_adv)
        r, v = rew[t], val[t]
        td_64 = r.astype(np.float64) + gamma * v_next - v.astype(np.float64)
        td_32 = r + gamma32 * v_next.astype(np.float32) - v
        run_ret = r + gamma * run_ret
        run_adv = np.where(terminal, td_64, td_32) + gamma_lam * run_adv
        ret[t], adv[t] = run_ret, run_adv
    return adv, ret
