"""Summarize benchmark runs: final and best Performance per run directory.

    python benchmarks/summarize.py DATA_DIR [--at 100000 200000 300000]

Performance is AverageTestEpRet when logged (off-policy), else AverageEpRet.
``--at`` also reports Performance at the first epoch with TotalEnvInteracts >= each value.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.strip().splitlines()[0])
    parser.add_argument("data_dir", type=_cli.folder, help="the folder the runs are under")
    parser.add_argument("--at", type=_cli.non_negative, nargs="*", default=[],
                        help="also the Performance at these numbers of env steps")
    args = parser.parse_args(argv)
    import pandas as pd
    rows = []
    for root, _, files in sorted(os.walk(args.data_dir)):
        if "progress.txt" not in files:
            continue
        df = pd.read_table(os.path.join(root, "progress.txt"))
        if len(df) == 0:
            continue
        perf = "AverageTestEpRet" if "AverageTestEpRet" in df else "AverageEpRet"
        row = {"run": os.path.relpath(root, args.data_dir), "epochs": len(df),
               "steps": int(df["TotalEnvInteracts"].iloc[-1]),
               "final": round(float(df[perf].iloc[-1]), 1), "best": round(float(df[perf].max()), 1),
               "time_s": round(float(df["Time"].iloc[-1]), 1)}
        for at in args.at:
            hit = df[df["TotalEnvInteracts"] >= at]
            row[f"@{at}"] = round(float(hit[perf].iloc[0]), 1) if len(hit) else None
        rows.append(row)
    if not rows:
        parser.error(f"no runs under {args.data_dir} (no progress.txt with a row)")
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":  # command line only; main(argv) from Python
    sys.exit(main())
