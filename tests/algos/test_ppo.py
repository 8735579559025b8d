"""PPO / VPG: GAE against a brute-force loop, bootstrapping, smoke runs, learning."""
import json

import gymnasium as gym
import numpy as np
import pytest
import torch

from conftest import read_progress, run_cli
from spinup import ppo, vpg
from spinup.algos.ppo.ppo import PPOBuffer

PPO_COLUMNS = ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet", "EpLen",
               "AverageVVals", "StdVVals", "MaxVVals", "MinVVals", "TotalEnvInteracts",
               "LossPi", "LossV", "DeltaLossPi", "DeltaLossV", "Entropy", "KL"]


def brute_force_gae(rews, vals, last_val, gamma, lam):
    T = len(rews)
    v = list(vals) + [last_val]
    adv, ret = np.zeros(T), np.zeros(T)
    for t in range(T):
        adv[t] = sum((gamma * lam) ** (l - t) * (rews[l] + gamma * v[l + 1] - v[l])
                     for l in range(t, T))
        ret[t] = sum(gamma ** (l - t) * rews[l] for l in range(t, T)) + gamma ** (T - t) * last_val
    return adv, ret


@pytest.mark.parametrize("last_val", [0.0, 2.5])
def test_gae_and_rewards_to_go_match_brute_force(last_val):
    rng = np.random.default_rng(0)
    gamma, lam = 0.9, 0.8
    buf = PPOBuffer(obs_dim=(1,), act_dim=(), size=7, gamma=gamma, lam=lam)
    rews, vals = rng.normal(size=7), rng.normal(size=7)
    for r, v in zip(rews[:4], vals[:4]):
        buf.store(np.zeros(1), 0, r, v, 0.0)
    buf.finish_path(0.0)            # first trajectory terminated
    for r, v in zip(rews[4:], vals[4:]):
        buf.store(np.zeros(1), 0, r, v, 0.0)
    buf.finish_path(last_val)       # second one cut off: bootstrap
    adv1, ret1 = brute_force_gae(rews[:4], vals[:4], 0.0, gamma, lam)
    adv2, ret2 = brute_force_gae(rews[4:], vals[4:], last_val, gamma, lam)
    np.testing.assert_allclose(buf.ret_buf[:, 0], np.concatenate([ret1, ret2]), rtol=1e-5)
    np.testing.assert_allclose(buf.adv_buf[:, 0], np.concatenate([adv1, adv2]), rtol=1e-4,
                               atol=1e-5)
    data = buf.get()                # normalised advantages
    assert abs(data["adv"].mean().item()) < 1e-5 and abs(data["adv"].std(unbiased=False) - 1) < 1e-3


class _OneStepTimeLimitEnv(gym.Env):
    """Reward 1 every step, episodes truncated after 3 steps: never terminated."""
    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, a):
        self.t += 1
        return np.zeros(2, np.float32), 1.0, False, self.t >= 3, {}


def test_truncation_bootstraps_from_value(tmp_path, monkeypatch):
    captured = []
    original = PPOBuffer.finish_paths
    monkeypatch.setattr(PPOBuffer, "finish_paths",
                        lambda self, copies, last_vals, terminated: (
                            captured.extend(map(float, last_vals)),
                            original(self, copies, last_vals, terminated))[1])
    ppo(_OneStepTimeLimitEnv, steps_per_epoch=12, epochs=1, train_pi_iters=1, train_v_iters=1,
        logger_kwargs=dict(output_dir=str(tmp_path)))
    assert len(captured) == 4 and all(v != 0.0 for v in captured)  # V(s_T), not 0


@pytest.mark.parametrize("algo", [ppo, vpg])
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_smoke_library(tmp_path, algo, env_id):
    ac = algo(lambda: gym.make(env_id), steps_per_epoch=300, epochs=2,
              ac_kwargs=dict(hidden_sizes=[16]), logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    expected = PPO_COLUMNS + (["ClipFrac", "StopIter"] if algo is ppo else []) + ["Time"]
    assert list(df.columns) == expected
    assert list(df["TotalEnvInteracts"]) == [300, 600]
    assert isinstance(ac, torch.nn.Module)
    if algo is vpg:  # KL is measured after the update (upstream logged ~0 before it)
        assert (df["KL"].abs() > 0).all()


def test_smoke_cli_vpg(tmp_path):
    run_cli("vpg", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--exp_name", "v", "--data_dir", tmp_path)
    assert read_progress(tmp_path / "v" / "v_s0")["TotalEnvInteracts"].iloc[0] == 200


def test_smoke_cli_ppo_with_entropy_bonus_and_clipped_value_loss(tmp_path):
    run_cli("ppo", "--env", "Pendulum-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--ent_coef", 0.01, "--clip_vloss", "--minibatch_size", 64, "--exp_name", "p",
            "--data_dir", tmp_path)
    config = json.loads((tmp_path / "p" / "p_s0" / "config.json").read_text())
    assert config["ent_coef"] == 0.01 and config["clip_vloss"] is True
    assert config["minibatch_size"] == 64
    assert read_progress(tmp_path / "p" / "p_s0")["TotalEnvInteracts"].iloc[0] == 200


def test_same_seed_same_progress(tmp_path):
    torch.set_num_threads(1)
    for run in ("a", "b"):
        ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=300, epochs=2, seed=3,
            logger_kwargs=dict(output_dir=str(tmp_path / run)))
    a, b = (read_progress(tmp_path / r).drop(columns="Time") for r in ("a", "b"))
    assert a.equals(b)


def test_bad_spaces_are_clear_errors(tmp_path):
    class DictObsEnv(_OneStepTimeLimitEnv):
        observation_space = gym.spaces.Dict({"x": gym.spaces.Box(-1, 1, (2,))})
    with pytest.raises(ValueError, match="FlattenObservation"):
        ppo(DictObsEnv, epochs=1, logger_kwargs=dict(output_dir=str(tmp_path)))


@pytest.mark.slow
@pytest.mark.parametrize("extra", [{}, dict(ent_coef=0.01, clip_vloss=True),
                                   dict(minibatch_size=500, train_pi_iters=10, train_v_iters=10)],
                         ids=["default", "entropy_bonus_and_clipped_value_loss", "minibatches"])
def test_ppo_learns_cartpole(tmp_path, extra):
    ppo(lambda: gym.make("CartPole-v1"), seed=0, epochs=15,
        logger_kwargs=dict(output_dir=str(tmp_path)), **extra)
    df = read_progress(tmp_path)
    assert df["AverageEpRet"].iloc[-3:].mean() > 150, df["AverageEpRet"].tolist()


def _spy_on_batches(monkeypatch, buffer_cls):
    """Keep a copy of every batch that ``buffer_cls.get`` hands to the update."""
    batches = []
    original_get = buffer_cls.get

    def get(self):
        data = original_get(self)
        batches.append({k: v.clone() for k, v in data.items()})
        return data
    monkeypatch.setattr(buffer_cls, "get", get)
    return batches


def test_minibatches_are_passes_over_the_batch_in_new_random_orders(tmp_path, monkeypatch):
    # With minibatch_size, each of train_pi_iters (train_v_iters) iterations is one pass:
    # the steps' minibatches, 300 + 300 + 300 + 100 rows of a 1,000-sample batch, hold
    # every sample of the batch once, in an order that changes from pass to pass.
    from spinup.algos.ppo import core
    batches = _spy_on_batches(monkeypatch, PPOBuffer)
    seen = {"pi": [], "v": []}
    for name, cls, method in (("pi", core.MLPCategoricalActor, "distribution"),
                              ("v", core.MLPCritic, "forward")):
        def spy(self, obs, _orig=getattr(cls, method), _name=name):
            if obs.dim() == 2 and len(obs) != 1:   # not the one-observation acting calls
                seen[_name].append(obs.clone())
            return _orig(self, obs)
        monkeypatch.setattr(cls, method, spy)
    ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=1000, epochs=1, seed=2,
        train_pi_iters=3, train_v_iters=2, target_kl=100.0, minibatch_size=300,
        ac_kwargs=dict(hidden_sizes=[8]), logger_kwargs=dict(output_dir=str(tmp_path)))
    assert read_progress(tmp_path)["StopIter"].iloc[0] == 3 * 4   # steps, not passes
    rows = batches[0]["obs"].numpy()
    # the policy: the full batch before and after the update, 3 passes of 4 steps between;
    # the value function: before, 2 passes of 4, after (and its own acting calls: none)
    pi_steps, v_steps = seen["pi"][1:-1], seen["v"][1:-1]
    assert [len(obs) for obs in pi_steps] == [300, 300, 300, 100] * 3
    assert [len(obs) for obs in v_steps] == [300, 300, 300, 100] * 2
    orders = []
    for steps in (pi_steps, v_steps):
        for k in range(0, len(steps), 4):
            one_pass = torch.cat(steps[k:k + 4]).numpy()
            order = np.lexsort(one_pass.T[::-1])
            np.testing.assert_array_equal(one_pass[order], rows[np.lexsort(rows.T[::-1])])
            orders.append(one_pass[:5])
    assert not np.array_equal(orders[0], orders[1])   # a new order in the next pass


def test_ppo_logs_kl_clipfrac_and_deltas_after_the_update(tmp_path, monkeypatch):
    # One large policy step (train_pi_iters=1, pi_lr=0.05, no early stopping): the
    # logged KL, ClipFrac, DeltaLossPi and DeltaLossV must be those of the policy and
    # value function *after* the update, recomputed here from the returned module on
    # the epoch's batch. Spinning Up logged them from before the last step, which with
    # one policy step is the untouched policy: KL ~ 0 and ClipFrac = 0.
    batches = _spy_on_batches(monkeypatch, PPOBuffer)
    clip_ratio = 0.2
    ac = ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=200, epochs=1, seed=1,
             train_pi_iters=1, train_v_iters=3, pi_lr=0.05, target_kl=100.0,
             clip_ratio=clip_ratio, ac_kwargs=dict(hidden_sizes=[16]),
             logger_kwargs=dict(output_dir=str(tmp_path)))
    row = read_progress(tmp_path).iloc[0]
    data = batches[0]
    with torch.no_grad():
        _, logp = ac.pi(data["obs"], data["act"])
        ratio = torch.exp(logp - data["logp"])
        kl = (data["logp"] - logp).mean().item()
        clip_frac = ((ratio - 1).abs() > clip_ratio).float().mean().item()
        clipped = torch.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio)
        loss_pi = -torch.min(ratio * data["adv"], clipped * data["adv"]).mean().item()
        loss_v = ((ac.v(data["obs"]) - data["ret"]) ** 2).mean().item()
    assert abs(kl) > 1e-3 and clip_frac > 0  # the step really moved the policy
    assert row["KL"] == pytest.approx(kl, rel=1e-5)
    assert row["ClipFrac"] == pytest.approx(clip_frac, abs=1e-6)
    assert row["LossPi"] + row["DeltaLossPi"] == pytest.approx(loss_pi, rel=1e-5, abs=1e-6)
    assert row["LossV"] + row["DeltaLossV"] == pytest.approx(loss_v, rel=1e-5)
    assert row["StopIter"] == 1  # no early stop: all train_pi_iters (= 1) steps taken


def test_ppo_entropy_bonus_and_clipped_value_loss_are_the_losses_it_logs(tmp_path, monkeypatch):
    # With ent_coef and clip_vloss, the logged losses before and after the update must be
    # the objective with the entropy bonus (entropy from torch.distributions) and the
    # value loss clipped around the values stored while acting, recomputed here. The
    # value steps are large and the clip small, so that the clipped loss differs from
    # the plain one after the update.
    batches = _spy_on_batches(monkeypatch, PPOBuffer)
    clip_ratio, ent_coef = 0.05, 0.3
    ac = ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=200, epochs=1, seed=3,
             train_pi_iters=2, train_v_iters=4, pi_lr=0.02, vf_lr=0.05, target_kl=100.0,
             clip_ratio=clip_ratio, ac_kwargs=dict(hidden_sizes=[16]), ent_coef=ent_coef,
             clip_vloss=True, logger_kwargs=dict(output_dir=str(tmp_path)))
    row = read_progress(tmp_path).iloc[0]
    data = batches[0]
    with torch.no_grad():
        logits = ac.pi.logits_net(data["obs"])
        dist = torch.distributions.Categorical(logits=logits)
        ratio = torch.exp(dist.log_prob(data["act"]) - data["logp"])
        clipped = torch.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio)
        surrogate = torch.min(ratio * data["adv"], clipped * data["adv"]).mean()
        loss_pi = -(surrogate + ent_coef * dist.entropy().mean()).item()
        v, old, ret = ac.v(data["obs"]), data["val"], data["ret"]
        plain = (v - ret) ** 2
        moved = old + torch.clamp(v - old, -clip_ratio, clip_ratio)
        loss_v = torch.max(plain, (moved - ret) ** 2).mean().item()
    assert loss_v > plain.mean().item() * 1.01          # the clip is at work
    assert row["LossPi"] + row["DeltaLossPi"] == pytest.approx(loss_pi, rel=1e-5, abs=1e-6)
    assert row["LossV"] + row["DeltaLossV"] == pytest.approx(loss_v, rel=1e-5)
    # before the update the policy is the one that acted: ratio 1, surrogate mean(adv)
    assert row["LossPi"] == pytest.approx(
        -(data["adv"].mean().item() + ent_coef * row["Entropy"]), abs=1e-5)
    assert 0.5 < row["Entropy"] <= np.log(2)   # two actions, a fresh policy near uniform


class _TwoActionDimsEnv(gym.Env):
    """A Box action of 2 dimensions; the reward is minus its squared distance to 0.3."""
    observation_space = gym.spaces.Box(-1, 1, (3,), np.float32)
    action_space = gym.spaces.Box(-1, 1, (2,), np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.uniform(-1, 1, 3).astype(np.float32), {}

    def step(self, a):
        obs = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        return obs, -float(((np.asarray(a) - 0.3) ** 2).sum()), False, False, {}


def test_ppo_entropy_bonus_of_a_gaussian_is_the_joint_entropy(tmp_path, monkeypatch):
    # A Box action of 2 dimensions: the bonus is the entropy of the whole action (the sum
    # over its dimensions, as torch.distributions.Independent gives), not their mean.
    batches = _spy_on_batches(monkeypatch, PPOBuffer)
    ent_coef = 0.5
    ac = ppo(_TwoActionDimsEnv, steps_per_epoch=100, epochs=1, seed=4, train_pi_iters=2,
             train_v_iters=1, pi_lr=0.05, target_kl=100.0, max_ep_len=20, ent_coef=ent_coef,
             ac_kwargs=dict(hidden_sizes=[8]), logger_kwargs=dict(output_dir=str(tmp_path)))
    row = read_progress(tmp_path).iloc[0]
    data = batches[0]
    with torch.no_grad():
        normal = torch.distributions.Normal(ac.pi.mu_net(data["obs"]), ac.pi.log_std.exp())
        dist = torch.distributions.Independent(normal, 1)
        ratio = torch.exp(dist.log_prob(data["act"]) - data["logp"])
        clipped = torch.clamp(ratio, 0.8, 1.2)
        surrogate = torch.min(ratio * data["adv"], clipped * data["adv"]).mean()
        loss_pi = -(surrogate + ent_coef * dist.entropy().mean()).item()
    assert row["LossPi"] + row["DeltaLossPi"] == pytest.approx(loss_pi, rel=1e-5, abs=1e-6)
    # the logged Entropy is per dimension: the bonus before the update is twice it
    assert row["LossPi"] == pytest.approx(
        -(data["adv"].mean().item() + ent_coef * 2 * row["Entropy"]), abs=1e-5)


def test_ppo_early_stopping_logs_the_kl_that_stopped_it(tmp_path):
    # With a tiny target_kl the loop stops after one step; no step follows the KL
    # check that fired, so the logged (post-update) KL is above 1.5 * target_kl.
    ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=200, epochs=1, seed=2,
        pi_lr=0.01, target_kl=1e-6, train_v_iters=1, ac_kwargs=dict(hidden_sizes=[16]),
        logger_kwargs=dict(output_dir=str(tmp_path)))
    row = read_progress(tmp_path).iloc[0]
    assert row["StopIter"] == 1
    assert row["KL"] > 1.5e-6


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epochs=0), ValueError, "ppo: epochs=0"),
    (dict(steps_per_epoch=-4), ValueError, "steps_per_epoch"),
    (dict(steps_per_epoch=100.0), TypeError, "steps_per_epoch=100.0 is not allowed: an int"),
    (dict(train_pi_iters=True), TypeError, "train_pi_iters"),
    (dict(train_v_iters=0), ValueError, "train_v_iters"),
    (dict(gamma=1.5), ValueError, "0 <= gamma <= 1"),
    (dict(lam=0.0), ValueError, "0 < lam <= 1"),
    (dict(pi_lr=0.0), ValueError, "pi_lr > 0"),
    (dict(vf_lr=-1e-3), ValueError, "vf_lr > 0"),
    (dict(clip_ratio=0), ValueError, "0 < clip_ratio < 1"),
    (dict(target_kl=float("nan")), ValueError, "target_kl > 0"),
    (dict(target_kl="0.01"), TypeError, "target_kl='0.01' is not allowed: a finite number"),
    (dict(max_ep_len=0), ValueError, "max_ep_len"),
    (dict(save_freq=0), ValueError, "save_freq"),
    (dict(ent_coef=-0.01), ValueError, "ent_coef >= 0"),
    (dict(clip_vloss="yes"), TypeError, "clip_vloss"),
    (dict(minibatch_size=0), ValueError, "minibatch_size=0 .* from 1 to"),
    (dict(minibatch_size=4001), ValueError, r"steps_per_epoch / processes = 4000\)"),
    (dict(minibatch_size=64.0), TypeError, "minibatch_size=64.0"),
])
def test_bad_arguments_fail_before_anything_is_written(tmp_path, kwargs, error, match):
    out = tmp_path / "out"
    with pytest.raises(error, match=match):
        ppo(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)), **kwargs)
    assert not out.exists()


def test_minibatch_size_is_checked_against_one_process_share():
    from spinup.machinery.arg_checks import check_args
    check_args("ppo", ppo, dict(steps_per_epoch=400, minibatch_size=200), procs=2)
    with pytest.raises(ValueError, match=r"minibatch_size=201 .*processes = 200\)"):
        check_args("ppo", ppo, dict(steps_per_epoch=400, minibatch_size=201), procs=2)


def test_bad_spaces_fail_before_anything_is_written(tmp_path):
    class MultiBinaryActionEnv(_OneStepTimeLimitEnv):
        action_space = gym.spaces.MultiBinary(3)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="ppo: action space"):
        ppo(MultiBinaryActionEnv, logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_actor_critic_shapes_and_state_dict_keys(env_id):
    from spinup.algos.ppo.core import MLPActorCritic
    env = gym.make(env_id)
    ac = MLPActorCritic(env.observation_space, env.action_space, hidden_sizes=(8,))
    head = ["pi.logits_net"] if env_id == "CartPole-v1" else ["pi.log_std", "pi.mu_net"]
    keys = list(ac.state_dict())
    # The keys are the saved-model format: they must not change.
    net = head[-1]
    expected = head[:-1] + [f"{net}.0.weight", f"{net}.0.bias", f"{net}.2.weight",
                            f"{net}.2.bias", "v.v_net.0.weight", "v.v_net.0.bias",
                            "v.v_net.2.weight", "v.v_net.2.bias"]
    assert keys == expected
    obs = torch.as_tensor(np.stack([env.observation_space.sample() for _ in range(5)]))
    pi, logp = ac.pi(obs, torch.as_tensor(np.stack([env.action_space.sample()
                                                     for _ in range(5)])))
    assert logp.shape == (5,) and ac.v(obs).shape == (5,)
    a, v, logp_a = ac.step(obs[0])
    assert a.shape == env.action_space.shape and v.shape == () and logp_a.shape == ()
    det = ac.act(obs, deterministic=True)
    np.testing.assert_array_equal(det, ac.act(obs, deterministic=True))
