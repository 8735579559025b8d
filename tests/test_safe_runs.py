"""Safe runs, round 2 (issue 19, part A): inputs a newcomer tries that must be refused
up front (one line, exit code 2, nothing created or changed) or must simply work.

Covered: ``--resume`` on another algorithm's run; ``--exp_name``/``--data_dir`` that
would leave ``data_dir``; a run interrupted before its first epoch; Ctrl-C while a
run starts; seeds numpy cannot take; unknown ``ac_kwargs`` keys; an ``env_fn`` that
returns no env; an env module in the current directory; networks too big for the
memory; more A3C workers than cores.
"""
import functools
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import pytest
import torch

import spinup
from conftest import ROOT, run_cli, run_here
from spinup.machinery import arg_checks, run_dir as run_dir_rules
from spinup.utils.logx import EpochLogger
from spinup.machinery.run_dir import holds_run
from spinup.launch.run_utils import LaunchError, check_before_launch, setup_logger_kwargs

ALL_ALGOS = ["vpg", "trpo", "npg", "ppo", "ddpg", "td3", "sac", "dqn", "a2c", "a3c"]
TINY_PPO = ["--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 100, "--hid", "[8]",
            "--train_pi_iters", 2, "--train_v_iters", 2]


def hashes(directory):
    """sha256 of every file under ``directory`` (the lock file included)."""
    return {os.path.relpath(os.path.join(d, n), directory):
            hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest()
            for d, _, names in os.walk(directory) for n in names}


def assert_refused(proc, *words):
    """Exit code 2, exactly one line on stderr holding ``words``, no traceback, no launch."""
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Running experiment" not in proc.stdout


def listing(directory):
    return sorted(os.path.relpath(os.path.join(d, n), directory)
                  for d, dirs, names in os.walk(directory) for n in dirs + names)


# ---- 1. --resume on another algorithm's run ----

@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    data = tmp_path_factory.mktemp("ppo_run")
    run_cli("ppo", *TINY_PPO, "--exp_name", "p", "--data_dir", data)
    return str(data / "p" / "p_s0")


def test_config_records_the_algorithm(ppo_run):
    with open(os.path.join(ppo_run, "config.json")) as f:
        assert json.load(f)["_algorithm"] == "ppo"


@pytest.mark.parametrize("algo", ["vpg", "dqn", "sac"])
def test_cli_resume_with_another_algorithm_is_refused_and_changes_nothing(ppo_run, algo):
    before = hashes(ppo_run)
    proc = run_here(algo, "--resume", ppo_run)
    assert_refused(proc, f"{algo}: cannot resume", "it is a ppo run", f"not a {algo} run")
    assert hashes(ppo_run) == before


@pytest.mark.parametrize("algo, env_id", [("vpg", "CartPole-v1"), ("dqn", "CartPole-v1"),
                                          ("sac", "Pendulum-v1")])
def test_api_resume_with_another_algorithm_is_refused_and_changes_nothing(ppo_run, algo,
                                                                         env_id):
    before = hashes(ppo_run)
    with pytest.raises(ValueError, match=f"{algo}: cannot resume .* it is a ppo run"):
        getattr(spinup, algo)(lambda: gym.make(env_id), epochs=2,
                              logger_kwargs=dict(output_dir=ppo_run, resume=True))
    assert hashes(ppo_run) == before


def test_runs_from_before_the_record_are_told_apart(tmp_path, ppo_run):
    """Older config.json files have no ``_algorithm``: the default actor-critic's module
    tells the algorithm; failing that, arguments the resuming algorithm does not take."""
    with open(os.path.join(ppo_run, "config.json")) as f:
        config = json.load(f)
    del config["_algorithm"]
    assert run_dir_rules.run_algorithm(config) == "ppo"
    with pytest.raises(ValueError, match="it is a ppo run"):
        run_dir_rules.check_same_algorithm("vpg", spinup.vpg, "D", config)
    config["actor_critic"] = "mymodule.MyActorCritic"
    with pytest.raises(ValueError, match="vpg does not take .*clip_ratio"):
        run_dir_rules.check_same_algorithm("vpg", spinup.vpg, "D", config)
    run_dir_rules.check_same_algorithm("ppo", spinup.ppo, "D", config)   # its own: fine
    npg = dict(actor_critic="spinup.algos.trpo.core.MLPActorCritic", algo="npg")
    assert run_dir_rules.run_algorithm(npg) == "npg"


# ---- 2. --exp_name and --data_dir stay inside data_dir ----

LONG = "x" * 300
BAD_NAMES = ["../../escape", "a/b", "", "/tmp/abs", ".", "..", LONG]


@pytest.mark.parametrize("name", BAD_NAMES, ids=["escape", "slash", "empty", "absolute",
                                                  "dot", "dotdot", "300chars"])
def test_cli_exp_name_outside_data_dir_is_refused(tmp_path, name):
    data = tmp_path / "a" / "b" / "data"
    proc = run_here("ppo", *TINY_PPO, "--exp_name", name, "--data_dir", data)
    assert_refused(proc, "exp_name=", "is not allowed")
    assert listing(tmp_path) == []
    assert not os.path.exists("/tmp/abs")


@pytest.mark.parametrize("name", BAD_NAMES)
def test_setup_logger_kwargs_refuses_names_outside_data_dir(tmp_path, name):
    with pytest.raises(LaunchError, match="exp_name=.* is not allowed"):
        setup_logger_kwargs(name, seed=0, data_dir=str(tmp_path))
    assert listing(tmp_path) == []


def test_too_long_name_counts_the_datestamp_and_seed(tmp_path):
    name = "n" * 253      # fits alone (255 bytes allowed), not with "_s0"
    with pytest.raises(LaunchError, match="file system allows"):
        setup_logger_kwargs(name, seed=0, data_dir=str(tmp_path))
    assert setup_logger_kwargs(name, data_dir=str(tmp_path))["output_dir"].endswith(name)


def test_empty_data_dir_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "spinup.run", "ppo", *map(str, TINY_PPO),
                           "--data_dir", ""], capture_output=True, text=True, cwd=tmp_path)
    assert_refused(proc, "data_dir='' is not allowed")
    assert listing(tmp_path) == []
    with pytest.raises(LaunchError, match="data_dir='' is not allowed"):
        setup_logger_kwargs("x", 0, data_dir="")


def test_tilde_in_data_dir_is_expanded(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    out = setup_logger_kwargs("x", 0, data_dir="~/runs")["output_dir"]
    assert out == os.path.join(os.path.expanduser("~"), "runs", "x", "x_s0")
    proc = run_cli("vpg", *TINY_PPO[:-4], "--exp_name", "t", "--data_dir", "~/runs",
                   env=dict(HOME=str(home)))
    assert (home / "runs" / "t" / "t_s0" / "progress.txt").exists(), proc.stdout[-2000:]
    assert not os.path.exists(os.path.join(ROOT, "~"))


# ---- 3. a run stopped before its first epoch; Ctrl-C while starting ----

def interrupted_before_first_epoch(run_dir):
    """What Ctrl-C during startup leaves: config.json, an empty table, a lock file."""
    os.makedirs(run_dir)
    for name, text in (("config.json", '{"exp_name": "p"}'), ("progress.txt", ""),
                       (".spinup.lock", "12345\n")):
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(text)


def test_run_stopped_before_first_epoch_does_not_block_the_same_command(tmp_path):
    run_dir = tmp_path / "p" / "p_s0"
    interrupted_before_first_epoch(str(run_dir))
    assert not holds_run(str(run_dir))
    proc = run_cli("ppo", *TINY_PPO, "--exp_name", "p", "--data_dir", tmp_path)
    assert "reusing" in proc.stdout
    assert len((run_dir / "progress.txt").read_text().splitlines()) == 2   # header + epoch 0
    assert holds_run(str(run_dir))
    # now it is a run, and it is protected again
    proc = run_here("ppo", *TINY_PPO, "--exp_name", "p", "--data_dir", tmp_path)
    assert_refused(proc, "already holds a run")


def test_resume_of_run_stopped_before_first_epoch_says_to_rerun(tmp_path):
    run_dir = str(tmp_path / "p" / "p_s0")
    interrupted_before_first_epoch(run_dir)
    before = hashes(run_dir)
    proc = run_here("ppo", "--resume", run_dir)
    assert_refused(proc, "stopped before its first epoch", "without --resume")
    assert hashes(run_dir) == before


def test_logger_and_launch_checks_reuse_an_empty_run(tmp_path):
    run_dir = str(tmp_path / "r")
    interrupted_before_first_epoch(run_dir)
    check_before_launch([dict(output_dir=run_dir)])       # no FileExistsError
    logger = EpochLogger(output_dir=run_dir)
    logger.log_tabular("Epoch", 0)
    logger.dump_tabular()
    logger.output_file.close()
    with pytest.raises(FileExistsError, match="already holds a run"):
        check_before_launch([dict(output_dir=run_dir)])


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    except OSError:
        return []


def _maps(pid):
    try:
        with open(f"/proc/{pid}/maps") as f:
            return f.read()
    except OSError:
        return ""


def test_ctrl_c_inside_an_import_that_wraps_it_is_still_ctrl_c():
    # numpy re-raises a KeyboardInterrupt during its C-extension import as ImportError.
    from spinup.launch.run_entrypoint import caused_by_ctrl_c
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise ImportError("Importing the numpy C-extensions failed") from interrupt
    except ImportError as wrapped:
        assert caused_by_ctrl_c(wrapped)
    assert not caused_by_ctrl_c(ImportError("No module named 'mymod'"))


def test_ctrl_c_that_a_library_turns_into_another_error_without_a_chain_is_still_ctrl_c():
    # numpy's import can swallow the interrupt: "could not import module 'datetime'".
    from spinup.launch import run_entrypoint
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        previous = run_entrypoint.watch_ctrl_c()
        assert not run_entrypoint.caused_by_ctrl_c(ImportError("datetime"))
        interrupted = False
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            interrupted = True
        assert interrupted
        assert run_entrypoint.caused_by_ctrl_c(ImportError("datetime"))
    finally:
        signal.signal(signal.SIGINT, outer)
        run_entrypoint._ctrl_c_seen = False
    assert previous is signal.default_int_handler


def _sigint_as_in_a_terminal():
    # A background job of a non-interactive shell (a CI script, `cmd &`) starts with SIGINT
    # ignored, and exec keeps that; a terminal's foreground job has the default action.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.parametrize("when", ["parent", "child"])
def test_ctrl_c_while_starting_is_one_line_and_exit_130(tmp_path, when):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while the
    command or its experiment process is still importing: no traceback, exit 130, one
    line, and no message naming a directory that does not exist."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", "ppo", "--env", "CartPole-v1",
                             "--epochs", "1000", "--exp_name", "c", "--data_dir",
                             str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=_sigint_as_in_a_terminal)
    if when == "child":   # as soon as the experiment's process exists
        while proc.poll() is None and not _children(proc.pid):
            time.sleep(0.01)
    else:                 # while the command itself imports (numpy is being loaded)
        while proc.poll() is None and "numpy" not in _maps(proc.pid):
            time.sleep(0.005)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert "Traceback" not in out + err
    assert len(err.splitlines()) + len([ln for ln in out.splitlines()
                                        if "Interrupted" in ln]) <= 1, out + err
    run_dir = tmp_path / "c" / "c_s0"
    if not run_dir.exists():
        assert str(run_dir) not in out + err


def test_ctrl_c_before_the_interpreter_has_started_is_exit_130_without_traceback():
    """The earliest Ctrl-C there is: pending before ``exec``. The experiment process
    holds it through Python's start-up and ``main`` turns it into exit 130, quietly."""
    from spinup.launch.run_utils import _encode_call

    def in_child():   # as a launcher starts it (SIGINT blocked), then the Ctrl-C
        _sigint_as_in_a_terminal()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        os.kill(os.getpid(), signal.SIGINT)

    entrypoint = os.path.join(ROOT, "spinup", "launch", "run_entrypoint.py")
    proc = subprocess.run([sys.executable, entrypoint, _encode_call(functools.partial(print, "the call ran"))],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          preexec_fn=in_child)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert proc.stderr == "" and "the call ran" not in proc.stdout


# ---- 4. seed, ac_kwargs keys, env_fn ----

def test_cli_seed_numpy_cannot_take_is_refused_before_anything_exists(tmp_path):
    proc = run_here("ppo", *TINY_PPO, "--seed", 1099511627776, "--data_dir", tmp_path)
    assert_refused(proc, "seed=1099511627776 is not allowed", "0 <= seed <= 4294967294")
    assert listing(tmp_path) == []


def test_api_seed_range(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="seed=1099511627776 is not allowed: an int with 0"):
        spinup.ppo(lambda: gym.make("CartPole-v1"), seed=1099511627776,
                   logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()
    ctx = arg_checks._Context({}, procs=4, default_model=True)   # 4 MPI processes
    assert arg_checks._highest_seed(ctx) == 2 ** 32 - 2 - 30000
    arg_checks.seed_range.check("x", "seed", 2 ** 32 - 2 - 30000, ctx)
    with pytest.raises(ValueError):
        arg_checks.seed_range.check("x", "seed", 2 ** 32 - 1 - 30000, ctx)
    workers = arg_checks._Context(dict(num_workers=3), procs=1, default_model=True)
    assert arg_checks._highest_seed(workers) == 2 ** 32 - 2 - 20000   # A3C: per worker


@pytest.mark.parametrize("algo", ALL_ALGOS)
def test_unknown_ac_kwargs_key_is_refused_before_anything_is_written(tmp_path, algo):
    out = tmp_path / "run"
    made = []
    with pytest.raises(TypeError, match=r"ac_kwargs\['foo'\]=1 is not allowed: .*hidden_sizes"):
        getattr(spinup, algo)(lambda: made.append(1), ac_kwargs=dict(hidden_sizes=[8], foo=1),
                              logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists() and not made     # refused before the env was even made


def test_cli_unknown_ac_kwargs_key(tmp_path):
    proc = run_here("ppo", *TINY_PPO, "--ac_kwargs:foo", 1, "--data_dir", tmp_path)
    assert_refused(proc, "ac_kwargs['foo']=1 is not allowed", "hidden_sizes, activation")
    assert listing(tmp_path) == []


def test_user_class_keys_are_checked_unless_it_takes_any():
    class Mine(torch.nn.Module):
        def __init__(self, observation_space, action_space, width=8):
            super().__init__()

    class Open(torch.nn.Module):
        def __init__(self, observation_space, action_space, **kwargs):
            super().__init__()

    with pytest.raises(TypeError, match="Mine takes no argument 'depth'; its keys are: width"):
        arg_checks.check_model_keys("ppo", "ac_kwargs", dict(depth=2), Mine)
    arg_checks.check_model_keys("ppo", "ac_kwargs", dict(width=2), Mine)
    arg_checks.check_model_keys("ppo", "ac_kwargs", dict(depth=2), Open)


@pytest.mark.parametrize("algo", ALL_ALGOS)
def test_env_fn_that_returns_no_env_is_named(tmp_path, algo):
    out = tmp_path / "run"
    with pytest.raises(TypeError, match=f"{algo}: env_fn\\(\\) returned None, not a gymnasium"):
        getattr(spinup, algo)(lambda: None, logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


# ---- 5. an env module in the current directory ----

MYMOD = textwrap.dedent('''\
    import gymnasium as gym
    import numpy as np


    class MyEnv(gym.Env):
        """Ten steps; reward 1 for action 1."""
        observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.t = 0
            return np.zeros(2, np.float32), {}

        def step(self, action):
            self.t += 1
            return np.zeros(2, np.float32), float(action), self.t >= 10, False, {}


    gym.register(id="MyEnv-v0", entry_point=MyEnv)
    ''')


def test_env_module_in_the_current_directory_works_in_the_experiment(tmp_path):
    (tmp_path / "mymod.py").write_text(MYMOD)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "spinup.run", "vpg", "--env",
                           "mymod:MyEnv-v0", "--epochs", "1", "--steps_per_epoch", "50",
                           "--hid", "[8]", "--data_dir", "out"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = (tmp_path / "out" / "cmd_vpg" / "cmd_vpg_s0" / "progress.txt").read_text()
    assert len(rows.splitlines()) == 2


# ---- 6. networks that cannot fit in memory ----

@pytest.mark.parametrize("algo", ALL_ALGOS)
def test_huge_network_is_refused_with_the_estimate(tmp_path, algo):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"hidden_sizes'\]=\[100000, 100000\] is not allowed: "
                                         r"training needs at least .* GB .* available"):
        getattr(spinup, algo)(lambda: None, ac_kwargs=dict(hidden_sizes=[100000, 100000]),
                              logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


def test_cli_huge_network_is_refused(tmp_path):
    proc = run_here("ppo", *TINY_PPO[:-6], "--hid", "[100000,100000]", "--data_dir", tmp_path)
    assert_refused(proc, "hidden_sizes']=[100000, 100000] is not allowed", "GB")
    assert listing(tmp_path) == []


@pytest.mark.parametrize("algo", ["ddpg", "td3", "sac", "dqn"])
def test_replay_buffer_too_big_for_the_memory_is_refused_before_anything_exists(tmp_path,
                                                                                algo):
    """Issue 45: ``ddpg --replay_size 1000000000000`` ended in numpy's _ArrayMemoryError
    (10.9 TiB) after the run directory existed."""
    env_id = "CartPole-v1" if algo == "dqn" else "Pendulum-v1"
    proc = run_here(algo, "--env", env_id, "--replay_size", 10**12, "--data_dir", tmp_path)
    assert_refused(proc, f"{algo}: replay_size=1000000000000 is not allowed",
                   "use a smaller replay_size")
    assert listing(tmp_path) == []
    out = tmp_path / "api"
    with pytest.raises(ValueError, match="replay buffer would take at least 20000.0 GB"):
        getattr(spinup, algo)(lambda: gym.make(env_id), replay_size=10**12,
                              logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


def test_estimate_against_available_memory(tmp_path, monkeypatch):
    """[20000, 20000] is 0.8 G parameters for PPO's two networks: 12.8 GB with
    gradients and Adam; refused where 4 GB are free, accepted where 64 GB are."""
    need, per_net = arg_checks.estimate_training_bytes("ppo", [20000, 20000])
    assert per_net == 20000 * 20000 + 40000 and need == 2 * 4 * 4 * per_net
    monkeypatch.setattr(arg_checks, "available_memory", lambda: 4 * 10 ** 9)
    with pytest.raises(ValueError, match=r"12\.8 GB .* only 4\.0 GB"):
        spinup.ppo(lambda: None, ac_kwargs=dict(hidden_sizes=[20000, 20000]),
                   logger_kwargs=dict(output_dir=str(tmp_path / "run")))
    monkeypatch.setattr(arg_checks, "available_memory", lambda: 64 * 10 ** 9)
    arg_checks.check_args("ppo", spinup.ppo, dict(ac_kwargs=dict(hidden_sizes=[20000, 20000])))


def test_available_memory_is_a_positive_number():
    avail = arg_checks.available_memory()
    assert avail is None or avail > 0


def test_test_policy_refuses_a_model_asking_for_a_huge_network(tmp_path):
    from spinup.algos.ppo.core import MLPActorCritic
    from spinup.machinery.serialization_utils import save_model
    from spinup.utils.test_policy import load_pytorch_policy, main
    env = gym.make("CartPole-v1")
    ac = MLPActorCritic(env.observation_space, env.action_space, hidden_sizes=[8])
    os.makedirs(tmp_path / "pyt_save")
    save_model(str(tmp_path / "pyt_save" / "model.pt"), ac,
               dict(hidden_sizes=[100000, 100000]), env.observation_space, env.action_space)
    with pytest.raises(ValueError, match=r"hidden_sizes=\[100000, 100000\], at least "
                                         r"20,000,400,000 parameters, but its weights hold"):
        load_pytorch_policy(str(tmp_path))
    assert main([str(tmp_path), "-nr", "-n", "1"]) != 0
    # without the weights to compare with, the memory estimate alone refuses it
    with pytest.raises(ValueError, match=r"which needs at least 160\.0 GB to build"):
        arg_checks.check_saved_model_memory("m.pt", "spinup.algos.ppo.core.MLPActorCritic",
                                            dict(hidden_sizes=[100000, 100000]))
    arg_checks.check_saved_model_memory("m.pt", "spinup.algos.ppo.core.MLPActorCritic",
                                        dict(hidden_sizes=[8]), ac.state_dict())


# ---- 7. A3C workers against the cores ----

def test_a3c_more_workers_than_cores_is_refused(tmp_path):
    from spinup.machinery.cores import available_cores
    workers = available_cores() + 1
    proc = run_here("a3c", "--env", "CartPole-v1", "--num_workers", workers, "--data_dir",
                    tmp_path)
    assert_refused(proc, f"--num_workers {workers} asks for more worker processes",
                   "--oversubscribe")
    assert listing(tmp_path) == []
    arg_checks.check_workers("a3c", workers, oversubscribe=True)     # allowed when asked
    arg_checks.check_workers("a3c", available_cores())


def test_refusal_for_a_stopped_unfinished_run_says_how_to_continue_it(tmp_path):
    """Issue 45: the same command over a run stopped before its last epoch was refused
    without a word about --resume; a finished run's refusal stays as it was."""
    from spinup.machinery.run_dir import refusal_to_overwrite
    run_cli("ppo", *TINY_PPO, "--exp_name", "p", "--data_dir", tmp_path)
    run_dir = tmp_path / "p" / "p_s0"
    finished = refusal_to_overwrite(str(run_dir / "progress.txt"))
    assert "--resume" not in finished and finished.count("\n") == 0
    config = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps(dict(config, epochs=3)))  # 1 of 3 done
    proc = run_here("ppo", *TINY_PPO, "--exp_name", "p", "--data_dir", tmp_path)
    assert_refused(proc, "already holds a run", "stopped after epoch 1 of 3",
                   f"--resume {run_dir}")
