"""Shared pytest helpers: run the CLI in a subprocess or in this process, read
progress.txt, load a script of ``benchmarks/``; and which tests run one at a time when
the suite runs in parallel.

The suite runs on every core (pytest-xdist, ``-n auto --dist loadgroup`` in
pyproject.toml). Tests that send signals, kill processes, start Ray or MPI, or launch
grids of several processes go to one group, ``serial``, which one worker runs one test
after another: they never overlap each other, and no two of them compete for the cores.
:func:`pytest_collection_modifyitems` puts a test there when its name says so
(:data:`SERIAL_NAMES`), when its module is in :data:`SERIAL_MODULES`, or when it is
marked ``@pytest.mark.serial``.
"""
import os
import re
import subprocess
import sys

import pandas as pd
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Words in a test's name that put it in the serial group.
SERIAL_NAMES = re.compile(r"sigint|sigterm|ctrl_c|kill|signal|interrupt|ray|mpi|two_ranks|"
                          r"cpu_2|oversubscribe|jobs_2|workers")
#: Modules whose every test is in the serial group (processes started and stopped by
#: time: MPI ranks, A3C's worker processes, grids of parallel variants).
SERIAL_MODULES = {"test_mpi.py", "test_a3c.py", "test_grid_launch.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (item.get_closest_marker("serial") or SERIAL_NAMES.search(item.name)
                or os.path.basename(str(item.fspath)) in SERIAL_MODULES):
            item.add_marker(pytest.mark.xdist_group("serial"))


def load_benchmark(name):
    """The script ``benchmarks/<name>.py`` imported as a module (they are not a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        f"benchmark_{name}", os.path.join(ROOT, "benchmarks", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def run_here(*args, cwd=None):
    """``python -m spinup.run *args`` carried out in this process by ``spinup.run.main``;
    returns a CompletedProcess with its exit code and what it printed.

    For commands refused before anything is launched (a bad flag, a bad value, a run
    directory in the way): the same code path and messages as the CLI, without the second
    or so a new interpreter spends importing torch. Tests of what only a process shows
    (signals, a traceback printed by the interpreter, the exit of a launched run) use
    :func:`run_cli`.
    """
    import contextlib
    import io

    from spinup.run import main
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(cwd or ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:   # argparse's exit, as the interpreter would report it
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["spinup.run", *map(str, args)], code, out.getvalue(),
                                       err.getvalue())


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
