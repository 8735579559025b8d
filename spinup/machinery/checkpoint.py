"""Checkpoints: the whole training state of a run, so that it can be resumed.

All the next epoch depends on (networks, optimizers, counters, random generators, envs down to
the episode in progress, the replay buffer, ``progress.txt``) as tensors and plain values,
readable with ``weights_only=True``, in ``pyt_save/checkpoint.pt`` after each epoch
(``checkpoint_rank{r}.pt`` on MPI rank r > 0). See ``docs/user/saving_and_loading.rst``.
"""
import os
import os.path as osp
import pickle
import random
import re
import shutil
import time
import warnings

import gymnasium as gym
import numpy as np

from spinup.utils.mpi_tools import mpi_op, num_procs, proc_id
from spinup.machinery.serialization_utils import write_atomically

#: Written into every checkpoint; a file with another value is refused.
CHECKPOINT_FORMAT = "spinup-checkpoint-1"

# Attributes of envs and wrappers that are configuration, rendering or bookkeeping, not
# the state of an episode: never saved.
_NOT_STATE = {"env", "spec", "metadata", "render_mode", "observation_space", "action_space",
              "_action_space", "_observation_space", "_metadata", "_cached_spec", "_saved_kwargs",
              "_ezpickle_args", "_ezpickle_kwargs", "_np_random", "screen", "clock", "viewer",
              "mujoco_renderer", "model", "data", "fullpath", "observation_structure",
              "_previous_data", "camera_name", "camera_id", "reward_range", "_reward_range"}

_warned_inexact = False


# ---- Files ----

def checkpoint_path(output_dir, rank=0):
    """Where MPI rank ``rank`` keeps its checkpoint inside ``output_dir``."""
    name = "checkpoint.pt" if rank == 0 else f"checkpoint_rank{rank}.pt"
    return osp.join(output_dir, "pyt_save", name)


def previous_checkpoint_path(output_dir, rank=0):
    """Where MPI rank ``rank`` keeps its checkpoint of the epoch before (MPI runs only)."""
    return checkpoint_path(output_dir, rank)[:-len(".pt")] + ".prev.pt"


def checkpoint_ranks(output_dir):
    """How many MPI processes wrote the checkpoint files in ``output_dir`` (0: none)."""
    return len([name for name in os.listdir(osp.join(output_dir, "pyt_save"))
                if re.fullmatch(r"checkpoint(_rank\d+)?\.pt", name)])


def save_checkpoint(output_dir, state):
    """Write this rank's checkpoint (:func:`checkpoint_path`) of ``state`` (tensors and plain
    values, from :meth:`Checkpoint.state`) atomically; rank 0 adds ``progress.txt``'s text."""
    import torch
    path = checkpoint_path(output_dir, proc_id())
    os.makedirs(osp.dirname(path), exist_ok=True)
    if num_procs() > 1 and osp.exists(path):
        # A stop while the ranks write leaves them an epoch apart: keep the epoch before.
        previous = previous_checkpoint_path(output_dir, proc_id())
        tmp = f"{previous}.tmp{os.getpid()}"
        try:
            os.link(path, tmp)
        except OSError:   # a file system without hard links
            shutil.copyfile(path, tmp)
        os.replace(tmp, previous)
    payload = dict(state, format=CHECKPOINT_FORMAT)
    table = osp.join(output_dir, "progress.txt")
    if proc_id() == 0 and osp.exists(table):
        with open(table) as f:
            payload["table"] = f.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_atomically(path, lambda tmp: torch.save(payload, tmp))


def load_checkpoint(output_dir, rank=None, mmap=False):
    """Read the checkpoint that :func:`save_checkpoint` wrote (this rank's by default).
    ``mmap=True`` maps the file: its tensors are read only where used (for the counters alone).
    Under MPI, ``rank=None`` is a collective call: a rank whose latest file is an epoch ahead
    of another's takes its file of the epoch before; all raise if no epoch fits.

    Raises:
        FileNotFoundError: ``output_dir`` has no checkpoint for this rank.
        ValueError: the file is truncated, holds anything but tensors and plain values,
            is not a spinup checkpoint, or the ranks' files cannot agree on one epoch.
    """
    if rank is not None or num_procs() == 1:
        return _read_checkpoint(output_dir, proc_id() if rank is None else rank, mmap=mmap)
    mine, error = None, None
    try:
        mine = _read_checkpoint(output_dir, proc_id(), mmap=mmap)
    except (FileNotFoundError, ValueError) as e:
        error = e
    epoch = -1 if mine is None else int(mine["epoch"])
    low, high = (int(mpi_op(epoch, op)) for op in ("min", "max"))
    if int(mpi_op(0 if error is None else 1, "max")):   # all stop together
        raise error or ValueError(f"{output_dir}: another MPI rank cannot read its "
                                  "checkpoint; cannot resume")
    if epoch > low:
        previous = previous_checkpoint_path(output_dir, proc_id())
        try:
            mine = _read_checkpoint(output_dir, proc_id(), previous, mmap=mmap)
        except (FileNotFoundError, ValueError):
            mine = None
    if not int(mpi_op(1 if mine is not None and int(mine["epoch"]) == low else 0, "min")):
        raise ValueError(f"{output_dir}: the MPI ranks' checkpoints are after epochs {low} to "
                         f"{high} and cannot be brought to one epoch; cannot resume")
    return mine


def _read_checkpoint(output_dir, rank, path=None, mmap=False):
    """One checkpoint file (rank ``rank``'s latest, or ``path``), checked."""
    import torch
    path = path or checkpoint_path(output_dir, rank)
    if not osp.exists(path):
        raise FileNotFoundError(f"{output_dir}: no checkpoint to resume from ({path} does not "
                                "exist; checkpoints are written at the end of each epoch)")
    try:
        # map_location: a GPU run resumes on any device (states are copied where they go)
        state = torch.load(path, weights_only=True, map_location="cpu", mmap=mmap)
    except Exception as e:
        refused = "weights_only" in str(e).lower().replace(" ", "_")
        if not (isinstance(e, pickle.UnpicklingError) and refused):  # truncated or damaged
            raise ValueError(f"{output_dir}: corrupt checkpoint {path} ({type(e).__name__}); "
                             "cannot resume from it") from None
        # complete, but holds more than tensors and plain values
        found = re.search(r"GLOBAL (\S+)", str(e))
        raise ValueError(f"{output_dir}: checkpoint {path} holds objects other than tensors "
                         f"and plain values ({found.group(1) if found else 'pickled code'}), "
                         "which are not loaded; cannot resume from it") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{output_dir}: corrupt checkpoint {path} (not a "
                         f"{CHECKPOINT_FORMAT} file)")
    return state


# ---- Random generators ----

def rng_state():
    """The global generators of ``random``, numpy and torch (and CUDA once used)."""
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


def _generator_state(gen):
    """A ``numpy.random.Generator``'s state, or None; ints as ``"int:N"`` (PCG64's are
    128-bit)."""
    if gen is None:
        return None
    return _map_leaves(gen.bit_generator.state, lambda v: f"int:{v}" if isinstance(v, int)
                       and not isinstance(v, bool) else v)


def _restore_generator(gen, saved):
    if gen is not None and saved is not None:
        gen.bit_generator.state = _map_leaves(saved, lambda v: int(v[4:]) if isinstance(
            v, str) and v.startswith("int:") else v)


def _map_leaves(d, fn):
    return {k: _map_leaves(v, fn) if isinstance(v, dict) else fn(v) for k, v in d.items()}


# ---- Environments ----

def _plain(value, depth=0):
    """``(True, saved form)`` for a value made of numbers, strings, ``None``, numeric
    numpy values, and lists, tuples and str-keyed dicts of them; else ``(False, None)``."""
    import torch
    # numpy scalars first (np.float64 is a float): weights_only loading refuses them
    if isinstance(value, np.generic):
        return (True, value.item()) if value.dtype.kind in "biuf" else (False, None)
    if value is None or isinstance(value, (bool, int, float, str)):
        return True, value
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return True, torch.from_numpy(np.array(value))
    if depth >= 4 or not isinstance(value, (tuple, list, dict)) or (
            isinstance(value, dict) and not all(isinstance(k, str) for k in value)):
        return False, None
    items = {k: _plain(v, depth + 1)
             for k, v in (value.items() if isinstance(value, dict) else enumerate(value))}
    if not all(good for good, _ in items.values()):
        return False, None
    parts = [part for _, part in items.values()]
    if isinstance(value, dict):
        return True, {"__dict__": dict(zip(items, parts))}
    return True, {"__tuple__" if isinstance(value, tuple) else "__list__": parts}


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
    """True for gymnasium's ``RunningMeanStd`` (``Normalize*`` wrappers)."""
    return (type(value).__name__ == "RunningMeanStd" and hasattr(value, "__dict__")
            and all(_plain(v)[0] for v in vars(value).values()))


def _layers(env, recorder=False):
    """The wrapper chain, outermost first, without the :class:`EpisodeRecorder`; with
    ``recorder``: that recorder, or None."""
    layers = [env]
    while hasattr(layers[-1], "env") and layers[-1].env is not layers[-1]:
        layers.append(layers[-1].env)
    if recorder:
        return next((layer for layer in layers if isinstance(layer, EpisodeRecorder)), None)
    return [layer for layer in layers if not isinstance(layer, EpisodeRecorder)]


def env_state(env):
    """``env``'s state as tensors and plain values, for :func:`restore_env_state`: each
    wrapper's plain attributes, generator and running statistics, the action space's
    generator and a MuJoCo env's integration state. Attributes that cannot be saved are
    listed under ``"skipped"`` with ``exact=False``; then an :class:`EpisodeRecorder` in
    the chain adds its recording (``"replay"``)."""
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
                       "np_random": _generator_state(vars(layer).get("_np_random"))})
    state = {"layers": layers, "exact": exact, "skipped": skipped,
             "mujoco": _mujoco_state(env.unwrapped),
             "action_space": _generator_state(getattr(env.action_space, "_np_random", None))}
    recorder = _layers(env, recorder=True)
    if not exact and recorder is not None:
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
    """Continue the episode that :func:`env_state` saved in ``env`` (built with the same
    wrappers and reset once); return False, after a warning printed once per process, if
    the caller must reset ``env`` instead. An inexact state is rebuilt by replaying the
    recorded episode when ``obs``, the saved observation, is given. With ``new_episode``
    (a test env) only generators and running statistics matter, without a warning."""
    global _warned_inexact
    layers = _layers(env)
    same_chain = [type(la).__name__ for la in layers] == [la["class"] for la in saved["layers"]]
    replayable = same_chain and not saved["exact"] and obs is not None and saved.get("replay")
    why_not = _replay(env, saved["replay"], obs) if replayable else None
    replayed = replayable and why_not is None
    if same_chain:  # generators and running statistics carry over even without the episode
        for layer, entry in zip(layers, saved["layers"]):
            for name, fields in entry.get("stats", {}).items():
                target = vars(layer).get(name)
                if target is not None:
                    for field, value in fields.items():
                        setattr(target, field, _unplain(value))
            _restore_generator(vars(layer).get("_np_random"), entry["np_random"])
        _restore_generator(getattr(env.action_space, "_np_random", None), saved["action_space"])
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
                      f"{', '.join(saved['skipped'])}" + (f"; {why_not}" if why_not else "")
                      + "); the resumed run starts a new episode, and those attributes take "
                      "the values a new episode gives them"
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
    """Records the current episode (the generators and running statistics before
    ``reset``, its ``seed``/``options``, up to :data:`MAX_REPLAY_STEPS` actions), so that
    :func:`restore_env_state` can replay an episode whose state cannot be saved (a Box2D
    world). Observations, rewards and infos pass through unchanged."""

    def __init__(self, env):
        super().__init__(env)
        self._below = _layers(env)
        self._stats = [(i, name) for i, layer in enumerate(self._below)
                       for name, value in vars(layer).items() if _is_running_stats(value)]
        self._reset_args = None      # (seed, options, generators, statistics) at the last reset
        self._actions = None         # actions since that reset; None when not recording
        self._why_not = "the env was not reset"

    @property
    def spec(self):
        """The wrapped env's spec (this wrapper is not part of it)."""
        return self.env.spec

    def reset(self, *, seed=None, options=None):
        gens = [_generator_state(vars(layer).get("_np_random")) for layer in self._below]
        stats = [(i, name, {field: np.copy(v) if isinstance(v, np.ndarray) else v
                            for field, v in vars(getattr(self._below[i], name)).items()})
                 for i, name in self._stats]
        self._reset_args = (seed, options, gens, stats)
        self._actions, self._why_not = [], None
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        actions = self._actions
        if actions is not None and len(actions) < MAX_REPLAY_STEPS:
            actions.append(action.copy() if type(action) is np.ndarray else action)
        elif actions is not None:
            self._actions, self._why_not = None, (f"the episode in progress is longer than "
                                                  f"{MAX_REPLAY_STEPS} steps, too long to "
                                                  "record for a replay")
        return self.env.step(action)

    def replay_state(self):
        """What :func:`_replay` needs, as tensors and plain values (``actions`` None and
        ``why_not`` when it cannot replay)."""
        import torch
        state = {"actions": None, "why_not": self._why_not}
        if self._actions is None:
            return state
        seed, options, gens, stats = self._reset_args
        (ok_seed, seed), (ok_opts, options) = _plain(seed), _plain(options)
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
                         options=options, np_random=gens,
                         stats=[[i, name, {f: _plain(v)[1] for f, v in fields.items()}]
                                for i, name, fields in stats])
        return state


def _replay(env, rec, obs):
    """Replay ``env``'s recorded episode; None when it ends on ``obs``, else why not."""
    recorder = _layers(env, recorder=True)
    if rec.get("actions") is None or recorder is None:
        return rec.get("why_not") or "its episode was not recorded"
    below = _layers(recorder.env)
    if len(below) != len(rec["np_random"]):
        return "its recorded episode is from another wrapper chain"
    for layer, gen in zip(below, rec["np_random"]):
        if gen is None and "_np_random" in vars(layer):
            layer._np_random = None
        elif gen is not None and vars(layer).get("_np_random") is None:
            layer._np_random = np.random.Generator(getattr(np.random, gen["bit_generator"])())
        _restore_generator(vars(layer).get("_np_random"), gen)
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
    except Exception as e:
        return f"replaying its episode failed ({type(e).__name__})"
    return None if np.array_equal(np.asarray(last), np.asarray(obs)) else (
        f"replaying its {len(actions)} recorded actions did not give back the saved "
        "observation: the env is not deterministic")


def recorded(env):
    """``env`` wrapped in an :class:`EpisodeRecorder` (a non-gymnasium env is returned as is)."""
    return EpisodeRecorder(env) if isinstance(env, gym.Env) else env


# ---- What an algorithm saves ----

class Checkpoint:
    """What an algorithm saves after each epoch and puts back on a resume: ``epoch``,
    ``elapsed`` (seconds), ``rng``, an entry per name in ``nets``, ``episode`` (a list for
    a list of envs), ``replay``, ``test_env`` and the extra values given to :meth:`state`.

    Args:
        algo (str): the algorithm's name, which starts error messages.
        logger (EpochLogger): the run's logger (a resume cuts its table back).
        env, replay, test_env: the training env (or list of envs stepped together), the
            replay buffer and the test env, each saved if given.
        placed (Placement): if given, refreshed once the networks are loaded.
        nets (dict): name -> network or optimizer (``state_dict``/``load_state_dict``),
            or tensor (saved as a copy, copied back in place); None is saved as None.
    """

    def __init__(self, algo, logger, env=None, placed=None, nets=None, replay=None,
                 test_env=None):
        self.algo, self.logger, self.env, self.placed = algo, logger, env, placed
        self.nets, self.replay, self.test_env = nets or {}, replay, test_env

    def state(self, epochs_done, start_time, episode=None, **extra):
        """The checkpoint after ``epochs_done`` epochs, for :func:`save_checkpoint`.
        ``start_time``: when training began (``time.time()``); ``episode``: ``(obs,
        ep_ret, ep_len)`` in ``env`` (a row per env for a list); ``extra``: more values."""
        state = dict(epoch=epochs_done, elapsed=time.time() - start_time, rng=rng_state())
        for name, obj in self.nets.items():
            state[name] = (None if obj is None else obj.state_dict()
                           if hasattr(obj, "state_dict") else obj.detach().clone())
        if self.replay is not None:
            state["replay"] = _replay_state(self.replay)
        if hasattr(self.env, "task"):   # a batched task: its state and a row per copy
            state["episode"] = _batch_state(self.env, *episode)
        elif isinstance(self.env, list):
            state["episode"] = [_episode_state(env, *row)
                                for env, row in zip(self.env, zip(*episode))]
        elif self.env is not None:
            state["episode"] = _episode_state(self.env, *episode)
        if self.test_env is not None:
            state["test_env"] = env_state(self.test_env)
        return dict(state, **extra)

    def restore(self, saved):
        """Put ``saved`` (from :func:`load_checkpoint`) back; extra values are the caller's.
        Returns ``(epochs_done, start_time, episode)``, ``episode`` being ``(obs, ep_ret,
        ep_len)`` to go on with (None without ``env``; a new one if it cannot be restored).
        Raises ValueError when the saved run stepped another number of envs."""
        import torch
        from spinup.machinery.device import load_optimizer
        for name, obj in self.nets.items():
            if isinstance(obj, torch.optim.Optimizer):   # keeps this device's settings
                load_optimizer(obj, saved[name])
            elif hasattr(obj, "load_state_dict"):
                obj.load_state_dict(saved[name])
            elif obj is not None:
                with torch.no_grad():
                    obj.copy_(saved[name])
        if self.placed is not None:
            self.placed.refresh()
        if self.replay is not None:
            _restore_replay(self.replay, saved["replay"])
        episode = None
        if hasattr(self.env, "task"):
            episode = _restore_batch(self.algo, self.env, saved["episode"])
        elif isinstance(self.env, list):
            eps = saved["episode"] if isinstance(saved["episode"], list) else [saved["episode"]]
            if len(eps) != len(self.env):
                raise ValueError(f"{self.algo}: the run to resume stepped {len(eps)} envs at "
                                 f"once; resume it with num_envs={len(eps)}, not {len(self.env)}")
            obs, ep_ret, ep_len = zip(*map(_restore_episode, self.env, eps))
            episode = np.stack(obs), np.array(ep_ret, dtype=float), np.array(ep_len, dtype=int)
        elif self.env is not None:
            episode = _restore_episode(self.env, saved["episode"])
        if self.test_env is not None:
            restore_env_state(self.test_env, saved["test_env"], "the test environment",
                              new_episode=True)
        restore_rng_state(saved["rng"])
        self.logger.keep_rows(saved["epoch"], saved.get("table"))
        return saved["epoch"], time.time() - saved["elapsed"], episode


def _batch_state(envs, obs, ep_ret, ep_len):
    """A batched task's state (None for a task that cannot give it) and its copies'
    episodes in progress."""
    import torch
    return {"task": envs.state_dict(), "num_envs": envs.num_envs,
            "obs": torch.as_tensor(np.array(obs)), "ep_ret": torch.as_tensor(np.array(ep_ret)),
            "ep_len": torch.as_tensor(np.array(ep_len)),
            "action_space": _generator_state(getattr(envs.action_space, "_np_random", None))}


def _restore_batch(algo, envs, saved):
    """``(obs, ep_ret, ep_len)`` of the copies' saved episodes; new episodes (with a
    warning) for a task that gave no state. Raises ValueError for another ``num_envs``."""
    if not isinstance(saved, dict) or saved.get("num_envs") != envs.num_envs:
        was = saved.get("num_envs") if isinstance(saved, dict) else len(saved)
        raise ValueError(f"{algo}: the run to resume stepped {was} envs at once; resume it "
                         f"with num_envs={was}, not {envs.num_envs}")
    _restore_generator(getattr(envs.action_space, "_np_random", None), saved.get("action_space"))
    if saved["task"] is None:
        print(f"{algo}: Warning: the batched task {type(envs.task).__name__} has no "
              "state_dict(), so its copies start new episodes on this resume", flush=True)
        return envs.reset(None), np.zeros(envs.num_envs), np.zeros(envs.num_envs, dtype=int)
    envs.load_state_dict(saved["task"])
    return (saved["obs"].numpy().copy(), saved["ep_ret"].numpy().copy(),
            saved["ep_len"].numpy().copy())


def _episode_state(env, obs, ep_ret, ep_len):
    import torch
    return {"env": env_state(env), "obs": torch.as_tensor(np.array(obs)),
            "ep_ret": float(ep_ret), "ep_len": int(ep_len)}


def _restore_episode(env, saved):
    """``(obs, ep_ret, ep_len)`` of the saved episode, or of a new one after a reset."""
    obs = saved["obs"].numpy().copy()
    if restore_env_state(env, saved["env"], "the environment", obs=obs):
        return obs, saved["ep_ret"], saved["ep_len"]
    return env.reset()[0], 0.0, 0


def _replay_state(buf):
    """The filled rows of the ``*_buf`` arrays, ``ptr``, ``size`` and a sum-tree if any."""
    import torch
    state = {name: torch.from_numpy(value[:buf.size]) for name, value in vars(buf).items()
             if name.endswith("_buf") and isinstance(value, np.ndarray)}
    state.update(ptr=int(buf.ptr), size=int(buf.size))
    if getattr(buf, "tree", None) is not None:
        state.update(tree=torch.from_numpy(buf.tree.tree), max_priority=float(buf.max_priority))
    return state


def _restore_replay(buf, saved):
    buf.ptr, buf.size = saved["ptr"], saved["size"]
    for name, value in saved.items():
        if name.endswith("_buf"):
            getattr(buf, name)[:buf.size] = value.numpy()
    if "tree" in saved:
        buf.tree.tree[:] = saved["tree"].numpy()
        buf.max_priority = saved["max_priority"]
