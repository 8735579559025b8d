"""SAC: smoke runs (library, CLI), automatic temperature, saved-policy round trip
with and without the deterministic (mean) action, a short learning test, argument and
space checks before anything is written, torch threads restored, Q frozen during the
policy step, config.json keys."""
import inspect
import json
import os

import gymnasium as gym
import numpy as np
import pytest
import torch

from conftest import read_progress, run_cli
import spinup.algos.sac.sac as sac_mod
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
    with pytest.raises(ValueError, match="sac: alpha='fast' is not allowed: 'auto' or a number"):
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


class FailingStep(gym.Wrapper):
    """Raises on the ``fail_at``-th call of ``step`` (after updates have started)."""

    def __init__(self, env, fail_at=150):
        super().__init__(env)
        self.calls, self.fail_at = 0, fail_at

    def step(self, action):
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("env broke")
        return self.env.step(action)


def test_sac_restores_torch_threads_on_return_and_on_error(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        sac(lambda: gym.make("Pendulum-v1"), epochs=1,
            logger_kwargs=dict(output_dir=str(tmp_path / "a")), **TINY)
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError, match="env broke"):
            sac(lambda: FailingStep(gym.make("Pendulum-v1")), epochs=1,
                logger_kwargs=dict(output_dir=str(tmp_path / "b")), **TINY)
        assert torch.get_num_threads() == 2      # the old code left 1 here
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("key, value, error", [
    ("gamma", 1.5, ValueError), ("polyak", -0.1, ValueError), ("lr", 0.0, ValueError),
    ("batch_size", 0, ValueError), ("update_every", 2.5, TypeError), ("alpha", -0.2, ValueError),
    ("max_ep_len", 0, ValueError), ("target_entropy", "high", TypeError),
])
def test_sac_bad_arguments_are_refused_before_anything_is_written(key, value, error, tmp_path):
    out = tmp_path / "run"
    kwargs = dict(TINY, env_fn=lambda: gym.make("Pendulum-v1"),
                  logger_kwargs=dict(output_dir=str(out)))
    kwargs[key] = value
    with pytest.raises(error, match=f"sac: {key}=.* is not allowed: "):
        sac(**kwargs)
    assert not out.exists()


def test_sac_discrete_actions_are_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"sac: action space Discrete\(2\) .*SAC needs a "
                                         r"continuous \(Box\) action space"):
        sac(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)), **TINY)
    assert not out.exists()       # the old code created the run directory first


def test_sac_config_json_holds_exactly_the_arguments(tmp_path):
    sac(lambda: gym.make("Pendulum-v1"), epochs=1, alpha="auto",
        logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    with open(tmp_path / "config.json") as f:
        config = json.load(f)
    # plus the algorithm's name, which --resume checks (issue 19)
    assert set(config) == set(inspect.signature(sac).parameters) | {"_algorithm"}
    assert config["_algorithm"] == "sac"
    assert config["alpha"] == "auto" and config["target_entropy"] is None


def test_sac_q_functions_get_no_gradient_from_the_policy_step(tmp_path, monkeypatch):
    """Each update: the Q step, then the policy step with q1/q2 frozen, so the policy's
    backward pass leaves the Q gradients as the Q step made them; unfrozen after."""
    made, seen = [], {"q": 0, "pi": 0, "alpha": 0}

    def actor_critic(obs_space, act_space, **kw):
        made.append(sac_mod.core.MLPActorCritic(obs_space, act_space, **kw))
        return made[-1]

    def q_params():
        return list(made[0].q1.parameters()) + list(made[0].q2.parameters())

    class SpyAdam(torch.optim.Adam):
        q_grads = None

        def step(self, closure=None):
            mine = {id(p) for group in self.param_groups for p in group["params"]}
            if id(q_params()[0]) in mine:
                SpyAdam.q_grads = [p.grad.clone() for p in q_params()]
                seen["q"] += 1
            elif id(next(made[0].pi.parameters())) in mine:
                assert not any(p.requires_grad for p in q_params())
                for p, g in zip(q_params(), SpyAdam.q_grads):
                    assert torch.equal(p.grad, g)
                seen["pi"] += 1
            else:
                seen["alpha"] += 1
            return super().step(closure)

    monkeypatch.setattr(torch.optim, "Adam", SpyAdam)   # torch_tools.adam builds through it
    sac(lambda: gym.make("Pendulum-v1"), actor_critic=actor_critic, alpha="auto", epochs=1,
        logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    assert seen == {"q": 100, "pi": 100, "alpha": 100}
    assert all(p.requires_grad for p in q_params())


def test_sac_training_and_test_actions_stay_inside_asymmetric_bounds(tmp_path):
    """Both the exploring and the test episodes go through the same action map and clip."""
    low, high = np.array([0.0], np.float32), np.array([3.0], np.float32)
    seen = []

    class Shifted(gym.ActionWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.action_space = gym.spaces.Box(low, high)

        def action(self, a):
            seen.append(float(a[0]))
            return np.asarray(a, np.float32) - 1.5      # onto Pendulum's [-1.5, 1.5]

    sac(lambda: Shifted(gym.make("Pendulum-v1")), epochs=1,
        logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    # One step of a copy of the env before the run (make_env tries the env before any
    # file exists), 200 training steps, one 200-step test episode.
    assert len(seen) == 1 + 200 + 200
    assert min(seen) >= 0.0 and max(seen) <= 3.0
    assert max(seen) - min(seen) > 1.0       # the whole box is used, not [-1, 1]


def test_a_nan_action_is_blamed_on_the_policy_not_the_env(tmp_path):
    """Issue 44: a diverged SAC policy (NaN weights) made Pendulum return a NaN reward,
    and the error said the env had returned it. It now names the action."""
    from spinup.algos.sac import core as sac_core

    class Diverged(sac_core.MLPActorCritic):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            with torch.no_grad():
                for p in self.pi.parameters():
                    p.fill_(float("nan"))

    with pytest.raises(ValueError) as info:
        sac(lambda: gym.make("Pendulum-v1"), actor_critic=Diverged,
            **dict(TINY, start_steps=0), logger_kwargs=dict(output_dir=str(tmp_path)))
    line = str(info.value)
    assert "action" in line and "not finite" in line and "policy network has diverged" in line
    assert "\n" not in line
