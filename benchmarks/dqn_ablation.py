"""DQN ablation on CartPole-v1: plain vs each extension alone vs all of them.

    python benchmarks/dqn_ablation.py run   --data_dir DIR --epochs 8 --seed 0 [--variants ...]
    python benchmarks/dqn_ablation.py plot  --data_dir DIR [--out FILE | --publish]
    python benchmarks/dqn_ablation.py table --extra name=path/progress.txt ... [--target 475]

``run`` trains each variant (default settings plus its switch) and writes
``DIR/abl_<variant>/progress.txt``; ``plot`` draws AverageTestEpRet against
TotalEnvInteracts for every ``DIR/abl_*/progress.txt`` (or ``--extra name=path``) into
``--out``, or with ``--publish`` into docs/images/dqn_ablation.png, the figure of
docs/benchmarks/dqn.rst; ``table`` prints, per run, its last and best AverageTestEpRet and
the first step at ``--target``.
"""
import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

VARIANTS = {
    "plain": {},
    "double": dict(double=True),
    "dueling": dict(dueling=True),
    "per": dict(prioritized_replay=True),
    "nstep3": dict(n_step=3),
    "all": dict(double=True, dueling=True, prioritized_replay=True, n_step=3),
}
FIGURE, FIGURE_SHOWN = _cli.committed("docs", "images", "dqn_ablation.png")


def run(args):
    import functools

    import gymnasium as gym

    from spinup.algos.dqn.dqn import dqn
    budget = {} if args.steps_per_epoch is None else dict(steps_per_epoch=args.steps_per_epoch)
    for name in args.variants:
        out = os.path.join(args.data_dir, f"abl_{name}")
        try:
            dqn(functools.partial(gym.make, args.env), seed=args.seed, epochs=args.epochs,
                logger_kwargs=dict(output_dir=out), **budget, **VARIANTS[name])
        except FileExistsError as error:   # an earlier run there: not overwritten
            args.parser.error(f"{str(error).split(';')[0]}; give another --data_dir")
        except ValueError as error:
            if not str(error).startswith("dqn: "):   # not dqn's check of its arguments
                raise
            args.parser.error(str(error).splitlines()[0])
    print(f"runs in {args.data_dir}")


def table(args):
    """RST table: per run, last epoch reached, its AverageTestEpRet, the best one, and
    the first TotalEnvInteracts with AverageTestEpRet >= --target."""
    import pandas as pd
    print(f"{'run':28s} {'steps':>7s} {'last':>8s} {'best':>8s} {'first>=target':>14s}")
    for name, path in args.extra:
        df = pd.read_table(path)
        hit = df[df["AverageTestEpRet"] >= args.target]["TotalEnvInteracts"]
        print(f"{name:28s} {df['TotalEnvInteracts'].iloc[-1]:7d} "
              f"{df['AverageTestEpRet'].iloc[-1]:8.1f} {df['AverageTestEpRet'].max():8.1f} "
              f"{(str(hit.iloc[0]) if len(hit) else '-'):>14s}")


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    runs = {os.path.basename(os.path.dirname(p))[4:]: p
            for p in sorted(glob.glob(os.path.join(args.data_dir, "abl_*", "progress.txt")))}
    runs.update(dict(args.extra))
    if not runs:
        args.parser.error(f"nothing to plot: no {args.data_dir}/abl_*/progress.txt and no "
                          "--extra")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, path in runs.items():
        df = pd.read_table(path)
        if args.max_steps:
            df = df[df["TotalEnvInteracts"] <= args.max_steps]
        ax.plot(df["TotalEnvInteracts"], df["AverageTestEpRet"], label=name, marker=".")
    ax.set_xlabel("TotalEnvInteracts")
    ax.set_ylabel("AverageTestEpRet (10 greedy episodes)")
    ax.set_title(args.title or f"DQN ablation, {args.env}, seed {args.seed}")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = FIGURE if args.publish else args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=90)
    print("wrote", out)


def _named_file(text):
    """``name=path`` with an existing file at ``path``."""
    name, sep, path = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not name=path/to/progress.txt")
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"{path}: no such file")
    return name, path


def main(argv=None):
    p = _cli.parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("cmd", choices=["run", "plot", "table"], help="what to do")
    p.add_argument("--data_dir", default=_cli.scratch("dqn_ablation"),
                   help="run: where the runs go (abl_<variant>/); plot: where they are read")
    p.add_argument("--target", type=float, default=475, help="table: the return to reach")
    p.add_argument("--title", help="plot: the figure's title (default: one naming the env "
                   "and seed)")
    p.add_argument("--env", default="CartPole-v1", type=_cli.gym_task,
                   help="run: the gymnasium task")
    p.add_argument("--epochs", type=_cli.positive, default=8, help="run: epochs per variant")
    p.add_argument("--steps_per_epoch", type=_cli.positive, default=None,
                   help="run: env steps per epoch (default: dqn's own)")
    p.add_argument("--seed", type=int, default=0, help="run: the seed")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS),
                   help="run: the variants to train")
    p.add_argument("--extra", nargs="*", default=[], type=_named_file,
                   metavar="NAME=PATH", help="plot, table: more runs, name=path/to/progress.txt")
    p.add_argument("--max_steps", type=_cli.non_negative, default=0,
                   help="plot: draw up to this many env steps (0: all)")
    p.add_argument("--out", default=os.path.join(_cli.scratch("dqn_ablation"),
                                                 "dqn_ablation.png"),
                   help="plot: the figure file")
    _cli.add_publish(p, f"plot: {FIGURE_SHOWN}")
    args = p.parse_args(argv)
    if args.cmd == "table" and not args.extra:
        p.error("table reads the runs given by --extra name=path/to/progress.txt; give some")
    if args.cmd == "plot" and not args.extra and not os.path.isdir(args.data_dir):
        p.error(f"--data_dir {args.data_dir}: no such directory")
    args.parser = p
    {"run": run, "plot": plot, "table": table}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
