"""Issue 29: runs stay whole (overwrite, resume, grid resume, Ray, signals, plot) and a
diverged policy stops its run."""
import importlib
import math

import gymnasium as gym
import pytest
import torch

import spinup
from spinup.utils.torch_tools import sample_categorical, sample_diag_gaussian


# ---- Non-finite policy outputs ----

@pytest.mark.parametrize("logits", [[0.0, math.nan], [-math.inf, -math.inf], [math.inf, 0.0]])
def test_categorical_refuses_non_finite_logits(logits):
    with pytest.raises(ValueError, match="NaN or infinite"):
        sample_categorical(torch.tensor([logits]))


@pytest.mark.parametrize("mu, log_std", [(math.nan, 0.0), (math.inf, 0.0), (0.0, math.nan),
                                         (0.0, math.inf), (0.0, -math.inf)])
def test_gaussian_refuses_non_finite_mean_or_std(mu, log_std):
    with pytest.raises(ValueError, match="NaN or infinite"):
        sample_diag_gaussian(torch.tensor([[mu, 0.0]]), torch.tensor([log_std, 0.0]))


def test_finite_draws_use_the_same_random_numbers():
    torch.manual_seed(3)
    a, logp = sample_categorical(torch.tensor([[0.1, 0.5, -0.2]]))
    torch.manual_seed(3)
    want = torch.distributions.Categorical(logits=torch.tensor([[0.1, 0.5, -0.2]])).sample()
    assert torch.equal(a, want) and torch.isfinite(logp).all()


def _nan_actor_critic(algo):
    core = importlib.import_module(f"spinup.algos.{algo}.core")

    def build(observation_space, action_space, **kwargs):
        ac = core.MLPActorCritic(observation_space, action_space, **kwargs)
        with torch.no_grad():
            for p in ac.pi.parameters():
                p.fill_(math.nan)
        return ac
    return build


@pytest.mark.parametrize("algo, env_id, where", [
    ("ppo", "CartPole-v1", "ppo: epoch 0, step 0"), ("vpg", "Pendulum-v1", "vpg: epoch 0, step 0"),
    ("trpo", "CartPole-v1", "trpo: epoch 0, step 0"), ("a2c", "Pendulum-v1", "a2c: epoch 0"),
    ("a3c", "CartPole-v1", "a3c: worker 0, step 0")])
def test_a_diverged_policy_stops_the_run_in_one_line(algo, env_id, where, tmp_path):
    extra = dict(num_workers=1) if algo == "a3c" else {}
    with pytest.raises(ValueError) as caught:
        getattr(spinup, algo)(lambda: gym.make(env_id), actor_critic=_nan_actor_critic(algo),
                              steps_per_epoch=200, epochs=1,
                              logger_kwargs=dict(output_dir=str(tmp_path / "run")), **extra)
    message = str(caught.value)
    assert message.startswith(where) and "NaN or infinite" in message and "\n" not in message


# ---- One run per directory: --overwrite, and resuming a damaged table ----

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pandas as pd  # noqa: E402

from conftest import run_cli  # noqa: E402
from spinup.utils.checkpoint import checkpoint_path, load_checkpoint  # noqa: E402

TINY = dict(steps_per_epoch=100, ac_kwargs=dict(hidden_sizes=(8,)), train_pi_iters=2,
            train_v_iters=2)


def tiny_ppo(run_dir, epochs, **logger_kwargs):
    spinup.ppo(lambda: gym.make("CartPole-v1"), epochs=epochs, save_freq=1,
               logger_kwargs=dict(output_dir=str(run_dir), **logger_kwargs), **TINY)


def listing(directory):
    return sorted(os.path.relpath(os.path.join(d, n), directory)
                  for d, dirs, names in os.walk(directory) for n in dirs + names)


def test_api_overwrite_leaves_no_file_of_the_earlier_run(tmp_path):
    run = tmp_path / "run"
    tiny_ppo(run, 3, tensorboard=True)
    (run / "output.log").write_text("old log\n")
    assert "pyt_save/model2.pt" in listing(run) and "vars2.json" in listing(run)
    tiny_ppo(run, 1, overwrite=True)
    assert listing(run) == [".spinup.lock", "config.json", "progress.txt", "pyt_save",
                            "pyt_save/checkpoint.pt", "pyt_save/model.pt",
                            "pyt_save/model0.pt", "vars.json", "vars0.json"]
    assert list(pd.read_table(run / "progress.txt")["Epoch"]) == [0]


def test_cli_overwrite_leaves_no_file_of_the_earlier_run(tmp_path):
    args = ["ppo", "--env", "CartPole-v1", "--steps_per_epoch", 100, "--hid", "[8]",
            "--train_pi_iters", 2, "--train_v_iters", 2, "--save_freq", 1,
            "--exp_name", "o", "--data_dir", tmp_path]
    run_cli(*args, "--epochs", 3)
    run = tmp_path / "o" / "o_s0"
    assert (run / "pyt_save" / "model2.pt").exists()
    run_cli(*args, "--epochs", 1, "--overwrite")
    assert not any(name.endswith(("1.pt", "2.pt", "1.json", "2.json"))
                   for name in listing(run))
    # test_policy finds no snapshot of the old run
    proc = subprocess.run([sys.executable, "-m", "spinup.run", "test_policy", str(run), "-i",
                           "2", "-d", "-n", "1", "-nr"], capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr


def _cut_mid_row(text):
    lines = text.split("\n")
    return "\n".join(lines[:2]) + "\n" + lines[2][:len(lines[2]) // 2]


@pytest.mark.parametrize("damage", [_cut_mid_row, lambda t: "".join(t.splitlines(True)[:2]),
                                    lambda t: "", lambda t: t + t.splitlines(True)[-1]],
                         ids=["cut-mid-row", "cut-after-row", "emptied", "row-repeated"])
def test_resume_restores_a_damaged_table_from_the_checkpoint(tmp_path, damage):
    run = tmp_path / "run"
    tiny_ppo(run, 3)
    table = run / "progress.txt"
    table.write_text(damage(table.read_text()))
    tiny_ppo(run, 5, resume=True)
    assert list(pd.read_table(table)["Epoch"]) == [0, 1, 2, 3, 4]


def test_resume_from_a_checkpoint_without_table_refuses_a_cut_table(tmp_path):
    import torch
    run = tmp_path / "run"
    tiny_ppo(run, 3)
    state = load_checkpoint(str(run))
    del state["table"]   # as written before checkpoints carried the table
    torch.save(state, checkpoint_path(str(run)))
    table = run / "progress.txt"
    table.write_text(_cut_mid_row(table.read_text()))
    before = {name: (run / name).read_bytes() for name in listing(run)
              if (run / name).is_file() and name != ".spinup.lock"}
    with pytest.raises(ValueError, match=r"progress.txt lacks complete rows for epochs 2-3"):
        tiny_ppo(run, 5, resume=True)
    assert {name: (run / name).read_bytes() for name in before} == before
