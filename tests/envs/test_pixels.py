"""Pixels: the convolutional networks, Atari's preprocessing (gymnasium's wrappers against
ale-py's vector env), MinAtar, the replay of frame stacks, and short runs of DQN, PPO, A2C
and VPG on image tasks (spinup/envs/pixels.py, docs/user/pixels.rst)."""
import json
import os

import gymnasium as gym
import numpy as np
import pytest
import torch

from spinup.envs import pixels
from spinup.utils.torch_tools import ConvTorso, is_image_space

pytest.importorskip("ale_py")
pytest.importorskip("minatar")
pytest.importorskip("cv2")

FRAMES = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)   # stacked Atari frames
GRID = gym.spaces.Box(0, 1, (10, 10, 7), bool)          # MinAtar Freeway


# ---- Networks ----

def test_image_spaces_are_told_from_vectors():
    assert is_image_space(FRAMES) and is_image_space(GRID)
    assert not is_image_space(gym.spaces.Box(-1, 1, (4,), np.float32))
    assert not is_image_space(gym.spaces.Box(0, 1, (4, 84, 84), np.float32))


def test_conv_torso_sizes_channels_and_scaling():
    nature, small = ConvTorso(FRAMES), ConvTorso(GRID)
    assert (nature.kind, nature.width, nature.channels_last) == ("nature", 3136, False)
    assert (small.kind, small.width, small.channels_last) == ("small", 1024, True)
    assert ConvTorso(gym.spaces.Box(0, 255, (210, 160, 3), np.uint8)).channels_last
    assert ConvTorso(gym.spaces.Box(0, 1, (10, 10, 10), bool)).channels_last   # a tie: HWC
    # frames are divided by 255 inside, whether they come as uint8 or as float32 values
    x = torch.as_tensor(np.stack([FRAMES.sample() for _ in range(2)]))
    assert torch.equal(nature(x), nature(x.float()))
    assert torch.allclose(nature(x), nature.convs(x.float() / 255), atol=1e-6)
    assert nature(x[0]).shape == (3136,)   # one image, no batch axis
    grid = torch.zeros(3, 10, 10, 7, dtype=torch.bool)
    assert small(grid).shape == (3, 1024)
    # channels last is the same network as channels first on the permuted image
    g = torch.rand(1, 10, 10, 7) > 0.5
    manual = small.convs(g.permute(0, 3, 1, 2).float())
    assert torch.equal(small(g), manual)


def test_conv_torso_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="at least 36x36"):
        ConvTorso(GRID, "nature")
    with pytest.raises(ValueError, match="not one of"):
        ConvTorso(GRID, "resnet")


@pytest.mark.parametrize("algo", ["ppo", "vpg", "a2c"])
@pytest.mark.parametrize("space", [FRAMES, GRID], ids=["atari", "minatar"])
def test_on_policy_cnn_actor_critics(algo, space):
    import importlib
    core = importlib.import_module(f"spinup.algos.{algo}.core")
    assert core.default_actor_critic(space) is core.CNNActorCritic
    assert core.default_actor_critic(gym.spaces.Box(-1, 1, (3,))) is core.MLPActorCritic
    obs = torch.as_tensor(space.sample()[None].repeat(5, 0), dtype=torch.float32)
    ac = core.CNNActorCritic(space, gym.spaces.Discrete(6))
    a, v, logp = ac.step(obs)
    assert a.shape == v.shape == logp.shape == (5,)
    pi, logp_a = ac.pi(obs, torch.as_tensor(a))
    assert torch.allclose(logp_a, torch.as_tensor(logp), atol=1e-5)
    # separate torsos: the value loss does not move the policy
    assert not set(map(id, ac.pi.parameters())) & set(map(id, ac.v.parameters()))
    box = core.CNNActorCritic(space, gym.spaces.Box(-1, 1, (2,)), hidden_sizes=(32,))
    assert box.step(obs)[0].shape == (5, 2)


@pytest.mark.parametrize("dueling", [False, True])
def test_cnn_q_function(dueling):
    from spinup.algos.dqn import core
    assert core.default_q_function(FRAMES) is core.CNNQFunction
    q = core.CNNQFunction(FRAMES, gym.spaces.Discrete(6), dueling=dueling)
    x = torch.as_tensor(np.stack([FRAMES.sample() for _ in range(3)]))
    assert q(x).shape == (3, 6) and q.act(x[0]).shape == ()
    if not dueling:   # the Nature network: 3 convolutions, 512 ReLUs, one value per action
        assert core.count_vars(q) == 1_687_206


# ---- Atari ----

def test_atari_env_is_preprocessed_the_standard_way():
    env = pixels.make_atari("ALE/Breakout-v5")
    assert env.observation_space.shape == (4, 84, 84)
    assert env.observation_space.dtype == np.uint8
    kinds = [type(layer).__name__ for layer in pixels._layers(env)]
    assert kinds[:5] == ["FrameStackObservation", "ClipReward", "FireReset", "EpisodicLife",
                         "GameScore"]
    assert "AtariPreprocessing" in kinds
    assert env.unwrapped._frameskip == 1 and env.unwrapped.ale.getFloat(
        "repeat_action_probability") == pytest.approx(0.25)
    assert pixels.frame_stack(env) == 4
    o, _ = env.reset(seed=0)
    assert (o[:3] == 0).all() and o[3].any()   # zero padding before the first frame
    evaluation = pixels.make_atari("ALE/Breakout-v5", training=False)
    kinds = [type(layer).__name__ for layer in pixels._layers(evaluation)]
    assert "EpisodicLife" not in kinds and "ClipReward" not in kinds
    env.close(), evaluation.close()


def test_episodic_life_ends_an_episode_per_life_and_game_score_keeps_the_game():
    env = pixels.make_atari("ALE/Breakout-v5", noop_max=0)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    ends, lives = 0, []
    for _ in range(5000):
        _, r, terminated, truncated, _ = env.step(int(rng.integers(4)))
        assert r in (-1.0, 0.0, 1.0)   # clipped
        if terminated or truncated:
            ends += 1
            lives.append(env.unwrapped.ale.lives())
            if not pixels.finished_games([env]) == [] or lives[-1] == 0:
                break
            env.reset()
    # five lives: four episodes end with the game going on, the fifth ends the game
    assert lives[:4] == [4, 3, 2, 1] and ends == 5
    env.close()


def test_game_score_is_the_unclipped_score():
    env = pixels.make_atari("ALE/Breakout-v5", noop_max=0)
    score = pixels.GameScore(gym.make("ALE/Breakout-v5"))   # directly on the raw game
    assert pixels.finished_games([score]) == []
    env.reset(seed=0)
    layer = next(x for x in pixels._layers(env) if isinstance(x, pixels.GameScore))
    layer.finished.append((7.0, 120))
    assert pixels.finished_games([env]) == [(7.0, 120)]
    assert pixels.finished_games([env]) == []   # taken once
    env.close(), score.close()


def test_gymnasium_wrappers_and_ale_vector_env_give_the_same_observations():
    """The same game seen through gymnasium's wrappers and through ale-py's C++ vector env
    (no sticky actions or no-op starts, so both are deterministic): the same frames, rewards
    and episode end, step for step, over a whole game of Pong."""
    from ale_py.vector_env import AtariVectorEnv
    env = pixels.make_atari("ALE/Pong-v5", training=False, noop_max=0, fire_reset=False,
                            repeat_action_probability=0.0)
    vec = AtariVectorEnv("pong", 1, autoreset_mode="SameStep", reward_clipping=False,
                         noop_max=0, use_fire_reset=False, repeat_action_probability=0.0)
    o, _ = env.reset(seed=0)
    ov, _ = vec.reset(seed=0)
    assert np.array_equal(o, ov[0])
    rng = np.random.default_rng(0)
    for t in range(3000):
        a = int(rng.integers(6))
        o, r, terminated, truncated, _ = env.step(a)
        ov, rv, tv, truncv, info = vec.step(np.array([a]))
        assert r == rv[0] and terminated == tv[0], t
        if terminated:   # the vector env has already started the next game
            assert np.array_equal(o, info["final_obs"][0])
            break
        assert np.array_equal(o, ov[0]), t
    else:
        pytest.fail("no game of Pong ended in 3000 steps")
    env.close(), vec.close()


# ---- Replay of frame stacks ----

class _Frames(gym.Env):
    """Random 3x3 frames; episodes of 2 to 6 steps, ended by termination or truncation."""
    observation_space = gym.spaces.Box(0, 255, (3, 3), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.length = 0, int(self.np_random.integers(2, 7))
        return self.np_random.integers(1, 256, (3, 3), dtype=np.uint8), {}

    def step(self, action):
        self.t += 1
        frame = self.np_random.integers(1, 256, (3, 3), dtype=np.uint8)
        done = self.t >= self.length
        return frame, float(self.np_random.normal()), done and self.length % 2 == 0, \
            done and self.length % 2 == 1, {}


def _fill(buffers, steps=60, num_envs=2, seed=0):
    """Step ``num_envs`` stacked _Frames envs as DQN does and store every transition in
    each of ``buffers``."""
    from spinup.algos.dqn.core import next_states
    envs = [gym.wrappers.FrameStackObservation(_Frames(), 4, padding_type="zero")
            for _ in range(num_envs)]
    o = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)])
    for _ in range(steps):
        out = [e.step(0) for e in envs]
        o2 = np.stack([x[0] for x in out])
        r = np.array([x[1] for x in out])
        term = np.array([x[2] for x in out])
        ended = term | np.array([x[3] for x in out])
        s2 = next_states(o2, list(o2), ended)
        for buf in buffers:
            buf.store_batch(o, np.zeros(num_envs, int), r, s2, term, ended)
        o = np.stack([e.reset()[0] if d else x for e, d, x in zip(envs, ended, o2)])


@pytest.mark.parametrize("prioritized", [False, True])
@pytest.mark.parametrize("num_envs", [1, 2])
def test_frame_replay_gives_back_the_stacks_it_was_given(prioritized, num_envs):
    """A buffer that keeps the newest frame per slot hands out the same batches as one
    that keeps whole stacks: obs, obs2, n-step returns, after the buffer has wrapped."""
    from spinup.algos.dqn.dqn import PrioritizedReplayBuffer, ReplayBuffer
    make = PrioritizedReplayBuffer if prioritized else ReplayBuffer
    whole = make((4, 3, 3), 26, 0.9, 3, num_envs=num_envs, obs_dtype=np.uint8)
    frames = make((4, 3, 3), 26, 0.9, 3, num_envs=num_envs, obs_dtype=np.uint8, frames=4)
    _fill([whole, frames], num_envs=num_envs)
    assert frames.obs_buf.shape == (26, 3, 3) and whole.obs_buf.shape == (26, 4, 3, 3)
    slots = np.arange(26)
    usable = slots[frames.has_frames(slots)]
    assert 0 < len(usable) < 26   # wrapped: the oldest slots lost their earlier frames
    a, b = whole.get(usable), frames.get(usable)
    for key in ("obs", "obs2", "ret", "done", "disc", "act"):
        assert torch.equal(a[key], b[key]), key
    for _ in range(20):   # draws skip the slots without their frames
        assert frames.has_frames(frames.sample_batch(8)["idxs"] if prioritized else
                                 np.random.randint(0, 26, 1)).dtype == bool
    if prioritized:
        lost = slots[~frames.has_frames(slots)]
        assert (frames.tree.get(lost) == 0).all()
    else:
        np.random.seed(0)
        for _ in range(20):
            batch = frames.sample_batch(16)
            assert batch["obs"].shape == (16, 4, 3, 3)


def test_frame_replay_refuses_stacks_that_do_not_continue():
    from spinup.algos.dqn.dqn import ReplayBuffer
    buf = ReplayBuffer((4, 3, 3), 10, frames=4, obs_dtype=np.uint8)
    padded = np.zeros((1, 4, 3, 3), np.uint8)
    padded[0, -1] = 5
    buf.store_batch(padded, [0], [0.0], padded, [False], [False])
    repeated = np.full((1, 4, 3, 3), 7, np.uint8)   # 'reset' padding: not zeros, no match
    with pytest.raises(ValueError, match="padding_type='zero'"):
        buf.store_batch(repeated, [0], [0.0], repeated, [False], [False])


def test_replay_memory_refusal_counts_frames(monkeypatch):
    from spinup.machinery import memory
    assert memory.replay_bytes(FRAMES, 1_000_000, frames=4) == 1_000_000 * (2 * 7056 + 1)
    assert memory.replay_bytes(FRAMES, 10) == 10 * 2 * 4 * 7056
    assert memory.replay_bytes(gym.spaces.Box(-1, 1, (3,)), 10) == 10 * 2 * 3 * 4
    monkeypatch.setattr(memory, "available_memory", lambda: 10**9)
    with pytest.raises(ValueError, match=r"dqn: replay_size=1000000 would keep 14\.1 GB .*"
                                         r"14,113 bytes per transition"):
        memory.check_replay_memory("dqn", {"replay_size": 1_000_000}, FRAMES, 4)
    memory.check_replay_memory("dqn", {"replay_size": 10_000}, FRAMES, 4)   # fits


# ---- Runs ----

def _minatar(game="Breakout"):
    pixels.register_minatar()
    return lambda: gym.make(f"MinAtar/{game}-v1")


@pytest.mark.parametrize("algo", ["ppo", "vpg", "a2c", "dqn"])
def test_every_pixel_algorithm_runs_on_minatar(algo, tmp_path):
    import spinup
    fn = getattr(spinup, algo)
    kw = dict(steps_per_epoch=64, epochs=1, num_envs=2,
              logger_kwargs=dict(output_dir=str(tmp_path), exp_name=algo))
    if algo == "dqn":
        kw.update(start_steps=16, update_after=16, batch_size=8, num_test_episodes=1,
                  max_ep_len=200)
    else:
        kw.update({"ppo": {"train_pi_iters": 2, "train_v_iters": 2},
                   "vpg": {"train_v_iters": 2}, "a2c": {"n_steps": 8}}[algo])
    net = fn(_minatar(), **kw)
    torso = next(m for m in net.modules() if isinstance(m, ConvTorso))
    assert torso.kind == "small"
    rows = open(tmp_path / "progress.txt").read().splitlines()
    assert len(rows) == 2 and "GameScore" not in rows[0]


def test_trpo_refuses_images_in_one_line(tmp_path):
    from spinup import trpo
    with pytest.raises(ValueError, match="trpo: observation space Box.*is not supported"):
        trpo(_minatar(), epochs=1, logger_kwargs=dict(output_dir=str(tmp_path)))
    assert not os.listdir(tmp_path)


def test_atari_from_the_cli_logs_the_game_score_and_replays_the_policy(tmp_path, cli):
    out = tmp_path / "pong" / "pong_s0"
    cli("dqn", "--env", "ALE/Pong-v5", "--epochs", 1, "--steps_per_epoch", 120,
        "--start_steps", 40, "--update_after", 40, "--batch_size", 8, "--replay_size", 500,
        "--num_test_episodes", 0, "--num_envs", 2, "--data_dir", tmp_path, "--exp_name", "pong")
    header = open(out / "progress.txt").readline().split("\t")
    assert header[:9] == ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet",
                          "AverageGameScore", "StdGameScore", "MaxGameScore", "MinGameScore"]
    config = json.load(open(out / "config.json"))
    assert config["env_fn"].endswith("spinup.envs.atari('ALE/Pong-v5')")
    from spinup.utils.test_policy import load_env, load_policy_and_env  # noqa: F401
    env = load_env(str(out))
    kinds = [type(layer).__name__ for layer in pixels._layers(env)]
    assert "ClipReward" not in kinds and env.observation_space.shape == (4, 84, 84)
    env.close()
    shown = cli("test_policy", out, "--episodes", 1, "--len", 50, "--video", tmp_path / "v")
    assert "EpRet" in shown.stdout
    assert [f.suffix for f in (tmp_path / "v").iterdir()] == [".mp4"]


def test_atari_ppo_from_the_cli(tmp_path, cli):
    out = tmp_path / "ppo" / "ppo_s0"
    cli("ppo", "--env", "ALE/Breakout-v5", "--epochs", 1, "--steps_per_epoch", 64,
        "--num_envs", 2, "--train_pi_iters", 1, "--train_v_iters", 1, "--data_dir", tmp_path,
        "--exp_name", "ppo")
    assert "AverageGameScore" in open(out / "progress.txt").readline()


def test_missing_ale_is_named_with_its_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "ale_py", None)   # import ale_py raises ImportError
    with pytest.raises(ImportError, match=r"ale_py is not installed .*\[pixels\]"):
        pixels.make_atari("ALE/Pong-v5")


def test_ppo_learns_minatar_breakout(tmp_path, one_thread):
    """A short fixed-seed run of the ppo_minatar preset: 24,576 steps of PPO on MinAtar
    Breakout lift the mean return of the last two epochs from a random policy's ~0.4 to
    at least 1.5."""
    from spinup import ppo
    from spinup.presets import load_config
    settings = dict(load_config("ppo_minatar", "ppo", flat=False), epochs=12, seed=0)
    ppo(_minatar(), **settings, logger_kwargs=dict(output_dir=str(tmp_path), exp_name="learn"))
    import pandas as pd
    table = pd.read_table(tmp_path / "progress.txt")
    assert table["AverageEpRet"].iloc[0] < 1.0
    assert table["AverageEpRet"].iloc[-2:].mean() >= 1.5


# ---- ale-py's vector env ----

def test_ale_vector_env_trains_with_lives_and_keeps_whole_games():
    """AtariGames over ale-py's C++ vector env: a lost life ends the episode but not the
    game (lives keep falling), rewards are clipped, and the game's unclipped score is kept
    (the same game without training's changes sums to it)."""
    env = pixels.atari_vector("ALE/SpaceInvaders-v5", 2)()
    plain = pixels.atari_vector("ALE/SpaceInvaders-v5", 2, training=False)()
    assert env.single_observation_space.shape == (4, 84, 84)
    for e in (env, plain):
        e.reset(seed=0)
    rng = np.random.default_rng(0)
    lives_at_ends, raw = [], np.zeros(2)
    for _ in range(4000):
        actions = rng.integers(6, size=2)
        _, r, terminated, truncated, info = env.step(actions)
        _, r_plain, *_ = plain.step(actions)
        assert set(np.unique(r)) <= {-1.0, 0.0, 1.0}
        raw += r_plain
        if terminated[0] and not plain.finished:
            lives_at_ends.append(int(info["lives"][0]))
        if plain.finished:
            break
    # copy 0's episodes ended with lives left, one fewer each time: the game went on
    assert len(lives_at_ends) >= 2 and lives_at_ends[0] > 0
    assert all(b == a - 1 for a, b in zip(lives_at_ends, lives_at_ends[1:]))
    (score, length), = plain.finished
    assert score > 1 and score in raw and length > 100   # unclipped: the game's own sum
    env.close(), plain.close()


def test_ppo_and_dqn_on_the_ale_vector_env(tmp_path):
    from spinup import dqn, ppo
    ppo(pixels.atari_vector("ALE/Breakout-v5", 2), num_envs=2, steps_per_epoch=64, epochs=1,
        train_pi_iters=1, train_v_iters=1, logger_kwargs=dict(output_dir=str(tmp_path / "p")))
    dqn(pixels.atari_vector("ALE/Breakout-v5", 2), num_envs=2, steps_per_epoch=64, epochs=1,
        start_steps=16, update_after=16, batch_size=4, replay_size=200, num_test_episodes=1,
        max_ep_len=50, logger_kwargs=dict(output_dir=str(tmp_path / "d")))
    for run in ("p", "d"):
        assert "AverageGameScore" in open(tmp_path / run / "progress.txt").readline()
    config = json.load(open(tmp_path / "d" / "config.json"))
    assert "atari_vector('ALE/Breakout-v5', 2)" in config["env_fn"]
