"""DQN math against brute force: sum-tree, IS weights, n-step returns, targets,
dueling aggregation, epsilon schedule."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from spinup.algos.dqn.core import MLPQFunction, SumTree
from spinup.algos.dqn.dqn import (PrioritizedReplayBuffer, ReplayBuffer,
                                  linear_epsilon, q_target)


def test_sumtree_totals_and_updates():
    rng = np.random.default_rng(0)
    tree = SumTree(100)  # capacity rounds up to 128
    p = rng.random(100)
    tree.update(np.arange(100), p)
    assert tree.total() == pytest.approx(p.sum())
    for i in rng.integers(0, 100, 50):  # scalar updates
        p[i] = rng.random()
        tree.update(i, p[i])
    idx = rng.choice(100, 20, replace=False)  # vectorised update
    p[idx] = rng.random(20)
    tree.update(idx, p[idx])
    assert tree.total() == pytest.approx(p.sum())
    np.testing.assert_allclose(tree.get(np.arange(100)), p)
    # every inner node is the sum of its children
    t, c = tree.tree, tree.capacity
    np.testing.assert_allclose(t[1:c], t[2:2 * c:2] + t[3:2 * c:2])


def test_sumtree_find_is_prefix_sum_search():
    rng = np.random.default_rng(1)
    p = rng.random(37)
    tree = SumTree(37)
    tree.update(np.arange(37), p)
    u = rng.random(1000) * p.sum()
    expected = np.searchsorted(np.cumsum(p), u, side="right")
    np.testing.assert_array_equal(tree.find(u), expected)


def test_per_sampling_frequency_matches_priorities():
    np.random.seed(0)
    n, alpha = 8, 0.6
    buf = PrioritizedReplayBuffer(1, n, alpha=alpha, eps=0.0)
    for i in range(n):
        buf.store([i], 0, 0.0, [i], False, False)
    td = np.arange(1, n + 1, dtype=np.float64)
    buf.update_priorities(np.arange(n), td)
    probs = td ** alpha / (td ** alpha).sum()
    counts = np.zeros(n)
    draws = 0
    for _ in range(400):
        counts += np.bincount(buf.sample_batch(64)["idxs"], minlength=n)
        draws += 64
    # chi-square statistic, 7 dof: P(chi2 > 24.3) = 0.001
    chi2 = ((counts - draws * probs) ** 2 / (draws * probs)).sum()
    assert chi2 < 24.3


def test_per_importance_weights():
    np.random.seed(0)
    buf = PrioritizedReplayBuffer(1, 16, alpha=0.5, eps=1e-6)
    for i in range(10):  # partly filled: N = 10
        buf.store([i], 0, 0.0, [i], False, False)
    buf.update_priorities(np.arange(10), np.linspace(0.1, 3.0, 10))
    data = buf.sample_batch(32, beta=0.7)
    p = (np.abs(np.linspace(0.1, 3.0, 10)) + 1e-6) ** 0.5
    P = p / p.sum()
    w = (10 * P[data["idxs"]]) ** -0.7
    np.testing.assert_allclose(data["weights"].numpy(), w / w.max(), rtol=1e-5)
    assert buf.max_priority == pytest.approx(p.max())


def _fill(buf, rewards, dones, ends):
    for i, (r, d, e) in enumerate(zip(rewards, dones, ends)):
        buf.store([float(i)], 0, r, [i + 0.5], d, e)


def test_nstep_stops_at_termination_and_cuts_at_truncation():
    g = 0.9
    buf = ReplayBuffer(1, 10, gamma=g, n_step=3)
    # episode A: 0,1,2 (2 terminated); episode B: 3,4 (4 truncated); episode C: 5,6,7
    _fill(buf, [1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 1, 0, 0, 0, 0, 0],
          [0, 0, 1, 0, 1, 0, 0, 0])
    d = buf.get(np.arange(8))
    exp_ret = [1 + g * 2 + g * g * 3, 2 + g * 3, 3, 4 + g * 5, 5,
               6 + g * 7 + g * g * 8, 7 + g * 8, 8]
    np.testing.assert_allclose(d["ret"].numpy(), exp_ret, rtol=1e-6)
    np.testing.assert_allclose(d["disc"].numpy(), [g**3, g**2, g, g**2, g, g**3, g**2, g],
                               rtol=1e-6)
    # bootstrap state is s' of the last transition used; done only from termination
    np.testing.assert_allclose(d["obs2"].numpy()[:, 0], [2.5, 2.5, 2.5, 4.5, 4.5, 7.5, 7.5, 7.5])
    np.testing.assert_array_equal(d["done"].numpy(), [1, 1, 1, 0, 0, 0, 0, 0])


def test_nstep_across_buffer_wrap():
    g = 0.5
    buf = ReplayBuffer(1, 5, gamma=g, n_step=3)
    _fill(buf, np.arange(1, 8), np.zeros(7), np.zeros(7))  # rewards 1..7, slots: [6,7,3,4,5]
    assert buf.ptr == 2
    d = buf.get(np.array([3, 4, 0, 1]))  # rewards 4, 5, 6, 7 (oldest is slot 2)
    np.testing.assert_allclose(d["ret"].numpy(),
                               [4 + g * 5 + g * g * 6, 5 + g * 6 + g * g * 7, 6 + g * 7, 7])
    np.testing.assert_allclose(d["obs2"].numpy()[:, 0], [5.5, 6.5, 6.5, 6.5])
    # a return never runs past the newest transition into the oldest (slot 2)
    np.testing.assert_allclose(d["disc"].numpy(), [g**3, g**3, g**2, g])


def test_double_dqn_target_by_hand():
    obs_space = gym.spaces.Box(-1, 1, (2,))
    act_space = gym.spaces.Discrete(3)
    torch.manual_seed(0)
    q, qt = MLPQFunction(obs_space, act_space, (8,)), MLPQFunction(obs_space, act_space, (8,))
    data = dict(obs2=torch.randn(5, 2), ret=torch.randn(5), disc=torch.full((5,), 0.81),
                done=torch.tensor([0., 1., 0., 0., 1.]))
    with torch.no_grad():
        q_on, q_tg = q(data["obs2"]).numpy(), qt(data["obs2"]).numpy()
    for double in (False, True):
        y = q_target(q, qt, data, double=double).numpy()
        for i in range(5):
            a_star = np.argmax(q_on[i] if double else q_tg[i])
            exp = data["ret"][i].item() + 0.81 * (1 - data["done"][i].item()) * q_tg[i, a_star]
            assert y[i] == pytest.approx(exp, rel=1e-5)


def test_dueling_aggregation_and_act():
    obs_space, act_space = gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(4)
    torch.manual_seed(0)
    net = MLPQFunction(obs_space, act_space, (16, 16), dueling=True)
    obs = torch.randn(6, 3)
    with torch.no_grad():
        h = net.trunk(obs)
        v, adv = net.v_head(h), net.a_head(h)
        q = net(obs)
    np.testing.assert_allclose(q.numpy(), (v + adv - adv.mean(1, keepdim=True)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(q.mean(1).numpy(), v.squeeze(1).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(net.act(obs), q.argmax(1).numpy())
    assert net.act(obs[0], deterministic=True).shape == ()


def test_epsilon_schedule():
    assert linear_epsilon(0, 1.0, 0.05, 1000) == 1.0
    assert linear_epsilon(500, 1.0, 0.05, 1000) == pytest.approx(0.525)
    assert linear_epsilon(1000, 1.0, 0.05, 1000) == pytest.approx(0.05)
    assert linear_epsilon(10**6, 1.0, 0.05, 1000) == pytest.approx(0.05)
    assert linear_epsilon(3, 1.0, 0.1, 0) == pytest.approx(0.1)
