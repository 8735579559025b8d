"""Draw the map of RL algorithms used on docs/intro/kinds.rst.

Run from the repository root (matplotlib only; nothing is downloaded)::

    python docs/intro/make_map.py            # writes docs/images/intro_algorithm_map.png

The picture is a tree: model-free and model-based at the top, the model-free side split
into policy optimization, Q-learning and the methods that learn both, and every algorithm
that spinup implements in a box under the family it belongs to. Algorithms of other
projects appear in grey, so the reader sees where spinup's sit in the wider field.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "images", "intro_algorithm_map.png")

# (x, y, text, kind): kind "root"/"family" are headings, "spinup" an algorithm of this
# project, "other" an algorithm it does not implement (shown for orientation only).
NODES = {
    "rl": (0.55, 0.94, "RL algorithms", "root"),
    "free": (0.37, 0.80, "Model-free", "family"),
    "based": (0.87, 0.80, "Model-based", "family"),
    "po": (0.12, 0.64, "Policy optimization\n(learn $\\pi_\\theta$, often with $V_\\phi$)",
           "family"),
    "mix": (0.37, 0.64, "Between the two\n(learn $\\mu_\\theta$ or $\\pi_\\theta$, and $Q_\\phi$)",
            "family"),
    "ql": (0.61, 0.64, "Q-learning\n(learn $Q_\\theta \\approx Q^*$)", "family"),
    "learn": (0.80, 0.64, "Learn the\nmodel", "family"),
    "given": (0.94, 0.64, "Model\ngiven", "family"),
}
# Under each family, a column of algorithms: (family, [(key, text, kind), ...]).
COLUMNS = [
    ("po", [("vpg", "VPG", "spinup"), ("trpo", "TRPO / NPG", "spinup"),
            ("ppo", "PPO", "spinup"), ("a2c", "A2C", "spinup"), ("a3c", "A3C", "spinup")]),
    ("mix", [("ddpg", "DDPG", "spinup"), ("td3", "TD3", "spinup"), ("sac", "SAC", "spinup"),
             ("her", "HER\n(replay for goals)", "other")]),
    ("ql", [("dqn", "DQN family\n(Double, Dueling, PER, n-step)", "spinup"),
            ("c51", "C51, QR-DQN", "other")]),
    # Model-based: one box per way of using the model (kinds.rst, "Model-based methods").
    ("learn", [("mbmf", "MBMF\n(plans: MPC)", "other"),
               ("mbve", "MBVE\n(imagined targets)", "other"),
               ("wm", "World Models\n(trains in the model)", "other"),
               ("i2a", "I2A\n(planning in $\\pi$)", "other")]),
    ("given", [("az", "AlphaZero\n(expert iteration)", "other"),
               ("exit", "ExIt\n(expert iteration)", "other")]),
]
ROW_Y = [0.49, 0.40, 0.31, 0.22, 0.13]
EDGES = [("rl", "free"), ("rl", "based"), ("free", "po"), ("free", "mix"), ("free", "ql"),
         ("based", "learn"), ("based", "given")]
STYLE = {"root": dict(fc="#ffffff", ec="#333333", fontweight="bold"),
         "family": dict(fc="#eef2f7", ec="#50617a", fontweight="bold"),
         "spinup": dict(fc="#d8ecd3", ec="#2f6b2a", fontweight="bold"),
         "other": dict(fc="#f2f2f2", ec="#9a9a9a", fontweight="normal")}


def draw(out_path):
    """Draw the map and save it as a PNG at ``out_path`` (directories must exist)."""
    fig, ax = plt.subplots(figsize=(11, 6.4), dpi=110)
    ax.set_xlim(0, 1)
    ax.set_ylim(0.0, 1)
    ax.axis("off")

    def box(x, y, text, kind):
        style = STYLE[kind]
        ax.text(x, y, text, ha="center", va="center", fontsize=9, zorder=3,
                fontweight=style["fontweight"],
                color="#555555" if kind == "other" else "#111111",
                bbox=dict(boxstyle="round,pad=0.4", fc=style["fc"], ec=style["ec"], lw=1.2))

    for a, b in EDGES:
        (x0, y0, *_), (x1, y1, *_) = NODES[a], NODES[b]
        ax.annotate("", xy=(x1, y1 + 0.045), xytext=(x0, y0 - 0.035),
                    arrowprops=dict(arrowstyle="-|>", color="#777777", lw=1.0))
    for x, y, text, kind in NODES.values():
        box(x, y, text, kind)
    for family, algos in COLUMNS:
        x, y, *_ = NODES[family]
        ax.plot([x, x], [y - 0.05, ROW_Y[len(algos) - 1]], color="#777777", lw=1.0, zorder=1)
        for (key, text, kind), row_y in zip(algos, ROW_Y):
            box(x, row_y, text, kind)
    # Legend, top left: which boxes are spinup's.
    for i, (kind, label) in enumerate([("spinup", "implemented in spinup (linked below)"),
                                       ("other", "not in spinup, shown for orientation")]):
        ax.add_patch(FancyBboxPatch((0.01, 0.93 - 0.05 * i), 0.022, 0.025,
                                    boxstyle="round,pad=0.004", fc=STYLE[kind]["fc"],
                                    ec=STYLE[kind]["ec"]))
        ax.text(0.042, 0.942 - 0.05 * i, label, va="center", fontsize=9)
    # The on-policy / off-policy axis under the model-free side.
    ax.annotate("", xy=(0.66, 0.04), xytext=(0.06, 0.04),
                arrowprops=dict(arrowstyle="<->", color="#50617a", lw=1.2))
    ax.text(0.06, 0.005, "on-policy: each update uses fresh data from the current policy",
            ha="left", fontsize=8, color="#50617a")
    ax.text(0.66, 0.005, "off-policy: reuses old data from a replay buffer", ha="right",
            fontsize=8, color="#50617a")
    fig.tight_layout()
    fig.savefig(out_path)
    plt.close(fig)


def main(argv=None):
    """Command line: ``--out FILE`` (default docs/images/intro_algorithm_map.png)."""
    cli = argparse.ArgumentParser(description="draw the algorithm map of docs/intro/kinds.rst")
    cli.add_argument("--out", default=DEFAULT_OUT, help="PNG file to write")
    opts = cli.parse_args(argv)
    out_dir = os.path.dirname(os.path.abspath(opts.out))
    if not os.path.isdir(out_dir):
        cli.error(f"--out: directory {out_dir} does not exist")
    draw(opts.out)
    print(f"wrote {os.path.normpath(opts.out)}")


if __name__ == "__main__":
    main()
