"""The MuJoCo Warp tasks (spinup/HalfCheetah-v5 ... spinup/Humanoid-v5) against gymnasium's
own -v5 envs, on Warp's CPU mode (a few copies) and, with a GPU, on thousands.

Parity: the reference (gymnasium, MuJoCo in float64) and ours (MuJoCo Warp in float32) each
take one env step from the same states with the same actions; observation, reward and
termination must agree. The states come from random-action rollouts of the reference, so
contacts, joint limits and falls all occur.

Tolerance: |ours - reference| <= tol * (1 + |reference|) per entry, tol = TOL (1e-3) on
positions, velocities and rewards and FORCE_TOL (5e-3) on the entries that come out of the
constraint solve (Ant's and Humanoid's contact forces, and the rest of Humanoid's derived
block). Reasons: float32 keeps 7 digits; one env step is 4 or 5 simulator steps; the solver
stops on float64 tolerances MuJoCo cannot reach in float32, so the constraint forces carry
the solve's residual. Measured on 200 states per task (worst entry): positions and
velocities 9.5e-5 (HalfCheetah), 2.6e-6 (Hopper), 2.5e-5 (Walker2d), 1.8e-5 (Ant), 3.3e-5
(Humanoid); rewards 1.7e-5; solved forces 1.04e-3 (Ant, elliptic cone; 99th percentile
4.1e-4) and 2.9e-4 (Humanoid). Rounding MuJoCo's own float64 state to float32 moves its next
observation by up to 1e-5. Both tolerances keep a margin of 5x or more.

Two differences are the engines', not ours, and each test says how it handles them:
- MuJoCo Warp has no PGS solver, which Humanoid's model asks for: both sides use Newton.
- A plane contact's friction pyramid is oriented along the geom by MuJoCo and along the
  world axes by MuJoCo Warp, so a sliding contact pushes differently (Ant: velocities
  differ by up to 0.2 after one step). With elliptic cones (round, no orientation) both
  agree within TOL; with the task's pyramids, the copies touching nothing agree within TOL.
"""
import builtins
import warnings

import gymnasium as gym
import mujoco
import numpy as np
import pytest
import torch

import spinup.envs
from spinup.envs import WARP_TASK_IDS

pytest.importorskip("mujoco_warp")
from spinup.envs import mujoco_warp as W  # noqa: E402

TOL, FORCE_TOL = 1e-3, 5e-3
#: Where the solved (derived) block of the observation starts; before it: qpos, qvel.
SOLVED_FROM = {"Ant": 27, "Humanoid": 45}
NAMES = ["HalfCheetah", "Hopper", "Walker2d", "Ant", "Humanoid"]
#: The z (qpos[1] for the planar walkers, qpos[2] else) and angle bounds of "healthy":
#: a termination flag may differ only within NEAR of one of them.
HEALTH = {"Hopper": ((1, 0.7, np.inf), (2, -0.2, 0.2)), "Walker2d": ((1, 0.8, 2.0), (2, -1, 1)),
          "Ant": ((2, 0.2, 1.0),), "Humanoid": ((2, 1.0, 2.0),), "HalfCheetah": ()}
NEAR = 1e-3


def reference(name, cone="pyramidal"):
    """gymnasium's -v5 env of ``name`` (unwrapped), set up as our task is."""
    env = gym.make(f"{name}-v5").unwrapped
    if name == "Humanoid":
        env.model.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    env.model.opt.cone = getattr(mujoco.mjtCone, W.CONES[cone])
    return env


def transitions(env, n, seed):
    """n (qpos, qvel, action) triples met on random-action rollouts of ``env``."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    out = []
    while len(out) < n:
        for _ in range(rng.integers(1, 30)):
            if env.step(env.action_space.sample())[2]:
                env.reset()
        out.append((env.data.qpos.copy(), env.data.qvel.copy(), env.action_space.sample()))
    return out


def reference_steps(env, triples):
    """The reference's (obs, reward, terminated, next qpos, touched) from each triple;
    ``touched``: a contact existed at the start or after one of the simulator steps."""
    probe = mujoco.MjData(env.model)
    rows = []
    for qpos, qvel, act in triples:
        probe.qpos[:], probe.qvel[:], probe.ctrl[:] = qpos, qvel, act
        mujoco.mj_forward(env.model, probe)
        touched = probe.ncon > 0
        for _ in range(env.frame_skip):
            mujoco.mj_step(env.model, probe)
            touched |= probe.ncon > 0
        env.set_state(qpos, qvel)
        obs, rew, term, _, _ = env.step(act)
        rows.append((obs, rew, term, env.data.qpos.copy(), touched))
    return rows


def our_step(name, triples, cone="pyramidal", device="cpu"):
    """Our task's (final obs, reward, terminated) from the same triples, as numpy."""
    task = getattr(W, name)(num_envs=len(triples), device=device, cone=cone)
    task.reset(seed=0)
    task.set_state(np.stack([t[0] for t in triples]), np.stack([t[1] for t in triples]))
    _, rew, term, _, info = task.step(torch.as_tensor(np.stack([t[2] for t in triples])))
    return info["final_obs"].cpu().numpy(), rew.cpu().numpy(), term.cpu().numpy()


def compare(name, rows, obs, rew, term, only=None):
    """Assert the agreement described in the module docstring on the rows ``only``."""
    keep = np.ones(len(rows), bool) if only is None else only
    ref_obs = np.stack([r[0] for r in rows])[keep]
    ref_rew = np.array([r[1] for r in rows])[keep]
    err = np.abs(obs[keep] - ref_obs) / (1 + np.abs(ref_obs))
    tol = np.full(ref_obs.shape[1], TOL)
    tol[SOLVED_FROM.get(name, len(tol)):] = FORCE_TOL
    worst = (err / tol).max()
    assert worst <= 1, (name, np.unravel_index((err / tol).argmax(), err.shape), worst)
    rerr = np.abs(rew[keep] - ref_rew) / (1 + np.abs(ref_rew))
    assert rerr.max() <= TOL, (name, rerr.argmax(), rerr.max())
    for i in np.nonzero(keep)[0]:
        if term[i] != rows[i][2]:   # only at a state on the edge of "healthy"
            qpos = rows[i][3]
            assert any(min(abs(qpos[k] - lo), abs(qpos[k] - hi)) < NEAR
                       for k, lo, hi in HEALTH[name]), (name, i, qpos)
    return err.max()


@pytest.mark.parametrize("name", NAMES)
def test_one_step_matches_gymnasium(name):
    """The task's own cone: every copy agrees (Ant: those touching nothing; elliptic cones
    check its contacts below)."""
    env = reference(name)
    triples = transitions(env, 24, seed=NAMES.index(name))
    rows = reference_steps(env, triples)
    obs, rew, term = our_step(name, triples)
    only = None
    if name == "Ant":
        only = ~np.array([r[4] for r in rows])
        assert 4 <= only.sum() < len(rows), "the states should include both kinds"
    compare(name, rows, obs, rew, term, only)
    if name in ("Hopper", "Walker2d", "Ant", "Humanoid"):
        assert any(r[2] for r in rows), "a fall should be among the states"


def test_ant_contacts_match_with_elliptic_cones():
    """Ant's contact forces (a third of its observation) and the steps that touch the floor
    agree once the friction cone has no orientation."""
    env = reference("Ant", cone="elliptic")
    triples = transitions(env, 24, seed=7)
    rows = reference_steps(env, triples)
    assert sum(r[4] for r in rows) >= 4
    obs, rew, term = our_step("Ant", triples, cone="elliptic")
    compare("Ant", rows, obs, rew, term)


@pytest.mark.parametrize("name", ["HalfCheetah", "Hopper", "Ant"])
def test_start_states_follow_the_reset_noise(name):
    """qpos0 plus uniform noise in qpos; uniform or normal noise in qvel, of the task's
    scale; the first observation is that state's (gymnasium's reset_model)."""
    n = 512
    task = getattr(W, name)(num_envs=n)
    obs, _ = task.reset(seed=3)
    s = task.reset_noise_scale
    dq = task.qpos.numpy() - task.mj_model.qpos0
    assert np.abs(dq).max() <= s * (1 + 1e-5)
    assert abs(dq.mean()) < 0.1 * s and dq.std() > 0.5 * s
    v = task.qvel.numpy()
    if task.qvel_noise == "normal":
        assert 0.9 * s < v.std() < 1.1 * s and np.abs(v).max() > s
    else:
        assert np.abs(v).max() <= s * (1 + 1e-5) and v.std() > 0.5 * s
    start = 2 if name == "Ant" else 1
    np.testing.assert_array_equal(obs.numpy()[:, :task.qpos.shape[1] - start],
                                  task.qpos.numpy()[:, start:])


def test_time_limit_and_falls_restart_in_the_same_step():
    task = W.Hopper(num_envs=4, max_episode_steps=3)
    task.reset(seed=0)
    qpos, qvel = task.qpos.clone(), task.qvel.clone()
    qpos[1, 1] = 0.3            # copy 1 starts fallen: unhealthy after its first step
    task.set_state(qpos, qvel)
    zero = torch.zeros(4, 3)
    obs, rew, term, trunc, info = task.step(zero)
    assert term.tolist() == [False, True, False, False] and not trunc.any()
    assert info["_final_obs"].tolist() == [False, True, False, False]
    assert info["final_obs"][1, 0] < 0.7 < obs[1, 0]      # ended low, restarted standing
    assert torch.equal(obs[[0, 2, 3]], info["final_obs"][[0, 2, 3]])
    assert rew[1] < rew[0]                # no healthy reward on the fall
    task.step(zero)
    obs, rew, term, trunc, info = task.step(zero)
    assert trunc.tolist() == [True, False, True, True]    # copy 1 restarted one step later
    assert task.elapsed.tolist() == [0, 2, 0, 0]


def test_seeds_and_checkpoints_reproduce_the_future():
    def run(task, k):
        out = []
        for i in range(k):
            a = torch.full((task.num_envs, 6), 0.3 * (-1) ** i)
            out.append(task.step(a)[0].clone())
        return torch.stack(out)

    a, b = W.HalfCheetah(num_envs=3, max_episode_steps=4), W.HalfCheetah(num_envs=3,
                                                                          max_episode_steps=4)
    assert torch.equal(a.reset(seed=5)[0], b.reset(seed=5)[0])
    assert torch.equal(run(a, 3), run(b, 3))
    saved = a.state_dict()
    later = run(a, 6)                         # crosses a time limit: new start states drawn
    a.load_state_dict(saved)
    assert torch.equal(run(a, 6), later)
    c = W.HalfCheetah(num_envs=3)
    assert not torch.equal(c.reset(seed=6)[0], b.reset(seed=5)[0])


def test_registered_ids_make_the_tasks_and_their_single_envs():
    for env_id, name in zip(WARP_TASK_IDS, NAMES):
        spec = gym.spec(env_id)
        assert spec.max_episode_steps == 1000
        assert spec.vector_entry_point == f"spinup.envs.mujoco_warp:{name}"
    envs = gym.make_vec("spinup/Walker2d-v5", num_envs=2, vectorization_mode="vector_entry_point",
                        device="cpu")
    assert isinstance(envs, W.Walker2d) and envs.single_observation_space.shape == (17,)
    single = gym.make("spinup/Walker2d-v5")
    assert single.observation_space.shape == (17,) and single.spec.max_episode_steps == 1000
    assert W.Humanoid(num_envs=1).single_observation_space.shape == (348,)
    assert W.Ant(num_envs=1).single_observation_space.shape == (105,)


def test_bad_input_is_refused_in_one_line(monkeypatch):
    task = W.HalfCheetah(num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        task.step(torch.zeros(2, 6))
    task.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(2, 6\)"):
        task.step(torch.zeros(2, 5))
    with pytest.raises(ValueError, match="reset_mask"):
        task.reset(options={"reset_mask": np.ones(3, bool)})
    with pytest.raises(ValueError, match="cone must be one of"):
        W.Hopper(num_envs=1, cone="round")
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        W.Hopper(num_envs=1, device="meta")
    real = builtins.__import__

    def no_warp(name, *args, **kwargs):
        if name.startswith("mujoco_warp"):
            raise ImportError("No module named 'mujoco_warp'")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_warp)
    with pytest.raises(ImportError, match=r'pip install "spinup\[gpu\]"'):
        W.Hopper(num_envs=1)


def test_ppo_trains_on_a_warp_task_and_test_policy_replays_it(tmp_path):
    """The CLI path a user takes: --env spinup/Hopper-v5 --num_envs N, then test_policy on
    gymnasium's Hopper-v5 (the id's single env)."""
    import subprocess
    import sys
    out = subprocess.run(
        [sys.executable, "-m", "spinup.run", "ppo", "--env", "spinup/Hopper-v5",
         "--num_envs", "4", "--epochs", "1", "--steps_per_epoch", "200",
         "--hid", "[16]", "--data_dir", str(tmp_path), "--exp_name", "w"],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    run = tmp_path / "w" / "w_s0"
    lines = (run / "progress.txt").read_text().splitlines()
    assert len(lines) == 2 and "AverageEpRet" in lines[0]
    shown = subprocess.run([sys.executable, "-m", "spinup.run", "test_policy", str(run),
                            "-n", "1", "-l", "20", "-nr"],
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "EpLen" in shown.stdout + shown.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", NAMES)
def test_thousands_of_copies_on_the_gpu_match_gymnasium(name):
    """4,096 copies on cuda:0: a sample of 256 checked against the reference, the rest
    finite; the same tolerance as on the CPU."""
    env = reference(name, cone="elliptic" if name == "Ant" else "pyramidal")
    triples = transitions(env, 256, seed=11)
    rows = reference_steps(env, triples)
    many = triples * 16
    obs, rew, term = our_step(name, many, cone="elliptic" if name == "Ant" else "pyramidal",
                              device="cuda:0")
    assert np.isfinite(obs).all() and np.isfinite(rew).all()
    compare(name, rows, obs[:256], rew[:256], term[:256])
    # the same state gives the same step in every copy that holds it
    np.testing.assert_allclose(obs.reshape(16, 256, -1), np.broadcast_to(obs[:256],
                               (16,) + obs[:256].shape), rtol=1e-5, atol=1e-5)


def test_the_docs_page_states_these_tolerances():
    """docs/user/parallel_envs.rst quotes the tolerances of this file: they must agree."""
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "user" / "parallel_envs.rst")
    text = " ".join(page.read_text(encoding="utf-8").split())
    def short(x):                              # 1e-3, as the page writes it
        return f"{x:.0e}".replace("e-0", "e-")
    assert f"agree to {short(TOL)} relative" in text
    assert f"contact solve to {short(FORCE_TOL)};" in text


class _Recorder:
    """Stands in for CUDA graph capture on the CPU: inside ``ScopedCapture`` the simulator's
    calls are recorded instead of run, and ``capture_launch`` replays them, as a graph
    replays its kernels."""

    def __init__(self, wp, mjw, fail=False):
        self.wp, self.mjw, self.fail = wp, mjw, fail
        self.tape, self.captures, self.launches = None, 0, 0

    def __getattr__(self, name):               # warp's other functions: the real ones
        return getattr(self.wp, name)

    def ScopedCapture(self):                   # noqa: N802 (warp's name)
        recorder = self

        class Capture:
            def __enter__(self):
                if recorder.fail:
                    raise RuntimeError("operation not permitted when stream is capturing")
                recorder.tape, recorder.captures = [], recorder.captures + 1
                self.graph = recorder.tape
                return self

            def __exit__(self, *exc):
                recorder.tape = None
        return Capture()

    def capture_launch(self, graph):
        self.launches += 1
        for fn, args, kwargs in graph:
            fn(*args, **kwargs)

    def simulator(self):
        recorder = self

        class Sim:
            def __getattr__(self, name):
                real = getattr(recorder.mjw, name)

                def call(*args, **kwargs):
                    if recorder.tape is None:
                        return real(*args, **kwargs)
                    recorder.tape.append((real, args, kwargs))
                return call
        return Sim()


@pytest.mark.parametrize("fail", [False, True])
def test_graph_path_records_once_and_replays_the_same_physics(fail):
    """The cuda_graph path, run on the CPU with a stand-in for capture: each pass (physics,
    restart, forward) is recorded once and replayed on every later step, and the
    trajectory equals plain launches; a pass that cannot be recorded falls back, with one
    warning."""
    plain, graphed = W.Hopper(num_envs=3, max_episode_steps=2), W.Hopper(num_envs=3,
                                                                       max_episode_steps=2)
    rec = _Recorder(graphed._wp, graphed._mjw, fail=fail)
    graphed._wp, graphed._mjw, graphed.cuda_graph = rec, rec.simulator(), True
    outs = []
    for task in (plain, graphed):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            obs = [task.reset(seed=1)[0]]
            for i in range(5):                        # crosses the time limit twice
                obs.append(task.step(torch.full((3, 3), 0.2 * (-1) ** i))[0])
        outs.append(torch.stack(obs))
    assert len([w for w in caught if "CUDA graph" in str(w.message)]) == int(fail)
    assert torch.equal(outs[0], outs[1])
    if fail:
        assert not graphed.cuda_graph and rec.launches == 0
    else:
        assert rec.captures == 3 and sorted(graphed._graphs) == ["forward", "physics", "reset"]
        assert rec.launches == 2 + 5 * 3      # reset(): restart, forward; a step: all three


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", ["Hopper", "Ant"])
def test_cuda_graphs_replay_what_plain_launches_compute(name):
    """1,024 copies on cuda:0 for 30 steps (restarts included), with and without graphs."""
    outs = []
    for graph in (False, True):
        task = getattr(W, name)(num_envs=1024, device="cuda:0", max_episode_steps=10,
                                cuda_graph=graph)
        obs = [task.reset(seed=2)[0]]
        gen = torch.Generator(device="cuda:0").manual_seed(3)
        for _ in range(30):
            a = 2 * torch.rand(task.action_space.shape, generator=gen, device="cuda:0") - 1
            obs.append(task.step(a)[0])
        assert task.cuda_graph == graph
        outs.append(torch.stack(obs).cpu())
    torch.testing.assert_close(outs[1], outs[0], rtol=1e-4, atol=1e-4)
