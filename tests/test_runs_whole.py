"""Issue 29: runs stay whole (overwrite, resume, grid resume, Ray, signals, plot) and a
diverged policy stops its run."""
import importlib
import math

import gymnasium as gym
import pytest
import torch

import spinup
from spinup.utils.torch_tools import finite_logp, sample_categorical, sample_diag_gaussian


# ---- Non-finite policy outputs ----

@pytest.mark.parametrize("logits", [[0.0, math.nan], [-math.inf, -math.inf], [math.inf, 0.0]])
def test_categorical_refuses_non_finite_logits(logits):
    with pytest.raises(ValueError, match="NaN or infinite"):   # the acting loops' check
        finite_logp(sample_categorical(torch.tensor([logits]))[1].numpy())


@pytest.mark.parametrize("mu, log_std", [(math.nan, 0.0), (math.inf, 0.0), (0.0, math.nan),
                                         (0.0, math.inf), (0.0, -math.inf)])
def test_gaussian_refuses_non_finite_mean_or_std(mu, log_std):
    with pytest.raises(ValueError, match="NaN or infinite"):
        finite_logp(sample_diag_gaussian(torch.tensor([[mu, 0.0]]),
                                         torch.tensor([log_std, 0.0]))[1].numpy())


def test_finite_draws_use_the_same_random_numbers():
    torch.manual_seed(3)
    a, logp = sample_categorical(torch.tensor([[0.1, 0.5, -0.2]]))
    torch.manual_seed(3)
    want = torch.distributions.Categorical(logits=torch.tensor([[0.1, 0.5, -0.2]])).sample()
    assert torch.equal(a, want) and torch.isfinite(logp).all()


def _nan_actor_critic(algo):
    core = importlib.import_module(f"spinup.algos.{algo}.core")

    def build(observation_space, action_space, **kwargs):
        ac = core.MLPActorCritic(observation_space, action_space, **kwargs)
        with torch.no_grad():
            for p in ac.pi.parameters():
                p.fill_(math.nan)
        return ac
    return build


@pytest.mark.parametrize("algo, env_id, where", [
    ("ppo", "CartPole-v1", "ppo: epoch 0, step 0"), ("vpg", "Pendulum-v1", "vpg: epoch 0, step 0"),
    ("trpo", "CartPole-v1", "trpo: epoch 0, step 0"), ("a2c", "Pendulum-v1", "a2c: epoch 0"),
    ("a3c", "CartPole-v1", "a3c: worker 0, step 0")])
def test_a_diverged_policy_stops_the_run_in_one_line(algo, env_id, where, tmp_path):
    extra = dict(num_workers=1) if algo == "a3c" else {}
    with pytest.raises(ValueError) as caught:
        getattr(spinup, algo)(lambda: gym.make(env_id), actor_critic=_nan_actor_critic(algo),
                              steps_per_epoch=200, epochs=1,
                              logger_kwargs=dict(output_dir=str(tmp_path / "run")), **extra)
    message = str(caught.value)
    assert message.startswith(where) and "NaN or infinite" in message and "\n" not in message


# ---- One run per directory: --overwrite, and resuming a damaged table ----

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pandas as pd  # noqa: E402

from conftest import run_cli  # noqa: E402
from spinup.machinery.checkpoint import checkpoint_path, load_checkpoint  # noqa: E402

TINY = dict(steps_per_epoch=100, ac_kwargs=dict(hidden_sizes=(8,)), train_pi_iters=2,
            train_v_iters=2)


def tiny_ppo(run_dir, epochs, **logger_kwargs):
    spinup.ppo(lambda: gym.make("CartPole-v1"), epochs=epochs, save_freq=1,
               logger_kwargs=dict(output_dir=str(run_dir), **logger_kwargs), **TINY)


def listing(directory):
    return sorted(os.path.relpath(os.path.join(d, n), directory)
                  for d, dirs, names in os.walk(directory) for n in dirs + names)


def test_api_overwrite_leaves_no_file_of_the_earlier_run(tmp_path):
    run = tmp_path / "run"
    tiny_ppo(run, 3, tensorboard=True)
    (run / "output.log").write_text("old log\n")
    assert "pyt_save/model2.pt" in listing(run) and "vars2.json" in listing(run)
    tiny_ppo(run, 1, overwrite=True)
    assert listing(run) == ["config.json", "progress.txt", "provenance.json", "pyt_save",
                            "pyt_save/checkpoint.pt", "pyt_save/model.pt",
                            "pyt_save/model0.pt", "vars.json", "vars0.json"]
    assert list(pd.read_table(run / "progress.txt")["Epoch"]) == [0]


def test_cli_overwrite_leaves_no_file_of_the_earlier_run(tmp_path):
    args = ["ppo", "--env", "CartPole-v1", "--steps_per_epoch", 100, "--hid", "[8]",
            "--train_pi_iters", 2, "--train_v_iters", 2, "--save_freq", 1,
            "--exp_name", "o", "--data_dir", tmp_path]
    run_cli(*args, "--epochs", 3)
    run = tmp_path / "o" / "o_s0"
    assert (run / "pyt_save" / "model2.pt").exists()
    run_cli(*args, "--epochs", 1, "--overwrite")
    assert not any(name.endswith(("1.pt", "2.pt", "1.json", "2.json"))
                   for name in listing(run))
    # test_policy finds no snapshot of the old run
    proc = subprocess.run([sys.executable, "-m", "spinup.run", "test_policy", str(run), "-i",
                           "2", "-d", "-n", "1", "-nr"], capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr


def _cut_mid_row(text):
    lines = text.split("\n")
    return "\n".join(lines[:2]) + "\n" + lines[2][:len(lines[2]) // 2]


@pytest.mark.parametrize("damage", [_cut_mid_row, lambda t: "".join(t.splitlines(True)[:2]),
                                    lambda t: "", lambda t: t + t.splitlines(True)[-1]],
                         ids=["cut-mid-row", "cut-after-row", "emptied", "row-repeated"])
def test_resume_restores_a_damaged_table_from_the_checkpoint(tmp_path, damage):
    run = tmp_path / "run"
    tiny_ppo(run, 3)
    table = run / "progress.txt"
    table.write_text(damage(table.read_text()))
    tiny_ppo(run, 5, resume=True)
    assert list(pd.read_table(table)["Epoch"]) == [0, 1, 2, 3, 4]


def test_resume_from_a_checkpoint_without_table_refuses_a_cut_table(tmp_path):
    import torch
    run = tmp_path / "run"
    tiny_ppo(run, 3)
    state = load_checkpoint(str(run))
    del state["table"]   # as written before checkpoints carried the table
    torch.save(state, checkpoint_path(str(run)))
    table = run / "progress.txt"
    table.write_text(_cut_mid_row(table.read_text()))
    before = {name: (run / name).read_bytes() for name in listing(run)
              if (run / name).is_file() and name != ".spinup.lock"}
    with pytest.raises(ValueError, match=r"progress.txt lacks complete rows for epochs 2-3"):
        tiny_ppo(run, 5, resume=True)
    assert {name: (run / name).read_bytes() for name in before} == before


# ---- plot: each run once, every skipped run named ----

GOOD = "Epoch\tTotalEnvInteracts\tAverageEpRet\tLossPi\n0\t100\t1.0\t0.5\n1\t200\t2.0\t0.4\n"


def _plot_run(root, name, text=GOOD):
    run_dir = root / name
    run_dir.mkdir(parents=True)
    (run_dir / "progress.txt").write_text(text)
    (run_dir / "config.json").write_text('{"exp_name": "%s"}' % name.split("/")[0])
    return run_dir


def test_api_plot_takes_a_run_once_when_prefixes_overlap(tmp_path, capsys):
    from spinup.utils.plot import get_all_datasets
    _plot_run(tmp_path, "g/g_s0")
    _plot_run(tmp_path, "gj/gj_s0")
    data = get_all_datasets([str(tmp_path / "g"), str(tmp_path / "gj"), str(tmp_path) + "/"])
    assert sorted(run.attrs["path"] for run in data) == [
        str(tmp_path / "g/g_s0/progress.txt"), str(tmp_path / "gj/gj_s0/progress.txt")]
    assert "already included" in capsys.readouterr().out


def test_cli_plot_names_a_run_without_the_column(tmp_path):
    _plot_run(tmp_path, "ppo/ppo_s0")
    dqn = _plot_run(tmp_path, "dqn/dqn_s0",
                    "Epoch\tTotalEnvInteracts\tAverageEpRet\tLossQ\n0\t100\t1.0\t0.5\n")
    proc = run_cli("plot", tmp_path / "ppo", tmp_path / "dqn", "-y", "LossPi", "--savefig",
                   tmp_path / "f.png")
    assert f"Skipping {dqn / 'progress.txt'} for LossPi: it has no LossPi column" in proc.stdout
    assert (tmp_path / "f.png").stat().st_size > 1000


# ---- Grid --resume compares each variant with its run; config.json must be an object ----

import hashlib  # noqa: E402

from spinup.launch.run_utils import ExperimentGrid, LaunchError  # noqa: E402

GRID = ["ppo", "--env", "CartPole-v1", "--steps_per_epoch", 200, "--hid", "[8]",
        "--train_pi_iters", 2, "--train_v_iters", 2, "--seed", 0, 10]


def hashes(directory):
    return {os.path.relpath(os.path.join(d, n), directory):
            hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest()
            for d, _, names in os.walk(directory) for n in names}


@pytest.fixture(scope="module")
def finished_grid(tmp_path_factory):
    data = tmp_path_factory.mktemp("grid")
    run_cli(*GRID, "--epochs", 1, "--data_dir", data, "--jobs", 1)
    return data


def test_cli_grid_resume_with_a_changed_flag_is_one_line_and_changes_nothing(finished_grid):
    before = hashes(finished_grid)
    proc = run_cli(*GRID, "--epochs", 2, "--pi_lr", 0.01, "--data_dir", finished_grid,
                   "--resume", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    line, = proc.stderr.strip().splitlines()
    assert "cmd_ppo_s0 was started with other arguments: pi_lr 0.01" in line
    assert "(the run has 0.0003)" in line
    assert hashes(finished_grid) == before


def test_api_grid_resume_with_a_changed_value_is_refused(finished_grid):
    grid = ExperimentGrid("cmd_ppo")
    for key, value in [("env_name", "CartPole-v1"), ("steps_per_epoch", 200),
                       ("ac_kwargs:hidden_sizes", [(8,)]), ("train_pi_iters", 2),
                       ("train_v_iters", 2), ("seed", [0, 10]), ("epochs", 2),
                       ("gamma", 0.9)]:
        grid.add(key, value)
    before = hashes(finished_grid)
    with pytest.raises(LaunchError, match=r"gamma 0.9 \(the run has 0.99\)"):
        grid.run(spinup.ppo, data_dir=str(finished_grid), resume=True)
    assert hashes(finished_grid) == before


@pytest.mark.parametrize("content, words", [("{not json", "cannot read"),
                                            ("[1, 2]", "holds a JSON list")])
def test_corrupt_or_non_object_config_is_one_line(tmp_path, content, words):
    data = tmp_path / "d"
    run_cli(*GRID[:-1], "--epochs", 1, "--data_dir", data)   # seed 0 only
    run = data / "cmd_ppo" / "cmd_ppo_s0"
    (run / "config.json").write_text(content)
    before = hashes(data)
    for args in (["ppo", "--resume", run], [*GRID[:-1], "--epochs", 2, "--data_dir", data,
                                            "--resume"]):
        proc = run_cli(*args, check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        line, = proc.stderr.strip().splitlines()
        assert str(run / "config.json") in line and words in line
    with pytest.raises(LaunchError, match=words):
        grid = ExperimentGrid("cmd_ppo")
        grid.add("env_name", "CartPole-v1")
        grid.run(spinup.ppo, data_dir=str(data), resume=True)
    assert hashes(data) == before


# ---- SIGINT to the launcher alone (kill -INT PID) stops its experiments ----

import re  # noqa: E402
import signal  # noqa: E402

from conftest import ROOT  # noqa: E402

LONG = ["--env", "CartPole-v1", "--epochs", 300, "--steps_per_epoch", 400, "--hid", "[8]",
        "--train_pi_iters", 2, "--train_v_iters", 2]


def _descendants(pid):
    found, todo = [], [pid]
    while todo:
        here = todo.pop()
        try:
            with open(f"/proc/{here}/task/{here}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _sigint_to_the_launcher(args, ready, sig=signal.SIGINT):
    """Start ``spinup.run *args`` as a terminal would (its own group, SIGINT's default
    action: a background job of a script would ignore it), wait for a line matching
    ``ready``, then send ``sig`` (SIGINT: exit 130; SIGTERM: 143) to the launcher's pid
    alone."""
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if re.search(ready, line):
            break
    family = _descendants(proc.pid)
    os.kill(proc.pid, sig)
    seen.append(proc.stdout.read())
    proc.wait(timeout=300)
    out = "".join(seen)
    assert proc.returncode == 128 + sig, out[-3000:]
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out[-3000:]
    assert family and not any(_alive(pid) for pid in family)
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.parametrize("algo, extra, ready", [
    ("ppo", [], r"epoch +1/300"),
    ("ppo", ["--cpu", 2], r"epoch +1/300"),
    ("a3c", ["--num_workers", 2, "--oversubscribe"], r"epoch +1/300")],
    ids=["single", "mpi-cpu-2", "a3c-workers"])
def test_sigint_to_the_launcher_stops_a_single_run(tmp_path, algo, extra, ready):
    args = LONG if algo == "ppo" else LONG[:6]
    out = _sigint_to_the_launcher([algo, *args, *extra, "--data_dir", tmp_path], ready)
    assert len([line for line in out.splitlines() if "Interrupted" in line]) == 1
    run = tmp_path / f"cmd_{algo}" / f"cmd_{algo}_s0"
    assert (run / "pyt_save" / "checkpoint.pt").exists()
    epochs = list(pd.read_table(run / "progress.txt")["Epoch"])
    assert 1 <= len(epochs) < 300 and epochs == sorted(set(epochs))


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_sigint_to_the_launcher_stops_a_resumed_run(tmp_path):
    """``--resume DIR`` lets Ctrl-C through as a fresh run does (issue 45: SIGINT stayed
    blocked in the launcher for the whole resumed run): exit 130, and on SIGTERM 143."""
    short = ["--env", "CartPole-v1", "--epochs", 1, *LONG[4:]]
    run_cli("ppo", *short, "--data_dir", tmp_path)
    run = tmp_path / "cmd_ppo" / "cmd_ppo_s0"
    done = 1
    for sig in (signal.SIGINT, signal.SIGTERM):
        out = _sigint_to_the_launcher(["ppo", "--resume", run, "--epochs", 300],
                                      rf"epoch +{done + 1}/300", sig)
        assert len([line for line in out.splitlines() if "Interrupted" in line]) == 1
        epochs = list(pd.read_table(run / "progress.txt")["Epoch"])
        assert done < len(epochs) < 300 and epochs == list(range(len(epochs)))
        done = len(epochs)


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_sigint_to_the_launcher_stops_a_jobs_2_grid(tmp_path):
    out = _sigint_to_the_launcher(["ppo", *LONG, "--seed", 0, 10, "--jobs", 2, "--data_dir",
                                   tmp_path], r"_s\d+ +epoch +1/300")
    assert "Interrupted: stopping 2 running variant(s)" in out
    assert re.search(r"interrupted +cmd_ppo_s(0|10) ", out), out[-3000:]
    assert "Continue the grid with the same command and --resume" in out


def test_api_interrupted_carries_the_signal():
    from spinup.launch.grid_launch import Interrupted
    assert isinstance(Interrupted(signal.SIGTERM), KeyboardInterrupt)
    assert Interrupted(signal.SIGTERM).signum == signal.SIGTERM


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_ctrl_c_held_during_the_imports_then_a_cli_error_is_exit_130(tmp_path):
    import time
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", "ppo", "--env", "NoSuchEnv-v0",
                             "--data_dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def maps():
        try:
            with open(f"/proc/{proc.pid}/maps") as f:
                return f.read()
        except OSError:
            return ""
    while proc.poll() is None and "numpy" not in maps():   # Ctrl-C while numpy loads
        time.sleep(0.005)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in out + err, out + err
    assert err.strip().splitlines()[-1] == "Interrupted (Ctrl-C)."


# ---- Ray: a worker that dies loses no work ----

@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_ray_worker_killed_mid_run_fails_the_variant_and_resume_continues_it(tmp_path):
    pytest.importorskip("ray")
    args = ["ppo", *LONG[:2], "--steps_per_epoch", 400, "--hid", "[8]", "--train_pi_iters", 2,
            "--train_v_iters", 2, "--data_dir", tmp_path]
    proc = subprocess.Popen([sys.executable, "-m", "spinup.run", *map(str, args), "--epochs",
                             "300", "--launcher", "ray"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if re.search(r"epoch +1/300", line):
            break
    run = tmp_path / "cmd_ppo" / "cmd_ppo_s0"
    experiment = int((run / ".spinup.lock").read_text())
    with open(f"/proc/{experiment}/stat") as f:
        worker = int(f.read().split(")")[-1].split()[1])   # the Ray worker running the task
    os.kill(worker, signal.SIGKILL)
    seen.append(proc.stdout.read())
    proc.wait(timeout=300)
    out = "".join(seen)
    assert proc.returncode == 1, out[-3000:]
    assert re.search(r"FAILED +cmd_ppo_s0 +\w*(Crashed|Died|Lost)\w*Error", out), out[-3000:]
    assert "--resume" in out and "Traceback" not in out
    # The experiment got SIGTERM when its Ray worker died and stops in its own time (it
    # may still finish the row of the epoch it was in): read the table once it is gone.
    import time
    deadline = time.time() + 120
    while _alive(experiment) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(experiment)
    done = len(pd.read_table(run / "progress.txt"))
    assert done < 300   # not restarted over itself by a retry
    # A SIGTERM after an epoch's row waits for its checkpoint (run.epoch_end): whole epochs.
    assert int(load_checkpoint(run, rank=0, mmap=True)["epoch"]) == done
    out = run_cli(*args, "--epochs", done + 1, "--launcher", "ray", "--resume").stdout
    assert f"resumed after epoch {done}" in out, out[-3000:]
    assert list(pd.read_table(run / "progress.txt")["Epoch"]) == list(range(done + 1))
