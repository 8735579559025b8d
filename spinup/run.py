"""Command-line interface (spec: "Running Experiments").

    python -m spinup.run ALGO [--flag value [value ...]] ...
    python -m spinup.run plot [logdir ...] [plot options]
    python -m spinup.run test_policy path/to/output_dir [options]
    python -m spinup.run help | ALGO --help

Several values for a flag make a grid of experiments (run in series);
``--flag[sh]`` sets the shorthand used in directory names; ``--key:sub v``
sets ``key=dict(sub=v)``. Values are parsed with ``ast.literal_eval``; a dotted
name such as ``torch.nn.ReLU`` is imported; anything else stays a string.
"""
import ast
import difflib
import inspect
import re
import sys
import textwrap

from spinup import ALGOS
from spinup.user_config import DEFAULT_DATA_DIR

# Algorithms that average gradients over MPI processes and so accept --cpu > 1.
MPI_ALGOS = {"vpg", "trpo", "npg", "ppo", "a2c"}

# Command line args that will go to ExperimentGrid.run, and must possess unique values.
RUN_KEYS = ["num_cpu", "data_dir", "datestamp"]

# Command line sweetener, allowing short-form flags for common, longer flags.
SUBSTITUTIONS = {"env": "env_name", "hid": "ac_kwargs:hidden_sizes",
                 "act": "ac_kwargs:activation", "cpu": "num_cpu", "dt": "datestamp"}

# Flags whose values are never imported as dotted names (they are paths or ids).
PLAIN_STRING_KEYS = {"env_name", "exp_name", "data_dir"}

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")


class CLIError(Exception):
    """A user error on the command line: printed as one line, exit code 2."""


def _usage():
    algos = ", ".join(sorted(ALGOS))
    return textwrap.dedent(f"""\
        Usage:
          python -m spinup.run ALGO [--flag value [value ...]] ...
          python -m spinup.run plot [logdir ...] [--savefig FILE] [plot options]
          python -m spinup.run test_policy path/to/output_dir [-n N] [-l L] [-nr] [-d] [-i I]
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
        Several values for one flag launch one experiment per combination, e.g.
          python -m spinup.run ppo --env CartPole-v1 --clip_ratio 0.1 0.2 --seed 0 10 20
        """)


def _parse_value(key, text):
    """Turn one command-line token into a Python value for flag ``key``."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if key not in PLAIN_STRING_KEYS and _DOTTED.match(text):
        from spinup.utils.serialization_utils import import_dotted
        try:
            return import_dotted(text)
        except ImportError:
            hint = " (TensorFlow names are not supported: use torch.nn.*)" \
                if text.startswith("tf.") else ""
            flag = {v: k for k, v in SUBSTITUTIONS.items()}.get(key, key)
            raise CLIError(f"--{flag}: cannot import {text!r}{hint}")
    return text


def _check_env(cmd, env_name):
    """Make the env once so a bad id fails here, with close matches, not in a subprocess."""
    import gymnasium as gym
    try:
        gym.make(env_name).close()
    except gym.error.DependencyNotInstalled as e:
        raise CLIError(f"{cmd}: --env {env_name}: a dependency is missing ({e}). MuJoCo envs "
                       "need: pip install 'gymnasium[mujoco]'; Box2D envs: pip install "
                       "'gymnasium[box2d]'")
    except (gym.error.Error, ModuleNotFoundError, ImportError, AttributeError) as e:
        close = difflib.get_close_matches(env_name, list(gym.registry.keys()), n=5, cutoff=0.6)
        hint = (" Did you mean: " + ", ".join(close) + "?") if close else ""
        raise CLIError(f"{cmd}: --env {env_name!r} is not an environment gymnasium can make "
                       f"({e}).{hint}")


def _check_type(cmd, key, default, value):
    """Ints and bools must stay ints and bools (floats may also be strings: SAC alpha='auto')."""
    if isinstance(default, bool) and not isinstance(value, bool):
        raise CLIError(f"{cmd}: --{key} expects True or False, got {value!r}")
    if (isinstance(default, int) and not isinstance(default, bool)
            and (isinstance(value, bool) or not isinstance(value, int))):
        raise CLIError(f"{cmd}: --{key} expects an integer, got {value!r}")


def parse_and_execute_grid_search(cmd, args):
    """Interpret the flags of ``python -m spinup.run ALGO ...`` and run the grid.

    Raises:
        CLIError: a bad flag, value, environment or combination (before anything runs).
        ExperimentError: an experiment failed while running.
    """
    import spinup
    algo = getattr(spinup, cmd)

    if "--help" in args or "-h" in args:
        print(f"spinup.{cmd}" + str(inspect.signature(algo)) + "\n")
        print(inspect.getdoc(algo))
        return

    # Make first pass through args to build base arg_dict. Anything
    # with a '--' in front of it is an argument flag and everything after,
    # until the next flag, is a possible value.
    arg_dict = dict()
    arg_key = None
    for i, arg in enumerate(args):
        if arg.startswith("--") and len(arg) > 2:
            arg_key = arg[2:]
            if arg_key in arg_dict:
                raise CLIError(f"{cmd}: flag --{arg_key} given twice")
            arg_dict[arg_key] = []
        elif arg_key is None:
            raise CLIError(f"{cmd}: expected a flag such as --env before {arg!r}")
        else:
            arg_dict[arg_key].append(arg)
    # Flags with no values are switches that are turned on (e.g. --dt).
    for k, v in arg_dict.items():
        if len(v) == 0:
            v.append("True")

    # Make second pass through, to catch flags that have shorthands,
    # store those shorthands, and swap to the full names.
    given_shorthands = dict()
    fixed_keys = list(arg_dict.keys())
    for k in fixed_keys:
        m = re.fullmatch(r"(.+)\[(.+)\]", k)
        if m:
            real_key, sh = m.group(1), m.group(2)
            arg_dict[real_key] = arg_dict.pop(k)
            given_shorthands[real_key] = sh

    # Make third pass through, to substitute special flags.
    for special_name, true_name in SUBSTITUTIONS.items():
        if special_name in arg_dict:
            if true_name in arg_dict:
                raise CLIError(f"{cmd}: --{special_name} and --{true_name} mean the same; "
                               "give one")
            arg_dict[true_name] = arg_dict.pop(special_name)
        if special_name in given_shorthands:
            given_shorthands[true_name] = given_shorthands.pop(special_name)

    # Check the flags against the algorithm's signature.
    params = inspect.signature(algo).parameters
    valid = sorted(set(params) - {"env_fn"} | {"env_name", "exp_name"} | set(RUN_KEYS))
    for k in arg_dict:
        base = k.split(":")[0]
        if base not in valid or (":" in k and base in RUN_KEYS + ["env_name", "exp_name"]):
            close = difflib.get_close_matches(base, valid, n=3)
            hint = (" Did you mean: " + ", ".join("--" + c for c in close) + "?") if close else ""
            raise CLIError(f"{cmd}: unknown flag --{k}.{hint} Valid flags: --env, --hid, --act, "
                           "--cpu, --dt, " + ", ".join("--" + v for v in valid))

    # Parse values.
    for k in arg_dict:
        arg_dict[k] = [_parse_value(k, v) for v in arg_dict[k]]
        if k in params and params[k].default is not inspect.Parameter.empty:
            for v in arg_dict[k]:
                _check_type(cmd, k, params[k].default, v)

    # Determine experiment name. If not given by user, will be determined by the algorithm name.
    if "exp_name" in arg_dict:
        if len(arg_dict["exp_name"]) != 1:
            raise CLIError(f"{cmd}: --exp_name takes one value, got {len(arg_dict['exp_name'])}")
        exp_name = str(arg_dict.pop("exp_name")[0])
    else:
        exp_name = "cmd_" + cmd

    # Special handling for environment: make sure that env_name is a real,
    # registered gymnasium environment.
    if "env_name" not in arg_dict:
        raise CLIError(f"{cmd}: you must give an environment with --env "
                       "(e.g. --env CartPole-v1)")
    for env_name in arg_dict["env_name"]:
        _check_env(cmd, str(env_name))

    # Construct and execute the experiment grid.
    run_kwargs = dict()
    for k in RUN_KEYS:
        if k in arg_dict:
            val = arg_dict.pop(k)
            if len(val) != 1:
                raise CLIError(f"{cmd}: --{k} takes one value, got {len(val)}")
            run_kwargs[k] = val[0]
    num_cpu = run_kwargs.get("num_cpu", 1)
    if num_cpu != "auto" and (isinstance(num_cpu, bool) or not isinstance(num_cpu, int)
                              or num_cpu < 1):
        raise CLIError(f"{cmd}: --cpu expects a positive integer or 'auto', got {num_cpu!r}")
    if num_cpu != 1 and cmd not in MPI_ALGOS:
        if cmd == "a3c":
            raise CLIError("a3c: --cpu is not supported (A3C starts its own worker processes); "
                           "use --num_workers N")
        raise CLIError(f"{cmd}: --cpu {num_cpu} is not supported: {cmd} cannot use MPI (it does "
                       "not average gradients across processes). MPI works with: "
                       + ", ".join(sorted(MPI_ALGOS)))

    from spinup.utils.run_utils import ExperimentGrid
    eg = ExperimentGrid(name=exp_name)
    for k, v in arg_dict.items():
        eg.add(k, v, shorthand=given_shorthands.get(k))
    eg.run(algo, **run_kwargs)


def main(argv=None):
    """Entry point of ``python -m spinup.run`` and the ``spinup`` console script.

    Returns:
        process exit code: 0 on success, 2 on a command-line error, else the
        failing experiment's code.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 0 or argv[0] in ("help", "--help", "-h"):
        print(_usage())
        return 0
    cmd = argv[0]
    if cmd in ("plot", "test_policy"):
        from importlib import import_module
        module = import_module("spinup.utils." + cmd)
        return module.main(argv[1:]) or 0
    if cmd not in ALGOS:
        close = difflib.get_close_matches(cmd, list(ALGOS) + ["plot", "test_policy", "help"])
        hint = (" Did you mean: " + ", ".join(close) + "?") if close else ""
        print(f"spinup.run: unknown command {cmd!r}.{hint} Run 'python -m spinup.run help'.",
              file=sys.stderr)
        return 2
    from spinup.utils.run_utils import ExperimentError
    try:
        parse_and_execute_grid_search(cmd, argv[1:])
    except CLIError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except AttributeError as e:  # algorithm not shipped in this version
        if f"spinup.{cmd}" in str(e):
            print(f"error: {e}", file=sys.stderr)
            return 2
        raise
    except ExperimentError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.returncode if e.returncode > 0 else 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
