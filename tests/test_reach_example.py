"""The worked example of docs/user/parallel_envs.rst, spinup/examples/reach.py: a batched
task on TensorVectorEnv (shapes, one step by hand, same-step restarts, the time limit,
exact resume) that PPO can train on."""
import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

from spinup.examples import reach
from spinup.examples.reach import Reach

N = 16


def far_from_goal(env):
    """Every copy at rest, 2.8 m from its goal (no copy can terminate in a few steps)."""
    env.state = torch.tensor([[-1.0, -1.0, 0.0, 0.0, 1.0, 1.0]]).repeat(env.num_envs, 1)


def test_shapes_dtypes_and_start_states():
    env = Reach(num_envs=N)
    assert env.max_episode_steps == 200
    obs, info = env.reset(seed=0)
    assert obs.shape == (N, 6) and obs.dtype == torch.float32 and info == {}
    assert torch.all(env.state[:, 2:4] == 0)                     # start at rest
    assert env.state[:, [0, 1, 4, 5]].abs().max() <= 1.0         # p and g in [-1, 1]^2
    assert torch.allclose(obs[:, 4:6], env.state[:, 4:6] - env.state[:, 0:2])
    obs, rew, term, trunc, info = env.step(torch.rand(N, 2) * 4 - 2)
    assert obs.shape == (N, 6) and obs.dtype == torch.float32
    assert rew.shape == (N,) and rew.dtype == torch.float32 and torch.all(rew < 0)
    assert term.dtype == torch.bool and trunc.dtype == torch.bool and term.shape == (N,)
    assert info["final_obs"].shape == (N, 6) and info["_final_obs"].shape == (N,)
    assert env.single_action_space.shape == (2,) and env.action_space.shape == (N, 2)


def test_one_step_by_hand():
    env = Reach(num_envs=1)
    env.reset(seed=0)
    env.state = torch.tensor([[0.0, 0.0, 1.0, -1.0, 1.0, 0.0]])
    _, rew, term, _, info = env.step(torch.tensor([[2.0, 0.5]]))      # force clipped to 1
    vx, vy = 1.0 + 0.1 * (1.0 - 0.5 * 1.0), -1.0 + 0.1 * (0.5 + 0.5 * 1.0)
    px, py = 0.1 * vx, 0.1 * vy                       # moved by the new velocity
    want = [px, py, vx, vy, 1.0 - px, 0.0 - py]
    assert np.allclose(info["final_obs"][0].numpy(), want, atol=1e-6)
    dist = np.hypot(1.0 - px, py)
    assert rew.item() == pytest.approx(-dist - 0.01 * (1.0 + 0.25), abs=1e-6)
    assert not term.item()


def test_finished_copies_restart_in_the_same_step():
    env = Reach(num_envs=N)
    env.reset(seed=1)
    far_from_goal(env)
    env.state[:4] = torch.tensor([0.3, 0.3, 0.0, 0.0, 0.3, 0.3])    # at rest on the goal
    env.elapsed[:] = 7
    obs, _, term, trunc, info = env.step(torch.zeros(N, 2))
    ended = term | trunc
    assert term[:4].all() and not term[4:].any() and not trunc.any()
    assert torch.equal(info["_final_obs"], ended)
    assert torch.allclose(info["final_obs"][:4, 0:2], torch.tensor(0.3))   # where they ended
    assert torch.all(info["final_obs"][:4, 4:6] == 0)
    assert not torch.allclose(obs[:4], info["final_obs"][:4])     # obs: the next episode
    assert torch.all(env.state[:4, 2:4] == 0) and torch.all(env.elapsed[:4] == 0)
    assert torch.equal(obs[4:], info["final_obs"][4:]) and torch.all(env.elapsed[4:] == 8)


def test_truncation_at_200_steps_is_not_a_termination():
    reach.register()
    env = gym.make_vec("spinup/Reach-v0", num_envs=N)    # time limit from the registry
    env.reset(seed=2)
    far_from_goal(env)
    for t in range(1, 201):
        obs, _, term, trunc, info = env.step(torch.zeros(N, 2))
        assert not term.any()
        assert trunc.all() == (t == 200) and trunc.any() == (t == 200)
    assert torch.allclose(info["final_obs"][:, 0:2], torch.tensor(-1.0))  # still at rest
    assert torch.all(env.elapsed == 0) and torch.all(obs[:, 2:4] == 0)


def test_state_dict_round_trip():
    env = Reach(num_envs=N)
    env.reset(seed=3)
    gen = torch.Generator().manual_seed(0)
    acts = [torch.rand(N, 2, generator=gen) * 2 - 1 for _ in range(250)]
    for a in acts[:120]:
        env.step(a)
    saved = env.state_dict()
    first = [env.step(a) for a in acts[120:]]
    other = Reach(num_envs=N)
    other.load_state_dict(saved)
    second = [other.step(a) for a in acts[120:]]
    assert any(s[2].any() or s[3].any() for s in first)    # restarts happened after saving
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a[:4], b[:4], strict=True):
            assert torch.equal(x, y)
        assert torch.equal(a[4]["final_obs"], b[4]["final_obs"])


def test_register_is_idempotent():
    reach.register()
    reach.register()
    env = gym.make_vec("spinup/Reach-v0", num_envs=3)
    assert isinstance(env, Reach) and env.num_envs == 3 and env.max_episode_steps == 200


@pytest.mark.timeout(120)
def test_ppo_runs_two_epochs(tmp_path):
    from spinup import ppo
    reach.register()
    ppo(lambda: gym.make_vec("spinup/Reach-v0", num_envs=8), num_envs=8,
        steps_per_epoch=8 * 25, epochs=2, train_pi_iters=5, train_v_iters=5,
        ac_kwargs=dict(hidden_sizes=(16,)), logger_kwargs=dict(output_dir=str(tmp_path)))
    progress = pd.read_table(tmp_path / "progress.txt")
    assert list(progress["Epoch"]) == [0, 1]
    assert list(progress["TotalEnvInteracts"]) == [200, 400]
