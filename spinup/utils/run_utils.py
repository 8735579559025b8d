"""Run utilities: output-directory naming, ``call_experiment`` and ``ExperimentGrid``
(spec: "Run Utils" and "Running Experiments")."""
import base64
import itertools
import json
import os
import os.path as osp
import signal
import string
import subprocess
import sys
import threading
import time
import zlib

from spinup.user_config import (DEFAULT_DATA_DIR, DEFAULT_SHORTHAND, FORCE_DATESTAMP,
                                WAIT_BEFORE_LAUNCH)
from spinup.utils.logx import colorize
from spinup.utils.serialization_utils import convert_json

DIV_LINE_WIDTH = 80


class ExperimentError(RuntimeError):
    """An experiment launched by :func:`call_experiment` exited with an error."""

    def __init__(self, exp_name, returncode):
        self.exp_name, self.returncode = exp_name, returncode
        super().__init__(f"experiment {exp_name!r} failed (exit code {returncode}); "
                         "see its error message above")


def setup_logger_kwargs(exp_name, seed=None, data_dir=None, datestamp=False):
    """Sets up the output_dir for a logger and returns a dict for logger kwargs.

    If no seed is given and datestamp is false, ``output_dir = data_dir/exp_name``.
    If a seed is given and datestamp is false,
    ``output_dir = data_dir/exp_name/exp_name_s[seed]``.
    If datestamp is true, amend to
    ``output_dir = data_dir/YYMMDD_exp_name/YYMMDD_HHMMSS-exp_name_s[seed]``.
    You can force datestamp=True by setting ``FORCE_DATESTAMP=True`` in
    ``spinup/user_config.py``.

    Args:
        exp_name (string): Name for experiment.
        seed (int): Seed for random number generators used by experiment.
        data_dir (string): Path to folder where results should be saved.
            Default is the ``DEFAULT_DATA_DIR`` in ``spinup/user_config.py``.
        datestamp (bool): Whether to include a date and timestamp in the
            name of the save directory.

    Returns:
        logger_kwargs, a dict containing output_dir and exp_name.
    """
    datestamp = datestamp or FORCE_DATESTAMP
    ymd_time = time.strftime("%y%m%d_") if datestamp else ""
    relpath = ymd_time + exp_name
    if seed is not None:
        if datestamp:
            subfolder = time.strftime("%y%m%d_%H%M%S") + "-" + exp_name + "_s" + str(seed)
        else:
            subfolder = exp_name + "_s" + str(seed)
        relpath = osp.join(relpath, subfolder)
    data_dir = data_dir or DEFAULT_DATA_DIR
    return dict(output_dir=osp.join(data_dir, relpath), exp_name=exp_name)


def _make_env_fn(env_name):
    """``env_fn`` for a gymnasium id (a named closure so it pickles and reads well)."""
    def env_fn():
        import gymnasium as gym
        return gym.make(env_name)
    env_fn.__qualname__ = f"gym.make({env_name!r})"
    return env_fn


def call_experiment(exp_name, thunk, seed=0, num_cpu=1, data_dir=None, datestamp=False,
                    **kwargs):
    """Run a function (thunk) with hyperparameters (kwargs), plus configuration.

    The call is serialized with cloudpickle and executed by
    ``run_entrypoint.py`` in a fresh Python subprocess (so successive
    experiments share no state); with ``num_cpu > 1`` that subprocess re-launches
    itself under ``mpiexec``. If ``env_name`` is among the kwargs, the thunk
    receives ``env_fn = lambda: gymnasium.make(env_name)`` instead.

    Args:
        exp_name (string): Name for experiment.
        thunk (callable): A python function.
        seed (int): Seed for random number generators.
        num_cpu (int or 'auto'): Number of MPI processes ('auto' = physical cores).
        data_dir (string): Base directory for results; defaults to
            ``DEFAULT_DATA_DIR`` from ``spinup/user_config.py``.
        datestamp (bool): Put date and time in the output directory names.
        **kwargs: All kwargs to pass to thunk.

    Returns:
        The ``output_dir`` of the run.

    Raises:
        ExperimentError: the experiment process exited with a non-zero code.
    """
    kwargs["seed"] = seed
    print(colorize("Running experiment:\n", color="cyan", bold=True))
    print(exp_name + "\n")
    print(colorize("with kwargs:\n", color="cyan", bold=True))
    print(json.dumps(convert_json(kwargs), separators=(",", ":\t"), indent=4, sort_keys=True))
    print("\n")

    if "logger_kwargs" not in kwargs:
        kwargs["logger_kwargs"] = setup_logger_kwargs(exp_name, seed, data_dir, datestamp)
    else:
        print("Note: Call experiment is not handling logger_kwargs.\n")
    output_dir = kwargs["logger_kwargs"].get("output_dir")

    if "env_name" in kwargs:
        kwargs["env_fn"] = _make_env_fn(kwargs.pop("env_name"))

    def thunk_plus():
        from spinup.utils.mpi_tools import mpi_fork
        mpi_fork(num_cpu)
        thunk(**kwargs)

    import cloudpickle
    encoded_thunk = base64.b64encode(zlib.compress(cloudpickle.dumps(thunk_plus))).decode("utf-8")
    entrypoint = osp.join(osp.abspath(osp.dirname(__file__)), "run_entrypoint.py")
    cmd = [sys.executable or "python", entrypoint, encoded_thunk]
    proc = subprocess.Popen(cmd, env=os.environ)

    def _stop_child(signum, frame):
        # `kill PID` reaches only this process: pass it on, so the run does not
        # keep training as an orphan, then exit with the usual 128 + signal code.
        proc.send_signal(signum)
        raise SystemExit(128 + signum)

    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        old_handler = signal.signal(signal.SIGTERM, _stop_child)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        # The child got the same Ctrl-C: give it time to stop its workers and
        # flush its logs before killing it.
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        print(colorize("\nInterrupted: %s (what was logged so far is in %s)"
                       % (exp_name, output_dir), "red", bold=True))
        raise
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, old_handler)
    if rc != 0:
        raise ExperimentError(exp_name, rc)

    if output_dir is not None:
        plot_cmd = "python -m spinup.run plot " + output_dir
        test_cmd = "python -m spinup.run test_policy " + output_dir
        print("\n" + "=" * DIV_LINE_WIDTH + "\n"
              + colorize("End of experiment.\n\n", "white", bold=True)
              + "Plot results from this run with:\n\n" + colorize(plot_cmd, "green") + "\n\n"
              + "Watch the trained agent with:\n\n" + colorize(test_cmd, "green") + "\n\n"
              + "=" * DIV_LINE_WIDTH + "\n")
    return output_dir


def all_bools(vals):
    return all(isinstance(v, bool) for v in vals)


def valid_str(v):
    """Convert a value or values to a string which could go in a filepath.

    Classes and functions use their ``__name__``; lists/tuples are joined with
    ``-``; other characters than letters, digits, ``-`` and ``_`` become ``-``.
    """
    if hasattr(v, "__name__"):
        return valid_str(v.__name__)
    if isinstance(v, (tuple, list)):
        return "-".join(valid_str(x) for x in v)
    str_v = str(v).lower()
    valid_chars = "-_%s%s" % (string.ascii_letters, string.digits)
    return "".join(c if c in valid_chars else "-" for c in str_v)


class ExperimentGrid:
    """Tool for running many experiments given hyperparameter ranges."""

    def __init__(self, name=""):
        if not isinstance(name, str):
            raise TypeError("Name has to be a string.")
        self.keys, self.vals, self.shs, self.in_names = [], [], [], []
        self.name = name

    def print(self):
        """Print a helpful report about the experiment grid."""
        print("=" * DIV_LINE_WIDTH)
        base_msg = "ExperimentGrid %s runs over parameters:\n"
        name_insert = "[" + self.name + "]"
        if len(base_msg % name_insert) <= 80:
            msg = base_msg % name_insert
        else:
            msg = base_msg % (name_insert + "\n")
        print(colorize(msg, color="green", bold=True))
        for k, v, sh in zip(self.keys, self.vals, self.shs):
            color_k = colorize(k.ljust(40), color="cyan", bold=True)
            print("", color_k, "[" + sh + "]" if sh is not None else "", "\n")
            for val in v:
                print("\t" + str(convert_json(val)))
            print()
        nvars_total = 1
        for v in self.vals:
            nvars_total *= len(v)
        if "seed" in self.keys:
            num_seeds = len(self.vals[self.keys.index("seed")])
            nvars_seedless = int(nvars_total / num_seeds)
        else:
            nvars_seedless = nvars_total
        print(" Variants, counting seeds: ".ljust(40), nvars_total)
        print(" Variants, not counting seeds: ".ljust(40), nvars_seedless)
        print()
        print("=" * DIV_LINE_WIDTH)

    def _default_shorthand(self, key):
        # First three letters of each colon-separated term, joined by '-'.
        valid_chars = "%s%s" % (string.ascii_letters, string.digits)

        def shear(x):
            return "".join(z for z in x[:3] if z in valid_chars)
        return "-".join(shear(x) for x in key.split(":"))

    def add(self, key, vals, shorthand=None, in_name=False):
        """Add a parameter (key) to the grid config, with potential values (vals).

        By default, if a shorthand isn't given, one is automatically generated
        from the key using the first three letters of each colon-separated
        term. To disable this behavior, set ``DEFAULT_SHORTHAND=False`` in
        ``spinup/user_config.py``.

        Args:
            key (string): Name of parameter (``a:b`` nests: ``dict(a=dict(b=...))``).
            vals (value or list of values): Allowed values of parameter.
            shorthand (string): Optional, shortened name of parameter. For
                example, maybe the parameter ``steps_per_epoch`` is shortened
                to ``steps``.
            in_name (bool): When constructing variant names, force the
                inclusion of this parameter into the name.

        Raises:
            ValueError: ``key`` was already added, or ``vals`` is empty.
        """
        if not isinstance(key, str) or not key:
            raise ValueError("Key must be a non-empty string.")
        if key in self.keys:
            raise ValueError(f"Parameter {key!r} was already added to the grid.")
        if shorthand is not None and (not isinstance(shorthand, str)):
            raise ValueError("Shorthand must be a string.")
        if not isinstance(vals, list):
            vals = [vals]
        if len(vals) == 0:
            raise ValueError(f"Parameter {key!r} needs at least one value.")
        if DEFAULT_SHORTHAND and shorthand is None:
            shorthand = self._default_shorthand(key)
        self.keys.append(key)
        self.vals.append(vals)
        self.shs.append(shorthand)
        self.in_names.append(in_name)

    def variant_name(self, variant):
        """Given a variant (dict of valid param/value pairs), make an exp_name.

        A variant's name is constructed as the grid name (if you've given it
        one), plus param names (or shorthands if available) and values
        separated by underscores. ``seed`` is never included. Boolean
        parameters appear as just their name when True.
        """
        def get_val(v, k):
            # Utility method for getting the correct value out of a variant
            # given as a nested dict. Assumes that a parameter name, k,
            # describes a path into the nested dict, such that k='a:b:c'
            # corresponds to value=variant['a']['b']['c'].
            if k in v:
                return v[k]
            splits = k.split(":")
            k0, k1 = splits[0], ":".join(splits[1:])
            return get_val(v[k0], k1)

        var_name = self.name
        for k, v, sh, inn in zip(self.keys, self.vals, self.shs, self.in_names):
            if (len(v) > 1 or inn) and k != "seed":
                param_name = valid_str(sh if sh is not None else k)
                variant_val = get_val(variant, k)
                if all_bools(v):
                    var_name += ("_" + param_name) if variant_val else ""
                else:
                    var_name += "_" + param_name + valid_str(variant_val)
        return var_name.lstrip("_")

    def _variants(self, keys, vals_list):
        """Cartesian product of the values, the first key varying slowest."""
        return [dict(zip(keys, combo)) for combo in itertools.product(*vals_list)]

    def variants(self):
        """Makes a list of dicts, where each dict is a valid config in the grid.

        Parameters whose names take the form ``'full:param:name'`` are nested:
        ``'base:param:a'`` and ``'base:param:b'`` give
        ``{'base': {'param': {'a': ..., 'b': ...}}}``.

        Raises:
            ValueError: a parameter is given both as a whole and as a nested key.
        """
        flat_variants = self._variants(self.keys, self.vals)

        def unflatten_var(var):
            new_var = dict()
            unflatten_set = set()
            for k, v in var.items():
                if ":" in k:
                    splits = k.split(":")
                    k0 = splits[0]
                    if k0 in new_var and k0 not in unflatten_set:
                        raise ValueError(f"You can't assign multiple values to the same key "
                                         f"({k0!r} and {k!r}).")
                    sub_k = ":".join(splits[1:])
                    new_var.setdefault(k0, dict())[sub_k] = v
                    unflatten_set.add(k0)
                else:
                    if k in new_var:
                        raise ValueError(f"You can't assign multiple values to the same key "
                                         f"({k!r}).")
                    new_var[k] = v
            for k in unflatten_set:
                new_var[k] = unflatten_var(new_var[k])
            return new_var

        return [unflatten_var(var) for var in flat_variants]

    def run(self, thunk, num_cpu=1, data_dir=None, datestamp=False):
        """Run each variant in the grid with function ``thunk``.

        ``thunk`` must be a callable, or the name of a grid parameter whose
        values are all callables. Each variant is launched with
        :func:`call_experiment` (in series) and named with
        :meth:`variant_name`. ``seed`` is expected to be a grid parameter.

        Returns:
            list of the output directories, one per variant.
        """
        self.print()
        variants = self.variants()
        var_names = [self.variant_name(var) for var in variants]
        joined = "\n".join(sorted(set(var_names)))
        print(colorize("\nPreparing to run the following experiments...", color="green",
                       bold=True) + "\n\n" + joined + "\n\n" + "=" * DIV_LINE_WIDTH)
        if WAIT_BEFORE_LAUNCH > 0 and len(variants) > 1 and sys.stdout.isatty():
            print(colorize("Launch delayed to give you a few seconds to review your "
                           "experiments. To customize or disable this behavior, change "
                           "WAIT_BEFORE_LAUNCH in spinup/user_config.py.", color="cyan",
                           bold=True))
            from tqdm import trange
            for _ in trange(int(WAIT_BEFORE_LAUNCH * 10), desc="Launching in...", leave=False,
                            ncols=DIV_LINE_WIDTH, mininterval=0.25,
                            bar_format="{desc}: {bar}| {remaining} {elapsed}"):
                time.sleep(0.1)
        output_dirs = []
        for var in variants:
            exp_name = self.variant_name(var)
            if isinstance(thunk, str):
                thunk_ = var.pop(thunk)
            else:
                thunk_ = thunk
            output_dirs.append(call_experiment(exp_name, thunk_, num_cpu=num_cpu,
                                               data_dir=data_dir, datestamp=datestamp, **var))
        return output_dirs
