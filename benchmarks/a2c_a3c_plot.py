"""Summarise and plot the A2C/A3C learning benchmarks.

    python benchmarks/a2c_a3c_plot.py RUNS_DIR [--out DIR]
    python benchmarks/a2c_a3c_plot.py RUNS_DIR --publish     # the page's figures

For every run under RUNS_DIR (``<exp>/<exp>_s<seed>/progress.txt``, as
``benchmarks/a2c_a3c_learning.sh`` writes them) prints the final performance
(``AverageTestEpRet`` if logged, else ``AverageEpRet``), the best one and the steps used,
and plots performance against ``TotalEnvInteracts`` per experiment into
``a2c_a3c_<exp>.png`` in ``--out``; ``--publish`` writes them to ``docs/images/``, the
figures of docs/benchmarks/a2c_a3c.rst (an experiment not in RUNS_DIR keeps its figure).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

FIGURES, FIGURES_SHOWN = _cli.committed("docs", "images")


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.strip().splitlines()[0])
    parser.add_argument("runs_dir", type=_cli.folder,
                        help="the folder benchmarks/a2c_a3c_learning.sh wrote to")
    parser.add_argument("--out", default=_cli.scratch("a2c_a3c_plot"),
                        help="folder for the figures a2c_a3c_<exp>.png (created if needed)")
    _cli.add_publish(parser, FIGURES_SHOWN + "/a2c_a3c_<exp>.png")
    args = parser.parse_args(argv)

    import glob

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    out = FIGURES if args.publish else args.out
    rows, written = [], []
    for exp_dir in sorted(glob.glob(os.path.join(args.runs_dir, "*"))):
        runs = sorted(glob.glob(os.path.join(exp_dir, "*", "progress.txt")))
        if not runs:
            continue
        exp = os.path.basename(exp_dir)
        fig, ax = plt.subplots(figsize=(5, 3.2))
        for path in runs:
            df = pd.read_table(path)
            perf = "AverageTestEpRet" if "AverageTestEpRet" in df else "AverageEpRet"
            run = os.path.basename(os.path.dirname(path))
            ax.plot(df["TotalEnvInteracts"], df[perf], label=run.split("_")[-1])
            rows.append(dict(run=run, metric=perf, epochs=len(df),
                             steps=int(df["TotalEnvInteracts"].iloc[-1]),
                             final=round(df[perf].iloc[-1], 1), best=round(df[perf].max(), 1),
                             hours=round(df["Time"].iloc[-1] / 3600, 2)))
        ax.set_xlabel("TotalEnvInteracts")
        ax.set_ylabel(perf)
        ax.set_title(exp)
        ax.legend()
        fig.tight_layout()
        os.makedirs(out, exist_ok=True)
        written.append(os.path.join(out, f"a2c_a3c_{exp}.png"))
        fig.savefig(written[-1], dpi=80)
        plt.close(fig)
    if not rows:
        parser.error(f"no runs under {args.runs_dir} (expected <exp>/<run>/progress.txt)")
    print(pd.DataFrame(rows).to_string(index=False))
    print("wrote " + ", ".join(written))
    return 0


if __name__ == "__main__":  # command line only; main(argv) from Python
    sys.exit(main())
