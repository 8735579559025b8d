"""SAC: smoke runs (library, CLI), automatic temperature, saved-policy round trip
with and without the deterministic (mean) action, a short learning test."""
import os

import gymnasium as gym
import numpy as np
import pytest
import torch

from conftest import read_progress, run_cli
from spinup import sac
from spinup.utils.test_policy import load_policy_and_env

SAC_COLUMNS = ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet", "AverageTestEpRet",
               "StdTestEpRet", "MaxTestEpRet", "MinTestEpRet", "EpLen", "TestEpLen",
               "TotalEnvInteracts", "AverageQ1Vals", "StdQ1Vals", "MaxQ1Vals", "MinQ1Vals",
               "AverageQ2Vals", "StdQ2Vals", "MaxQ2Vals", "MinQ2Vals", "AverageLogPi",
               "StdLogPi", "MaxLogPi", "MinLogPi", "LossPi", "LossQ", "Alpha", "Time"]
TINY = dict(steps_per_epoch=200, start_steps=100, update_after=100, update_every=50,
            batch_size=32, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(16, 16)))


def test_sac_library_smoke_and_columns(tmp_path):
    ac = sac(lambda: gym.make("Pendulum-v1"), epochs=2, logger_kwargs=dict(output_dir=str(tmp_path)),
             **TINY)
    df = read_progress(tmp_path)
    assert list(df.columns) == SAC_COLUMNS
    assert df["TotalEnvInteracts"].tolist() == [200, 400]      # not off by one
    assert (df["Alpha"] == 0.2).all()
    assert np.isfinite(df[["LossPi", "LossQ", "AverageLogPi", "AverageTestEpRet"]].values).all()
    a = ac.act(torch.zeros(3))
    assert a.shape == (1,) and -2 <= a[0] <= 2
    assert torch.get_num_threads() >= 1


def test_sac_auto_alpha_moves_the_temperature(tmp_path):
    sac(lambda: gym.make("Pendulum-v1"), epochs=1, alpha="auto",
        logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    alpha = read_progress(tmp_path)["Alpha"].iloc[-1]
    assert 0 < alpha < 1.0          # starts at 1; 100 steps of lr 1e-3 on log(alpha)
    assert alpha == pytest.approx(np.exp(-100 * 1e-3), rel=0.05)   # Adam: ~lr per step


def test_sac_bad_alpha_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="sac: alpha must be a number or 'auto'"):
        sac(lambda: gym.make("Pendulum-v1"), alpha="fast", logger_kwargs=dict(output_dir=str(tmp_path)),
            **TINY)


def test_sac_cli_smoke_and_test_policy_deterministic(tmp_path):
    run_cli("sac", "--env", "Pendulum-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--start_steps", 100, "--update_after", 100, "--num_test_episodes", 1,
            "--hid", "[16,16]", "--alpha", "auto", "--exp_name", "sacsmoke",
            "--data_dir", tmp_path, timeout=300)
    run_dir = os.path.join(tmp_path, "sacsmoke", "sacsmoke_s0")
    assert read_progress(run_dir)["Alpha"].iloc[-1] < 1
    obs = np.array([0.3, -0.2, 0.5], np.float32)
    _, det = load_policy_and_env(run_dir, deterministic=True)
    _, stoch = load_policy_and_env(run_dir, deterministic=False)
    det_actions = {float(det(obs)[0]) for _ in range(5)}
    stoch_actions = {float(stoch(obs)[0]) for _ in range(5)}
    assert len(det_actions) == 1 and len(stoch_actions) == 5   # -d really is the mean action
    ac = det.ac
    with torch.no_grad():
        mean, _ = ac.pi(torch.as_tensor(obs), deterministic=True, with_logprob=False)
    assert det_actions.pop() == pytest.approx(2 * mean.item(), rel=1e-6)   # Pendulum: [-2, 2]
    proc = run_cli("test_policy", run_dir, "-d", "-n", 1, "-nr", timeout=120)
    assert "EpRet" in proc.stdout


def test_sac_cli_rejects_mpi():
    proc = run_cli("sac", "--env", "Pendulum-v1", "--cpu", 2, check=False, timeout=120)
    assert proc.returncode != 0 and "cannot use MPI" in proc.stdout + proc.stderr


def test_sac_learns_pendulum(tmp_path):
    """Fixed seed, 7k steps, one torch thread: deterministic on a given machine."""
    sac(lambda: gym.make("Pendulum-v1"), ac_kwargs=dict(hidden_sizes=(64, 64)), seed=0,
        steps_per_epoch=1000, epochs=7, start_steps=1000, update_after=1000,
        num_test_episodes=5, logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    assert df["AverageTestEpRet"].iloc[-1] > -400     # random policy: about -1200
