"""Presets and ``--config`` files: keyword arguments of an algorithm, stored as JSON.

A config file is a JSON object of keyword arguments, in the shape that a run's
``config.json`` records (see :meth:`spinup.utils.logx.Logger.save_config`), so the
``config.json`` of a finished run can be fed back to reproduce it::

    {"env_name": "CartPole-v1", "steps_per_epoch": 1000, "pi_lr": 0.001,
     "ac_kwargs": {"hidden_sizes": [64, 64], "activation": "torch.nn.Tanh"}}

A *preset* is such a file shipped with spinup, ``spinup/presets/<algo>_<Env>.json``
(e.g. ``ppo_CartPole-v1``), found by ``benchmarks/preset_search.py`` and measured in
``docs/benchmarks/time_to_threshold.rst``. Wherever a file is expected, a preset's
name works too.

Reading rules (:func:`load_config`):

* ``env_name`` is the gymnasium id. If it is absent, it is read from a recorded
  ``env_fn`` such as ``"spinup.launch.run_utils.gym.make('CartPole-v1')"``.
* Keys that ``config.json`` records but that are not settings of the run are
  dropped: ``exp_name``, ``logger_kwargs`` (the output location is chosen by the
  caller), ``env_fn``, and ``actor_critic`` when it names the default class.
* Keys starting with ``_`` are comments (presets use ``"_about"``) and are ignored.
* Dotted names are imported: ``actor_critic`` and string values inside
  ``ac_kwargs`` such as ``"torch.nn.ReLU"``.
* Any other key must be an argument of the algorithm, and each key inside
  ``ac_kwargs`` an argument of the actor-critic class; otherwise one
  ``ValueError`` names the file, the key and the allowed keys.
"""
import inspect
import json
import os
import re

PRESET_DIR = os.path.dirname(os.path.abspath(__file__))

#: Keys ``config.json`` records that are not settings of the run.
RECORD_ONLY_KEYS = ("exp_name", "logger_kwargs", "env_fn")

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_ENV_IN_FN = re.compile(r"(?:make|atari)\(\s*(['\"])(.+?)\1")


def list_presets():
    """Names of the shipped presets, e.g. ``['dqn_CartPole-v1', 'ppo_CartPole-v1', ...]``."""
    return sorted(f[:-5] for f in os.listdir(PRESET_DIR) if f.endswith(".json"))


def preset_path(name):
    """The path of the shipped preset ``name`` (``"ppo_CartPole-v1"`` or ``"ppo_CartPole-v1.json"``).

    Raises:
        FileNotFoundError: there is no such preset (the message lists them).
    """
    base = name[:-5] if name.endswith(".json") else name
    path = os.path.join(PRESET_DIR, base + ".json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no preset {name!r}; presets: {', '.join(list_presets())}")
    return path


def _algorithm(fn):
    """``(name, function)`` for an algorithm given by name (``"ppo"``) or as the function."""
    if callable(fn):
        return fn.__name__, fn
    import spinup
    if fn not in spinup.ALGOS:
        raise ValueError(f"unknown algorithm {fn!r}; choose from {', '.join(sorted(spinup.ALGOS))}")
    return fn, getattr(spinup, fn)


def _import(where, key, text):
    from spinup.machinery.serialization_utils import import_module_class
    try:
        return import_module_class(text)
    except ImportError as e:
        raise ValueError(f"{where}: key {key!r}: cannot import {text!r} ({e})") from None


def resolve_kwargs(config, fn, where=None):
    """Check and resolve a config dict (already parsed JSON) into nested keyword arguments.

    Args:
        config (dict): keyword arguments as JSON values (see the module docstring).
        fn (str or callable): the algorithm, by name (``"ppo"``) or the function.
        where (str): how errors name the source; default ``"<algo> config"``.

    Returns:
        dict: keyword arguments for ``fn`` (nested: ``ac_kwargs`` is a dict), plus
        ``env_name`` when known. ``env_fn`` is not built: callers make it from
        ``env_name``.

    Raises:
        ValueError: an unknown key, a key inside ``ac_kwargs`` the actor-critic does
            not take, or a dotted name that cannot be imported.
    """
    name, algo = _algorithm(fn)
    where = where or f"{name} config"
    if not isinstance(config, dict):
        raise ValueError(f"{where}: must hold a JSON object of keyword arguments, "
                         f"got {type(config).__name__}")
    params = inspect.signature(algo).parameters
    allowed = sorted((set(params) - set(RECORD_ONLY_KEYS)) | {"env_name"})
    out = {}
    for key, value in config.items():
        if key.startswith("_") or key in ("exp_name", "logger_kwargs"):
            continue
        if key == "env_fn":
            match = _ENV_IN_FN.search(value) if isinstance(value, str) else None
            if match and "env_name" not in config:
                out["env_name"] = match.group(2)
            continue
        if key not in allowed:
            raise ValueError(f"{where}: unknown key {key!r}; allowed: {', '.join(allowed)}")
        out[key] = value

    default_ac = params["actor_critic"].default if "actor_critic" in params else None
    if isinstance(out.get("actor_critic"), str):
        out["actor_critic"] = _import(where, "actor_critic", out["actor_critic"])
    if "actor_critic" in out and out["actor_critic"] is default_ac:
        del out["actor_critic"]
    ac_class = out.get("actor_critic", default_ac)

    if "ac_kwargs" in out:
        ac_kwargs = out["ac_kwargs"]
        if not isinstance(ac_kwargs, dict):
            raise ValueError(f"{where}: 'ac_kwargs' must be a JSON object, got {ac_kwargs!r}")
        ac_allowed = None
        if inspect.isclass(ac_class):
            ac_params = inspect.signature(ac_class).parameters
            if not any(p.kind is p.VAR_KEYWORD for p in ac_params.values()):
                ac_allowed = sorted(set(ac_params) - {"observation_space", "action_space"})
        resolved = {}
        for sub, value in ac_kwargs.items():
            if ac_allowed is not None and sub not in ac_allowed:
                raise ValueError(f"{where}: unknown key 'ac_kwargs:{sub}'; allowed: "
                                 + ", ".join("ac_kwargs:" + a for a in ac_allowed))
            if isinstance(value, str) and _DOTTED.match(value):
                value = _import(where, f"ac_kwargs:{sub}", value)
            resolved[sub] = value
        out["ac_kwargs"] = resolved

    for key, value in out.items():
        if isinstance(value, str) and value.startswith("<lambda>"):
            raise ValueError(f"{where}: key {key!r} records a lambda, which cannot be "
                             "read back; give a value or a dotted name instead")
    return out


def flatten(kwargs):
    """Nested keyword arguments -> the command line's keys (``ac_kwargs:hidden_sizes``).

    Only one level is flattened, as the command line does; an empty dict disappears.
    """
    flat = {}
    for key, value in kwargs.items():
        if isinstance(value, dict) and key != "env_name":
            for sub, inner in value.items():
                flat[f"{key}:{sub}"] = inner
        else:
            flat[key] = value
    return flat


def load_config(path_or_name, fn, flat=True):
    """Read a JSON config file or a preset into keyword arguments for algorithm ``fn``.

    Args:
        path_or_name (str): a path to a ``.json`` file, or a preset's name
            (``"ppo_CartPole-v1"``, see :func:`list_presets`). An existing file wins.
        fn (str or callable): the algorithm (``"ppo"`` or ``spinup.ppo``).
        flat (bool): True (default) returns the command line's keys, one level of
            nesting written with a colon: ``{"env_name": "CartPole-v1",
            "ac_kwargs:hidden_sizes": [64, 64], "pi_lr": 0.001}``, so that flags
            given on the command line replace single entries (see :func:`overlay`).
            False returns the nested form for a direct call, ``{"ac_kwargs":
            {"hidden_sizes": [64, 64]}, ...}``; build ``env_fn`` from ``env_name``
            before calling the algorithm.

    Returns:
        dict: the keyword arguments, dotted names imported (see :func:`resolve_kwargs`).

    Raises:
        FileNotFoundError: neither a file nor a preset of that name.
        ValueError: the file is not valid JSON, or has a key the algorithm does not
            take (one line naming the file and the key).

    Example (the command line, once ``--config`` is wired in)::

        python -m spinup.run ppo --config ppo_CartPole-v1 --seed 1
        python -m spinup.run ppo --config data/x/x_s0/config.json
    """
    name, _ = _algorithm(fn)
    path = path_or_name
    if not os.path.isfile(path):
        try:
            path = preset_path(path_or_name)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{name} config {path_or_name!r}: no such file, and no preset of that name "
                f"(presets: {', '.join(list_presets())})") from None
    where = f"{name} config {path}"
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not valid JSON ({e.msg} at line {e.lineno} "
                         f"column {e.colno})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not a UTF-8 text file") from None
    _check_written_for(name, path, config, where)
    kwargs = resolve_kwargs(config, fn, where)
    return flatten(kwargs) if flat else kwargs


def _check_written_for(name, path, config, where):
    """Refuse a preset or a run's ``config.json`` that belongs to another algorithm.

    A preset says its algorithm in its file name (``ppo_CartPole-v1.json``), a run's
    ``config.json`` in its ``_algorithm`` entry. Without this check the first foreign
    key would be reported ("unknown key 'pi_lr'"), which hides the real mistake.

    Raises:
        ValueError: one line naming both algorithms and the presets of ``name``.
    """
    if os.path.dirname(os.path.abspath(path)) == PRESET_DIR:
        other = os.path.basename(path).partition("_")[0]
    else:   # only the explicit entry: another algorithm's actor_critic class may be meant
        other = config.get("_algorithm") if isinstance(config, dict) else None
        other = other if isinstance(other, str) else None
    if other is None or other == name or {other, name} <= {"trpo", "npg"}:
        return
    own = [p for p in list_presets() if p.startswith(name + "_")]
    listed = f"{name}'s presets: {', '.join(own)}" if own else f"{name} has no presets"
    raise ValueError(f"{where}: written for {other}, not {name} (use it with "
                     f"'python -m spinup.run {other} --config ...'; {listed})")


def overlay(loaded, given_keys):
    """The entries of a flat config that command-line flags do not replace.

    A flag replaces the entry of the same key; a flag for a whole dict (``ac_kwargs``)
    also replaces the config's entries inside it (``ac_kwargs:*``), and a flag for one
    entry (``ac_kwargs:activation``) replaces a config's whole ``ac_kwargs``.

    Args:
        loaded (dict): :func:`load_config` output (flat).
        given_keys (iterable of str): the full keys given on the command line.

    Returns:
        dict: the config entries to use, as ``{key: value}``.
    """
    given = set(given_keys)
    bases = {k.partition(":")[0] for k in given}
    return {k: v for k, v in loaded.items()
            if k not in given and k.partition(":")[0] not in given
            and not (":" not in k and k in bases)}
