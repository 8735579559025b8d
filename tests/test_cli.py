"""The CLI: grids and directory names, help, and one clear error for bad input."""
import os

import pytest

from conftest import read_progress, run_cli


def test_help_and_algo_help():
    out = run_cli("help").stdout
    assert "python -m spinup.run ALGO" in out and "ppo" in out
    out = run_cli("ppo", "--help").stdout
    assert "clip_ratio" in out and "target_kl" in out


def test_grid_directories_and_end_message(tmp_path):
    proc = run_cli("ppo", "--env", "CartPole-v1", "--exp_name", "g", "--epochs", 1,
                   "--steps_per_epoch", 200, "--hid[h]", "[8]", "[8,8]",
                   "--act", "torch.nn.ReLU", "--seed", 0, 10, "--data_dir", tmp_path)
    for sub in ["g_h8/g_h8_s0", "g_h8/g_h8_s10", "g_h8-8/g_h8-8_s0", "g_h8-8/g_h8-8_s10"]:
        df = read_progress(tmp_path / sub)
        assert list(df["TotalEnvInteracts"]) == [200]
    assert "python -m spinup.run plot " + str(tmp_path / "g_h8-8" / "g_h8-8_s10") in proc.stdout
    assert "python -m spinup.run test_policy" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["ppo", "--env", "CartPol-v1"], "Did you mean: CartPole-v1"),
    (["ppo", "--env", "CartPole-v1", "--epoch", "3"], "unknown flag --epoch. Did you mean: --epochs"),
    (["ppo", "--env", "CartPole-v1", "--epochs", "abc"], "--epochs expects an integer"),
    (["ppo", "--env", "CartPole-v1", "--act", "torch.nn.Relu"], "--act: cannot import"),
    (["ppo", "--epochs", "3"], "you must give an environment with --env"),
    (["ppo", "--env", "CartPole-v1", "--cpu", "0"], "--cpu expects a positive integer"),
    (["ppo", "--env", "CartPole-v1", "--exp_name", "a", "b"], "--exp_name takes one value"),
    (["pppo", "--env", "CartPole-v1"], "Did you mean: ppo"),
])
def test_bad_input_gives_one_clear_error(tmp_path, args, message):
    proc = run_cli(*args, "--data_dir", tmp_path, check=False) if args[0] == "ppo" \
        else run_cli(*args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not os.listdir(tmp_path)  # nothing was launched


def test_algorithm_error_is_one_line(tmp_path):
    # Pendulum has a Box action space but a bad max_ep_len type passes the CLI and fails
    # in the algorithm's own check: one line, exit 2, no traceback.
    proc = run_cli("ppo", "--env", "CartPole-v1", "--steps_per_epoch", 0, "--epochs", 1,
                   "--data_dir", tmp_path, check=False)
    assert proc.returncode != 0
    assert "steps_per_epoch" in proc.stderr and "Traceback" not in proc.stderr
    assert "failed" in proc.stderr


def test_plot_and_test_policy_commands(tmp_path):
    run_cli("ppo", "--env", "CartPole-v1", "--epochs", 2, "--steps_per_epoch", 300,
            "--seed", 0, 1, "--exp_name", "pl", "--data_dir", tmp_path)
    fig = tmp_path / "fig.png"
    run_cli("plot", tmp_path / "pl", "--savefig", fig, "-s", 2, "--count")
    assert fig.stat().st_size > 1000
    run_cli("plot", tmp_path / "pl", "-y", "Performance", "LossV", "--savefig", fig)
    assert (tmp_path / "fig_LossV.png").exists()
    proc = run_cli("plot", tmp_path / "nothing", "--savefig", fig, check=False)
    assert proc.returncode == 1 and "no log directories match" in proc.stderr
    out = run_cli("test_policy", tmp_path / "pl" / "pl_s0", "-n", 2, "-nr", "-d").stdout
    assert "Episode 1" in out and "AverageEpRet" in out
    proc = run_cli("test_policy", tmp_path / "missing", "-nr", check=False)
    assert proc.returncode == 1 and "no saved model" in proc.stderr
