"""Resuming on the classic-control and Box2D environments the docs name (issue 19).

Each configuration runs twice: straight through, and stopped after epoch 2 then
resumed; ``progress.txt`` must be the same but for ``Time``. Classic-control envs are
restored from their attributes. A Box2D world cannot be written to a checkpoint: its
episode is rebuilt by replaying the recorded actions. An env that does not replay to
the saved observation falls back to a new episode, and says so.
"""
import os
import random

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

from spinup import dqn, ppo, sac, td3
from spinup.machinery import checkpoint as ckpt
from spinup.machinery.checkpoint import load_checkpoint

PPO_KW = dict(steps_per_epoch=300, seed=0, ac_kwargs=dict(hidden_sizes=(16,)),
              train_pi_iters=3, train_v_iters=3)
DQN_KW = dict(steps_per_epoch=150, seed=0, ac_kwargs=dict(hidden_sizes=(16,)), start_steps=100,
              update_after=100, batch_size=16, num_test_episodes=1, max_ep_len=100, n_step=3,
              anneal_lr=False)  # the lr schedule spans the epochs asked for: keep it flat
OFF_KW = dict(steps_per_epoch=150, seed=0, ac_kwargs=dict(hidden_sizes=(16,)), start_steps=100,
              update_after=100, batch_size=16, num_test_episodes=1, max_ep_len=100)


# One torch thread in every test of this file (the fixture is in conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


def maker(env_id):
    return lambda: gym.make(env_id)


def table(run_dir):
    return pd.read_table(os.path.join(run_dir, "progress.txt")).drop(columns="Time")


def first_episode(run_dir):
    """The checkpoint's episode in progress: PPO keeps a list, one per env (num_envs)."""
    saved = load_checkpoint(run_dir)["episode"]
    return saved[0] if isinstance(saved, list) else saved


def run_interrupted(algo, env_id, kw, tmp_path):
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    algo(maker(env_id), epochs=4, logger_kwargs=dict(output_dir=full), **kw)
    algo(maker(env_id), epochs=2, logger_kwargs=dict(output_dir=cut), **kw)
    algo(maker(env_id), epochs=4, logger_kwargs=dict(output_dir=cut, resume=True), **kw)
    return full, cut


@pytest.mark.parametrize("algo, env_id, kw", [
    (ppo, "MountainCar-v0", PPO_KW), (ppo, "Acrobot-v1", PPO_KW),
    (ppo, "MountainCarContinuous-v0", PPO_KW),
    (dqn, "MountainCar-v0", DQN_KW), (dqn, "Acrobot-v1", DQN_KW),
    (sac, "MountainCarContinuous-v0", OFF_KW)])
def test_classic_control_resume_is_exact(algo, env_id, kw, tmp_path):
    full, cut = run_interrupted(algo, env_id, kw, tmp_path)
    assert len(table(cut)) == 4
    pd.testing.assert_frame_equal(table(full), table(cut), check_exact=True)


@pytest.mark.parametrize("algo, env_id, kw", [
    (ppo, "LunarLander-v3", PPO_KW), (dqn, "LunarLander-v3", DQN_KW),
    (ppo, "LunarLanderContinuous-v3", PPO_KW), (td3, "LunarLanderContinuous-v3", OFF_KW)])
def test_box2d_resume_is_exact_by_replay(algo, env_id, kw, tmp_path, capsys, monkeypatch):
    """A Box2D world cannot be saved, but its episode is rebuilt by replaying the
    recorded actions: the resumed run's progress.txt equals the uninterrupted one."""
    pytest.importorskip("Box2D")
    monkeypatch.setattr(ckpt, "_warned_inexact", False)
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    algo(maker(env_id), epochs=3, logger_kwargs=dict(output_dir=full), **kw)
    algo(maker(env_id), epochs=2, logger_kwargs=dict(output_dir=cut), **kw)
    saved = first_episode(cut)
    assert saved["env"]["exact"] is False  # the world itself is not in the file...
    assert saved["env"]["replay"]["actions"] is not None  # ...its episode's actions are
    assert len(saved["env"]["replay"]["actions"]) > 0
    capsys.readouterr()
    algo(maker(env_id), epochs=3, logger_kwargs=dict(output_dir=cut, resume=True), **kw)
    assert "cannot restore" not in capsys.readouterr().out
    assert len(table(cut)) == 3
    pd.testing.assert_frame_equal(table(full), table(cut), check_exact=True)


def test_box2d_with_normalized_observations_resumes_exactly(tmp_path, capsys, monkeypatch):
    """The replay starts from the running statistics the episode's reset saw, so the
    normalized observations it gives back match too."""
    pytest.importorskip("Box2D")
    monkeypatch.setattr(ckpt, "_warned_inexact", False)
    make = lambda: gym.wrappers.NormalizeObservation(gym.make("LunarLander-v3"))  # noqa: E731
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    ppo(make, epochs=3, logger_kwargs=dict(output_dir=full), **PPO_KW)
    ppo(make, epochs=2, logger_kwargs=dict(output_dir=cut), **PPO_KW)
    assert first_episode(cut)["env"]["replay"]["stats"]
    capsys.readouterr()
    ppo(make, epochs=3, logger_kwargs=dict(output_dir=cut, resume=True), **PPO_KW)
    assert "cannot restore" not in capsys.readouterr().out
    pd.testing.assert_frame_equal(table(full), table(cut), check_exact=True)


class CoinFlipEnv(gym.Env):
    """A toy env whose state cannot be saved (an object) and whose steps draw from the
    global ``random`` module, which the checkpoint restores only after the replay: a
    replay does not give back the saved observation."""
    observation_space = gym.spaces.Box(-1e6, 1e6, (1,), dtype=np.float64)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.world = object()  # not plain: the attributes alone are not enough
        self.pos = 0.0
        return np.array([self.pos]), {}

    def step(self, action):
        self.pos += random.random() + int(action)
        return np.array([self.pos]), 1.0, False, self.pos > 40, {}


def test_replay_falls_back_to_a_new_episode_for_a_nondeterministic_env(tmp_path, capsys,
                                                                        monkeypatch):
    monkeypatch.setattr(ckpt, "_warned_inexact", False)
    cut = str(tmp_path / "cut")
    kw = dict(PPO_KW, steps_per_epoch=50, max_ep_len=1000)
    ppo(CoinFlipEnv, epochs=1, logger_kwargs=dict(output_dir=cut), **kw)
    assert len(first_episode(cut)["env"]["replay"]["actions"]) > 0
    random.seed(12345)  # a different stream from the one the saved episode saw
    capsys.readouterr()
    ppo(CoinFlipEnv, epochs=2, logger_kwargs=dict(output_dir=cut, resume=True), **kw)
    out = capsys.readouterr().out
    assert "CoinFlipEnv.world" in out and "did not give back the saved observation" in out
    assert "starts a new episode" in out
    assert len(table(cut)) == 2


def test_recorder_changes_nothing_the_agent_sees():
    """The wrapper keeps spec, unwrapped, observations and rewards as they are."""
    plain, wrapped = gym.make("CartPole-v1"), ckpt.recorded(gym.make("CartPole-v1"))
    assert wrapped.spec == plain.spec and wrapped.unwrapped.__class__ is plain.unwrapped.__class__
    assert np.array_equal(plain.reset(seed=3)[0], wrapped.reset(seed=3)[0])
    for a in [0, 1, 1, 0, 1]:
        assert [np.asarray(x).tolist() for x in plain.step(a)[:4]] == \
               [np.asarray(x).tolist() for x in wrapped.step(a)[:4]]
    assert ckpt.recorded(None) is None  # not an env: left for check_spaces to refuse


def test_episode_too_long_to_record_is_not_replayed(monkeypatch):
    monkeypatch.setattr(ckpt, "MAX_REPLAY_STEPS", 3)
    env = ckpt.recorded(gym.make("CartPole-v1"))
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    rec = env.replay_state()
    assert rec["actions"] is None and "longer than 3 steps" in rec["why_not"]
