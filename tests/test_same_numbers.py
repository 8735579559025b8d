"""A run's numbers depend on its arguments, seed, library versions and CPU, never on how
it was launched (DESIGN 16, issue 40), and every run records what they depend on.

The launchers differ in one thing a run could feel: how many torch threads the process
starts with (a serial grid leaves torch's default, ``--jobs N`` hands each variant
``cores // N``). A sum split over two threads is added in another order, and on some
CPUs that changes the last bits of a loss. So every algorithm trains with
``RUN_THREADS`` torch threads whatever its caller set; these tests check that in each
algorithm on any machine (the thread count inside the optimizer steps), and that the
caller's count comes back. ``tests/utils/test_grid_launch.py`` compares the tables of
real serial, ``--jobs 2``, Ray and single-seed launches.
"""
import json
import os.path as osp

import gymnasium as gym
import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

import spinup
from spinup.machinery.provenance import (NUMBERS_KEYS, PROVENANCE_NAME, numbers_signature,
                                     provenance, read_provenance)
from spinup.machinery.device import RUN_THREADS

OFF_POLICY = dict(steps_per_epoch=120, epochs=1, start_steps=60, update_after=60,
                  update_every=30, batch_size=16, num_test_episodes=1, max_ep_len=50)
CASES = {
    "vpg": ("CartPole-v1", dict(steps_per_epoch=100, epochs=1, train_v_iters=2)),
    "trpo": ("CartPole-v1", dict(steps_per_epoch=100, epochs=1, train_v_iters=2)),
    "npg": ("CartPole-v1", dict(steps_per_epoch=100, epochs=1, train_v_iters=2)),
    "ppo": ("CartPole-v1", dict(steps_per_epoch=100, epochs=1, train_pi_iters=2,
                                train_v_iters=2)),
    "a2c": ("CartPole-v1", dict(steps_per_epoch=100, epochs=1)),
    "ddpg": ("Pendulum-v1", OFF_POLICY),
    "td3": ("Pendulum-v1", OFF_POLICY),
    "sac": ("Pendulum-v1", OFF_POLICY),
    "dqn": ("CartPole-v1", dict(OFF_POLICY, start_steps=0, update_every=10)),
}
CALLER_THREADS = 3  # not RUN_THREADS, and possible on any machine (torch allows more)


@pytest.fixture
def caller_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(CALLER_THREADS)
    yield CALLER_THREADS
    torch.set_num_threads(before)


@pytest.mark.parametrize("algo", sorted(CASES))
def test_training_uses_run_threads_whatever_the_caller_set(algo, tmp_path, caller_threads):
    """Every optimizer step of the run happens on RUN_THREADS threads although the
    caller had set another count, which is back when the algorithm returns. (A3C's
    workers are processes of their own that set RUN_THREADS when they start; its numbers
    depend on how they are scheduled anyway.)"""
    env_id, kwargs = CASES[algo]
    seen = []
    hook = register_optimizer_step_pre_hook(
        lambda optimizer, args, kw: seen.append(torch.get_num_threads()))
    try:
        getattr(spinup, algo)(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(8,)),
                              seed=0, logger_kwargs=dict(output_dir=str(tmp_path)), **kwargs)
    finally:
        hook.remove()
    assert seen and set(seen) == {RUN_THREADS}, (algo, sorted(set(seen)))
    assert torch.get_num_threads() == caller_threads


def test_same_table_whatever_thread_count_the_caller_had(tmp_path):
    """PPO from a caller with one thread and from one with three: the same table."""
    env_id, kwargs = CASES["ppo"]
    tables = []
    for threads in (1, CALLER_THREADS):
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        out = tmp_path / f"t{threads}"
        try:
            spinup.ppo(lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(16,)), seed=3,
                       logger_kwargs=dict(output_dir=str(out)), **dict(kwargs, epochs=2))
        finally:
            torch.set_num_threads(before)
        with open(out / "progress.txt") as f:
            tables.append([line.split("\t")[:-1] for line in f])  # Time is the last column
    assert tables[0] == tables[1]


def test_every_run_writes_its_provenance_and_a_resume_adds_a_record(tmp_path):
    env_id, kwargs = CASES["ppo"]
    run = lambda epochs, **logger: spinup.ppo(  # noqa: E731
        lambda: gym.make(env_id), ac_kwargs=dict(hidden_sizes=(8,)), seed=0,
        logger_kwargs=dict(output_dir=str(tmp_path), **logger), **dict(kwargs, epochs=epochs))
    run(1)
    record = read_provenance(str(tmp_path))
    assert record == json.load(open(tmp_path / PROVENANCE_NAME))["run"]
    here = provenance()
    for key in NUMBERS_KEYS + ("spinup", "python"):
        assert record[key] == here[key], key
    assert record["threads"] == RUN_THREADS and record["processes"] == 1
    assert record["torch"] == torch.__version__ and record["device"] == "cpu"
    assert record["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert numbers_signature(record) == numbers_signature(here)

    run(2, resume=True)
    data = json.load(open(tmp_path / PROVENANCE_NAME))
    assert data["run"] == record and len(data["resumed"]) == 1
    assert numbers_signature(data["resumed"][0]) == numbers_signature(here)

    run(1, overwrite=True)   # a new run in the directory: a new file, no resume records
    assert list(json.load(open(tmp_path / PROVENANCE_NAME))) == ["run"]


def test_a_run_from_before_provenance_has_none(tmp_path):
    assert read_provenance(str(tmp_path)) is None
    (tmp_path / PROVENANCE_NAME).write_text("{not json")
    assert read_provenance(str(tmp_path)) is None
    assert not osp.exists(tmp_path / "missing" / PROVENANCE_NAME)
