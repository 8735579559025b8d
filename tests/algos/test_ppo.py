"""PPO / VPG: GAE against a brute-force loop, bootstrapping, smoke runs, learning."""
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
    np.testing.assert_allclose(buf.ret_buf, np.concatenate([ret1, ret2]), rtol=1e-5)
    np.testing.assert_allclose(buf.adv_buf, np.concatenate([adv1, adv2]), rtol=1e-4, atol=1e-5)
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
    original = PPOBuffer.finish_path
    monkeypatch.setattr(PPOBuffer, "finish_path",
                        lambda self, last_val=0: (captured.append(float(last_val)),
                                                  original(self, last_val))[1])
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
def test_ppo_learns_cartpole(tmp_path):
    ppo(lambda: gym.make("CartPole-v1"), seed=0, epochs=15,
        logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    assert df["AverageEpRet"].iloc[-3:].mean() > 150, df["AverageEpRet"].tolist()
