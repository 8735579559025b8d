"""benchmarks/parallel_envs.py still measures what docs/benchmarks/parallel.rst shows (tiny
sizes; the numbers themselves are not checked: a speed depends on the machine)."""
import pytest
import torch

from conftest import load_benchmark

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("parallel_envs")


def test_ppo_collection_and_epoch_rates_are_positive(bench):
    collect, epoch = bench.ppo_rates("CartPole-v1", 4096)
    assert collect > epoch > 0


def test_replay_write_clocks_count_batch_steps(bench):
    assert bench.sac_collect("Pendulum-v1", 8, batches=16) > 0
    assert bench.dqn_collect("CartPole-v1", 8, batches=16) > 0


def test_plain_loop_and_split(bench):
    assert bench.plain_loop_us("CartPole-v1", steps=50) > 0
    collect_s, update_s = bench.ppo_split(2048, epochs=3)
    assert collect_s > 0 and update_s > 0
    assert torch.get_num_threads() == 1
