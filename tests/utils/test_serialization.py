"""The model.pt format: numpy values in ac_kwargs, files written by earlier versions,
space descriptions, and clear errors for files spinup cannot read."""
import json

import gymnasium as gym
import numpy as np
import pytest
import torch

from spinup.utils.logx import EpochLogger
from spinup.utils.test_policy import load_policy_and_env


def _pendulum_ac(**kwargs):
    from spinup.algos.ppo.core import MLPActorCritic
    env = gym.make("Pendulum-v1")
    return env, MLPActorCritic(env.observation_space, env.action_space, **kwargs)


def test_numpy_scalars_in_ac_kwargs_are_saved_as_plain_values(tmp_path):
    # Grids built with numpy (np.arange, np.linspace ...) hand over numpy scalars;
    # they used to make setup_pytorch_saver raise, or (np.float64) write a model.pt
    # that torch.load(weights_only=True) refuses.
    kwargs = dict(hidden_sizes=[np.int64(8), np.int32(4)], activation=torch.nn.Tanh)
    env, ac = _pendulum_ac(**kwargs)
    extra = dict(kwargs, scale=np.float64(0.5), flag=np.bool_(True), arr=np.array([1, 2]))
    logger = EpochLogger(output_dir=str(tmp_path))
    logger.save_config(dict(ac_kwargs=kwargs, seed=np.int64(3)))
    logger.setup_pytorch_saver(ac, ac_kwargs=kwargs)
    logger.save_state({"env": env})

    saved = torch.load(tmp_path / "pyt_save" / "model.pt", weights_only=True)
    sizes = saved["ac_kwargs"]["hidden_sizes"]
    assert sizes == [8, 4] and all(type(s) is int for s in sizes)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["ac_kwargs"]["hidden_sizes"] == [8, 4] and config["seed"] == 3

    _, get_action = load_policy_and_env(str(tmp_path), deterministic=True)
    o = np.zeros(3, dtype=np.float32)
    np.testing.assert_allclose(get_action(o), ac.act(torch.as_tensor(o), deterministic=True))

    from spinup.machinery.serialization_utils import kwargs_to_plain
    plain = kwargs_to_plain(extra)
    assert type(plain["scale"]) is float and plain["flag"] is True and plain["arr"] == [1, 2]


def _old_layout(ac, obs_space, act_space_desc, kwargs):
    """The dict that the saver of format version 1 wrote, spelled out by hand."""
    return {
        "format_version": 1,
        "ac_class": "spinup.algos.ppo.core.MLPActorCritic",
        "ac_kwargs": kwargs,
        "observation_space": {"type": "Box", "low": torch.as_tensor(obs_space.low),
                              "high": torch.as_tensor(obs_space.high), "dtype": "float32"},
        "action_space": act_space_desc,
        "state_dict": {k: v.detach().clone() for k, v in ac.state_dict().items()},
    }


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "CartPole-v1"])
def test_model_written_by_format_1_saver_still_loads(tmp_path, env_id):
    from spinup.algos.ppo.core import MLPActorCritic
    env = gym.make(env_id)
    ac = MLPActorCritic(env.observation_space, env.action_space, hidden_sizes=[6],
                        activation=torch.nn.ReLU)
    space = env.action_space
    if env_id == "CartPole-v1":
        act_desc = {"type": "Discrete", "n": 2, "start": 0}
    else:
        act_desc = {"type": "Box", "low": torch.as_tensor(space.low),
                    "high": torch.as_tensor(space.high), "dtype": "float32"}
    kwargs = {"hidden_sizes": [6],
              "activation": {"__dotted__": "torch.nn.modules.activation.ReLU"}}
    (tmp_path / "pyt_save").mkdir()
    torch.save(_old_layout(ac, env.observation_space, act_desc, kwargs),
               tmp_path / "pyt_save" / "model.pt")
    (tmp_path / "vars.json").write_text(json.dumps({"env_spec": env.spec.to_json()}))

    env2, get_action = load_policy_and_env(str(tmp_path), deterministic=True)
    assert env2.spec.id == env_id
    assert isinstance(get_action.ac.pi, type(ac.pi))
    o, _ = env.reset(seed=0)
    np.testing.assert_allclose(get_action(o),
                               ac.act(torch.as_tensor(o, dtype=torch.float32),
                                      deterministic=True))


def test_space_descriptions_round_trip():
    from spinup.machinery.serialization_utils import space_from_dict, space_to_dict
    box = gym.spaces.Box(low=-2.0, high=np.array([1.0, 3.0]), dtype=np.float64)
    again = space_from_dict(space_to_dict(box))
    assert again == box and again.dtype == np.float64
    disc = gym.spaces.Discrete(5, start=-1)
    assert space_from_dict(space_to_dict(disc)) == disc
    assert space_from_dict(None) is None
    tup = space_to_dict(gym.spaces.Tuple([disc, disc]))
    assert tup["type"] == "Tuple"
    with pytest.raises(ValueError, match="Tuple"):
        space_from_dict(tup)


def test_unsupported_kwarg_and_wrong_format_version(tmp_path):
    from spinup.machinery.serialization_utils import MODEL_FORMAT_VERSION, read_model
    env, ac = _pendulum_ac(hidden_sizes=[4])
    logger = EpochLogger(output_dir=str(tmp_path))
    with pytest.raises(TypeError, match="ac_kwargs"):
        logger.setup_pytorch_saver(ac, ac_kwargs=dict(hidden_sizes=[4], bad=object()))
    path = tmp_path / "model.pt"
    torch.save({"format_version": MODEL_FORMAT_VERSION + 1}, path)
    with pytest.raises(ValueError, match="format"):
        read_model(str(path))
    torch.save([1, 2], path)
    with pytest.raises(ValueError, match="not a spinup model"):
        read_model(str(path))
