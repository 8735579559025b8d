"""Everything spinup writes to disk about a run, and how it is read back.

``config.json`` (:func:`convert_json`) is a record only, never read back. ``pyt_save/model.pt``
(:func:`save_model`, :func:`read_model`, :func:`build_model`) is a dict of tensors and plain
values that loads with ``weights_only=True``; the classes it names must pass
:func:`resolve_saved_class` before anything is imported. torch and gymnasium are imported lazily.
"""
import importlib
import inspect
import json
import numbers
import os
import pathlib
import re
import sys
import warnings

import numpy as np

#: Layout version of ``model.pt`` (raise it when the keys or their meaning change).
MODEL_FORMAT_VERSION = 1

#: The marker that stands for a class or function inside saved ``ac_kwargs``.
DOTTED_KEY = "__dotted__"

#: Packages whose ``torch.nn.Module`` classes any ``model.pt`` may name.
TRUSTED_PACKAGES = ("spinup",)

_DOTTED_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def dotted_name(obj):
    """The import path ``"<module>.<qualified name>"`` of a class or function."""
    return f"{obj.__module__}.{obj.__qualname__}"


def import_dotted(name):
    """The object that the dotted path ``name`` names (the inverse of :func:`dotted_name`):
    the longest importable prefix is imported and the rest followed as attributes.

    Raises:
        ImportError: no prefix of ``name`` is a module, an attribute is missing, or the first
            part is a standard-library module not loaded yet (importing runs code:
            ``--act this.s`` must not print the Zen of Python).
    """
    parts = name.split(".")
    if parts[0] in sys.stdlib_module_names and parts[0] not in sys.modules:
        raise ImportError(f"cannot import {name!r}: {parts[0]!r} is a standard-library "
                          "module that spinup does not load; name a class of torch.nn, "
                          "spinup or your own module")
    for split in range(len(parts) - 1, 0, -1):
        module_name, attrs = ".".join(parts[:split]), parts[split:]
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr in attrs:
            if not hasattr(obj, attr):
                raise ImportError(f"cannot import {name!r}: {module_name} has no {attr!r}")
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import {name!r}")


def import_module_class(name):
    """:func:`import_dotted` for a name from a command line or a file (``--act``,
    ``--actor_critic``, a config file), which may only be a ``torch.nn.Module`` class.
    Raises ImportError as :func:`import_dotted`, or if the object is not such a class."""
    import torch
    obj = import_dotted(name)
    if not (inspect.isclass(obj) and issubclass(obj, torch.nn.Module)):
        raise ImportError(f"cannot use {name!r}: it is not a torch.nn.Module class, and a "
                          "name on a command line or in a file may only be one")
    return obj


def config_text(config):
    """config.json's text for a JSON-ready dict (sorted keys, one entry per line)."""
    return json.dumps(config, separators=(",", ":\t"), indent=4, sort_keys=True)


def convert_json(obj):
    """Turn any value ``obj`` into something ``json.dump`` writes, for ``config.json``:
    readable rather than parseable back.

    Returns:
        A JSON-able value: containers converted item by item (tuples and sets become lists,
        keys strings); classes and functions their dotted path; a lambda ``"<lambda> <its
        source line>"``; numpy and torch scalars their Python value; other objects
        ``{str(obj): <their public attributes>}``, or ``str(obj)`` when they have none.
    """
    if isinstance(obj, dict):
        return {str(convert_json(k)): convert_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [convert_json(item) for item in obj]
    try:
        json.dumps(obj, allow_nan=True)
        return obj  # already JSON-able (NaN and inf allowed)
    except (TypeError, ValueError, OverflowError):
        pass
    if inspect.isclass(obj):
        return dotted_name(obj)
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        if obj.__name__ != "<lambda>":
            return dotted_name(obj)
        try:
            return f"<lambda> {inspect.getsource(obj).strip()}"
        except (OSError, TypeError):
            return "<lambda>"
    if callable(getattr(obj, "item", None)):
        try:  # a numpy or torch scalar; arrays with several elements refuse
            return obj.item()
        except (ValueError, RuntimeError):
            pass
    attrs = getattr(obj, "__dict__", None)
    if attrs:
        return {str(obj): convert_json({k: v for k, v in attrs.items() if not k.startswith("_")})}
    return str(obj)


def kwargs_to_plain(kwargs):
    """Encode actor-critic kwargs as plain values that ``weights_only`` loading accepts.

    Args:
        kwargs: the ``ac_kwargs`` dict, or one value inside it.

    Returns:
        The encoded value (:func:`kwargs_from_plain` reverses it): numpy scalars and arrays
        become Python numbers and lists, tuples lists, classes and functions
        ``{"__dotted__": "<dotted path>"}``.

    Raises:
        TypeError: a value is none of these (say, an object instance).
    """
    if isinstance(kwargs, dict):
        return {str(key): kwargs_to_plain(value) for key, value in kwargs.items()}
    if isinstance(kwargs, (list, tuple)):
        return [kwargs_to_plain(value) for value in kwargs]
    if isinstance(kwargs, np.ndarray):
        return kwargs_to_plain(kwargs.tolist())
    if kwargs is None or isinstance(kwargs, str):
        return kwargs
    if isinstance(kwargs, (bool, np.bool_)):
        return bool(kwargs)
    if isinstance(kwargs, numbers.Integral):
        return int(kwargs)
    if isinstance(kwargs, numbers.Real):
        return float(kwargs)
    if callable(kwargs) and hasattr(kwargs, "__qualname__"):
        return {DOTTED_KEY: dotted_name(kwargs)}
    raise TypeError(f"cannot save ac_kwargs value {kwargs!r} in model.pt: use numbers, "
                    "strings, lists, dicts, classes or functions")


def kwargs_from_plain(plain, allowed_modules=()):
    """Decode what :func:`kwargs_to_plain` wrote; a saved class must pass
    :func:`resolve_saved_class` with ``torch``, ``spinup`` and ``allowed_modules`` trusted.

    Raises:
        ValueError: a saved name is not an allowed ``torch.nn.Module`` subclass.
        ImportError: an allowed name cannot be imported.
    """
    if isinstance(plain, dict):
        if set(plain) == {DOTTED_KEY}:
            return resolve_saved_class(plain[DOTTED_KEY], ("torch", *allowed_modules),
                                       "class in ac_kwargs")
        return {key: kwargs_from_plain(value, allowed_modules) for key, value in plain.items()}
    if isinstance(plain, list):
        return [kwargs_from_plain(value, allowed_modules) for value in plain]
    return plain


def _within(name, packages):
    return any(name == pkg or name.startswith(pkg + ".") for pkg in packages)


def resolve_saved_class(path, allowed_modules=(), role="actor-critic class"):
    """Turn a class path read from a file into the class, refusing anything unsafe: before
    importing, ``path`` must lie in ``spinup`` or ``allowed_modules`` (with submodules);
    after, it must be a ``torch.nn.Module`` subclass defined there, which is returned.

    Args:
        path (str): a dotted path such as ``"spinup.algos.ppo.core.MLPActorCritic"``.
        allowed_modules (sequence of str): more modules to trust, e.g. ``["my_project.models"]``.
        role (str): what the class is for, used in error messages.

    Raises:
        ValueError: ``path`` is not a dotted name, lies outside the trusted modules, or
            names something other than such a class.
        ImportError: an allowed module cannot be imported.
    """
    import torch
    trusted = TRUSTED_PACKAGES + tuple(allowed_modules or ())
    if not isinstance(path, str) or not _DOTTED_PATH.fullmatch(path):
        raise ValueError(f"the model file gives {path!r} as its {role}; expected a dotted "
                         "class name")
    if not _within(path, trusted):
        raise ValueError(f"refusing to load {path!r} as the {role}: only classes from "
                         f"{', '.join(trusted)} are loaded; allow its module explicitly if you "
                         "trust the file (allowed_modules=[...], test_policy --allow-module NAME)")
    found = import_dotted(path)
    if not (inspect.isclass(found) and issubclass(found, torch.nn.Module)
            and _within(found.__module__, trusted)):
        raise ValueError(f"refusing to load {path!r} as the {role}: it is not a "
                         f"torch.nn.Module subclass defined in {', '.join(trusted)}")
    return found


def space_to_dict(space):
    """Describe a gymnasium space with tensors and plain values.

    Returns:
        dict: ``{"type": "Box", "low", "high", "dtype"}`` (bounds as tensors), ``{"type":
        "Discrete", "n", "start"}``, or another space's class name and ``repr`` (not rebuilt).
    """
    import torch
    from gymnasium import spaces
    if isinstance(space, spaces.Box):
        return {"type": "Box", "low": torch.as_tensor(space.low),
                "high": torch.as_tensor(space.high), "dtype": str(space.dtype)}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    return {"type": type(space).__name__, "repr": str(space)}


def space_from_dict(desc):
    """Rebuild the space that :func:`space_to_dict` described (``None`` stays ``None``).
    Raises ValueError for a space other than ``Box`` or ``Discrete``."""
    if desc is None:
        return None
    from gymnasium import spaces
    kind = desc["type"]
    if kind == "Box":
        return spaces.Box(low=desc["low"].numpy(), high=desc["high"].numpy(),
                          dtype=np.dtype(desc["dtype"]))
    if kind == "Discrete":
        return spaces.Discrete(desc["n"], start=desc.get("start", 0))
    raise ValueError(f"cannot rebuild a {kind} space from a saved model (only Box and "
                     "Discrete are described fully)")


def write_atomically(path, write_to):
    """Create or replace the file ``path`` so that readers see the old file or the whole new
    one: ``write_to(tmp_path)`` writes a file beside it, renamed over ``path`` when done."""
    tmp_path = f"{path}.tmp{os.getpid()}"
    try:
        write_to(tmp_path)
        os.replace(tmp_path, path)
    finally:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)


def write_text_atomically(path, text):
    """:func:`write_atomically` for a text file."""
    write_atomically(path, lambda tmp_path: pathlib.Path(tmp_path).write_text(text))


def save_model(path, module, plain_kwargs, observation_space=None, action_space=None):
    """Write ``module`` to ``path`` (atomically) in the ``model.pt`` format.

    Args:
        path (str): the file to write.
        module (torch.nn.Module): the actor-critic; :func:`build_model` imports its class.
        plain_kwargs (dict): its kwargs, already through :func:`kwargs_to_plain`.
        observation_space, action_space: the spaces it was built for.
    """
    import torch
    payload = {
        "format_version": MODEL_FORMAT_VERSION,
        "ac_class": dotted_name(type(module)),
        "ac_kwargs": plain_kwargs,
        "observation_space": None if observation_space is None
        else space_to_dict(observation_space),
        "action_space": None if action_space is None else space_to_dict(action_space),
        "state_dict": {name: t.detach().cpu().clone() for name, t in module.state_dict().items()},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on saving storages are noise here
        write_atomically(path, lambda tmp_path: torch.save(payload, tmp_path))


def read_model(path):
    """Load the ``model.pt`` file ``path`` safely; return its entries (a dict).

    Raises:
        ValueError: the file is truncated, is not a dict of tensors and plain values, or
            has another ``format_version``.
    """
    import torch
    try:
        saved = torch.load(path, weights_only=True, map_location="cpu")  # also GPU tensors
    except Exception as e:  # truncated, corrupted, or holding pickled code
        raise ValueError(f"{path} is corrupted or is not a spinup model "
                         f"({type(e).__name__})") from None
    if not isinstance(saved, dict):
        raise ValueError(f"{path} is not a spinup model")
    version = saved.get("format_version")
    if version != MODEL_FORMAT_VERSION:
        raise ValueError(f"{path} has model format {version}; this spinup reads format "
                         f"{MODEL_FORMAT_VERSION}")
    return saved


def build_model(saved, path="model.pt", allowed_modules=()):
    """Rebuild the actor-critic (``ac_class(observation_space, action_space, **ac_kwargs)``
    with the saved ``state_dict``, in eval mode) from what :func:`read_model` returned.

    Args:
        saved (dict): the loaded file.
        path (str): the file's name, for error messages.
        allowed_modules (sequence of str): modules to trust besides ``spinup``.

    Returns:
        torch.nn.Module: the actor-critic.

    Raises:
        ValueError: a class fails :func:`resolve_saved_class`, or its ``hidden_sizes``
            cannot fit in memory (:func:`~spinup.machinery.arg_checks.check_saved_model_memory`).
        ImportError: a class cannot be imported (say, defined in a script run as ``__main__``).
    """
    if not isinstance(saved.get("ac_kwargs"), dict):
        raise ValueError(f"{path}: ac_kwargs is not a dict; the file is not a spinup model")
    try:
        ac_class = resolve_saved_class(saved.get("ac_class"), allowed_modules)
    except ImportError as e:
        raise ImportError(f"cannot import the actor-critic class {saved['ac_class']!r} to "
                          "rebuild the policy; make it importable, or load the weights "
                          f"yourself: torch.load({path!r}, weights_only=True)['state_dict']"
                          ) from e
    from spinup.machinery.memory import check_saved_model_memory
    check_saved_model_memory(path, saved.get("ac_class"), saved["ac_kwargs"],  # before allocating
                             saved.get("state_dict"))
    kwargs = kwargs_from_plain(saved["ac_kwargs"], allowed_modules)
    try:
        ac = ac_class(space_from_dict(saved["observation_space"]),
                      space_from_dict(saved["action_space"]), **kwargs)
    except TypeError as e:
        raise ValueError(f"{path}: {ac_class.__name__} does not take the saved ac_kwargs "
                         f"{saved['ac_kwargs']} ({e})") from None
    mismatch = _weights_mismatch(ac.state_dict(), saved["state_dict"])
    if mismatch:
        raise ValueError(f"{path}: the saved weights do not fit the network that its ac_kwargs "
                         f"{saved['ac_kwargs']} describe ({mismatch}); was the file edited, "
                         "or written by another version of the actor-critic?")
    ac.load_state_dict(saved["state_dict"])
    ac.eval()
    return ac


def _weights_mismatch(built, saved):
    """How the ``saved`` state_dict differs from the ``built`` one, in a few words, or ''."""
    if not isinstance(saved, dict):
        return "the state_dict is not a dict"
    missing = [k for k in built if k not in saved]
    extra = [k for k in saved if k not in built]
    reshaped = [k for k in built if k in saved and hasattr(saved[k], "shape")
                and tuple(saved[k].shape) != tuple(built[k].shape)]
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing, e.g. {missing[0]!r}")
    if extra:
        parts.append(f"{len(extra)} unexpected, e.g. {extra[0]!r}")
    if reshaped:
        k = reshaped[0]
        parts.append(f"{len(reshaped)} of another shape, e.g. {k!r}: saved "
                     f"{tuple(saved[k].shape)}, expected {tuple(built[k].shape)}")
    return "; ".join(parts)
