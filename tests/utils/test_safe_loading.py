"""Loading a model.pt never imports an untrusted module nor calls anything but a
torch.nn.Module subclass from spinup or an explicitly allowed module."""
import builtins
import os
import subprocess
import sys

import gymnasium as gym
import pytest
import torch

from conftest import run_cli
from spinup.utils.logx import EpochLogger
from spinup.utils.test_policy import load_policy_and_env

TARGET = "untrusted_target"  # tests/utils/untrusted_target.py


@pytest.fixture
def run_dir(tmp_path):
    """A run directory with a genuine PPO model.pt for CartPole."""
    from spinup.algos.ppo.core import MLPActorCritic
    env = gym.make("CartPole-v1")
    ac = MLPActorCritic(env.observation_space, env.action_space, hidden_sizes=[4])
    logger = EpochLogger(output_dir=str(tmp_path))
    logger.setup_pytorch_saver(ac, ac_kwargs=dict(hidden_sizes=[4]))
    logger.save_state({"env": env})
    return tmp_path


def _tamper(run_dir, **changes):
    path = run_dir / "pyt_save" / "model.pt"
    saved = torch.load(path, weights_only=True)
    saved.update(changes)
    torch.save(saved, path)


@pytest.fixture
def tripwires(monkeypatch):
    """Replace the functions a crafted file may name with recorders."""
    calls = []

    def recorder(name):
        def record(*args, **kwargs):
            # test_policy prints messages (strings); a crafted call passes the spaces
            if name != "print" or not all(isinstance(a, str) for a in args):
                calls.append(name)
        return record

    for owner, name in [(builtins, "print"), (os, "system"), (subprocess, "Popen")]:
        monkeypatch.setattr(owner, name, recorder(name))
    monkeypatch.delitem(sys.modules, TARGET, raising=False)
    return calls


@pytest.mark.parametrize("ac_class", [
    "builtins.print", "os.system", "subprocess.Popen", f"{TARGET}.sentinel",
    f"{TARGET}.TinyActorCritic",                         # a real module class, not allowed
    "spinup.machinery.serialization_utils.os.system",        # through a spinup module's import
    "spinup.algos.ppo.core.nn.Linear",                   # a Module, but not defined in spinup
    "os.system; rm -rf x", 3,
])
def test_crafted_class_path_is_refused_and_nothing_runs(run_dir, tripwires, ac_class):
    _tamper(run_dir, ac_class=ac_class)
    with pytest.raises(ValueError, match="refusing to load|dotted class name") as info:
        load_policy_and_env(str(run_dir))
    assert "\n" not in str(info.value)
    assert tripwires == []
    assert TARGET not in sys.modules  # refused before importing


def test_crafted_class_in_ac_kwargs_is_refused(run_dir, tripwires):
    _tamper(run_dir, ac_kwargs={"hidden_sizes": [4], "activation": {"__dotted__": "os.system"}})
    with pytest.raises(ValueError, match="refusing to load 'os.system' as the class in ac_kwargs"):
        load_policy_and_env(str(run_dir))
    _tamper(run_dir, ac_kwargs={"hidden_sizes": [4],
                                "activation": {"__dotted__": "torch.hub.load"}})
    with pytest.raises(ValueError, match="not a torch.nn.Module subclass"):
        load_policy_and_env(str(run_dir))
    assert tripwires == []


def test_allowed_module_loads_its_module_classes_but_still_calls_no_function(run_dir):
    sys.modules.pop(TARGET, None)
    _tamper(run_dir, ac_class=f"{TARGET}.sentinel")
    with pytest.raises(ValueError, match="not a torch.nn.Module subclass"):
        load_policy_and_env(str(run_dir), allowed_modules=[TARGET])
    import untrusted_target
    assert untrusted_target.CALLS == []
    _tamper(run_dir, ac_class=f"{TARGET}.TinyActorCritic", ac_kwargs={},
            state_dict=untrusted_target.TinyActorCritic(gym.make("CartPole-v1").observation_space,
                                                        None).state_dict())
    env, get_action = load_policy_and_env(str(run_dir), allowed_modules=[TARGET])
    assert type(get_action.ac).__name__ == "TinyActorCritic"
    assert get_action(env.reset(seed=0)[0]) in (0, 1)


def test_cli_refuses_crafted_file_and_allow_module_opens_it(run_dir):
    _tamper(run_dir, ac_class="os.system")
    proc = run_cli("test_policy", run_dir, "-n", 1, "-nr", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        line for line in proc.stderr.strip().splitlines() if "refusing to load 'os.system'" in line]
    import untrusted_target
    _tamper(run_dir, ac_class=f"{TARGET}.TinyActorCritic", ac_kwargs={},
            state_dict=untrusted_target.TinyActorCritic(gym.make("CartPole-v1").observation_space,
                                                        None).state_dict())
    here = os.path.dirname(os.path.abspath(__file__))
    env = {"PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = run_cli("test_policy", run_dir, "-n", 1, "-nr", check=False, env=env)
    assert proc.returncode == 1 and "--allow-module" in proc.stderr
    proc = run_cli("test_policy", run_dir, "-n", 1, "-nr", "--allow-module", TARGET, env=env)
    assert "Episode 0" in proc.stdout
