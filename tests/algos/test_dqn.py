"""DQN: smoke runs of every switch (library and CLI), errors, save/load, learning,
argument checks before anything is written, torch threads restored, config.json keys,
the target network's hard copy and soft update."""
import inspect
import json

import gymnasium as gym
import numpy as np
import pytest
import torch

import spinup.algos.dqn.dqn as dqn_mod
from spinup.algos.dqn.dqn import dqn

SWITCHES = {
    "plain": {},
    "double": dict(double=True),
    "dueling": dict(dueling=True),
    "per": dict(prioritized_replay=True),
    "nstep": dict(n_step=3),
    "mse_polyak_constant_lr": dict(huber=False, polyak=0.99, max_grad_norm=None, anneal_lr=False),
    "all": dict(double=True, dueling=True, prioritized_replay=True, n_step=3),
}
TINY = dict(steps_per_epoch=300, epochs=2, start_steps=100, update_after=100,
            replay_size=250, batch_size=16, num_test_episodes=1, max_ep_len=100,
            ac_kwargs=dict(hidden_sizes=(16,)))
COLUMNS = ["Epoch", "AverageEpRet", "AverageTestEpRet", "EpLen", "TestEpLen",
           "TotalEnvInteracts", "AverageQVals", "LossQ", "Epsilon", "LR", "Time"]


@pytest.mark.parametrize("name", list(SWITCHES))
def test_smoke_library(name, tmp_path, progress):
    q = dqn(lambda: gym.make("CartPole-v1"), **TINY, **SWITCHES[name],
            logger_kwargs=dict(output_dir=str(tmp_path)))
    df = progress(tmp_path)
    assert list(df["TotalEnvInteracts"]) == [300, 600]
    assert set(COLUMNS) <= set(df.columns)
    assert np.isfinite(df["LossQ"]).all()
    # lr at the last update of each epoch (t = 298, 598; 600 steps in all)
    expected_lr = [1e-3, 1e-3] if name.endswith("constant_lr") else 1e-3 * (1 - np.array([298, 598]) / 600)
    assert np.allclose(df["LR"], expected_lr)
    a = q.act(torch.zeros(4))
    assert gym.make("CartPole-v1").action_space.contains(a)


def test_smoke_cli_all_switches_and_reload(tmp_path, cli, progress):
    cli("dqn", "--env", "CartPole-v1", "--exp_name", "dqncli", "--data_dir", tmp_path,
        "--epochs", 2, "--steps_per_epoch", 300, "--start_steps", 100, "--update_after", 100,
        "--batch_size", 16, "--num_test_episodes", 1, "--hid", "[16]",
        "--double", "True", "--dueling", "True", "--prioritized_replay", "True",
        "--n_step", 3, timeout=300)
    run_dir = next(tmp_path.glob("**/progress.txt")).parent
    assert len(progress(run_dir)) == 2
    from spinup.utils.test_policy import load_policy_and_env
    env, get_action = load_policy_and_env(str(run_dir))
    o, _ = env.reset(seed=0)
    assert env.action_space.contains(get_action(o))


def test_cli_rejects_mpi_and_box_actions(tmp_path, cli):
    p = cli("dqn", "--env", "CartPole-v1", "--cpu", 2, "--data_dir", tmp_path, check=False)
    assert p.returncode != 0 and "MPI" in (p.stdout + p.stderr)
    p = cli("dqn", "--env", "Pendulum-v1", "--epochs", 1, "--data_dir", tmp_path, check=False)
    out = p.stdout + p.stderr
    assert p.returncode == 2 and "dqn: action space Box" in out and "Traceback" not in out


def test_box_action_error(tmp_path):
    with pytest.raises(ValueError, match="dqn: action space Box"):
        dqn(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)))


def test_learns_cartpole(tmp_path, progress):
    """Fixed seed, default settings with every switch on, 12k steps: the greedy policy
    balances the pole far longer than a random one (~22 steps). Measured: 201, 213,
    276 after epochs 1-3 (the PER beta and lr annealing depend on ``epochs``, so this
    run differs from the 25-epoch benchmark run)."""
    dqn(lambda: gym.make("CartPole-v1"), seed=0, epochs=3, double=True, dueling=True,
        prioritized_replay=True, n_step=3, logger_kwargs=dict(output_dir=str(tmp_path)))
    df = progress(tmp_path)
    assert df["AverageTestEpRet"].max() >= 150


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


def test_dqn_restores_torch_threads_on_return_and_on_error(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        dqn(lambda: gym.make("CartPole-v1"), **TINY,
            logger_kwargs=dict(output_dir=str(tmp_path / "a")))
        assert torch.get_num_threads() == 2      # the old code left 1 here
        with pytest.raises(RuntimeError, match="env broke"):
            dqn(lambda: FailingStep(gym.make("CartPole-v1")), **TINY,
                logger_kwargs=dict(output_dir=str(tmp_path / "b")))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("key, value, error", [
    ("gamma", -0.5, ValueError), ("lr", 0, ValueError), ("eps_end", 1.5, ValueError),
    ("per_beta", 2.0, ValueError), ("per_eps", 0.0, ValueError), ("polyak", 1.2, ValueError),
    ("max_grad_norm", -1.0, ValueError), ("n_step", 0, ValueError), ("batch_size", 16.0, TypeError),
    ("target_update_every", 0, ValueError), ("eps_test", "greedy", TypeError),
])
def test_dqn_bad_arguments_are_refused_before_anything_is_written(key, value, error, tmp_path):
    out = tmp_path / "run"
    kwargs = dict(TINY, env_fn=lambda: gym.make("CartPole-v1"),
                  logger_kwargs=dict(output_dir=str(out)))
    kwargs[key] = value
    with pytest.raises(error, match=f"dqn: {key}=.* is not allowed: "):
        dqn(**kwargs)
    assert not out.exists()


def test_dqn_box_actions_are_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"dqn: action space Box.*needs a Discrete action space"):
        dqn(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()       # the old code created the run directory first


def test_dqn_config_json_holds_exactly_the_arguments(tmp_path):
    dqn(lambda: gym.make("CartPole-v1"), **TINY, dueling=True,
        logger_kwargs=dict(output_dir=str(tmp_path)))
    with open(tmp_path / "config.json") as f:
        config = json.load(f)
    # plus the algorithm's name, which --resume checks (issue 19)
    assert set(config) == set(inspect.signature(dqn).parameters) | {"_algorithm"}
    assert config["_algorithm"] == "dqn"
    assert config["ac_kwargs"] == {"hidden_sizes": [16]}     # as passed, before dueling is added


@pytest.mark.parametrize("polyak", [None, 0.9])
def test_target_network_updates(polyak, tmp_path, monkeypatch):
    """Hard form: the target equals the Q-network right after every
    target_update_every-th step (a polyak step with polyak = 0); soft form: one
    averaging step after each gradient step, none otherwise."""
    calls = []
    real_update = dqn_mod.polyak_update

    def spy(net, net_targ, rho):
        before = [p.clone() for p in net_targ.parameters()]
        real_update(net, net_targ, rho)
        for b, p, p_targ in zip(before, net.parameters(), net_targ.parameters()):
            torch.testing.assert_close(p_targ, rho * b + (1 - rho) * p.detach())
            if rho == 0:
                assert torch.equal(p_targ, p.detach())
        calls.append(rho)

    monkeypatch.setattr(dqn_mod, "polyak_update", spy)
    dqn(lambda: gym.make("CartPole-v1"), **dict(TINY, target_update_every=100), polyak=polyak,
        logger_kwargs=dict(output_dir=str(tmp_path)))
    if polyak is None:
        assert calls == [0.0] * 6                  # 600 steps / 100
    else:
        assert calls == [0.9] * 250                # t = 100, 102, ..., 598
