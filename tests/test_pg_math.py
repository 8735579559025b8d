"""The policy-gradient examples of docs/intro/policy_optimization.rst and the two facts
that page proves about them, checked numerically.

- ``1_simple_pg.py`` and ``2_rtg_pg.py`` train (a few short epochs), from Python and
  from the command line, with and without ``progress.txt``; bad input is refused with
  one line and leaves an earlier run alone.
- The expected grad-log-prob lemma, E_{a~p_theta}[grad log p_theta(a)] = 0, by Monte
  Carlo with the project's categorical and diagonal Gaussian actors (vpg/core.py),
  within a tolerance taken from the samples' own standard error.
- Reward-to-go: on a small problem whose trajectories can all be listed, both weightings
  have the exact policy gradient as their mean, and reward-to-go has the smaller
  variance, computed exactly and checked again by sampling with the scripts' weights.
"""
import importlib
import itertools
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from torch.func import functional_call, grad, vmap

from spinup.algos.vpg.core import MLPCategoricalActor, MLPGaussianActor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
simple_pg = importlib.import_module("spinup.examples.pg_math.1_simple_pg")
rtg_pg = importlib.import_module("spinup.examples.pg_math.2_rtg_pg")
SCRIPTS = {"1_simple_pg": simple_pg, "2_rtg_pg": rtg_pg}


def run_script(name, *args):
    """``python -m spinup.examples.pg_math.<name> *args`` in a subprocess."""
    return subprocess.run([sys.executable, "-m", f"spinup.examples.pg_math.{name}",
                           *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


# ---- The weights of each script, against a brute-force sum ----

def test_weights_brute_force():
    rews = [1.0, -2.0, 0.5, 3.0]
    assert simple_pg.episode_return_weights(rews) == [2.5] * 4
    expected = [sum(rews[t:]) for t in range(len(rews))]
    np.testing.assert_allclose(rtg_pg.reward_to_go(rews), expected)


# ---- The scripts run ----

@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_train_short_python(name, tmp_path):
    kwargs = dict(env_name="CartPole-v1", epochs=2, batch_size=300, seed=3)
    history = SCRIPTS[name].train(**kwargs)
    assert len(history) == 2 and all(np.isfinite(history))
    # The logger changes nothing in the run and writes one row per epoch.
    out = tmp_path / "run"
    again = SCRIPTS[name].train(**kwargs, logger_kwargs=dict(output_dir=str(out),
                                                             exp_name="pg"))
    assert again == history
    table = pd.read_table(out / "progress.txt")
    assert list(table.columns) == ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet",
                                   "MinEpRet", "EpLen", "LossPi", "TotalEnvInteracts",
                                   "Time"]
    np.testing.assert_allclose(table["AverageEpRet"], history)
    assert list(table["Epoch"]) == [0, 1]
    assert table["TotalEnvInteracts"].iloc[0] > 300  # whole episodes past batch_size
    assert (out / "config.json").exists()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_cli_writes_table_and_refuses_bad_input(name, tmp_path):
    proc = run_script(name, "--epochs", 1, "--batch_size", 200, "--seed", 1,
                      "--exp_name", "pg", "--data_dir", tmp_path)
    assert proc.returncode == 0, proc.stderr
    table_path = tmp_path / "pg" / "pg_s1" / "progress.txt"
    written = table_path.read_text()
    assert len(pd.read_table(table_path)) == 1

    # The same command again: refused in one line, the finished run untouched.
    proc = run_script(name, "--epochs", 1, "--batch_size", 200, "--seed", 1,
                      "--exp_name", "pg", "--data_dir", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "already holds a run" in proc.stderr
    assert table_path.read_text() == written

    # Continuous actions: one line naming the script and what it needs, nothing written.
    proc = run_script(name, "--env", "Pendulum-v1", "--exp_name", "pend", "--data_dir",
                      tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert f"{name}: Pendulum-v1 needs a Box observation space and a Discrete" in proc.stderr
    assert not (tmp_path / "pend").exists()


# ---- The expected grad-log-prob lemma, by Monte Carlo ----

def per_sample_score(actor, obs, acts):
    """grad_theta log pi_theta(a_i | obs) for every sampled a_i, flattened: (N, n_params)."""
    params = {k: v.detach() for k, v in actor.named_parameters()}

    def logp(p, act):
        return functional_call(actor, p, (obs[None], act[None]))[1].sum()

    grads = vmap(grad(logp), in_dims=(None, 0))(params, acts)
    return torch.cat([g.reshape(len(acts), -1) for g in grads.values()], dim=1)


def assert_mean_zero(scores, n_se=5.0):
    """Every column's sample mean within ``n_se`` standard errors of 0."""
    mean = scores.mean(dim=0)
    se = scores.std(dim=0) / len(scores) ** 0.5
    assert (se > 0).any()
    assert torch.all(mean.abs() <= n_se * se + 1e-6), (mean, se)


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_expected_grad_log_prob_is_zero(kind):
    torch.manual_seed(0)
    obs_dim, n = 3, 20000
    if kind == "categorical":
        actor = MLPCategoricalActor(obs_dim, 4, (8,), torch.nn.Tanh)
    else:
        actor = MLPGaussianActor(obs_dim, 2, (8,), torch.nn.Tanh)
    obs = torch.randn(obs_dim)
    with torch.no_grad():
        acts = actor.distribution(obs[None]).sample((n,))[:, 0]
    scores = per_sample_score(actor, obs, acts)
    assert_mean_zero(scores)

    # The same machinery does detect a non-zero mean: weighting every score by an
    # action-dependent f(a) estimates grad E[f(a)], which must match the exact value.
    if kind == "categorical":
        f = torch.tensor([0.0, 1.0, 4.0, -2.0])
        weights = f[acts]
        exact_obj = lambda: (actor.distribution(obs[None]).probs[0] * f).sum()
    else:
        weights = acts[:, 0]  # E[a_0] = mu_0(obs): its gradient is that of the mean
        exact_obj = lambda: actor.mu_net(obs)[0]
    actor.zero_grad()
    exact_obj().backward()
    exact = torch.cat([p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel())
                       for p in actor.parameters()])
    weighted = scores * weights[:, None]
    se = weighted.std(dim=0) / n ** 0.5
    assert torch.all((weighted.mean(dim=0) - exact).abs() <= 5 * se + 1e-6)
    assert exact.abs().max() > 10 * se.max()  # the check above was not vacuous


# ---- Reward-to-go against the full return, exactly and by sampling ----

# A three-step problem: at step t the policy picks one of two actions with its own
# logits theta[t] (the "state" is the step number) and gets reward COSTS[t][a].
COSTS = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 3.0]])
T = len(COSTS)


def score_and_rewards(theta, acts):
    """Per-step grad log pi(a_t) (T, T*2 flattened) and rewards (T,) of one trajectory."""
    scores = []
    for t, a in enumerate(acts):
        th = theta.detach().clone().requires_grad_(True)
        torch.log_softmax(th[t], dim=0)[a].backward()
        scores.append(th.grad.reshape(-1))
    return torch.stack(scores), COSTS[torch.arange(T), torch.as_tensor(acts)]


def estimators(theta, acts):
    """The one-trajectory gradient estimates with full-return and reward-to-go weights,
    using the scripts' own weight functions."""
    scores, rews = score_and_rewards(theta, acts)
    full = torch.tensor(simple_pg.episode_return_weights(rews.tolist()), dtype=torch.float32)
    rtg = torch.tensor(rtg_pg.reward_to_go(rews.tolist()).copy(), dtype=torch.float32)
    return (scores * full[:, None]).sum(0), (scores * rtg[:, None]).sum(0)


def test_reward_to_go_same_mean_lower_variance():
    theta = torch.tensor([[0.3, -0.2], [0.0, 0.5], [-0.4, 0.1]])
    probs = torch.softmax(theta, dim=1)

    # Exact gradient of J(theta) = sum over the 8 trajectories of p(tau) R(tau).
    th = theta.clone().requires_grad_(True)
    p_t = torch.softmax(th, dim=1)
    J = sum(torch.prod(p_t[torch.arange(T), list(acts)]) * COSTS[torch.arange(T), list(acts)].sum()
            for acts in itertools.product(range(2), repeat=T))
    J.backward()
    exact_grad = th.grad.reshape(-1)

    # Exact mean and total variance (trace of the covariance) of both estimators.
    moments = {"full": [0, 0], "rtg": [0, 0]}
    for acts in itertools.product(range(2), repeat=T):
        p_tau = float(torch.prod(probs[torch.arange(T), list(acts)]))
        for key, g in zip(("full", "rtg"), estimators(theta, acts)):
            moments[key][0] = moments[key][0] + p_tau * g
            moments[key][1] = moments[key][1] + p_tau * (g ** 2).sum()
    variance = {}
    for key, (m1, m2) in moments.items():
        torch.testing.assert_close(m1, exact_grad, atol=1e-5, rtol=1e-5)
        variance[key] = float(m2 - (m1 ** 2).sum())
    assert variance["rtg"] < 0.8 * variance["full"], variance

    # Sampling agrees: 4000 trajectories, sample means near the exact gradient and the
    # sample variances in the same order.
    gen = torch.Generator().manual_seed(0)
    acts = torch.multinomial(probs, 4000, replacement=True, generator=gen).T  # (N, T)
    samples = {"full": [], "rtg": []}
    for row in acts.tolist():
        g_full, g_rtg = estimators(theta, row)
        samples["full"].append(g_full)
        samples["rtg"].append(g_rtg)
    sample_var = {}
    for key, rows in samples.items():
        rows = torch.stack(rows)
        se = rows.std(dim=0) / len(rows) ** 0.5
        assert torch.all((rows.mean(0) - exact_grad).abs() <= 5 * se + 1e-6), key
        sample_var[key] = float(rows.var(dim=0).sum())
    assert sample_var["rtg"] < sample_var["full"]
    np.testing.assert_allclose(sample_var["full"], variance["full"], rtol=0.15)
    np.testing.assert_allclose(sample_var["rtg"], variance["rtg"], rtol=0.15)
