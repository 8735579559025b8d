"""PPO with several envs per process (``num_envs``): per-env GAE and bootstrapping,
max_ep_len, reproducibility, resume, argument checks, CLI, learning."""
import collections

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

from conftest import read_progress, run_cli
from spinup import ppo
from spinup.algos.ppo.ppo import PPOBuffer
from test_ppo import brute_force_gae


# One torch thread in every test of this file (the fixture is in conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


def test_buffer_columns_are_separate_trajectories():
    # Two envs: env 0 ends an episode after 2 steps (terminated) and is cut at the
    # epoch's end; env 1 runs one trajectory cut off after 5 steps. Each column's
    # advantages and returns must be those of its own trajectories only.
    rng = np.random.default_rng(1)
    gamma, lam, T = 0.9, 0.8, 5
    rews, vals = rng.normal(size=(T, 2)), rng.normal(size=(T, 2))
    buf = PPOBuffer(obs_dim=(1,), act_dim=(), size=T, gamma=gamma, lam=lam, num_envs=2)
    for t in range(T):
        buf.store(np.zeros((2, 1)), np.zeros(2), rews[t], vals[t], np.zeros(2))
        if t == 1:
            buf.finish_path(0.0, env=0)
    buf.finish_path(1.5, env=0)
    buf.finish_path(-2.0, env=1)
    adv_a, ret_a = brute_force_gae(rews[:2, 0], vals[:2, 0], 0.0, gamma, lam)
    adv_b, ret_b = brute_force_gae(rews[2:, 0], vals[2:, 0], 1.5, gamma, lam)
    adv_c, ret_c = brute_force_gae(rews[:, 1], vals[:, 1], -2.0, gamma, lam)
    np.testing.assert_allclose(buf.ret_buf[:, 0], np.concatenate([ret_a, ret_b]), rtol=1e-5)
    np.testing.assert_allclose(buf.adv_buf[:, 0], np.concatenate([adv_a, adv_b]), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(buf.ret_buf[:, 1], ret_c, rtol=1e-5)
    np.testing.assert_allclose(buf.adv_buf[:, 1], adv_c, rtol=1e-4, atol=1e-5)
    data = buf.get()
    assert data["obs"].shape == (2 * T, 1) and data["adv"].shape == (2 * T,)
    # Flattening keeps each sample's own return next to its own observation.
    np.testing.assert_allclose(data["ret"].numpy(), buf.ret_buf.reshape(-1), rtol=1e-6)


class CountingEnv(gym.Env):
    """Observation [t, id]; reward 1; episodes of env ``id`` last ``3 + id`` steps and
    end by truncation (``terminates=False``) or termination."""
    observation_space = gym.spaces.Box(-100, 100, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)
    made = 0

    def __init__(self, terminates=False):
        self.id, self.terminates = CountingEnv.made, terminates
        CountingEnv.made += 1

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, self.id], np.float32), {}

    def step(self, a):
        self.t += 1
        end = self.t >= 3 + self.id
        obs = np.array([self.t, self.id], np.float32)
        return obs, 1.0, end and self.terminates, end and not self.terminates, {}


def spy_on_finish_path(monkeypatch):
    calls = []
    original = PPOBuffer.finish_paths

    def finish_paths(self, copies, last_vals, terminated):
        calls.extend((int(env), float(v)) for env, v in zip(copies, last_vals))
        return original(self, copies, last_vals, terminated)
    monkeypatch.setattr(PPOBuffer, "finish_paths", finish_paths)
    return calls


@pytest.mark.parametrize("terminates", [False, True])
def test_each_env_bootstraps_from_its_own_last_observation(tmp_path, monkeypatch, terminates):
    CountingEnv.made = 0
    calls = spy_on_finish_path(monkeypatch)
    ac = ppo(lambda: CountingEnv(terminates), num_envs=2, steps_per_epoch=24, epochs=1,
             train_pi_iters=1, train_v_iters=1, ac_kwargs=dict(hidden_sizes=[8]),
             logger_kwargs=dict(output_dir=str(tmp_path)))
    # 12 steps per env: env 0 (episodes of 3) ends 4 episodes, the last one exactly at
    # the epoch's end; env 1 (episodes of 4) ends 3 episodes, also at the end.
    assert sorted(env for env, _ in calls) == [0] * 4 + [1] * 3
    df = read_progress(tmp_path)
    assert df["EpLen"].iloc[0] == pytest.approx((4 * 3 + 3 * 4) / 7)
    # A terminated episode closes with V(s_T) = 0, a truncated one with the critic's
    # estimate (which observation it is evaluated on: the next test).
    if terminates:
        assert all(v == 0.0 for _, v in calls)
    else:
        assert all(v != 0.0 for _, v in calls)
    assert isinstance(ac, torch.nn.Module)


def test_truncation_value_is_that_of_the_final_observation(tmp_path, monkeypatch):
    # Record what ac.step is asked to evaluate for bootstrapping: the final obs
    # [3, 0] / [4, 1] of each truncated episode, never a reset obs [0, id].
    CountingEnv.made = 0
    seen = []
    from spinup.algos.ppo import core
    original = core.MLPActorCritic.step

    def step(self, obs):
        seen.extend(tuple(row) for row in obs.tolist())
        return original(self, obs)
    monkeypatch.setattr(core.MLPActorCritic, "step", step)
    ppo(lambda: CountingEnv(False), num_envs=2, steps_per_epoch=24, epochs=1,
        train_pi_iters=1, train_v_iters=1, ac_kwargs=dict(hidden_sizes=[8]),
        logger_kwargs=dict(output_dir=str(tmp_path)))
    # The agent acts on [0..2, 0] and [0..3, 1] (12 steps of 2 envs), never on a final
    # observation; the 7 other rows evaluated are the bootstrap ones: each final obs.
    counts = collections.Counter(seen)
    assert len(seen) == 24 + 7 and counts[(3.0, 0.0)] == 4 and counts[(4.0, 1.0)] == 3


def test_max_ep_len_cuts_every_env(tmp_path):
    ppo(lambda: gym.make("CartPole-v1"), num_envs=3, steps_per_epoch=300, epochs=2,
        max_ep_len=7, train_pi_iters=1, train_v_iters=1, seed=4,
        ac_kwargs=dict(hidden_sizes=[8]), logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    assert (df["EpLen"] <= 7).all() and (df["MaxEpRet"] <= 7).all()
    assert list(df["TotalEnvInteracts"]) == [300, 600]


def test_same_seed_same_progress_and_other_seed_differs(tmp_path):
    for run, seed in (("a", 3), ("b", 3), ("c", 4)):
        ppo(lambda: gym.make("CartPole-v1"), num_envs=3, steps_per_epoch=300, epochs=2,
            seed=seed, train_pi_iters=5, train_v_iters=5, ac_kwargs=dict(hidden_sizes=[16]),
            logger_kwargs=dict(output_dir=str(tmp_path / run)))
    a, b, c = (read_progress(tmp_path / r).drop(columns="Time") for r in "abc")
    assert a.equals(b) and not a.equals(c)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_resume_with_several_envs_is_exact(tmp_path, env_id):
    kw = dict(num_envs=2, steps_per_epoch=400, seed=0, ac_kwargs=dict(hidden_sizes=(16,)),
              train_pi_iters=5, train_v_iters=5)
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    ppo(lambda: gym.make(env_id), epochs=4, logger_kwargs=dict(output_dir=full), **kw)
    ppo(lambda: gym.make(env_id), epochs=2, logger_kwargs=dict(output_dir=cut), **kw)
    ppo(lambda: gym.make(env_id), epochs=4, logger_kwargs=dict(output_dir=cut, resume=True),
        **kw)
    a = pd.read_table(f"{full}/progress.txt").drop(columns="Time")
    b = pd.read_table(f"{cut}/progress.txt").drop(columns="Time")
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_resume_with_another_num_envs_is_refused(tmp_path):
    kw = dict(steps_per_epoch=400, ac_kwargs=dict(hidden_sizes=(8,)), train_pi_iters=1,
              train_v_iters=1)
    out = str(tmp_path / "run")
    ppo(lambda: gym.make("CartPole-v1"), epochs=1, num_envs=2,
        logger_kwargs=dict(output_dir=out), **kw)
    before = open(f"{out}/progress.txt").read()
    with pytest.raises(ValueError, match="num_envs=2"):
        ppo(lambda: gym.make("CartPole-v1"), epochs=2, num_envs=4,
            logger_kwargs=dict(output_dir=out, resume=True), **kw)
    assert open(f"{out}/progress.txt").read() == before


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(num_envs=0), ValueError, "ppo: num_envs=0"),
    (dict(num_envs=2.0), TypeError, "num_envs=2.0"),
    (dict(num_envs=3, steps_per_epoch=4000), ValueError, "multiple of num_envs"),
])
def test_bad_num_envs_fail_before_anything_is_written(tmp_path, kwargs, error, match):
    out = tmp_path / "out"
    with pytest.raises(error, match=match):
        ppo(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)), **kwargs)
    assert not out.exists()


def test_cli_num_envs(tmp_path):
    run_cli("ppo", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--num_envs", 4, "--exp_name", "n", "--data_dir", tmp_path)
    assert read_progress(tmp_path / "n" / "n_s0")["TotalEnvInteracts"].iloc[0] == 200


def test_cli_bad_num_envs_is_one_line(tmp_path):
    done = run_cli("ppo", "--env", "CartPole-v1", "--steps_per_epoch", 1000, "--num_envs", 3,
                   "--exp_name", "n", "--data_dir", tmp_path, check=False)
    assert done.returncode != 0
    assert "num_envs" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "n").exists()


@pytest.mark.slow
def test_ppo_with_eight_envs_learns_cartpole(tmp_path):
    ppo(lambda: gym.make("CartPole-v1"), seed=0, epochs=15, num_envs=8,
        logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    assert df["AverageEpRet"].iloc[-3:].mean() > 150, df["AverageEpRet"].tolist()
