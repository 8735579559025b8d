"""DDPG: smoke runs (library, CLI), saved policy, Q shape (exercise 2.2's bug)."""
import os

import gymnasium as gym
import numpy as np
import torch

import spinup.algos.ddpg.core as core
from conftest import read_progress, run_cli
from spinup import ddpg
from spinup.utils.test_policy import load_policy_and_env

DDPG_COLUMNS = ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet", "AverageTestEpRet",
                "StdTestEpRet", "MaxTestEpRet", "MinTestEpRet", "EpLen", "TestEpLen",
                "TotalEnvInteracts", "AverageQVals", "StdQVals", "MaxQVals", "MinQVals",
                "LossPi", "LossQ", "Time"]
TINY = dict(steps_per_epoch=200, epochs=1, start_steps=100, update_after=100, update_every=50,
            batch_size=32, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(16, 16)))


def test_ddpg_library_smoke_and_columns(tmp_path):
    ddpg(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    df = read_progress(tmp_path)
    assert list(df.columns) == DDPG_COLUMNS
    assert df["TotalEnvInteracts"].tolist() == [200]
    assert np.isfinite(df[["LossPi", "LossQ", "AverageTestEpRet"]].values).all()


def test_ddpg_cli_smoke_and_reload(tmp_path):
    run_cli("ddpg", "--env", "Pendulum-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--start_steps", 100, "--update_after", 100, "--num_test_episodes", 1,
            "--hid", "[16,16]", "--exp_name", "ddpgsmoke", "--data_dir", tmp_path, timeout=300)
    run_dir = os.path.join(tmp_path, "ddpgsmoke", "ddpgsmoke_s0")
    env, get_action = load_policy_and_env(run_dir)
    o, _ = env.reset(seed=0)
    a = get_action(o)
    assert env.action_space.contains(a.astype(np.float32))
    np.testing.assert_array_equal(a, get_action(o))            # deterministic policy


def test_q_function_output_is_flat():
    """Exercise 2.2's silent bug: a (batch, 1) Q against a (batch,) target broadcasts
    to (batch, batch) in the loss. Our Q-function returns (batch,)."""
    q = core.MLPQFunction(3, 1, (8,), torch.nn.ReLU)
    assert q(torch.zeros(7, 3), torch.zeros(7, 1)).shape == (7,)
