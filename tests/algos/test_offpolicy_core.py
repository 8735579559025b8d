"""DDPG / TD3 / SAC building blocks: squashed-Gaussian log-prob, replay buffer,
polyak averaging, action scaling, Q frozen during the policy step, bootstrapping."""
import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform

import spinup.algos.ddpg.core as ddpg_core
import spinup.algos.ddpg.ddpg as ddpg_mod
import spinup.algos.sac.core as sac_core
import spinup.algos.sac.sac as sac_mod
import spinup.algos.td3.core as td3_core
import spinup.algos.td3.td3 as td3_mod

ALGOS = {"ddpg": (ddpg_mod, ddpg_mod.ddpg, ddpg_core), "td3": (td3_mod, td3_mod.td3, td3_core),
         "sac": (sac_mod, sac_mod.sac, sac_core)}
TINY = dict(steps_per_epoch=200, epochs=1, start_steps=100, update_after=100, update_every=50,
            batch_size=32, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(16, 16)))


# ----------------------------------------------------------------------------- SAC log-prob
def test_squashed_gaussian_log_prob_matches_change_of_variables():
    torch.manual_seed(0)
    mu, log_std = torch.randn(64, 3, dtype=torch.float64), torch.rand(64, 3, dtype=torch.float64) - 1
    u = mu + log_std.exp() * torch.randn(64, 3, dtype=torch.float64)
    ours = sac_core.squashed_gaussian_log_prob(u, mu, log_std)
    # naive change of variables: log N(u) - sum log(1 - tanh(u)^2)
    naive = Normal(mu, log_std.exp()).log_prob(u).sum(-1) - torch.log(1 - torch.tanh(u) ** 2).sum(-1)
    torch.testing.assert_close(ours, naive, rtol=1e-10, atol=1e-10)
    # torch.distributions' own tanh-transformed Gaussian
    ref = TransformedDistribution(Normal(mu, log_std.exp()), [TanhTransform()])
    torch.testing.assert_close(ours, ref.log_prob(torch.tanh(u)).sum(-1), rtol=1e-8, atol=1e-8)


def test_squashed_gaussian_log_prob_is_stable_where_tanh_saturates():
    mu, log_std = torch.zeros(1, 2), torch.zeros(1, 2)
    u = torch.tensor([[20.0, -30.0]])           # tanh(u) == +-1 in float32
    naive = Normal(mu, 1.0).log_prob(u).sum(-1) - torch.log(1 - torch.tanh(u) ** 2).sum(-1)
    assert not torch.isfinite(naive).all()
    ours = sac_core.squashed_gaussian_log_prob(u, mu, log_std)
    # log(1 - tanh(u)^2) = 2 (log 2 - |u| - log(1 + e^{-2|u|})) = 2 (log 2 - |u|) here
    exact = -0.5 * (20.0**2 + 30.0**2) - math.log(2 * math.pi) - (4 * math.log(2) - 2 * (20 + 30))
    assert torch.isfinite(ours).all()
    assert ours.item() == pytest.approx(exact, rel=1e-5)


def test_squashed_gaussian_density_matches_samples():
    """Sampling reference: histogram of tanh(u) against the integral of exp(log-prob)."""
    torch.manual_seed(1)
    mu, log_std = torch.tensor([[0.7]]), torch.tensor([[-0.2]])
    samples = torch.tanh(mu + log_std.exp() * torch.randn(400_000, 1)).squeeze(-1).numpy()
    edges = np.linspace(-0.99, 0.99, 12)
    hist = np.histogram(samples, bins=edges)[0] / len(samples)
    for lo, hi, p_mc in zip(edges[:-1], edges[1:], hist):
        a = torch.linspace(lo, hi, 401, dtype=torch.float64)
        u = torch.atanh(a).unsqueeze(-1)
        dens = sac_core.squashed_gaussian_log_prob(u, mu.double(), log_std.double()).exp()
        p_int = torch.trapezoid(dens, a).item()
        assert p_int == pytest.approx(p_mc, abs=3e-3)


def test_sac_actor_outputs_and_log_std_clamp():
    obs_sp, act_sp = gym.spaces.Box(-1, 1, (4,)), gym.spaces.Box(-1, 1, (2,))
    ac = sac_core.MLPActorCritic(obs_sp, act_sp, hidden_sizes=(8,))
    obs = torch.randn(5, 4)
    a, logp = ac.pi(obs)
    assert a.shape == (5, 2) and logp.shape == (5,) and a.abs().max() <= 1
    mean_a, none = ac.pi(obs, deterministic=True, with_logprob=False)
    net_out = ac.pi.net(obs)
    torch.testing.assert_close(mean_a, torch.tanh(ac.pi.mu_layer(net_out)))
    assert none is None
    with torch.no_grad():   # a huge log-std is clamped to LOG_STD_MAX = 2
        ac.pi.log_std_layer.bias.fill_(50.0)
        ac.pi.log_std_layer.weight.zero_()
    torch.manual_seed(0)
    a, logp = ac.pi(obs)
    torch.manual_seed(0)
    mu = ac.pi.mu_layer(net_out)
    u = mu + math.exp(2) * torch.randn_like(mu)
    torch.testing.assert_close(logp, sac_core.squashed_gaussian_log_prob(u, mu, torch.full_like(mu, 2.0)))


# ----------------------------------------------------------------------------- buffer, polyak
@pytest.mark.parametrize("algo", ALGOS)
def test_replay_buffer_wraps_around_and_samples_shapes(algo):
    mod = ALGOS[algo][0]
    buf = mod.ReplayBuffer(obs_dim=(3,), act_dim=2, size=5)
    for i in range(7):
        buf.store(np.full(3, i), np.full(2, i), i, np.full(3, i + 1), i % 2)
    assert buf.size == 5 and buf.ptr == 2
    assert buf.obs_buf[:, 0].tolist() == [5, 6, 2, 3, 4]        # 0 and 1 overwritten
    assert buf.done_buf.tolist() == [1, 0, 0, 1, 0]
    assert all(b.dtype == np.float32 for b in (buf.obs_buf, buf.act_buf, buf.rew_buf))
    batch = buf.sample_batch(64)
    assert batch["obs"].shape == (64, 3) and batch["obs2"].shape == (64, 3)
    assert batch["act"].shape == (64, 2) and batch["rew"].shape == (64,)
    assert batch["done"].shape == (64,) and batch["obs"].dtype == torch.float32
    assert set(batch["rew"].tolist()) <= {2.0, 3.0, 4.0, 5.0, 6.0}
    torch.testing.assert_close(batch["obs2"], batch["obs"] + 1)   # rows stay aligned


@pytest.mark.parametrize("algo", ALGOS)
def test_polyak_update(algo):
    mod = ALGOS[algo][0]
    net, targ = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    for p in targ.parameters():
        p.requires_grad = False
    expected = [0.9 * pt + 0.1 * p for p, pt in zip(net.parameters(), targ.parameters())]
    mod.polyak_update(net, targ, 0.9)
    for e, pt in zip(expected, targ.parameters()):
        torch.testing.assert_close(pt, e.detach())


# ----------------------------------------------------------------------------- action scaling
@pytest.mark.parametrize("algo", ALGOS)
def test_act_maps_policy_box_onto_asymmetric_bounds(algo):
    core = ALGOS[algo][2]
    low, high = np.array([-1.0, 0.0, 2.0], np.float32), np.array([3.0, 10.0, 2.5], np.float32)
    ac = core.MLPActorCritic(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Box(low, high),
                             hidden_sizes=(8,))
    pi_layer = ac.pi.mu_layer if algo == "sac" else ac.pi.pi[-2]
    obs = torch.randn(4)
    for sign, bound in [(1, high), (-1, low)]:    # saturate tanh at +1 / -1
        with torch.no_grad():
            pi_layer.weight.zero_()
            pi_layer.bias.fill_(sign * 30.0)
        np.testing.assert_allclose(ac.act(obs, deterministic=True), bound, rtol=1e-6)
    with torch.no_grad():
        pi_layer.bias.zero_()                     # tanh(0) = 0 -> the middle of the box
    np.testing.assert_allclose(ac.act(obs, deterministic=True), (low + high) / 2, rtol=1e-6)
    assert {"act_scale", "act_bias"} <= set(ac.state_dict())   # saved with the model


@pytest.mark.parametrize("algo", ALGOS)
def test_discrete_and_unbounded_action_spaces_are_rejected(algo, tmp_path):
    fn = ALGOS[algo][1]
    with pytest.raises(ValueError, match=f"{algo}: action space Discrete"):
        fn(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)


# ----------------------------------------------------------------------------- Q freeze
@pytest.mark.parametrize("algo", ALGOS)
def test_q_params_get_no_gradient_during_policy_step(algo, tmp_path, monkeypatch):
    mod, fn, core = ALGOS[algo]
    made = []

    def actor_critic(obs_space, act_space, **kw):
        made.append(core.MLPActorCritic(obs_space, act_space, **kw))
        return made[-1]

    def q_params():
        ac = made[0]
        return list(ac.q.parameters()) if algo == "ddpg" else \
            list(ac.q1.parameters()) + list(ac.q2.parameters())

    checks = {"q": 0, "pi": 0}

    class SpyAdam(torch.optim.Adam):
        snapshot = None

        def step(self, closure=None):
            mine = {id(p) for g in self.param_groups for p in g["params"]}
            qs = q_params()
            if id(qs[0]) in mine:                       # the Q step: remember Q's gradients
                SpyAdam.snapshot = [p.grad.clone() for p in qs]
                checks["q"] += 1
            elif id(next(made[0].pi.parameters())) in mine:   # the policy step
                assert not any(p.requires_grad for p in qs)
                for p, g in zip(qs, SpyAdam.snapshot):   # the pi loss added nothing to them
                    assert torch.equal(p.grad, g)
                checks["pi"] += 1
            return super().step(closure)

    monkeypatch.setattr(torch.optim, "Adam", SpyAdam)   # torch_tools.adam builds through it
    fn(lambda: gym.make("Pendulum-v1"), actor_critic=actor_critic,
       logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    assert checks["q"] == 100 and checks["pi"] == (50 if algo == "td3" else 100)
    assert all(p.requires_grad for p in q_params())     # unfrozen again


# ----------------------------------------------------------------------------- bootstrapping
class CycleEnv(gym.Env):
    """Episodes cycle through: terminated at step 3, truncated at step 3, and
    running until the algorithm's max_ep_len (4) cuts them."""
    observation_space = gym.spaces.Box(-10, 10, (2,), np.float32)
    action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def __init__(self):
        self.episode, self.flags = -1, []

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.episode, self.t = self.episode + 1, 0
        return np.array([self.episode % 3, 0], np.float32), {}

    def step(self, a):
        self.t += 1
        kind = self.episode % 3
        terminated, truncated = kind == 0 and self.t == 3, kind == 1 and self.t == 3
        self.flags.append(terminated)
        return np.array([kind, self.t], np.float32), 1.0, terminated, truncated, {}


@pytest.mark.parametrize("algo", ALGOS)
def test_only_terminated_is_stored_as_done(algo, tmp_path, monkeypatch):
    mod, fn, _ = ALGOS[algo]
    stored, envs = [], []

    class SpyBuffer(mod.ReplayBuffer):
        def store_batch(self, obs, act, rew, next_obs, done):   # a row per env copy
            stored.extend((tuple(o), tuple(o2), float(d)) for o, o2, d in zip(obs, next_obs, done))
            super().store_batch(obs, act, rew, next_obs, done)

    def env_fn():
        envs.append(CycleEnv())
        return envs[-1]

    monkeypatch.setattr(mod, "ReplayBuffer", SpyBuffer)
    fn(env_fn, max_ep_len=4, logger_kwargs=dict(output_dir=str(tmp_path)), **TINY)
    train_env = envs[0]
    assert len(stored) == 200 == len(train_env.flags)
    assert [d for *_, d in stored] == [float(f) for f in train_env.flags]
    # all three endings happened; only the terminal one has done = 1
    ends = {(o2[0], o2[1]): d for _, o2, d in stored if o2[1] in (3, 4)}
    assert ends == {(0.0, 3.0): 1.0, (1.0, 3.0): 0.0, (2.0, 3.0): 0.0, (2.0, 4.0): 0.0}
