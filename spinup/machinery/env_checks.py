"""Checking an algorithm's env: its spaces, a first reset and step, and the data it yields.

An algorithm's spaces are its entry of :data:`spinup.machinery.arg_checks.SPACES`; its run
makes the env with :func:`make_env` (through the door) before anything is written, and its buffers
refuse NaN or infinite data (``check_finite_*``) in one line naming the algorithm and the env.
"""
import math


# ---- Spaces ----

class SpaceKind:
    """A kind of gymnasium space an algorithm supports: ``words``, its name in messages
    (e.g. ``'a flat (1-D) Box'``); ``test``, ``space -> bool``; ``condition``, what else it
    needs, said after "action space" (e.g. ``' with finite low/high'``)."""

    def __init__(self, words, test, condition=""):
        self.words, self.test, self.condition = words, test, condition

    def __repr__(self):
        return f"SpaceKind({self.words!r})"


def _box(space, flat=False, bounded=False):
    from gymnasium.spaces import Box
    if not isinstance(space, Box) or (flat and len(space.shape) != 1):
        return False
    import numpy as np
    return not bounded or bool(np.isfinite(space.low).all() and np.isfinite(space.high).all())


def _image(space):
    from spinup.utils.torch_tools import is_image_space
    return is_image_space(space)


def _discrete(space):
    from gymnasium.spaces import Discrete
    return isinstance(space, Discrete)


#: A one-dimensional Box of any bounds: vector observations, or Gaussian actions
#: (clipped to the bounds).
FLAT_BOX = SpaceKind("a flat (1-D) Box", lambda s: _box(s, flat=True))
#: A one-dimensional Box with finite low/high (a tanh policy is scaled to them).
BOUNDED_BOX = SpaceKind("a continuous (Box)", lambda s: _box(s, flat=True, bounded=True),
                        " with finite low/high")
#: A flat Box, or images: a 3-D Box of uint8 or bool cells (Atari frames, MinAtar grids),
#: which the algorithm's default network reads with a convolutional torso.
FLAT_OR_IMAGE = SpaceKind("a flat (1-D) Box or an image (a 3-D uint8 or bool Box)",
                          lambda s: _box(s, flat=True) or _image(s))
#: A Discrete space.
DISCRETE = SpaceKind("a Discrete", _discrete)


def _action_hint(act_space, act):
    """What to do about an action space that none of the kinds ``act`` accepts."""
    if _discrete(act_space):
        return "for Discrete actions use dqn, ppo, vpg, trpo, a2c or a3c"
    if _box(act_space) and len(act_space.shape) != 1 and (FLAT_BOX in act or BOUNDED_BOX in act):
        return (f"its shape {act_space.shape} is not 1-D; give the agent a flat Box, e.g. "
                "with gymnasium.wrappers.TransformAction reshaping a vector to that shape")
    if _box(act_space):
        return ("its tanh policy is scaled to the action bounds" if BOUNDED_BOX in act else
                "for continuous (Box) actions use sac, td3, ddpg, ppo, vpg, trpo, a2c or a3c")
    if act == (DISCRETE,):   # e.g. MultiDiscrete for DQN: one index per combination
        return ("wrap the env so that one Discrete index stands for each combination of "
                "actions (gymnasium.wrappers.TransformAction with a Discrete space)")
    return "wrap the env to turn its actions into " + " or ".join(k.words for k in act) + " space"


def check_spaces(algo, env, obs=FLAT_BOX, act=(FLAT_BOX, DISCRETE)):
    """Refuse an env whose spaces ``algo`` does not support.

    Args:
        algo (str): the name used in messages.
        env: a gymnasium env (anything with ``observation_space`` and ``action_space``).
        obs (SpaceKind): the supported observation space.
        act (SpaceKind or tuple of them): the supported action spaces.

    Raises:
        TypeError: ``env`` is not an env (``env_fn`` returned something else).
        ValueError: naming the space, what is supported and what to do instead;
            ``env`` is closed first.
    """
    if not (hasattr(env, "observation_space") and hasattr(env, "action_space")):
        import reprlib
        raise TypeError(f"{algo}: env_fn() returned {reprlib.repr(env)}, not a gymnasium "
                        "environment: env_fn must take no arguments and return a "
                        "gymnasium.Env, e.g. lambda: gymnasium.make('CartPole-v1')")
    act = act if isinstance(act, tuple) else (act,)
    obs_space, act_space = env.observation_space, env.action_space
    if not obs.test(obs_space):
        problem = (f"observation space {obs_space} is not supported: {algo.upper()} needs "
                   f"{obs.words} observation space (wrap the env in "
                   "gymnasium.wrappers.FlattenObservation)")
    elif not any(kind.test(act_space) for kind in act):
        needs = (" or ".join(kind.words for kind in act) + " action space"
                 + "".join(kind.condition for kind in act))
        problem = (f"action space {act_space} is not supported: {algo.upper()} needs "
                   f"{needs}; {_action_hint(act_space, act)}")
    else:
        return
    close = getattr(env, "close", None)
    if close is not None:
        close()
    raise ValueError(f"{algo}: {problem}")


# ---- Making the env and trying it once ----

def _attempt(where, what, call, hint=""):
    """``call()``, an exception becoming a one-line ValueError caused by it."""
    try:
        return call()
    except Exception as e:
        text = (str(e).strip().splitlines() or [""])[0]
        raise ValueError(f"{where}: {what} raised {type(e).__name__}: {text}{hint}") from e


def _check_first_data(label, obs_space, seen):
    """Refuse a wrong-shaped or non-finite observation, or a non-finite reward, among
    ``seen``: ``(what returned it, observation, reward)`` triples."""
    import numpy as np
    for what, obs, rew in seen:
        try:
            values = np.asarray(obs, dtype=np.float64)
        except (TypeError, ValueError):
            values = None
        if values is None or values.shape != obs_space.shape:
            raise ValueError(f"{label}: {what} returned an observation of shape "
                             f"{getattr(values, 'shape', '(not an array)')} but its "
                             f"observation space {obs_space} has shape {obs_space.shape}; "
                             "the env must return observations of that shape")
        if not _all_finite(values):
            raise ValueError(f"{label}: {what} returned a non-finite observation "
                             f"{_short(values)}; observations must be finite numbers")
        if not _all_finite(rew):
            raise ValueError(f"{label}: {what} returned a non-finite reward ({rew}); "
                             "rewards must be finite numbers")


def _is_batched(env):
    import gymnasium as gym
    return isinstance(env, gym.vector.VectorEnv)


def _check_batched(algo, task, num_envs, obs, act):
    """Refuse a batched task (a ``gymnasium.vector.VectorEnv``) that ``algo`` cannot step:
    an algorithm without ``num_envs`` (None), another count of copies than ``num_envs``, or
    spaces of one copy it does not support. Returns the task (not reset)."""
    import types
    if num_envs is None:
        task.close()
        why = ("each of its workers steps its own env in a process of its own; use a2c, "
               "which steps many copies at once" if algo == "a3c" else
               "it steps one env at a time")
        copies = f"{task.num_envs} cop{'y' if task.num_envs == 1 else 'ies'}"
        raise ValueError(f"{algo}: env_fn() made a batched task ({copies}) but "
                         f"{algo} cannot use one: {why}")
    if task.num_envs != num_envs:
        task.close()
        raise ValueError(f"{algo}: env_fn() made a batched task of {task.num_envs} copies but "
                         f"num_envs={num_envs}; give num_envs={task.num_envs}")
    one = types.SimpleNamespace(observation_space=task.single_observation_space,
                                action_space=task.single_action_space, close=task.close)
    check_spaces(algo, one, obs, act)
    return task


def make_env(algo, env_fn, obs=FLAT_BOX, act=(FLAT_BOX, DISCRETE), num_envs=None):
    """Make the run's env with ``env_fn()`` and check it before the logger writes anything.

    A batched task (``env_fn()`` returns a ``gymnasium.vector.VectorEnv``) must have
    ``num_envs`` copies (the algorithm's argument; None: it steps one env at a time, and
    refuses the task) and supported spaces for one copy; it is returned unprobed.

    Besides :func:`check_spaces`, a copy of the env (``copy.deepcopy``, else a second
    ``env_fn()``) is reset and stepped once with a fixed action: a reset that raises, or a
    first observation or reward that is wrong-shaped or not finite, is refused (a raising
    step is left to the run). The returned env is not reset and the ``random``/``numpy``
    states are restored, so a valid run is unchanged.

    Raises:
        TypeError, ValueError: one line naming the algorithm, the env and the problem
            (including ``env_fn()`` raising).
    """
    import copy
    import random
    import warnings

    import numpy as np
    env = _attempt(algo, "env_fn()", env_fn)
    if _is_batched(env):
        return _check_batched(algo, env, num_envs, obs, act)
    check_spaces(algo, env, obs, act)
    states = random.getstate(), np.random.get_state()
    try:
        probe = copy.deepcopy(env)
    except Exception:
        probe = _attempt(algo, "env_fn()", env_fn)
    try:
        if probe is env:
            return env
        label, space = env_label(algo, env), env.action_space
        hint = "" if getattr(probe, "render_mode", None) is None else " (the env was made " \
            f"with render_mode={probe.render_mode!r}; leave it out for training)"
        action = space.start if _discrete(space) else np.clip(
            np.zeros(space.shape, space.dtype), space.low, space.high)
        with warnings.catch_warnings():   # gymnasium's checker: left to the run's own env
            warnings.simplefilter("ignore")
            seen = [("reset()", _attempt(label, "reset()", probe.reset, hint)[0], 0.0)]
            try:
                seen.append(("the first step()", *probe.step(action)[:2]))
            except Exception:
                pass   # the run's own step() reports it, with the env's traceback
        _check_first_data(label, env.observation_space, seen)
    finally:
        if probe is not env:
            probe.close()
        random.setstate(states[0])
        np.random.set_state(states[1])
    return env


def report_env_step_error(algo, exc):
    """If ``exc`` came from inside an env's ``step()``, print one line saying so, with the
    epoch and step, before it propagates unchanged (the algorithm's ``with run:`` calls this
    as it leaves; nothing runs per step). ``exc``'s traceback starts in the algorithm's frame,
    whose ``epoch`` and ``t`` name the moment."""
    import sys
    import traceback
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    inner = frames[1:]   # below the algorithm's own frame
    if not any(f.f_code.co_name == "step" and hasattr(f.f_locals.get("self"), "action_space")
               for f in inner):
        return
    here = frames[0].f_locals
    at = ", ".join(f"{word}{here[k]}" for k, word in (("epoch", "epoch "), ("t", "step t="))
                   if isinstance(here.get(k), int))
    testing = " while testing the agent" * any(f.f_code.co_name.startswith("test_") for f in inner)
    print(f"{algo}: your env raised {type(exc).__name__} inside step()"
          f"{testing}{' at ' * bool(at)}{at}; its traceback follows", file=sys.stderr, flush=True)
    exc.spinup_keep_traceback = True   # the CLI's one-line form must not swallow it


# ---- Non-finite rewards and observations, checked where they already sit in arrays ----
# ``buf`` is the algorithm's buffer; its optional ``source`` (:func:`env_label`) names the env.

_MUST = "rewards and observations must be finite numbers"


def env_label(algo, env):
    """``'<algo>: env <id>'``, naming ``env`` (its spec's id, else its class name) in
    messages about the data it produced."""
    spec = getattr(env, "spec", None)
    name = spec.id if spec is not None else type(getattr(env, "unwrapped", env)).__name__
    return f"{algo}: env {name}"


def _short(values):
    import numpy as np
    flat = np.asarray(values).ravel()
    text = np.array2string(flat[:6], precision=4, separator=", ")
    return text[:-1] + ", ...]" if flat.size > 6 else text


def _source(buf):
    return getattr(buf, "source", "the environment")


def _all_finite(values):
    import numpy as np
    return bool(np.isfinite(np.asarray(values, dtype=np.float64)).all())


def _finite_rows(values):
    import numpy as np
    return np.isfinite(values.reshape(len(values), -1)).all(axis=1)


def check_finite_path(buf, path, last_val, obs=None, rew=None):
    """ValueError (one line: the env, the step counted from the start of the epoch on this
    process, what was not finite) for a trajectory, rows ``path`` (a slice) of ``obs``/``rew``
    (default ``buf.obs_buf``/``buf.rew_buf``), holding a NaN or infinite observation or
    reward, or closed by a non-finite ``last_val``. Called by on-policy ``finish_path``."""
    import numpy as np
    rew = (buf.rew_buf if rew is None else rew)[path]
    obs = (buf.obs_buf if obs is None else obs)[path]
    bad_rew, bad_obs = ~np.isfinite(rew), ~_finite_rows(obs)
    if bad_rew.any() or bad_obs.any():
        i = int(np.argmax(bad_rew | bad_obs))
        step = path.start + i
        if bad_obs[i]:
            what = f"observation {_short(obs[i])} (the one the agent acted on at step {step}"
        else:
            what = f"reward ({rew[i]}) (at step {step}"
        raise ValueError(f"{_source(buf)} returned a non-finite {what} of the current rollout, "
                         f"step {i} of the trajectory); {_MUST}")
    if not math.isfinite(float(last_val)):
        raise ValueError(f"{_source(buf)}: the value closing the trajectory after step "
                         f"{path.stop - 1} of the current rollout is {float(last_val)}: the "
                         "observation after that step is not finite, or the value network "
                         "has diverged")


def check_finite_paths(buf, copies, starts, last_vals):
    """:func:`check_finite_path` for the pieces of trajectory that end at the current row
    ``buf.ptr - 1`` in the columns ``copies`` of ``buf.obs_buf``/``buf.rew_buf`` (rows
    (T, N, ...)), piece ``k`` starting at row ``starts[k]`` and closed by ``last_vals[k]``:
    one vectorized test, and the column-by-column message only when something is wrong."""
    import numpy as np
    rows = slice(int(np.min(starts)) if len(starts) else buf.ptr, buf.ptr)
    rew, obs = buf.rew_buf[rows][:, copies], buf.obs_buf[rows][:, copies]
    if np.isfinite(rew).all() and np.isfinite(obs).all() and np.isfinite(last_vals).all():
        return
    for i, start, last_val in zip(copies, starts, last_vals):
        check_finite_path(buf, slice(int(start), buf.ptr), last_val, obs=buf.obs_buf[:, i],
                          rew=buf.rew_buf[:, i])


def check_finite_reward(rew, buf, step, obs, act):
    """ValueError (one line naming the env and the slot) for a NaN or infinite reward
    ``rew`` stored in replay slot ``step``; if the observation acted on (``obs``) or the
    action taken (``act``) is not finite, the error names that cause instead."""
    if math.isfinite(rew):
        return
    check_finite_obs(obs, buf, step, where="stored in replay slot")
    if not _all_finite(act):
        raise ValueError(f"the agent's action for replay slot {step} is not finite "
                         f"({_short(act)}), and {_source(buf)} answered it with the reward "
                         f"{rew}: the policy network has diverged (NaN or infinite weights); "
                         "lower the learning rates or check the rewards' scale")
    raise ValueError(f"{_source(buf)} returned a non-finite reward ({rew}) at replay slot "
                     f"{step}; {_MUST}")


def check_finite_rows(obs, obs2, rows, buf):
    """ValueError (one line naming the env and the slot) for a replay batch whose
    observations ``obs`` or next observations ``obs2`` (from slots ``rows``) hold NaN/inf."""
    import numpy as np
    good, good2 = _finite_rows(obs), _finite_rows(obs2)
    if good.all() and good2.all():
        return
    i = int(np.argmin(good & good2))
    which, value = ("observation", obs[i]) if not good[i] else ("next observation", obs2[i])
    raise ValueError(f"{_source(buf)} returned a non-finite {which} {_short(value)} (stored in "
                     f"replay slot {int(rows[i])}, i.e. env step {int(rows[i])} if the buffer "
                     f"has not wrapped yet); {_MUST}")


def check_finite_obs(obs, buf, step, where=None):
    """ValueError (one line naming the env and the step) for a NaN or infinite ``obs``,
    called once acting on it failed; ``step`` counts within the current rollout, or as
    ``where`` says (e.g. ``'stored in replay slot'``)."""
    import numpy as np
    values = np.asarray(obs, dtype=np.float64)
    if not np.isfinite(values).all():
        at = (f"{where} {step}" if where else
              f"the one the agent was to act on at step {step} of the current rollout")
        raise ValueError(f"{_source(buf)} returned a non-finite observation {_short(values)} "
                         f"({at}); {_MUST}")
