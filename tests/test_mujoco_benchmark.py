"""The committed MuJoCo benchmark curves are what the code produces, seed for seed.

Each case reruns the first epoch of one committed run of ``benchmarks/mujoco.py``
(``docs/benchmarks/mujoco/runs``) with the run's own ``config.json`` and compares the
row with the committed ``progress.txt`` (``Time`` aside). Hopper is used because its
first-epoch episodes are short, so the row hardly depends on floating-point details
of the CPU the test runs on; on the machine that made the runs the rows are equal to
the last digit, and the tolerance below only absorbs another CPU's rounding.
"""
import importlib.util
import inspect
import json
import os.path as osp
import re

import numpy as np
import pandas as pd
import pytest

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
RUNS = osp.join(ROOT, "docs", "benchmarks", "mujoco", "runs", "here")
CASES = [("vpg", "Hopper", 0), ("trpo", "Hopper", 0)]


def _harness():
    spec = importlib.util.spec_from_file_location(
        "mujoco_harness", osp.join(ROOT, "benchmarks", "mujoco.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("algo,task,seed", CASES)
def test_first_epoch_matches_committed_run(algo, task, seed, tmp_path, one_thread):
    pytest.importorskip("mujoco")
    import gymnasium as gym

    import spinup
    harness = _harness()
    run_dir = osp.join(RUNS, algo, task, f"s{seed}")
    with open(osp.join(run_dir, "config.json")) as f:
        config = json.load(f)
    committed = pd.read_table(osp.join(run_dir, "progress.txt"))

    # The committed run is the harness's configuration: its task, seed and epoch size,
    # every other argument at the algorithm's default.
    env_id = re.fullmatch(r".*gym\.make\('([^']+)'\)", config["env_fn"]).group(1)
    assert env_id == f"{task}-v5"
    planned = [r for r in harness.plan("here", ["onpolicy"], [algo], [task]) if r["seed"] == seed]
    assert len(planned) == 1 and config["epochs"] == planned[0]["epochs"]
    assert config["steps_per_epoch"] == harness.STEPS_PER_EPOCH and config["seed"] == seed
    fn = getattr(spinup, algo)
    defaults = {k: p.default for k, p in inspect.signature(fn).parameters.items()
                if p.default is not inspect.Parameter.empty}
    for key, value in config.items():
        if key in defaults and key not in ("seed", "epochs", "steps_per_epoch",
                                           "logger_kwargs", "actor_critic"):
            assert value == json.loads(json.dumps(defaults[key])), key

    out = str(tmp_path / "rerun")
    fn(lambda: gym.make(env_id), seed=seed, steps_per_epoch=config["steps_per_epoch"], epochs=1,
       logger_kwargs=dict(output_dir=out, exp_name="rerun"))
    rerun = pd.read_table(osp.join(out, "progress.txt"))
    assert list(rerun.columns) == list(committed.columns)
    cols = [c for c in committed.columns if c != "Time"]
    np.testing.assert_allclose(rerun.loc[0, cols].to_numpy(float),
                               committed.loc[0, cols].to_numpy(float), rtol=1e-3, atol=1e-6,
                               err_msg=f"{algo} {task} s{seed}: first epoch differs")
