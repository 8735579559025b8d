"""Checkpoints: the whole training state of a run, so that it can be resumed.

Where ``model.pt`` holds only the policy, a checkpoint holds everything the next
epoch depends on: networks, optimizer states, counters, the random generators,
the environments (down to the episode in progress), the replay buffer and the
text of ``progress.txt``. Each algorithm writes one per epoch, after its row::

    pyt_save/checkpoint.pt            MPI rank 0 (or the only process)
    pyt_save/checkpoint_rank{r}.pt    MPI rank r > 0 (its own RNG and env states)

Tensors and plain values only (``torch.load(path, weights_only=True)`` reads it),
replaced atomically. Resuming: ``docs/user/saving_and_loading.rst``.
"""
import os
import os.path as osp
import pickle
import random
import re
import shutil
import warnings

import gymnasium as gym
import numpy as np

from spinup.utils.serialization_utils import write_atomically

#: Written into every checkpoint; a file with another value is refused.
CHECKPOINT_FORMAT = "spinup-checkpoint-1"

# Attributes of environments and wrappers that are configuration, rendering or
# bookkeeping rather than the state of an episode: never saved, never a reason to
# give up on an exact resume.
_NOT_STATE = {"env", "spec", "metadata", "render_mode", "observation_space", "action_space",
              "_action_space", "_observation_space", "_metadata", "_cached_spec",
              "_saved_kwargs", "_ezpickle_args", "_ezpickle_kwargs", "_np_random",
              "screen", "clock", "viewer", "mujoco_renderer", "model", "data", "fullpath",
              "observation_structure", "_previous_data", "camera_name", "camera_id",
              "reward_range", "_reward_range"}

_warned_inexact = False


# ---- Files ----

def checkpoint_path(output_dir, rank=0):
    """Where MPI rank ``rank`` keeps its checkpoint inside ``output_dir``."""
    name = "checkpoint.pt" if rank == 0 else f"checkpoint_rank{rank}.pt"
    return osp.join(output_dir, "pyt_save", name)


def previous_checkpoint_path(output_dir, rank=0):
    """Where MPI rank ``rank`` keeps its checkpoint of the epoch before (see
    :func:`save_checkpoint`)."""
    return checkpoint_path(output_dir, rank)[:-len(".pt")] + ".prev.pt"


def checkpoint_ranks(output_dir):
    """How many MPI processes wrote the checkpoint files in ``output_dir`` (0: none)."""
    return len([name for name in os.listdir(osp.join(output_dir, "pyt_save"))
                if re.fullmatch(r"checkpoint(_rank\d+)?\.pt", name)])


def _my_rank():
    from spinup.utils.mpi_tools import proc_id
    return proc_id()


def save_checkpoint(output_dir, state):
    """Write this process's checkpoint, atomically.

    Args:
        output_dir (str): the run's output directory (every MPI rank passes the
            same one; each writes its own file, see :func:`checkpoint_path`).
        state (dict): tensors and plain values only (use :func:`rng_state`,
            :func:`env_state` and ``state_dict()`` for the objects). Rank 0 adds
            the text of ``progress.txt`` under ``"table"`` (see ``Logger.keep_rows``).
    """
    import torch

    from spinup.utils.mpi_tools import num_procs
    path = checkpoint_path(output_dir, _my_rank())
    os.makedirs(osp.dirname(path), exist_ok=True)
    if num_procs() > 1 and osp.exists(path):
        # The ranks write their files one after another, so a run stopped in between
        # leaves them one epoch apart: each keeps the epoch before, and a resume goes back
        # to the epoch they all have (load_checkpoint). The latest file stays in place
        # until the new one replaces it, so a stop at any moment leaves one.
        previous = previous_checkpoint_path(output_dir, _my_rank())
        tmp = f"{previous}.tmp{os.getpid()}"
        try:
            os.link(path, tmp)
        except OSError:   # a file system without hard links
            shutil.copyfile(path, tmp)
        os.replace(tmp, previous)
    payload = dict(state, format=CHECKPOINT_FORMAT)
    table = osp.join(output_dir, "progress.txt")
    if _my_rank() == 0 and osp.exists(table):   # a resume restores the table with it
        with open(table) as f:
            payload["table"] = f.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_atomically(path, lambda tmp: torch.save(payload, tmp))


def load_checkpoint(output_dir, rank=None):
    """Read the checkpoint that :func:`save_checkpoint` wrote (this rank's by default).

    Under MPI (``rank=None`` on every rank: a collective call) the ranks agree on the
    epoch first: a rank whose latest checkpoint is ahead of another's (the run stopped
    while the ranks were writing theirs) takes its checkpoint of the epoch before, so
    that all resume from the same epoch; every rank raises the same error otherwise.

    Returns:
        dict: the saved state.

    Raises:
        FileNotFoundError: ``output_dir`` has no checkpoint for this rank.
        ValueError: the file is truncated, holds anything but tensors and plain
            values, or is not a spinup checkpoint; or the ranks' checkpoints cannot be
            brought to one epoch.
    """
    from spinup.utils.mpi_tools import mpi_op, num_procs
    if rank is not None or num_procs() == 1:
        return _read_checkpoint(output_dir, _my_rank() if rank is None else rank)
    mine, error = None, None
    try:
        mine = _read_checkpoint(output_dir, _my_rank())
    except (FileNotFoundError, ValueError) as e:
        error = e
    epoch = -1 if mine is None else int(mine["epoch"])
    low, high = (int(mpi_op(epoch, op)) for op in ("min", "max"))
    failed = int(mpi_op(0 if error is None else 1, "max"))
    if failed:   # every rank stops, none waits in a collective for the others
        raise error or ValueError(f"{output_dir}: another MPI rank cannot read its "
                                  "checkpoint; cannot resume")
    if epoch > low:
        previous = previous_checkpoint_path(output_dir, _my_rank())
        try:
            mine = _read_checkpoint(output_dir, _my_rank(), previous)
        except (FileNotFoundError, ValueError):
            mine = None
    agreed = int(mpi_op(1 if mine is not None and int(mine["epoch"]) == low else 0, "min"))
    if not agreed:
        raise ValueError(f"{output_dir}: the MPI ranks' checkpoints are after epochs {low} to "
                         f"{high} and cannot be brought to one epoch; cannot resume")
    return mine


def _read_checkpoint(output_dir, rank, path=None):
    """One checkpoint file (rank ``rank``'s latest, or ``path``), checked."""
    import torch
    path = path or checkpoint_path(output_dir, rank)
    if not osp.exists(path):
        raise FileNotFoundError(f"{output_dir}: no checkpoint to resume from ({path} does not "
                                "exist; checkpoints are written at the end of each epoch)")
    try:
        # map_location: a run that trained on a GPU resumes on any device (the states
        # are copied into the networks and optimizers wherever those live).
        state = torch.load(path, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as e:  # complete, but holds more than tensors and plain values
        if "weights_only" not in str(e).lower().replace(" ", "_"):
            raise ValueError(f"{output_dir}: corrupt checkpoint {path} (UnpicklingError); "
                             "cannot resume from it") from None
        found = re.search(r"GLOBAL (\S+)", str(e))
        raise ValueError(f"{output_dir}: checkpoint {path} holds objects other than tensors "
                         f"and plain values ({found.group(1) if found else 'pickled code'}), "
                         "which are not loaded; cannot resume from it") from None
    except Exception as e:  # truncated or damaged
        raise ValueError(f"{output_dir}: corrupt checkpoint {path} ({type(e).__name__}); "
                         "cannot resume from it") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{output_dir}: corrupt checkpoint {path} (not a "
                         f"{CHECKPOINT_FORMAT} file)")
    return state


# ---- Random generators ----

def rng_state():
    """The global generators of Python's ``random``, numpy and torch, as plain values;
    with ``"cuda"``, torch's GPU generators, once a run has used a GPU."""
    import torch
    version, words, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": [version, list(words), gauss],
             "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), int(pos),
                       int(has_gauss), float(cached)],
             "torch": torch.get_rng_state()}
    if torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(saved):
    """Put back the generators that :func:`rng_state` described."""
    import torch
    version, words, gauss = saved["python"]
    random.setstate((version, tuple(words), gauss))
    kind, keys, pos, has_gauss, cached = saved["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(saved["torch"])
    gpus = saved.get("cuda") or []
    if gpus and torch.cuda.is_initialized() and torch.cuda.device_count() == len(gpus):
        torch.cuda.set_rng_state_all(gpus)   # else (resumed elsewhere): a fresh GPU stream


def generator_state(gen):
    """A ``numpy.random.Generator``'s bit-generator state (a dict of ints), or None.

    The 128-bit integers of PCG64 are kept as strings so any reader takes them.
    """
    if gen is None:
        return None
    return _ints_to_text(gen.bit_generator.state)


def restore_generator(gen, saved):
    """Set ``gen``'s bit-generator state from :func:`generator_state`."""
    if gen is not None and saved is not None:
        gen.bit_generator.state = _text_to_ints(saved)


def _ints_to_text(d):
    return {k: _ints_to_text(v) if isinstance(v, dict) else
            (f"int:{v}" if isinstance(v, int) and not isinstance(v, bool) else v)
            for k, v in d.items()}


def _text_to_ints(d):
    return {k: _text_to_ints(v) if isinstance(v, dict) else
            (int(v[4:]) if isinstance(v, str) and v.startswith("int:") else v)
            for k, v in d.items()}


# ---- Environments ----

def _plain(value, depth=0):
    """``(True, saved form)`` for a value that is state we can save, else ``(False, None)``.

    Numbers, flags, strings, ``None``, numeric numpy arrays and scalars, and lists,
    tuples and string-keyed dicts of those (nested at most a few levels) are state
    we can save. Containers are wrapped in a one-key dict (``{"__list__": [...]}``)
    so :func:`_unplain` gives back the same type.
    """
    import torch
    # numpy scalars first: np.float64 is a subclass of float, but torch.load(weights_only=True)
    # refuses a numpy scalar, so it must be stored as the Python number it holds.
    if isinstance(value, np.generic):
        return (True, value.item()) if value.dtype.kind in "biuf" else (False, None)
    if value is None or isinstance(value, (bool, int, float, str)):
        return True, value
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return True, torch.from_numpy(np.array(value))
    if depth >= 4 or not isinstance(value, (tuple, list, dict)):
        return False, None
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return False, None
        items = {k: _plain(v, depth + 1) for k, v in value.items()}
        ok = all(good for good, _ in items.values())
        return (True, {"__dict__": {k: saved for k, (_, saved) in items.items()}}) if ok \
            else (False, None)
    items = [_plain(v, depth + 1) for v in value]
    if not all(good for good, _ in items):
        return False, None
    return True, {"__tuple__" if isinstance(value, tuple) else "__list__":
                  [saved for _, saved in items]}


def _unplain(value):
    import torch
    if isinstance(value, torch.Tensor):
        return value.numpy().copy()
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key in ("__tuple__", "tuple"):  # "tuple": checkpoints written before lists were saved
            return tuple(_unplain(v) for v in inner)
        if key == "__list__":
            return [_unplain(v) for v in inner]
        if key == "__dict__":
            return {k: _unplain(v) for k, v in inner.items()}
    return value


def _is_running_stats(value):
    """True for a running mean/variance tracker (gymnasium's ``RunningMeanStd``, used by
    ``NormalizeObservation`` and ``NormalizeReward``) whose fields are all plain values."""
    return (type(value).__name__ == "RunningMeanStd" and hasattr(value, "__dict__")
            and all(_plain(v)[0] for v in vars(value).values()))


def _layers(env):
    """The wrapper chain from the outermost wrapper to the base environment
    (without :class:`EpisodeRecorder`, which holds no state of the env itself)."""
    layers = [env]
    while hasattr(layers[-1], "env") and layers[-1].env is not layers[-1]:
        layers.append(layers[-1].env)
    return [layer for layer in layers if not isinstance(layer, EpisodeRecorder)]


def _recorder(env):
    """The :class:`EpisodeRecorder` in ``env``'s wrapper chain, or None."""
    while env is not None:
        if isinstance(env, EpisodeRecorder):
            return env
        inner = getattr(env, "env", None)
        env = inner if inner is not env else None
    return None


def env_state(env):
    """Describe an environment so that :func:`restore_env_state` continues its episode.

    Saved, for every layer of the wrapper chain: plain attributes (numbers,
    flags, numeric arrays, e.g. ``TimeLimit._elapsed_steps`` or a classic-control
    env's ``state``) and the ``np_random`` generator; for MuJoCo envs, the full
    integration state of ``data`` (time, ``qpos``, ``qvel``, actuator and warm-start
    state); and the action space's generator. Lists, tuples and dicts of plain
    values are saved too. Running statistics (``RunningMeanStd`` of the
    ``NormalizeObservation``/``NormalizeReward`` wrappers) are saved field by
    field, under ``"stats"``, and restored even when the episode is not.
    Attributes of other kinds (a Box2D world, a deque, an object) cannot be
    saved: the result is then marked ``exact=False`` and their names are listed
    under ``"skipped"``; if ``env`` is wrapped in an :class:`EpisodeRecorder`, the
    episode's recording is added under ``"replay"`` so that a resume can rebuild
    it, otherwise a resume starts a new episode.

    Returns:
        dict: tensors and plain values.
    """
    layers, exact, skipped = [], True, []
    for layer in _layers(env):
        attrs, stats = {}, {}
        for name, value in vars(layer).items():
            if name in _NOT_STATE or callable(value):
                continue
            ok, saved = _plain(value)
            if ok:
                attrs[name] = saved
            elif _is_running_stats(value):
                stats[name] = {field: _plain(v)[1] for field, v in vars(value).items()}
            else:
                exact = False
                skipped.append(f"{type(layer).__name__}.{name}")
        layers.append({"class": type(layer).__name__, "attrs": attrs, "stats": stats,
                       "np_random": generator_state(vars(layer).get("_np_random"))})
    state = {"layers": layers, "exact": exact, "skipped": skipped,
             "mujoco": _mujoco_state(env.unwrapped),
             "action_space": generator_state(getattr(env.action_space, "_np_random", None))}
    recorder = _recorder(env)
    if not exact and recorder is not None:  # only needed when the attributes fall short
        state["replay"] = recorder.replay_state()
    return state


def _mujoco_state(base):
    data, model = getattr(base, "data", None), getattr(base, "model", None)
    if data is None or model is None or type(data).__name__ != "MjData":
        return None
    import mujoco
    import torch
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    buf = np.empty(mujoco.mj_stateSize(model, spec), dtype=np.float64)
    mujoco.mj_getState(model, data, buf, spec)
    return torch.from_numpy(buf)


def restore_env_state(env, saved, what="the environment", obs=None, new_episode=False):
    """Continue ``env``'s saved episode; False if only a new episode can be started.

    ``env`` must be built the same way as the saved one (same wrappers) and have
    been reset once. When the saved attributes are incomplete (see
    :func:`env_state`, e.g. a Box2D world) but ``env`` is wrapped in an
    :class:`EpisodeRecorder` and ``obs`` (the saved current observation) is
    given, the episode is rebuilt by replay (see :func:`_replay`); if the
    replayed observation equals ``obs`` the resume is exact. Otherwise nothing
    of the episode is restored, a warning naming what restarts is printed once
    per process, and False is returned: the caller then resets ``env``.

    Args:
        new_episode (bool): the caller resets ``env`` before its next step (a test
            env), so only what outlives an episode matters: generators and running
            statistics are restored and no warning is printed for the rest.
    """
    global _warned_inexact
    layers = _layers(env)
    classes = [type(layer).__name__ for layer in layers]
    same_chain = classes == [layer["class"] for layer in saved["layers"]]
    why_not = None  # why a replay was not possible or failed
    replayed = False
    if same_chain and not saved["exact"] and obs is not None and saved.get("replay"):
        why_not = _replay(env, saved["replay"], obs)
        replayed = why_not is None
    if same_chain:  # running statistics and generators carry over even when the episode
        for layer, entry in zip(layers, saved["layers"]):  # cannot (so do the next resets)
            for name, fields in entry.get("stats", {}).items():
                target = vars(layer).get(name)
                if target is not None:
                    for field, value in fields.items():
                        setattr(target, field, _unplain(value))
            if entry["np_random"] is not None and vars(layer).get("_np_random") is not None:
                restore_generator(layer._np_random, entry["np_random"])
        restore_generator(getattr(env.action_space, "_np_random", None), saved["action_space"])
    if (not saved["exact"] and not replayed) or not same_chain:
        if not _warned_inexact and not (new_episode and same_chain):
            if not same_chain:
                print(f"Warning: cannot restore {what} exactly (its wrapper chain differs "
                      "from the saved one); the resumed run starts a new episode and every "
                      "wrapper starts afresh.", flush=True)
            else:
                kept = [f"{entry['class']}.{name}" for entry in saved["layers"]
                        for name in entry.get("stats", {})]
                print(f"Warning: cannot restore {what} exactly (cannot save "
                      f"{', '.join(saved['skipped'])}"
                      + (f"; {why_not}" if why_not else "")
                      + "); the resumed run starts a new episode, "
                      "and those attributes take the values a new episode gives them"
                      + (f" (restored: {', '.join(kept)})" if kept else "") + ".", flush=True)
            _warned_inexact = True
        return False
    for layer, entry in zip(layers, saved["layers"]):
        for name, value in entry["attrs"].items():
            setattr(layer, name, _unplain(value))
    if saved["mujoco"] is not None:
        import mujoco
        base = env.unwrapped
        mujoco.mj_setState(base.model, base.data, saved["mujoco"].numpy(),
                           mujoco.mjtState.mjSTATE_INTEGRATION)
        mujoco.mj_forward(base.model, base.data)
    return True


#: Episodes longer than this are not recorded for replay (their resume starts anew).
MAX_REPLAY_STEPS = 100_000


class EpisodeRecorder(gym.Wrapper):
    """Records the training env's current episode so that a resume can rebuild it.

    Some envs hold state no checkpoint can store (a Box2D world). Their episode is
    fully determined by the env's random generators just before ``reset``, the
    ``seed``/``options`` given to it, and the actions passed to ``step`` since:
    this wrapper keeps exactly those, and :func:`restore_env_state` replays them.
    It changes nothing the agent sees: observations, rewards, ``spec``,
    ``unwrapped``, rendering and seeding pass straight through. A step costs one
    list append (and a copy of an array action, in case the caller reuses it).
    An episode longer than :data:`MAX_REPLAY_STEPS` stops being recorded. The
    running statistics of wrappers below (``NormalizeObservation``) are kept as
    they were before the reset too, since they shape the observations replayed.
    """

    def __init__(self, env):
        super().__init__(env)
        self._below = _layers(env)   # the chain is fixed once built
        self._stats = [(i, name) for i, layer in enumerate(self._below)
                       for name, value in vars(layer).items() if _is_running_stats(value)]
        self._reset_args = None      # (seed, options, generators, statistics) at the last reset
        self._actions = None         # actions since that reset; None when not recording
        self._why_not = "the env was not reset"

    @property
    def spec(self):
        """The wrapped env's spec, unchanged (this wrapper is not part of the recipe)."""
        return self.env.spec

    def reset(self, *, seed=None, options=None):
        gens = [None if vars(layer).get("_np_random") is None
                else vars(layer)["_np_random"].bit_generator.state for layer in self._below]
        stats = [(i, name, {field: np.copy(v) if isinstance(v, np.ndarray) else v
                            for field, v in vars(getattr(self._below[i], name)).items()})
                 for i, name in self._stats]
        self._reset_args = (seed, options, gens, stats)
        self._actions, self._why_not = [], None
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        actions = self._actions
        if actions is not None:
            if len(actions) < MAX_REPLAY_STEPS:
                actions.append(action.copy() if type(action) is np.ndarray else action)
            else:
                self._actions = None
                self._why_not = (f"the episode in progress is longer than {MAX_REPLAY_STEPS} "
                                 "steps, too long to record for a replay")
        return self.env.step(action)

    def replay_state(self):
        """What :func:`_replay` needs, as tensors and plain values (``actions`` is
        None, with the reason under ``why_not``, when the episode cannot be replayed)."""
        import torch
        state = {"actions": None, "why_not": self._why_not}
        if self._actions is None:
            return state
        seed, options, gens, stats = self._reset_args
        ok_seed, seed = _plain(seed)
        ok_opts, options = _plain(options)
        try:
            actions = np.asarray(self._actions)
        except (ValueError, TypeError):
            actions = np.asarray([], dtype=object)
        if not (ok_seed and ok_opts):
            state["why_not"] = "the seed or options of its reset cannot be saved"
        elif actions.dtype.kind not in "biuf":
            state["why_not"] = "its actions are not numeric arrays"
        else:
            state.update(actions=torch.from_numpy(actions), why_not=None, seed=seed,
                         options=options,
                         np_random=[None if g is None else _ints_to_text(g) for g in gens],
                         stats=[[i, name, {f: _plain(v)[1] for f, v in fields.items()}]
                                for i, name, fields in stats])
        return state


def _replay(env, rec, obs):
    """Rebuild ``env``'s recorded episode; None when it matches ``obs``, else why not.

    Puts the generators back to where they were before the episode's reset,
    resets the same way, steps through the recorded actions and compares the
    last observation with ``obs`` (``np.array_equal``).
    """
    recorder = _recorder(env)
    if rec.get("actions") is None or recorder is None:
        return rec.get("why_not") or "its episode was not recorded"
    below = _layers(recorder.env)
    if len(below) != len(rec["np_random"]):
        return "its recorded episode is from another wrapper chain"
    for layer, gen in zip(below, rec["np_random"]):
        if "_np_random" not in vars(layer) and gen is None:
            continue
        if gen is None:
            layer._np_random = None
            continue
        if vars(layer).get("_np_random") is None:
            layer._np_random = np.random.Generator(getattr(np.random, gen["bit_generator"])())
        restore_generator(layer._np_random, gen)
    for i, name, fields in rec.get("stats", []):
        for field, value in fields.items():
            setattr(getattr(below[i], name), field, _unplain(value))
    actions = rec["actions"].numpy()
    try:
        last, _ = env.reset(seed=_unplain(rec["seed"]), options=_unplain(rec["options"]))
        for i, action in enumerate(actions):
            last, _, terminated, truncated, _ = env.step(action)
            if (terminated or truncated) and i < len(actions) - 1:
                break
    except Exception as e:  # the env refuses its own replay: not deterministic enough
        return f"replaying its episode failed ({type(e).__name__})"
    if np.array_equal(np.asarray(last), np.asarray(obs)):
        return None
    return (f"replaying its {len(actions)} recorded actions did not give back the saved "
            "observation: the env is not deterministic")


def recorded(env):
    """``env`` wrapped in an :class:`EpisodeRecorder` (a non-gymnasium env is returned as is)."""
    return EpisodeRecorder(env) if isinstance(env, gym.Env) else env


def episode_state(env, obs, ep_ret, ep_len):
    """:func:`env_state` plus the episode in progress (its last observation and totals)."""
    import torch
    return {"env": env_state(env), "obs": torch.as_tensor(np.array(obs)),
            "ep_ret": float(ep_ret), "ep_len": int(ep_len)}


def restore_episode(env, saved, what="the environment"):
    """Undo :func:`episode_state`: returns ``(obs, ep_ret, ep_len)`` to continue with.

    When the env cannot be restored exactly (not even by replay, see
    :func:`restore_env_state`), ``env`` is reset and a new episode starts
    (``ep_ret = ep_len = 0``).
    """
    obs = saved["obs"].numpy().copy()
    if restore_env_state(env, saved["env"], what, obs=obs):
        return obs, saved["ep_ret"], saved["ep_len"]
    obs, _ = env.reset()
    return obs, 0.0, 0


def episode_states(envs, obs, ep_ret, ep_len):
    """:func:`episode_state` of each of several envs stepped together: a list, entry
    ``i`` for ``envs[i]`` with ``obs[i]``, ``ep_ret[i]`` and ``ep_len[i]``."""
    return [episode_state(env, obs[i], ep_ret[i], ep_len[i]) for i, env in enumerate(envs)]


def restore_episodes(algo, envs, saved):
    """Undo :func:`episode_states` for ``envs`` (the same number of envs, built anew).

    Returns ``(obs, ep_ret, ep_len)`` as arrays with one row per env. A single
    :func:`episode_state` (a checkpoint written with one env) counts as a list of one.

    Raises:
        ValueError: the checkpoint holds another number of envs than ``envs``.
    """
    saved = [saved] if isinstance(saved, dict) else saved
    if len(saved) != len(envs):
        raise ValueError(f"{algo}: the run to resume stepped {len(saved)} envs at once; resume "
                         f"it with num_envs={len(saved)}, not {len(envs)}")
    obs, ep_ret, ep_len = zip(*(restore_episode(env, s) for env, s in zip(envs, saved)))
    return np.stack(obs), np.array(ep_ret, dtype=float), np.array(ep_len, dtype=int)


def module_states(**objs):
    """``{name: obj.state_dict()}`` for networks and optimizers (None stays None)."""
    return {name: None if obj is None else obj.state_dict() for name, obj in objs.items()}


def load_module_states(saved, **objs):
    """``obj.load_state_dict(saved[name])`` for every named network or optimizer."""
    for name, obj in objs.items():
        if obj is not None:
            obj.load_state_dict(saved[name])


# ---- Replay buffers ----

def replay_state(buf):
    """A replay buffer's contents: the filled rows of every ``*_buf`` array, ``ptr``
    and ``size``; for a prioritized buffer also its sum-tree and ``max_priority``.

    Only the first ``size`` rows are saved, so a checkpoint early in a run stays
    small; a full buffer takes ``size * (bytes of one transition)``.
    """
    import torch
    rows = slice(0, buf.size)
    state = {name: torch.from_numpy(value[rows]) for name, value in vars(buf).items()
             if name.endswith("_buf") and isinstance(value, np.ndarray)}
    state.update(ptr=int(buf.ptr), size=int(buf.size))
    tree = getattr(buf, "tree", None)
    if tree is not None:
        state.update(tree=torch.from_numpy(tree.tree), max_priority=float(buf.max_priority))
    return state


def restore_replay(buf, saved):
    """Refill ``buf`` (built with the same capacity) from :func:`replay_state`."""
    buf.ptr, buf.size = saved["ptr"], saved["size"]
    for name, value in saved.items():
        if name.endswith("_buf"):
            getattr(buf, name)[:buf.size] = value.numpy()
    if "tree" in saved:
        buf.tree.tree[:] = saved["tree"].numpy()
        buf.max_priority = saved["max_priority"]
