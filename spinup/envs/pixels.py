"""Image tasks: Atari 2600 games (ale-py) with the usual preprocessing, and MinAtar.

``pip install -e ".[pixels]"`` brings ale-py (its wheel holds the game ROMs), MinAtar and
OpenCV (which gymnasium's ``AtariPreprocessing`` resizes frames with). From the CLI,
``--env ALE/Pong-v5`` and ``--env MinAtar/Breakout-v1`` make these envs; from Python::

    from spinup import dqn
    from spinup.envs.pixels import atari
    dqn(atari("ALE/Pong-v5"), ...)          # env_fn: a training env per call

**Atari, step by step** (docs/user/pixels.rst explains each choice). From the inside out:

1. ``gymnasium.make(id, frameskip=1)``: the v5 game with its sticky actions (the previous
   action is repeated with probability 0.25 at every frame) and its 108,000-frame limit;
2. ``AtariPreprocessing``: up to 30 no-op actions after a reset, the agent acting every 4th
   frame with the last two frames max-pooled (sprites flicker), grey 84x84 frames;
3. :class:`GameScore`: keeps each finished game's score and length, for the log;
4. training only, :class:`EpisodicLife`: a lost life ends the agent's episode (the game
   goes on at the next reset);
5. :class:`FireReset` for games that wait for FIRE, after each (re)start;
6. training only, ``ClipReward(-1, 1)``: every reward becomes its sign;
7. ``FrameStackObservation(4, padding_type="zero")``: the last 4 frames, ``(4, 84, 84)``
   uint8, zeros before the episode's first frame (as ale-py's ``AtariVectorEnv`` does).

An algorithm's ``EpRet`` is then the clipped return of one life; the game's own score is
logged as ``GameScore`` (:class:`GameScore`, :func:`finished_games`).

**MinAtar** (Young & Tian 2019): 10x10 grids of ``n`` bool channels, ``(10, 10, n)``, for
Asterix, Breakout, Freeway, Seaquest and SpaceInvaders, with sticky actions (0.1) and
rising difficulty as the paper defines them; :func:`register_minatar` registers MinAtar's
own gymnasium ids (``MinAtar/Breakout-v1``: the game's minimal action set).
"""
import numpy as np

import gymnasium as gym

#: What to install for the image tasks.
EXTRA = 'pip install -e ".[pixels]"   (ale-py, minatar, opencv-python-headless)'


def _need(module):
    """Import ``module``; a missing package becomes one line naming the extra."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{module} is not installed (the image tasks need it): {EXTRA}") from e


# ---- Wrappers ----

class GameScore(gym.Wrapper):
    """Keep the score and length (agent steps) of each finished game, unclipped, whatever
    the wrappers above it do to rewards and episodes.

    Attributes:
        finished (list of tuple): ``(score, length)`` of the games that ended since
            :func:`finished_games` last took them.
    """

    def __init__(self, env):
        super().__init__(env)
        self.score, self.length, self.finished = 0.0, 0, []

    def reset(self, **kwargs):
        self.score, self.length = 0.0, 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, rew, terminated, truncated, info = self.env.step(action)
        self.score, self.length = self.score + float(rew), self.length + 1
        if terminated or truncated:
            self.finished.append((self.score, self.length))
        return obs, rew, terminated, truncated, info


class EpisodicLife(gym.Wrapper):
    """End the agent's episode when the game takes a life (Mnih et al. 2015, "Methods":
    it helps value estimation to see the cost of a lost life); the next ``reset`` goes on
    with the same game (one no-op step) unless the game itself is over."""

    def __init__(self, env):
        super().__init__(env)
        self.lives, self.game_over = 0, True

    def _ale_lives(self):
        return self.env.unwrapped.ale.lives()

    def step(self, action):
        obs, rew, terminated, truncated, info = self.env.step(action)
        self.game_over = bool(terminated or truncated)
        lives = self._ale_lives()
        if 0 < lives < self.lives:
            terminated = True
        self.lives = lives
        return obs, rew, terminated, truncated, info

    def reset(self, **kwargs):
        if self.game_over:
            obs, info = self.env.reset(**kwargs)
        else:   # a life was lost: the game goes on
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:
                obs, info = self.env.reset(**kwargs)
        self.lives, self.game_over = self._ale_lives(), False
        return obs, info


class FireReset(gym.Wrapper):
    """Press FIRE (then one more action) after each reset, for games that wait for it to
    start a round (Breakout, ...); without it an untrained agent may wait forever."""

    def reset(self, **kwargs):
        self.env.reset(**kwargs)
        for action in (1, 2):
            obs, _, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:   # rare: start over, without pressing again
                return self.env.reset(**kwargs)
        return obs, info


# ---- Making the envs ----

def is_atari_id(env_id):
    return str(env_id).startswith("ALE/")


def is_minatar_id(env_id):
    return str(env_id).startswith("MinAtar/")


def make_atari(env_id, training=True, frame_stack=4, noop_max=30, fire_reset=True,
               **make_kwargs):
    """An Atari env with the preprocessing described at the top of this module.

    Args:
        env_id (str): an ALE id, e.g. ``"ALE/Pong-v5"``.
        training (bool): add what only training uses: the end of an episode at each lost
            life and the clipping of rewards to their sign. ``False`` for test episodes,
            ``test_policy`` and videos: the game as scored.
        frame_stack (int): frames per observation.
        noop_max (int): most no-op actions at the start of a game.
        fire_reset (bool): press FIRE after each reset where the game has that action.
        **make_kwargs: for ``gymnasium.make`` (e.g. ``repeat_action_probability=0.0``,
            ``render_mode="rgb_array"``).

    Returns:
        gymnasium.Env: observations ``(frame_stack, 84, 84)`` uint8.

    Raises:
        ImportError: ale-py or OpenCV is missing (one line naming the extra).
    """
    ale_py = _need("ale_py")
    _need("cv2")
    gym.register_envs(ale_py)
    env = gym.make(env_id, frameskip=1, **make_kwargs)
    env = gym.wrappers.AtariPreprocessing(env, noop_max=noop_max, frame_skip=4,
                                          screen_size=84, grayscale_obs=True)
    env = GameScore(env)
    if training:
        env = EpisodicLife(env)
    if fire_reset and "FIRE" in env.unwrapped.get_action_meanings()[1:2]:
        env = FireReset(env)
    if training:
        env = gym.wrappers.ClipReward(env, -1.0, 1.0)
    return gym.wrappers.FrameStackObservation(env, frame_stack, padding_type="zero")


def register_minatar():
    """Register MinAtar's gymnasium ids (``MinAtar/<Game>-v0`` all 6 actions, ``-v1`` the
    game's minimal set) once.

    Raises:
        ImportError: minatar is missing (one line naming the extra).
    """
    if "MinAtar/Breakout-v1" not in gym.registry:
        _need("minatar.gym").register_envs()


def make(env_id, training=True, **kwargs):
    """``gymnasium.make(env_id)``, with the preprocessing of an Atari id
    (:func:`make_atari`) and MinAtar's ids registered first."""
    if is_atari_id(env_id):
        return make_atari(env_id, training=training, **kwargs)
    if is_minatar_id(env_id):
        register_minatar()
    return gym.make(env_id, **kwargs)


def atari(env_id, **kwargs):
    """The ``env_fn`` of an Atari run: each call makes a training env (:func:`make_atari`
    with ``kwargs``); its ``evaluation_env`` attribute makes the unclipped, whole-game env
    that test episodes play. ``config.json`` shows it as ``spinup.envs.atari('<id>')``."""
    def env_fn():
        return make_atari(env_id, training=True, **kwargs)

    def evaluation_env():
        return make_atari(env_id, training=False, **kwargs)
    env_fn.evaluation_env = evaluation_env
    env_fn.__qualname__ = f"spinup.envs.atari({env_id!r})"
    return env_fn


class AtariGames(gym.vector.VectorWrapper):
    """ale-py's C++ ``AtariVectorEnv`` (whole games, rewards unclipped, same-step restarts)
    made to train as :func:`make_atari`'s envs do.

    ale-py's own ``episodic_life`` restarts the whole game at each lost life; here a lost
    life ends the agent's episode (``terminated``, with ``final_obs`` the frame it goes on
    from) while the game goes on, rewards become their sign, and each finished game's
    score and length are kept as :class:`GameScore` keeps them. Stacks that go on after a
    lost life are not zero-padded, so DQN's replay keeps whole stacks on this path.

    Args:
        env (ale_py.vector_env.AtariVectorEnv): made with ``autoreset_mode="SameStep"``,
            ``episodic_life=False`` and ``reward_clipping=False``.
        training (bool): lost lives end episodes and rewards are clipped.
        evaluation_env (callable or None): makes one unclipped, whole-game env for test
            episodes and ``test_policy`` (:meth:`spinup.envs.batch.BatchedTask.single_env`).
    """

    def __init__(self, env, training=True, evaluation_env=None):
        super().__init__(env)
        self.training, self.evaluation_env = training, evaluation_env
        n = env.num_envs
        self.score, self.length = np.zeros(n), np.zeros(n, dtype=int)
        self.lives, self.finished = np.zeros(n, dtype=int), []

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        fresh = slice(None) if mask is None else np.asarray(mask)
        self.score[fresh], self.length[fresh] = 0.0, 0
        self.lives[fresh] = info["lives"][fresh]
        return obs, info

    def step(self, actions):
        obs, rew, terminated, truncated, info = self.env.step(actions)
        over = terminated | truncated
        self.score, self.length = self.score + rew, self.length + 1
        self.finished += [(float(self.score[i]), int(self.length[i]))
                          for i in np.flatnonzero(over)]
        self.score[over], self.length[over] = 0.0, 0
        lives, lost = info["lives"], np.zeros_like(over)
        if self.training:
            lost = (lives < self.lives) & (lives > 0) & ~over
            rew = np.sign(rew).astype(np.float32)
        self.lives = np.array(lives)
        if lost.any():   # the episode ends, the game goes on from obs
            terminated = terminated | lost
            final = np.array(info.get("final_obs", obs))
            final[lost] = obs[lost]
            info = dict(info, final_obs=final)
        return obs, rew, terminated, truncated, info


def _ale_name(env_id):
    """ale-py's ROM name of an ALE id: ``"ALE/SpaceInvaders-v5"`` -> ``"space_invaders"``."""
    game = str(env_id).split("/", 1)[-1].rsplit("-v", 1)[0]
    return "".join("_" + c.lower() if c.isupper() and i else c.lower()
                   for i, c in enumerate(game))


def atari_vector(env_id, num_envs, training=True, num_threads=0, **kwargs):
    """The ``env_fn`` of an Atari run stepped by ale-py's C++ vector env: ``num_envs`` games
    with the preprocessing of :func:`make_atari` (no-op starts, frame skip 4 with max
    pooling, grey 84x84, 4 zero-padded frames, sticky actions 0.25, FIRE at a reset) done
    in C++ threads (``num_threads``: 0 lets ale-py choose), seen through
    :class:`AtariGames`. ``kwargs`` go to ``AtariVectorEnv``.

    Raises:
        ImportError: ale-py is missing (one line naming the extra), when called.
    """
    def evaluation_env():
        return make_atari(env_id, training=False)

    def env_fn():
        vector_env = _need("ale_py.vector_env")
        settings = dict(repeat_action_probability=0.25, noop_max=30, stack_num=4,
                        frameskip=4, use_fire_reset=True)
        settings.update(kwargs)
        vec = vector_env.AtariVectorEnv(_ale_name(env_id), num_envs, num_threads=num_threads,
                                        autoreset_mode="SameStep", episodic_life=False,
                                        reward_clipping=False, **settings)
        return AtariGames(vec, training, evaluation_env)
    env_fn.evaluation_env = evaluation_env
    env_fn.__qualname__ = f"spinup.envs.atari_vector({env_id!r}, {num_envs})"
    return env_fn


# ---- What the run reads from them ----

def _layers(env):
    """``env`` and the envs it wraps, outermost first (through a batched task's ``task``)."""
    while env is not None:
        yield env
        env = getattr(env, "env", getattr(env, "task", None))


def frame_stack(env):
    """``k`` when ``env``'s observations are its last ``k`` frames stacked on a new first
    axis with zero padding (``FrameStackObservation(..., padding_type="zero")``), else 1:
    DQN's replay then stores each frame once."""
    for layer in _layers(env):
        if isinstance(layer, gym.wrappers.FrameStackObservation):
            zero = layer.padding_type == "zero" or (
                layer.padding_type == "_custom" and not np.any(layer.padding_value))
            return int(layer.stack_size) if zero else 1
    return 1


def _copies(envs):
    """The envs of a run's ``envs``: a list, an ``EnvList`` or one (batched) env."""
    return envs.envs if hasattr(envs, "envs") else envs if isinstance(envs, list) else [envs]


def finished_games(envs):
    """Take the ``(score, length)`` of the games finished in ``envs`` (a list of envs, an
    ``EnvList`` or a ``BatchedTask``) since the last call: an empty list for envs without
    :class:`GameScore` or :class:`AtariGames`."""
    games = []
    for env in _copies(envs):
        for layer in _layers(env):
            if isinstance(layer, (GameScore, AtariGames)):
                games += layer.finished
                layer.finished = []
    return games


def check_replay_memory(algo, config, env, frames, envs):
    """:func:`spinup.machinery.memory.check_replay_memory` for ``env``'s observations
    (``envs`` closed before a refusal)."""
    from spinup.machinery.memory import check_replay_memory as check
    check(algo, config, env.observation_space, frames, close=envs.close)


def keeps_score(envs):
    """Whether ``envs`` (as :func:`finished_games` takes them) keep game scores: the run
    then logs ``GameScore``."""
    return any(isinstance(layer, (GameScore, AtariGames))
               for env in _copies(envs) for layer in _layers(env))
