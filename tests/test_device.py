"""The ``device`` argument (issue 41, the part a machine without a GPU can check).

- :func:`spinup.machinery.device.resolve_device`: what it accepts, and one line for each
  refusal (unknown string, a GPU this machine lacks, a GPU shared by MPI ranks, A3C);
  the same lines from Python and the command line, exit 2, nothing written.
- Every algorithm takes ``device='cpu'`` and ``device='auto'``; ``'cpu'`` and ``'auto'``
  resolved to the CPU give the table of a run without the argument, and ``config.json``
  keeps the value given, ``provenance.json`` the device used.
- The GPU path's bookkeeping, run on the CPU (``acts_on_a_copy`` patched to say yes): acting from a
  separate copy refreshed after every update round (and after a resume) must give the
  very same table, so a missed refresh shows as a difference.
- Checkpoints and ``model.pt`` whose tensors were saved on a GPU load on the CPU: the
  files are rewritten to say ``cuda:0``, which ``torch.load`` refuses here without
  ``map_location``.
- On a GPU only (skipped elsewhere): short SAC and PPO runs on cuda against the CPU.
"""
import io
import json
import os
import zipfile

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

import spinup
from conftest import run_cli, run_here
from spinup.machinery.arg_checks import check_args
from spinup.machinery.checkpoint import checkpoint_path, load_checkpoint, save_checkpoint
from spinup.utils.test_policy import load_policy_and_env
import spinup.machinery.device as device_module
from spinup.machinery.device import AUTO_GPU, Placement, resolve_device

CUDA = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU (torch.cuda.is_available())")
no_gpu = pytest.mark.skipif(CUDA, reason="this machine has a GPU")

OFF_POLICY = dict(steps_per_epoch=120, epochs=1, start_steps=60, update_after=60,
                  update_every=30, batch_size=16, num_test_episodes=1, max_ep_len=50)
ON_POLICY = dict(steps_per_epoch=100, epochs=2, train_v_iters=2)
CASES = {
    "vpg": ("CartPole-v1", ON_POLICY),
    "trpo": ("Pendulum-v1", ON_POLICY),
    "npg": ("CartPole-v1", ON_POLICY),
    "ppo": ("CartPole-v1", dict(ON_POLICY, train_pi_iters=2)),
    "a2c": ("Pendulum-v1", dict(steps_per_epoch=100, epochs=2)),
    "ddpg": ("Pendulum-v1", OFF_POLICY),
    "td3": ("Pendulum-v1", dict(OFF_POLICY, epochs=2)),
    "sac": ("Pendulum-v1", dict(OFF_POLICY, epochs=2, alpha="auto")),
    "dqn": ("CartPole-v1", dict(OFF_POLICY, epochs=2, start_steps=0, update_every=10,
                                prioritized_replay=True, n_step=2)),
}


def train(algo, out, **extra):
    env_id, kwargs = CASES[algo]
    getattr(spinup, algo)(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(8,)), seed=1,
                          logger_kwargs=dict(output_dir=str(out)), **dict(kwargs, **extra))
    return pd.read_table(os.path.join(out, "progress.txt")).drop(columns="Time")


def read_json(run_dir, name):
    with open(os.path.join(run_dir, name)) as f:
        return json.load(f)


# ---- resolve_device ----

def test_resolve_device_accepts_cpu_auto_and_a_torch_device():
    assert resolve_device("ppo", "cpu") == torch.device("cpu")
    assert resolve_device("ppo", torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("sac", "auto") == torch.device("cuda:0" if CUDA else "cpu")
    assert resolve_device("ppo", "auto") == torch.device("cpu")   # no gain measured
    # 'auto' never picks a GPU that the run could not use
    assert resolve_device("ppo", "auto", num_procs=2) == torch.device("cpu")
    assert resolve_device("a3c", "auto") == torch.device("cpu")


def fake_gpus(monkeypatch, count):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)


def test_resolve_device_with_gpus_fills_in_the_index(monkeypatch):
    fake_gpus(monkeypatch, 2)
    assert resolve_device("sac", "cuda") == torch.device("cuda", 0)
    assert resolve_device("sac", "cuda:1") == torch.device("cuda", 1)
    assert resolve_device("sac", "auto") == torch.device("cuda", 0)
    assert resolve_device("a3c", "auto") == torch.device("cpu")
    assert resolve_device("ppo", "auto", num_procs=4) == torch.device("cpu")


def test_auto_takes_the_gpu_only_where_it_measured_faster(monkeypatch):
    fake_gpus(monkeypatch, 1)
    for algo in ("ddpg", "td3", "sac", "dqn"):
        assert resolve_device(algo, "auto") == torch.device("cuda", 0), algo
    for algo in ("vpg", "trpo", "npg", "ppo", "a2c", "a3c"):
        assert resolve_device(algo, "auto") == torch.device("cpu"), algo
        if algo != "a3c":   # an explicit GPU is still theirs to ask for
            assert resolve_device(algo, "cuda") == torch.device("cuda", 0), algo


REFUSALS = [  # (algo, device, procs, gpus, error, message)
    ("ppo", "gpu", 1, 0, ValueError,
     "ppo: device='gpu' is not allowed: 'cpu', 'cuda', 'cuda:N' (N a GPU index) or 'auto' "
     "(a GPU for ddpg, td3, sac and dqn when torch sees one, else the CPU)"),
    ("sac", "cuda:x", 1, 1, ValueError, "sac: device='cuda:x' is not allowed: 'cpu', 'cuda'"),
    ("sac", "CUDA", 1, 1, ValueError, "sac: device='CUDA' is not allowed: 'cpu', 'cuda'"),
    ("dqn", 0, 1, 1, TypeError, "dqn: device=0 is not allowed: a string, 'cpu', 'cuda'"),
    ("td3", "cuda", 1, 0, ValueError,
     "td3: device='cuda' is not allowed: torch.cuda.is_available() is False here (no GPU, "
     "no driver, or a CPU-only torch build); use device='cpu' or device='auto'"),
    ("ddpg", "cuda:2", 1, 2, ValueError,
     "ddpg: device='cuda:2' is not allowed: this machine has only 2 GPUs (cuda:0 to cuda:1)"),
    ("ppo", "cuda", 2, 1, ValueError,
     "ppo: device='cuda' is not allowed: the run has 2 MPI processes (--cpu 2) and they "
     "cannot share one GPU here"),
    ("a3c", "cuda", 1, 1, ValueError,
     "a3c: device='cuda' is not allowed: A3C's Hogwild workers are separate processes that "
     "update networks kept in shared CPU memory, which a GPU cannot share; use "
     "device='cpu', or a2c"),
]


@pytest.mark.parametrize("algo, device, procs, gpus, error, message", REFUSALS,
                         ids=[f"{r[0]}-{r[1]}-procs{r[2]}-gpus{r[3]}" for r in REFUSALS])
def test_resolve_device_refuses_in_one_line(monkeypatch, algo, device, procs, gpus, error,
                                            message):
    fake_gpus(monkeypatch, gpus)
    with pytest.raises(error) as info:
        resolve_device(algo, device, procs)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    # check_args (the owner of every argument rule) refuses with the same line
    fn = getattr(spinup, algo)
    with pytest.raises(error) as again:
        check_args(algo, fn, dict(device=device), procs=procs)
    assert str(again.value) == str(info.value)


# ---- bad input from Python and the command line: one line, nothing written ----

API_REFUSALS = [
    ("ppo", dict(device="gpu"), "ppo: device='gpu' is not allowed"),
    ("a3c", dict(device="cuda", num_workers=1), "a3c: device='cuda' is not allowed: A3C's"),
    pytest.param("sac", dict(device="cuda"), "sac: device='cuda' is not allowed: "
                 "torch.cuda.is_available() is False", marks=no_gpu),
    ("dqn", dict(device="cuda:99"), "dqn: device='cuda:99' is not allowed"),
]


@pytest.mark.parametrize("algo, bad, message", API_REFUSALS)
def test_python_api_refuses_before_anything_is_written(tmp_path, algo, bad, message):
    env_id, kwargs = CASES[algo] if algo in CASES else ("CartPole-v1", {})
    out = tmp_path / "out"
    with pytest.raises(ValueError) as info:
        getattr(spinup, algo)(lambda: gym.make(env_id), logger_kwargs=dict(output_dir=str(out)),
                              **dict(kwargs, **bad))
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert not out.exists()


CLI_REFUSALS = [
    (["ppo", "--env", "CartPole-v1", "--device", "gpu"], "ppo: device='gpu' is not allowed"),
    (["dqn", "--env", "CartPole-v1", "--device", "0"], "dqn: device=0 is not allowed: a string"),
    (["ppo", "--env", "CartPole-v1", "--device", "cuda", "--cpu", "2", "--oversubscribe"],
     "ppo: device='cuda' is not allowed: the run has 2 MPI processes (--cpu 2)"),
    (["a3c", "--env", "CartPole-v1", "--device", "cuda", "--num_workers", "1"],
     "a3c: device='cuda' is not allowed: A3C's Hogwild workers"),
    # one bad variant of a grid stops the whole grid before the first launch
    (["vpg", "--env", "CartPole-v1", "--device", "cpu", "tpu", "--epochs", "1"],
     "vpg: device='tpu' is not allowed"),
    pytest.param(["sac", "--env", "Pendulum-v1", "--device", "cuda"],
                 "sac: device='cuda' is not allowed: torch.cuda.is_available() is False",
                 marks=no_gpu),
    pytest.param(["td3", "--env", "Pendulum-v1", "--device", "cuda:0"],
                 "td3: device='cuda:0' is not allowed: torch.cuda.is_available() is False",
                 marks=no_gpu),
]


@pytest.mark.parametrize("args, line", CLI_REFUSALS)
def test_cli_refuses_in_one_line_exit_2_and_writes_nothing(tmp_path, args, line):
    data_dir = tmp_path / "data"
    proc = run_here(*args, "--data_dir", data_dir)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + line), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not data_dir.exists() or not os.listdir(data_dir)


def test_cli_names_the_missing_gpus(tmp_path, monkeypatch):
    fake_gpus(monkeypatch, 1)
    proc = run_here("ddpg", "--env", "Pendulum-v1", "--device", "cuda:3", "--data_dir",
                    tmp_path / "data")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert ("error: ddpg: device='cuda:3' is not allowed: this machine has only 1 GPU "
            "(cuda:0 to cuda:0)") in proc.stderr
    assert not (tmp_path / "data").exists() or not os.listdir(tmp_path / "data")


def test_cli_help_documents_device():
    proc = run_here("ppo", "--help")
    assert proc.returncode == 0 and "device (str)" in proc.stdout


# ---- every algorithm: 'cpu' and 'auto'; the GPU path's bookkeeping on the CPU ----

@pytest.mark.parametrize("algo", sorted(CASES))
def test_cpu_auto_and_the_gpu_path_on_the_cpu_give_the_same_table(algo, tmp_path, monkeypatch):
    plain = train(algo, tmp_path / "plain")
    auto = train(algo, tmp_path / "auto", device="auto")
    assert read_json(tmp_path / "auto", "config.json")["device"] == "auto"
    used = read_json(tmp_path / "auto", "provenance.json")["run"]["device"]
    if not CUDA or algo not in AUTO_GPU:
        assert used == "cpu"
        pd.testing.assert_frame_equal(plain, auto, check_exact=True)
    else:
        assert used.startswith("cuda:0 (")
    # A separate acting copy, refreshed after each update round: the same numbers.
    monkeypatch.setattr(device_module, "acts_on_a_copy", lambda device: True)
    copied = train(algo, tmp_path / "copied", device="cpu")
    pd.testing.assert_frame_equal(plain, copied, check_exact=True)
    assert read_json(tmp_path / "copied", "provenance.json")["run"]["device"] == "cpu"


@pytest.mark.parametrize("algo", ["ppo", "sac"])
def test_device_cpu_is_the_run_without_the_argument(algo, tmp_path):
    plain = train(algo, tmp_path / "plain")
    cpu = train(algo, tmp_path / "cpu", device="cpu")
    pd.testing.assert_frame_equal(plain, cpu, check_exact=True)
    assert read_json(tmp_path / "cpu", "config.json")["device"] == "cpu"
    assert read_json(tmp_path / "plain", "config.json")["device"] == "cpu"


@pytest.mark.serial
def test_a3c_takes_cpu_and_auto(tmp_path):
    for device in ("cpu", "auto"):
        out = tmp_path / device
        spinup.a3c(lambda: gym.make("CartPole-v1"), num_workers=1, steps_per_epoch=20,
                   epochs=1, n_steps=10, num_test_episodes=0, device=device,
                   logger_kwargs=dict(output_dir=str(out)))
        assert read_json(out, "config.json")["device"] == device
        assert read_json(out, "provenance.json")["run"]["device"] == "cpu"
        assert len(pd.read_table(out / "progress.txt")) == 1


def test_placement_on_the_cpu_is_a_pass_through():
    net = torch.nn.Linear(3, 2)
    placed = Placement(net, torch.device("cpu"))
    assert placed.actor is net and placed.net is net
    data = dict(obs=torch.zeros(4, 3), idxs=np.arange(4))
    assert placed.batch(data) is data
    placed.refresh()   # nothing to do


def test_placement_copy_is_refreshed(monkeypatch):
    monkeypatch.setattr(device_module, "acts_on_a_copy", lambda device: True)
    net = torch.nn.Linear(3, 2)
    placed = Placement(net, torch.device("cpu"))
    assert placed.actor is not net
    assert not any(p.requires_grad for p in placed.actor.parameters())
    with torch.no_grad():
        net.weight.add_(1.0)
    assert not torch.equal(placed.actor.weight, net.weight)
    placed.refresh()
    assert torch.equal(placed.actor.weight, net.weight)


# ---- files written on a GPU load on the CPU ----

def saved_on_gpu(path):
    """Rewrite the torch file ``path`` in place as if its tensors had been saved from
    ``cuda:0`` (the storage location in data.pkl: the string 'cpu', pickled once and
    memoised), which is what a GPU run writes."""
    with zipfile.ZipFile(path) as zin:
        entries = [(info.filename, zin.read(info.filename)) for info in zin.infolist()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zout:
        for name, data in entries:
            if name.endswith("/data.pkl"):
                assert data.count(b"X\x03\x00\x00\x00cpu") == 1
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            zout.writestr(name, data)
    with open(path, "wb") as f:
        f.write(buffer.getvalue())


@no_gpu
def test_saved_on_gpu_really_needs_map_location(tmp_path):
    path = tmp_path / "x.pt"
    torch.save({"w": torch.arange(3.0)}, path)
    saved_on_gpu(path)
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(path, weights_only=True)


def test_load_checkpoint_maps_gpu_tensors_to_the_cpu(tmp_path, monkeypatch):
    save_checkpoint(str(tmp_path), dict(epoch=3, w=torch.arange(4.0), nested=dict(b=torch.ones(2))))
    saved_on_gpu(checkpoint_path(str(tmp_path)))
    seen = []
    real_load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **kw: seen.append(kw) or real_load(*a, **kw))
    state = load_checkpoint(str(tmp_path))
    assert seen and seen[0].get("map_location") == "cpu"
    assert state["w"].device.type == "cpu" and torch.equal(state["w"], torch.arange(4.0))
    assert state["nested"]["b"].device.type == "cpu"


def test_a_run_saved_on_gpu_resumes_and_loads_on_the_cpu(tmp_path, monkeypatch):
    """SAC for 2 epochs; the same stopped after 1, its checkpoint and model rewritten as
    GPU files, resumed on the CPU (acting from a separate copy, which the resume must
    refresh): the same table, and test_policy loads the model."""
    full = train("sac", tmp_path / "full")
    train("sac", tmp_path / "cut", epochs=1)
    for name in ("checkpoint.pt", "model.pt"):
        saved_on_gpu(tmp_path / "cut" / "pyt_save" / name)
    monkeypatch.setattr(device_module, "acts_on_a_copy", lambda device: True)
    env_id, kwargs = CASES["sac"]
    spinup.sac(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(8,)), seed=1,
               logger_kwargs=dict(output_dir=str(tmp_path / "cut"), resume=True), **kwargs)
    resumed = pd.read_table(tmp_path / "cut" / "progress.txt").drop(columns="Time")
    pd.testing.assert_frame_equal(full, resumed, check_exact=True)
    saved_on_gpu(tmp_path / "cut" / "pyt_save" / "model.pt")
    env, get_action = load_policy_and_env(str(tmp_path / "cut"), deterministic=True)
    assert next(get_action.ac.parameters()).device.type == "cpu"
    assert get_action(env.reset(seed=0)[0]).shape == (1,)
    env.close()


def test_cli_resume_may_change_the_device(tmp_path):
    """A run goes on on another device: ``--resume DIR --device cpu`` is accepted (other
    changed flags stay refused); config.json keeps the device the run started with."""
    run_cli("vpg", "--env", "CartPole-v1", "--epochs", 1, "--steps_per_epoch", 100,
            "--train_v_iters", 2, "--hid", "[8]", "--device", "auto", "--exp_name", "dev",
            "--data_dir", tmp_path, timeout=300)
    run_dir = tmp_path / "dev" / "dev_s0"
    proc = run_here("vpg", "--resume", run_dir, "--epochs", 2, "--device", "cpu")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(pd.read_table(run_dir / "progress.txt")) == 2
    assert read_json(run_dir, "config.json")["device"] == "auto"
    assert read_json(run_dir, "provenance.json")["resumed"][0]["device"] == "cpu"
    refused = run_here("vpg", "--resume", run_dir, "--epochs", 3, "--lam", 0.5)
    assert refused.returncode == 2 and "Only --epochs, --device and --cuda_graph may change" in refused.stderr


# ---- on a GPU only ----

def table(run_dir):
    return pd.read_table(os.path.join(run_dir, "progress.txt"))


@needs_gpu
def test_ppo_on_cuda_matches_the_cpu_before_the_first_update(tmp_path):
    """Acting uses a CPU copy with the same weights and the CPU generator, so the first
    epoch's episodes are the CPU run's; the losses before the first step differ only
    by the GPU's rounding."""
    kw = dict(steps_per_epoch=400, epochs=2, train_pi_iters=5, train_v_iters=5)
    cpu = train("ppo", tmp_path / "cpu", **kw)
    gpu = train("ppo", tmp_path / "gpu", device="cuda", **kw)
    assert read_json(tmp_path / "gpu", "provenance.json")["run"]["device"].startswith("cuda:")
    assert list(cpu.columns) == list(gpu.columns)
    assert cpu.loc[0, "AverageEpRet"] == gpu.loc[0, "AverageEpRet"]
    for key in ("LossPi", "LossV", "Entropy"):
        assert gpu.loc[0, key] == pytest.approx(cpu.loc[0, key], rel=1e-4, abs=1e-5), key
    assert np.isfinite(gpu.drop(columns=["StdEpRet"]).to_numpy(dtype=float)).all()
    # the cuda run's files load on the CPU and resume there
    env, get_action = load_policy_and_env(str(tmp_path / "gpu"))
    assert next(get_action.ac.parameters()).device.type == "cpu"
    env.close()
    env_id, kwargs = CASES["ppo"]
    spinup.ppo(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(8,)), seed=1,
               device="cpu", logger_kwargs=dict(output_dir=str(tmp_path / "gpu"), resume=True),
               **dict(kwargs, **dict(kw, epochs=3)))
    assert len(table(tmp_path / "gpu")) == 3
    assert read_json(tmp_path / "gpu", "provenance.json")["resumed"][0]["device"] == "cpu"


@needs_gpu
def test_sac_on_cuda_against_the_cpu(tmp_path):
    """The first epoch is uniform actions only (the same on both); after it, the GPU's
    own random numbers make the runs differ, so they are compared loosely."""
    kw = dict(steps_per_epoch=200, epochs=3, start_steps=200, update_after=200,
              update_every=50, batch_size=32, num_test_episodes=2, max_ep_len=200)
    cpu = train("sac", tmp_path / "cpu", **kw)
    gpu = train("sac", tmp_path / "gpu", device="cuda", **kw)
    assert list(cpu.columns) == list(gpu.columns)
    assert cpu.loc[0, "AverageEpRet"] == gpu.loc[0, "AverageEpRet"]
    later = gpu.iloc[1:]
    assert np.isfinite(later[["LossQ", "LossPi", "AverageQ1Vals", "Alpha"]].to_numpy()).all()
    assert ((later["AverageTestEpRet"] > -2000) & (later["AverageTestEpRet"] <= 0)).all()
    ratio = later["LossQ"].to_numpy() / cpu.iloc[1:]["LossQ"].to_numpy()
    assert ((ratio > 0.1) & (ratio < 10)).all(), ratio


@needs_gpu
@pytest.mark.parametrize("algo", sorted(set(CASES) - {"ppo", "sac"}))
def test_every_algorithm_runs_on_cuda(algo, tmp_path):
    gpu = train(algo, tmp_path / "gpu", device="cuda")
    assert read_json(tmp_path / "gpu", "provenance.json")["run"]["device"].startswith("cuda:")
    assert len(gpu) == CASES[algo][1]["epochs"]
    env, get_action = load_policy_and_env(str(tmp_path / "gpu"))
    assert next(get_action.ac.parameters()).device.type == "cpu"
    env.close()
