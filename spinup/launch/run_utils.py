"""Launching experiments (spec: "Run Utils"): output directories (:func:`setup_logger_kwargs`),
one run in a fresh process (:func:`call_experiment`) and grids of runs (:class:`ExperimentGrid`,
:func:`plan_runs`), started by :mod:`spinup.launch.grid_launch`.
"""
import collections
import inspect
import itertools
import json
import math
import os.path as osp
import string
import sys
import time

from spinup.user_config import (DEFAULT_DATA_DIR, DEFAULT_SHORTHAND, FORCE_DATESTAMP,
                                WAIT_BEFORE_LAUNCH)
# The launcher's errors and check_before_launch are part of this module's interface too.
from spinup.launch.grid_launch import (DIV_LINE_WIDTH, ExperimentError, LaunchError, _encode_call,
                                      _Run, check_before_launch, check_cores, check_dirs,
                                      check_launch_options, run_grid, run_one)
from spinup.machinery.console import colorize
from spinup.machinery.serialization_utils import config_text as _config_text
from spinup.machinery.run_dir import check_data_dir, check_name_lengths, check_run_name, plan_resume
from spinup.machinery.serialization_utils import convert_json

_NAME_CHARS = frozenset("-_" + string.ascii_letters + string.digits)  # for valid_str
# One parameter of an ExperimentGrid: its values, and how variant names show it.
_GridParam = collections.namedtuple("_GridParam", "key vals shorthand in_name")


def setup_logger_kwargs(exp_name, seed=None, data_dir=None, datestamp=False, overwrite=False,
                        tensorboard=False, verbose=False, track=None):
    """Choose a run's output directory and return it as ``logger_kwargs``.

    The directory is, under ``data_dir``:

    ==========================  ==================================================
    no seed                     ``exp_name``
    seed ``s``                  ``exp_name/exp_name_s<s>``
    seed ``s``, ``datestamp``   ``YYMMDD_exp_name/YYMMDD_HHMMSS-exp_name_s<s>``
    ==========================  ==================================================

    so the seeds of one configuration share a parent directory (the plotter averages them).

    Args:
        exp_name (str): the experiment's name.
        seed (int): the run's seed, or ``None`` for a directory without one.
        data_dir (str): the base directory; ``None``: ``DEFAULT_DATA_DIR`` (in ``user_config``).
        datestamp (bool): date (and time) in the names, so that runs of the same name get
            distinct directories (``FORCE_DATESTAMP`` in ``user_config`` sets it for all).
        overwrite (bool): let the run replace an earlier one there (else ``FileExistsError``).
        tensorboard (bool): also write TensorBoard event files.
        verbose (bool): print the full table every epoch, not a progress line.
        track (str or dict): also send the rows to ``'wandb'`` or ``'mlflow'``
            (:mod:`spinup.machinery.tracking`).

    Raises:
        LaunchError: (a ``ValueError``) ``exp_name`` is empty, ``.``/``..``, holds a
            ``/`` or makes a name too long for the file system; ``data_dir`` is ``''``.

    Returns:
        dict: ``{'output_dir': ..., 'exp_name': exp_name}`` plus ``overwrite``,
        ``tensorboard`` and ``verbose`` (``True``) and ``track`` when set: an algorithm's
        ``logger_kwargs``.
    """
    try:
        data_dir = check_data_dir(data_dir, DEFAULT_DATA_DIR)
        check_run_name(exp_name)
        stamped = datestamp or FORCE_DATESTAMP
        now = time.localtime()
        path = [data_dir, (time.strftime("%y%m%d_", now) if stamped else "") + exp_name]
        if seed is not None:
            run = f"{exp_name}_s{seed}"
            path.append(time.strftime("%y%m%d_%H%M%S-", now) + run if stamped else run)
        check_name_lengths(exp_name, data_dir, path[1:])
    except ValueError as e:
        raise LaunchError(str(e)) from None
    options = dict(overwrite=overwrite, tensorboard=tensorboard, verbose=verbose)
    # Each option only when set, so that config.json stays as it was otherwise.
    return dict(output_dir=osp.join(*path), exp_name=exp_name,
                **{option: True for option, value in options.items() if value},
                **({"track": track} if track else {}))


def call_experiment(exp_name, thunk, seed=0, num_cpu=1, data_dir=None, datestamp=False,
                    overwrite=False, oversubscribe=False, tensorboard=False, verbose=False,
                    track=None, **kwargs):
    """Run ``thunk(seed=seed, logger_kwargs=..., **kwargs)`` in a fresh Python process.

    The subprocess shares no state with earlier runs, and with ``num_cpu > 1`` is an MPI job.
    Unless ``kwargs`` holds ``logger_kwargs``, the directory comes from
    :func:`setup_logger_kwargs`; ``env_name`` becomes ``env_fn`` (``gymnasium.make``).

    Args:
        exp_name (str): the experiment's name.
        thunk (callable): the function to run, e.g. ``spinup.ppo``.
        seed (int): passed to ``thunk`` and used in the directory name.
        num_cpu (int or str): MPI processes, or ``'auto'`` for one per physical core.
        data_dir (str): base directory for outputs (default ``DEFAULT_DATA_DIR``).
        datestamp (bool): date and time in the directory names.
        overwrite (bool): allow replacing a finished run in the same directory.
        oversubscribe (bool): allow ``num_cpu`` above the number of cores.
        tensorboard, verbose (bool): see :func:`setup_logger_kwargs` (without ``verbose``
            the arguments are printed on one line).
        track (str or dict): see :func:`setup_logger_kwargs`.
        **kwargs: the other arguments of ``thunk``.

    Returns:
        str: the run's output directory.

    Raises:
        FileExistsError, LaunchError: see :func:`check_before_launch` (nothing written).
        ExperimentError: the subprocess exited with a non-zero code.
        Interrupted: (a ``KeyboardInterrupt``) SIGINT or SIGTERM, after the subprocess
            stopped; see :mod:`spinup.launch.grid_launch`.
    """
    kwargs["seed"] = seed
    track = _checked_track(track)
    logger_kwargs = kwargs.get("logger_kwargs") or setup_logger_kwargs(
        exp_name, seed, data_dir, datestamp, overwrite, tensorboard, verbose, track)
    check_before_launch([logger_kwargs], num_cpu, oversubscribe)
    return _call_checked(exp_name, thunk, kwargs, logger_kwargs, num_cpu, oversubscribe, verbose)


def _checked_track(track):
    """``track`` checked (:func:`~spinup.machinery.tracking.track_options`) before anything
    runs: a dict, or None. Raises ValueError or ImportError (one line)."""
    from spinup.machinery.tracking import track_options
    return track_options(track, "track")


def _call_checked(exp_name, thunk, kwargs, logger_kwargs, num_cpu, oversubscribe, verbose):
    """:func:`call_experiment` once its checks passed (by it, or by a grid for all its runs);
    returns the output directory."""
    output_dir = logger_kwargs.get("output_dir")
    try:
        _run_and_report(exp_name, thunk, kwargs, logger_kwargs, num_cpu, oversubscribe, verbose)
    except BrokenPipeError as e:   # stdout's reader went away: spinup.run says what was kept
        e.run_dirs = None if output_dir is None else [output_dir]
        raise
    return output_dir


def _run_and_report(exp_name, thunk, kwargs, logger_kwargs, num_cpu, oversubscribe, verbose):
    """:func:`call_experiment` once its checks passed: print the call, run it, print how to
    plot it (ExperimentError if it failed)."""
    if verbose or logger_kwargs.get("verbose"):
        print(colorize("Running experiment:\n", color="cyan", bold=True) + "\n" + exp_name + "\n")
        print(colorize("with kwargs:\n", color="cyan", bold=True) + "\n"
              + _config_text(convert_json(kwargs)) + "\n\n")
    else:
        print(colorize(f"Running experiment {exp_name} with kwargs ", color="cyan", bold=True)
              + json.dumps(convert_json(kwargs), sort_keys=True))
    kwargs["logger_kwargs"] = logger_kwargs
    output_dir = logger_kwargs.get("output_dir")
    returncode = run_one(_encode_call(thunk, kwargs, num_cpu, oversubscribe), exp_name,
                         output_dir)
    if returncode != 0:
        raise ExperimentError(exp_name, returncode)
    if output_dir is not None:   # how to plot the run and watch its agent
        rule = "=" * DIV_LINE_WIDTH
        print("\n".join([
            "", rule, colorize("End of experiment.\n", "white", bold=True),
            "Plot results from this run with:\n",
            colorize(f"python -m spinup.run plot {output_dir}", "green") + "\n",
            "Watch the trained agent with:\n",
            colorize(f"python -m spinup.run test_policy {output_dir}", "green") + "\n",
            rule, ""]))


def valid_str(v):
    """A parameter value as text for a directory name: a class or function's ``__name__``, a
    list's items joined by ``-``; lower-cased, characters other than ``[a-z0-9_-]`` as ``-``."""
    if hasattr(v, "__name__"):
        v = v.__name__
    if isinstance(v, (tuple, list)):
        return "-".join(valid_str(item) for item in v)
    return "".join(c if c in _NAME_CHARS else "-" for c in str(v).lower())


def _nested_get(variant, key):
    """Look ``key`` up in a variant, following ``'a:b'`` into ``variant['a']['b']``."""
    if key in variant:
        return variant[key]
    head, _, rest = key.partition(":")
    return _nested_get(variant[head], rest)


def _nest(flat):
    """Turn the keys ``'a:b'`` of a flat variant into nested dicts ``{'a': {'b': ...}}``;
    ValueError if a key is given both whole (``'a'``) and nested (``'a:b'``)."""
    nested, parents = {}, set()
    for key, value in flat.items():
        head, colon, rest = key.partition(":")
        if colon:
            if head in nested and head not in parents:
                raise ValueError(f"{head} is given whole and {key} sets one of its keys too: "
                                 f"put {rest!r} inside {head}, or leave {head} out")
            nested.setdefault(head, {})[rest] = value
            parents.add(head)
        elif key in nested:
            raise ValueError(f"{key} is given whole and {key}:... sets one of its keys too: "
                             f"put that key inside {key}, or leave {key} out")
        else:
            nested[key] = value
    for head in parents:
        nested[head] = _nest(nested[head])
    return nested


def _check_grid_call(thunk, keys, variants):
    """Raise LaunchError if ``thunk`` names no grid parameter, or a variant lacks an argument
    that ``thunk`` needs (``env_name`` stands for ``env_fn``)."""
    if isinstance(thunk, str) and thunk not in keys:
        raise LaunchError(f"ExperimentGrid.run: thunk={thunk!r} is not a parameter of the grid; "
                          "pass the function itself (e.g. spinup.ppo), or the name of a "
                          "parameter whose values are functions")
    for variant in variants:
        fn = variant[thunk] if isinstance(thunk, str) else thunk
        given = set(variant) | {"seed", "logger_kwargs", "env_fn" if "env_name" in variant else ""}
        needed = [p.name for p in inspect.signature(fn).parameters.values() if p.default is p.empty
                  and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in given]
        if needed:
            what = "env_name (e.g. eg.add('env_name', 'CartPole-v1'))" \
                if needed[0] == "env_fn" else needed[0]
            raise LaunchError(f"ExperimentGrid.run: the grid gives "
                              f"{getattr(fn, '__name__', fn)} no {what}")


def _algorithm_name(fn):
    """The name of spinup's algorithm ``fn`` (``'ppo'``), or None for another function."""
    from spinup import ALGOS
    where = (getattr(fn, "__module__", None), getattr(fn, "__name__", None))
    return next((name for name, spec in ALGOS.items() if spec == where), None)


def check_variants(thunk, variants, num_cpu=1, probe_env=False):
    """Check every variant's arguments (:func:`~spinup.machinery.arg_checks.check_cli`)
    before any variant is launched: :meth:`ExperimentGrid.run` and the command line (which
    also probes each ``env_name``, ``probe_env``) ask it alike. Functions other than spinup's
    algorithms are not checked; ``thunk``, ``variants`` and ``num_cpu`` are as in
    :meth:`ExperimentGrid.run`.

    Raises:
        TypeError, ValueError: the one-line message of the first check that failed.
    """
    from spinup.machinery.arg_checks import check_cli
    skip = (thunk,) if probe_env else (thunk, "env_name")
    for variant in variants:
        fn = variant[thunk] if isinstance(thunk, str) else thunk
        algo = _algorithm_name(fn)
        if algo is not None:
            check_cli(algo, fn, dict({k: v for k, v in variant.items() if k not in skip},
                                     num_cpu=num_cpu))


class ExperimentGrid:
    """A grid of hyperparameter values, run as one experiment per combination.

    Example::

        eg = ExperimentGrid(name="ppo-bench")
        eg.add("env_name", "CartPole-v1", "", True)
        eg.add("seed", [0, 10])
        eg.add("ac_kwargs:hidden_sizes", [(32,), (64, 64)], "hid")
        eg.run(spinup.ppo)   # 4 runs in 2 directories (seeds share one)

    Args:
        name (str): prefix of every variant's name.

    Raises:
        TypeError: ``name`` is not a string.
    """

    def __init__(self, name=""):
        if not isinstance(name, str):
            raise TypeError(f"ExperimentGrid name must be a string, got {name!r}")
        self.name = name
        self.params = []  # _GridParam per parameter, in the order they were added
        self._checked = None  # what check() passed: (thunk, num_cpu, ..., variants)

    @property
    def keys(self):
        """The parameters' keys, in the order they were added."""
        return [p.key for p in self.params]

    @property
    def vals(self):
        """The parameters' lists of values, in the order they were added."""
        return [p.vals for p in self.params]

    def print(self):
        """Print the parameters of the grid, their values, and how many runs it makes."""
        rule = "=" * DIV_LINE_WIDTH
        title = f"ExperimentGrid [{self.name}] runs over parameters:"
        print(rule)
        print(colorize(title if len(title) <= 80 else title.replace("] ", "]\n "), "green",
                       bold=True) + "\n")
        for p in self.params:
            label = colorize(p.key.ljust(40), color="cyan", bold=True)
            print("", label, "" if p.shorthand is None else f"[{p.shorthand}]", "\n")
            print("\n".join("\t" + str(convert_json(v)) for v in p.vals) + "\n")
        runs = math.prod(len(p.vals) for p in self.params)
        seeds = next((len(p.vals) for p in self.params if p.key == "seed"), 1)
        print(" Variants, counting seeds: ".ljust(40), runs)
        print(" Variants, not counting seeds: ".ljust(40), runs // seeds)
        print("\n" + rule)

    def add(self, key, vals, shorthand=None, in_name=False):
        """Add a parameter and the values it takes in the grid.

        Args:
            key (str): the keyword argument; ``'a:b'`` sets ``b`` inside the dict argument
                ``a`` (e.g. ``'ac_kwargs:hidden_sizes'``).
            vals: one value, or a list of values.
            shorthand (str): the parameter's name in variant names; ``None``: the first three
                characters of each ``:``-part of ``key`` (unless ``DEFAULT_SHORTHAND`` is False).
            in_name (bool): name the parameter in variant names even when it has one value.

        Raises:
            ValueError: ``key`` is empty or already added, ``shorthand`` is not a string, or
                ``vals`` is an empty list.
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"grid parameter name must be a non-empty string, got {key!r}")
        if key in self.keys:
            raise ValueError(f"Parameter {key!r} was already added to the grid.")
        if shorthand is not None and not isinstance(shorthand, str):
            raise ValueError(f"shorthand of {key!r} must be a string, got {shorthand!r}")
        vals = vals if isinstance(vals, list) else [vals]
        if not vals:
            raise ValueError(f"Parameter {key!r} needs at least one value.")
        if shorthand is None and DEFAULT_SHORTHAND:   # the first 3 letters of each part
            shorthand = "-".join("".join(c for c in part[:3] if c.isascii() and c.isalnum())
                                 for part in key.split(":"))
        self.params.append(_GridParam(key, vals, shorthand, in_name))

    def variant_name(self, variant):
        """Name one variant (a dict from :meth:`variants`) for its output directory: the grid's
        name, then ``_<shorthand or key><value>`` (see :func:`valid_str`) for each parameter
        with several values or ``in_name`` (an all-boolean one: ``_<shorthand>`` when True),
        without leading underscores. Never the seed: a configuration's seeds share a directory.
        """
        pieces = [self.name]
        for p in self.params:
            if p.key == "seed" or (len(p.vals) == 1 and not p.in_name):
                continue
            label = valid_str(p.key if p.shorthand is None else p.shorthand)
            value = _nested_get(variant, p.key)
            if all(isinstance(v, bool) for v in p.vals):
                if value:
                    pieces.append(label)
            else:
                pieces.append(label + valid_str(value))
        return "_".join(pieces).lstrip("_")

    def variants(self):
        """Every combination of the grid's values as a dict of keyword arguments, the
        first-added parameter varying slowest; keys ``'a:b'`` are nested (``'ac_kwargs:x'``
        and ``'ac_kwargs:y'`` give one ``ac_kwargs``). ValueError if a parameter is given
        both whole and nested."""
        return [_nest(dict(zip(self.keys, combo))) for combo in itertools.product(*self.vals)]

    def run(self, thunk, num_cpu=1, data_dir=None, datestamp=False, overwrite=False,
            oversubscribe=False, tensorboard=False, verbose=False, jobs=None, resume=False,
            launcher=None, ray_address=None, track=None):
        """Run every variant with :func:`call_experiment`, one after another (with ``jobs``,
        ``resume`` or ``launcher``: :func:`~spinup.launch.grid_launch.run_grid`), after checking
        every variant's directory (:func:`check_before_launch`).

        Args:
            thunk (callable or str): the function to run, or the name of a grid
                parameter whose values are the functions.
            num_cpu, data_dir, datestamp, overwrite, oversubscribe, tensorboard, verbose:
                passed to :func:`call_experiment`; a grid of one variant is listed in full
                only when ``verbose``.
            jobs (int or str): variants at once on this machine (``'auto'``:
                ``cores // num_cpu``); ``None``: one after another, on the terminal.
            resume (bool): skip finished runs, resume checkpointed ones, start the rest.
            launcher (str): ``'ray'`` (each variant a task of ``num_cpu`` CPUs on a
                Ray cluster) or ``'local'`` (the default).
            ray_address (str): the Ray cluster; ``None`` starts one on this machine.
            track (str or dict): send each run's rows to ``'wandb'`` or ``'mlflow'``
                (:mod:`spinup.machinery.tracking`); the variants of a grid of several are
                grouped (W&B group, MLflow parent run), named after the grid.

        Returns:
            list of str: the output directory of each variant.

        Raises:
            TypeError, ValueError: a variant's arguments are refused (:func:`check_variants`,
                one line, as the command line says it); nothing was run.
            FileExistsError, LaunchError: a check failed; nothing was run.
            ExperimentError: a variant failed (the later ones are not run).
            GridError: (``jobs``, ``resume`` or ``launcher``) a variant failed; the
                others ran to their end.
        """
        variants = self.variants()
        checked = (thunk, num_cpu, oversubscribe, launcher, jobs, ray_address, variants)
        if self._checked != checked:
            self.check(thunk, num_cpu, oversubscribe, launcher, jobs=jobs,
                       ray_address=ray_address)
        names = [self.variant_name(v) for v in variants]
        track = _checked_track(track)
        if track is not None and len(variants) > 1:
            from spinup.machinery.tracking import grid_parent
            track = grid_parent(track, self.name)
        if jobs is not None or resume or launcher is not None or ray_address is not None:
            runs = plan_runs(thunk, variants, names, data_dir, datestamp, overwrite,
                             tensorboard, verbose, resume, num_cpu, track)
            return run_grid(runs, num_cpu, oversubscribe, 1 if jobs is None else jobs,
                            launcher or "local", ray_address, self.print)
        # Every run's directory, before the first starts (the core count is checked above).
        logger_kwargs = [v.get("logger_kwargs") or setup_logger_kwargs(
            name, v.get("seed", 0), data_dir, datestamp, overwrite, tensorboard, verbose, track)
            for name, v in zip(names, variants)]
        check_dirs(logger_kwargs)
        if verbose or len(variants) > 1:
            self.print()
            print(colorize("\nPreparing to run the following experiments...", color="green",
                           bold=True) + "\n\n" + "\n".join(sorted(set(names))) + "\n\n"
                  + "=" * DIV_LINE_WIDTH)
        if WAIT_BEFORE_LAUNCH > 0 and len(variants) > 1 and sys.stdout.isatty():
            print(colorize("Launch delayed to give you a few seconds to review your experiments. "
                           "To customize or disable this behavior, change WAIT_BEFORE_LAUNCH in "
                           "spinup/user_config.py.", color="cyan", bold=True))
            from tqdm import trange
            for _ in trange(int(WAIT_BEFORE_LAUNCH * 10), desc="Launching in...", leave=False,
                            ncols=DIV_LINE_WIDTH, mininterval=0.25,
                            bar_format="{desc}: {bar}| {remaining} {elapsed}"):
                time.sleep(0.1)
        output_dirs = []
        for name, variant, run_logger_kwargs in zip(names, variants, logger_kwargs):
            fn = variant.pop(thunk) if isinstance(thunk, str) else thunk
            variant["seed"] = variant.get("seed", 0)
            output_dirs.append(_call_checked(name, fn, variant, run_logger_kwargs, num_cpu,
                                             oversubscribe, verbose))
        return output_dirs

    def check(self, thunk, num_cpu=1, oversubscribe=False, launcher=None, probe_env=False,
              jobs=None, ray_address=None):
        """Check the grid before anything runs (:meth:`run` calls it, unless it was called
        with the same arguments for the same variants): the launcher's options
        (:func:`~spinup.launch.grid_launch.check_launch_options`), the core count (it
        explains a ``num_cpu`` of 99 better than ``steps_per_epoch`` would; a Ray task's cores
        are its node's), then every variant's arguments (:func:`check_variants`; with
        ``probe_env`` each ``env_name`` is made and tried too, as the command line does).
        The arguments are those of :meth:`run`.

        Raises:
            TypeError, ValueError, LaunchError: the first check that failed, in one line.
        """
        variants = self.variants()
        _check_grid_call(thunk, self.keys, variants)
        check_launch_options(jobs, launcher, ray_address)
        check_cores(1 if launcher == "ray" else num_cpu, oversubscribe)
        check_variants(thunk, variants, num_cpu, probe_env)
        self._checked = (thunk, num_cpu, oversubscribe, launcher, jobs, ray_address, variants)


def _epochs_of(fn, kwargs):
    """The run's number of epochs: its keyword, else the function's default, else None."""
    if "epochs" in kwargs:
        return kwargs["epochs"]
    try:
        default = inspect.signature(fn).parameters["epochs"].default
    except (TypeError, ValueError, KeyError):
        return None
    return None if default is inspect.Parameter.empty else default


def plan_runs(thunk, variants, names, data_dir=None, datestamp=False, overwrite=False,
              tensorboard=False, verbose=False, resume=False, num_cpu=1, track=None):
    """The runs of a grid: each variant's function, keyword arguments and directory.

    Args:
        thunk (callable or str): as :meth:`ExperimentGrid.run`.
        variants (list of dict): :meth:`ExperimentGrid.variants` (not modified).
        names (list of str): each variant's name.
        resume (bool): mark each run to be skipped, resumed or started, from what its
            directory holds (see :func:`~spinup.launch.grid_launch.run_grid`).
        others: as :func:`call_experiment`.

    Returns:
        list of ``_Run``.

    Raises:
        LaunchError: ``resume`` with ``datestamp`` (the names change every time), a
            checkpoint that cannot be resumed, or a run started with other arguments
            (checked for every variant before any starts).
    """
    if resume and datestamp:
        raise LaunchError("--resume finds the grid's runs by their directory names, which "
                          "--dt makes new every time; resume each run with --resume DIR")
    runs = []
    for name, variant in zip(names, variants):
        kwargs = dict(variant)
        fn = kwargs.pop(thunk) if isinstance(thunk, str) else thunk
        kwargs["seed"] = kwargs.get("seed", 0)
        logger_kwargs = kwargs.get("logger_kwargs") or setup_logger_kwargs(
            name, kwargs["seed"], data_dir, datestamp, overwrite, tensorboard, verbose, track)
        kwargs["logger_kwargs"] = dict(logger_kwargs)
        output_dir = logger_kwargs["output_dir"]
        runs.append(_Run(osp.basename(osp.normpath(output_dir)), fn, kwargs, output_dir,
                         _epochs_of(fn, kwargs)))
        if resume:
            plan_resume(runs[-1], num_cpu)
    return runs
