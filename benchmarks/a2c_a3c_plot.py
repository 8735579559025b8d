"""Summarise and plot the A2C/A3C learning benchmarks.

    python benchmarks/a2c_a3c_plot.py OUT_DIR [--img docs/images]

For every run under OUT_DIR (``<exp>/<exp>_s<seed>/progress.txt``) prints the final
performance (``AverageTestEpRet`` if logged, else ``AverageEpRet``), the best one and
the steps used, and plots performance against ``TotalEnvInteracts`` per experiment.
"""
import argparse
import glob
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--img", default=None, help="directory for a2c_a3c_<exp>.png")
    args = parser.parse_args(argv)
    rows = []
    for exp_dir in sorted(glob.glob(os.path.join(args.out_dir, "*"))):
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
        if args.img:
            fig.savefig(os.path.join(args.img, f"a2c_a3c_{exp}.png"), dpi=80)
        plt.close(fig)
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":  # command line only; main(argv) from Python
    main()
