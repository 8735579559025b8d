"""Summarize benchmark runs: final and best Performance per run directory.

    python benchmarks/summarize.py DATA_DIR [--at 100000 200000 300000]

Performance is AverageTestEpRet when logged (off-policy), else AverageEpRet.
``--at`` also reports Performance at the first epoch with TotalEnvInteracts >= each value.
"""
import argparse
import os

import pandas as pd


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("data_dir")
    parser.add_argument("--at", type=int, nargs="*", default=[])
    args = parser.parse_args(argv)
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
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":  # command line only; main(argv) from Python
    main()
