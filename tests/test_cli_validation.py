"""Bad values on the command line: refused in the parent process before any launch.

Each case must exit with code 2, print exactly one line on stderr (the same line
the Python API raises), show no traceback and create nothing under --data_dir.
"""
import os

import pytest

from conftest import run_cli, run_here

CASES = [
    (["ppo", "--env", "CartPole-v1", "--epochs", "0"],
     "ppo: epochs=0 is not allowed: an int with epochs >= 1"),
    (["ppo", "--env", "CartPole-v1", "--epochs", "-1"],
     "ppo: epochs=-1 is not allowed: an int with epochs >= 1"),
    (["ppo", "--env", "CartPole-v1", "--gamma", "1.5"],
     "ppo: gamma=1.5 is not allowed: a number with 0 <= gamma <= 1"),
    (["ppo", "--env", "CartPole-v1", "--hid", "64"],
     "ppo: ac_kwargs['hidden_sizes']=64 is not allowed: a list or tuple of ints >= 1"),
    (["ppo", "--env", "CartPole-v1", "--hid", "sixtyfour"],
     "ppo: ac_kwargs['hidden_sizes']='sixtyfour' is not allowed: a list or tuple of ints"),
    (["ppo", "--env", "CartPole-v1", "--hid", "[64,-1]"],
     "ppo: ac_kwargs['hidden_sizes']=[64, -1] is not allowed: a list or tuple of ints >= 1"),
    (["ppo", "--env", "CartPole-v1", "--act", "relu"],
     "ppo: ac_kwargs['activation']='relu' is not allowed: a torch.nn.Module subclass"),
    (["ppo", "--env", "CartPole-v1", "--pi_lr", "fast"],
     "ppo: pi_lr='fast' is not allowed: a finite number with pi_lr > 0"),
    (["dqn", "--env", "Pendulum-v1"],
     "dqn: action space Box(-2.0, 2.0, (1,), float32) is not supported: DQN needs a "
     "Discrete action space"),
    (["sac", "--env", "CartPole-v1"],
     "sac: action space Discrete(2) is not supported: SAC needs a continuous (Box) "
     "action space"),
    # one bad variant in a grid stops the whole grid before the first launch
    (["vpg", "--env", "CartPole-v1", "--lam", "0.9", "0.0", "--epochs", "1"],
     "vpg: lam=0.0 is not allowed: a number with 0 < lam <= 1"),
    (["a2c", "--env", "CartPole-v1", "--steps_per_epoch", "30"],
     "a2c: steps_per_epoch=30 is not allowed: an int >= 1 that is a multiple of n_steps (20)"),
    (["trpo", "--env", "CartPole-v1", "--backtrack_coeff", "1.0"],
     "trpo: backtrack_coeff=1.0 is not allowed: a number with 0 < backtrack_coeff < 1"),
    (["ppo", "--env", "CartPole-v1", "--ent_coef", "-0.5"],
     "ppo: ent_coef=-0.5 is not allowed: a finite number with ent_coef >= 0"),
    (["td3", "--env", "Pendulum-v1", "--polyak", "2"],
     "td3: polyak=2 is not allowed: a number with 0 <= polyak <= 1"),
]


@pytest.mark.parametrize("args, line", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_value_is_one_line_exit_2_and_no_directory(tmp_path, args, line):
    data_dir = tmp_path / "data"
    proc = run_here(*args, "--data_dir", data_dir)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and line in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not data_dir.exists() or not os.listdir(data_dir)
    assert "Running experiment" not in proc.stdout  # nothing was launched


def test_cli_line_is_the_python_api_message(tmp_path):
    import gymnasium as gym

    from spinup import ppo
    proc = run_cli("ppo", "--env", "CartPole-v1", "--gamma", "1.5", "--data_dir", tmp_path,
                   check=False)
    with pytest.raises(ValueError) as info:
        ppo(lambda: gym.make("CartPole-v1"), gamma=1.5,
            logger_kwargs=dict(output_dir=str(tmp_path / "api")))
    assert proc.stderr.strip() == f"error: {info.value}"
