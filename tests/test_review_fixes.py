"""Issue 19, part B: review findings 1-6, spec names, numeric sanity checks, non-finite
env data and test_policy on a model whose kwargs and weights disagree.

Each test failed before its fix.
"""
import inspect
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from spinup import a2c, ddpg, dqn, ppo, sac, td3, trpo, vpg
from spinup.machinery import checkpoint as ckpt
from spinup.machinery.checkpoint import (checkpoint_path, env_state, load_checkpoint,
                                     restore_env_state)

from conftest import read_progress, run_cli

TINY_PPO = dict(steps_per_epoch=200, ac_kwargs=dict(hidden_sizes=(8,)), train_pi_iters=3,
                train_v_iters=3)


# One torch thread in every test of this file (the fixture is in conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


def save_and_load(state, tmp_path):
    path = tmp_path / "state.pt"
    torch.save(state, path)
    return torch.load(path, weights_only=True)


# ---- 1. numpy scalars in env state (np.float64 is a subclass of float) ----

@pytest.mark.parametrize("env_id", ["MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1"])
def test_env_state_with_numpy_floats_loads_weights_only(env_id, tmp_path):
    env = gym.make(env_id)
    env.reset(seed=0)
    for _ in range(5):
        env.step(env.action_space.sample())
    state = save_and_load(env_state(env), tmp_path)  # refused before: numpy scalar
    assert state["exact"]
    fresh = gym.make(env_id)
    fresh.reset(seed=1)
    assert restore_env_state(fresh, state)
    a = env.action_space.sample()
    assert np.array_equal(env.step(a)[0], fresh.step(a)[0])


def test_box2d_env_state_loads_weights_only(tmp_path):
    pytest.importorskip("Box2D")
    env = gym.make("LunarLander-v3")
    env.reset(seed=0)
    env.step(0)
    state = save_and_load(env_state(env), tmp_path)
    assert not state["exact"] and "LunarLander.world" in state["skipped"]


def test_mountaincar_checkpoint_loads(tmp_path):
    run_dir = str(tmp_path / "mc")
    # 150 steps: the epoch ends mid-episode, while the env's state is a tuple of np.float64
    ppo(lambda: gym.make("MountainCar-v0"), epochs=1, logger_kwargs=dict(output_dir=run_dir),
        **dict(TINY_PPO, steps_per_epoch=150))
    assert load_checkpoint(run_dir)["epoch"] == 1


def test_a_pickled_object_is_not_called_corrupt(tmp_path):
    path = checkpoint_path(str(tmp_path))
    os.makedirs(os.path.dirname(path))
    torch.save({"format": ckpt.CHECKPOINT_FORMAT, "x": np.float64(1.0)}, path)
    with pytest.raises(ValueError) as info:
        load_checkpoint(str(tmp_path))
    assert "corrupt" not in str(info.value) and "other than tensors" in str(info.value)


# ---- 2. dqn n_step > 1 after an inexact resume ----

class Opaque(gym.Wrapper):
    """CartPole with an attribute a checkpoint cannot hold: every resume is inexact."""

    def __init__(self, env):
        super().__init__(env)
        self.handle = object()


def test_dqn_inexact_resume_ends_the_last_stored_transition(tmp_path, monkeypatch):
    # CartPole would be rebuilt by replaying its episode: record none, so the resume is
    # inexact and starts a new episode.
    monkeypatch.setattr(ckpt, "MAX_REPLAY_STEPS", 0)
    run_dir = str(tmp_path / "d")
    kw = dict(steps_per_epoch=150, start_steps=50, update_after=50, batch_size=16,
              n_step=3, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(8,)),
              logger_kwargs=dict(output_dir=run_dir))
    make = lambda: Opaque(gym.make("CartPole-v1"))  # noqa: E731
    dqn(make, epochs=1, seed=3, **kw)
    first = load_checkpoint(run_dir)
    assert first["episode"][0]["ep_len"] > 0  # epoch 1 ended mid-episode (one env: num_envs=1)
    last_slot = first["replay"]["ptr"] - 1
    assert not first["replay"]["end_buf"][last_slot]
    kw["logger_kwargs"] = dict(output_dir=run_dir, resume=True)
    dqn(make, epochs=2, seed=3, **kw)
    assert load_checkpoint(run_dir)["replay"]["end_buf"][last_slot]


# ---- 3. on-policy algorithms and non-flat Box action spaces ----

class OddActions(gym.Env):
    def __init__(self, shape):
        self.observation_space = spaces.Box(-1, 1, (3,), np.float32)
        self.action_space = spaces.Box(-1, 1, shape, np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, False, False, {}


@pytest.mark.parametrize("algo", [vpg, trpo, ppo, a2c, ddpg, td3, sac])
@pytest.mark.parametrize("shape", [(2, 3), ()])
def test_non_flat_box_actions_refused_before_anything_is_written(algo, shape, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"action space Box.*not 1-D"):
        algo(lambda: OddActions(shape), epochs=1, logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


def test_a3c_non_flat_box_actions_refused(tmp_path):
    from spinup import a3c
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"action space Box.*not 1-D"):
        a3c(lambda: OddActions((2, 3)), epochs=1, num_workers=1,
            logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


# ---- 4. hidden_sizes=() ----

def test_sac_and_dueling_dqn_take_no_hidden_layer(tmp_path):
    sac(lambda: gym.make("Pendulum-v1"), epochs=1, steps_per_epoch=120, start_steps=50,
        update_after=50, batch_size=16, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=()),
        logger_kwargs=dict(output_dir=str(tmp_path / "s")))
    q = dqn(lambda: gym.make("CartPole-v1"), epochs=1, steps_per_epoch=120, start_steps=50,
            update_after=50, batch_size=16, num_test_episodes=1, dueling=True,
            ac_kwargs=dict(hidden_sizes=()), logger_kwargs=dict(output_dir=str(tmp_path / "d")))
    assert q(torch.zeros(2, 4)).shape == (2, 2)


# ---- 5. PPO StopIter ----

def test_ppo_stop_iter_counts_every_step_when_early_stopping_never_fires(tmp_path):
    ppo(lambda: gym.make("CartPole-v1"), epochs=1, target_kl=1e9, seed=0,
        logger_kwargs=dict(output_dir=str(tmp_path)), **TINY_PPO)
    assert list(read_progress(tmp_path)["StopIter"]) == [3]


# ---- 6. wrapper statistics and public containers ----

def _normalized_pendulum():
    from gymnasium.wrappers import NormalizeObservation, NormalizeReward
    return NormalizeReward(NormalizeObservation(gym.make("Pendulum-v1")))


def test_running_statistics_are_saved_and_restored(tmp_path):
    env = _normalized_pendulum()
    env.reset(seed=0)
    for _ in range(30):
        env.step(env.action_space.sample())
    state = save_and_load(env_state(env), tmp_path)
    assert state["exact"] and not state["skipped"]
    fresh = _normalized_pendulum()
    fresh.reset(seed=5)
    assert restore_env_state(fresh, state)
    assert np.array_equal(fresh.env.obs_rms.mean, env.env.obs_rms.mean)
    assert fresh.return_rms.count == env.return_rms.count
    a = env.action_space.sample()
    o1, r1, *_ = env.step(a)
    o2, r2, *_ = fresh.step(a)
    assert np.array_equal(o1, o2) and r1 == r2


class WithContainers(gym.Wrapper):
    def __init__(self, env, history):
        super().__init__(env)
        self.history = history


def test_public_containers_are_saved_or_mark_the_state_inexact(tmp_path):
    plain = WithContainers(gym.make("CartPole-v1"), [1.0, 2.0, {"k": (3, 4)}])
    plain.reset(seed=0)
    state = save_and_load(env_state(plain), tmp_path)
    assert state["exact"]
    fresh = WithContainers(gym.make("CartPole-v1"), [])
    fresh.reset(seed=0)
    assert restore_env_state(fresh, state) and fresh.history == [1.0, 2.0, {"k": (3, 4)}]

    opaque = WithContainers(gym.make("CartPole-v1"), [object()])
    opaque.reset(seed=0)
    state = env_state(opaque)
    assert not state["exact"] and state["skipped"] == ["WithContainers.history"]


def test_inexact_warning_says_what_restarts(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ckpt, "_warned_inexact", False)
    env = WithContainers(gym.make("CartPole-v1"), [object()])
    env.reset(seed=0)
    state = env_state(env)
    fresh = WithContainers(gym.make("CartPole-v1"), [object()])
    fresh.reset(seed=0)
    assert not restore_env_state(fresh, state)
    out = capsys.readouterr().out
    assert "WithContainers.history" in out and "new episode" in out


# ---- spec names: load_policy, mpi_fork(n, bind_to_core) ----

def test_load_policy_is_the_spec_name(tmp_path):
    from spinup.utils.test_policy import load_policy, run_policy
    ppo(lambda: gym.make("CartPole-v1"), epochs=1, logger_kwargs=dict(output_dir=str(tmp_path)),
        **TINY_PPO)
    env, get_action = load_policy(str(tmp_path))
    assert env.spec.id == "CartPole-v1"
    summary = run_policy(env, get_action, num_episodes=1, render=False)
    assert summary["EpLen"] >= 1


def test_mpi_fork_keeps_bind_to_core_second(monkeypatch):
    from spinup.launch import mpi_launch
    from spinup.machinery import cores
    from spinup.utils import mpi_tools
    params = inspect.signature(mpi_launch.mpi_fork).parameters
    assert list(params)[:2] == ["n", "bind_to_core"]
    assert params["oversubscribe"].kind is inspect.Parameter.KEYWORD_ONLY
    for var in ("IN_MPI",) + mpi_tools._LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(cores, "available_cores", lambda: 2)
    monkeypatch.setattr(mpi_launch, "find_mpiexec", lambda: "/x/mpiexec")
    monkeypatch.setattr(mpi_launch, "_is_open_mpi", lambda exe: False)
    calls = []
    monkeypatch.setattr(mpi_launch.subprocess, "call", lambda cmd, **kw: calls.append(cmd) or 0)
    with pytest.raises(SystemExit):
        mpi_launch.mpi_fork(2, True)
    assert calls[0][1:5] == ["-bind-to", "core", "-n", "2"]
    with pytest.raises(ValueError, match="CPU cores"):  # True is not oversubscribe any more
        mpi_launch.mpi_fork(3, True)


# ---- 5. silent-wrong values refused up front ----

BAD_VALUES = [
    (ppo, "CartPole-v1", dict(clip_ratio=5), ValueError, "clip_ratio=5"),
    (ppo, "CartPole-v1", dict(clip_ratio=1.0), ValueError, "clip_ratio=1.0"),
    (sac, "Pendulum-v1", dict(replay_size=10, batch_size=100), ValueError, "replay_size=10"),
    (sac, "Pendulum-v1", dict(replay_size=1), ValueError, "replay_size=1"),
    (td3, "Pendulum-v1", dict(replay_size=50, batch_size=64), ValueError, "replay_size=50"),
    (sac, "Pendulum-v1", dict(epochs=2, steps_per_epoch=50), ValueError,
     r"update_after=1000 .*100 env steps"),
    (ddpg, "Pendulum-v1", dict(epochs=1, steps_per_epoch=1000, update_after=999,
                               update_every=50), ValueError, "update_after=999"),
    (dqn, "CartPole-v1", dict(epochs=1, steps_per_epoch=500), ValueError, "update_after=1000"),
    (sac, "Pendulum-v1", dict(save_freq=1.5), TypeError, "save_freq=1.5"),
    (dqn, "CartPole-v1", dict(target_update_every=2.5), TypeError, "target_update_every=2.5"),
    (dqn, "CartPole-v1", dict(start_steps=10.5), TypeError, "start_steps=10.5"),
    (dqn, "CartPole-v1", dict(eps_decay_steps=100.5), TypeError, "eps_decay_steps=100.5"),
    (sac, "Pendulum-v1", dict(max_ep_len=200.5), TypeError, "max_ep_len=200.5"),
    (td3, "Pendulum-v1", dict(update_after=100.0), TypeError, "update_after=100.0"),
]


@pytest.mark.parametrize("algo, env_id, kwargs, error, words", BAD_VALUES)
def test_silent_wrong_values_refused_before_anything_is_written(algo, env_id, kwargs, error,
                                                                words, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(error, match=words) as info:
        algo(lambda: gym.make(env_id), logger_kwargs=dict(output_dir=str(out)), **kwargs)
    assert "\n" not in str(info.value)
    assert not out.exists()


def test_a_run_that_updates_once_is_allowed(tmp_path):
    td3(lambda: gym.make("Pendulum-v1"), epochs=1, steps_per_epoch=100, start_steps=50,
        update_after=90, update_every=10, batch_size=16, num_test_episodes=1,
        ac_kwargs=dict(hidden_sizes=(8,)), logger_kwargs=dict(output_dir=str(tmp_path)))
    assert np.isfinite(read_progress(tmp_path)["LossQ"]).all()


@pytest.mark.parametrize("args, flag", [
    (["ppo", "--env", "CartPole-v1", "--clip_ratio", "5"], "clip_ratio=5"),
    (["sac", "--env", "Pendulum-v1", "--replay_size", "10", "--batch_size", "100"],
     "replay_size=10"),
    (["sac", "--env", "Pendulum-v1", "--epochs", "2", "--steps_per_epoch", "50"],
     "update_after=1000"),
    (["dqn", "--env", "CartPole-v1", "--target_update_every", "2.5"], "target_update_every"),
])
def test_cli_refuses_silent_wrong_values(args, flag, tmp_path):
    proc = run_cli(*args, "--data_dir", tmp_path, check=False, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())


# ---- 6. NaN / inf from the user's env ----

class NanAt(gym.Wrapper):
    """Returns a NaN reward or observation at env step ``at`` (counting from 1)."""

    def __init__(self, env, at, what):
        super().__init__(env)
        self.t, self.at, self.what = 0, at, what

    def step(self, action):
        o, r, terminated, truncated, info = self.env.step(action)
        self.t += 1
        if self.t == self.at:
            if self.what == "rew":
                r = float("nan")
            else:
                o = o * np.inf
        return o, r, terminated, truncated, info


ON = dict(steps_per_epoch=200, ac_kwargs=dict(hidden_sizes=(8,)))
OFF = dict(steps_per_epoch=200, start_steps=50, update_after=50, batch_size=16,
           num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(8,)))


@pytest.mark.parametrize("algo, env_id, kw", [
    (ppo, "CartPole-v1", ON), (vpg, "Pendulum-v1", ON), (trpo, "CartPole-v1", ON),
    (a2c, "CartPole-v1", dict(ON, n_steps=20)), (sac, "Pendulum-v1", OFF),
    (td3, "Pendulum-v1", OFF), (ddpg, "Pendulum-v1", OFF), (dqn, "CartPole-v1", OFF)])
@pytest.mark.parametrize("what", ["rew", "obs"])
def test_non_finite_env_data_is_one_clear_error(algo, env_id, kw, what, tmp_path):
    name = algo.__name__
    with pytest.raises(ValueError) as info:
        algo(lambda: NanAt(gym.make(env_id), 37, what), epochs=2,
             logger_kwargs=dict(output_dir=str(tmp_path)), **kw)
    message = str(info.value)
    assert message.startswith(f"{name}: env {env_id} returned a non-finite "
                              f"{'reward' if what == 'rew' else ''}") and "\n" not in message
    if algo is not a2c:  # a2c counts steps within its n_steps rollout
        assert ("36" in message or "37" in message), message  # the step it appeared at
    progress = tmp_path / "progress.txt"  # stopped in the first epoch: no row written
    assert not progress.exists() or len(progress.read_text().strip().splitlines()) <= 1


# ---- 7. test_policy: kwargs and weights that disagree ----

def test_test_policy_names_weights_that_do_not_fit(tmp_path):
    ppo(lambda: gym.make("CartPole-v1"), epochs=1, logger_kwargs=dict(output_dir=str(tmp_path)),
        **TINY_PPO)
    path = tmp_path / "pyt_save" / "model.pt"
    saved = torch.load(path, weights_only=True)
    saved["ac_kwargs"]["hidden_sizes"] = [16]
    torch.save(saved, path)
    proc = subprocess.run([sys.executable, "-m", "spinup.run", "test_policy", str(tmp_path),
                           "-n", "1", "-nr"], capture_output=True, text=True, timeout=300)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert "do not fit" in lines[0] and "of another shape" in lines[0]
    assert "Traceback" not in proc.stderr and "size mismatch" not in proc.stderr
