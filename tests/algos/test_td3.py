"""TD3: smoke runs (library, CLI), target policy smoothing clip bounds, the policy
delay counted over the whole run, argument checks, the plain-Adam fallback."""
import os

import gymnasium as gym
import numpy as np
import pytest
import torch

import spinup.algos.td3.core as core
import spinup.algos.td3.td3 as td3_mod
import spinup.utils.torch_tools as torch_tools
from conftest import read_progress, run_cli
from spinup import td3

TD3_COLUMNS = ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet", "AverageTestEpRet",
               "StdTestEpRet", "MaxTestEpRet", "MinTestEpRet", "EpLen", "TestEpLen",
               "TotalEnvInteracts", "AverageQ1Vals", "StdQ1Vals", "MaxQ1Vals", "MinQ1Vals",
               "AverageQ2Vals", "StdQ2Vals", "MaxQ2Vals", "MinQ2Vals", "LossPi", "LossQ", "Time"]
TINY = dict(steps_per_epoch=200, epochs=1, start_steps=100, update_after=100, update_every=50,
            batch_size=32, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(16, 16)))


def test_td3_library_smoke_and_columns(tmp_path):
    ac = td3(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    df = read_progress(tmp_path)
    assert list(df.columns) == TD3_COLUMNS
    assert df["TotalEnvInteracts"].tolist() == [200]
    assert np.isfinite(df[["LossPi", "LossQ", "AverageTestEpRet"]].values).all()
    assert ac.act(torch.zeros(3), deterministic=True).shape == (1,)


def test_td3_cli_smoke(tmp_path):
    run_cli("td3", "--env", "Pendulum-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--start_steps", 100, "--update_after", 100, "--num_test_episodes", 1,
            "--hid", "[16,16]", "--exp_name", "td3smoke", "--data_dir", tmp_path, timeout=300)
    run_dir = os.path.join(tmp_path, "td3smoke", "td3smoke_s0")
    assert read_progress(run_dir)["TotalEnvInteracts"].tolist() == [200]
    assert os.path.exists(os.path.join(run_dir, "pyt_save", "model.pt"))


class RecordingQ(core.MLPQFunction):
    """Records the actions of every no-grad call: only the target Q-values are
    computed without a graph, so these are the smoothed target actions."""
    target_actions = []

    def forward(self, obs, act):
        if not torch.is_grad_enabled():
            RecordingQ.target_actions.append(act.clone())
        return super().forward(obs, act)


def test_td3_target_smoothing_noise_is_clipped(tmp_path):
    noise_clip = 0.3

    def actor_critic(obs_space, act_space, **kw):
        ac = core.MLPActorCritic(obs_space, act_space, **kw)
        ac.q1 = RecordingQ(obs_space.shape[0], act_space.shape[0], (16, 16), torch.nn.ReLU)
        with torch.no_grad():          # pi(s) = tanh(30) = 1: the upper bound, always
            ac.pi.pi[-2].weight.zero_()
            ac.pi.pi[-2].bias.fill_(30.0)
        return ac

    RecordingQ.target_actions.clear()
    # pi_lr tiny (it must be > 0): Adam moves the bias by ~1e-12, tanh stays at 1
    td3(lambda: gym.make("Pendulum-v1"), actor_critic=actor_critic, pi_lr=1e-12,
        target_noise=10.0, noise_clip=noise_clip, logger_kwargs=dict(output_dir=str(tmp_path)),
        **TINY)
    a2 = torch.cat(RecordingQ.target_actions)
    assert len(RecordingQ.target_actions) == 100 and a2.shape == (100 * 32, 1)
    # a' = clip(1 + clip(eps, -c, c), -1, 1) with |eps| >> c: both clips are active
    assert a2.min() >= 1 - noise_clip - 1e-6 and a2.max() <= 1.0
    assert (a2 == 1.0).float().mean() > 0.4 and (a2 - (1 - noise_clip)).abs().min() < 1e-6


# ---------------------------------------------------------------- delayed policy updates
def record_update_order(module, tmp_path, monkeypatch, **kwargs):
    """Run ``module.td3`` and return the optimizer and target steps in order: "q" for
    a Q step, "pi" for a policy step, "targ" for a target-network update."""
    events, made = [], []

    def actor_critic(obs_space, act_space, **kw):
        made.append(core.MLPActorCritic(obs_space, act_space, **kw))
        return made[-1]

    class RecordingAdam(torch.optim.Adam):
        def step(self, closure=None):
            mine = {id(p) for g in self.param_groups for p in g["params"]}
            events.append("pi" if id(next(made[0].pi.parameters())) in mine else "q")
            return super().step(closure)

    polyak_update = module.polyak_update

    def recording_polyak_update(net, net_targ, polyak):
        events.append("targ")
        polyak_update(net, net_targ, polyak)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)   # torch_tools.adam builds through it
    monkeypatch.setattr(module, "polyak_update", recording_polyak_update)
    settings = dict(TINY, **kwargs)
    module.td3(lambda: gym.make("Pendulum-v1"), actor_critic=actor_critic,
               logger_kwargs=dict(output_dir=str(tmp_path)), **settings)
    return events


@pytest.mark.parametrize("update_every, q_steps", [(1, 100), (3, 99), (50, 100)])
def test_policy_delay_counts_q_updates_over_the_whole_run(update_every, q_steps, tmp_path,
                                                          monkeypatch):
    """One policy step and one target update per policy_delay Q steps, whatever the
    length of an update phase. Updates run at t = 100..199 with t % update_every == 0:
    update_every=1 gives 100 phases of one Q step (the per-phase counter of Spinning Up
    updated the policy after every one of them: 100 policy steps), update_every=3
    gives 33 phases of three (Spinning Up: 2 policy steps per phase, 66)."""
    events = record_update_order(td3_mod, tmp_path, monkeypatch, update_every=update_every,
                                 policy_delay=2)
    assert events.count("q") == q_steps
    assert events.count("pi") == events.count("targ") == (q_steps + 1) // 2
    # the policy and the targets move right after Q steps 1, 3, 5, ... (counting from 1)
    q_seen, expected_after = 0, []
    for e in events:
        if e == "q":
            q_seen += 1
        elif e == "pi":
            expected_after.append(q_seen)
    assert expected_after == list(range(1, q_steps + 1, 2))
    assert all(events[i + 1] == "targ" for i, e in enumerate(events) if e == "pi")


def test_policy_delay_three(tmp_path, monkeypatch):
    events = record_update_order(td3_mod, tmp_path, monkeypatch, update_every=1, policy_delay=3)
    assert events.count("q") == 100 and events.count("pi") == events.count("targ") == 34


def test_policy_delay_one_updates_the_policy_every_q_step(tmp_path, monkeypatch):
    events = record_update_order(td3_mod, tmp_path, monkeypatch, update_every=1, policy_delay=1)
    assert events.count("q") == events.count("pi") == events.count("targ") == 100


# ---------------------------------------------------------------- Adam, threads, checks
def test_td3_plain_adam_fallback(tmp_path, monkeypatch):
    """Where torch has no fused CPU Adam (torch < 2.4), torch_tools.adam builds the
    plain one; TD3 must train with it."""
    monkeypatch.setattr(torch_tools, "FUSED_ADAM_ON_CPU", False)
    built = []

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)
    td3(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    assert len(built) == 2
    assert all(not opt.defaults.get("fused") for opt in built)
    assert all(opt.state for opt in built)          # both optimizers took steps
    assert np.isfinite(read_progress(tmp_path)["LossPi"]).all()


def test_td3_uses_fused_adam_where_supported(tmp_path, monkeypatch):
    if not torch_tools.FUSED_ADAM_ON_CPU:
        pytest.skip("this torch has no fused Adam on the CPU")
    built = []

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)
    td3(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    assert len(built) == 2 and all(opt.defaults["fused"] for opt in built)


def test_td3_restores_torch_threads(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        td3(lambda: gym.make("Pendulum-v1"), logger_kwargs=dict(output_dir=str(tmp_path)),
            **TINY)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("key, value, error", [
    ("policy_delay", 0, ValueError), ("policy_delay", 2.0, TypeError),
    ("target_noise", -0.1, ValueError), ("noise_clip", -1, ValueError),
    ("gamma", 1.5, ValueError), ("polyak", -0.1, ValueError), ("pi_lr", 0.0, ValueError),
    ("q_lr", float("nan"), ValueError), ("act_noise", -1.0, ValueError),
    ("update_every", 0, ValueError), ("update_after", -1, ValueError),
    ("batch_size", 0, ValueError), ("epochs", True, TypeError), ("env_fn", None, TypeError),
])
def test_td3_bad_arguments_are_refused_before_anything_is_written(key, value, error, tmp_path):
    out = tmp_path / "run"
    kwargs = dict(TINY, env_fn=lambda: gym.make("Pendulum-v1"),
                  logger_kwargs=dict(output_dir=str(out)))
    kwargs[key] = value
    with pytest.raises(error, match=f"td3: {key}=.* is not allowed: "):
        td3(**kwargs)
    assert not out.exists()


def test_td3_discrete_actions_are_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"td3: action space Discrete\(2\) .*TD3 needs a "
                                         r"continuous \(Box\) action space"):
        td3(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)), **TINY)
    assert not out.exists()
