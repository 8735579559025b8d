"""Shared pytest helpers: run the CLI in a subprocess, read progress.txt."""
import os
import subprocess
import sys

import pandas as pd
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(*args, timeout=600, check=True, env=None):
    """Run ``python -m spinup.run *args``; return the CompletedProcess (text output).

    With ``check=True`` a non-zero exit fails the test and shows the output.
    """
    full_env = dict(os.environ)
    full_env.setdefault("PYTHONUNBUFFERED", "1")
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "spinup.run", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=ROOT)
    if check and proc.returncode != 0:
        pytest.fail(f"spinup.run {' '.join(map(str, args))} exited {proc.returncode}\n"
                    f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")
    return proc


def read_progress(output_dir):
    """progress.txt of a run as a pandas DataFrame."""
    return pd.read_table(os.path.join(output_dir, "progress.txt"))


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def progress():
    return read_progress


@pytest.fixture
def one_thread():
    """One torch thread for the test (runs compared number for number must not depend
    on how work is split between threads), the caller's count put back afterwards."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
