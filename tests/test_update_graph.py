"""spinup.machinery.update_graph: the update round of DDPG, TD3 and SAC on a GPU (issue 41).

The GPU path (a device copy of the replay buffer brought up to date once per round, the
rows of all the round's batches drawn first, static input tensors, one function for the
whole round) runs here on the CPU without a graph (``update_graph.uses_device_path`` patched to say yes):
its tables must equal the plain loop's bit for bit, so a wrong row, a missed sync or a
wrong policy-delay phase shows. The graph itself is tested on a GPU (tests/test_device.py).
"""
import contextlib
import os

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

import spinup
from spinup.algos.sac.sac import ReplayBuffer
from spinup.machinery import update_graph
from spinup.machinery.update_graph import CapturedCall, DeviceReplay, UpdateRound

# replay_size 150 < 800 steps: the buffer wraps, so syncs copy slots across its end
OFF = dict(steps_per_epoch=400, epochs=2, start_steps=200, update_after=200, update_every=25,
           batch_size=32, num_test_episodes=1, max_ep_len=100, replay_size=150)
CASES = {
    "sac": dict(OFF),
    "sac_learned_alpha": dict(OFF, alpha="auto"),
    "td3": dict(OFF),                         # 25 steps a round, policy_delay 2: two phases
    "td3_delay_3": dict(OFF, update_every=20, policy_delay=3),
    "ddpg": dict(OFF),
}


def table(name, out, device_path):
    algo = name.split("_")[0]
    plain = update_graph.uses_device_path
    update_graph.uses_device_path = (lambda device: True) if device_path else plain
    try:
        getattr(spinup, algo)(lambda: gym.make("Pendulum-v1"), ac_kwargs=dict(hidden_sizes=(16,)),
                              seed=2, logger_kwargs=dict(output_dir=str(out)), **CASES[name])
    finally:
        update_graph.uses_device_path = plain
    return pd.read_table(os.path.join(out, "progress.txt")).drop(columns="Time")


@pytest.mark.parametrize("name", sorted(CASES))
def test_device_path_gives_the_plain_loops_table(tmp_path, name):
    plain = table(name, tmp_path / "plain", False)
    device_path = table(name, tmp_path / "device", True)
    pd.testing.assert_frame_equal(plain, device_path, check_exact=True)


def test_device_replay_sync_copies_the_new_slots_across_the_end():
    rng = np.random.default_rng(0)
    buf = ReplayBuffer((3,), 2, size=10)

    def store(k):
        for _ in range(k):
            buf.store(rng.normal(size=3), rng.normal(size=2), float(rng.normal()),
                      rng.normal(size=3), 0.0)

    mirror = DeviceReplay(buf, "cpu")
    store(7)
    mirror.sync(7)            # the first sync copies every stored slot
    store(6)                  # slots 7, 8, 9, 0, 1, 2
    before = mirror.data["obs"][3].clone()
    buf.obs_buf[3] = 99.0     # not written by store since the last sync: must not be copied
    mirror.sync(6)
    assert torch.equal(mirror.data["obs"][3], before)
    buf.obs_buf[3] = mirror.data["obs"][3].numpy()
    for key, name in (("obs", "obs_buf"), ("act", "act_buf"), ("rew", "rew_buf")):
        assert np.array_equal(mirror.data[key].numpy(), getattr(buf, name))
    rows = torch.tensor([9, 0, 4])
    assert np.array_equal(mirror.gather(rows)["obs2"].numpy(), buf.obs2_buf[[9, 0, 4]])


def test_device_replay_refuses_a_nan_observation_at_the_sync():
    buf = ReplayBuffer((2,), 1, size=5)
    buf.source = "env Pendulum-v1"
    buf.store(np.array([0.0, np.nan]), np.zeros(1), 0.0, np.zeros(2), 0.0)
    plain = update_graph.uses_device_path
    update_graph.uses_device_path = lambda device: True
    try:
        round_ = UpdateRound("sac", lambda data: {}, buf, 2, 1, "cpu")
    finally:
        update_graph.uses_device_path = plain
    with pytest.raises(ValueError, match="non-finite observation .*replay slot 0"):
        round_()


def test_a_failed_capture_says_why_in_one_line_and_goes_on_eagerly(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    calls, lines = [], []

    def fn(inputs, key):
        calls.append(key)
        return dict(y=inputs["x"] * 2)

    call = CapturedCall("sac", fn, "cpu", graph=False, log=lines.append)
    call.graph = True                          # as on a GPU, without one
    call._warm_up = lambda key: (setattr(call, "_warm", True), fn(call.static, key))[1]

    def capture(key):
        raise RuntimeError("operation not permitted when stream is capturing\nmore")
    call._capture = capture
    assert call(dict(x=np.ones(2, np.float32)))["y"].tolist() == [2, 2]   # the warm-up
    assert call(dict(x=np.full(2, 3, np.float32)))["y"].tolist() == [6, 6]   # capture fails
    assert not call.graph and len(lines) == 1
    assert lines[0].startswith("sac: could not capture the update as a CUDA graph "
                               "(RuntimeError: operation not permitted")
    assert "cuda_graph=False" in lines[0] and "\n" not in lines[0]
    assert call(dict(x=np.zeros(2, np.float32)))["y"].tolist() == [0, 0]
    assert calls == [0, 0, 0] and len(lines) == 1


class FakeCuda:
    """Stand-ins for the parts of ``torch.cuda`` that :class:`CapturedCall` uses, which note
    the device that is current (``self.current``, GPU 0 to begin with) whenever a stream is
    made, a stream is entered, a capture opens, a graph replays or the function runs."""

    def __init__(self):
        self.current, self.events = 0, []
        fake = self

        class Stream:
            def __init__(self, device=None):
                index = torch.device(device).index if device is not None else None
                self.index = fake.current if index is None else index
                fake.events.append(("stream made", self.index, fake.current))

            def wait_stream(self, other):
                pass

        class CUDAGraph:
            def replay(self):
                fake.events.append(("replay", fake.current))

        self.Stream, self.CUDAGraph = Stream, CUDAGraph
        self.default_stream = Stream("cuda:0")
        self.events.clear()

    @contextlib.contextmanager
    def device(self, device):
        index = torch.device(device).index
        before, self.current = self.current, (self.current if index is None else index)
        try:
            yield
        finally:
            self.current = before

    def current_stream(self, device=None):
        return self.default_stream

    @contextlib.contextmanager
    def stream(self, stream):
        self.events.append(("stream entered", stream.index, self.current))
        yield

    @contextlib.contextmanager
    def graph(self, graph, stream=None):
        self.events.append(("capture", None if stream is None else stream.index, self.current))
        yield

    def install(self, monkeypatch):
        for name in ("device", "Stream", "CUDAGraph", "current_stream", "stream", "graph"):
            monkeypatch.setattr(torch.cuda, name, getattr(self, name))


@pytest.mark.parametrize("device,index", [("cuda:1", 1), ("cuda:3", 3), ("cuda", 0)])
def test_warm_up_capture_and_replay_run_with_the_given_device_current(device, index,
                                                                      monkeypatch):
    """No GPU needed: the fakes record which device was current at each step (on a GPU,
    test_capture_and_replay_on_a_gpu_draw_the_eager_random_numbers runs the same path)."""
    fake = FakeCuda()
    fake.install(monkeypatch)

    def fn(inputs, key):
        fake.events.append(("fn", fake.current))
        return dict(y=inputs["x"] * 2)

    call = CapturedCall("sac", fn, device, graph=True, log=lambda line: None)
    assert call.graph

    def load(inputs):   # the static inputs stay on the CPU (there is no GPU to put them on)
        call.static = {name: torch.as_tensor(value) for name, value in inputs.items()}
    call._load = load
    for _ in range(3):   # the warm-up, the capture (then its first replay), a replay
        call(dict(x=np.ones(2, np.float32)))
    assert fake.events == [
        ("stream made", index, index),      # the side stream belongs to the device
        ("stream entered", index, index),   # the warm-up runs on it
        ("fn", index),
        ("capture", index, index),          # the capture records on that same stream
        ("fn", index),
        ("replay", index),
        ("replay", index),
    ]
    assert fake.current == 0                # and the device that was current is back
    assert call.graph and list(call._graphs) == [0]


# ---- On a GPU only (skipped elsewhere) ----

CUDA = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU (torch.cuda.is_available())")
GPU_CASES = {
    "sac": ("Pendulum-v1", dict(OFF, alpha="auto")),
    "td3": ("Pendulum-v1", dict(OFF)),
    "ddpg": ("Pendulum-v1", dict(OFF)),
    "dqn": ("CartPole-v1", dict(OFF, update_every=2, prioritized_replay=True, n_step=3,
                                double=True)),    # anneal_lr: the step size changes each step
}


def gpu_run(algo, out, **extra):
    env_id, kwargs = GPU_CASES[algo]
    getattr(spinup, algo)(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(32, 32)),
                          seed=2, logger_kwargs=dict(output_dir=str(out)), **dict(kwargs, **extra))
    return pd.read_table(os.path.join(out, "progress.txt")).drop(columns="Time")


def said(printed, algo, what):
    """Whether a line of ``printed`` starts with ``<algo>: <what>`` (whole lines only: the
    run directories printed around them hold the test's name, which holds "captured")."""
    return any(line.startswith(f"{algo}: {what}") for line in printed.splitlines())


@needs_gpu
@pytest.mark.parametrize("algo", sorted(GPU_CASES))
def test_the_update_is_captured_and_learns_as_the_eager_one(algo, tmp_path, capfd):
    """The graph run and the eager run launch the same kernels, and start from the same seed
    (``torch.manual_seed`` seeds the GPU's generator too). A replay draws its random numbers
    (SAC's sampled actions, TD3's target noise) from that generator exactly as the eager
    kernels do, advancing it by as much, and the capture itself draws none; so the two runs
    see the same random stream and give the same table. DQN's update draws no random numbers
    and its table must be equal to the digit; the others are held to 1e-3, the margin the
    DDPG comparison has always had."""
    graph = gpu_run(algo, tmp_path / "graph", device="cuda")
    printed = capfd.readouterr().out
    assert said(printed, algo, "captured the update as a CUDA graph")
    assert not said(printed, algo, "could not capture")
    eager = gpu_run(algo, tmp_path / "eager", device="cuda", cuda_graph=False)
    printed = capfd.readouterr().out
    assert not said(printed, algo, "captured") and not said(printed, algo, "could not capture")
    assert list(graph.columns) == list(eager.columns)
    numbers = graph.drop(columns=[c for c in graph.columns if c.startswith("Std")])
    assert np.isfinite(numbers.to_numpy(dtype=float)).all()
    if algo == "dqn":   # no random numbers in its update: the very same numbers
        pd.testing.assert_frame_equal(graph, eager, check_exact=True)
        return
    compared = [c for c in graph.columns if c.startswith(("Average", "Loss")) or c == "Alpha"]
    assert {"LossQ", "LossPi", "AverageEpRet"} <= set(compared)
    if algo == "sac":   # the sampled actions and the learned temperature are compared too
        assert {"AverageLogPi", "Alpha"} <= set(compared)
    for key in compared:
        assert graph[key].to_numpy() == pytest.approx(eager[key].to_numpy(), rel=1e-3), key


@needs_gpu
@pytest.mark.parametrize("index", [0, 1], ids=["cuda:0", "cuda:1"])
def test_capture_and_replay_on_a_gpu_draw_the_eager_random_numbers(index):
    """The path of test_warm_up_capture_and_replay_run_with_the_given_device_current, on a
    real GPU (cuda:1 where there are two): the function runs with that device current, and
    the replays draw the numbers that the same calls made eagerly draw from the same seed."""
    if index >= torch.cuda.device_count():
        pytest.skip(f"needs {index + 1} GPUs")
    device = torch.device(f"cuda:{index}")
    current = []

    def fn(inputs, key):
        current.append(torch.cuda.current_device())
        return dict(y=inputs["x"] + torch.randn(5, device=device))

    call = CapturedCall("test", fn, device, graph=True, log=lambda line: None)
    torch.manual_seed(7)
    graphed = [call(dict(x=torch.zeros(5)))["y"].clone() for _ in range(4)]
    assert call.graph and len(call._graphs) == 1
    assert current == [index, index]      # the warm-up and the capture; replays call nothing
    torch.manual_seed(7)
    eager = [fn(dict(x=torch.zeros(5, device=device)), 0)["y"] for _ in range(4)]
    for step, (a, b) in enumerate(zip(graphed, eager)):
        assert torch.equal(a, b), step
    assert not torch.equal(graphed[2], graphed[3])   # each replay draws new numbers


@needs_gpu
def test_a_replayed_adam_step_reads_the_step_size_set_before_it():
    from spinup.utils.torch_tools import adam, set_lr
    w = torch.nn.Parameter(torch.ones(3, device="cuda"))
    opt = adam([w], lr=0.1)

    def step(inputs, key):
        opt.zero_grad()
        (w * inputs["x"]).sum().backward()
        opt.step()
        return dict(w=w.detach().clone())

    call = CapturedCall("test", step, "cuda", graph=True, log=lambda line: None)
    call(dict(x=torch.ones(3)))       # warm-up (eager)
    call(dict(x=torch.ones(3)))       # captured, then replayed
    assert call.graph and len(call._graphs) == 1
    set_lr(opt, 0.0)
    before = w.detach().clone()
    call(dict(x=torch.ones(3)))
    assert torch.equal(w.detach(), before)    # lr 0: the replay moved nothing
    set_lr(opt, 0.5)
    call(dict(x=torch.ones(3)))
    assert (w.detach() < before - 0.4).all()


@needs_gpu
@pytest.mark.parametrize("algo", ["sac", "dqn"])
def test_a_graph_run_resumes_on_the_cpu_and_back(algo, tmp_path):
    out = tmp_path / "run"
    gpu_run(algo, out, device="cuda", epochs=1)
    env_id, kwargs = GPU_CASES[algo]
    for device, epochs in (("cpu", 2), ("cuda", 3)):
        getattr(spinup, algo)(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(32, 32)),
                              seed=2, logger_kwargs=dict(output_dir=str(out), resume=True),
                              **dict(kwargs, epochs=epochs, device=device))
    rows = pd.read_table(os.path.join(out, "progress.txt"))
    assert rows["Epoch"].tolist() == [1, 2, 3]
    assert np.isfinite(rows["LossQ"].to_numpy()).all()


# ---- the cuda_graph argument, from the command line and from Python ----

@pytest.mark.parametrize("algo,env_id", [("sac", "Pendulum-v1"), ("td3", "Pendulum-v1"),
                                         ("ddpg", "Pendulum-v1"), ("dqn", "CartPole-v1")])
def test_cuda_graph_flag_runs_and_is_saved(algo, env_id, tmp_path):
    from conftest import run_cli
    run_cli(algo, "--env", env_id, "--epochs", 1, "--steps_per_epoch", 150, "--start_steps", 50,
            "--update_after", 50, "--batch_size", 16, "--num_test_episodes", 1,
            "--max_ep_len", 50, "--hid", "[8]", "--cuda_graph", "False",
            "--exp_name", "g", "--data_dir", tmp_path)
    with open(tmp_path / "g" / "g_s0" / "config.json") as f:
        assert '"cuda_graph":\tfalse' in f.read()


def test_a_bad_cuda_graph_is_one_line_and_writes_nothing(tmp_path):
    from conftest import run_here
    proc = run_here("sac", "--env", "Pendulum-v1", "--cuda_graph", "maybe",
                    "--data_dir", tmp_path / "d")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "sac: --cuda_graph expects True or False, got 'maybe'" in proc.stderr
    assert not (tmp_path / "d").exists()
    with pytest.raises((TypeError, ValueError), match="cuda_graph"):
        spinup.sac(lambda: gym.make("Pendulum-v1"), cuda_graph="yes",
                   logger_kwargs=dict(output_dir=str(tmp_path / "py")))
    assert not (tmp_path / "py").exists()
