"""Logging, config saving and model saving (spec: "Logger").

``Logger`` writes a tab-separated ``progress.txt`` (one row per epoch), a
``config.json``, and the trained model (``pyt_save/model.pt``) plus the env
description (``vars.json``). ``EpochLogger`` adds ``store`` + statistics over
an epoch and over MPI processes. Only MPI rank 0 prints or writes files.

Saved models hold no pickled code: ``model.pt`` is a dict of tensors and plain
values that loads with ``torch.load(path, weights_only=True)`` (see
:func:`spinup.utils.test_policy.load_policy_and_env`).
"""
import atexit
import json
import os
import os.path as osp
import time
import warnings

import numpy as np

from spinup.utils.mpi_tools import mpi_statistics_scalar, proc_id
from spinup.utils.serialization_utils import convert_json, dotted_name

#: Version of the ``model.pt`` layout written by :meth:`Logger.save_state`.
MODEL_FORMAT_VERSION = 1

color2num = dict(gray=30, red=31, green=32, yellow=33, blue=34, magenta=35, cyan=36,
                 white=37, crimson=38)


def colorize(string, color, bold=False, highlight=False):
    """Wrap ``string`` in ANSI escape codes for ``color`` (a key of ``color2num``)."""
    attr = []
    num = color2num[color]
    if highlight:
        num += 10
    attr.append(str(num))
    if bold:
        attr.append("1")
    return "\x1b[%sm%s\x1b[0m" % (";".join(attr), string)


def _atomic_write(path, write_fn):
    """Call ``write_fn(tmp_path)`` then rename to ``path``: a crash never leaves a torn file."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        write_fn(tmp)
        os.replace(tmp, path)
    finally:
        if osp.exists(tmp):
            os.remove(tmp)


def _write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def describe_space(space):
    """A ``torch.load(weights_only=True)``-safe description of a gymnasium space."""
    import torch
    kind = type(space).__name__
    if kind == "Box":
        return {"type": "Box", "low": torch.as_tensor(space.low), "high": torch.as_tensor(space.high),
                "dtype": str(space.dtype)}
    if kind == "Discrete":
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    return {"type": kind, "repr": str(space)}


def _jsonable_kwargs(kwargs):
    """ac_kwargs with classes/functions replaced by ``{'__dotted__': 'pkg.Name'}``."""
    if isinstance(kwargs, dict):
        return {str(k): _jsonable_kwargs(v) for k, v in kwargs.items()}
    if isinstance(kwargs, (list, tuple)):
        return [_jsonable_kwargs(v) for v in kwargs]
    if isinstance(kwargs, (bool, int, float, str)) or kwargs is None:
        return kwargs
    if callable(kwargs) and hasattr(kwargs, "__qualname__"):
        return {"__dotted__": dotted_name(kwargs)}
    raise TypeError(f"cannot save ac_kwargs value {kwargs!r}: use JSON-able values, classes or "
                    "functions")


class Logger:
    """A general-purpose logger.

    Makes it easy to save diagnostics, hyperparameter configurations, the
    state of a training run, and the trained model.
    """

    def __init__(self, output_dir=None, output_fname="progress.txt", exp_name=None):
        """Initialize a Logger.

        Args:
            output_dir (string): A directory for saving results to. If ``None``,
                defaults to ``/tmp/experiments/<unix time>``.
            output_fname (string): Name for the tab-separated-value file
                containing metrics logged throughout a training run.
            exp_name (string): Experiment name. Runs that share an ``exp_name``
                (e.g. several seeds of one configuration) are grouped by the plotter.
        """
        self.exp_name = exp_name
        self.output_file = None
        self.first_row = True
        self.log_headers = []
        self.log_current_row = {}
        self._config = {}
        if proc_id() == 0:
            self.output_dir = output_dir or "/tmp/experiments/%i" % int(time.time())
            if osp.exists(osp.join(self.output_dir, output_fname)):
                print(colorize("Warning: Log dir %s already exists! Storing info there anyway."
                               % self.output_dir, "red", bold=True))
            os.makedirs(self.output_dir, exist_ok=True)
            self.output_file = open(osp.join(self.output_dir, output_fname), "w")
            atexit.register(self.output_file.close)
            print(colorize("Logging data to %s" % self.output_file.name, "green", bold=True))
        else:
            self.output_dir = None

    def log(self, msg, color="green"):
        """Print a colorized message to stdout (rank 0 only)."""
        if proc_id() == 0:
            print(colorize(msg, color, bold=True))

    def log_tabular(self, key, val):
        """Log a value of some diagnostic.

        Call this only once for each diagnostic quantity, each iteration. After
        using ``log_tabular`` to store values for each diagnostic, make sure to
        call ``dump_tabular`` to write them out to file and stdout.

        Raises:
            ValueError: ``key`` was not logged in the first iteration, or twice
                in this one.
        """
        if self.first_row:
            self.log_headers.append(key)
        elif key not in self.log_headers:
            raise ValueError("Trying to introduce a new key %s that you didn't include in the "
                             "first iteration" % key)
        if key in self.log_current_row:
            raise ValueError("You already set %s this iteration. Maybe you forgot to call "
                             "dump_tabular()" % key)
        self.log_current_row[key] = val

    def save_config(self, config):
        """Log an experiment configuration to ``config.json``.

        Call this once at the top of your experiment, passing in all important
        config vars as a dict. Anything that is not JSON-serializable is
        written as an informative string (classes and functions by dotted name).

        Example use::

            logger = EpochLogger(**logger_kwargs)
            logger.save_config(locals())
        """
        config = {k: v for k, v in config.items() if not isinstance(v, Logger)}
        self._config = dict(config)
        config_json = convert_json(config)
        if self.exp_name is not None:
            config_json["exp_name"] = self.exp_name
        if proc_id() == 0:
            output = json.dumps(config_json, separators=(",", ":\t"), indent=4, sort_keys=True)
            print(colorize("Saving config:\n", color="cyan", bold=True))
            print(output)
            with open(osp.join(self.output_dir, "config.json"), "w") as out:
                out.write(output)

    def setup_pytorch_saver(self, what_to_save, ac_kwargs=None):
        """Set up model saving for a PyTorch actor-critic (call once, after building it).

        Args:
            what_to_save (nn.Module): the module to save, built as
                ``actor_critic(observation_space, action_space, **ac_kwargs)``.
            ac_kwargs (dict): the kwargs it was built with (JSON-able values,
                classes or functions). Defaults to ``config['ac_kwargs']`` from
                :meth:`save_config`, else ``{}``.
        """
        self.pytorch_saver_elements = what_to_save
        if ac_kwargs is None:
            ac_kwargs = self._config.get("ac_kwargs", {})
        self.pytorch_saver_kwargs = _jsonable_kwargs(dict(ac_kwargs))

    def save_state(self, state_dict, itr=None):
        """Save the state of an experiment: the env description and the model.

        Writes ``vars.json`` (the env's ``EnvSpec`` as JSON when it has one,
        plus any other JSON-able entries of ``state_dict``) and, if
        :meth:`setup_pytorch_saver` was called, ``pyt_save/model.pt`` (or
        ``model{itr}.pt``). Every file is written to a temporary name and renamed.

        Args:
            state_dict (dict): usually ``{'env': env}``.
            itr: ``None`` to keep one (overwritten) snapshot, or a unique int
                per snapshot to keep them all.
        """
        if proc_id() != 0:
            return
        env = state_dict.get("env")
        record = {k: convert_json(v) for k, v in state_dict.items() if k != "env"}
        record["env_spec"] = None
        if env is not None and getattr(env, "spec", None) is not None:
            try:
                record["env_spec"] = env.spec.to_json()
            except Exception as e:  # unpicklable/unjsonable make kwargs
                self.log("Warning: could not save the environment spec (%s); test_policy will "
                         "need the env passed by hand." % e, "red")
        fname = "vars.json" if itr is None else "vars%d.json" % itr
        _atomic_write(osp.join(self.output_dir, fname), lambda p: _write_text(p, json.dumps(record, indent=2)))
        if hasattr(self, "pytorch_saver_elements"):
            self._pytorch_simple_save(itr, env)

    def _pytorch_simple_save(self, itr=None, env=None):
        import torch
        fpath = osp.join(self.output_dir, "pyt_save")
        os.makedirs(fpath, exist_ok=True)
        fname = osp.join(fpath, "model" + ("%d" % itr if itr is not None else "") + ".pt")
        module = self.pytorch_saver_elements
        obs_space = getattr(env, "observation_space", getattr(module, "observation_space", None))
        act_space = getattr(env, "action_space", getattr(module, "action_space", None))
        payload = {
            "format_version": MODEL_FORMAT_VERSION,
            "ac_class": dotted_name(type(module)),
            "ac_kwargs": self.pytorch_saver_kwargs,
            "observation_space": describe_space(obs_space) if obs_space is not None else None,
            "action_space": describe_space(act_space) if act_space is not None else None,
            "state_dict": {k: v.detach().clone() for k, v in module.state_dict().items()},
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _atomic_write(fname, lambda p: torch.save(payload, p))

    def dump_tabular(self):
        """Write all of the diagnostics from the current iteration to stdout and
        to ``progress.txt`` (flushed), then start a new row."""
        if proc_id() == 0:
            vals = []
            key_lens = [len(key) for key in self.log_headers]
            max_key_len = max(15, max(key_lens) if key_lens else 15)
            keystr = "%" + "%d" % max_key_len
            fmt = "| " + keystr + "s | %15s |"
            n_slashes = 22 + max_key_len
            print("-" * n_slashes)
            for key in self.log_headers:
                val = self.log_current_row.get(key, "")
                valstr = "%8.3g" % val if hasattr(val, "__float__") else val
                print(fmt % (key, valstr))
                vals.append(val)
            print("-" * n_slashes, flush=True)
            if self.output_file is not None:
                if self.first_row:
                    self.output_file.write("\t".join(self.log_headers) + "\n")
                self.output_file.write("\t".join(map(str, vals)) + "\n")
                self.output_file.flush()
        self.log_current_row.clear()
        self.first_row = False


class EpochLogger(Logger):
    """A variant of Logger tailored for tracking average values over epochs.

    Each time a quantity is computed, ``store(NameOfQuantity=value)`` keeps it;
    at the end of the epoch ``log_tabular('NameOfQuantity', **options)``
    records its mean/std (and optionally min/max) over the epoch and over all
    MPI processes, then forgets the stored values.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.epoch_dict = dict()

    def store(self, **kwargs):
        """Save something into the epoch_logger's current state.

        Provide an arbitrary number of keyword arguments with numerical values
        (scalars or arrays; arrays are flattened into the epoch's samples).
        """
        for k, v in kwargs.items():
            self.epoch_dict.setdefault(k, []).append(v)

    def log_tabular(self, key, val=None, with_min_and_max=False, average_only=False):
        """Log a value or the mean/std/min/max of a stored diagnostic.

        Args:
            key (string): name of the diagnostic; if values were stored with
                ``store``, the same key.
            val: a value for the diagnostic. Leave ``None`` for stored keys.
            with_min_and_max (bool): also log ``Max<key>`` and ``Min<key>``.
            average_only (bool): log only ``Average<key>`` (or ``<key>`` ...
                see below), not ``Std<key>``.

        Stored keys are logged as ``Average<key>``, ``Std<key>``, ``Max<key>``,
        ``Min<key>``, except with ``average_only`` where the column is ``<key>``.
        A key with no stored values this epoch (on every process) logs ``nan``.
        """
        if val is not None:
            super().log_tabular(key, val)
            return
        v = self.epoch_dict.get(key, [])
        vals = np.concatenate([np.ravel(x) for x in v]) if len(v) > 0 else np.zeros(0)
        stats = mpi_statistics_scalar(vals, with_min_and_max=with_min_and_max)
        super().log_tabular(key if average_only else "Average" + key, stats[0])
        if not average_only:
            super().log_tabular("Std" + key, stats[1])
        if with_min_and_max:
            super().log_tabular("Max" + key, stats[3])
            super().log_tabular("Min" + key, stats[2])
        self.epoch_dict[key] = []

    def get_stats(self, key):
        """Mean, std, min and max of the values stored under ``key`` (over all processes)."""
        v = self.epoch_dict.get(key, [])
        vals = np.concatenate([np.ravel(x) for x in v]) if len(v) > 0 else np.zeros(0)
        return mpi_statistics_scalar(vals, with_min_and_max=True)
