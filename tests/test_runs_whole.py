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
