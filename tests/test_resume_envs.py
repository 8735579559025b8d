"""Resuming on the classic-control and Box2D environments the docs name (issue 19).

Each configuration runs twice: straight through, and stopped after epoch 2 then
resumed. Classic-control envs are restored exactly, so ``progress.txt`` must be the
same but for ``Time``. A Box2D world cannot be written to a checkpoint: the resumed
run starts a new episode (and says so), its checkpoints still load, and it is
reproducible (two resumes from one checkpoint agree).
"""
import os
import shutil

import gymnasium as gym
import pandas as pd
import pytest
import torch

from spinup import dqn, ppo, sac, td3
from spinup.utils import checkpoint as ckpt
from spinup.utils.checkpoint import load_checkpoint

PPO_KW = dict(steps_per_epoch=300, seed=0, ac_kwargs=dict(hidden_sizes=(16,)),
              train_pi_iters=3, train_v_iters=3)
DQN_KW = dict(steps_per_epoch=150, seed=0, ac_kwargs=dict(hidden_sizes=(16,)), start_steps=100,
              update_after=100, batch_size=16, num_test_episodes=1, max_ep_len=100, n_step=3,
              anneal_lr=False)  # the lr schedule spans the epochs asked for: keep it flat
OFF_KW = dict(steps_per_epoch=150, seed=0, ac_kwargs=dict(hidden_sizes=(16,)), start_steps=100,
              update_after=100, batch_size=16, num_test_episodes=1, max_ep_len=100)


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def maker(env_id):
    return lambda: gym.make(env_id)


def table(run_dir):
    return pd.read_table(os.path.join(run_dir, "progress.txt")).drop(columns="Time")


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
def test_box2d_resume_continues_and_is_reproducible(algo, env_id, kw, tmp_path, capsys,
                                                    monkeypatch):
    pytest.importorskip("Box2D")
    monkeypatch.setattr(ckpt, "_warned_inexact", False)
    cut, again = str(tmp_path / "cut"), str(tmp_path / "again")
    algo(maker(env_id), epochs=2, logger_kwargs=dict(output_dir=cut), **kw)
    assert load_checkpoint(cut)["episode"]["env"]["exact"] is False
    shutil.copytree(cut, again)
    capsys.readouterr()
    for run_dir in (cut, again):
        algo(maker(env_id), epochs=3, logger_kwargs=dict(output_dir=run_dir, resume=True), **kw)
        monkeypatch.setattr(ckpt, "_warned_inexact", False)
    out = capsys.readouterr().out
    assert "LunarLander.world" in out and "starts a new episode" in out
    assert len(table(cut)) == 3 and load_checkpoint(cut)["epoch"] == 3
    pd.testing.assert_frame_equal(table(cut), table(again), check_exact=True)
