"""Issue 30: the env is made and tried once before any file exists, and the cases of
the third newcomer sweep give one line that says what to change (or a correct run
with a note). Each refusal: the right exit code or exception, one line, no directory."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import spinup
from conftest import ROOT, run_cli, run_here
from spinup.launch.run_utils import ExperimentGrid, LaunchError

BAD_ENVS = textwrap.dedent('''\
    import gymnasium as gym
    import numpy as np


    class BadEnv(gym.Env):
        """A tiny env that misbehaves as ``mode`` says; ``box`` gives it bounded Box actions."""

        def __init__(self, mode="", box=False, render_mode=None):
            self.mode, self.render_mode, self.t = mode, render_mode, 0
            self.observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
            self.action_space = (gym.spaces.Box(-1.0, 1.0, (1,), np.float32) if box
                                 else gym.spaces.Discrete(2))

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            if self.mode == "reset":
                raise RuntimeError("the simulator did not start")
            if self.mode == "render" and self.render_mode == "human":
                raise gym.error.DependencyNotInstalled("pygame is not installed")
            size, fill = (5, 0.0) if self.mode == "shape" else (3, np.nan if self.mode == "nanobs"
                                                                 else 0.0)
            return np.full(size, fill, np.float32), {}

        def step(self, action):
            self.t += 1
            if self.mode == "step" and self.t > 30:
                raise RuntimeError("the simulator crashed")
            if self.mode == "valuestep" and self.t > 30:
                raise ValueError("the simulator got a bad value")
            rew = float("nan") if self.mode == "nanrew" else 1.0
            return np.zeros(3, np.float32), rew, self.t % 10 == 0, False, {}


    for mode in ("reset", "shape", "nanobs", "nanrew", "step", "valuestep"):
        gym.register(id=f"Bad{mode.capitalize()}-v0", entry_point=BadEnv, kwargs=dict(mode=mode))
    ''')

exec(compile(BAD_ENVS, "bad_envs", "exec"))  # defines BadEnv and registers the ids here too

MESSAGES = {
    "reset": "env BadReset-v0: reset() raised RuntimeError: the simulator did not start",
    "shape": "env BadShape-v0: reset() returned an observation of shape (5,) but its "
             "observation space Box(-1.0, 1.0, (3,), float32) has shape (3,)",
    "nanobs": "env BadNanobs-v0: reset() returned a non-finite observation [nan, nan, nan]",
    "nanrew": "env BadNanrew-v0: the first step() returned a non-finite reward (nan)",
}
BOX_ALGOS = {"sac", "td3", "ddpg"}
ALL = ["vpg", "trpo", "npg", "ppo", "a2c", "a3c", "ddpg", "td3", "sac", "dqn"]


@pytest.mark.parametrize("mode", sorted(MESSAGES))
@pytest.mark.parametrize("algo", ALL)
def test_python_api_refuses_a_bad_env_before_any_file(tmp_path, algo, mode):
    out = tmp_path / "run"
    kwargs = dict(box=True) if algo in BOX_ALGOS else {}
    with pytest.raises(ValueError) as info:
        getattr(spinup, algo)(lambda: gym.make(f"Bad{mode.capitalize()}-v0", **kwargs),
                              logger_kwargs=dict(output_dir=str(out)))
    line = str(info.value)
    assert "\n" not in line and line.startswith(f"{algo}: ") and MESSAGES[mode] in line, line
    assert not out.exists()


def _cli_in(tmp_path, *args):
    (tmp_path / "bad_envs.py").write_text(BAD_ENVS)
    return subprocess.run([sys.executable, "-m", "spinup.run", *map(str, args),
                           "--data_dir", "out"], capture_output=True, text=True, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=600)


@pytest.mark.parametrize("mode", sorted(MESSAGES))
def test_cli_refuses_a_bad_env_in_one_line_before_any_file(tmp_path, mode):
    for extra in ([], ["--jobs", "1"]):   # the grid launcher writes output.log early
        proc = _cli_in(tmp_path, "ppo", "--env", f"bad_envs:Bad{mode.capitalize()}-v0", *extra)
        assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert proc.stderr.splitlines() == [f"error: ppo: {MESSAGES[mode]}"] or (
            len(proc.stderr.splitlines()) == 1 and MESSAGES[mode] in proc.stderr), proc.stderr
        assert not (tmp_path / "out").exists()


def test_missing_render_dependency_is_one_line(tmp_path, monkeypatch):
    out = tmp_path / "run"
    with pytest.raises(ValueError) as info:
        spinup.ppo(lambda: BadEnv("render", render_mode="human"),
                   logger_kwargs=dict(output_dir=str(out)))
    assert str(info.value) == ("ppo: env BadEnv: reset() raised DependencyNotInstalled: pygame "
                               "is not installed (the env was made with render_mode='human'; "
                               "leave it out for training)")
    monkeypatch.setitem(sys.modules, "pygame", None)   # the real thing: CartPole without pygame
    with pytest.raises(ValueError, match=r"^sac: env Pendulum-v1: reset\(\) raised "
                                         r"DependencyNotInstalled: .*render_mode='human'"):
        spinup.sac(lambda: gym.make("Pendulum-v1", render_mode="human"),
                   logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


@pytest.mark.parametrize("algo", ["ppo", "dqn", "trpo"])
def test_env_raising_in_step_says_so_first_and_keeps_its_traceback(tmp_path, capfd, algo):
    kwargs = dict(update_after=10, start_steps=5, batch_size=8) if algo == "dqn" else {}
    with pytest.raises(RuntimeError, match="the simulator crashed"):
        getattr(spinup, algo)(lambda: gym.make("BadStep-v0"), steps_per_epoch=50, epochs=2,
                              logger_kwargs=dict(output_dir=str(tmp_path / "run")), **kwargs)
    said = [line for line in capfd.readouterr().err.splitlines() if "your env raised" in line]
    epoch = 1 if algo == "dqn" else 0   # dqn counts epochs from 1 (and t over the run)
    assert said == [f"{algo}: your env raised RuntimeError inside step() at epoch {epoch}, "
                    "step t=30; its traceback follows"]


def test_env_raising_in_step_under_the_cli_prints_the_line_then_the_traceback(tmp_path):
    proc = _cli_in(tmp_path, "vpg", "--env", "bad_envs:BadStep-v0", "--steps_per_epoch", 50)
    assert proc.returncode == 1
    err = proc.stderr
    assert err.index("vpg: your env raised RuntimeError inside step() at epoch 0, step t=30") \
        < err.index("Traceback") < err.index("RuntimeError: the simulator crashed")


def test_env_raising_value_error_in_step_under_the_cli_keeps_its_traceback(tmp_path):
    """Issue 44: a ValueError from the user's env was turned into the CLI's one-line form
    after "its traceback follows", so no traceback followed."""
    proc = _cli_in(tmp_path, "ppo", "--env", "bad_envs:BadValuestep-v0", "--steps_per_epoch", 50)
    assert proc.returncode == 1
    err = proc.stderr
    assert err.index("ppo: your env raised ValueError inside step() at epoch 0, step t=30") \
        < err.index("Traceback") < err.index("ValueError: the simulator got a bad value")
    assert "SPINUP_DEBUG" not in err


def test_valid_runs_are_unchanged_by_the_probe(tmp_path):
    """The probe is a separate env and puts the global random states back: a run gives
    the same numbers whether or not the global generators were drawn from before."""
    def run(name):
        spinup.ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=200, epochs=1, seed=3,
                   logger_kwargs=dict(output_dir=str(tmp_path / name)))
        return (tmp_path / name / "progress.txt").read_text().splitlines()[1].split("\t")

    np.random.seed(0)
    state = np.random.get_state()
    from spinup.machinery.env_checks import make_env
    make_env("ppo", lambda: gym.make("CartPole-v1")).close()
    assert all((a == b).all() if hasattr(a, "all") else a == b
               for a, b in zip(state, np.random.get_state()))
    first, second = run("a"), run("b")
    header = (tmp_path / "a" / "progress.txt").read_text().splitlines()[0].split("\t")
    keep = [i for i, h in enumerate(header) if h != "Time"]
    assert [first[i] for i in keep] == [second[i] for i in keep]
    assert not (tmp_path / "a" / ".spinup.lock").exists()   # a finished run keeps no lock


# ---- ExperimentGrid.run ----

def test_grid_run_names_a_missing_thunk_and_env(tmp_path):
    grid = ExperimentGrid("g")
    with pytest.raises(LaunchError, match=r"^ExperimentGrid.run: thunk='ppo' is not a "
                                          "parameter of the grid; pass the function itself"):
        grid.run("ppo", data_dir=str(tmp_path))
    with pytest.raises(LaunchError, match=r"the grid gives ppo no env_name \(e.g. eg.add"):
        grid.run(spinup.ppo, data_dir=str(tmp_path))
    grid.add("env_name", "CartPole-v1")
    for jobs in (0, False):
        with pytest.raises(LaunchError, match="--jobs expects a positive integer or 'auto'"):
            grid.run(spinup.ppo, data_dir=str(tmp_path), jobs=jobs)
    assert os.listdir(tmp_path) == []


# ---- Command-line values ----

@pytest.mark.parametrize("args, line", [
    (["--env"], "ppo: --env needs a value after it"),
    (["--env", "CartPole-v1", "--exp_name"], "ppo: --exp_name needs a value after it"),
    (["--env", "CartPole-v1", "--ac_kwargs", "{'hidden_sizes': [8]}", "--hid", "[4]"],
     "ac_kwargs is given whole and ac_kwargs:hidden_sizes sets one of its keys too: put "
     "'hidden_sizes' inside ac_kwargs, or leave ac_kwargs out"),
    (["--env", "CartPole-v1", "--act", "torch.nn.Linear"],
     "ppo: ac_kwargs['activation']=<class 'torch.nn.modules.linear.Linear'> is not allowed: "
     "a torch.nn.Module subclass, e.g. torch.nn.ReLU, that takes no arguments (an "
     "activation; --act on the command line)"),
    (["--env", "CartPole-v1", "--exp_name", "a\nb"],
     "ppo: --exp_name='a\\nb' is not allowed: a non-empty name without '/' or control "
     "characters such as a newline"),
])
def test_cli_values_meant_otherwise_are_one_line(tmp_path, args, line):
    proc = run_here("ppo", *args, "--data_dir", tmp_path / "data")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and line in proc.stderr, proc.stderr
    assert not (tmp_path / "data").exists()


def test_python_api_refuses_an_activation_that_needs_arguments(tmp_path):
    import torch
    with pytest.raises(TypeError, match=r"e.g. torch.nn.ReLU, that takes no arguments"):
        spinup.ppo(lambda: gym.make("CartPole-v1"), ac_kwargs=dict(activation=torch.nn.Linear),
                   logger_kwargs=dict(output_dir=str(tmp_path / "run")))
    assert not (tmp_path / "run").exists()


def test_resume_of_a_complete_run_says_so_and_config_names_the_run(tmp_path):
    run_cli("vpg", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 50, "--hid", "[8]",
            "--data_dir", tmp_path)
    run_dir = tmp_path / "cmd_vpg" / "cmd_vpg_s0"
    table = (run_dir / "progress.txt").read_text()
    proc = run_cli("vpg", "--resume", run_dir)
    assert proc.stdout.strip() == (f"vpg: {run_dir} is complete: all its 1 epochs are done, so "
                                   "there is nothing to resume. To train it further: --resume "
                                   f"{run_dir} --epochs N, N > 1")
    assert (run_dir / "progress.txt").read_text() == table
    proc = run_cli("vpg", "--resume", run_dir, "--epochs", 2)
    assert "logger_kwargs was given" not in proc.stdout and "epoch 2/2" in proc.stdout
    proc = run_cli("vpg", "--config", run_dir / "config.json", "--epochs", 1,
                   "--data_dir", tmp_path / "again")
    assert (f"Note: --config does not set the name; the run is named cmd_vpg (in "
            f"{tmp_path / 'again'}). Add --exp_name to choose one.") in proc.stdout
    assert (tmp_path / "again" / "cmd_vpg" / "cmd_vpg_s0" / "progress.txt").exists()


# ---- The logger ----

def test_store_refuses_what_is_not_numbers_naming_the_key(tmp_path):
    import torch

    from spinup.utils.logx import EpochLogger
    logger = EpochLogger(output_dir=str(tmp_path / "run"))
    for value in (torch.ones(2, requires_grad=True), "fast"):
        with pytest.raises(TypeError, match=r"^EpochLogger.store: Loss=.* is not allowed: a "
                                            "number or an array of numbers"):
            logger.store(Loss=value)
    logger.store(Loss=torch.ones(2), Ret=np.float32(1.5))
    logger.epoch_dict["Loss"].append("late")   # only the first value is checked at store
    with pytest.raises(TypeError, match=r"^EpochLogger.store: Loss='late' is not allowed"):
        logger.log_tabular("Loss")


def test_output_dir_that_is_a_file_and_a_second_dump(tmp_path):
    from spinup.utils.logx import EpochLogger
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    with pytest.raises(FileExistsError, match=r"^Logger: cannot use output_dir='.*taken' as the "
                                              r"run's directory \(File exists\)"):
        EpochLogger(output_dir=str(taken))
    assert taken.read_text() == "keep me"
    logger = EpochLogger(output_dir=str(tmp_path / "run"))
    logger.log_tabular("A", 1)
    logger.dump_tabular()
    logger.dump_tabular()   # nothing logged since: no empty row
    assert (tmp_path / "run" / "progress.txt").read_text() == "A\n1\n"


@pytest.mark.parametrize("args, line", [(["-l", "-5"], "--len -5: give 0"),
                                        (["-i", "-2"], "--itr -2: give -1")])
def test_test_policy_refuses_negative_len_and_itr(tmp_path, args, line):
    proc = run_cli("test_policy", tmp_path, *args, "-nr", check=False)
    assert proc.returncode == 2 and line in proc.stderr.splitlines()[-1]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("algo, hint", [
    ("dqn", "one Discrete index stands for each combination"),
    ("sac", "turn its actions into a continuous (Box) space"),
])
def test_multidiscrete_actions_get_a_hint_the_algorithm_can_use(tmp_path, algo, hint):
    """Issue 45: DQN refused MultiDiscrete actions with "turn its actions into a Box or a
    Discrete space" (a Box it cannot use either)."""
    class Multi(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (3,))
        action_space = gym.spaces.MultiDiscrete([2, 3])

    with pytest.raises(ValueError) as e:
        getattr(spinup, algo)(Multi, logger_kwargs=dict(output_dir=str(tmp_path / "out")))
    assert hint in str(e.value) and "Box or a Discrete" not in str(e.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco")
def test_mujocos_settotalmass_note_is_dropped_and_other_warnings_kept():
    """Issue 45: six "compiler attribute 'settotalmass' is deprecated" lines on every
    MuJoCo run (gymnasium's XML files; nothing for a user to do)."""
    code = textwrap.dedent("""
        import spinup, gymnasium as gym, mujoco
        gym.make("HalfCheetah-v5").reset(seed=0)
        mujoco.get_mju_user_warning()("another warning")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "settotalmass" not in proc.stdout + proc.stderr
    assert proc.stdout.strip() == "WARNING: another warning"


class _CtrlCInStep(gym.Wrapper):
    """CartPole whose 31st step is interrupted by Ctrl-C (a KeyboardInterrupt)."""

    def __init__(self):
        super().__init__(gym.make("CartPole-v1"))
        self.steps = 0

    def step(self, action):
        self.steps += 1
        if self.steps == 31:
            raise KeyboardInterrupt
        return self.env.step(action)


def test_ctrl_c_inside_step_is_not_reported_as_the_envs_error(tmp_path, capfd):
    """Issue 54: the door's ``with run:`` named every exception from inside ``step()`` as the
    env's, so a Ctrl-C there printed "your env raised KeyboardInterrupt" (the decorator it
    replaced saw ``Exception`` only). The thread count is put back all the same."""
    import torch
    threads = torch.get_num_threads()
    with pytest.raises(KeyboardInterrupt):
        spinup.ppo(_CtrlCInStep, steps_per_epoch=50, epochs=2,
                   logger_kwargs=dict(output_dir=str(tmp_path / "run")))
    assert "your env raised" not in capfd.readouterr().err
    assert torch.get_num_threads() == threads
