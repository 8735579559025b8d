"""A3C throughput: total environment steps per second with 1 vs 2 (or more) workers,
and how the workers' updates interleave (asynchrony).

    python benchmarks/a3c_speed.py --steps 10000 --workers 1 2

Steps/s is measured from the workers' own update log (``updates.txt``: first to last
update), so process start-up is not counted. The runs go to ``--out`` (one folder per
number of workers, replaced by the next measurement); the table is printed. The figures
on docs/benchmarks/a2c_a3c.rst were copied from that table.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402


def make_env(env_id):
    import gymnasium as gym
    return gym.make(env_id)


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.strip().splitlines()[0])
    parser.add_argument("--steps", type=_cli.positive, default=10000,
                        help="env steps of the one epoch, all workers together")
    parser.add_argument("--workers", type=_cli.positive, nargs="+", default=[1, 2],
                        help="numbers of worker processes to compare")
    parser.add_argument("--env", default="CartPole-v1", type=_cli.gym_task,
                        help="a gymnasium task id")
    parser.add_argument("--out", default=_cli.scratch("a3c_speed"),
                        help="folder for the runs (w<N>/ per number of workers)")
    args = parser.parse_args(argv)

    import functools

    import pandas as pd

    from spinup import a3c
    rows = []
    for n in args.workers:
        out = os.path.join(args.out, f"w{n}")
        a3c(functools.partial(make_env, args.env), num_workers=n, steps_per_epoch=args.steps,
            epochs=1, num_test_episodes=1,
            logger_kwargs=dict(output_dir=out, overwrite=True))   # this script's own runs
        upd = pd.read_table(os.path.join(out, "updates.txt"))
        dt = upd["Time"].iloc[-1] - upd["Time"].iloc[0]
        dT = upd["T"].iloc[-1] - upd["T"].iloc[0]
        switches = (upd["Worker"].diff().fillna(0) != 0).sum()
        rows.append(dict(workers=n, env_steps_per_s=round(dT / dt, 1) if dt > 0 else None,
                         updates=len(upd), updates_per_worker=upd["Worker"].value_counts()
                         .sort_index().tolist(), mean_staleness=round(upd["Staleness"].mean(), 2),
                         worker_switches=int(switches)))
    print(pd.DataFrame(rows).to_string(index=False))
    print(f"runs in {args.out}")
    return 0


if __name__ == "__main__":  # command line only; main(argv) from Python
    sys.exit(main())
