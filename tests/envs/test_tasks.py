"""The batched tasks of spinup.envs against gymnasium's own classic-control code.

Parity: every transition of our float32 tensor program is compared with the reference
(float64 numpy) stepped from the same state with the same action. Then: start-state
distribution and same-step restarts, seeding and checkpoints, the VectorEnv interface,
and (with a GPU) CUDA against CPU.
"""
import copy
import importlib
import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

import spinup.envs
from spinup.envs import TASK_IDS, Acrobot, CartPole, MountainCar, MountainCarContinuous, Pendulum

TH12 = 12 * 2 * math.pi / 360
C, S = math.cos(0.1), math.sin(0.1)


def _cartpole_margin(s):
    return min(abs(abs(s[0]) - 2.4), abs(abs(s[2]) - TH12))


def _acrobot_margin(s):
    return abs(-math.cos(s[0]) - math.cos(s[0] + s[1]) - 1.0)


#: Per task: our class, gymnasium's id, distance of a (reference, float64) state to the
#: termination boundary, a wide box to draw test states from (beyond the start states, so
#: that terminations, walls and clipping all happen), and the box holding the start
#: observations (from the reference's reset code).
TASKS = {
    "CartPole": {
        "cls": CartPole, "ref": "CartPole-v1", "margin": _cartpole_margin,
        "wide": ([-2.6, -3, -0.25, -3], [2.6, 3, 0.25, 3]),
        "start_obs": ([-0.05] * 4, [0.05] * 4)},
    "Acrobot": {
        "cls": Acrobot, "ref": "Acrobot-v1", "margin": _acrobot_margin,
        "wide": ([-math.pi, -math.pi, -4 * math.pi, -9 * math.pi],
                 [math.pi, math.pi, 4 * math.pi, 9 * math.pi]),
        "start_obs": ([C, -S, C, -S, -0.1, -0.1], [1, S, 1, S, 0.1, 0.1])},
    "MountainCar": {
        "cls": MountainCar, "ref": "MountainCar-v0",
        "margin": lambda s: min(abs(s[0] - 0.5), abs(s[1])),
        "wide": ([-1.2, -0.07], [0.6, 0.07]), "start_obs": ([-0.6, 0.0], [-0.4, 0.0])},
    "MountainCarContinuous": {
        "cls": MountainCarContinuous, "ref": "MountainCarContinuous-v0",
        "margin": lambda s: min(abs(s[0] - 0.45), abs(s[1])),
        "wide": ([-1.2, -0.07], [0.6, 0.07]), "start_obs": ([-0.6, 0.0], [-0.4, 0.0])},
    "Pendulum": {
        "cls": Pendulum, "ref": "Pendulum-v1", "margin": lambda s: math.inf,
        "wide": ([-3 * math.pi, -8], [3 * math.pi, 8]), "start_obs": ([-1, -1, -1], [1, 1, 1])},
}
NAMES = list(TASKS)

# Tolerances of the parity test: |ours - reference| <= atol + rtol * |reference|, per
# observation column. Our step runs in float32 (unit roundoff 6e-8) and the reference in
# float64 from the same float32 state, so one step differs by a few roundings of numbers of
# order 1 to 10: rtol 1e-5 and atol 1e-5 cover CartPole, MountainCar and Pendulum with a
# margin of 10x (measured worst: about 1e-6).
# Acrobot's rk4 is different: its inner stages evaluate sin/cos at unwrapped angles up to
# ~pi + dt * 9 pi = 9 rad, whose float32 rounding (~1e-6 rad) is multiplied by how fast the
# accelerations change with the angles (terms in omega^2, up to (9 pi)^2 ~ 800) and by dt.
# Over 100,000 states drawn from the whole state box we measured at worst 2.2e-5 on the
# cos/sin columns and 3.6e-3 rad/s on the velocities (which reach 9 pi = 28 rad/s), with a
# median of 5e-7 and a 99th percentile of 3.4e-5: so atol 5e-5 on cos/sin, 1e-2 on the
# velocities, and a separate check that the velocities' 99th percentile stays below 1e-4.
OBS_TOL = {name: (1e-5, 1e-5) for name in NAMES}  # (rtol, atol)
OBS_TOL["Acrobot"] = (1e-5, np.array([5e-5] * 4 + [1e-2] * 2))
# Rewards: exactly equal for CartPole, Acrobot and MountainCar (-1, 0, +1 are exact in
# float32); the float ones (Pendulum's cost, up to 16; MountainCarContinuous's 0.1 a^2) to
# 1e-5.
REW_TOL = {"rtol": 1e-5, "atol": 1e-5}
# A terminated flag may differ only at a state this close to the termination boundary,
# (the size of the observation errors above), where float32 may fall on the other side.
NEAR = {name: 1e-5 for name in NAMES}
NEAR["Acrobot"] = 1e-4


def assert_obs_close(ours, ref, name):
    """Check (N, obs_dim) observations within OBS_TOL[name]; return |ours - ref|."""
    rtol, atol = OBS_TOL[name]
    err = np.abs(np.asarray(ours, np.float64) - ref)
    bad = (err > atol + rtol * np.abs(ref)).any(1)
    assert not bad.any(), f"rows {np.nonzero(bad)[0]}: ours {ours[bad]}, reference {ref[bad]}"
    return err


def random_actions(env, rng):
    """Random actions as a numpy array; Box actions reach 25% beyond the bounds so that the
    task's clipping is exercised."""
    space = env.single_action_space
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, size=env.num_envs)
    low, high = 1.25 * space.low, 1.25 * space.high
    return rng.uniform(low, high, size=(env.num_envs,) + space.shape).astype(np.float32)


def ref_action(space, a):
    return int(a) if isinstance(space, gym.spaces.Discrete) else np.asarray(a, np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_parity_with_gymnasium(name):
    """>= 10,240 transitions (64 copies x 160 steps, time limit 40) equal the reference's."""
    task, limit, n, steps = TASKS[name], 40, 64, 160
    env = task["cls"](num_envs=n, max_episode_steps=limit)
    ref = gym.make(task["ref"], max_episode_steps=limit)
    ref.reset(seed=0)
    raw = ref.unwrapped
    rng = np.random.default_rng(1)
    env.reset(seed=2)
    wide_low, wide_high = map(np.array, task["wide"])
    counts, errors = {"terminated": 0, "truncated": 0, "near_flips": 0}, []
    for _ in range(steps):
        # Move about a tenth of the copies to states drawn from the wide box.
        state = env.state.numpy().copy()
        moved = rng.random(n) < 0.1
        state[moved] = rng.uniform(wide_low, wide_high, size=(moved.sum(), len(wide_low)))
        env.state = torch.as_tensor(state)
        start, elapsed = env.state.numpy().astype(np.float64), env.elapsed.numpy().copy()
        actions = random_actions(env, rng)

        obs, rew, term, trunc, info = env.step(torch.as_tensor(actions))

        final = info["final_obs"].numpy()
        done = info["_final_obs"].numpy()
        assert np.array_equal(done, (term | trunc).numpy())
        assert np.array_equal(obs.numpy()[~done], final[~done])
        r_obs, r_rew, r_term, r_trunc, margin = [], [], [], [], []
        for i in range(n):
            raw.state = start[i].copy()
            ref._elapsed_steps = int(elapsed[i])  # the TimeLimit wrapper's counter
            if hasattr(raw, "steps_beyond_terminated"):
                raw.steps_beyond_terminated = None  # CartPole: as just after a reset
            o, r, te, tr, _ = ref.step(ref_action(env.single_action_space, actions[i]))
            r_obs.append(o), r_rew.append(r), r_term.append(te), r_trunc.append(tr)
            margin.append(task["margin"](np.asarray(raw.state, np.float64)))
        r_obs, r_rew, r_term = np.array(r_obs), np.array(r_rew), np.array(r_term)
        errors.append(assert_obs_close(final, r_obs, name))
        assert np.array_equal(trunc.numpy(), np.array(r_trunc))
        # A terminated flag may flip only within NEAR of the boundary; the reward (which
        # depends on it for Acrobot and MountainCarContinuous) is then not compared.
        flip = term.numpy() != r_term
        assert np.all(np.array(margin)[flip] < NEAR[name]), np.array(margin)[flip]
        if isinstance(env.single_action_space, gym.spaces.Discrete):
            assert np.array_equal(rew.numpy()[~flip], r_rew[~flip])
        else:
            np.testing.assert_allclose(rew.numpy()[~flip], r_rew[~flip], **REW_TOL)
        counts["near_flips"] += flip.sum()
        counts["terminated"] += r_term.sum()
        counts["truncated"] += sum(r_trunc)
    assert counts["near_flips"] <= 1e-3 * n * steps, counts
    assert counts["truncated"] > 0, counts
    if name != "Pendulum":  # Pendulum never terminates
        assert counts["terminated"] > 0, counts
    errors = np.concatenate(errors)
    assert np.all(np.quantile(errors, 0.99, axis=0) < 1e-4), np.quantile(errors, 0.99, axis=0)


def _in_box(x, low, high):
    return bool(np.all(x >= np.array(low, np.float32)) and np.all(x <= np.array(high, np.float32)))


@pytest.mark.parametrize("name", NAMES)
def test_reset_distribution_and_same_step_restart(name):
    task = TASKS[name]
    low, high = task["start_obs"]
    # The bounds are the reference's: its own start observations lie in them.
    ref = gym.make(task["ref"])
    assert all(_in_box(ref.reset(seed=s)[0], low, high) for s in range(50))

    env = task["cls"](num_envs=4096, max_episode_steps=5)
    obs, info = env.reset(seed=0)
    assert info == {} and _in_box(obs.numpy(), low, high)
    width = np.array(high) - np.array(low)
    # Spread over the whole box, not a corner of it.
    assert np.all(obs.numpy().min(0) <= np.array(low) + 0.05 * width + 1e-6)
    assert np.all(obs.numpy().max(0) >= np.array(high) - 0.05 * width - 1e-6)
    if name == "Pendulum":  # the angle itself spans [-pi, pi]
        assert env.state[:, 0].min() < -3.0 and env.state[:, 0].max() > 3.0

    rng = np.random.default_rng(0)
    for _ in range(5):
        before = env.elapsed.clone()
        obs, _, _, trunc, info = env.step(random_actions(env, rng))
        done = info["_final_obs"]
        assert torch.equal(trunc, before + 1 >= 5)
        # Finished copies start again in this very call; the others count on.
        assert _in_box(obs[done].numpy(), low, high)
        assert torch.all(env.elapsed[done] == 0)
        assert torch.equal(env.elapsed[~done], before[~done] + 1)
    assert trunc.all()  # every copy hit the limit of 5 at the latest on step 5

    # reset_mask restarts only the chosen copies.
    env.step(random_actions(env, rng))
    state, elapsed = env.state.clone(), env.elapsed.clone()
    mask = np.arange(4096) % 3 == 0
    obs, _ = env.reset(options={"reset_mask": mask})
    m = torch.as_tensor(mask)
    assert torch.equal(env.state[~m], state[~m]) and torch.equal(env.elapsed[~m], elapsed[~m])
    assert torch.all(env.elapsed[m] == 0) and _in_box(obs[m].numpy(), low, high)


def _rollout(env, steps, seed=5):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(random_actions(env, rng))
        out += [obs, rew, term, trunc, info["final_obs"]]
    return out


def _same(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("name", NAMES)
def test_seeding_and_checkpoints(name):
    cls = TASKS[name]["cls"]
    a, b = cls(num_envs=32, max_episode_steps=15), cls(num_envs=32, max_episode_steps=15)
    assert torch.equal(a.reset(seed=3)[0], b.reset(seed=3)[0])
    assert _same(_rollout(a, 40), _rollout(b, 40))  # restarts included (limit 15)
    assert not torch.equal(a.reset(seed=3)[0], b.reset(seed=4)[0])
    # Unseeded first resets draw fresh entropy: different start states.
    c, d = cls(num_envs=32), cls(num_envs=32)
    assert not torch.equal(c.reset()[0], d.reset()[0])
    # state_dict / load_state_dict and deepcopy continue exactly.
    a.reset(seed=7)
    _rollout(a, 10)
    saved, twin = a.state_dict(), copy.deepcopy(a)
    first = _rollout(a, 30)
    _rollout(a, 3)
    a.load_state_dict(saved)
    assert _same(_rollout(a, 30), first)
    assert _same(_rollout(twin, 30), first)
    e = cls(num_envs=32, max_episode_steps=15)
    e.load_state_dict(saved)
    assert _same(_rollout(e, 30), first)


@pytest.mark.parametrize("name", NAMES)
def test_interface(name):
    task, n = TASKS[name], 6
    env = task["cls"](num_envs=n)
    ref = gym.make(task["ref"])
    assert env.single_observation_space == ref.observation_space
    assert env.single_action_space == ref.action_space
    assert env.observation_space.shape == (n,) + ref.observation_space.shape
    assert env.action_space.shape == (n,) + ref.action_space.shape
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP

    env_id = f"spinup/{task['ref']}"
    assert env_id in TASK_IDS
    for mode in ("vector_entry_point", None):
        v = gym.make_vec(env_id, num_envs=n, vectorization_mode=mode)
        assert type(v) is task["cls"] and v.num_envs == n
        assert v.max_episode_steps == ref.spec.max_episode_steps
    v = gym.make_vec(env_id, num_envs=2, device="cpu", max_episode_steps=7)
    assert v.device == torch.device("cpu") and v.max_episode_steps == 7
    assert type(gym.make(env_id).unwrapped) is type(ref.unwrapped)

    # Types and shapes; numpy and tensor actions give the same step.
    obs, _ = env.reset(seed=0)
    twin = copy.deepcopy(env)
    actions = random_actions(env, np.random.default_rng(0))
    out_np = env.step(actions)
    out_t = twin.step(torch.as_tensor(actions))
    obs, rew, term, trunc, info = out_np
    assert obs.dtype == torch.float32 and obs.shape == (n,) + ref.observation_space.shape
    assert rew.dtype == torch.float32 and rew.shape == (n,)
    assert term.dtype == trunc.dtype == info["_final_obs"].dtype == torch.bool
    assert term.shape == trunc.shape == (n,) and info["final_obs"].shape == obs.shape
    assert all(torch.equal(x, y) for x, y in zip(out_np[:4], out_t[:4]))
    assert all(env.single_observation_space.contains(o) for o in env.reset()[0].numpy())
    # Outputs belong to the caller: changing them in place leaves the task alone.
    env.reset(seed=1)[0].add_(1.0)
    twin.reset(seed=1)
    for _ in range(3):
        o, _, _, _, info = env.step(actions)
        o.add_(1.0), info["final_obs"].add_(1.0)
        twin.step(actions)
    assert torch.equal(env.state, twin.state)

    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match=task["cls"].name):
            task["cls"](num_envs=bad)
    for bad in (0, 1.5):
        with pytest.raises(ValueError, match=task["cls"].name):
            task["cls"](num_envs=2, max_episode_steps=bad)
    with pytest.raises(ValueError, match=task["cls"].name):
        env.step(np.zeros((n + 1,) + ref.action_space.shape))
    with pytest.raises(RuntimeError, match=task["cls"].name):
        task["cls"](num_envs=2).step(np.zeros((2,) + ref.action_space.shape))
    env.close()


def test_registration_is_idempotent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(spinup.envs)
    assert all(i in gym.registry for i in TASK_IDS)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", NAMES)
def test_cuda_matches_cpu(name):
    """Step on CUDA from the CPU copy's state: same transitions within float32 tolerance.
    (The two devices' generators differ, so states are copied over before every step.)"""
    cls, n = TASKS[name]["cls"], 1024
    cpu, gpu = cls(num_envs=n, max_episode_steps=30), cls(num_envs=n, device="cuda",
                                                          max_episode_steps=30)
    cpu.reset(seed=0)
    gpu.reset(seed=0)
    assert gpu.state.device.type == "cuda"
    rng = np.random.default_rng(0)
    for _ in range(60):
        gpu.state, gpu.elapsed = cpu.state.cuda(), cpu.elapsed.cuda()
        actions = torch.as_tensor(random_actions(cpu, rng))
        c = cpu.step(actions)
        g = gpu.step(actions.cuda())
        assert g[0].device.type == "cuda"
        assert_obs_close(g[4]["final_obs"].cpu().numpy(), c[4]["final_obs"].numpy(), name)
        flip = g[2].cpu() != c[2]  # terminated at a state on the boundary: rare
        assert flip.float().mean() < 1e-3
        torch.testing.assert_close(g[1].cpu()[~flip], c[1][~flip], **REW_TOL)
        assert torch.equal(g[3].cpu(), c[3])
    # Checkpoints and copies of a CUDA task continue exactly, on CUDA.
    saved, twin = gpu.state_dict(), copy.deepcopy(gpu)
    first = _rollout(gpu, 20)
    gpu.load_state_dict(saved)
    assert _same(_rollout(gpu, 20), first) and _same(_rollout(twin, 20), first)
    assert twin.state.device.type == "cuda"
