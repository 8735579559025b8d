"""benchmarks/device_speed.py (issues 41, 56): the page comes from the committed GPU runs; the
script measures and writes a page on a machine without a GPU too, with the steady state apart
from the warm-up and capture; it refuses a GPU mode there; only --publish writes under docs/."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import pandas as pd
import pytest
import torch

from conftest import ROOT, load_benchmark
from spinup.machinery.device import load_optimizer

SCRIPT = os.path.join(ROOT, "benchmarks", "device_speed.py")
RUNS = sorted(glob.glob(os.path.join(ROOT, "docs", "benchmarks", "device", "run*_device.json")))


def test_the_committed_page_is_what_render_writes_from_the_committed_runs(tmp_path):
    assert len(RUNS) >= 3
    out = tmp_path / "device.rst"
    proc = subprocess.run([sys.executable, SCRIPT, "--render", *RUNS, "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(ROOT, "docs", "benchmarks", "device.rst")) as f:
        assert out.read_text() == f.read()
    for path in RUNS:   # every run says what ran it
        with open(path) as f:
            run = json.load(f)
        assert run["machine"]["gpu"] and run["command"].startswith("python benchmarks/")
        assert run.get("commit") and run.get("label")


def test_a_measured_run_on_the_cpu_writes_its_page_and_json(tmp_path):
    out, js = tmp_path / "page.rst", tmp_path / "runs.json"
    proc = subprocess.run([sys.executable, SCRIPT, "--cases", "dqn-cartpole", "--steps", "200",
                           "--out", str(out), "--json", str(js)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = json.loads(js.read_text())
    assert run["command"] == "python benchmarks/device_speed.py --cases dqn-cartpole --steps 200"
    rate = run["results"]["dqn-cartpole"]["cpu"]
    assert rate > 0
    # 200 steps an epoch, update_after 200: epoch 1 holds no update, epoch 2 the first ones,
    # so the steady state is epoch 3; the CPU has no warm-up round and no capture
    steady = run["steady"]["dqn-cartpole"]["cpu"]
    assert steady > 0 and run["setup_s"]["dqn-cartpole"]["cpu"] == 0.0
    page = out.read_text()
    assert f"{rate:,.0f}" in page and "dqn-cartpole" in page
    assert "Steady state" in page and f"{steady:,.0f}" in page
    if not torch.cuda.is_available():
        assert "n/a" in page and run["machine"]["gpu"] is None


def progress(times, losses):
    """A progress table of len(times) epochs of 100 env steps; ``losses``: LossQ per epoch
    (NaN: the epoch held no update)."""
    n = len(times)
    return pd.DataFrame(dict(Epoch=range(1, n + 1), TotalEnvInteracts=[100 * (i + 1)
                                                                       for i in range(n)],
                             LossQ=losses, Time=times))


def test_rates_keep_the_first_update_epoch_out_of_the_steady_state():
    rates = load_benchmark("device_speed").rates
    nan = float("nan")
    # epoch 1: acting only; epoch 2: the first updates (and a slow warm-up and capture)
    after_first, steady = rates(progress([1.0, 11.0, 12.0, 13.0], [nan, 0.5, 0.4, 0.3]))
    assert after_first == pytest.approx(300 / 12.0) and steady == pytest.approx(200 / 2.0)
    # updates from the first epoch on (the on-policy algorithms, DQN's budget): the same
    after_first, steady = rates(progress([1.0, 2.0, 4.0], [0.5, 0.4, 0.3]))
    assert after_first == steady == pytest.approx(200 / 3.0)
    # the first update in the last epoch: no steady state measured
    assert rates(progress([1.0, 2.0, 3.0], [nan, nan, 0.3]))[1] is None


def test_the_set_up_timer_counts_the_warm_up_and_the_captures_only(monkeypatch):
    module = load_benchmark("device_speed")
    from spinup.machinery.update_graph import CapturedCall

    def warm_up(self, key):
        time.sleep(0.05)

    def capture(self, key):
        time.sleep(0.03)
    monkeypatch.setattr(CapturedCall, "_warm_up", warm_up)
    monkeypatch.setattr(CapturedCall, "_capture", capture)
    call = types.SimpleNamespace(device=torch.device("cpu"))
    time.sleep(0.05)                      # outside the timer: not counted
    with module.setup_timer() as timer:
        CapturedCall._warm_up(call, 0)
        CapturedCall._capture(call, 0)
        time.sleep(0.05)                  # neither a warm-up nor a capture: not counted
    assert 0.08 <= timer["seconds"] < 0.125, timer
    assert CapturedCall._warm_up is warm_up and CapturedCall._capture is capture


def test_the_split_table_shows_only_for_runs_that_measured_it():
    module = load_benchmark("device_speed")
    old = dict(machine={}, results={"sac": {"cpu": 150.0}}, command="c")
    assert module.split_table(old) == []
    new = dict(old, steady={"sac": {"cpu": 160.0, "cuda graph": 900.0},
                            "ppo-1env": {"cpu": 3000.0}},
               setup_s={"sac": {"cpu": 0.0, "cuda graph": 1.234}})
    rows = {line.split()[0]: line.split() for line in module.split_table(new)
            if line.startswith(("sac ", "ppo-1env "))}
    assert rows["sac"] == ["sac", "160", "n/a", "900", "1.23"]
    assert rows["ppo-1env"] == ["ppo-1env", "3,000", "n/a", "--", "--"]


def test_bad_arguments_get_one_line_and_exit_2(tmp_path):
    cases = [(["--steps", "-1"], "--steps must be >= 0"),
             (["--render", str(tmp_path / "missing.json")], "cannot read"),
             (["--cases", "sac9"], "invalid choice"),
             (["--cases", "ppo-1env", "--modes", "cuda graph"], "nothing to measure"),
             (["--cases", "sac", "--publish"], "--publish with a measurement needs --label")]
    if not torch.cuda.is_available():
        none = "this machine has none (torch.cuda.is_available() is False)"
        cases += [(["--modes", "cuda graph"], f"--modes 'cuda graph' needs a CUDA GPU, and {none}"),
                  (["--modes", "cpu", "cuda eager"], "--modes 'cuda eager' needs a CUDA GPU"),
                  (["--modes", "cpu", "--publish", "--label", "x"],
                   f"--publish commits a run measured on a CUDA GPU, and {none}")]
    for args, words in cases:
        proc = subprocess.run([sys.executable, SCRIPT, *args, "--out", str(tmp_path / "p.rst"),
                               "--json", str(tmp_path / "p.json")],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, (args, proc.stderr)
        assert lines[0].startswith("device_speed: ") and words in lines[0], (args, lines)
        assert proc.stdout == ""
    assert sorted(os.listdir(tmp_path)) == []


def test_only_publish_writes_the_committed_page(tmp_path, monkeypatch):
    """The default --out lies in the temp folder; --render --publish writes the page (here
    pointed at a copy) that the committed one is."""
    module = load_benchmark("device_speed")
    committed = os.path.join(ROOT, "docs", "benchmarks", "device.rst")
    before = Path(committed).read_text()
    monkeypatch.setattr(module, "PAGE", str(tmp_path / "published" / "device.rst"))
    monkeypatch.setattr(module.tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    module.main(["--render", *RUNS])
    assert (tmp_path / "temp" / "spinup_benchmarks" / "device_speed" / "device.rst").read_text() \
        == before
    assert not (tmp_path / "published").exists()
    module.main(["--render", *RUNS, "--publish"])
    assert (tmp_path / "published" / "device.rst").read_text() == before
    assert Path(committed).read_text() == before


def test_a_published_measurement_is_the_next_committed_run(tmp_path, monkeypatch):
    module = load_benchmark("device_speed")
    runs_dir = tmp_path / "device"
    shutil.copytree(os.path.dirname(RUNS[0]), runs_dir)
    monkeypatch.setattr(module, "RUNS_DIR", str(runs_dir))
    monkeypatch.setattr(module, "PAGE", str(tmp_path / "device.rst"))
    run = dict(machine=dict(cpu="a CPU", gpu="a GPU", torch="2", date="2026-12-01"),
               results={"sac": {"cpu": 150.0, "cuda graph": 700.0}},
               steady={"sac": {"cpu": 152.0, "cuda graph": 820.0}},
               setup_s={"sac": {"cpu": 0.0, "cuda graph": 2.5}},
               command="python benchmarks/device_speed.py --cases sac")
    number = len(RUNS) + 1
    path = module.publish(run, "a new run")
    assert os.path.basename(path) == f"run{number}_device.json"
    saved = json.loads(Path(path).read_text())
    assert saved["label"] == "a new run" and re.fullmatch(r"[0-9a-f]{7,40}(\+dirty)?|unknown",
                                                          saved["commit"])
    assert saved["steady"] == run["steady"]
    page = (tmp_path / "device.rst").read_text()
    assert page.index(f"Run {number}, 2026-12-01") < page.index("Run 1, 2026-11-27")
    assert "A new run." in page and "820" in page and "2.50" in page


def test_page_ratio_uses_the_best_gpu_mode():
    module = load_benchmark("device_speed")
    lines = module.table({"sac": {"cpu": 100.0, "cuda eager": 80.0, "cuda graph": 450.0},
                          "ppo-1env": {"cpu": 100.0, "cuda eager": 90.0}})
    sac = next(line for line in lines if line.startswith("sac"))
    ppo = next(line for line in lines if line.startswith("ppo-1env"))
    assert sac.split()[-1] == "4.5x" and ppo.split()[-1] == "0.9x" and "--" in ppo


def test_an_optimizer_saved_on_a_gpu_loads_with_the_cpus_settings():
    """A capturable GPU Adam's state (tensor step size, capturable flag) goes on as this
    device's Adam: the flags it was built with, a float step size, the step count on the CPU."""
    w = torch.nn.Parameter(torch.ones(3))
    saved_opt = torch.optim.Adam([w], lr=0.01)
    w.grad = torch.ones(3)
    saved_opt.step()
    state = saved_opt.state_dict()
    state["param_groups"][0].update(capturable=True, fused=True, lr=torch.tensor(0.005))
    v = torch.nn.Parameter(torch.ones(3))
    mine = torch.optim.Adam([v], lr=0.01, fused=None)
    load_optimizer(mine, state)
    group = mine.param_groups[0]
    assert group["capturable"] is False and not group["fused"]
    assert isinstance(group["lr"], float) and group["lr"] == torch.tensor(0.005).item()
    assert mine.state[v]["step"].device.type == "cpu"
    v.grad = torch.ones(3)
    mine.step()   # a CPU step works
    assert int(mine.state[v]["step"]) == 2


def test_readme_gives_the_range_over_the_committed_runs():
    """README's ratio for DDPG, TD3 and SAC is the lowest to the highest over every committed
    run (graph over CPU within a run), not one run's (docs/measured.py holds gpu.rst's)."""
    ratios = []
    for path in RUNS:
        with open(path) as f:
            results = json.load(f)["results"]
        ratios += [max(row["cuda eager"], row["cuda graph"]) / row["cpu"]
                   for case, row in results.items() if case in ("sac", "td3", "ddpg")]
    assert len(ratios) >= 7       # SAC in three runs, TD3 and DDPG in two
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = " ".join(f.read().split())
    assert (f"CUDA graphs, {min(ratios):.1f} to {max(ratios):.1f} times the CPU's speed for the "
            f"first three across the three committed runs") in readme
