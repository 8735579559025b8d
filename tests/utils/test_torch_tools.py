"""spinup.utils.torch_tools: fused and plain Adam agree, the fused default follows
FUSED_ADAM_ON_CPU, torch_threads restores the thread count (also on an exception),
polyak_update copies exactly at 0 and averages at 0.5; SAC and DQN train on the plain
Adam that torch < 2.4 falls back to."""
import gymnasium as gym
import pytest
import torch

import spinup.utils.torch_tools as torch_tools
from spinup.machinery import device
from spinup.algos.dqn.dqn import dqn
from spinup.algos.sac.sac import sac


def _fit(fused, steps=20):
    """A few Adam steps of a small regression, from a fixed start."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    opt = torch_tools.adam(net.parameters(), 1e-2, fused=fused)
    for _ in range(steps):
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        opt.step()
    return opt, [p.detach().clone() for p in net.parameters()]


def test_fused_and_plain_adam_take_the_same_steps():
    if not torch_tools.FUSED_ADAM_ON_CPU:
        pytest.skip("this torch has no fused Adam on the CPU")
    fused_opt, fused = _fit(True)
    plain_opt, plain = _fit(False)
    assert fused_opt.defaults["fused"] and not plain_opt.defaults["fused"]
    for a, b in zip(fused, plain):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("supported", [True, False])
def test_adam_default_follows_fused_adam_on_cpu(supported, monkeypatch):
    if supported and not torch_tools._TORCH_VERSION >= (2, 4):
        pytest.skip("this torch has no fused Adam on the CPU")
    monkeypatch.setattr(torch_tools, "FUSED_ADAM_ON_CPU", supported)
    opt = torch_tools.adam([torch.nn.Parameter(torch.zeros(3))], 1e-3)
    assert bool(opt.defaults["fused"]) is supported
    assert opt.defaults["lr"] == 1e-3


def test_torch_threads_sets_and_restores():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with device.torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(KeyError):
            with device.torch_threads(1):
                raise KeyError("boom")
        assert torch.get_num_threads() == 2
        with device.torch_threads(None):      # None: leave the count alone
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_polyak_update_copies_at_zero_and_averages_at_one_half():
    torch.manual_seed(1)
    net, targ = torch.nn.Linear(5, 3), torch.nn.Linear(5, 3)
    targ.requires_grad_(False)
    start = [p.clone() for p in targ.parameters()]
    torch_tools.polyak_update(net, targ, 0.5)
    for p, t0, t in zip(net.parameters(), start, targ.parameters()):
        torch.testing.assert_close(t, (t0 + p.detach()) / 2)
    torch_tools.polyak_update(net, targ, 0.0)
    for p, t in zip(net.parameters(), targ.parameters()):
        assert torch.equal(t, p.detach())         # bit for bit, like load_state_dict
    torch_tools.polyak_update(net, targ, 1.0)     # 1: the target does not move
    for p, t in zip(net.parameters(), targ.parameters()):
        assert torch.equal(t, p.detach())


@pytest.fixture
def recorded_adams(monkeypatch):
    """Force the torch < 2.4 path and record every Adam that gets built."""
    monkeypatch.setattr(torch_tools, "FUSED_ADAM_ON_CPU", False)
    built = []

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(torch.optim, "Adam", RecordingAdam)
    return built


@pytest.mark.parametrize("alpha", [0.2, "auto"])
def test_sac_runs_on_plain_adam(alpha, recorded_adams, tmp_path):
    sac(lambda: gym.make("Pendulum-v1"), alpha=alpha, epochs=1, steps_per_epoch=200,
        start_steps=100, update_after=100, update_every=50, batch_size=32, num_test_episodes=1,
        ac_kwargs=dict(hidden_sizes=(16,)), logger_kwargs=dict(output_dir=str(tmp_path)))
    assert len(recorded_adams) == (3 if alpha == "auto" else 2)
    assert not any(opt.defaults["fused"] for opt in recorded_adams)
    assert all(opt.state for opt in recorded_adams)      # every optimizer took steps


def test_dqn_runs_on_plain_adam(recorded_adams, tmp_path):
    dqn(lambda: gym.make("CartPole-v1"), epochs=1, steps_per_epoch=300, start_steps=100,
        update_after=100, batch_size=16, num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(16,)),
        logger_kwargs=dict(output_dir=str(tmp_path)))
    assert len(recorded_adams) == 1
    assert not recorded_adams[0].defaults["fused"] and recorded_adams[0].state
