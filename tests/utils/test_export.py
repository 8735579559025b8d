"""``spinup.run export``, ``push`` and loading a shared agent: the Hub folder's files, its
model card read by huggingface_hub's own parser, its result checked by evaluating the folder
again, the round trip export -> test_policy, and refusals in one line.

Without a network: ``push`` is run with ``HF_HUB_OFFLINE=1`` and ``hf://`` likewise, so
``huggingface_hub.upload_folder``'s network call (and a real download) is the only part not
exercised here.
"""
import json
import os
import os.path as osp

import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import run_here

hub = pytest.importorskip("huggingface_hub")


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    from spinup import ppo
    out = str(tmp_path_factory.mktemp("runs") / "ppo_cp")
    ppo(lambda: gym.make("CartPole-v1"), epochs=2, steps_per_epoch=400,
        logger_kwargs=dict(output_dir=out))
    return out


def _returns(folder, episodes, seed):
    """Deterministic returns of the folder's policy, episode i reset with seed + i (written
    here apart from export's own evaluation)."""
    from spinup.utils.test_policy import load_policy_and_env
    env, act = load_policy_and_env(folder, deterministic=True)
    out = []
    for i in range(episodes):
        o, _ = env.reset(seed=seed + i)
        total, done = 0.0, False
        while not done:
            o, r, terminated, truncated, _ = env.step(act(o))
            total += r
            done = terminated or truncated
        out.append(total)
    return out


def test_export_writes_a_hub_folder_with_a_valid_card(ppo_run, tmp_path):
    out = str(tmp_path / "shared")
    proc = run_here("export", ppo_run, out, "--episodes", 12, "--seed", 3, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == sorted(
        ["README.md", "config.json", "model.pt", "progress.txt", "provenance.json",
         "replay.mp4", "results.json", "vars.json"])
    assert os.path.getsize(osp.join(out, "replay.mp4")) > 1000
    results = json.load(open(osp.join(out, "results.json")))
    returns = _returns(out, 12, 3)
    assert results["returns"] == returns and results["episodes"] == 12
    assert results["mean_reward"] == pytest.approx(np.mean(returns))
    assert results["std_reward"] == pytest.approx(np.std(returns))
    card = hub.ModelCard.load(osp.join(out, "README.md"))
    assert card.data.library_name == "spinup"
    assert {"reinforcement-learning", "ppo", "CartPole-v1"} <= set(card.data.tags)
    (result,) = card.data.eval_results
    assert (result.task_type, result.dataset_type, result.metric_type) == (
        "reinforcement-learning", "CartPole-v1", "mean_reward")
    assert result.metric_value == (f"{results['mean_reward']:.2f} +/- "
                                   f"{results['std_reward']:.2f}")
    assert "python -m spinup.run test_policy hf://REPO_ID" in card.text
    # the folder is what test_policy and load_policy read, as a run directory
    proc = run_here("test_policy", out, "-n", 2, "-nr", "-d")
    assert proc.returncode == 0 and "AverageEpRet" in proc.stdout
    with pytest.raises(FileNotFoundError, match="no snapshot 3"):
        from spinup.utils.test_policy import load_policy
        load_policy(out, itr=3)


@pytest.mark.parametrize("algo, env_id", [("sac", "Pendulum-v1"), ("dqn", "CartPole-v1")])
def test_export_off_policy_agents(algo, env_id, tmp_path):
    import spinup
    run = str(tmp_path / "run")
    kwargs = dict(epochs=1, steps_per_epoch=300, start_steps=100, update_after=100,
                  batch_size=32, max_ep_len=100, num_test_episodes=1)
    if algo == "sac":
        kwargs.update(ac_kwargs=dict(hidden_sizes=(16, 16)))
    getattr(spinup, algo)(lambda: gym.make(env_id), logger_kwargs=dict(output_dir=run),
                          **kwargs)
    out = str(tmp_path / "shared")
    proc = run_here("export", run, out, "--no_video", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not osp.exists(osp.join(out, "replay.mp4"))
    results = json.load(open(osp.join(out, "results.json")))
    assert results["algorithm"] == algo and results["env_id"] == env_id
    assert results["returns"] == _returns(out, 10, 0)
    card = hub.ModelCard.load(osp.join(out, "README.md"))
    assert card.data.eval_results[0].dataset_name == env_id
    assert "No video was recorded" in card.text


def test_export_refusals_leave_nothing_written(ppo_run, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    cases = [((ppo_run, str(taken)), "is not an empty directory"),
             ((str(tmp_path), str(tmp_path / "o1")), "no saved model"),
             ((ppo_run, str(tmp_path / "o2"), "--episodes", "5"), "at least 10")]
    for args, words in cases:
        proc = run_here("export", *args, cwd=tmp_path)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert proc.stderr.strip().count("\n") == 0
    assert os.listdir(taken) == ["keep.txt"]
    assert sorted(os.listdir(tmp_path)) == ["taken"]   # no o1, o2, no temporary folder


def test_push_and_hf_paths_offline_say_what_to_do(ppo_run, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = str(tmp_path / "shared")
    assert run_here("export", ppo_run, out, "--no_video", cwd=tmp_path).returncode == 0
    proc = run_here("push", out, "someone/ppo-CartPole-v1", cwd=tmp_path)
    assert proc.returncode == 1 and "HF_HUB_OFFLINE" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0
    proc = run_here("push", ppo_run, "someone/x", cwd=tmp_path)   # a run, not a folder
    assert proc.returncode == 2 and "not an exported folder" in proc.stderr
    proc = run_here("test_policy", "hf://someone/not-downloaded", "-n", 1, "-nr")
    assert proc.returncode == 1 and "cannot download hf://someone/not-downloaded" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    from spinup.utils.test_policy import load_policy_and_env
    with pytest.raises(FileNotFoundError, match="hf://someone/x@v1"):
        load_policy_and_env("hf://someone/x@v1")
