"""Exercise checkers: each accepts its reference solution and rejects the starter code
(as shipped) and plausible wrong answers; smoke runs of the training exercises
(1.2, 1.3, 2.2) with tiny budgets."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from spinup.exercises import checks
from spinup.exercises.problem_set_1 import exercise1_1, exercise1_2, exercise1_3
from spinup.exercises.problem_set_1_solutions import (exercise1_1_soln, exercise1_2_soln,
                                                      exercise1_3_soln)
from spinup.exercises.problem_set_3 import exercise3_1, exercise3_2, exercise3_3
from spinup.exercises.problem_set_3_solutions import (exercise3_1_soln, exercise3_2_soln,
                                                      exercise3_3_soln)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rejected(result, *fragments):
    """The check failed, and its message contains every fragment."""
    correct, message = result
    assert not correct
    for f in fragments:
        assert f in message, message
    return message


# ----------------------------------------------------------------------------- 1.1
def test_1_1_solution_accepted():
    assert checks.check_exercise1_1(exercise1_1_soln.gaussian_likelihood)[0]


def test_1_1_starter_rejected():
    rejected(checks.check_exercise1_1(exercise1_1.gaussian_likelihood), "not filled in")


def _gl(log2pi=True, sign=1.0, log_std_term=True):
    def gaussian_likelihood(x, mu, log_std):
        pre = ((x - mu) / torch.exp(log_std)) ** 2
        if log_std_term:
            pre = pre + 2 * log_std
        if log2pi:
            pre = pre + np.log(2 * np.pi)
        return sign * -0.5 * pre.sum(-1)
    return gaussian_likelihood


@pytest.mark.parametrize("wrong, hint", [
    (_gl(log2pi=False), "log(2*pi)"),
    (_gl(sign=-1.0), "sign"),
    (_gl(log_std_term=False), "log(sigma)"),
    (lambda x, mu, log_std: torch.distributions.Normal(mu, log_std.exp()).log_prob(x),
     "shape"),                                            # not summed over dimensions
    (lambda x, mu, log_std: torch.as_tensor(               # numpy: no gradient
        exercise1_1_soln.gaussian_likelihood(x, mu, log_std).detach().numpy()), "gradient"),
])
def test_1_1_wrong_answers_rejected(wrong, hint):
    rejected(checks.check_exercise1_1(wrong), hint)


def test_1_1_starter_script_exits_nonzero():
    proc = subprocess.run([sys.executable, "-m", "spinup.exercises.problem_set_1.exercise1_1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 1
    assert "incorrect" in proc.stdout and "not filled in gaussian_likelihood" in proc.stdout


# ----------------------------------------------------------------------------- 1.2
def test_1_2_structure():
    from spinup.exercises.problem_set_1.exercise1_2_auxiliary import check_structure
    assert check_structure(exercise1_2_soln.mlp, exercise1_2_soln.MLPGaussianActor)[0]
    ok, failures = check_structure(exercise1_2.mlp, exercise1_2.MLPGaussianActor)
    assert not ok and "not filled in mlp" in failures[0]

    class StdAsLogStd(exercise1_2_soln.DiagonalGaussianDistribution):
        def sample(self):  # treats log_std as the standard deviation
            return self.mu + self.log_std * torch.randn_like(self.mu)

    class WrongActor(exercise1_2_soln.MLPGaussianActor):
        def forward(self, obs, act=None):
            pi = StdAsLogStd(self.mu_net(obs), self.log_std)
            return pi, None if act is None else pi.log_prob(act)
    ok, failures = check_structure(exercise1_2_soln.mlp, WrongActor)
    assert not ok and "exp(log_std)" in "\n".join(failures)


def test_1_2_checker_smoke(tmp_path):
    """The checker's PPO path with a tiny budget, on the reference solution: too short
    for the learning bar, so the verdict is whether the code ran (issue 45: the reference
    answer was graded "incorrect", exit 1)."""
    from spinup.exercises.problem_set_1.exercise1_2_auxiliary import evaluate, main
    out = tmp_path / "ex12"
    with pytest.raises(SystemExit) as e:
        main(exercise1_2_soln.mlp, exercise1_2_soln.MLPGaussianActor,
             ["--epochs", "1", "--steps_per_epoch", "200", "--output_dir", str(out)])
    assert e.value.code == 0
    import pandas as pd
    prog = pd.read_table(out / "progress.txt")
    assert len(prog) == 1
    # The criterion itself (spec's bar).
    assert evaluate(pd.DataFrame({"AverageEpRet": [100, 200, 600, 700, 800, 900]}))[0]
    assert evaluate(pd.DataFrame({"AverageEpRet": [10, 10, 10, 10, 1000.0]}))[0]
    assert not evaluate(pd.DataFrame({"AverageEpRet": [400, 450, 500, 520, 540]}))[0]


# ----------------------------------------------------------------------------- 1.3
HOLES = ("target_actions", "bellman_backup", "q_loss", "pi_loss", "policy_update_due")


def _fns(module, **override):
    return [override.get(n, getattr(module, n)) for n in HOLES]


def test_1_3_checker():
    assert checks.check_exercise1_3(*_fns(exercise1_3_soln))[0]
    rejected(checks.check_exercise1_3(*_fns(exercise1_3)), "not filled in target_actions",
             "not filled in policy_update_due")
    s = exercise1_3_soln
    rejected(checks.check_exercise1_3(*_fns(
        s, bellman_backup=lambda r, d, q1, q2, g: r + g * (1 - d) * torch.max(q1, q2))), "max")
    rejected(checks.check_exercise1_3(*_fns(
        s, bellman_backup=lambda r, d, q1, q2, g: r + g * torch.min(q1, q2))), "terminal")
    rejected(checks.check_exercise1_3(*_fns(
        s, target_actions=lambda p, sig, c: torch.clamp(p + sig * torch.randn_like(p), -1, 1))),
        "clipped")
    rejected(checks.check_exercise1_3(*_fns(s, pi_loss=lambda q: q.mean())), "sign")
    rejected(checks.check_exercise1_3(*_fns(s, policy_update_due=lambda t, d: True)),
             "policy_delay=2")


def test_1_3_checker_smoke(tmp_path, monkeypatch, capsys):
    """exercise1_3's command line with the solution's functions and a tiny budget: the
    checks pass and the file's own TD3 runs."""
    from spinup.exercises.problem_set_1.exercise1_3_auxiliary import main
    for name in HOLES:  # main() fills the holes in place; monkeypatch restores them
        monkeypatch.setattr(exercise1_3, name, getattr(exercise1_3, name))
    main(vars(exercise1_3), ["--use_soln_functions", "--env", "InvertedPendulum-v5",
                             "--epochs", "1", "--steps_per_epoch", "250", "--start_steps",
                             "100", "--update_after", "100", "--num_test_episodes", "1",
                             "--output_dir", str(tmp_path / "ex13")])
    assert "AverageTestEpRet per epoch" in capsys.readouterr().out
    assert (tmp_path / "ex13" / "progress.txt").exists()


# ----------------------------------------------------------------------------- 2.2
def test_2_2_bug_is_a_shape_bug():
    import gymnasium as gym
    from spinup.algos.ddpg.core import MLPActorCritic
    from spinup.exercises.problem_set_2.exercise2_2 import BuggedMLPActorCritic
    env = gym.make("Pendulum-v1")
    o, a = torch.zeros(7, 3), torch.zeros(7, 1)
    assert BuggedMLPActorCritic(env.observation_space, env.action_space).q(o, a).shape == (7, 1)
    assert MLPActorCritic(env.observation_space, env.action_space).q(o, a).shape == (7,)


@pytest.mark.timeout(600)
def test_2_2_smoke(tmp_path):
    """Bugged and correct DDPG, one seed each, tiny budget; summary and plot."""
    from spinup.exercises.problem_set_2.exercise2_2 import main
    fig = tmp_path / "ex22.png"
    main(["--env", "Pendulum-v1", "--total_steps", "100", "--steps_per_epoch", "100",
          "--start_steps", "50", "--update_after", "50", "--num_runs", "1",
          "--num_test_episodes", "1", "--max_ep_len", "100", "--h", "16",
          "--data_dir", str(tmp_path), "--savefig", str(fig)])
    assert fig.exists() and fig.stat().st_size > 0
    runs = [d for d in os.listdir(tmp_path) if "ex2-2_ddpg" in d]
    assert sorted(r.endswith("_bugged") for r in runs) == [False, True]


# ----------------------------------------------------------------------------- 3.1
def test_3_1_checker():
    assert checks.check_exercise3_1(exercise3_1_soln.rewards_to_go,
                                    exercise3_1_soln.gae_advantages)[0]
    rejected(checks.check_exercise3_1(exercise3_1.rewards_to_go, exercise3_1.gae_advantages),
             "not filled in rewards_to_go", "not filled in gae_advantages")
    s = exercise3_1_soln
    # Forgetting to bootstrap a cut-off trajectory.
    rejected(checks.check_exercise3_1(lambda r, v, g: s.discount_cumsum(r, g),
                                      s.gae_advantages), "last_val is ignored")
    # Discounting the deltas by gamma only (lambda ignored).
    rejected(checks.check_exercise3_1(
        s.rewards_to_go, lambda r, v, lv, g, lam: s.gae_advantages(r, v, lv, g, 1.0)),
        "lambda is ignored")
    # Swapping the roles of gamma and lambda.
    rejected(checks.check_exercise3_1(
        s.rewards_to_go, lambda r, v, lv, g, lam: s.gae_advantages(r, v, lv, lam, g)),
        "gae_advantages")


# ----------------------------------------------------------------------------- 3.2
def _cg_wrong_sign(Ax, b, cg_iters=10, residual_tol=1e-10):
    x, r, p = torch.zeros_like(b), b.clone(), b.clone()
    rr = r @ r
    for _ in range(cg_iters):
        if rr < residual_tol:
            break
        Ap = Ax(p)
        alpha = rr / (p @ Ap)
        x = x + alpha * p
        r = r + alpha * Ap          # wrong sign
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def _hvp_no_damping(kl, params, damping_coeff):
    return exercise3_2_soln.hessian_vector_product(kl, params, 0.0)


def _hvp_no_create_graph(kl, params, damping_coeff):
    g = exercise3_2_soln.flat_grad(kl, params)  # no create_graph: cannot differentiate again
    return lambda x: exercise3_2_soln.flat_grad(g @ x, params) + damping_coeff * x


def test_3_2_checker():
    s = exercise3_2_soln
    assert checks.check_exercise3_2(s.conjugate_gradient, s.hessian_vector_product)[0]
    rejected(checks.check_exercise3_2(exercise3_2.conjugate_gradient,
                                      exercise3_2.hessian_vector_product),
             "not filled in conjugate_gradient", "not filled in hessian_vector_product")
    rejected(checks.check_exercise3_2(_cg_wrong_sign, s.hessian_vector_product), "CG")
    # A direct solve is not CG (and needs the matrix).
    rejected(checks.check_exercise3_2(
        lambda Ax, b, cg_iters=10, residual_tol=1e-10: b, s.hessian_vector_product), "CG")
    rejected(checks.check_exercise3_2(s.conjugate_gradient, _hvp_no_damping), "damping")
    rejected(checks.check_exercise3_2(s.conjugate_gradient, _hvp_no_create_graph),
             "raised RuntimeError")


# ----------------------------------------------------------------------------- 3.3
def _n_step_loop(through_terminal=False, truncation_terminal=False, cross_episodes=False):
    def n_step_targets(rews, terminated, ends, next_vals, gamma, n):
        T = len(rews)
        y = torch.zeros(T)
        for t in range(T):
            ret, disc, j = 0.0, 1.0, t
            for k in range(n):
                j = t + k
                ret, disc = ret + disc * rews[j], disc * gamma
                if (ends[j] and not cross_episodes) or j == T - 1:
                    break
            dead = ends[j] if truncation_terminal else terminated[j]
            if through_terminal:
                dead = 0.0
            y[t] = ret + disc * (1 - dead) * next_vals[j]
        return y
    return n_step_targets


def test_3_3_checker():
    s = exercise3_3_soln
    assert checks.check_exercise3_3(s.double_dqn_next_values, s.n_step_targets)[0]
    rejected(checks.check_exercise3_3(exercise3_3.double_dqn_next_values,
                                      exercise3_3.n_step_targets),
             "not filled in double_dqn_next_values", "not filled in n_step_targets")
    rejected(checks.check_exercise3_3(lambda qo, qt: qt.max(1).values, s.n_step_targets),
             "vanilla DQN")
    rejected(checks.check_exercise3_3(s.double_dqn_next_values,
                                      _n_step_loop(through_terminal=True)),
             "bootstrap through terminal")
    rejected(checks.check_exercise3_3(s.double_dqn_next_values,
                                      _n_step_loop(truncation_terminal=True)), "truncated")
    rejected(checks.check_exercise3_3(s.double_dqn_next_values,
                                      _n_step_loop(cross_episodes=True)), "crosses")
