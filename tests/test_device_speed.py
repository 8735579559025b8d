"""benchmarks/device_speed.py (issue 41): the page comes from the committed GPU runs, and the
script measures and writes a page on a machine without a GPU too."""
import glob
import json
import os
import subprocess
import sys

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
    page = out.read_text()
    assert f"{rate:,.0f}" in page and "dqn-cartpole" in page
    if not torch.cuda.is_available():
        assert "n/a" in page and run["machine"]["gpu"] is None


def test_bad_arguments_get_one_line_and_exit_2(tmp_path):
    for args, words in ((["--steps", "-1"], "--steps must be >= 0"),
                        (["--render", str(tmp_path / "missing.json")], "cannot read"),
                        (["--cases", "sac9"], "invalid choice")):
        proc = subprocess.run([sys.executable, SCRIPT, *args, "--out", str(tmp_path / "p.rst")],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2 and words in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "p.rst").exists()


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
