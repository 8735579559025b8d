"""Summarize TRPO/NPG benchmark runs: python benchmarks/trpo_summary.py [OUT_DIR]

One row per run (every progress.txt under OUT_DIR): epochs done, final AverageEpRet,
best AverageEpRet, first epoch whose AverageEpRet reached the threshold given for its
env, mean BacktrackIters, max KL, wall-clock time. Prints the table.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

DEFAULT_OUT = "/work/bench_out/issue4"   # benchmarks/trpo_learning.sh's default
THRESHOLDS = {"CartPole-v1": 475, "InvertedPendulum-v5": 900, "Hopper-v5": 1000}


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=DEFAULT_OUT, metavar="OUT_DIR", type=_cli.folder,
                        help="the folder benchmarks/trpo_learning.sh wrote to")
    out = parser.parse_args(argv).out
    import pandas as pd

    from spinup.machinery.run_dir import LaunchError, read_run_config

    rows = []
    for path in sorted(glob.glob(os.path.join(out, "**", "progress.txt"), recursive=True)):
        run_dir = os.path.dirname(path)
        df = pd.read_table(path)
        if df.empty or "BacktrackIters" not in df:   # not a TRPO/NPG run, or no epoch yet
            continue
        try:
            cfg = read_run_config(run_dir)
        except LaunchError:   # no readable config.json: the env and algorithm stay "?"
            cfg = {}
        env = cfg.get("env_name") or cfg.get("env_fn", "?")
        env = env if isinstance(env, str) else "?"
        env = next((e for e in THRESHOLDS if e in json.dumps(cfg)), env)
        thr = THRESHOLDS.get(env)
        hit = df.index[df["AverageEpRet"] >= thr] if thr is not None else []
        rows.append(dict(run=os.path.relpath(run_dir, out), algo=cfg.get("algo", "?"),
                         env=env, epochs=len(df),
                         final=round(df["AverageEpRet"].iloc[-1], 1),
                         best=round(df["AverageEpRet"].max(), 1),
                         first_hit=(int(df["Epoch"][hit[0]]) if len(hit) else "-"),
                         backtrack=round(df["BacktrackIters"].mean(), 2),
                         max_kl=round(df["KL"].max(), 4),
                         minutes=round(df["Time"].iloc[-1] / 60, 1)))
    if not rows:
        parser.error(f"no TRPO/NPG runs under {out} (no progress.txt with BacktrackIters)")
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
