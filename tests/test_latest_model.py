"""The latest policy is always on disk: ``pyt_save/model.pt`` after every epoch,
numbered ``model{epoch}.pt`` snapshots every ``save_freq`` epochs."""
import os

import gymnasium as gym
import pytest
import torch

import spinup
from spinup.utils.test_policy import _model_path, load_pytorch_policy

ON = dict(steps_per_epoch=100, max_ep_len=100)
OFF = dict(steps_per_epoch=50, start_steps=20, update_after=20, update_every=10,
           batch_size=16, num_test_episodes=1, max_ep_len=50, replay_size=1000)
# algorithm -> (env id, small settings, numbered snapshots of a 3-epoch run, save_freq=2)
SETUPS = {
    "vpg": ("CartPole-v1", dict(ON, train_v_iters=2), {0, 2}),
    "ppo": ("CartPole-v1", dict(ON, train_pi_iters=2, train_v_iters=2), {0, 2}),
    "trpo": ("CartPole-v1", dict(ON, train_v_iters=2), {0, 2}),
    "npg": ("CartPole-v1", dict(ON, train_v_iters=2), {0, 2}),
    "a2c": ("CartPole-v1", dict(steps_per_epoch=40, n_steps=20), {0, 2}),
    "a3c": ("CartPole-v1", dict(num_workers=1, steps_per_epoch=20, n_steps=10,
                                num_test_episodes=0), {0, 2}),
    "ddpg": ("Pendulum-v1", OFF, {2}),
    "td3": ("Pendulum-v1", OFF, {2}),
    "sac": ("Pendulum-v1", OFF, {2}),
    "dqn": ("CartPole-v1", dict(OFF, target_update_every=10), {2}),
}
FIRST_EPOCH = {name: 1 if name in ("ddpg", "td3", "sac", "dqn") else 0 for name in SETUPS}


def _saved_weights(path):
    return torch.load(path, weights_only=True)["state_dict"]


def _same_weights(saved, module):
    current = module.state_dict()
    return saved.keys() == current.keys() and all(torch.equal(saved[k], current[k])
                                                  for k in current)


def _numbered(out):
    names = os.listdir(out / "pyt_save")
    return {int(n[5:-3]) for n in names if n.startswith("model") and n[5:-3].isdigit()}


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_model_pt_is_the_final_policy_and_snapshots_are_numbered(tmp_path, name):
    env_id, small, snapshots = SETUPS[name]
    out = tmp_path / name
    ac = getattr(spinup, name)(lambda: gym.make(env_id), epochs=3, save_freq=2, seed=0,
                               logger_kwargs=dict(output_dir=str(out)), **small)
    assert _same_weights(_saved_weights(out / "pyt_save" / "model.pt"), ac)
    assert _numbered(out) == snapshots
    assert _model_path(str(out), "last").endswith("model.pt")
    for itr in snapshots:  # what `test_policy DIR -i N` loads
        get_action = load_pytorch_policy(str(out), itr)
        assert callable(get_action)
    assert not [n for n in os.listdir(out / "pyt_save") if ".tmp" in n]


class _BreaksAfter(gym.Wrapper):
    """Raises in ``step`` once it has taken ``limit`` steps (a crash mid-run)."""

    def __init__(self, env, limit):
        super().__init__(env)
        self.limit, self.steps = limit, 0

    def step(self, action):
        self.steps += 1
        if self.steps > self.limit:
            raise RuntimeError("env broke")
        return self.env.step(action)


@pytest.mark.parametrize("name", ["vpg", "ppo", "trpo", "a2c", "ddpg", "td3", "sac", "dqn"])
def test_a_crash_in_epoch_two_leaves_the_model_of_epoch_one(tmp_path, name):
    env_id, small, _ = SETUPS[name]
    algo = getattr(spinup, name)
    first = FIRST_EPOCH[name]
    # reference: the same run without the crash; model{first}.pt is epoch one's policy
    ref = tmp_path / "ref"
    algo(lambda: gym.make(env_id), epochs=3, save_freq=1, seed=0,
         logger_kwargs=dict(output_dir=str(ref)), **small)
    # a save_freq so large that epoch one is never a numbered snapshot
    crash = tmp_path / "crash"
    limit = small["steps_per_epoch"] + small["steps_per_epoch"] // 2
    with pytest.raises(RuntimeError, match="env broke"):
        algo(lambda: _BreaksAfter(gym.make(env_id), limit), epochs=3, save_freq=5, seed=0,
             logger_kwargs=dict(output_dir=str(crash)), **small)
    saved = _saved_weights(crash / "pyt_save" / "model.pt")
    expected = _saved_weights(ref / "pyt_save" / f"model{first}.pt")
    assert saved.keys() == expected.keys()
    assert all(torch.equal(saved[k], expected[k]) for k in saved)
