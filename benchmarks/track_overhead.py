"""What ``--track`` costs: PPO on CartPole-v1 from the command line without a tracker, with
W&B (offline) and with MLflow (a SQLite store), interleaved round by round.

Per run: the training rate (env steps per second between the first and the last row of
progress.txt, so the tracker's start-up is left out), the whole command's wall time (start-up
included), and, for a tracked run, the seconds spent inside the tracker's calls, which the run
records in tracking.json (start with the config; the rows). The last is the direct measure of
what tracking costs per step (its share of the training time); the rates of separate runs
differ by a few percent from run to run on their own. Medians over rounds; take it on an idle
machine.

    python benchmarks/track_overhead.py --rounds 5 --out DIR

writes ``runs.csv`` (one line per run) and ``summary.txt`` to ``--out`` (nothing else;
by default a folder of the system's temp folder). The figures on the Tracking page
(docs/benchmarks/tracking/overhead.inc) were copied from such a summary.
"""
import json
import os
import os.path as osp
import shutil
import subprocess
import sys
import tempfile
import time

HERE = osp.dirname(osp.abspath(__file__))
ROOT = osp.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if osp.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

MODES = ("none", "wandb", "mlflow")
TRACKERS = {"wandb": "wandb", "mlflow": "mlflow"}   # mode -> the module it needs


def _parser():
    parser = _cli.parser(__file__, "Cost of --track wandb|mlflow on PPO CartPole-v1 "
                                   "(interleaved runs).")
    parser.add_argument("--rounds", type=_cli.positive, default=5, help="runs of each mode")
    parser.add_argument("--epochs", type=_cli.positive, default=15,
                        help="epochs per run (at least 2: the rate is taken between rows)")
    parser.add_argument("--steps_per_epoch", type=_cli.positive, default=4000,
                        help="PPO's default: one row per 4000 env steps")
    parser.add_argument("--out", default=_cli.scratch("track_overhead"),
                        help="directory for runs.csv and summary.txt")
    return parser


def one_run(mode, args, scratch, index):
    """Run the CLI once; returns its figures (a dict)."""
    name = f"{mode}_{index}"
    cmd = [sys.executable, "-m", "spinup.run", "ppo", "--env", "CartPole-v1",
           "--epochs", str(args.epochs), "--steps_per_epoch", str(args.steps_per_epoch),
           "--exp_name", name, "--data_dir", scratch, "--seed", "0"]
    if mode == "wandb":
        cmd += ["--track", "wandb"]
    elif mode == "mlflow":
        cmd += ["--track", "mlflow", "--track_uri", f"sqlite:///{scratch}/mlflow.db"]
    env = dict(os.environ, WANDB_MODE="offline")
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=scratch, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SystemExit(f"track_overhead: the {mode} run failed: {last}")
    import pandas as pd
    run_dir = osp.join(scratch, name, f"{name}_s0")
    table = pd.read_table(osp.join(run_dir, "progress.txt"))
    training = table["Time"].iloc[-1] - table["Time"].iloc[0]
    rate = (table["TotalEnvInteracts"].iloc[-1] - table["TotalEnvInteracts"].iloc[0]) / training
    seconds = {}
    if mode != "none":
        with open(osp.join(run_dir, "tracking.json")) as f:
            seconds = json.load(f)["seconds"]
    return dict(steps_per_s=rate, wall_s=wall, training_s=training,
                start_s=seconds.get("start"), rows_s=seconds.get("rows"),
                rows_share=None if not seconds else seconds["rows"] / training)


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.epochs < 2:
        parser.error(f"argument --epochs: {args.epochs}: give at least 2")
    import importlib.util
    missing = [m for m in TRACKERS.values() if importlib.util.find_spec(m) is None]
    if missing:
        parser.error(f"needs {' and '.join(missing)}, not installed here "
                     "(pip install -e '.[track]')")
    import pandas as pd
    os.environ["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    rows = []
    scratch = tempfile.mkdtemp(prefix="track_overhead_")
    try:
        for r in range(args.rounds):
            order = MODES[r % 3:] + MODES[:r % 3]   # each mode goes first in turn
            for mode in order:
                figures = one_run(mode, args, scratch, r)
                rows.append(dict(round=r, mode=mode, **figures))
                print(f"round {r} {mode:6s} {figures['steps_per_s']:8.1f} steps/s  "
                      f"{figures['wall_s']:6.1f} s", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    runs = pd.DataFrame(rows)
    med = runs.groupby("mode")[["steps_per_s", "wall_s", "start_s", "rows_s",
                                "rows_share"]].median()
    lines = [f"PPO CartPole-v1, {args.epochs} epochs x {args.steps_per_epoch} steps, "
             f"{args.rounds} rounds interleaved; medians",
             f"{'mode':8s}{'steps/s':>10s}{'vs none':>10s}{'wall s':>10s}{'vs none':>10s}"
             f"{'start s':>10s}{'rows s':>10s}{'rows/train':>12s}"]
    for mode in MODES:
        rate, wall = med.loc[mode, "steps_per_s"], med.loc[mode, "wall_s"]
        tracked = "" if mode == "none" else (
            f"{med.loc[mode, 'start_s']:10.2f}{med.loc[mode, 'rows_s']:10.3f}"
            f"{med.loc[mode, 'rows_share']:12.2%}")
        lines.append(f"{mode:8s}{rate:10.1f}{rate / med.loc['none', 'steps_per_s'] - 1:+10.1%}"
                     f"{wall:10.1f}{wall / med.loc['none', 'wall_s'] - 1:+10.1%}" + tracked)
    os.makedirs(args.out, exist_ok=True)
    runs.to_csv(osp.join(args.out, "runs.csv"), index=False)
    with open(osp.join(args.out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
