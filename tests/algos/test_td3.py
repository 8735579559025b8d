"""TD3: smoke runs (library, CLI) and target policy smoothing clip bounds."""
import os

import gymnasium as gym
import numpy as np
import torch

import spinup.algos.td3.core as core
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
    td3(lambda: gym.make("Pendulum-v1"), actor_critic=actor_critic, pi_lr=0.0,
        target_noise=10.0, noise_clip=noise_clip, logger_kwargs=dict(output_dir=str(tmp_path)),
        **TINY)
    a2 = torch.cat(RecordingQ.target_actions)
    assert len(RecordingQ.target_actions) == 100 and a2.shape == (100 * 32, 1)
    # a' = clip(1 + clip(eps, -c, c), -1, 1) with |eps| >> c: both clips are active
    assert a2.min() >= 1 - noise_clip - 1e-6 and a2.max() <= 1.0
    assert (a2 == 1.0).float().mean() > 0.4 and (a2 - (1 - noise_clip)).abs().min() < 1e-6
