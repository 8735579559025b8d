"""MPI: a 2-process PPO run through the CLI, identical parameters across ranks,
statistics over ranks, and a crashing rank that takes the job down (no hang)."""
import subprocess
import sys
import textwrap

import pytest

from conftest import read_progress, run_cli
from spinup.launch.mpi_launch import find_mpiexec
from spinup.utils.mpi_tools import mpi_statistics_scalar, num_procs, proc_id

pytestmark = pytest.mark.mpi
needs_mpiexec = pytest.mark.skipif(find_mpiexec() is None,
                                   reason="no mpiexec (pip install mpich)")


def test_single_process_needs_no_mpi():
    assert (proc_id(), num_procs()) == (0, 1)
    assert "mpi4py.MPI" not in sys.modules
    mean, std, lo, hi = mpi_statistics_scalar([1.0, 2.0, 3.0], with_min_and_max=True)
    assert (mean, lo, hi) == (2.0, 1.0, 3.0)


SCRIPT = textwrap.dedent("""
    import sys
    import gymnasium as gym, numpy as np, torch
    from spinup import ppo
    from spinup.utils.mpi_tools import proc_id, num_procs, mpi_statistics_scalar
    from spinup.utils.mpi_pytorch import flat_params_equal_across_ranks
    assert num_procs() == 2
    # statistics over ranks: rank 0 holds [0, 1], rank 1 holds [] -> mean 0.5
    stats = mpi_statistics_scalar([0.0, 1.0] if proc_id() == 0 else [], with_min_and_max=True)
    assert stats[0] == 0.5 and stats[2:] == (0.0, 1.0), stats
    ac = ppo(lambda: gym.make("CartPole-v1"), steps_per_epoch=400, epochs=2,
             logger_kwargs=dict(output_dir=sys.argv[1]))
    assert flat_params_equal_across_ranks(ac)
    if proc_id() == 0:
        print("PARAMS-IDENTICAL")
""")


@needs_mpiexec
def test_two_ranks_keep_identical_parameters(tmp_path):
    script = tmp_path / "mpi_ppo.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(script),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "IN_MPI": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "PARAMS-IDENTICAL" in proc.stdout
    assert list(read_progress(tmp_path / "out")["TotalEnvInteracts"]) == [400, 800]


@needs_mpiexec
def test_cli_cpu_2(tmp_path):
    # Two processes, each stepping two envs (num_envs): 4 envs of 100 steps each; each
    # process's 200 samples in minibatches of 64, 64, 64 and 8, in step across the two.
    run_cli("ppo", "--env", "CartPole-v1", "--cpu", 2, "--epochs", 1, "--steps_per_epoch", 400,
            "--num_envs", 2, "--minibatch_size", 64, "--train_pi_iters", 2,
            "--target_kl", 100, "--exp_name", "m", "--data_dir", tmp_path)
    progress = read_progress(tmp_path / "m" / "m_s0")
    assert list(progress["TotalEnvInteracts"]) == [400] and list(progress["StopIter"]) == [8]


@needs_mpiexec
def test_crashing_rank_takes_job_down(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent("""
        from spinup.utils.mpi_tools import proc_id, mpi_avg
        if proc_id() == 1:
            raise RuntimeError("rank 1 fails")
        mpi_avg(1.0)   # rank 0 would wait here forever without the abort
    """))
    proc = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(script)],
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "IN_MPI": "1"})
    assert proc.returncode != 0
    assert "rank 1 fails" in proc.stderr


@needs_mpiexec
def test_user_error_on_one_rank_aborts_all(tmp_path):
    # A ValueError (reported as one line, exit 2) on rank 1 while rank 0 waits in a
    # collective: the job must end, not hang.
    from spinup.launch.run_utils import ExperimentError, call_experiment
    import spinup.utils.mpi_tools as mt

    def thunk(seed, logger_kwargs):
        if mt.proc_id() == 1:
            raise ValueError("bad argument on rank 1")
        mt.mpi_avg(1.0)

    with pytest.raises(ExperimentError):
        call_experiment("abort", thunk, num_cpu=2, data_dir=str(tmp_path))


def test_cpu_above_the_core_count_is_refused_unless_oversubscribed(monkeypatch):
    from spinup.machinery import cores
    from spinup.utils import mpi_tools
    monkeypatch.setattr(cores, "available_cores", lambda: 2)
    for var in ("IN_MPI",) + mpi_tools._LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="more MPI processes than the 2 CPU cores"):
        cores.check_num_cpu(3)
    cores.check_num_cpu(2)
    cores.check_num_cpu("auto")
    cores.check_num_cpu(99, oversubscribe=True)
    monkeypatch.setenv("PMI_RANK", "0")  # already under someone's mpiexec: not our business
    cores.check_num_cpu(99)


@pytest.mark.parametrize("banner, passes_flag", [("HYDRA build details:", False),
                                                 ("mpiexec (Open MPI) 4.1.5", True)])
def test_oversubscribe_flag_only_for_open_mpi(monkeypatch, banner, passes_flag):
    # MPICH's Hydra mpiexec rejects --oversubscribe (and does not need it); Open MPI needs it.
    from spinup.launch import mpi_launch
    from spinup.machinery import cores
    from spinup.utils import mpi_tools
    for var in ("IN_MPI",) + mpi_tools._LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(cores, "available_cores", lambda: 1)
    monkeypatch.setattr(mpi_launch, "find_mpiexec", lambda: "/x/mpiexec")
    monkeypatch.setattr(mpi_launch.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, banner, ""))
    calls = []
    monkeypatch.setattr(mpi_launch.subprocess, "call", lambda cmd, **kw: calls.append(cmd) or 0)
    with pytest.raises(SystemExit):
        mpi_launch.mpi_fork(3, oversubscribe=True)
    assert ("--oversubscribe" in calls[0]) == passes_flag and calls[0][-len(sys.argv):] == sys.argv
    with pytest.raises(ValueError, match="--oversubscribe"):
        mpi_launch.mpi_fork(3)


@needs_mpiexec
def test_cli_oversubscribe_runs_more_ranks_than_cores(tmp_path):
    from spinup.machinery.cores import available_cores
    n = available_cores() + 1
    base = ["ppo", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 60 * n,
            "--cpu", n, "--exp_name", "ov", "--data_dir", tmp_path]
    proc = run_cli(*base, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{n - 1} CPU cores" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())
    run_cli(*base, "--oversubscribe")
    assert len(read_progress(tmp_path / "ov" / "ov_s0")) == 1
