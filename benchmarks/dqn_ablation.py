"""DQN ablation on CartPole-v1: plain vs each extension alone vs all of them.

    python benchmarks/dqn_ablation.py run  --data_dir DIR --epochs 8 --seed 0 [--variants ...]
    python benchmarks/dqn_ablation.py plot --data_dir DIR --out docs/images/dqn_ablation.png
    python benchmarks/dqn_ablation.py table --extra name=path/progress.txt ... [--target 475]

``run`` trains each variant (default settings plus its switch) and writes
``DIR/abl_<variant>/progress.txt``; ``plot`` draws AverageTestEpRet against
TotalEnvInteracts for every ``DIR/abl_*/progress.txt`` (or ``--extra name=path``).
"""
import argparse
import glob
import os

VARIANTS = {
    "plain": {},
    "double": dict(double=True),
    "dueling": dict(dueling=True),
    "per": dict(prioritized_replay=True),
    "nstep3": dict(n_step=3),
    "all": dict(double=True, dueling=True, prioritized_replay=True, n_step=3),
}


def run(args):
    import gymnasium as gym
    from spinup.algos.dqn.dqn import dqn
    for name in args.variants:
        out = os.path.join(args.data_dir, f"abl_{name}")
        dqn(lambda: gym.make(args.env), seed=args.seed, epochs=args.epochs,
            logger_kwargs=dict(output_dir=out), **VARIANTS[name])


def table(args):
    """RST table: per run, last epoch reached, its AverageTestEpRet, the best one, and
    the first TotalEnvInteracts with AverageTestEpRet >= --target."""
    import pandas as pd
    print(f"{'run':28s} {'steps':>7s} {'last':>8s} {'best':>8s} {'first>=target':>14s}")
    for e in args.extra:
        name, path = e.split("=", 1)
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
    runs.update(dict(e.split("=", 1) for e in args.extra))
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
    fig.savefig(args.out, dpi=90)
    print("wrote", args.out)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["run", "plot", "table"])
    p.add_argument("--data_dir", default=".")
    p.add_argument("--target", type=float, default=475)
    p.add_argument("--title", default="")
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", nargs="+", default=list(VARIANTS))
    p.add_argument("--extra", nargs="*", default=[], help="name=path/to/progress.txt")
    p.add_argument("--max_steps", type=int, default=0)
    p.add_argument("--out", default="docs/images/dqn_ablation.png")
    a = p.parse_args()
    {"run": run, "plot": plot, "table": table}[a.cmd](a)
