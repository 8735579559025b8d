"""The fast acting path of the on-policy actor-critics (issue 22).

``step``/``act`` sample from the network output without building a
``torch.distributions`` object; these tests hold them to the distribution-based
numbers (same random stream, bitwise), to the right sampling frequencies, and check
that the hot path really builds no distribution and logs ``VVals`` once per update.
"""
import importlib
import traceback

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import distributions

import spinup
from spinup.utils.logx import EpochLogger

ON_POLICY = ["ppo", "vpg", "trpo", "a2c", "a3c"]
OBS_SPACE = gym.spaces.Box(-5.0, 5.0, (4,), dtype=np.float32)
ACTION_SPACES = {"discrete": gym.spaces.Discrete(3),
                 "box": gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)}


def build(algo, kind, seed=0):
    core = importlib.import_module(f"spinup.algos.{algo}.core")
    torch.manual_seed(seed)
    return core, core.MLPActorCritic(OBS_SPACE, ACTION_SPACES[kind])


def reference_step(ac, obs):
    """What ``step`` computed before issue 22: through the distribution object."""
    build_dist = getattr(ac.pi, "distribution", None) or ac.pi._distribution
    score = getattr(ac.pi, "log_prob", None) or ac.pi._log_prob_from_distribution
    with torch.no_grad():
        pi = build_dist(obs)
        a = pi.sample()
        return a.numpy(), ac.v(obs).numpy(), score(pi, a).numpy()


@pytest.mark.parametrize("algo", ON_POLICY)
@pytest.mark.parametrize("kind", ["discrete", "box"])
@pytest.mark.parametrize("batch", [(), (5,)])
def test_step_matches_the_distribution_bitwise(algo, kind, batch):
    _, ac = build(algo, kind)
    rng = np.random.default_rng(1)
    for seed in range(30):
        obs = torch.as_tensor(rng.normal(size=batch + (4,)) * 3, dtype=torch.float32)
        torch.manual_seed(seed)
        fast = ac.step(obs)
        torch.manual_seed(seed)
        slow = reference_step(ac, obs)
        for got, want in zip(fast, slow):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        torch.manual_seed(seed)
        np.testing.assert_array_equal(ac.act(obs), slow[0])


@pytest.mark.parametrize("algo", ON_POLICY)
def test_categorical_sample_frequencies_follow_the_softmax(algo):
    _, ac = build(algo, "discrete")
    obs = torch.tensor([0.5, -1.0, 2.0, 0.1])
    with torch.no_grad():
        probs = torch.softmax(ac.pi.logits_net(obs), dim=-1).numpy()
        batch = obs.expand(20000, 4)
        a, logp = ac.pi.sample(batch)
    freq = np.bincount(a.numpy(), minlength=3) / len(a)
    # 20000 draws: the standard error of each frequency is below 0.0036.
    np.testing.assert_allclose(freq, probs, atol=0.015)
    np.testing.assert_allclose(logp.numpy(), np.log(probs)[a.numpy()], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("algo", ON_POLICY)
@pytest.mark.parametrize("kind", ["discrete", "box"])
def test_step_builds_no_distribution(algo, kind, monkeypatch):
    _, ac = build(algo, kind)

    def refuse(*args, **kwargs):
        raise AssertionError("a torch.distributions object was built while acting")

    monkeypatch.setattr(distributions.Categorical, "__init__", refuse)
    monkeypatch.setattr(distributions.Normal, "__init__", refuse)
    a, v, logp = ac.step(torch.zeros(4))
    assert v.shape == () and logp.shape == ()
    assert ac.act(torch.zeros(4)).shape == a.shape


@pytest.mark.parametrize("algo", ON_POLICY + ["ddpg", "td3", "sac", "dqn"])
def test_mlp_is_a_sequential_with_the_same_keys_and_output(algo):
    core = importlib.import_module(f"spinup.algos.{algo}.core")
    torch.manual_seed(0)
    net = core.mlp([4, 8, 8, 2], torch.nn.Tanh)
    plain = torch.nn.Sequential(*net)
    assert isinstance(net, torch.nn.Sequential)
    assert list(net.state_dict()) == list(plain.state_dict())
    x = torch.randn(6, 4)
    torch.testing.assert_close(net(x), plain(x), rtol=0, atol=0)


@pytest.mark.parametrize("algo", ["ppo", "vpg", "trpo", "a2c"])
def test_vvals_stored_once_per_update_not_per_step(algo, monkeypatch, tmp_path):
    vvals_calls = []
    store = EpochLogger.store

    def counting_store(self, **kwargs):
        if "VVals" in kwargs:
            vvals_calls.append(np.size(kwargs["VVals"]))
        return store(self, **kwargs)

    monkeypatch.setattr(EpochLogger, "store", counting_store)
    kwargs = dict(steps_per_epoch=200, epochs=2)
    if algo == "ppo":
        kwargs.update(train_pi_iters=2, train_v_iters=2)
    if algo == "vpg":
        kwargs.update(train_v_iters=2)
    getattr(spinup, algo)(lambda: gym.make("CartPole-v1"), ac_kwargs=dict(hidden_sizes=(8,)),
                          logger_kwargs=dict(output_dir=str(tmp_path)), **kwargs)
    assert sum(vvals_calls) == 400           # every step's V(s_t) is in the statistics
    assert len(vvals_calls) < 400 / 5        # ... stored in a few arrays, not step by step


@pytest.mark.parametrize("algo", ["ppo", "vpg", "trpo", "a2c"])
def test_a_custom_actor_critics_own_value_error_keeps_its_traceback(algo, tmp_path):
    """Issue 44: the acting loop re-raised every ValueError of ``ac.step`` ``from None``,
    so a custom actor-critic's own error lost the frames that say where it came from.
    The message gains the epoch and step; the original stays attached as the cause."""
    core = importlib.import_module(f"spinup.algos.{algo}.core")

    class Broken(core.MLPActorCritic):
        def step(self, obs):
            raise ValueError("my own check failed")

    with pytest.raises(ValueError, match=r"epoch 0, step 0: my own check failed") as info:
        getattr(spinup, algo)(lambda: gym.make("CartPole-v1"), actor_critic=Broken,
                              steps_per_epoch=40, epochs=1,
                              logger_kwargs=dict(output_dir=str(tmp_path)))
    cause = info.value.__cause__
    assert isinstance(cause, ValueError) and str(cause) == "my own check failed"
    assert "step" in [frame.name for frame in traceback.extract_tb(cause.__traceback__)]
