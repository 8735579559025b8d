"""VPG: buffer targets, diagnostics measured after the update, argument checks.

(Smoke runs of VPG, library and CLI, live in test_ppo.py beside PPO's.)
"""
import gymnasium as gym
import numpy as np
import pytest
import torch

from conftest import read_progress
from spinup import vpg
from spinup.algos.vpg.vpg import VPGBuffer


def test_buffer_targets_for_a_terminated_and_a_cut_off_trajectory():
    gamma, lam = 0.5, 0.5
    buf = VPGBuffer(obs_dim=(2,), act_dim=(), size=3, gamma=gamma, lam=lam)
    for r, v in [(1.0, 0.5), (2.0, 1.0)]:
        buf.store(np.zeros(2), 1, r, v, -0.7)
    buf.finish_path(0)  # terminated: V(s_T) = 0
    buf.store(np.ones(2), 0, 4.0, 2.0, -0.1)
    buf.finish_path(8.0)  # cut off: bootstrap from V(s_T) = 8
    # rewards-to-go by hand: [1 + 0.5*2, 2, 4 + 0.5*8]
    np.testing.assert_allclose(buf.ret_buf[:, 0], [2.0, 2.0, 8.0])
    # deltas: [1 + 0.5*1 - 0.5, 2 + 0 - 1, 4 + 0.5*8 - 2] = [1, 1, 6]; GAE with 0.25
    np.testing.assert_allclose(buf.adv_buf[:, 0], [1.25, 1.0, 6.0])
    data = buf.get()
    assert set(data) == {"obs", "act", "ret", "adv", "logp"}
    assert data["obs"].shape == (3, 2) and data["act"].shape == (3,)
    assert abs(data["adv"].mean().item()) < 1e-6
    assert buf.ptr == 0 and buf.path_start_idx == 0


def test_buffer_refuses_overflow_and_early_get():
    buf = VPGBuffer(obs_dim=(1,), act_dim=(), size=1)
    with pytest.raises(RuntimeError, match="only 0 of 1"):
        buf.get()
    buf.store(np.zeros(1), 0, 0.0, 0.0, 0.0)
    with pytest.raises(RuntimeError, match="full"):
        buf.store(np.zeros(1), 0, 0.0, 0.0, 0.0)


def test_vpg_logs_kl_and_deltas_after_the_update(tmp_path, monkeypatch):
    batches = []
    original_get = VPGBuffer.get

    def get(self):
        data = original_get(self)
        batches.append({k: v.clone() for k, v in data.items()})
        return data
    monkeypatch.setattr(VPGBuffer, "get", get)
    ac = vpg(lambda: gym.make("CartPole-v1"), steps_per_epoch=200, epochs=1, seed=1,
             pi_lr=0.05, train_v_iters=3, ac_kwargs=dict(hidden_sizes=[16]),
             logger_kwargs=dict(output_dir=str(tmp_path)))
    row = read_progress(tmp_path).iloc[0]
    data = batches[0]
    with torch.no_grad():
        _, logp = ac.pi(data["obs"], data["act"])
        kl = (data["logp"] - logp).mean().item()
        loss_pi = -(logp * data["adv"]).mean().item()
        loss_v = ((ac.v(data["obs"]) - data["ret"]) ** 2).mean().item()
    assert abs(kl) > 1e-3
    assert row["KL"] == pytest.approx(kl, rel=1e-5)
    assert row["LossPi"] + row["DeltaLossPi"] == pytest.approx(loss_pi, rel=1e-5, abs=1e-6)
    assert row["LossV"] + row["DeltaLossV"] == pytest.approx(loss_v, rel=1e-5)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epochs=-1), ValueError, "vpg: epochs=-1"),
    (dict(steps_per_epoch="4000"), TypeError, "steps_per_epoch='4000' is not allowed: an int"),
    (dict(gamma=-0.1), ValueError, "0 <= gamma <= 1"),
    (dict(lam=1.01), ValueError, "0 < lam <= 1"),
    (dict(pi_lr=0), ValueError, "pi_lr > 0"),
    (dict(train_v_iters=0), ValueError, "train_v_iters"),
    (dict(max_ep_len=-5), ValueError, "max_ep_len"),
])
def test_bad_arguments_fail_before_anything_is_written(tmp_path, kwargs, error, match):
    out = tmp_path / "out"
    with pytest.raises(error, match=match):
        vpg(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)), **kwargs)
    assert not out.exists()


def test_non_flat_observations_point_to_flatten_observation(tmp_path):
    out = tmp_path / "out"
    env_fn = lambda: gym.make("CartPole-v1").unwrapped  # noqa: E731
    class ImageObs(gym.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.observation_space = gym.spaces.Box(0, 1, (2, 2), np.float32)

        def observation(self, obs):
            return np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError, match="FlattenObservation"):
        vpg(lambda: ImageObs(env_fn()), logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()
