"""VPG, TRPO, PPO and A2C on batched tasks (issue 55): ``env_fn`` returning a
``gymnasium.vector.VectorEnv`` of ``num_envs`` copies, from Python and the CLI; exact
resume; refusals (another number of copies, a task that resets on the next step, A3C)."""
import json

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import spinup.envs  # noqa: F401  (registers spinup/CartPole-v1 and the others)
from conftest import read_progress, run_cli
from spinup import a2c, a3c, ppo, trpo, vpg
from spinup.envs.batch import BatchedTask, EnvList

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = dict(ac_kwargs=dict(hidden_sizes=(16,)))
ALGOS = {"vpg": (vpg, dict(SMALL, train_v_iters=2)),
         "trpo": (trpo, dict(SMALL, train_v_iters=2)),
         "ppo": (ppo, dict(SMALL, train_pi_iters=3, train_v_iters=2)),
         "a2c": (a2c, dict(SMALL, n_steps=5, anneal_lr=False))}  # lr schedule: by epochs


def task(env_id="spinup/CartPole-v1", n=8):
    return lambda: gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")


def same_step(env_id, n):
    """gymnasium's own SyncVectorEnv, resetting a finished copy in the same step."""
    return lambda: gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", vector_kwargs={
        "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})


@pytest.mark.parametrize("name", sorted(ALGOS))
@pytest.mark.parametrize("env_id", ["spinup/CartPole-v1", "spinup/Pendulum-v1"])
def test_trains_on_a_batched_task_and_resumes_exactly(tmp_path, name, env_id):
    """A run of 3 epochs equals a run stopped after 2 and resumed, to the last bit; every
    epoch counts num_envs copies' steps."""
    algo, kw = ALGOS[name]
    kw = dict(kw, num_envs=8, steps_per_epoch=160, seed=1, max_ep_len=60)
    full, cut = str(tmp_path / "full"), str(tmp_path / "cut")
    algo(task(env_id), epochs=3, logger_kwargs=dict(output_dir=full), **kw)
    algo(task(env_id), epochs=2, logger_kwargs=dict(output_dir=cut), **kw)
    algo(task(env_id), epochs=3, logger_kwargs=dict(output_dir=cut, resume=True), **kw)
    a, b = (pd.read_table(f"{d}/progress.txt").drop(columns="Time") for d in (full, cut))
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert list(a["TotalEnvInteracts"]) == [160, 320, 480]
    assert a["EpLen"].max() <= 60   # max_ep_len cuts every copy


def test_gymnasium_same_step_vector_env_is_a_batched_task(tmp_path):
    ppo(same_step("CartPole-v1", 4), num_envs=4, steps_per_epoch=80, epochs=1,
        logger_kwargs=dict(output_dir=str(tmp_path)), **ALGOS["ppo"][1])
    assert read_progress(tmp_path)["TotalEnvInteracts"].tolist() == [80]


def test_final_obs_of_a_gymnasium_vector_env_becomes_an_array():
    """gymnasium's SyncVectorEnv hands final observations as an object array with None for
    the copies that go on; BatchedTask gives rows, the final observation where a copy
    ended and the current one elsewhere."""
    envs = BatchedTask(same_step("CartPole-v1", 3)())
    obs = envs.reset(0)
    assert obs.shape == (3, 4)
    ended = 0
    for _ in range(60):
        obs, rew, terminated, truncated, final_obs = envs.step(np.zeros(3, dtype=np.int64))
        done = terminated | truncated
        assert final_obs.shape == (3, 4) and final_obs.dtype == np.float32
        assert np.array_equal(final_obs[~done], obs[~done])
        # pushed left all the time, a pole falls: its final state is out of bounds
        assert (np.abs(final_obs[done][:, 2]) > 0.2095).all() or \
            (np.abs(final_obs[done][:, 0]) > 2.4).all()
        ended += done.sum()
    assert ended >= 3


def test_env_list_resets_finished_envs_and_keeps_their_last_observation():
    envs = EnvList([gym.make("CartPole-v1") for _ in range(2)])
    envs.reset(5)
    for _ in range(40):
        obs, rew, terminated, truncated, final_obs = envs.step(np.array([0, 1]))
        for i in range(2):
            assert (final_obs[i] is None) == (not (terminated[i] or truncated[i]))


def test_a_task_that_resets_on_the_next_step_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "out"
    next_step = lambda: gym.make_vec("CartPole-v1", num_envs=4,  # noqa: E731
                                     vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="SAME_STEP"):
        ppo(next_step, num_envs=4, steps_per_epoch=80, logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(ALGOS))
def test_another_number_of_copies_is_refused_before_anything_is_written(tmp_path, name):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"batched task of 8 copies but num_envs=2; give "
                                         r"num_envs=8"):
        ALGOS[name][0](task(), num_envs=2, steps_per_epoch=80,
                       logger_kwargs=dict(output_dir=str(out)))
    assert not out.exists()


def test_a3c_refuses_a_batched_task_and_says_why(tmp_path):
    with pytest.raises(ValueError, match="a3c: .*batched task.*use a2c"):
        a3c(task(), logger_kwargs=dict(output_dir=str(tmp_path / "out")))
    done = run_cli("a3c", "--env", "spinup/CartPole-v1", "--epochs", 1, "--exp_name", "x",
                   "--data_dir", tmp_path, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "a3c" in done.stderr and "use a2c" in done.stderr
    assert not (tmp_path / "x").exists()


def test_cli_trains_on_a_batched_task_resumes_and_the_policy_can_be_watched(tmp_path):
    args = ("a2c", "--env", "spinup/CartPole-v1", "--num_envs", 16, "--n_steps", 5,
            "--steps_per_epoch", 160, "--hid", "[16]", "--exp_name", "b", "--data_dir",
            tmp_path)
    run_cli(*args, "--epochs", 1)
    run_cli(*args, "--epochs", 2, "--resume")
    run_dir = tmp_path / "b" / "b_s0"
    assert read_progress(run_dir)["TotalEnvInteracts"].tolist() == [160, 320]
    config = json.loads((run_dir / "config.json").read_text())
    assert "make_vec('spinup/CartPole-v1', num_envs=16" in config["env_fn"]
    # test_policy watches one copy: the registered id's single env (gymnasium's CartPole)
    from spinup.utils.test_policy import load_env
    env = load_env(str(run_dir))
    assert env is not None and env.unwrapped.__class__.__name__ == "CartPoleEnv"


@pytest.mark.slow
def test_ppo_learns_batched_cartpole(tmp_path):
    ppo(task(n=64), num_envs=64, seed=0, epochs=12, steps_per_epoch=64 * 64,
        logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    assert df["AverageEpRet"].iloc[-3:].mean() > 150, df["AverageEpRet"].tolist()


def test_mpi_two_ranks_each_step_their_own_batched_task(tmp_path):
    """With --cpu 2 every rank makes its own task of num_envs copies (seeded seed + 10000 *
    rank); an epoch counts the steps of both."""
    run_cli("ppo", "--env", "spinup/CartPole-v1", "--num_envs", 8, "--cpu", 2,
            "--steps_per_epoch", 320, "--epochs", 1, "--hid", "[16]", "--exp_name", "m",
            "--data_dir", tmp_path)
    assert read_progress(tmp_path / "m" / "m_s0")["TotalEnvInteracts"].tolist() == [320]
