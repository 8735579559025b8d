"""The command line ``python -m spinup.run ALGO|plot|test_policy|help ...`` (docs/user/running.rst).

An ``ALGO`` command becomes an :class:`~spinup.launch.run_utils.ExperimentGrid`: a flag with
several values varies over them, ``--flag[sh]`` sets the shorthand of directory names and
``--key:sub v`` sets ``key=dict(sub=v)``. Values are read with ``ast.literal_eval``, else
imported as a dotted name (``torch.nn.ReLU``), else kept as strings. Every check runs before the
first experiment starts; a mistake is one line with exit code 2.
"""
import ast
import difflib
import inspect
import re
import signal
import sys
import textwrap

from spinup import ALGOS
from spinup.user_config import DEFAULT_DATA_DIR
from spinup.launch.run_entrypoint import (caused_by_ctrl_c, hold_ctrl_c, release_ctrl_c,
                                         unwatch_ctrl_c, watch_ctrl_c)

#: Algorithms that average gradients over MPI processes and so accept ``--cpu`` > 1.
MPI_ALGOS = {"vpg", "trpo", "npg", "ppo", "a2c"}

#: Flags for :meth:`ExperimentGrid.run` rather than the algorithm; one value each.
RUN_KEYS = ["num_cpu", "data_dir", "datestamp", "overwrite", "oversubscribe",
            "tensorboard", "verbose", "jobs", "resume", "launcher", "ray_address",
            "track", "track_project", "track_entity", "track_uri", "track_mode", "track_video"]

#: The tracking flags after ``--track``: each is an option of the ``track`` dict
#: (:mod:`spinup.machinery.tracking`), ``--track_project P`` its ``project``.
TRACK_FLAGS = ("track_project", "track_entity", "track_uri", "track_mode", "track_video")

#: Short flags and the full keys they stand for.
SUBSTITUTIONS = {"env": "env_name", "hid": "ac_kwargs:hidden_sizes",
                 "act": "ac_kwargs:activation", "cpu": "num_cpu", "dt": "datestamp"}

#: Flags whose values are never imported as dotted names (they are paths or ids).
PLAIN_STRING_KEYS = {"env_name", "exp_name", "data_dir", "ray_address", "launcher", "track",
                     "track_project", "track_entity", "track_uri", "track_mode"}

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_WITH_SHORTHAND = re.compile(r"(.+)\[(.+)\]")


class CLIError(Exception):
    """A mistake on the command line: printed as one line, exit code 2."""


def _usage():
    algos = ", ".join(sorted(ALGOS))
    return textwrap.dedent(f"""\
        Usage:
          python -m spinup.run ALGO [--flag value [value ...]] ...
          python -m spinup.run plot [logdir ...] [--savefig FILE] [plot options]
          python -m spinup.run test_policy path/to/output_dir [-n N] [-l L] [-nr] [-d] [-i I]
          python -m spinup.run export path/to/output_dir OUT [-n N] [--seed S] [-i I] [--no_video]
          python -m spinup.run push OUT YOUR_NAME/REPO [--private] [--message M]
          python -m spinup.run ALGO --help      (the algorithm's arguments)

        Algorithms: {algos}

        Special flags:
          --env, --env_name ID   gymnasium environment id (required), e.g. CartPole-v1
          --hid "[64,64]"        hidden layer sizes (ac_kwargs:hidden_sizes)
          --act torch.nn.ReLU    activation (ac_kwargs:activation)
          --cpu N|auto           MPI processes (only {', '.join(sorted(MPI_ALGOS))})
          --exp_name NAME        experiment name (default cmd_ALGO)
          --data_dir PATH        base output directory (default {DEFAULT_DATA_DIR})
          --dt                   put a date and time stamp in the directory names
          --overwrite            replace a finished run of the same name (refused otherwise)
          --oversubscribe        allow --cpu N above the number of CPU cores
          --tensorboard          also write the logged columns to OUTPUT_DIR/tb for TensorBoard
          --verbose              print the full table of diagnostics every epoch
          --config FILE|PRESET   keyword arguments from a JSON file (a run's config.json)
                                 or a preset (e.g. ppo_CartPole-v1); flags override it
          --resume DIR [--epochs N]  continue the run in DIR from its last checkpoint
                                 (--tensorboard, --verbose, --track may be added)
          --jobs N|auto          run up to N variants of the grid at once (auto: cores
                                 // --cpu); each one's output goes to its output.log
          --resume               (no DIR) rerun a grid command: skip finished runs,
                                 resume checkpointed ones, start the rest
          --launcher ray [--ray_address ADDR]  run the variants as tasks on a Ray
                                 cluster (a local one without ADDR); pip install ray
          --track wandb|mlflow   also send each row, the config and provenance to Weights &
                                 Biases (offline unless --track_mode online) or MLflow;
                                 pip install "spinup[track]". With --track_project P,
                                 --track_entity E (W&B), --track_uri URI (MLflow),
                                 --track_video (record and log an episode at the end)
        Several values for one flag launch one experiment per combination, e.g.
          python -m spinup.run ppo --env CartPole-v1 --clip_ratio 0.1 0.2 --seed 0 10 20
        """)


def _did_you_mean(word, choices, prefix=""):
    """``' Did you mean: a, b?'`` with the close matches of ``word``, or ``''``."""
    close = difflib.get_close_matches(word, choices, n=3)
    return (" Did you mean: " + ", ".join(prefix + c for c in close) + "?") if close else ""


# ---- Reading the flags ----

def _group_flags(cmd, args):
    """Split ``--flag v1 v2 --other ...`` into ``{'flag': ['v1', 'v2'], ...}``; a flag
    without values is a switch (``['True']``). CLIError: a value before any flag, a repeated
    flag, or a flag that takes a value (``--env`` ...) without one."""
    groups, current = {}, None
    for token in args:
        if token.startswith("--") and len(token) > 2:
            current = token[2:]
            if current in groups:
                raise CLIError(f"{cmd}: flag --{current} given twice")
            groups[current] = []
        elif current is None:
            raise CLIError(f"{cmd}: expected a flag such as --env before {token!r}")
        else:
            groups[current].append(token)
    for flag, values in groups.items():
        full = SUBSTITUTIONS.get(flag.split("[")[0], flag.split("[")[0])
        if not values and full in PLAIN_STRING_KEYS | {"config", "num_cpu", "jobs"}:
            raise CLIError(f"{cmd}: --{flag} needs a value after it (see 'python -m spinup.run "
                           "help')")
    return {flag: values or ["True"] for flag, values in groups.items()}


def _resolve_names(cmd, groups):
    """``(values, shorthands)``: full key -> raw values and full key -> shorthand, with
    ``[shorthand]`` suffixes stripped and short flags expanded. The key order (of the runs and
    of directory names) is Spinning Up's: flags as given, then those with a shorthand, then
    the short flags in the order of ``SUBSTITUTIONS``. CLIError: a flag given twice that way."""
    plain, marked = [], []
    for flag, raw in groups.items():
        match = _WITH_SHORTHAND.fullmatch(flag)
        if match:
            marked.append((match.group(1), raw, match.group(2)))
        else:
            plain.append((flag, raw, None))
    ordered = plain + marked
    names = [name for name, _, _ in ordered]
    for name in names:
        if names.count(name) > 1:
            raise CLIError(f"{cmd}: flag --{name} given twice")
    short = {entry[0]: entry for entry in ordered if entry[0] in SUBSTITUTIONS}
    ordered = ([entry for entry in ordered if entry[0] not in SUBSTITUTIONS]
               + [short[name] for name in SUBSTITUTIONS if name in short])
    values, shorthands = {}, {}
    for name, raw, shorthand in ordered:
        full = SUBSTITUTIONS.get(name, name)
        if full in values:
            raise CLIError(f"{cmd}: --{name} and --{full} mean the same; give one")
        values[full] = raw
        if shorthand is not None:
            shorthands[full] = shorthand
    return values, shorthands


def _check_flag_names(cmd, keys, params):
    """CLIError for a flag that is neither an argument of the algorithm nor a run option."""
    valid = sorted(set(params) - {"env_fn"} | {"env_name", "exp_name"} | set(RUN_KEYS))
    not_nestable = set(RUN_KEYS) | {"env_name", "exp_name"}
    for key in keys:
        base, colon, _ = key.partition(":")
        if base not in valid or (colon and base in not_nestable):
            raise CLIError(f"{cmd}: unknown flag --{key}.{_did_you_mean(base, valid, '--')} "
                           "Valid flags: --env, --hid, --act, --cpu, --dt, "
                           + ", ".join("--" + v for v in valid))


def _parse_value(key, text):
    """One command-line token as a Python value for flag ``key`` (CLIError: a dotted name
    that cannot be imported)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if key in PLAIN_STRING_KEYS or not _DOTTED.match(text):
        return text
    from spinup.machinery.serialization_utils import import_module_class
    try:
        return import_module_class(text)
    except ImportError as e:
        hint = " (TensorFlow names are not supported: use torch.nn.*)" \
            if text.startswith("tf.") else ""
        flag = {full: short for short, full in SUBSTITUTIONS.items()}.get(key, key)
        raise CLIError(f"--{flag}: {e}{hint}") from None


def _check_type(cmd, key, default, value):
    """CLIError unless an int or bool ``default`` gets a value of its kind (a float may
    become a string: SAC alpha='auto')."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise CLIError(f"{cmd}: --{key} expects True or False, got {value!r}")
    elif isinstance(default, int) and (isinstance(value, bool) or not isinstance(value, int)):
        raise CLIError(f"{cmd}: --{key} expects an integer, got {value!r}")


def _check_env(cmd, env_name):
    """Make the env once (handed to check_cli), so a bad id fails here with close matches."""
    import gymnasium as gym

    from spinup.envs import pixels
    from spinup.machinery.arg_checks import hand_over_env
    from spinup.machinery.run_dir import is_batched_id
    try:
        env = pixels.make(env_name)   # Atari ids: preprocessed as the run's env_fn does
        if is_batched_id(env_name):   # check_cli makes the task as the run will
            env.close()
        else:
            hand_over_env(env_name, env)   # check_cli probes this one (one build)
    except gym.error.DependencyNotInstalled as e:
        raise CLIError(f"{cmd}: --env {env_name}: a dependency is missing ({e}). MuJoCo envs "
                       "need: pip install 'gymnasium[mujoco]'; Box2D envs: pip install "
                       "'gymnasium[box2d]'") from None
    except (gym.error.Error, ModuleNotFoundError, ImportError, AttributeError) as e:
        close = difflib.get_close_matches(env_name, list(gym.registry.keys()), n=5, cutoff=0.6)
        hint = (" Did you mean: " + ", ".join(close) + "?") if close else ""
        raise CLIError(f"{cmd}: --env {env_name!r} is not an environment gymnasium can make "
                       f"({e}).{hint}") from None


def _take_single(cmd, values, key):
    """Remove ``key`` from ``values`` and return its one value (CLIError if several)."""
    given = values.pop(key)
    if len(given) != 1:
        raise CLIError(f"{cmd}: --{key} takes one value, got {len(given)}")
    return given[0]


def _check_num_cpu(cmd, num_cpu):
    """Raises CLIError unless ``num_cpu`` is 'auto' or a positive int the algorithm supports."""
    if num_cpu != "auto" and (isinstance(num_cpu, bool) or not isinstance(num_cpu, int)
                              or num_cpu < 1):
        raise CLIError(f"{cmd}: --cpu expects a positive integer or 'auto', got {num_cpu!r}")
    if num_cpu == 1 or cmd in MPI_ALGOS:
        return
    if cmd == "a3c":
        raise CLIError("a3c: --cpu is not supported (A3C starts its own worker processes); "
                       "use --num_workers N")
    raise CLIError(f"{cmd}: --cpu {num_cpu} is not supported: {cmd} cannot use MPI (it does "
                   "not average gradients across processes). MPI works with: "
                   + ", ".join(sorted(MPI_ALGOS)))


def _resume_names_a_dir(args):
    """True for ``--resume DIR`` (one run), False for a bare ``--resume`` (a whole grid)."""
    at = args.index("--resume")
    return at + 1 < len(args) and not args[at + 1].startswith("--")


# ---- Resuming a run ----

#: Output options that a resumed run may switch on (they do not change training).
RESUME_OUTPUT_FLAGS = {"tensorboard", "verbose"}


def _saved_value(value):
    """A config.json value as a keyword argument: dotted class names are imported."""
    from spinup.machinery.serialization_utils import import_module_class
    if isinstance(value, dict):
        return {k: _saved_value(v) for k, v in value.items()}
    if isinstance(value, str) and _DOTTED.match(value):
        try:
            return import_module_class(value)
        except ImportError:
            return value
    return value


def _nested(config, key):
    for part in key.split(":"):
        if not isinstance(config, dict) or part not in config:
            return inspect.Parameter.empty
        config = config[part]
    return config


def _set_nested(call, key, value):
    """Set ``key`` (``'a:b'``: ``call['a']['b']``, copying the dicts on the way) to ``value``."""
    head, colon, rest = key.partition(":")
    if colon:
        inner = dict(call[head]) if isinstance(call.get(head), dict) else {}
        _set_nested(inner, rest, value)
        value = inner
    call[head] = value


def _gather_track(cmd, run_kwargs):
    """Replace ``--track`` and the :data:`TRACK_FLAGS` in ``run_kwargs`` by one checked
    ``track`` dict (CLIError: a tracking flag without ``--track``, a bad value, or the
    tracker's package missing)."""
    from spinup.machinery.tracking import TrackingError, track_options
    given = {flag: run_kwargs.pop(flag) for flag in TRACK_FLAGS if flag in run_kwargs}
    to = run_kwargs.pop("track", None)
    if to is None:
        if given:
            raise CLIError(f"{cmd}: --{next(iter(given))} needs --track wandb|mlflow")
        return
    if "track_video" in given and not isinstance(given["track_video"], bool):
        raise CLIError(f"{cmd}: --track_video is a switch: give it alone (or True/False)")
    options = dict(to=str(to), **{flag[len("track_"):]: value for flag, value in given.items()})
    try:
        run_kwargs["track"] = track_options(options, "--track")
    except (TrackingError, ImportError) as e:
        message = str(e).replace("--track: 'project'", "--track_project")
        for key in ("entity", "uri", "mode", "video"):
            message = message.replace(f"{key!r} is not", f"--track_{key} is not")
        raise CLIError(f"{cmd}: {message}") from None


def resume_run(cmd, args):
    """``python -m spinup.run ALGO --resume DIR [--epochs N]``: continue a CLI run.

    The arguments are those of ``DIR/config.json``; a flag with another value is refused
    by the rule of every resume (:func:`~spinup.machinery.run_dir.check_same_call`: only
    ``--epochs``, ``--device`` and ``--cuda_graph`` may change; ``--tensorboard`` and
    ``--verbose`` may be added, and ``--track``: the tracked run recorded in DIR is continued),
    and so is a directory without a readable checkpoint. The MPI
    processes are as many as the checkpoint files. A finished run is only reported.

    Raises:
        CLIError, ValueError, TypeError: as above, before the launch (one line, exit 2).
        ExperimentError: the resumed run failed.
    """
    import spinup
    from spinup.machinery.run_dir import (RESUME_MAY_CHANGE, LaunchError, saved_env_id,
                                          check_same_algorithm, check_same_call, holds_run,
                                          read_run_config, resume_may_change, resume_point)
    from spinup.machinery.serialization_utils import convert_json
    algo = getattr(spinup, cmd)
    groups = _group_flags(cmd, args)
    values, _ = _resolve_names(cmd, groups)
    typed = {SUBSTITUTIONS.get(flag, flag): flag for flag in (g.split("[")[0] for g in groups)}
    run_dir = _take_single(cmd, values, "resume")
    params = inspect.signature(algo).parameters
    _check_flag_names(cmd, values, params)   # before reading the (large) checkpoint
    try:
        config = read_run_config(run_dir)
    except LaunchError as e:
        raise CLIError(f"{cmd}: --resume {run_dir}: {e}") from None
    check_same_algorithm(cmd, algo, run_dir, config)   # first: another's run may not load
    try:
        done, ranks = resume_point(run_dir)
    except (FileNotFoundError, ValueError) as e:
        if isinstance(e, FileNotFoundError) and not holds_run(run_dir):
            raise CLIError(f"{cmd}: --resume {run_dir}: the run there stopped before its first "
                           "epoch ended, so there is nothing to resume; run the same command "
                           "without --resume (it reuses the directory)") from None
        raise CLIError(f"{cmd}: --resume: {e}") from None
    env_id = saved_env_id(config)
    if env_id is None:
        raise CLIError(f"{cmd}: --resume {run_dir}: config.json names no gymnasium id (a run "
                       "started from Python resumes from Python: logger_kwargs=dict("
                       f"output_dir={run_dir!r}, resume=True))")
    saved = dict(config, env_name=env_id, num_cpu=ranks)
    # The call as the flags give it (else as saved), for the rule of every resume.
    call = dict({key: config[key] for key in params if key in config},
                env_name=saved["env_name"])
    output_options, changed = {}, {}
    for key, raw in values.items():
        if key == "overwrite":
            raise CLIError(f"{cmd}: --resume and --overwrite contradict each other: --resume "
                           f"continues the run in {run_dir}, --overwrite starts it again from "
                           "nothing; give one of them")
        given = [_parse_value(key, text) for text in raw]
        if key == "track" or key in TRACK_FLAGS:   # tracking may be added on a resume
            if len(given) != 1:
                raise CLIError(f"{cmd}: --{key} takes one value, got {len(given)}")
            output_options[key] = given[0]
            continue
        if key in RESUME_OUTPUT_FLAGS and given in ([True], [False]):
            output_options[key] = given[0]
            continue
        if key in RESUME_MAY_CHANGE and len(given) == 1:
            _check_type(cmd, key, params[key].default, given[0])
            changed[key] = given[0]
            continue
        base = key.partition(":")[0]
        if len(given) == 1 and (key == "env_name" or (base in params and base not in (
                "env_fn", "logger_kwargs"))):
            _set_nested(call, key, given[0])   # an argument: compared below
            continue
        if len(given) != 1 or convert_json(given[0]) != _nested(saved, key):
            raise CLIError(f"{cmd}: --resume continues {run_dir} with its saved arguments; "
                           f"--{typed.get(key, key)} {' '.join(raw)} differs from them (only "
                           f"{resume_may_change()} may change)")
    _gather_track(cmd, output_options)
    check_same_call(run_dir, algo, call, config)   # as a grid's --resume: one line, exit 2
    kwargs = {key: _saved_value(config[key]) for key in params
              if key in config and key not in ("env_fn", "logger_kwargs")}
    kwargs.update(changed)
    if kwargs.get("epochs", done) < done:
        if "epochs" in changed:
            raise CLIError(f"{cmd}: --resume {run_dir}: it has done {done} epochs already; "
                           f"--epochs {kwargs['epochs']} would undo them")
        raise CLIError(f"{cmd}: --resume {run_dir}: it has done {done} epochs, more than the "
                       f"{kwargs['epochs']} of its config.json (a resume with a larger --epochs "
                       f"extended it); continue with --epochs N, N > {done}")
    if kwargs.get("epochs", done) == done:
        print(f"{cmd}: {run_dir} is complete: all its {done} epochs are done, so there is "
              f"nothing to resume. To train it further: --resume {run_dir} --epochs N, N > {done}")
        return
    _check_env(cmd, saved["env_name"])   # e.g. a MuJoCo dependency gone since the run began
    from spinup.machinery.arg_checks import check_cli
    check_cli(cmd, algo, dict(kwargs, env_name=saved["env_name"], num_cpu=ranks))
    from spinup.launch.run_utils import call_experiment
    exp_name = config.get("exp_name") or "cmd_" + cmd
    logger_kwargs = dict(config.get("logger_kwargs") or {}, **output_options,
                         output_dir=run_dir, exp_name=exp_name, resume=True)
    logger_kwargs.pop("overwrite", None)
    release_ctrl_c()   # the checks are done; Ctrl-C must stop the resumed run
    call_experiment(exp_name, algo, seed=kwargs.pop("seed", 0), num_cpu=ranks,
                    oversubscribe=True, logger_kwargs=logger_kwargs,
                    env_name=saved["env_name"], **kwargs)


def parse_and_execute_grid_search(cmd, args):
    """Interpret the flags of ``python -m spinup.run ALGO ...`` and run the grid.

    Args:
        cmd (str): the algorithm's name, a key of ``spinup.ALGOS``.
        args (list of str): the tokens after it.

    Raises:
        CLIError, ValueError, TypeError: a bad flag, value, environment or combination
            (before anything runs).
        ExperimentError: an experiment failed while running.
    """
    import spinup
    algo = getattr(spinup, cmd)
    if "--help" in args or "-h" in args:
        print(f"spinup.{cmd}" + str(inspect.signature(algo)) + "\n")
        print(inspect.getdoc(algo))
        return

    if "--resume" in args and _resume_names_a_dir(args):
        return resume_run(cmd, args)
    values, shorthands = _resolve_names(cmd, _group_flags(cmd, args))
    config_file = str(_take_single(cmd, values, "config")) if "config" in values else None
    params = inspect.signature(algo).parameters
    _check_flag_names(cmd, values, params)
    for key, raw in values.items():
        values[key] = [_parse_value(key, text) for text in raw]
    if config_file is not None:
        # --config FILE (a run's config.json or a preset's name): its entries fill in
        # what the flags do not set; a flag always wins over the file.
        from spinup.presets import load_config, overlay
        try:
            loaded = load_config(config_file, cmd)
        except (ValueError, OSError) as e:
            raise CLIError(str(e) if str(e).startswith(cmd) else f"{cmd}: --config: {e}") \
                from None
        for key, value in overlay(loaded, values).items():
            values[key] = [value]
    for key in values:
        default = params[key].default if key in params else inspect.Parameter.empty
        if default is not inspect.Parameter.empty:
            for value in values[key]:
                _check_type(cmd, key, default, value)

    exp_name = str(_take_single(cmd, values, "exp_name")) if "exp_name" in values \
        else "cmd_" + cmd
    if config_file is not None and exp_name == "cmd_" + cmd:
        print(f"Note: --config does not set the name; the run is named {exp_name} (in "
              f"{values.get('data_dir', [DEFAULT_DATA_DIR])[0]}). Add --exp_name to choose one.")
    from spinup.machinery.arg_checks import check_workers
    from spinup.machinery.run_dir import check_run_name
    try:
        check_run_name(exp_name)   # setup_logger_kwargs checks it too, but a grid can hide ''
    except ValueError as e:
        raise CLIError(f"{cmd}: --{e}") from None
    if "env_name" not in values:
        raise CLIError(f"{cmd}: you must give an environment with --env "
                       "(e.g. --env CartPole-v1)")
    for env_name in values["env_name"]:
        _check_env(cmd, str(env_name))
    run_kwargs = {key: _take_single(cmd, values, key) for key in RUN_KEYS if key in values}
    for switch in ("datestamp", "overwrite", "oversubscribe", "tensorboard", "verbose",
                   "resume"):
        if not isinstance(run_kwargs.get(switch, False), bool):
            flag = "dt" if switch == "datestamp" else switch
            raise CLIError(f"{cmd}: --{flag} is a switch: give it alone (or True/False)")
    if run_kwargs.get("resume") and run_kwargs.get("overwrite"):
        raise CLIError(f"{cmd}: --resume continues the grid's runs and --overwrite replaces "
                       "them: give one of the two")
    _check_num_cpu(cmd, run_kwargs.get("num_cpu", 1))
    _gather_track(cmd, run_kwargs)
    if run_kwargs.get("tensorboard"):
        from spinup.machinery.record import tensorboard_writer_class as _tensorboard_writer_class
        try:
            _tensorboard_writer_class()
        except ImportError as e:
            raise CLIError(f"{cmd}: --{e}".replace("tensorboard=True", "tensorboard", 1)) \
                from None
    from spinup.launch.run_utils import ExperimentGrid
    grid = ExperimentGrid(name=exp_name)
    for key, options in values.items():
        grid.add(key, options, shorthand=shorthands.get(key))
    # The launcher's options, the core count, then every experiment's values and env against
    # the algorithm's rules (spinup.machinery.arg_checks), with Ctrl-C still held; grid.run
    # does not ask again.
    grid.check(algo, run_kwargs.get("num_cpu", 1), run_kwargs.get("oversubscribe", False),
               run_kwargs.get("launcher"), probe_env=True, jobs=run_kwargs.get("jobs"),
               ray_address=run_kwargs.get("ray_address"))
    for workers in values.get("num_workers", []):   # A3C's workers, like MPI processes
        check_workers(cmd, workers, run_kwargs.get("oversubscribe", False))
    release_ctrl_c()   # the imports are done; Ctrl-C must stop the runs
    grid.run(algo, **run_kwargs)


def main(argv=None):
    """Entry point of ``python -m spinup.run`` and the ``spinup`` console script.

    Args:
        argv (list of str): the arguments; ``None`` reads ``sys.argv``.

    Returns:
        int: the exit code: 0 on success, 2 on a command-line error, 130 on Ctrl-C (143 on
        SIGTERM), else the failing experiment's code.
    """
    previous = watch_ctrl_c()
    # Ctrl-C is held during the imports (one inside torch's can abort the process) and
    # let through by release_ctrl_c, at the latest in the inner finally.
    hold_ctrl_c()
    try:
        try:
            return _main(argv)
        finally:
            release_ctrl_c()
    except KeyboardInterrupt as e:   # Ctrl-C or SIGTERM, even during the imports
        if not getattr(e, "reported", False):   # else the launcher said what stopped
            print("Interrupted (Ctrl-C).", file=sys.stderr)
        return 128 + getattr(e, "signum", signal.SIGINT)
    except BrokenPipeError as e:   # the reader of stdout exited (| head)
        from spinup.launch.run_entrypoint import stdout_closed
        return stdout_closed(getattr(e, "run_dirs", None))   # the launcher's, if it ran any
    except Exception as e:
        # A Ctrl-C inside a C extension's import can come out as an ImportError
        # ("Importing the numpy C-extensions failed"): still a Ctrl-C.
        if not caused_by_ctrl_c(e):
            raise
        print("Interrupted (Ctrl-C).", file=sys.stderr)
        return 130
    finally:
        unwatch_ctrl_c(previous)


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("help", "--help", "-h"):
        print(_usage())
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd in ("plot", "test_policy"):
        from importlib import import_module
        command = import_module("spinup.utils." + cmd)   # imported with Ctrl-C held
        release_ctrl_c()
        return command.main(rest) or 0
    if cmd in ("export", "push"):
        from spinup.utils import export
        release_ctrl_c()
        return export.main(rest, cmd) or 0
    if cmd not in ALGOS:
        hint = _did_you_mean(cmd, list(ALGOS) + ["plot", "test_policy", "export", "push",
                                                  "help"])
        print(f"spinup.run: unknown command {cmd!r}.{hint} Run 'python -m spinup.run help'.",
              file=sys.stderr)
        return 2
    from spinup.launch.run_utils import ExperimentError
    try:
        parse_and_execute_grid_search(cmd, rest)
    except (CLIError, ValueError, TypeError, FileExistsError) as e:  # before any launch
        print(f"error: {e}", file=sys.stderr)   # (the checks raise ValueError, TypeError)
        return 2
    except ExperimentError as e:
        from spinup.launch.run_entrypoint import EXIT_PIPE_CLOSED
        if e.returncode != EXIT_PIPE_CLOSED:   # else the run said why on stderr
            print(f"error: {e}", file=sys.stderr)
        return e.returncode if e.returncode > 0 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
