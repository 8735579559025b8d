"""Summarize TRPO/NPG benchmark runs: python benchmarks/trpo_summary.py [OUT_DIR]

One row per run (every progress.txt under OUT_DIR): epochs done, final AverageEpRet,
best AverageEpRet, first epoch whose AverageEpRet reached the threshold given for its
env, mean BacktrackIters, max KL, wall-clock time. Prints an RST table.
"""
import glob
import json
import os
import sys

import pandas as pd

from spinup.machinery.run_dir import read_run_config

OUT = sys.argv[1] if len(sys.argv) > 1 else "/work/bench_out/issue4"
THRESHOLDS = {"CartPole-v1": 475, "InvertedPendulum-v5": 900, "Hopper-v5": 1000}

rows = []
for path in sorted(glob.glob(os.path.join(OUT, "**", "progress.txt"), recursive=True)):
    run_dir = os.path.dirname(path)
    df = pd.read_table(path)
    if df.empty:
        continue
    cfg = read_run_config(run_dir)
    env = cfg.get("env_name") or cfg.get("env_fn", "?")
    env = env if isinstance(env, str) else "?"
    env = next((e for e in THRESHOLDS if e in json.dumps(cfg)), env)
    thr = THRESHOLDS.get(env)
    hit = df.index[df["AverageEpRet"] >= thr] if thr is not None else []
    rows.append(dict(run=os.path.relpath(run_dir, OUT), algo=cfg.get("algo", "?"),
                     env=env, epochs=len(df),
                     final=round(df["AverageEpRet"].iloc[-1], 1),
                     best=round(df["AverageEpRet"].max(), 1),
                     first_hit=(int(df["Epoch"][hit[0]]) if len(hit) else "-"),
                     backtrack=round(df["BacktrackIters"].mean(), 2),
                     max_kl=round(df["KL"].max(), 4),
                     minutes=round(df["Time"].iloc[-1] / 60, 1)))
table = pd.DataFrame(rows)
print(table.to_string(index=False))
