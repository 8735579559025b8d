"""The CLI: grids and directory names, help, and one clear error for bad input."""
import os

import pytest

from conftest import read_progress, run_cli, run_here


def test_help_and_algo_help():
    out = run_cli("help").stdout
    assert "python -m spinup.run ALGO" in out and "ppo" in out
    out = run_cli("ppo", "--help").stdout
    assert "clip_ratio" in out and "target_kl" in out


def test_grid_directories_and_end_message(tmp_path):
    proc = run_cli("ppo", "--env", "CartPole-v1", "--exp_name", "g", "--epochs", 1,
                   "--steps_per_epoch", 200, "--hid[h]", "[8]", "[8,8]",
                   "--act", "torch.nn.ReLU", "--seed", 0, 10, "--data_dir", tmp_path)
    for sub in ["g_h8/g_h8_s0", "g_h8/g_h8_s10", "g_h8-8/g_h8-8_s0", "g_h8-8/g_h8-8_s10"]:
        df = read_progress(tmp_path / sub)
        assert list(df["TotalEnvInteracts"]) == [200]
    assert "python -m spinup.run plot " + str(tmp_path / "g_h8-8" / "g_h8-8_s10") in proc.stdout
    assert "python -m spinup.run test_policy" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["ppo", "--env", "CartPol-v1"], "Did you mean: CartPole-v1"),
    (["ppo", "--env", "CartPole-v1", "--epoch", "3"], "unknown flag --epoch. Did you mean: --epochs"),
    (["ppo", "--env", "CartPole-v1", "--epochs", "abc"], "--epochs expects an integer"),
    (["ppo", "--env", "CartPole-v1", "--act", "torch.nn.Relu"], "--act: cannot import"),
    # issue 45: refused without importing ``this`` (which prints the Zen of Python)
    (["ppo", "--env", "CartPole-v1", "--act", "this.s"], "'this' is a standard-library module"),
    (["ppo", "--epochs", "3"], "you must give an environment with --env"),
    (["ppo", "--env", "CartPole-v1", "--cpu", "0"], "--cpu expects a positive integer"),
    (["ppo", "--env", "CartPole-v1", "--exp_name", "a", "b"], "--exp_name takes one value"),
    (["pppo", "--env", "CartPole-v1"], "Did you mean: ppo"),
])
def test_bad_input_gives_one_clear_error(tmp_path, args, message):
    proc = run_here(*args, "--data_dir", tmp_path) if args[0] == "ppo" else run_here(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and "Beautiful is better" not in proc.stdout
    assert not os.listdir(tmp_path)  # nothing was launched


def test_algorithm_error_is_one_line(tmp_path):
    # A value the CLI's parser accepts but the algorithm's rules refuse: the parent
    # process checks it (spinup.machinery.arg_checks) before launching, one line, exit 2.
    proc = run_cli("ppo", "--env", "CartPole-v1", "--steps_per_epoch", 0, "--epochs", 1,
                   "--data_dir", tmp_path, check=False)
    assert proc.returncode == 2
    assert "steps_per_epoch" in proc.stderr and "Traceback" not in proc.stderr
    assert not os.listdir(tmp_path)  # refused before launch


def test_plot_and_test_policy_commands(tmp_path):
    run_cli("ppo", "--env", "CartPole-v1", "--epochs", 2, "--steps_per_epoch", 300,
            "--seed", 0, 1, "--exp_name", "pl", "--data_dir", tmp_path)
    fig = tmp_path / "fig.png"
    run_cli("plot", tmp_path / "pl", "--savefig", fig, "-s", 2, "--count")
    assert fig.stat().st_size > 1000
    run_cli("plot", tmp_path / "pl", "-y", "Performance", "LossV", "--savefig", fig)
    assert (tmp_path / "fig_LossV.png").exists()
    proc = run_cli("plot", tmp_path / "nothing", "--savefig", fig, check=False)
    assert proc.returncode == 1 and "no log directories match" in proc.stderr
    out = run_cli("test_policy", tmp_path / "pl" / "pl_s0", "-n", 2, "-nr", "-d").stdout
    assert "Episode 1" in out and "AverageEpRet" in out
    proc = run_cli("test_policy", tmp_path / "missing", "-nr", check=False)
    assert proc.returncode == 1 and "no saved model" in proc.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_sigterm_to_cli_stops_the_training_process(tmp_path):
    """`kill PID` of `python -m spinup.run` must not leave the training subprocess
    running as an orphan."""
    import signal
    import subprocess
    import sys
    import time
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", "ppo", "--env", "CartPole-v1",
                             "--epochs", "1000", "--data_dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children_file = f"/proc/{proc.pid}/task/{proc.pid}/children"
    children = []
    for _ in range(600):  # wait (up to 60 s) until the training subprocess exists
        with open(children_file) as f:
            children = [int(c) for c in f.read().split()]
        if children:
            break
        time.sleep(0.1)
    assert children, "the CLI did not start a training subprocess"
    time.sleep(2)  # let it install its handlers and start training
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    for _ in range(100):  # the CLI waited for it; allow the kernel a moment
        if not any(_is_running(c) for c in children):
            break
        time.sleep(0.1)
    assert not any(_is_running(c) for c in children)


def _is_running(pid):
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_flag_order_and_shorthands_name_runs_as_before(monkeypatch):
    """Directory names do not depend on where --hid[h] stands: flags with a shorthand,
    then short flags, go after the others (Spinning Up's order)."""
    from spinup import run
    from spinup.launch.run_utils import ExperimentGrid
    seen = {}

    def fake_run(grid, thunk, **run_kwargs):
        seen["names"] = [grid.variant_name(v) for v in grid.variants()]
        seen["run_kwargs"] = run_kwargs

    monkeypatch.setattr(ExperimentGrid, "run", fake_run)
    run.parse_and_execute_grid_search("ppo", [
        "--hid[h]", "[8]", "[8,8]", "--act", "torch.nn.ReLU", "torch.nn.Tanh",
        "--env", "CartPole-v1", "--clip_ratio[cr]", "0.1", "0.2", "--target_kl", "0.01", "0.02",
        "--exp_name", "o", "--dt", "--seed", "0", "1"])
    assert seen["names"][:3] == ["o_tar0-01_cr0-1_h8_ac-actrelu", "o_tar0-01_cr0-1_h8_ac-acttanh",
                                 "o_tar0-01_cr0-1_h8-8_ac-actrelu"]
    assert len(seen["names"]) == 32 and seen["run_kwargs"] == {"datestamp": True}


def _assert_refused(proc, message):
    """A bad-input refusal: exit 2, exactly one line on stderr, no traceback."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert message in proc.stderr, proc.stderr


def _hashes(directory):
    import hashlib
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_same_exp_name_twice_leaves_the_first_run_byte_identical(tmp_path):
    args = ["ppo", "--env", "CartPole-v1", "--exp_name", "twice", "--epochs", 1,
            "--steps_per_epoch", 100, "--seed", 0, 1, "--data_dir", tmp_path]
    run_cli(*args)
    before = _hashes(tmp_path)
    assert "twice/twice_s0/progress.txt" in before and "twice/twice_s1/config.json" in before
    proc = run_here(*args)
    _assert_refused(proc, "already holds a run")
    for hint in ("--dt", "--exp_name", "--overwrite"):
        assert hint in proc.stderr
    assert _hashes(tmp_path) == before
    # one clashing variant in a grid stops every variant, before any runs
    proc = run_here("ppo", "--env", "CartPole-v1", "--exp_name", "twice", "--epochs", 1,
                    "--steps_per_epoch", 100, "--seed", 2, 1, "--data_dir", tmp_path)
    _assert_refused(proc, "twice_s1 already holds a run")
    assert _hashes(tmp_path) == before
    run_cli(*args, "--overwrite")
    assert _hashes(tmp_path) != before


@pytest.mark.parametrize("make_bad, message", [
    (lambda d: (d / "file").write_text("x") and d / "file", "is a file, not a directory"),
    (lambda d: (d / "file").write_text("x") and d / "file" / "sub", "is a file, not a directory"),
    (lambda d: "/proc/spinup-cannot-write-here", "cannot write in /proc"),
])
def test_unusable_data_dir_is_one_line_and_creates_nothing(tmp_path, make_bad, message):
    data_dir = make_bad(tmp_path)
    listing = sorted(p.name for p in tmp_path.iterdir())
    proc = run_here("ppo", "--env", "CartPole-v1", "--epochs", 1, "--data_dir", data_dir)
    _assert_refused(proc, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into read-only directories")
def test_read_only_data_dir_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    proc = run_cli("ppo", "--env", "CartPole-v1", "--data_dir", locked / "d", check=False)
    _assert_refused(proc, "cannot write in")
    assert not list(locked.iterdir())


def test_cpu_above_the_cores_is_refused_with_the_core_count(tmp_path):
    from spinup.machinery.cores import available_cores
    too_many = available_cores() + 1
    proc = run_here("ppo", "--env", "CartPole-v1", "--cpu", too_many, "--steps_per_epoch",
                    100 * too_many, "--data_dir", tmp_path)
    _assert_refused(proc, f"more MPI processes than the {available_cores()} CPU cores")
    assert "--oversubscribe" in proc.stderr and not os.listdir(tmp_path)
    proc = run_here("ppo", "--env", "CartPole-v1", "--overwrite", "yes", "--data_dir", tmp_path)
    _assert_refused(proc, "--overwrite is a switch")


def test_bench_ppo_cartpole_refuses_too_many_processes_in_one_line(tmp_path, capsys):
    """Issue 45: its default of 4 MPI processes per run ended in a LaunchError traceback
    on a 2-core machine. The default is now at most the cores; more is one line, exit 2."""
    from spinup.examples import bench_ppo_cartpole
    from spinup.machinery.cores import available_cores
    code = bench_ppo_cartpole.main(["--cpu", str(available_cores() + 1), "--data_dir",
                                    str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--oversubscribe" in err
    assert not os.listdir(tmp_path)


def test_output_into_head_stops_the_run_in_one_line(tmp_path):
    """Issue 45: ``spinup.run ppo ... | head -3`` ended in a BrokenPipeError traceback and
    exit 1. The reader leaving now stops the run with one line and 141 (128 + SIGPIPE)."""
    import subprocess
    import sys
    cmd = (f"{sys.executable} -m spinup.run ppo --env CartPole-v1 --epochs 50 "
           f"--steps_per_epoch 300 --data_dir {tmp_path} | head -3; "
           "exit ${PIPESTATUS[0]}")
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 141, proc.stderr[-3000:]
    assert len(proc.stdout.splitlines()) == 3
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
    # The third line comes before the first epoch's end: no checkpoint, no --resume to name.
    assert proc.stderr.strip().splitlines() == [
        "stopped: the program reading the output closed it (e.g. '| head') before the run's "
        "first epoch ended, so nothing was kept (the same command starts it again)"]


def test_resume_with_overwrite_says_they_contradict(tmp_path):
    """Issue 45: ``--resume DIR --overwrite`` said "--overwrite True differs from them"."""
    run_here("ppo", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 100,
             "--exp_name", "r", "--data_dir", tmp_path)
    run_dir = tmp_path / "r" / "r_s0"
    before = (run_dir / "progress.txt").read_bytes()
    proc = run_here("ppo", "--resume", run_dir, "--overwrite")
    assert proc.returncode == 2
    assert "--resume and --overwrite contradict each other" in proc.stderr
    assert (run_dir / "progress.txt").read_bytes() == before


def test_refusal_to_overwrite_names_the_python_forms(tmp_path):
    """Issue 45: a user of ExperimentGrid or EpochLogger was told logger_kwargs=..."""
    from spinup.utils.logx import EpochLogger
    run_here("ppo", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 100,
             "--exp_name", "o", "--data_dir", tmp_path)
    with pytest.raises(FileExistsError) as e:
        EpochLogger(output_dir=str(tmp_path / "o" / "o_s0"))
    assert "ExperimentGrid.run" in str(e.value) and "EpochLogger" in str(e.value)


def test_the_launching_process_makes_the_env_once(monkeypatch):
    """Issue 44: the command line made the env twice before launching (the id check, then
    the probe of the spaces); the probe now uses the env the id check made."""
    import gymnasium as gym

    from spinup import run
    from spinup.machinery import arg_checks
    from spinup.launch.run_utils import ExperimentGrid
    made = []

    class Counted(gym.Wrapper):
        def __init__(self):
            made.append(1)
            super().__init__(gym.make("CartPole-v1"))

    gym.register("CountedForTheCli-v0", entry_point=Counted)
    monkeypatch.setattr(ExperimentGrid, "run", lambda grid, thunk, **kw: None)
    monkeypatch.setattr(arg_checks, "_checked", set())
    try:
        run.parse_and_execute_grid_search("ppo", ["--env", "CountedForTheCli-v0",
                                                  "--seed", "0", "1"])
    finally:
        gym.registry.pop("CountedForTheCli-v0", None)
    assert len(made) == 1
