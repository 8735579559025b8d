"""A3C throughput: total environment steps per second with 1 vs 2 (or more) workers,
and how the workers' updates interleave (asynchrony).

    python benchmarks/a3c_speed.py --steps 10000 --workers 1 2 --out /tmp/a3c_speed

Steps/s is measured from the workers' own update log (``updates.txt``: first to last
update), so process start-up is not counted. Results go to docs/benchmarks/a2c_a3c.rst.
"""
import argparse
import os

import gymnasium as gym
import pandas as pd

from spinup import a3c


def make_env():
    return gym.make("CartPole-v1")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--out", default="/tmp/a3c_speed")
    args = parser.parse_args(argv)
    rows = []
    for n in args.workers:
        out = os.path.join(args.out, f"w{n}")
        a3c(lambda: gym.make(args.env), num_workers=n, steps_per_epoch=args.steps, epochs=1,
            num_test_episodes=1, logger_kwargs=dict(output_dir=out))
        upd = pd.read_table(os.path.join(out, "updates.txt"))
        dt = upd["Time"].iloc[-1] - upd["Time"].iloc[0]
        dT = upd["T"].iloc[-1] - upd["T"].iloc[0]
        switches = (upd["Worker"].diff().fillna(0) != 0).sum()
        rows.append(dict(workers=n, env_steps_per_s=round(dT / dt, 1),
                         updates=len(upd), updates_per_worker=upd["Worker"].value_counts()
                         .sort_index().tolist(), mean_staleness=round(upd["Staleness"].mean(), 2),
                         worker_switches=int(switches)))
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":  # command line only; main(argv) from Python
    main()
