"""Env-steps per second of spinup's SAC and TD3 against Stable-Baselines3 at a matched
configuration, measured side by side in one process.

Matched: Pendulum-v1, 256x256 ReLU networks, batch 100, Adam lr 1e-3, replay 1e6,
1000 uniform-random steps before learning, one gradient step per env step, fixed
SAC temperature 0.2, TD3 noise 0.1 / 0.2 / 0.5 and policy delay 2, one torch thread,
no evaluation episodes. spinup runs at its default ``update_every=50`` (50 steps of
interaction, then 50 gradient steps) and at ``update_every=1`` (SB3's schedule).

The numbers are steps / CPU-second of this process (robust on a shared machine) and
steps / wall-second, over whole runs (random steps included), after an untimed warm-up
that builds the optimizers and runs a few updates of every variant. With ``--repeats``
the variants are interleaved and each row is the median over the repeats: on a virtual
machine one run can be 40 % slower than the next with the same code. Usage::

    python benchmarks/offpolicy_speed.py [--steps 3000] [--repeats 1]
"""
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

ENV = "Pendulum-v1"
START = 1000   # uniform-random steps before learning, in every variant


def timed(fn):
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t_wall, time.process_time() - t_cpu


def spinup_run(algo, steps, update_every, start=START):
    import gymnasium as gym

    from spinup.algos.sac.sac import sac
    from spinup.algos.td3.td3 import td3
    fn = {"sac": sac, "td3": td3}[algo]
    with tempfile.TemporaryDirectory(prefix="spinup_speed_") as out:
        return timed(lambda: fn(lambda: gym.make(ENV), ac_kwargs=dict(hidden_sizes=(256, 256)),
                                steps_per_epoch=steps, epochs=1, batch_size=100,
                                start_steps=start, update_after=start,
                                update_every=update_every, num_test_episodes=0,
                                logger_kwargs=dict(output_dir=out,
                                                   output_fname="progress.txt")))


def sb3_run(algo, steps, start=START):
    import gymnasium as gym
    import numpy as np
    import stable_baselines3 as sb3
    from stable_baselines3.common.noise import NormalActionNoise
    env = gym.make(ENV)
    common = dict(policy_kwargs=dict(net_arch=[256, 256]), learning_rate=1e-3, batch_size=100,
                  buffer_size=int(1e6), learning_starts=start, train_freq=1, gradient_steps=1,
                  tau=0.005, gamma=0.99, device="cpu", verbose=0, seed=0)
    if algo == "sac":
        model = sb3.SAC("MlpPolicy", env, ent_coef=0.2, **common)
    else:
        half = (env.action_space.high - env.action_space.low) / 2
        model = sb3.TD3("MlpPolicy", env, policy_delay=2, target_policy_noise=0.2,
                        target_noise_clip=0.5,
                        action_noise=NormalActionNoise(np.zeros(1), 0.1 * half), **common)
    return timed(lambda: model.learn(total_timesteps=steps))


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n")[0])
    parser.add_argument("--steps", type=_cli.positive, default=3000,
                        help=f"env steps per run, the {START} random ones included")
    parser.add_argument("--repeats", type=_cli.positive, default=1,
                        help="interleaved rounds; each row is their median")
    args = parser.parse_args(argv)
    if args.steps <= START:
        parser.error(f"--steps {args.steps}: learning starts after {START} steps; give more")
    import numpy as np
    import torch
    torch.set_num_threads(1)
    try:
        import stable_baselines3
        sb3_version = stable_baselines3.__version__
    except ImportError:
        sb3_version = None
    print(f"torch {torch.__version__}, SB3 {sb3_version}, {args.steps} steps "
          f"({args.steps - START} with updates), cores {os.cpu_count()}")
    # Warm-up (imports, building the first optimizer, first updates), not timed: 200
    # steps of which the last 100 update, for every variant.
    for algo in ("sac", "td3"):
        spinup_run(algo, 200, 50, start=100)
        if sb3_version:
            sb3_run(algo, 200, start=100)
    rows = []
    for _ in range(args.repeats):
        for algo in ("sac", "td3"):   # interleaved, so load changes hit every variant
            rows.append((algo, "spinup update_every=50", *spinup_run(algo, args.steps, 50)))
            rows.append((algo, "spinup update_every=1", *spinup_run(algo, args.steps, 1)))
            if sb3_version:
                rows.append((algo, f"SB3 {sb3_version} train_freq=1", *sb3_run(algo, args.steps)))
    def median_rate(algo, name, column):
        return float(np.median([args.steps / r[column] for r in rows if r[:2] == (algo, name)]))

    names = list(dict.fromkeys((a, n) for a, n, _, _ in rows))
    print(f"\n{'algo':5s} {'implementation':32s} {'steps/CPU-s':>12s} {'steps/wall-s':>13s}"
          f"   (median of {args.repeats})")
    for algo, name in names:
        print(f"{algo:5s} {name:32s} {median_rate(algo, name, 3):12.1f} "
              f"{median_rate(algo, name, 2):13.1f}")
    if sb3_version:
        print()
        for algo in ("sac", "td3"):
            sb3 = median_rate(algo, f"SB3 {sb3_version} train_freq=1", 3)
            for sched in ("update_every=50", "update_every=1"):
                ours = median_rate(algo, "spinup " + sched, 3)
                print(f"{algo}: spinup ({sched}) / SB3 = {ours / sb3:.2f}x "
                      "(median steps per CPU-second)")


if __name__ == "__main__":
    sys.exit(main())
