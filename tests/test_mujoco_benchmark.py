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
CASES = [("vpg", "Hopper", 0), ("trpo", "Hopper", 0), ("ppo", "Hopper", 0),
         ("sac", "HalfCheetah", 0)]


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
    part = "onpolicy" if algo in harness.ON_POLICY else "offpolicy"
    planned = [r for r in harness.plan("here", [part], [algo], [task]) if r["seed"] == seed]
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


def test_long_run_continues_the_finished_short_run(tmp_path, monkeypatch, one_thread):
    """``run --part long`` starts from the finished 300k run of the same seed (here a
    2-epoch and a 3-epoch run of 600 steps on Hopper-v5) and gives the rows a
    fresh 3-epoch run gives; its config.json is the long run's and names its origin."""
    pytest.importorskip("mujoco")
    import argparse

    import gymnasium as gym

    from spinup import sac
    harness = _harness()
    monkeypatch.setattr(harness, "STEPS_PER_EPOCH", 600)
    monkeypatch.setattr(harness, "RUNS_DIR", str(tmp_path / "committed"))
    monkeypatch.setitem(harness.SCALES, "here", {
        "offpolicy": (["sac"], ["Hopper"], [0], 1200),
        "long": (["sac"], ["Hopper"], [0], 1800)})
    data = str(tmp_path / "data")

    def run(parts):
        args = argparse.Namespace(scale="here", part=parts, algos=None, envs=None, seeds=None,
                                  jobs=1, launcher="local", ray_address=None, data_dir=data)
        assert harness.cmd_run(args) == 0

    run(["offpolicy", "long"])      # one command: the long run waits for the short one
    short = osp.join(data, "sac_hopper-v5", "sac_hopper-v5_s0")
    assert len(pd.read_table(osp.join(short, "progress.txt"))) == 2
    long = osp.join(data, "sac-1m_hopper-v5", "sac-1m_hopper-v5_s0")
    with open(osp.join(long, "config.json")) as f:
        config = json.load(f)
    assert config["epochs"] == 3 and config["exp_name"] == "sac-1m_hopper-v5"
    assert config["_continued_from"] == "sac_hopper-v5_s0"
    assert config["logger_kwargs"]["output_dir"] == long

    fresh = str(tmp_path / "fresh")
    sac(lambda: gym.make("Hopper-v5"), seed=0, steps_per_epoch=600, epochs=3,
        logger_kwargs=dict(output_dir=fresh))
    a = pd.read_table(osp.join(long, "progress.txt")).drop(columns="Time")
    b = pd.read_table(osp.join(fresh, "progress.txt")).drop(columns="Time")
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_performance_at_a_mark_uses_the_reference_grid_for_both():
    """``_at`` averages the same three evaluation points for our runs (one row per 4k
    steps) and for the reference (one row per 20k steps, counted from 0 or from 4k)."""
    harness = _harness()
    ours = pd.DataFrame(dict(seed=0, steps=np.arange(4000, 300_001, 4000)))
    ours["perf"] = ours["steps"] / 1000.0
    theirs = pd.DataFrame(dict(seed=0, steps=np.arange(19_999, 300_000, 20_000)))
    theirs["perf"] = (theirs["steps"] + 1) / 1000.0
    for table in (ours, theirs):
        assert harness._at(table, 300_000, "sac").tolist() == [(260 + 280 + 300) / 3]
        assert harness._at(table, 320_000, "sac") is None        # not reached yet
    # On-policy: the reference's PPO rows are epochs 0, 5, 10, ...: 4k, 24k, 44k, ...
    ppo_ref = pd.DataFrame(dict(seed=0, steps=np.arange(4000, 1_200_001, 20_000)))
    ppo_ref["perf"] = ppo_ref["steps"] / 1000.0
    ours_1m = pd.DataFrame(dict(seed=0, steps=np.arange(4000, 1_000_001, 4000)))
    ours_1m["perf"] = ours_1m["steps"] / 1000.0
    for table in (ppo_ref, ours_1m):
        assert harness._at(table, 1_000_000, "ppo").tolist() == [(944 + 964 + 984) / 3]
    # A seed with no value at the mark (blank cells in the reference TSV) is not counted.
    assert harness._cell(pd.Series([1.0, 3.0, np.nan])) == "2 ± 1 (2)"
    assert harness._cell(None) == "--"


def test_extra_seeds_are_planned_collected_and_checked(tmp_path, monkeypatch):
    """``run --extra_seeds`` adds seeds beyond the scale's (after them, no duplicates);
    ``collect`` copies such a run once it is finished; ``--seeds`` outside both is an
    error before anything runs."""
    import argparse
    harness = _harness()
    def seeds(**kw):
        return [r["seed"] for r in harness.plan("here", ["offpolicy"], ["sac"], ["HalfCheetah"],
                                                **kw)]
    assert seeds() == [0, 1]
    assert seeds(extra_seeds=[2, 1]) == [0, 1, 2]
    assert seeds(only_seeds=[2], extra_seeds=[2]) == [2]

    data, committed = tmp_path / "data", tmp_path / "committed"
    monkeypatch.setattr(harness, "RUNS_DIR", str(committed))
    run_dir = data / "sac_halfcheetah-v5" / "sac_halfcheetah-v5_s2"
    run_dir.mkdir(parents=True)
    epochs = 300_000 // harness.STEPS_PER_EPOCH
    rows = ["Epoch\tTotalEnvInteracts"] + [f"{i}\t{4000 * i}" for i in range(1, epochs)]
    (run_dir / "progress.txt").write_text("\n".join(rows) + "\n")     # one epoch short
    (run_dir / "config.json").write_text("{}")
    harness.cmd_collect(argparse.Namespace(data_dir=str(data)))
    dst = committed / "here" / "sac" / "HalfCheetah" / "s2"
    assert not dst.exists()
    with open(run_dir / "progress.txt", "a") as f:
        f.write(f"{epochs}\t{4000 * epochs}\n")
    harness.cmd_collect(argparse.Namespace(data_dir=str(data)))
    assert (dst / "progress.txt").read_text() == (run_dir / "progress.txt").read_text()

    with pytest.raises(SystemExit) as err:
        harness.main(["run", "--part", "offpolicy", "--seeds", "2", "--data_dir", str(data)])
    assert err.value.code == 2


def test_saturation_counts_stuck_seeds_and_skips_measured_ones(tmp_path, monkeypatch,
                                                                  one_thread):
    """``saturation`` trains each (init, seed), measures the final deterministic policy and
    appends one row per run; a rerun measures nothing again; the page's table counts a
    seed as stuck when at least 99% of its actions are at a bound."""
    pytest.importorskip("mujoco")
    harness = _harness()
    monkeypatch.setattr(harness, "STEPS_PER_EPOCH", 600)
    monkeypatch.setattr(harness, "RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(harness, "PAGE_DIR", str(tmp_path))
    argv = ["saturation", "--seeds", "0", "--steps", "1200", "--data_dir", str(tmp_path / "d")]
    assert harness.main(argv) == 0
    table = tmp_path / "runs" / "experiments" / "saturation" / "ddpg-Hopper.tsv"
    rows = pd.read_table(table)
    assert list(rows["init"]) == ["default", "tf"] and set(rows["steps"]) == {1200}
    assert ((rows["at_bound"] >= 0) & (rows["at_bound"] <= 1)).all()
    assert (rows["len"] >= 1).all() and (rows["median_abs_u"] > 0).all()
    before = table.read_text()
    assert harness.main(argv) == 0
    assert table.read_text() == before

    rows = pd.DataFrame(dict(init="default", seed=[0, 1, 2], steps=12_000, ret=[38, 300, 200],
                             len=[22, 150, 90], at_bound=[1.0, 0.98, 0.2], median_abs_u=1.0))
    rows.to_csv(table, sep="\t", index=False)
    harness._write_saturation()
    inc = (tmp_path / "saturation.inc").read_text()
    assert "     - 1 of 3" in inc and "s0: 38 (1.00), s1: 300 (0.98), s2: 200 (0.20)" in inc
    with pytest.raises(SystemExit) as err:
        harness.main(["saturation", "--steps", "100"])
    assert err.value.code == 2
    # A value the algorithm refuses is its one message and exit 1, nothing written.
    bad = tmp_path / "bad"
    assert harness.main(["saturation", "--seeds", "-1", "--inits", "default",
                         "--data_dir", str(bad)]) == 1
    assert not bad.exists()


def test_nocontact_runs_ant_without_contact_forces(tmp_path, monkeypatch, one_thread):
    """``nocontact`` trains on Ant-v5 made without the contact cost and without the contact
    forces in the observation (27 numbers), records that in the run's config, commits the
    finished run under ``experiments/<algo>-nocontact/Ant``, and refuses any other task."""
    pytest.importorskip("mujoco")
    harness = _harness()
    monkeypatch.setattr(harness, "STEPS_PER_EPOCH", 200)
    monkeypatch.setattr(harness, "RUNS_DIR", str(tmp_path / "runs"))
    argv = ["nocontact", "--algo", "ppo", "--seeds", "0", "--steps", "400",
            "--data_dir", str(tmp_path / "d")]
    assert harness.main(argv) == 0
    run = tmp_path / "runs" / "experiments" / "ppo-nocontact" / "Ant" / "s0"
    assert len(pd.read_table(run / "progress.txt")) == 2
    config = json.loads((run / "config.json").read_text())
    assert "'Ant-v5', contact_cost_weight=0.0, include_cfrc_ext_in_observation=False" \
        in config["env_fn"]
    from spinup.utils.test_policy import load_pytorch_policy
    name = "ppo-nocontact_ant-v5"
    get_action = load_pytorch_policy(str(tmp_path / "d" / "experiments" / name / f"{name}_s0"))
    assert get_action(np.zeros(27, dtype=np.float32)).shape == (8,)    # the policy sees 27
    # --tfinit: the same task, every layer started as TF1 does (zero biases), its own folder.
    import gymnasium as gym
    import torch

    import spinup
    seen = []

    def spy(env_fn, actor_critic=None, **kwargs):
        seen.append(actor_critic)
        return real(env_fn, actor_critic=actor_critic, **kwargs)
    real = spinup.ppo
    monkeypatch.setattr(spinup, "ppo", spy)
    assert harness.main(argv + ["--tfinit"]) == 0
    tf_run = tmp_path / "runs" / "experiments" / "ppo-nocontact-tfinit" / "Ant" / "s0"
    assert len(pd.read_table(tf_run / "progress.txt")) == 2
    ac = seen[0](gym.make("Ant-v5", include_cfrc_ext_in_observation=False).observation_space,
                 gym.spaces.Box(-1, 1, (8,)))
    assert all(torch.all(m.bias == 0) for m in ac.modules() if isinstance(m, torch.nn.Linear))
    with pytest.raises(SystemExit) as err:
        harness.main(["nocontact", "--env", "Hopper"])
    assert err.value.code == 2
