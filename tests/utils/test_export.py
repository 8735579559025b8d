"""``spinup.run export``, ``push`` and loading a shared agent: the Hub folder's files, its
model card read by huggingface_hub's own parser, its result checked by playing the folder
again, the round trip export -> test_policy, ``hf://`` from the Hub's cache, and refusals in
one line.

Everything runs without a network and without mocks: ``push`` is refused before it sends
anything (``HF_HUB_OFFLINE=1``, no token, an incomplete folder), and ``hf://`` is served
from a Hub cache laid out here with ``HF_HUB_OFFLINE=1``. The only thing not exercised is
the network call of ``huggingface_hub.create_repo``/``upload_folder`` itself (and a real
download by ``snapshot_download``).
"""
import hashlib
import json
import os
import os.path as osp
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import run_cli, run_here

hub = pytest.importorskip("huggingface_hub")

FILES = ["README.md", "config.json", "model.pt", "progress.txt", "provenance.json",
         "results.json", "vars.json"]


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    """A tiny PPO run on CartPole-v1 (discrete actions), with snapshots model0/model1.pt."""
    from spinup import ppo
    out = str(tmp_path_factory.mktemp("runs") / "ppo_cp")
    ppo(lambda: gym.make("CartPole-v1"), epochs=2, steps_per_epoch=400, save_freq=1,
        logger_kwargs=dict(output_dir=out))
    return out


@pytest.fixture(scope="module")
def shared(ppo_run, tmp_path_factory):
    """ppo_run exported without a video (for the tests that only read a folder)."""
    out = str(tmp_path_factory.mktemp("shared") / "ppo-cp")
    proc = run_here("export", ppo_run, out, "--no_video")
    assert proc.returncode == 0, proc.stderr
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
    env.close()
    return out


def _bytes(*path):
    return Path(*path).read_bytes()


def _one_line(proc):
    return "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_export_writes_a_hub_folder_with_a_valid_card(ppo_run, tmp_path):
    out = str(tmp_path / "shared")
    proc = run_here("export", ppo_run, out, "--episodes", 12, "--seed", 3, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == sorted(FILES + ["replay.mp4"])
    assert sorted(os.listdir(tmp_path)) == ["shared"]   # no temporary folder left
    assert os.path.getsize(osp.join(out, "replay.mp4")) > 1000
    assert _bytes(ppo_run, "pyt_save", "model.pt") == _bytes(out, "model.pt")   # as saved
    results = json.loads(_bytes(out, "results.json"))
    returns = _returns(out, 12, 3)
    assert results["returns"] == returns
    assert (results["episodes"], results["seed"], results["env_id"], results["algorithm"]) \
        == (12, 3, "CartPole-v1", "ppo")
    assert results["mean_reward"] == pytest.approx(np.mean(returns))
    assert results["std_reward"] == pytest.approx(np.std(returns))
    assert {"date", "spinup"} <= set(results)
    assert results["replay"] == {"seed": 3, "return": returns[0],
                                 "length": results["lengths"][0]}
    # the card, read by huggingface_hub's own parser
    card = hub.ModelCard.load(osp.join(out, "README.md"))
    assert card.data.library_name == "spinup"
    assert {"reinforcement-learning", "deep-reinforcement-learning", "ppo",
            "CartPole-v1"} <= set(card.data.tags)
    (result,) = card.data.eval_results
    assert (result.task_type, result.dataset_type, result.metric_type) == (
        "reinforcement-learning", "CartPole-v1", "mean_reward")
    assert result.metric_value == (f"{results['mean_reward']:.2f} +/- "
                                   f"{results['std_reward']:.2f}")
    _, (again,) = hub.repocard_data.model_index_to_eval_results(
        card.data.to_dict()["model-index"])
    assert (again.dataset_name, again.metric_value) == ("CartPole-v1", result.metric_value)
    for words in ("python -m spinup.run test_policy hf://REPO_ID",
                  "from spinup.utils.test_policy import load_policy_and_env",
                  "`replay.mp4`", "| `steps_per_epoch` | `400` |"):
        assert words in card.text
    # round trip: the folder is what test_policy reads
    proc = run_here("test_policy", out, "-n", 2, "-nr")
    assert proc.returncode == 0 and "AverageEpRet" in proc.stdout, proc.stderr
    from spinup.utils.test_policy import load_policy
    with pytest.raises(FileNotFoundError, match="no snapshot 3"):
        load_policy(out, itr=3)


def test_export_a_snapshot_with_itr(ppo_run, tmp_path):
    out = str(tmp_path / "epoch0")
    proc = run_here("export", ppo_run, out, "--itr", 0, "--no_video", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _bytes(ppo_run, "pyt_save", "model0.pt") == _bytes(out, "model.pt")
    assert _bytes(ppo_run, "vars0.json") == _bytes(out, "vars.json")
    results = json.loads(_bytes(out, "results.json"))
    assert results["itr"] == 0 and results["returns"] == _returns(out, 10, 0)
    assert "the snapshot saved at epoch 0" in hub.ModelCard.load(osp.join(out, "README.md")).text
    proc = run_here("export", ppo_run, str(tmp_path / "o"), "--itr", 7, cwd=tmp_path)
    assert proc.returncode == 2 and "no snapshot 7" in proc.stderr and _one_line(proc)
    assert sorted(os.listdir(tmp_path)) == ["epoch0"]


@pytest.mark.parametrize("algo, env_id", [("sac", "Pendulum-v1"), ("dqn", "CartPole-v1")])
def test_export_off_policy_agents(algo, env_id, tmp_path):
    """SAC (continuous actions, clipped as in training) and DQN (discrete), both off-policy."""
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
    assert sorted(os.listdir(out)) == FILES
    results = json.loads(_bytes(out, "results.json"))
    assert results["algorithm"] == algo and results["env_id"] == env_id
    assert results["replay"] is None
    assert results["returns"] == _returns(out, 10, 0)
    card = hub.ModelCard.load(osp.join(out, "README.md"))
    assert card.data.eval_results[0].dataset_name == env_id
    assert algo in card.data.tags
    assert "No video was recorded" in card.text


def test_export_refusals_leave_nothing_written(ppo_run, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    cases = [((ppo_run, str(taken)), "is not an empty directory"),
             ((str(tmp_path), str(tmp_path / "o1")), "no saved model"),
             ((str(tmp_path / "nowhere"), str(tmp_path / "o2")), "is not a directory"),
             ((ppo_run, str(tmp_path / "o3"), "--episodes", "5"), "at least 10")]
    for args, words in cases:
        proc = run_here("export", *args, cwd=tmp_path)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert _one_line(proc), proc.stderr
    assert os.listdir(taken) == ["keep.txt"]
    assert sorted(os.listdir(tmp_path)) == ["taken"]   # no o1..o3, no temporary folder


def test_push_refuses_before_sending_anything(shared, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    proc = run_here("push", shared, "someone/ppo-CartPole-v1")
    assert proc.returncode == 1 and "HF_HUB_OFFLINE" in proc.stderr and _one_line(proc)
    # an incomplete folder or a bad card is refused first (exit 2)
    proc = run_here("push", osp.dirname(shared), "someone/x")
    assert proc.returncode == 2 and "not an exported folder" in proc.stderr and _one_line(proc)
    bad = str(tmp_path / "bad")
    shutil.copytree(shared, bad)
    readme = Path(bad, "README.md")
    card = readme.read_text()
    readme.write_text(card[:card.index("model-index:")] + "---\n")
    proc = run_here("push", bad, "someone/x")
    assert proc.returncode == 2 and "no model-index result" in proc.stderr and _one_line(proc)
    proc = run_here("push", shared, "not//an id")
    assert proc.returncode == 2 and "not a Hub repo id" in proc.stderr and _one_line(proc)


def test_push_without_a_token_in_a_process(shared, tmp_path, monkeypatch):
    """A real interpreter: one line of advice, exit 1, no traceback (no token: nothing sent)."""
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    proc = run_cli("push", shared, "someone/ppo-CartPole-v1", check=False,
                   env={"HF_HOME": str(tmp_path / "hf_home")}, timeout=120)
    assert proc.returncode == 1 and "hf auth login" in proc.stderr and "HF_TOKEN" in proc.stderr
    assert _one_line(proc), proc.stderr


def _hub_cache(folder, cache, repo_id, commit="0123456789abcdef0123456789abcdef01234567"):
    """Lay ``folder`` out in a Hub cache as ``snapshot_download`` leaves a download: blobs
    named by content, a snapshot of symlinks, refs/main naming the commit."""
    repo = osp.join(cache, "models--" + repo_id.replace("/", "--"))
    snapshot = osp.join(repo, "snapshots", commit)
    for sub in ("refs", "blobs", snapshot):
        os.makedirs(osp.join(repo, sub), exist_ok=True)
    Path(repo, "refs", "main").write_text(commit)
    for name in os.listdir(folder):
        data = _bytes(folder, name)
        blob = osp.join(repo, "blobs", hashlib.sha256(data).hexdigest())
        Path(blob).write_bytes(data)
        os.symlink(osp.relpath(blob, snapshot), osp.join(snapshot, name))


def test_hf_paths_load_from_the_cache_or_say_what_to_do(shared, tmp_path, monkeypatch):
    cache = str(tmp_path / "hub_cache")
    _hub_cache(shared, cache, "someone/ppo-cp")
    proc = run_cli("test_policy", "hf://someone/ppo-cp@main", "-n", 2, "-nr", "-d",
                   env={"HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": "1"}, timeout=120)
    assert "AverageEpRet" in proc.stdout and "snapshots" in proc.stdout
    # not downloadable: one line naming the repo, exit 2; HubDownloadError from Python
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    proc = run_here("test_policy", "hf://someone/not-downloaded", "-n", 1, "-nr")
    assert proc.returncode == 2 and _one_line(proc), proc.stderr
    assert "cannot download hf://someone/not-downloaded" in proc.stderr
    assert "HF_HUB_OFFLINE" in proc.stderr
    from spinup.utils.test_policy import HubDownloadError, load_policy_and_env
    with pytest.raises(HubDownloadError, match="hf://someone/x@v1") as caught:
        load_policy_and_env("hf://someone/x@v1")
    assert isinstance(caught.value, FileNotFoundError)
