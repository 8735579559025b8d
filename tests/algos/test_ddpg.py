"""DDPG: smoke runs (library, CLI), saved policy, Q shape (exercise 2.2's bug),
actions inside the bounds, argument checks, the plain-Adam fallback, threads."""
import os

import gymnasium as gym
import numpy as np
import pytest
import torch

import spinup.algos.ddpg.core as core
import spinup.utils.torch_tools as torch_tools
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


class StrictBoundsEnv(gym.Env):
    """Refuses any action outside its box. With these bounds the float32 map
    ``act_bias + act_scale * (-1)`` lands just below ``low``."""
    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Box(-1.1, 3.3, (1,), np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        assert self.action_space.contains(np.asarray(action, np.float32)), action
        self.t += 1
        return np.zeros(2, np.float32), 0.0, False, self.t == 20, {}


def test_training_and_test_actions_are_clipped_to_the_box(tmp_path):
    def saturated_low(obs_space, act_space, **kw):
        ac = core.MLPActorCritic(obs_space, act_space, **kw)
        with torch.no_grad():            # mu(s) = tanh(-30) = -1: the lower bound
            ac.pi.pi[-2].weight.zero_()
            ac.pi.pi[-2].bias.fill_(-30.0)
        return ac

    ddpg(StrictBoundsEnv, actor_critic=saturated_low, pi_lr=1e-12, act_noise=0.0,
         logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    assert read_progress(tmp_path)["TestEpLen"].tolist() == [20]


def test_ddpg_plain_adam_fallback(tmp_path, monkeypatch):
    """Where torch has no fused CPU Adam (torch < 2.4), torch_tools.adam builds the
    plain one; DDPG must train with it."""
    monkeypatch.setattr(torch_tools, "FUSED_ADAM_ON_CPU", False)
    built = []

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)
    ddpg(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    assert len(built) == 2
    assert all(not opt.defaults.get("fused") for opt in built)
    assert all(opt.state for opt in built)          # both optimizers took steps
    assert np.isfinite(read_progress(tmp_path)["LossPi"]).all()


def test_ddpg_restores_torch_threads_also_after_an_error(tmp_path):
    class Crash(StrictBoundsEnv):
        def step(self, action):
            raise RuntimeError("env crashed")

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError, match="env crashed"):
            ddpg(Crash, logger_kwargs=dict(output_dir=str(tmp_path / "a")), **TINY)
        assert torch.get_num_threads() == 2
        ddpg(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path / "b")),
             **TINY)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("key, value, error", [
    ("steps_per_epoch", 0, ValueError), ("epochs", 1.5, TypeError), ("seed", -1, ValueError),
    ("replay_size", 0, ValueError), ("batch_size", 0, ValueError), ("gamma", -0.01, ValueError),
    ("gamma", "0.9", TypeError), ("polyak", 1.01, ValueError), ("pi_lr", 0, ValueError),
    ("q_lr", -1e-3, ValueError), ("act_noise", -0.1, ValueError),
    ("start_steps", -1, ValueError), ("update_after", -5, ValueError),
    ("update_every", 0, ValueError), ("max_ep_len", 0, ValueError),
    ("save_freq", 0, ValueError), ("ac_kwargs", None, TypeError),
])
def test_ddpg_bad_arguments_are_refused_before_anything_is_written(key, value, error, tmp_path):
    out = tmp_path / "run"
    kwargs = dict(TINY, env_fn=lambda: gym.make("Pendulum-v1"),
                  logger_kwargs=dict(output_dir=str(out)))
    kwargs[key] = value
    with pytest.raises(error, match=f"ddpg: {key}=.* is not allowed: "):
        ddpg(**kwargs)
    assert not out.exists()


@pytest.mark.parametrize("env_id, pattern", [
    ("CartPole-v1", r"ddpg: action space Discrete\(2\) .*DDPG needs a continuous \(Box\)"),
    ("Blackjack-v1", r"ddpg: observation space Tuple"),
])
def test_ddpg_unsupported_spaces_are_refused_before_anything_is_written(env_id, pattern,
                                                                         tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=pattern):
        ddpg(lambda: gym.make(env_id), logger_kwargs=dict(output_dir=str(out)), **TINY)
    assert not out.exists()
