"""TRPO / NPG: the math against brute force, the line search, smoke runs and a learning test."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.func import functional_call

from conftest import read_progress, run_cli
from spinup.algos.trpo import core
from spinup.algos.trpo.trpo import (backtracking_line_search, conjugate_gradient, flat_grad,
                                    get_flat_params, hessian_vector_product, npg,
                                    set_flat_params, trpo)

VPG_COLUMNS = ["Epoch", "AverageEpRet", "StdEpRet", "MaxEpRet", "MinEpRet", "EpLen",
               "AverageVVals", "StdVVals", "MaxVVals", "MinVVals", "TotalEnvInteracts",
               "LossPi", "LossV", "DeltaLossPi", "DeltaLossV", "Entropy", "KL"]
TRPO_COLUMNS = VPG_COLUMNS + ["BacktrackIters", "Time"]


# ----------------------------------------------------------------------------- helpers
def tiny_policy(kind, seed=0):
    """A tiny policy (few dozen parameters) and a batch of observations and actions."""
    torch.manual_seed(seed)
    obs = torch.randn(32, 3)
    if kind == "categorical":
        pi = core.MLPCategoricalActor(3, 4, (5,), torch.nn.Tanh)
    else:
        pi = core.MLPGaussianActor(3, 2, (5,), torch.nn.Tanh)
    with torch.no_grad():
        act = pi(obs)[0].sample()
    return pi, obs, act


def unflatten(pi, theta):
    """Parameter dict of ``pi`` holding the (differentiable) flat vector ``theta``."""
    params, i = {}, 0
    for name, p in pi.named_parameters():
        params[name] = theta[i:i + p.numel()].view_as(p)
        i += p.numel()
    return params


# ----------------------------------------------------------------------------- math
@pytest.mark.parametrize("n", [5, 30])
def test_conjugate_gradient_matches_linalg_solve(n):
    rng = np.random.default_rng(n)
    M = rng.normal(size=(n, n))
    A = M @ M.T + 0.5 * np.eye(n)  # random symmetric positive definite
    b = rng.normal(size=n)
    x = conjugate_gradient(lambda v: A @ v, b, cg_iters=3 * n, residual_tol=1e-20)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-6, atol=1e-8)


def test_conjugate_gradient_few_iters_reduces_residual():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(50, 50))
    A, b = M @ M.T + 10 * np.eye(50), rng.normal(size=50)
    x = conjugate_gradient(lambda v: A @ v, b, cg_iters=10)
    assert np.linalg.norm(A @ x - b) < 0.1 * np.linalg.norm(b)


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_hessian_vector_product_matches_explicit_hessian(kind):
    pi, obs, _ = tiny_policy(kind)
    with torch.no_grad():
        pi_old, _ = pi(obs)
    theta0 = get_flat_params(pi)

    def kl_of(theta):
        return core.mean_kl(pi_old, functional_call(pi, unflatten(pi, theta), (obs,))[0])

    H = torch.autograd.functional.hessian(kl_of, theta0).double().numpy()
    # the KL's Hessian at the old parameters is the Fisher information: symmetric PSD
    np.testing.assert_allclose(H, H.T, atol=1e-6)
    assert np.linalg.eigvalsh(H).min() > -1e-6

    damping = 0.1
    kl = core.mean_kl(pi_old, pi(obs)[0])
    Hx = hessian_vector_product(kl, list(pi.parameters()), damping)
    rng = np.random.default_rng(0)
    for _ in range(3):
        v = rng.normal(size=theta0.numel())
        np.testing.assert_allclose(Hx(v), H @ v + damping * v, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_kl_and_its_gradient_are_zero_at_old_params(kind):
    pi, obs, _ = tiny_policy(kind)
    with torch.no_grad():
        pi_old, _ = pi(obs)
    kl = core.mean_kl(pi_old, pi(obs)[0])
    g = flat_grad(kl, list(pi.parameters()))
    assert abs(kl.item()) < 1e-6
    assert g.abs().max().item() < 1e-6


def test_mean_kl_matches_closed_forms():
    # categorical: sum p_old log(p_old / p)
    p_old, p = torch.tensor([[0.2, 0.8]]), torch.tensor([[0.5, 0.5]])
    kl = core.mean_kl(torch.distributions.Categorical(probs=p_old),
                      torch.distributions.Categorical(probs=p))
    expected = (p_old * (p_old / p).log()).sum()
    assert kl.item() == pytest.approx(expected.item(), rel=1e-5)
    # diagonal Gaussian: sum over dims of log(s/s0) + (s0^2 + (m0-m)^2) / (2 s^2) - 1/2
    m0, s0, m, s = torch.tensor([[0.0, 1.0]]), torch.tensor([[1.0, 0.5]]), \
        torch.tensor([[0.5, 1.0]]), torch.tensor([[2.0, 0.5]])
    kl = core.mean_kl(torch.distributions.Normal(m0, s0), torch.distributions.Normal(m, s))
    expected = (torch.log(s / s0) + (s0 ** 2 + (m0 - m) ** 2) / (2 * s ** 2) - 0.5).sum()
    assert kl.item() == pytest.approx(expected.item(), rel=1e-5)


# ----------------------------------------------------------------------------- line search
def trpo_step_problem(kind, seed=0):
    """One TRPO policy step on a synthetic batch: (pi, theta_old, full_step, evaluate, surr_old)."""
    pi, obs, act = tiny_policy(kind, seed)
    adv = torch.randn(len(obs))
    with torch.no_grad():
        pi_old, logp_old = pi(obs, act)

    def surrogate():
        return (torch.exp(pi(obs, act)[1] - logp_old) * adv).mean()

    def evaluate():
        with torch.no_grad():
            return surrogate().item(), core.mean_kl(pi_old, pi(obs)[0]).item()

    params = list(pi.parameters())
    surr = surrogate()
    g = flat_grad(surr, params).double().numpy()
    Hx = hessian_vector_product(core.mean_kl(pi_old, pi(obs)[0]), params, 0.1)
    x = conjugate_gradient(Hx, g, 10)
    return pi, get_flat_params(pi), torch.as_tensor(x, dtype=torch.float32), x, Hx, \
        evaluate, surr.item()


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
@pytest.mark.parametrize("overshoot", [1.0, 20.0])
def test_accepted_step_satisfies_kl_constraint(kind, overshoot):
    delta = 0.01
    pi, theta_old, x_t, x, Hx, evaluate, surr_old = trpo_step_problem(kind)
    # the TRPO step, optionally blown up so that the line search has to backtrack
    full_step = overshoot * np.sqrt(2 * delta / (x @ Hx(x))) * x_t
    j = backtracking_line_search(pi, theta_old, full_step, evaluate, surr_old, delta,
                                 backtrack_iters=30, backtrack_coeff=0.8)
    assert j < 30  # a step was accepted ...
    surr, kl = evaluate()
    assert kl <= delta and surr > surr_old  # ... and it satisfies both conditions
    torch.testing.assert_close(get_flat_params(pi), theta_old + 0.8 ** j * full_step)
    if overshoot > 1:
        assert j > 0


def test_line_search_falls_back_to_no_step():
    pi, theta_old, x_t, x, Hx, evaluate, surr_old = trpo_step_problem("categorical")
    # a step *against* the gradient never improves the surrogate: nothing is accepted
    j = backtracking_line_search(pi, theta_old, -0.1 * x_t, evaluate, surr_old, 0.01,
                                 backtrack_iters=5, backtrack_coeff=0.8)
    assert j == 5
    assert torch.equal(get_flat_params(pi), theta_old)
    # same when every candidate violates the KL constraint
    j = backtracking_line_search(pi, theta_old, x_t, lambda: (surr_old + 1, 1.0), surr_old,
                                 0.01, backtrack_iters=3, backtrack_coeff=0.8)
    assert j == 3
    assert torch.equal(get_flat_params(pi), theta_old)


def test_flat_params_round_trip():
    pi, _, _ = tiny_policy("gaussian")
    theta = get_flat_params(pi)
    set_flat_params(pi, theta + 1)
    torch.testing.assert_close(get_flat_params(pi), theta + 1)
    assert theta.numel() == core.count_vars(pi)


# ----------------------------------------------------------------------------- smoke runs
@pytest.mark.parametrize("algo,env_id", [(trpo, "CartPole-v1"), (npg, "Pendulum-v1")])
def test_smoke_library(tmp_path, algo, env_id):
    ac = algo(lambda: gym.make(env_id), steps_per_epoch=300, epochs=2, train_v_iters=5,
              logger_kwargs=dict(output_dir=str(tmp_path)))
    df = read_progress(tmp_path)
    assert list(df.columns) == TRPO_COLUMNS
    assert len(df) == 2
    # KL after the step is measured (not the ~0 before it), and respects the trust region
    assert (df["KL"] > 0).all() and (df["KL"] <= 0.01 * 1.5).all()
    if algo is npg:
        assert (df["BacktrackIters"] == 0).all()
    assert (tmp_path / "pyt_save" / "model.pt").exists()
    o, _ = gym.make(env_id).reset(seed=0)
    ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic=True)


def test_trpo_kl_within_delta(tmp_path):
    trpo(lambda: gym.make("CartPole-v1"), steps_per_epoch=400, epochs=3, delta=0.005,
         train_v_iters=5, logger_kwargs=dict(output_dir=str(tmp_path)))
    assert (read_progress(tmp_path)["KL"] <= 0.005).all()


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="trpo: algo"):
        trpo(lambda: gym.make("CartPole-v1"), algo="ppo",
             logger_kwargs=dict(output_dir=str(tmp_path)))
    with pytest.raises(ValueError, match="npg: observation space"):
        npg(lambda: gym.make("Blackjack-v1"), logger_kwargs=dict(output_dir=str(tmp_path)))


def test_smoke_cli_npg(tmp_path):
    run_cli("npg", "--env", "CartPole-v1", "--steps_per_epoch", 300, "--epochs", 2,
            "--train_v_iters", 5, "--exp_name", "smoke", "--data_dir", tmp_path, timeout=300)
    (progress,) = tmp_path.rglob("progress.txt")
    df = read_progress(progress.parent)
    assert list(df.columns) == TRPO_COLUMNS and len(df) == 2
    assert (df["BacktrackIters"] == 0).all()


def test_smoke_cli_trpo_two_mpi_processes(tmp_path):
    """The CLI smoke run of trpo, under ``mpiexec -n 2`` (``--cpu 2``)."""
    run_cli("trpo", "--env", "CartPole-v1", "--cpu", 2, "--steps_per_epoch", 400,
            "--epochs", 2, "--train_v_iters", 5, "--exp_name", "mpi", "--data_dir", tmp_path,
            timeout=300)
    (progress,) = tmp_path.rglob("progress.txt")
    df = read_progress(progress.parent)
    assert list(df.columns) == TRPO_COLUMNS
    assert len(df) == 2 and list(df["TotalEnvInteracts"]) == [400, 800]
    assert (df["KL"] <= 0.01).all()


# ----------------------------------------------------------------------------- learning
def test_learns_cartpole(tmp_path):
    """Fixed seed, 10 epochs x 2000 steps: seed 0 measured 21 -> 290 AverageEpRet."""
    torch.set_num_threads(1)
    trpo(lambda: gym.make("CartPole-v1"), steps_per_epoch=2000, epochs=10, seed=0,
         logger_kwargs=dict(output_dir=str(tmp_path)))
    ret = read_progress(tmp_path)["AverageEpRet"]
    assert ret.iloc[0] < 50
    assert ret.iloc[-1] >= 150


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(delta=0.0), ValueError, "trpo: delta"),
    (dict(backtrack_coeff=1.0), ValueError, "trpo: backtrack_coeff"),
    (dict(gamma=-0.1), ValueError, "trpo: gamma"),
    (dict(lam=1.2), ValueError, "trpo: lam"),
    (dict(vf_lr=0.0), ValueError, "trpo: vf_lr"),
    (dict(cg_iters=0), ValueError, "trpo: cg_iters"),
    (dict(train_v_iters=-1), ValueError, "trpo: train_v_iters"),
    (dict(damping_coeff=-0.1), ValueError, "trpo: damping_coeff"),
    (dict(epochs=2.5), TypeError, "trpo: epochs"),
    (dict(steps_per_epoch=0), ValueError, "trpo: steps_per_epoch"),
])
def test_bad_arguments_write_nothing(tmp_path, kwargs, error, match):
    out = tmp_path / "out"
    with pytest.raises(error, match=match):
        trpo(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)),
             **kwargs)
    assert not out.exists()  # checked before the logger creates the directory
    # npg names itself in the message
    with pytest.raises(error, match=match.replace("trpo", "npg")):
        npg(lambda: gym.make("CartPole-v1"), logger_kwargs=dict(output_dir=str(out)),
            **kwargs)
    assert not out.exists()


def test_train_v_iters_zero_is_allowed(tmp_path):
    """Exercise 2.1 runs TRPO with train_v_iters=0 (V_phi never fitted)."""
    trpo(lambda: gym.make("CartPole-v1"), steps_per_epoch=200, epochs=1, train_v_iters=0,
         logger_kwargs=dict(output_dir=str(tmp_path)))
    assert read_progress(tmp_path)["DeltaLossV"].iloc[0] == 0
