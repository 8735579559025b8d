"""DDPG, TD3, SAC and DQN stepping ``num_envs`` env copies at once: runs on batched tasks,
the replay buffers' batched store (final observations of finished copies, wrap-around,
DQN's n-step returns per copy), the number of updates per round (``updates_per_step``),
the refusal of a mismatched batched task, exact resumes and the CLI.

With ``num_envs=1`` and a gymnasium env the four algorithms give the tables they gave
before batching was added, bit for bit; tests/test_same_numbers.py and the algorithms' own
tests hold them to that.
"""
import json
import os

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import spinup.algos.ddpg.ddpg as ddpg_mod
import spinup.algos.dqn.dqn as dqn_mod
import spinup.algos.sac.sac as sac_mod
import spinup.algos.td3.td3 as td3_mod
import spinup.envs  # noqa: F401  (registers spinup/Pendulum-v1, spinup/CartPole-v1)
from conftest import read_progress, run_cli
from spinup.machinery import update_graph
from spinup.machinery.door import Run

# One torch thread in every test of this file (the fixture is in conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")

MODULES = {"ddpg": ddpg_mod, "td3": td3_mod, "sac": sac_mod, "dqn": dqn_mod}
TASKS = {"ddpg": "spinup/Pendulum-v1", "td3": "spinup/Pendulum-v1", "sac": "spinup/Pendulum-v1",
         "dqn": "spinup/CartPole-v1"}
SINGLE = {"ddpg": "Pendulum-v1", "td3": "Pendulum-v1", "sac": "Pendulum-v1",
          "dqn": "CartPole-v1"}
SMALL = dict(steps_per_epoch=96, start_steps=32, update_after=32, update_every=16,
             batch_size=8, num_test_episodes=1, max_ep_len=50, ac_kwargs=dict(hidden_sizes=(8,)))


def algo_fn(name):
    return getattr(MODULES[name], name)


def batched(env_id, n):
    return lambda: gym.make_vec(env_id, num_envs=n)


def table(run_dir):
    return pd.read_table(os.path.join(run_dir, "progress.txt")).drop(columns="Time")


# ---- Runs on a batched task ----

@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_run_on_a_batched_task_counts_every_copys_steps(name, tmp_path):
    # 12 steps per copy an epoch: max_ep_len=10 cuts episodes (envs.reset_copies)
    algo_fn(name)(batched(TASKS[name], 8), num_envs=8, epochs=2,
                  logger_kwargs=dict(output_dir=str(tmp_path)), **dict(SMALL, max_ep_len=10))
    df = read_progress(tmp_path)
    assert df["TotalEnvInteracts"].tolist() == [96, 192]
    assert np.isfinite(df["LossQ"]).all() and 1 <= df["EpLen"].min() <= df["EpLen"].max() <= 10
    with open(tmp_path / "config.json") as f:
        assert json.load(f)["num_envs"] == 8


def test_gymnasium_sync_vector_env_with_same_step_reset_is_a_batched_task(tmp_path):
    make = lambda: gym.make_vec(  # noqa: E731
        "Pendulum-v1", num_envs=4, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})
    sac_mod.sac(make, num_envs=4, epochs=1, logger_kwargs=dict(output_dir=str(tmp_path)),
                **dict(SMALL, max_ep_len=200))   # Pendulum's own time limit ends the episodes
    df = read_progress(tmp_path)
    assert df["TotalEnvInteracts"].tolist() == [96] and np.isfinite(df["LossPi"]).all()


# ---- The batched store ----

def hand_made_batch(step, n=3, obs_dim=2, act_dim=1):
    """Rows ``step * 10 + copy`` in every field; the middle copy's episode ended (its
    final observation differs from the reset one that ``envs.step`` returned)."""
    ids = step * 10 + np.arange(n, dtype=np.float32)
    obs = np.repeat(ids[:, None], obs_dim, 1)
    act = np.repeat(ids[:, None], act_dim, 1)
    obs2 = obs + 0.5
    ended = np.arange(n) == 1
    final_obs = [None] * n
    final_obs[1] = obs[1] + 0.25
    return obs, act, ids, obs2, final_obs, ended


@pytest.mark.parametrize("name", ["ddpg", "td3", "sac"])
def test_store_batch_writes_the_copies_rows_with_final_obs_and_wraps(name):
    mod = MODULES[name]
    buf = mod.ReplayBuffer(obs_dim=(2,), act_dim=1, size=5)
    written = {}
    for step in range(2):   # rows 0, 1, 2, then 3, 4, 0 (across the end)
        obs, act, rew, obs2, final_obs, ended = hand_made_batch(step)
        next_obs = mod.core.next_states(obs2, final_obs, ended)
        assert next_obs[1].tolist() == final_obs[1].tolist()      # the ended copy's last state
        assert next_obs[0].tolist() == obs2[0].tolist()
        buf.store_batch(obs, act, rew, next_obs, ended)
        for i in range(3):
            written[(3 * step + i) % 5] = (obs[i], act[i], rew[i], next_obs[i], ended[i])
    assert buf.ptr == 1 and buf.size == 5
    for row, (obs, act, rew, next_obs, done) in written.items():
        assert buf.obs_buf[row].tolist() == obs.tolist()
        assert buf.act_buf[row].tolist() == act.tolist()
        assert buf.rew_buf[row] == rew and buf.done_buf[row] == float(done)
        assert buf.obs2_buf[row].tolist() == next_obs.tolist()
    assert buf.rew_buf.tolist() == [12, 1, 2, 10, 11]   # row 0 overwritten by the 2nd batch


def test_next_states_leaves_the_array_alone_when_no_copy_ended():
    obs = np.ones((3, 2), np.float32)
    assert sac_mod.core.next_states(obs, [None] * 3, np.zeros(3, bool)) is obs


@pytest.mark.parametrize("prioritized", [False, True])
def test_dqn_store_batch_and_its_sum_tree(prioritized):
    if prioritized:
        buf = dqn_mod.PrioritizedReplayBuffer((2,), 5, num_envs=3)
        buf.max_priority = 2.0
    else:
        buf = dqn_mod.ReplayBuffer((2,), 5, num_envs=3)
    for step in range(2):
        obs, act, rew, obs2, final_obs, ended = hand_made_batch(step)
        buf.store_batch(obs, act[:, 0].astype(np.int64), rew,
                        dqn_mod.core.next_states(obs2, final_obs, ended), ended, ended)
    assert buf.ptr == 1 and buf.size == 5
    assert buf.rew_buf.tolist() == [12, 1, 2, 10, 11]
    assert buf.act_buf.tolist() == [12, 1, 2, 10, 11]
    assert buf.obs2_buf[:, 0].tolist() == [12.5, 1.25, 2.5, 10.5, 11.25]   # copy 1 ended
    assert buf.end_buf.tolist() == [False, True, False, False, True]
    if prioritized:
        assert buf.tree.get(np.arange(5)).tolist() == [2.0] * 5 and buf.tree.total() == 10.0


def test_dqn_n_step_returns_follow_one_copy_through_the_buffer():
    """Two copies stored together: copy c's step k is slot 2k + c. A return sums its own
    copy's rewards (slots 2 apart), stops after an end and at the copy's newest slot, and
    steps across the end of the buffer once it has wrapped."""
    g = 0.5
    buf = dqn_mod.ReplayBuffer((1,), 10, gamma=g, n_step=3, num_envs=2)

    def store(rews, ends):
        rews = np.array(rews, np.float32)
        buf.store_batch(rews[:, None], np.zeros(2, np.int64), rews, rews[:, None] + 0.5,
                        np.zeros(2), np.array(ends))

    store([1, 10], [False, False])
    store([2, 20], [False, True])     # copy 1's episode ends here
    store([3, 30], [False, False])    # slots 4, 5; ptr = 6
    batch = buf.get(np.array([0, 1, 2, 4, 5]))
    assert batch["ret"].tolist() == [1 + g * 2 + g * g * 3, 10 + g * 20, 2 + g * 3, 3, 30]
    assert batch["disc"].tolist() == [g ** 3, g ** 2, g ** 2, g, g]
    assert batch["obs2"][:, 0].tolist() == [3.5, 20.5, 3.5, 3.5, 30.5]
    for k in range(3):                # slots 6..9, then 0, 1: ptr = 2, slot 2 the oldest
        store([4 + k, 40 + k], [False, False])
    batch = buf.get(np.array([8, 9]))  # copy 0: slots 8, 0 (its newest); copy 1: 9, 1
    assert batch["ret"].tolist() == [5 + g * 6, 41 + g * 42]
    assert batch["disc"].tolist() == [g ** 2, g ** 2]


# ---- Updates per round ----

@pytest.mark.parametrize("name, update_every, updates_per_step, rounds, per_round", [
    ("ddpg", 16, 1.0, 4, 16),      # rounds at t' = 32, 48, 64, 80
    ("ddpg", 16, 0.5, 4, 8),
    ("td3", 16, 1.3, 4, 21),       # round(20.8)
    ("sac", 4, 1.0, 16, 4),        # two rounds in each batch step of 8 env steps
    ("sac", 16, 0.25, 4, 4),
    ("dqn", 16, None, 4, 1),       # DQN's own schedule: one gradient step a round
    ("dqn", 4, 0.75, 16, 3),       # a ratio, as for the others: round(4 * 0.75)
])
def test_each_round_takes_round_of_update_every_times_updates_per_step(
        name, update_every, updates_per_step, rounds, per_round, tmp_path, monkeypatch):
    """Counted by the target-network updates (one per gradient step; SAC moves two) and
    grouped into rounds by ``run.refresh``, called once after each round."""
    mod, seen, counts = MODULES[name], [], []
    real_polyak = mod.polyak_update

    def counting_polyak(net, targ, rho):
        seen.append(rho)
        real_polyak(net, targ, rho)

    refresh = Run.refresh
    monkeypatch.setattr(mod, "polyak_update", counting_polyak)
    monkeypatch.setattr(Run, "refresh", lambda run: (counts.append(len(seen)), refresh(run)))
    extra = dict(policy_delay=1) if name == "td3" else dict(polyak=0.9) if name == "dqn" else {}
    algo_fn(name)(batched(TASKS[name], 8), num_envs=8, epochs=1,
                  updates_per_step=updates_per_step,
                  logger_kwargs=dict(output_dir=str(tmp_path)),
                  **dict(SMALL, update_every=update_every, num_test_episodes=0), **extra)
    per_update = 2 if name == "sac" else 1
    assert np.diff([0] + counts).tolist() == [per_round * per_update] * rounds


@pytest.mark.parametrize("name, updates_per_step", [("sac", 0.01), ("dqn", 0.02)])
def test_a_ratio_that_rounds_to_no_update_is_refused(name, updates_per_step, tmp_path):
    """round(update_every * updates_per_step) = 0 would train nothing, silently."""
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"updates_per_step=.*round\(update_every"):
        algo_fn(name)(batched(TASKS[name], 8), num_envs=8,
                      updates_per_step=updates_per_step,
                      logger_kwargs=dict(output_dir=str(out)), **SMALL)
    assert not out.exists()


# ---- Refusals ----

@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_batched_task_with_another_num_envs_is_refused_before_anything_is_written(
        name, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="num_envs=4"):
        algo_fn(name)(batched(TASKS[name], 8), num_envs=4, epochs=1,
                      logger_kwargs=dict(output_dir=str(out)), **SMALL)
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_steps_per_epoch_must_be_a_multiple_of_num_envs(name, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="multiple of num_envs"):
        algo_fn(name)(lambda: gym.make(SINGLE[name]), num_envs=5, epochs=1,
                      logger_kwargs=dict(output_dir=str(out)), **SMALL)
    assert not out.exists()


# ---- Resume ----

@pytest.mark.parametrize("name, batched_task", [
    ("sac", False), ("sac", True), ("td3", True), ("ddpg", True), ("dqn", False),
    ("dqn", True)])
def test_resume_with_four_envs_is_exact(name, batched_task, tmp_path):
    """Stopped after epoch 2 and resumed: the same progress.txt as a straight run, with
    four gymnasium envs (each restored from its checkpointed state) or a batched task."""
    make = batched(TASKS[name], 4) if batched_task else lambda: gym.make(SINGLE[name])
    kw = dict(SMALL, steps_per_epoch=64, num_envs=4, seed=1)
    if name == "dqn":   # n-step returns per copy; prioritized replay. The lr and beta
        # schedules span the epochs asked for (2, then 3): keep them flat
        kw.update(n_step=3, prioritized_replay=True, per_beta=1.0, anneal_lr=False)
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    algo = algo_fn(name)
    algo(make, epochs=3, logger_kwargs=dict(output_dir=full), **kw)
    algo(make, epochs=2, logger_kwargs=dict(output_dir=cut), **kw)
    algo(make, epochs=3, logger_kwargs=dict(output_dir=cut, resume=True), **kw)
    assert len(table(cut)) == 3
    pd.testing.assert_frame_equal(table(full), table(cut), check_exact=True)


# ---- The GPU path, run on the CPU ----

@pytest.mark.parametrize("name, updates_per_step", [("sac", 1.0), ("td3", 0.6)])
def test_device_path_with_several_envs_gives_the_plain_loops_table(name, updates_per_step,
                                                                   tmp_path):
    """The GPU path (update_graph.uses_device_path patched to say yes, no graph) must give
    the plain loop's table; replay_size 150 makes the device copy's syncs wrap."""
    def run(out, device_path):
        plain = update_graph.uses_device_path
        update_graph.uses_device_path = (lambda device: True) if device_path else plain
        try:
            algo_fn(name)(lambda: gym.make("Pendulum-v1"), num_envs=4, epochs=1, seed=2,
                          replay_size=150, updates_per_step=updates_per_step,
                          logger_kwargs=dict(output_dir=str(out)),
                          **dict(SMALL, steps_per_epoch=200, update_every=25))
        finally:
            update_graph.uses_device_path = plain
        return table(out)

    pd.testing.assert_frame_equal(run(tmp_path / "plain", False), run(tmp_path / "dev", True),
                                  check_exact=True)


# ---- CLI ----

def test_cli_runs_sac_on_a_batched_task(tmp_path):
    run_cli("sac", "--env", "spinup/Pendulum-v1", "--num_envs", 4, "--epochs", 1,
            "--steps_per_epoch", 200, "--start_steps", 100, "--update_after", 100,
            "--updates_per_step", 0.5, "--batch_size", 16, "--hid", "[16]",
            "--num_test_episodes", 1, "--max_ep_len", 50, "--exp_name", "batched",
            "--data_dir", tmp_path, timeout=300)
    run_dir = os.path.join(tmp_path, "batched", "batched_s0")
    assert read_progress(run_dir)["TotalEnvInteracts"].tolist() == [200]
    with open(os.path.join(run_dir, "config.json")) as f:
        config = json.load(f)
    assert config["num_envs"] == 4 and config["updates_per_step"] == 0.5


def test_a_batched_task_without_a_single_env_is_refused_before_anything_is_written(tmp_path):
    """The test episodes need one plain copy of the task: a task whose id names no
    entry_point is refused up front, with what to do."""
    from spinup.examples.reach import register
    register()   # spinup/Reach-v0: a vector entry point only
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="sac: its test episodes need one copy .*entry_point"):
        algo_fn("sac")(lambda: gym.make_vec("spinup/Reach-v0", num_envs=4), num_envs=4,
                       logger_kwargs=dict(output_dir=str(out)), **SMALL)
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_replay_smaller_than_one_batch_step_is_refused(name, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"replay_size=4 is not allowed: an int >= num_envs \(8\)"):
        algo_fn(name)(batched(TASKS[name], 8), num_envs=8, replay_size=4,
                      logger_kwargs=dict(output_dir=str(out)), **SMALL)
    assert not out.exists()
