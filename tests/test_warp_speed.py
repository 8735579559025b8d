"""benchmarks/warp_speed.py: its try-out form on the CPU writes only where told, and bad
input is refused in one line."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mujoco_warp")
ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "warp_speed.py"


def run(*args, cwd):
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_try_out_on_the_cpu_from_another_folder(tmp_path):
    published = ROOT / "docs" / "benchmarks" / "warp" / "speed.json"
    before = published.read_bytes() if published.exists() else None
    out = run("--device", "cpu", "--tasks", "Hopper", "--sizes", "2", "--steps", "2",
              "--warmup", "1", "--repeats", "2", "--out", str(tmp_path / "s.json"),
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads((tmp_path / "s.json").read_text())
    assert {(r["figure"], r["num_envs"]) for r in record["results"]} == {("sim", 2),
                                                                        ("collect", 2)}
    assert all(len(r["steps_per_s"]) == 2 and r["median"] > 0 for r in record["results"])
    assert record["device"] == "cpu" and "--device cpu" in record["command"]
    assert (published.read_bytes() if published.exists() else None) == before


@pytest.mark.parametrize("args, says", [
    (["--steps", "0"], "--steps 0"),
    (["--device", "nonsense"], "--device nonsense"),
    (["--tasks", "Swimmer"], "invalid choice"),
])
def test_bad_input_is_one_line(tmp_path, args, says):
    out = run(*args, "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    assert out.returncode == 2 and says in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "x.json").exists()


def test_a_cuda_device_without_a_gpu_is_refused(tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    out = run("--device", "cuda", "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    assert out.returncode == 2 and "no CUDA GPU" in out.stderr
    assert not (tmp_path / "x.json").exists()
