"""Env-steps per second of spinup's SAC and TD3 against Stable-Baselines3 at a matched
configuration, measured side by side in one process.

Matched: Pendulum-v1, 256x256 ReLU networks, batch 100, Adam lr 1e-3, replay 1e6,
1000 uniform-random steps before learning, one gradient step per env step, fixed
SAC temperature 0.2, TD3 noise 0.1 / 0.2 / 0.5 and policy delay 2, one torch thread,
no evaluation episodes. spinup runs at its default ``update_every=50`` (50 steps of
interaction, then 50 gradient steps) and at ``update_every=1`` (SB3's schedule).

The numbers are steps / CPU-second of this process (robust on a shared machine) and
steps / wall-second, over whole runs (random steps included), after an untimed warm-up. Usage::

    python benchmarks/offpolicy_speed.py [--steps 3000] [--repeats 1]
"""
import argparse
import os
import tempfile
import time

import gymnasium as gym
import numpy as np
import torch

from spinup.algos.sac.sac import sac
from spinup.algos.td3.td3 import td3

ENV = "Pendulum-v1"


def timed(fn):
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t_wall, time.process_time() - t_cpu


def spinup_run(algo, steps, update_every):
    fn = {"sac": sac, "td3": td3}[algo]
    out = tempfile.mkdtemp(prefix="spinup_speed_")
    return timed(lambda: fn(lambda: gym.make(ENV), ac_kwargs=dict(hidden_sizes=(256, 256)),
                            steps_per_epoch=steps, epochs=1, batch_size=100, start_steps=1000,
                            update_after=1000, update_every=update_every, num_test_episodes=0,
                            logger_kwargs=dict(output_dir=out, output_fname="progress.txt")))


def sb3_run(algo, steps):
    import stable_baselines3 as sb3
    from stable_baselines3.common.noise import NormalActionNoise
    env = gym.make(ENV)
    common = dict(policy_kwargs=dict(net_arch=[256, 256]), learning_rate=1e-3, batch_size=100,
                  buffer_size=int(1e6), learning_starts=1000, train_freq=1, gradient_steps=1,
                  tau=0.005, gamma=0.99, device="cpu", verbose=0, seed=0)
    if algo == "sac":
        model = sb3.SAC("MlpPolicy", env, ent_coef=0.2, **common)
    else:
        half = (env.action_space.high - env.action_space.low) / 2
        model = sb3.TD3("MlpPolicy", env, policy_delay=2, target_policy_noise=0.2,
                        target_noise_clip=0.5,
                        action_noise=NormalActionNoise(np.zeros(1), 0.1 * half), **common)
    return timed(lambda: model.learn(total_timesteps=steps))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        import stable_baselines3
        sb3_version = stable_baselines3.__version__
    except ImportError:
        sb3_version = None
    print(f"torch {torch.__version__}, SB3 {sb3_version}, {args.steps} steps "
          f"({args.steps - 1000} with updates), cores {os.cpu_count()}")
    # Warm-up (first-call costs of torch kernels and imports), not timed.
    spinup_run("sac", 300, 50)
    if sb3_version:
        sb3_run("sac", 300)
    rows = []
    for _ in range(args.repeats):
        for algo in ("sac", "td3"):   # interleaved, so load changes hit every variant
            rows.append((algo, "spinup update_every=50", *spinup_run(algo, args.steps, 50)))
            rows.append((algo, "spinup update_every=1", *spinup_run(algo, args.steps, 1)))
            if sb3_version:
                rows.append((algo, f"SB3 {sb3_version} train_freq=1", *sb3_run(algo, args.steps)))
    print(f"\n{'algo':5s} {'implementation':32s} {'steps/CPU-s':>12s} {'steps/wall-s':>13s}")
    for algo, name, wall, cpu in rows:
        print(f"{algo:5s} {name:32s} {args.steps / cpu:12.1f} {args.steps / wall:13.1f}")
    if sb3_version:
        print()
        for algo in ("sac", "td3"):
            def best(prefix):
                return max(args.steps / c for a, n, _, c in rows if a == algo and n.startswith(prefix))
            for sched in ("update_every=50", "update_every=1"):
                print(f"{algo}: spinup ({sched}) / SB3 = "
                      f"{best('spinup ' + sched) / best('SB3'):.2f}x (steps per CPU-second)")


if __name__ == "__main__":
    main()
