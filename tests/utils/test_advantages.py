"""gae_returns (spinup/utils/advantages.py) against a brute-force sum over each piece of
trajectory, for several copies whose pieces end at different steps."""
import numpy as np
import pytest

from spinup.utils.advantages import gae_returns


def brute_force(rew, val, v_end, gamma, lam):
    """GAE and rewards-to-go of one piece: the sums of their definitions, term by term."""
    T = len(rew)
    v = list(val) + [v_end]
    adv = [sum((gamma * lam) ** (l - t) * (rew[l] + gamma * v[l + 1] - v[l])
               for l in range(t, T)) for t in range(T)]
    ret = [sum(gamma ** (l - t) * rew[l] for l in range(t, T)) + gamma ** (T - t) * v_end
           for t in range(T)]
    return np.array(adv), np.array(ret)


@pytest.mark.parametrize("gamma, lam", [(0.99, 0.95), (0.9, 1.0), (1.0, 0.0)])
def test_every_piece_of_every_copy_matches_brute_force(gamma, lam):
    rng = np.random.default_rng(3)
    T, N = 12, 5
    rew = rng.normal(size=(T, N)).astype(np.float32)
    val = rng.normal(size=(T, N)).astype(np.float32)
    piece_end = rng.random((T, N)) < 0.25
    piece_end[-1] = True                       # the epoch's end closes every copy
    end_terminal = piece_end & (rng.random((T, N)) < 0.5)
    end_val = np.where(end_terminal, 0.0, rng.normal(size=(T, N)).astype(np.float32))
    adv, ret = gae_returns(rew, val, piece_end, end_val, end_terminal, gamma, lam)
    assert adv.shape == ret.shape == (T, N) and adv.dtype == np.float64
    for i in range(N):
        start = 0
        for end in np.flatnonzero(piece_end[:, i]):
            rows = slice(start, end + 1)
            want_adv, want_ret = brute_force(rew[rows, i].astype(float), val[rows, i].astype(
                float), float(end_val[end, i]), gamma, lam)
            np.testing.assert_allclose(adv[rows, i], want_adv, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(ret[rows, i], want_ret, rtol=1e-5, atol=1e-5)
            start = end + 1


def test_one_copy_equals_the_per_piece_numpy_computation_bit_for_bit():
    """With one copy the pass gives the numbers of the per-piece code it replaced (float64
    residuals after a terminal state, float32 ones after a float32 bootstrap value)."""
    rng = np.random.default_rng(0)
    gamma, lam = 0.99, 0.97
    rew = rng.normal(size=(9, 1)).astype(np.float32)
    val = rng.normal(size=(9, 1)).astype(np.float32)
    pieces = [(0, 4, 0.0), (4, 9, np.float32(0.7))]     # terminated, then cut short
    piece_end = np.zeros((9, 1), bool)
    end_val, end_terminal = np.zeros((9, 1)), np.zeros((9, 1), bool)
    want_adv, want_ret = np.zeros(9), np.zeros(9)
    for a, b, last in pieces:
        piece_end[b - 1], end_val[b - 1] = True, last
        end_terminal[b - 1] = not isinstance(last, np.float32)
        r, v = rew[a:b, 0], val[a:b, 0]
        rew_tail, v_tail = np.append(r, last), np.append(v, last)
        td = r + gamma * v_tail[1:] - v_tail[:-1]
        for out, x, d in ((want_ret, rew_tail, gamma), (want_adv, td, gamma * lam)):
            running, x = 0.0, np.asarray(x, dtype=np.float64)
            sums = np.empty_like(x)
            for t in range(len(x) - 1, -1, -1):
                running = x[t] + float(d) * running
                sums[t] = running
            out[a:b] = sums[:b - a]
    adv, ret = gae_returns(rew, val, piece_end, end_val, end_terminal, gamma, lam)
    assert np.array_equal(adv[:, 0], want_adv) and np.array_equal(ret[:, 0], want_ret)
