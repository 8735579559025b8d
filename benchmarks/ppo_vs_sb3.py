"""Env steps per second of spinup's PPO against Stable-Baselines3's at matched work.

Both libraries train PPO on CartPole-v1 with the same batch and the same amount of
gradient work per batch:

================================  ==========================  ==========================
setting                           spinup ``ppo``              SB3 ``PPO``
================================  ==========================  ==========================
env steps per update              ``steps_per_epoch=4000``    ``n_steps * n_envs = 4000``
gradient batch                    the whole 4000 steps        ``batch_size=4000``
policy steps per update           ``train_pi_iters=80``       ``n_epochs=80``
early stop                        ``target_kl=0.01``          ``target_kl=0.01``
                                  (stop at KL > 1.5 x 0.01)   (stop at KL > 1.5 x 0.01)
value steps per update            ``train_v_iters=80``        in the same 80 steps
networks                          separate 64x64 tanh         separate 64x64 tanh
                                  ``pi`` and ``v``            (``net_arch`` pi / vf)
GAE, discount                     ``lam=0.97, gamma=0.99``    ``gae_lambda=0.97``,
                                                              ``gamma=0.99``
clip ratio, policy lr             0.2, 3e-4                   0.2, 3e-4
================================  ==========================  ==========================

What cannot be matched exactly (the algorithms differ there, not the speed): SB3 takes
one Adam step on the sum of policy and value losses, so its early stop also ends the
value steps, while spinup goes on with its 80 value steps (spinup does at least as
much gradient work); SB3 clips gradient norms at 0.5 and evaluates the KL after each
step. The script prints how many policy steps each library took per update (spinup:
the mean ``StopIter``; SB3: its ``n_updates`` counter, which also counts the epoch
that triggered the early stop). Use ``--threads 1`` on a shared machine: with two
threads both libraries lose most of their speed to waiting for each other's cores.

Four variants: each library with one env, and each with ``--num_envs`` envs (default
8) collecting the same 4000 steps per update (spinup ``num_envs=8``; SB3 ``n_envs=8``
in a ``DummyVecEnv``, ``n_steps=500``). The gradient work is the same in all four.

Every measurement is a fresh subprocess that trains ``--epochs`` updates (default 5,
20000 env steps) and reports env steps per wall-clock second of training (spinup: the
whole ``ppo`` call, setup and saving included; SB3: ``model.learn``; the one-time import
of ``torch._dynamo`` that the first optimizer triggers is done before both). The variants
run in turn, ``--repeats`` times each (the order rotates), with the same torch
thread count; the table gives each run, the medians and their ratios. Needs the
``bench`` extra (``pip install -e ".[bench]"``). Usage::

    python benchmarks/ppo_vs_sb3.py [--repeats 3] [--epochs 5] [--num_envs 8] [--threads N]
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

STEPS = 4000
ENV = "CartPole-v1"
LIBS = ["spinup", "sb3", "spinup_vec", "sb3_vec"]  # *_vec: --num_envs envs


def run_spinup(epochs, seed, num_envs):
    """Train spinup's PPO; returns (env steps per second, mean policy steps per update)."""
    import gymnasium as gym
    import pandas as pd
    import torch

    from spinup import ppo
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        ppo(lambda: gym.make(ENV), ac_kwargs=dict(hidden_sizes=(64, 64), activation=torch.nn.Tanh),
            seed=seed, steps_per_epoch=STEPS, epochs=epochs, gamma=0.99, lam=0.97,
            clip_ratio=0.2, pi_lr=3e-4, vf_lr=1e-3, train_pi_iters=80, train_v_iters=80,
            target_kl=0.01, num_envs=num_envs, logger_kwargs=dict(output_dir=out))
        elapsed = time.perf_counter() - start
        stop_iter = pd.read_csv(Path(out) / "progress.txt", sep="\t")["StopIter"].mean()
    return epochs * STEPS / elapsed, float(stop_iter)


def run_sb3(epochs, seed, num_envs):
    """Train Stable-Baselines3's PPO; returns (env steps per second, mean policy steps
    per update)."""
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    env = gym.make(ENV) if num_envs == 1 else make_vec_env(ENV, n_envs=num_envs, seed=seed)
    model = PPO("MlpPolicy", env, learning_rate=3e-4, n_steps=STEPS // num_envs,
                batch_size=STEPS, n_epochs=80, gamma=0.99, gae_lambda=0.97, clip_range=0.2,
                ent_coef=0.0, target_kl=0.01, seed=seed, device="cpu", verbose=0,
                policy_kwargs=dict(net_arch=dict(pi=[64, 64], vf=[64, 64]),
                                   activation_fn=torch.nn.Tanh))
    start = time.perf_counter()
    model.learn(total_timesteps=epochs * STEPS)
    elapsed = time.perf_counter() - start
    return epochs * STEPS / elapsed, model._n_updates / epochs


def child(args):
    import torch
    # The first torch optimizer a process builds imports torch._dynamo (about 1.4 s
    # here). SB3 builds its optimizer in PPO(...), before its clock starts; spinup
    # builds it inside ppo(...), after. Importing it here, before either clock,
    # keeps that one-time import out of both measurements.
    import torch._dynamo  # noqa: F401
    if args.threads:
        torch.set_num_threads(args.threads)
    run = run_spinup if args.child.startswith("spinup") else run_sb3
    steps_per_s, pi_steps = run(args.epochs, args.seed, args.envs)
    print(json.dumps(dict(steps_per_s=steps_per_s, pi_steps=pi_steps,
                          threads=torch.get_num_threads())))


def measure(lib, args):
    envs = args.num_envs if lib.endswith("_vec") else 1
    cmd = [sys.executable, __file__, "--child", lib, "--epochs", str(args.epochs),
           "--seed", str(args.seed), "--envs", str(envs)] + (["--threads", str(args.threads)] if args.threads else [])
    path = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    done = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=path))
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SystemExit(f"ppo_vs_sb3: the {lib} run failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--repeats", type=_cli.positive, default=2, help="runs per library")
    parser.add_argument("--epochs", type=_cli.positive, default=5,
                        help="updates of 4000 steps per run")
    parser.add_argument("--threads", type=_cli.positive, default=None,
                        help="torch threads in both libraries (default: torch's default)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of every run")
    parser.add_argument("--num_envs", type=_cli.positive, default=8,
                        help=f"envs of the *_vec variants ({STEPS} must be a multiple)")
    parser.add_argument("--child", choices=LIBS, help=argparse.SUPPRESS)
    parser.add_argument("--envs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if STEPS % args.num_envs:
        parser.error(f"--num_envs {args.num_envs}: {STEPS} steps per update must be a "
                     "multiple of it")
    if importlib.util.find_spec("stable_baselines3") is None:
        parser.error("needs stable-baselines3, which is not installed here "
                     "(pip install -e '.[bench]')")

    import stable_baselines3
    import torch
    print(f"PPO on {ENV}, {args.epochs} updates of {STEPS} steps per run, torch "
          f"{torch.__version__}, stable-baselines3 {stable_baselines3.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    results = {lib: [] for lib in LIBS}
    for r in range(args.repeats):
        for lib in LIBS[r % len(LIBS):] + LIBS[:r % len(LIBS)]:  # rotate the order
            res = measure(lib, args)
            results[lib].append(res)
            print(f"run {r + 1} {lib:10s}: {res['steps_per_s']:7.0f} env steps/s, "
                  f"{res['pi_steps']:5.1f} policy steps per update, "
                  f"{res['threads']} torch threads", flush=True)
    med = {lib: statistics.median(x["steps_per_s"] for x in runs) for lib, runs in results.items()}
    n = args.num_envs
    print("median env steps/s: " + ", ".join(f"{lib} {med[lib]:.0f}" for lib in LIBS))
    print(f"spinup / SB3, 1 env each: {med['spinup'] / med['sb3']:.2f}x; "
          f"spinup {n} envs / SB3 1 env: {med['spinup_vec'] / med['sb3']:.2f}x; "
          f"spinup {n} envs / SB3 {n} envs: {med['spinup_vec'] / med['sb3_vec']:.2f}x "
          f"(load average now {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    sys.exit(main())
