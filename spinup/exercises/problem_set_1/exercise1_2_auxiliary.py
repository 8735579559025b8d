"""Exercise 1.2 support code (no need to edit): an actor-critic that plugs the
student's policy into our PPO, the structural checks, and the PPO run with its
success criterion."""
import argparse
import os.path as osp
import time

import numpy as np
import torch
import torch.nn as nn

from spinup.exercises.common import call_student, finish, require, run_checks


class _Critic(nn.Module):
    """V(s): obs [batch, obs_dim] -> [batch]."""

    def __init__(self, obs_dim, hidden_sizes, activation):
        super().__init__()
        sizes = [obs_dim] + list(hidden_sizes) + [1]
        layers = []
        for j in range(len(sizes) - 1):
            layers += [nn.Linear(sizes[j], sizes[j + 1])]
            if j < len(sizes) - 2:
                layers += [activation()]
        self.v_net = nn.Sequential(*layers)

    def forward(self, obs):
        return torch.squeeze(self.v_net(obs), -1)


class ExerciseActorCritic(nn.Module):
    """PPO actor-critic whose policy is ``actor(obs_dim, act_dim, hidden_sizes,
    activation)`` (the class written in the exercise) and whose value function is a
    standard MLP. ``actor.forward(obs, act=None)`` returns ``(pi, logp_a)``."""

    def __init__(self, observation_space, action_space, hidden_sizes=(64, 64),
                 activation=nn.Tanh, actor=None):
        super().__init__()
        obs_dim = observation_space.shape[0]
        self.pi = actor(obs_dim, action_space.shape[0], hidden_sizes, activation)
        self.v = _Critic(obs_dim, hidden_sizes, activation)

    @torch.no_grad()
    def step(self, obs):
        pi, _ = self.pi(obs)
        a = pi.sample()
        _, logp_a = self.pi(obs, a)
        return a.numpy(), self.v(obs).numpy(), logp_a.numpy()

    @torch.no_grad()
    def act(self, obs, deterministic=False):
        if deterministic:
            return self.pi(obs)[0].mean.numpy()
        return self.step(obs)[0]


def check_structure(mlp, actor_cls):
    """Fast checks of ``mlp`` and the actor class on random inputs; returns
    ``(correct, message)``."""
    from spinup.exercises.problem_set_1_solutions.exercise1_1_soln import gaussian_likelihood
    torch.manual_seed(0)

    def check_mlp():
        net = call_student(mlp, [5, 16, 16, 3], nn.Tanh, name="mlp")
        require(isinstance(net, nn.Module), f"mlp should return an nn.Module, got "
                f"{type(net).__name__} (hint: nn.Sequential)")
        linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
        require([(m.in_features, m.out_features) for m in linears] == [(5, 16), (16, 16), (16, 3)],
                "mlp([5, 16, 16, 3], ...) should have Linear layers 5->16, 16->16, 16->3; got "
                + str([(m.in_features, m.out_features) for m in linears]))
        out = net(torch.randn(7, 5))
        require(tuple(out.shape) == (7, 3), f"mlp output has shape {tuple(out.shape)}, "
                "expected (7, 3) for a batch of 7")
        # Hidden activations: a huge input saturates tanh; without them the net is linear.
        x = torch.randn(1, 5)
        lin = net(100 * x) - net(torch.zeros(1, 5))
        lin2 = 100 * (net(x) - net(torch.zeros(1, 5)))
        require(not torch.allclose(lin, lin2, atol=1e-3),
                "mlp looks linear: put `activation()` after every hidden Linear layer")
        squashed = call_student(mlp, [5, 16, 3], nn.ReLU, nn.Tanh, name="mlp")
        y = squashed(1000 * torch.randn(50, 5))
        require(y.abs().max() <= 1.0, "mlp ignores output_activation (Tanh output exceeded 1)")

    def make_actor():
        actor = call_student(actor_cls, 4, 2, (32,), nn.Tanh, name="MLPGaussianActor()")
        require(isinstance(actor, nn.Module), "MLPGaussianActor must be an nn.Module")
        require(len(list(actor.parameters())) > 0,
                "MLPGaussianActor has no parameters: did you fill in __init__ (self.log_std "
                "as an nn.Parameter, self.mu_net = mlp(...))?")
        return actor

    def check_forward():
        actor = make_actor()
        obs = torch.randn(10, 4)
        out = call_student(actor, obs, name="MLPGaussianActor.forward")
        require(isinstance(out, tuple) and len(out) == 2,
                "forward(obs) should return a tuple (pi, logp_a)")
        pi, logp = out
        require(logp is None, "forward(obs) without act should return logp_a = None")
        for attr in ("sample", "log_prob", "entropy", "mean"):
            require(hasattr(pi, attr), f"pi has no '{attr}': return a "
                    "DiagonalGaussianDistribution(mu, self.log_std)")
        act = torch.randn(10, 2)
        pi, logp = call_student(actor, obs, act, name="MLPGaussianActor.forward")
        require(isinstance(logp, torch.Tensor) and tuple(logp.shape) == (10,),
                "forward(obs, act) should return logp_a of shape [batch] (one log-likelihood "
                f"per row), got {getattr(logp, 'shape', type(logp).__name__)}")
        want = gaussian_likelihood(act, pi.mean, pi.log_std)
        require(torch.allclose(logp, want, atol=1e-4),
                "logp_a is not the log-likelihood of act under pi (use pi.log_prob(act))")
        require(logp.requires_grad, "logp_a carries no gradient: PPO could not train on it")
        logp.sum().backward()
        log_std = [p for n, p in actor.named_parameters() if p.numel() == 2 and p.dim() == 1
                   and "log_std" in n]
        require(log_std, "there is no trainable parameter named log_std of shape [act_dim]")
        require(torch.allclose(log_std[0].detach(), torch.full((2,), -0.5)),
                "initialise log_std to -0.5 in every dimension")
        grads = [p.grad for p in actor.parameters()]
        require(all(g is not None for g in grads),
                "some parameters get no gradient from logp_a (is the mean computed by "
                "mu_net from obs, and log_std used in the distribution?)")

    def check_sample():
        actor = make_actor()
        obs = torch.randn(1, 4).expand(20000, 4)
        with torch.no_grad():
            pi, _ = call_student(actor, obs, name="MLPGaussianActor.forward")
            a = call_student(pi.sample, name="DiagonalGaussianDistribution.sample")
        require(isinstance(a, torch.Tensor) and tuple(a.shape) == (20000, 2),
                f"sample() should return a Tensor of shape [batch, act_dim], got "
                f"{getattr(a, 'shape', type(a).__name__)}")
        std = float(np.exp(-0.5))
        emp_mean, emp_std = a.mean(0), a.std(0)
        require(torch.allclose(emp_mean, pi.mean[0], atol=0.03),
                "samples are not centred on mu (mean %s, mu %s)"
                % (emp_mean.numpy().round(3), pi.mean[0].numpy().round(3)))
        require(torch.allclose(emp_std, torch.full((2,), std), atol=0.03),
                "samples have std %s, expected exp(log_std) = %.3f (not log_std, not the "
                "variance)" % (emp_std.numpy().round(3), std))

    return run_checks("Exercise 1.2 (mlp, DiagonalGaussianDistribution.sample, "
                      "MLPGaussianActor)", [
        ("mlp builds the right layers", check_mlp),
        ("MLPGaussianActor.forward returns (pi, logp_a) with correct log-likelihoods",
         check_forward),
        ("samples have mean mu and std exp(log_std)", check_sample),
    ])


def run_ppo(actor_cls, env="InvertedPendulum-v5", epochs=20, steps_per_epoch=4000, seed=0,
            output_dir=None, hidden_sizes=(64,)):
    """Train our PPO with ``actor_cls`` as the policy; return the progress DataFrame."""
    import gymnasium as gym
    import pandas as pd
    from spinup.algos.ppo.ppo import ppo
    output_dir = output_dir or osp.join("/tmp/experiments", "ex1-2_%d" % int(time.time()))
    ppo(env_fn=lambda: gym.make(env), actor_critic=ExerciseActorCritic,
        ac_kwargs=dict(hidden_sizes=hidden_sizes, actor=actor_cls), seed=seed,
        steps_per_epoch=steps_per_epoch, epochs=epochs,
        logger_kwargs=dict(output_dir=output_dir))
    return pd.read_table(osp.join(output_dir, "progress.txt"))


def evaluate(progress):
    """The spec's bar: mean AverageEpRet of the last 5 epochs > 500, or one of them
    reaches 1000. Returns ``(correct, message)``."""
    last = np.asarray(progress["AverageEpRet"])[-5:]
    correct = bool(np.mean(last) > 500 or np.max(last) >= 1000 - 1e-6)
    msg = ("AverageEpRet over the last %d epochs: %s (mean %.1f, max %.1f); the bar is "
           "mean > 500 or max = 1000" % (len(last), ", ".join("%.1f" % v for v in last),
                                         np.mean(last), np.max(last)))
    return correct, msg


def main(mlp, actor_cls, argv=None):
    """Command line of Exercise 1.2: structural checks, then the PPO run."""
    parser = argparse.ArgumentParser(description="Exercise 1.2: PPO Gaussian policy")
    parser.add_argument("--use_soln", action="store_true",
                        help="check the reference solution instead of your code")
    parser.add_argument("--env", default="InvertedPendulum-v5")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--steps_per_epoch", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_dir", default=None,
                        help="where PPO writes its logs (default /tmp/experiments/ex1-2_<time>)")
    parser.add_argument("--skip_run", action="store_true",
                        help="only run the quick structural checks")
    args = parser.parse_args(argv)
    if args.use_soln:
        from spinup.exercises.problem_set_1_solutions import exercise1_2_soln as soln
        mlp, actor_cls = soln.mlp, soln.MLPGaussianActor

    ok, _ = check_structure(mlp, actor_cls)
    if not ok:
        finish(False, "Fix the failures above before training (no PPO run was started).")
    if args.skip_run:
        finish(True, "Structural checks passed (PPO run skipped).")
    full = args.epochs >= 20 and args.steps_per_epoch >= 4000
    print("\nTraining PPO with your policy on %s: %d epochs x %d steps%s\n"
          % (args.env, args.epochs, args.steps_per_epoch,
             "" if full else " (reduced budget: the verdict only shows that the code runs)"))
    start = time.time()
    progress = run_ppo(actor_cls, args.env, args.epochs, args.steps_per_epoch, args.seed,
                       args.output_dir)
    correct, msg = evaluate(progress)
    if not full:   # too short for the bar: the verdict is whether the code runs
        returns = np.asarray(progress["AverageEpRet"], dtype=float)
        correct = bool(len(returns) == args.epochs and np.all(np.isfinite(returns)))
        msg += ("\n(Reduced budget: PPO %s with your policy; the learning bar is only judged "
                "at 20 epochs x 4000 steps or more.)"
                % ("ran every epoch" if correct else "did not log a finite return each epoch"))
    finish(correct, msg + "\nTraining took %.0f s." % (time.time() - start))
