"""Env-steps/s of spinup DQN on CartPole-v1, side by side with Stable-Baselines3 DQN
at matched work: same network (256, 256) ReLU, batch 64, one gradient step every 2
env steps, hard target update every 500 steps, Huber loss, grad-norm clip 10,
1000 warm-up steps, one torch thread, no evaluation episodes.

    python benchmarks/dqn_speed.py --steps 20000 --repeats 2

Runs alternate (spinup, SB3, spinup, SB3, ...) so that a busy machine slows both
alike; prints a table of steps/s and the ratio spinup / SB3.
"""
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

WARMUP = 1000   # random steps before learning, in both libraries


def run_spinup(steps, seed):
    import gymnasium as gym

    from spinup.algos.dqn.dqn import dqn
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        dqn(lambda: gym.make("CartPole-v1"), seed=seed, steps_per_epoch=steps, epochs=1,
            ac_kwargs=dict(hidden_sizes=(256, 256)), batch_size=64, update_every=2,
            target_update_every=500, start_steps=WARMUP, update_after=WARMUP,
            eps_end=0.05, anneal_lr=False,  # SB3's constant lr and final epsilon
            num_test_episodes=0, logger_kwargs=dict(output_dir=d, output_fname="p.txt"))
        return steps / (time.perf_counter() - t)


def run_sb3(steps, seed):
    import gymnasium as gym
    import torch
    from stable_baselines3 import DQN
    torch.set_num_threads(1)
    model = DQN("MlpPolicy", gym.make("CartPole-v1"), seed=seed, device="cpu",
                policy_kwargs=dict(net_arch=[256, 256]), learning_rate=1e-3,
                buffer_size=100_000, learning_starts=WARMUP, batch_size=64, gamma=0.99,
                train_freq=2, gradient_steps=1, target_update_interval=500,
                exploration_fraction=10_000 / steps, exploration_final_eps=0.05,
                max_grad_norm=10, verbose=0)
    t = time.perf_counter()
    model.learn(total_timesteps=steps)
    return steps / (time.perf_counter() - t)


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.strip().splitlines()[0])
    parser.add_argument("--steps", type=_cli.positive, default=20000,
                        help=f"env steps per run (more than the {WARMUP} random ones)")
    parser.add_argument("--repeats", type=_cli.positive, default=2,
                        help="runs of each library, alternating")
    args = parser.parse_args(argv)
    if args.steps <= WARMUP:
        parser.error(f"--steps {args.steps}: learning starts after {WARMUP} steps; give more")
    import numpy as np
    try:
        import stable_baselines3  # noqa: F401
        has_sb3 = True
    except ImportError:
        has_sb3 = False
        print("stable-baselines3 is not installed: spinup alone", flush=True)
    res = {"spinup": [], "sb3": []}
    for r in range(args.repeats):
        res["spinup"].append(run_spinup(args.steps, r))
        print(f"spinup  run {r}: {res['spinup'][-1]:.0f} steps/s", flush=True)
        if has_sb3:
            res["sb3"].append(run_sb3(args.steps, r))
            print(f"sb3     run {r}: {res['sb3'][-1]:.0f} steps/s", flush=True)
    print(f"\n{'impl':8s} {'steps/s (mean)':>15s}   runs")
    for k, v in res.items():
        if v:
            print(f"{k:8s} {np.mean(v):15.0f}   {', '.join(f'{x:.0f}' for x in v)}")
    if has_sb3:
        ratios = [a / b for a, b in zip(res["spinup"], res["sb3"])]
        print(f"ratio spinup/sb3 per pair: {', '.join(f'{x:.2f}' for x in ratios)}; "
              f"mean {np.mean(ratios):.2f}")


if __name__ == "__main__":  # command line only; main(argv) from Python
    sys.exit(main())
