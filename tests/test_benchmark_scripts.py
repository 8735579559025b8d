"""The scripts of ``benchmarks/`` (issue 59): ``--help`` shows the defaults, bad input is
refused in one line, and a try-out writes only where it is told.

Each try-out runs from a temporary folder (not the repository root) against a fresh clone
of this repository whose ``benchmarks/`` folder is the working tree's (committed in the
clone, so that anything a script writes there shows up in ``git status``); it must write
what it writes to the ``--out`` or ``--data_dir`` it is given and leave the clone's status
clean. ``benchmarks/mujoco.py``, ``device_speed.py`` and ``warp_speed.py`` have their own
test files and are left out here.

Not tried out here (none of them writes under ``docs/`` without ``--publish``; their
``--help`` and refusals are tested):

- ``grid_parallel.py``: two grids of CLI processes, about 14 s at the smallest;
- ``kernel_probe.py``: two recorded runs, about 12 s (``test_kernel_probe.py`` runs one
  comparison in this process);
- ``ab_versions.py``: a pair of timed processes and a ``git archive``, about 10 s;
- ``check_identical_progress.py``: two runs in fresh processes, 7 to 12 s (it writes only
  to a temporary folder it removes);
- ``portable_rows.py``: six MuJoCo first epochs, minutes;
- ``track_overhead.py``: three CLI runs (no tracker, W&B, MLflow), over 15 s;
- ``ppo_vs_sb3.py``: needs Stable-Baselines3 (its refusal without it is tested);
- ``device_profile.py``: needs a CUDA GPU (its refusal without one is tested);
- the ``*.sh`` learning scripts: hours of training.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
#: scripts with test files of their own
OWN_TESTS = {"mujoco", "device_speed", "warp_speed", "pixels"}
SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py")
                 if not p.stem.startswith("_") and p.stem not in OWN_TESTS)
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg",
           PYTHONWARNINGS="ignore")


def run(script, *args, cwd, root=ROOT, timeout=180):
    return subprocess.run([sys.executable, str(root / "benchmarks" / f"{script}.py"),
                           *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def git(*args):
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com",
                           "-c", "commit.gpgsign=false", *map(str, args)],
                          capture_output=True, text=True, check=True).stdout


def changes(clone):
    """What differs from the clone's commit: changed, new and ignored files alike (Python's
    byte-code caches aside)."""
    lines = git("-C", clone, "status", "--porcelain", "--ignored",
                "--untracked-files=all").splitlines()
    return [line for line in lines if "__pycache__" not in line]


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and this repository's history")
    path = tmp_path_factory.mktemp("clone") / "spinup"
    git("clone", "-q", ROOT, path)
    shutil.rmtree(path / "benchmarks")
    shutil.copytree(BENCH, path / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    git("-C", path, "add", "-A", "benchmarks")
    git("-C", path, "commit", "-q", "--allow-empty", "-m", "the working tree's benchmarks/")
    assert changes(path) == []
    return path


def fake_run(folder, **columns):
    """A run directory with a three-row progress.txt of ``columns`` (Epoch, Time and
    TotalEnvInteracts added)."""
    folder.mkdir(parents=True)
    columns = dict(Epoch=[1, 2, 3], TotalEnvInteracts=[100, 200, 300], Time=[1.0, 2.0, 3.0],
                   **columns)
    rows = ["\t".join(columns)] + ["\t".join(str(v[i]) for v in columns.values())
                                   for i in range(3)]
    (folder / "progress.txt").write_text("\n".join(rows) + "\n")
    return folder


# --help and one-line refusals ------------------------------------------------------------

@pytest.mark.parametrize("script", SCRIPTS)
def test_help_shows_the_defaults(script, tmp_path):
    out = run(script, "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith(f"usage: python benchmarks/{script}.py")
    if script != "device_profile":   # the one script without options
        assert "(default" in out.stdout
    assert list(tmp_path.iterdir()) == []


def _missing(module):
    return importlib.util.find_spec(module) is None


REFUSALS = [
    ("kernel_probe", ["--env", "NoSuchEnv-v0"], "'NoSuchEnv-v0' is not a registered"),
    ("kernel_probe", ["--set", "NOEQUALS"], "NAME=VALUE"),
    ("ab_versions", ["HEAD", "--pairs", "0"], "--pairs: 0"),
    ("ab_versions", ["no-such-revision", "--algo", "ppo"], "cannot unpack revision"),
    ("ab_versions", [], "give a revision or --set"),
    ("support_lines", ["no_such_file.py"], "no_such_file.py"),
    ("acting_speed", ["--steps", "0"], "--steps: 0"),
    ("atari_speed", ["--sizes", "0"], "--sizes: 0"),
    ("atari_speed", ["--games", "Pongg"], "invalid choice: 'Pongg'"),
    ("acting_speed", ["--ref", "."], "not a checkout"),
    ("a3c_speed", ["--env", "NoSuchEnv-v0"], "NoSuchEnv-v0"),
    ("a2c_a3c_plot", ["no_such_dir"], "no_such_dir: no such directory"),
    ("check_identical_progress", [], "--ref"),
    ("dqn_ablation", ["table"], "--extra"),
    ("dqn_ablation", ["run", "--epochs", "0"], "--epochs: 0"),
    ("dqn_speed", ["--steps", "1000"], "--steps 1000"),
    ("grid_parallel", ["--jobs", "0"], "--jobs: 0"),
    ("offpolicy_speed", ["--repeats", "-1"], "--repeats: -1"),
    ("offpolicy_summary", ["no_such_dir"], "no_such_dir: no such directory"),
    ("parallel_envs", ["--algos", "sac", "--tasks", "CartPole-v1"], "nothing to measure"),
    ("parallel_envs", ["--sizes", "0"], "--sizes: 0"),
    ("parallel_plot", ["no_such.json"], "no_such.json"),
    ("portable_rows", ["check", "--against", "no_such.json"], "no_such.json"),
    ("ppo_vs_sb3", ["--num_envs", "7"], "multiple"),
    ("preset_search", ["--cases", "sac_pendulum", "--candidates", "9"], "candidates 0 to"),
    ("summarize", ["no_such_dir"], "no_such_dir: no such directory"),
    ("time_to_threshold", ["--jobs", "0"], "--jobs: 0"),
    ("track_overhead", ["--epochs", "1"], "--epochs: 1"),
    ("trpo_summary", ["no_such_dir"], "no_such_dir: no such directory"),
]
if _missing("stable_baselines3"):
    REFUSALS.append(("ppo_vs_sb3", [], "needs stable-baselines3"))
if _missing("tianshou"):
    REFUSALS.append(("time_to_threshold", ["--libs", "tianshou"], "not installed"))


@pytest.mark.parametrize("script, args, says", REFUSALS,
                         ids=[f"{s}-{'_'.join(a) or 'none'}" for s, a, _ in REFUSALS])
def test_bad_input_is_refused_in_one_line(script, args, says, tmp_path):
    out = run(script, *args, cwd=tmp_path)
    assert out.returncode == 2, (out.stdout[-1000:], out.stderr[-2000:])
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script}: ") and says in lines[0], lines
    assert list(tmp_path.iterdir()) == []


def test_device_profile_without_a_gpu_refuses_in_one_line(tmp_path):
    if shutil.which("nvidia-smi") or os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine may have a GPU")
    out = run("device_profile", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "device_profile: needs a CUDA GPU, and this machine has none "
        "(torch.cuda.is_available() is False)"]


def test_support_lines_counts_the_algorithm_files_from_any_folder(tmp_path):
    out = run("support_lines", cwd=tmp_path)
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "spinup" / "algos").glob(
        "*/*.py") if p.name not in ("core.py", "__init__.py", "workers.py"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert [line.split()[1] for line in out.stdout.splitlines()] == files


def test_trpo_learning_sh_refuses_an_unknown_option():
    out = subprocess.run(["bash", str(BENCH / "trpo_learning.sh"), "--bogus"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "trpo_learning.sh: unknown option --bogus (see --help)"]


# A publish of part of a record merges -------------------------------------------------------

def test_a_partial_publish_keeps_what_it_did_not_measure():
    merge = load_benchmark("parallel_envs").merge
    old = json.loads((ROOT / "docs" / "benchmarks" / "parallel" / "dqn_throughput.json")
                     .read_text())
    first, second = "dqn|CartPole-v1|16", "dqn|Acrobot-v1|16"
    assert {first, second} <= set(old["raw"])

    def measured(key, value, cpu):
        return dict(machine=dict(cpu=cpu), command=f"... {key}", raw={key: [{"collect": value}]},
                    medians={key: {"collect": value}})

    once = merge(old, measured(first, 1.0, "A"))
    assert set(once["raw"]) == set(old["raw"]) and once["raw"][first] == [{"collect": 1.0}]
    assert all(once["raw"][k] == old["raw"][k] and once["medians"][k] == old["medians"][k]
               for k in old["raw"] if k != first)
    assert once["machine"] == {"cpu": "A"}
    assert once["earlier"] == [dict(machine=old["machine"], command=old["command"],
                                    keys=[k for k in old["raw"] if k != first])]
    twice = merge(once, measured(second, 2.0, "B"))
    assert twice["raw"][first] == [{"collect": 1.0}] and twice["raw"][second] == [
        {"collect": 2.0}]
    assert twice["earlier"] == [
        dict(machine={"cpu": "A"}, command=f"... {first}", keys=[first]),
        dict(machine=old["machine"], command=old["command"],
             keys=[k for k in old["raw"] if k not in (first, second)])]
    everything = dict(measured(first, 3.0, "C"), raw=old["raw"], medians=old["medians"])
    assert "earlier" not in merge(twice, everything)
    assert merge(None, everything) == everything


# Try-outs in a clean clone -----------------------------------------------------------------

def _a2c_a3c_plot(tmp, clone):
    fake_run(tmp / "runs" / "a2c_cp" / "a2c_cp_s0", AverageEpRet=[10, 20, 30])
    return [[tmp / "runs", "--out", tmp / "figs"]], [tmp / "figs" / "a2c_a3c_a2c_cp.png"]


def _dqn_ablation(tmp, clone):
    data = tmp / "abl"
    return ([["run", "--data_dir", data, "--epochs", "1", "--steps_per_epoch", "1100",
              "--variants", "plain"],
             ["plot", "--data_dir", data, "--out", tmp / "abl.png"],
             ["table", "--extra", f"plain={data / 'abl_plain' / 'progress.txt'}"]],
            [data / "abl_plain" / "progress.txt", tmp / "abl.png"])


def _summaries(script, **columns):
    def tryout(tmp, clone):
        fake_run(tmp / "runs" / "exp" / "exp_s0", **columns)
        return [[tmp / "runs"]], []
    return tryout


TRYOUTS = {
    "a2c_a3c_plot": _a2c_a3c_plot,
    "a3c_speed": lambda tmp, clone: (
        [["--steps", "200", "--workers", "1", "--out", tmp / "a3c"]],
        [tmp / "a3c" / "w1" / "updates.txt"]),
    "acting_speed": lambda tmp, clone: (
        [["--algos", "dqn", "ppo8", "--steps", "64", "--repeats", "1", "--no-epoch"]], []),
    "atari_speed": lambda tmp, clone: (
        [["--games", "Pong", "--sizes", "2", "--agent_steps", "40", "--repeats", "1",
          "--out", tmp / "atari_speed.json"]], [tmp / "atari_speed.json"]),
    "dqn_ablation": _dqn_ablation,
    "dqn_speed": lambda tmp, clone: ([["--steps", "1100", "--repeats", "1"]], []),
    "offpolicy_speed": lambda tmp, clone: ([["--steps", "1001"]], []),
    "offpolicy_summary": _summaries("offpolicy_summary", AverageTestEpRet=[-900, -500, -200]),
    "parallel_envs": lambda tmp, clone: (
        [["--algos", "dqn", "--tasks", "CartPole-v1", "--sizes", "8", "--repeats", "1",
          "--out", tmp / "throughput.json"]], [tmp / "throughput.json"]),
    "parallel_plot": lambda tmp, clone: (
        [["--out", tmp / "throughput.png"]], [tmp / "throughput.png"]),
    "preset_search": lambda tmp, clone: (
        [["--cases", "ppo_cartpole", "--candidates", "5", "--seeds", "0", "--budget", "600",
          "--out", tmp / "search"]],
        [tmp / "search" / "preset_search.csv", tmp / "search" / "ppo_CartPole-v1.json"]),
    "summarize": _summaries("summarize", AverageEpRet=[10, 20, 30]),
    "support_lines": lambda tmp, clone: ([[]], []),
    "time_to_threshold": lambda tmp, clone: (
        [["--dry-run"],
         ["--cases", "sac_pendulum", "--libs", "spinup", "--seeds", "0", "--budget", "1000",
          "--csv", tmp / "ttt.csv"]], [tmp / "ttt.csv"]),
    "trpo_summary": _summaries("trpo_summary", AverageEpRet=[10, 20, 30],
                               BacktrackIters=[0, 1, 0], KL=[0.01, 0.01, 0.009]),
}


def test_every_script_is_tried_out_or_listed_as_skipped():
    skipped = {line.split("``")[1][:-3] for line in __doc__.splitlines()
               if line.startswith("- ``") and line.split("``")[1].endswith(".py")}
    assert set(TRYOUTS) | skipped == set(SCRIPTS) and not set(TRYOUTS) & skipped


@pytest.mark.parametrize("script", sorted(TRYOUTS))
def test_try_out_writes_only_where_told(script, clone, tmp_path):
    commands, written = TRYOUTS[script](tmp_path, clone)
    for args in commands:
        out = run(script, *args, cwd=tmp_path, root=clone)
        assert out.returncode == 0, (args, out.stdout[-2000:], out.stderr[-3000:])
    for path in written:
        assert path.is_file(), path
    assert changes(clone) == []
