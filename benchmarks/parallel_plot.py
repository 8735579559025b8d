"""Plot docs/benchmarks/parallel/throughput.json (benchmarks/parallel_envs.py): env steps
per second against the number of copies, one line per task, PPO's collection and whole
epochs, with the one-env gymnasium path as a dashed line. Usage::

    python benchmarks/parallel_plot.py docs/benchmarks/parallel/throughput.json \\
        docs/benchmarks/parallel/throughput.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    medians = json.load(open(src))["medians"]
    tasks = sorted({key.split("|")[1] for key in medians if key.startswith("ppo|")})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, column, title in ((axes[0], "collect", "PPO, collection"),
                              (axes[1], "epoch", "PPO, whole epochs (1 update iteration)")):
        for i, task in enumerate(tasks):
            sizes = sorted(int(key.split("|")[2]) for key in medians
                           if key.startswith(f"ppo|{task}|") and not key.endswith("|gym"))
            rates = [medians[f"ppo|{task}|{n}"][column] for n in sizes]
            line, = ax.plot(sizes, rates, marker="o", label=task, color=f"C{i}")
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
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(*sys.argv[1:3])
