"""Config files and presets (spinup.presets): config.json round trip, clear errors, presets."""
import inspect
import json

import gymnasium as gym
import pytest
import torch

import spinup
from conftest import read_progress, run_cli
from spinup.presets import flatten, list_presets, load_config, overlay, preset_path


def _ppo_run(out_dir, **kwargs):
    env_name = kwargs.pop("env_name")
    spinup.ppo(lambda: gym.make(env_name), logger_kwargs=dict(output_dir=str(out_dir)), **kwargs)


def test_config_json_round_trip_reproduces_progress(tmp_path):
    first = tmp_path / "first"
    run_cli("ppo", "--env", "CartPole-v1", "--exp_name", "rt", "--epochs", 2,
            "--steps_per_epoch", 150, "--train_pi_iters", 3, "--train_v_iters", 3,
            "--hid", "[16]", "--act", "torch.nn.ReLU", "--seed", 3, "--data_dir", first)
    config = first / "rt" / "rt_s3" / "config.json"

    flat = load_config(str(config), "ppo")
    assert flat["env_name"] == "CartPole-v1"
    assert flat["ac_kwargs:activation"] is torch.nn.ReLU
    assert flat["ac_kwargs:hidden_sizes"] == [16]
    assert flat["seed"] == 3 and flat["steps_per_epoch"] == 150
    for dropped in ("exp_name", "logger_kwargs", "env_fn", "actor_critic"):
        assert dropped not in flat

    kwargs = load_config(str(config), "ppo", flat=False)
    assert flatten(kwargs) == flat
    _ppo_run(tmp_path / "second", **kwargs)
    before = read_progress(first / "rt" / "rt_s3").drop(columns=["Time"])
    after = read_progress(tmp_path / "second").drop(columns=["Time"])
    assert before.equals(after)


def _write(tmp_path, text, name="c.json"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_unknown_key_is_one_clear_error(tmp_path):
    path = _write(tmp_path, json.dumps({"env_name": "CartPole-v1", "pi_lrr": 0.1}))
    with pytest.raises(ValueError) as e:
        load_config(path, "ppo")
    msg = str(e.value)
    assert msg.startswith(f"ppo config {path}: unknown key 'pi_lrr'; allowed: ")
    assert "pi_lr" in msg and "env_name" in msg and "\n" not in msg


def test_unknown_actor_critic_key(tmp_path):
    path = _write(tmp_path, json.dumps({"ac_kwargs": {"hiden_sizes": [8]}}))
    with pytest.raises(ValueError, match=r"unknown key 'ac_kwargs:hiden_sizes'; allowed: "
                                         r"ac_kwargs:activation, ac_kwargs:hidden_sizes"):
        load_config(path, "ppo")


@pytest.mark.parametrize("text, message", [
    ('{"pi_lr": 0.1,}', "not valid JSON"),
    ("[1, 2]", "must hold a JSON object"),
    ('{"ac_kwargs": {"activation": "torch.nn.Relu"}}', "cannot import 'torch.nn.Relu'"),
    ('{"ac_kwargs": [64]}', "'ac_kwargs' must be a JSON object"),
])
def test_bad_file_is_one_line_naming_the_file(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError) as e:
        load_config(path, "ppo")
    assert str(e.value).startswith(f"ppo config {path}: ") and message in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_file_or_preset(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file, and no preset of that name"):
        load_config(str(tmp_path / "nope.json"), "ppo")
    with pytest.raises(FileNotFoundError, match="ppo_CartPole-v1"):
        preset_path("ppo_Nope-v0")


def test_env_name_from_recorded_env_fn_and_non_default_actor_critic(tmp_path):
    path = _write(tmp_path, json.dumps({
        "env_fn": "spinup.launch.run_utils.gym.make('Pendulum-v1')", "exp_name": "x",
        "logger_kwargs": {"output_dir": "/somewhere"},
        "actor_critic": "spinup.algos.sac.core.MLPActorCritic", "_about": "a comment"}))
    assert load_config(path, "sac") == {"env_name": "Pendulum-v1"}
    path = _write(tmp_path, json.dumps({"actor_critic": "spinup.algos.ppo.core.MLPActorCritic"}))
    from spinup.algos.ppo.core import MLPActorCritic
    assert load_config(path, spinup.sac) == {"actor_critic": MLPActorCritic}


def test_overlay_lets_command_line_flags_win():
    loaded = {"env_name": "CartPole-v1", "pi_lr": 1e-3, "ac_kwargs:hidden_sizes": [8]}
    assert overlay(loaded, ["pi_lr"]) == {"env_name": "CartPole-v1",
                                          "ac_kwargs:hidden_sizes": [8]}
    assert "ac_kwargs:hidden_sizes" not in overlay(loaded, ["ac_kwargs"])
    assert overlay({"ac_kwargs": {}}, ["ac_kwargs:activation"]) == {}


#: Presets for a family of envs (give --env): the suffix names the family, not an id.
FAMILIES = {"atari": "ALE/Pong-v5", "minatar": "MinAtar/Breakout-v1"}


@pytest.mark.parametrize("name", list_presets())
def test_presets_load_and_only_set_what_differs(name):
    algo, env_name = name.split("_", 1)
    kwargs = load_config(name, algo, flat=False)
    if env_name in FAMILIES:
        assert "env_name" not in kwargs
        pytest.importorskip("ale_py")
        pytest.importorskip("minatar")
        from spinup.envs import pixels
        env_name = FAMILIES[env_name]
        pixels.make(env_name).close()
        kwargs["env_name"] = env_name
    assert kwargs.pop("env_name") == env_name
    assert kwargs, "a preset sets at least one argument"
    params = inspect.signature(getattr(spinup, algo)).parameters
    for key, value in kwargs.items():
        assert value != params[key].default, f"{name}: {key} repeats the default"
    if name.split("_", 1)[1] not in FAMILIES:
        gym.make(env_name).close()


def test_required_presets_exist():
    for name in ("ppo_CartPole-v1", "dqn_CartPole-v1", "sac_Pendulum-v1"):
        assert name in list_presets()


# ---- the --config flag of the CLI ----

def test_cli_config_reproduces_a_run_and_flags_override(tmp_path):
    run_cli("ppo", "--env", "CartPole-v1", "--exp_name", "orig", "--epochs", 2,
            "--steps_per_epoch", 150, "--train_pi_iters", 3, "--train_v_iters", 3,
            "--hid", "[16]", "--act", "torch.nn.ReLU", "--seed", 3, "--data_dir", tmp_path)
    config = tmp_path / "orig" / "orig_s3" / "config.json"
    run_cli("ppo", "--config", config, "--exp_name", "again", "--data_dir", tmp_path)
    before = read_progress(tmp_path / "orig" / "orig_s3").drop(columns=["Time"])
    after = read_progress(tmp_path / "again" / "again_s3").drop(columns=["Time"])
    assert before.equals(after)

    run_cli("ppo", "--config", config, "--exp_name", "changed", "--epochs", 1,
            "--data_dir", tmp_path)
    changed = json.loads((tmp_path / "changed" / "changed_s3" / "config.json").read_text())
    assert changed["epochs"] == 1 and changed["steps_per_epoch"] == 150
    assert changed["ac_kwargs"]["hidden_sizes"] == [16]
    assert len(read_progress(tmp_path / "changed" / "changed_s3")) == 1


def test_cli_config_by_preset_name(tmp_path):
    run_cli("ppo", "--config", "ppo_CartPole-v1", "--epochs", 1, "--steps_per_epoch", 200,
            "--train_pi_iters", 2, "--train_v_iters", 2, "--exp_name", "p", "--data_dir",
            tmp_path)
    saved = json.loads((tmp_path / "p" / "p_s0" / "config.json").read_text())
    preset = json.loads(open(preset_path("ppo_CartPole-v1")).read())
    assert saved["pi_lr"] == preset["pi_lr"]
    assert saved["steps_per_epoch"] == 200  # the flag wins over the preset


@pytest.mark.parametrize("text", ['{"env_name": "CartPole-v1", "foo": 1}', "{not json"])
def test_cli_bad_config_is_one_line_exit_2(tmp_path, text):
    path = _write(tmp_path, text)
    proc = run_cli("ppo", "--config", path, "--data_dir", tmp_path / "out", check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and path in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_preset_or_run_config_of_another_algorithm_names_it(tmp_path):
    """Issue 45: ``sac --config ppo_CartPole-v1`` said "unknown key 'pi_lr'"."""
    with pytest.raises(ValueError, match="written for ppo, not sac .*sac's presets: sac_"):
        load_config("ppo_CartPole-v1", "sac")
    path = _write(tmp_path, json.dumps({"_algorithm": "ppo", "pi_lr": 0.001}))
    with pytest.raises(ValueError, match="written for ppo, not ddpg.*ddpg has no presets"):
        load_config(path, "ddpg")
    assert load_config(path, "ppo") == {"pi_lr": 0.001}


def test_a_command_line_name_does_not_import_an_unloaded_standard_module(tmp_path):
    """Issue 45: ``"actor_critic": "this.s"`` printed the Zen of Python (importing ``this``)
    before the refusal; a name from a file or a command line must not run such code."""
    import sys
    sys.modules.pop("this", None)
    path = _write(tmp_path, json.dumps({"actor_critic": "this.s"}))
    with pytest.raises(ValueError, match="standard-library module"):
        load_config(path, "ppo")
    assert "this" not in sys.modules


def test_a_file_cannot_name_a_function_for_spinup_to_call(tmp_path):
    """A downloaded config.json naming ``os.system`` as the actor-critic was imported and
    called (with the spaces as arguments). A name from a file or a command line may only
    be a torch.nn.Module class."""
    path = _write(tmp_path, json.dumps({"actor_critic": "os.system"}))
    with pytest.raises(ValueError, match="not a torch.nn.Module class"):
        load_config(path, "ppo")
