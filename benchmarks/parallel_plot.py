"""Plot the throughput record of benchmarks/parallel_envs.py.

Env steps per second against the number of copies, one line per task, PPO's collection
and whole epochs, with the one-env gymnasium path as a dashed line. Usage::

    python benchmarks/parallel_plot.py [RECORD] [--out FILE]
    python benchmarks/parallel_plot.py --publish     # the figure of docs/benchmarks/parallel.rst

RECORD defaults to the committed docs/benchmarks/parallel/throughput.json; the figure goes
to ``--out``, or with ``--publish`` to docs/benchmarks/parallel/throughput.png.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

RECORD, RECORD_SHOWN = _cli.committed("docs", "benchmarks", "parallel", "throughput.json")
FIGURE, FIGURE_SHOWN = _cli.committed("docs", "benchmarks", "parallel", "throughput.png")


def plot(medians, dst):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({key.split("|")[1] for key in medians if key.startswith("ppo|")})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, column, title in ((axes[0], "collect", "PPO, collection"),
                              (axes[1], "epoch", "PPO, whole epochs (1 update iteration)")):
        for i, task in enumerate(tasks):
            sizes = sorted(int(key.split("|")[2]) for key in medians
                           if key.startswith(f"ppo|{task}|") and not key.endswith("|gym"))
            rates = [medians[f"ppo|{task}|{n}"][column] for n in sizes]
            line, = ax.plot(sizes, rates, marker="o", label=task, color=f"C{i}")
            if f"ppo|{task}|gym" in medians:
                ax.axhline(medians[f"ppo|{task}|gym"][column], color=line.get_color(),
                           linestyle="--", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("copies of the batched task (num_envs)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("env steps per second (dashed: one gymnasium env)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    fig.savefig(dst, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("record", nargs="?", default=RECORD,
                        help=f"a JSON record of parallel_envs.py (default: {RECORD_SHOWN})")
    parser.add_argument("--out", default=os.path.join(_cli.scratch("parallel_plot"),
                                                      "throughput.png"),
                        help="the figure file")
    _cli.add_publish(parser, FIGURE_SHOWN)
    args = parser.parse_args(argv)
    try:
        with open(args.record) as f:
            medians = json.load(f)["medians"]
    except OSError as error:
        parser.error(f"{args.record}: {error.strerror}")
    except (ValueError, KeyError, TypeError):
        parser.error(f"{args.record}: not a record of benchmarks/parallel_envs.py (no medians)")
    if not any(key.startswith("ppo|") for key in medians):
        parser.error(f"{args.record}: no PPO figures to plot")
    out = FIGURE if args.publish else args.out
    plot(medians, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
