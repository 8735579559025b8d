"""The search that chose the presets in ``spinup/presets/``: a small grid per case.

Each candidate (a dict of keyword arguments) is run on a few seeds under the protocol
of ``benchmarks/time_to_threshold.py`` (10 deterministic test episodes every 2000 env
steps, evaluation time included, one thread, one subprocess per run). Candidates are
ranked by (number of seeds not solved, median seconds to threshold, median env steps).
Every run is appended to ``--out``/preset_search.csv and the best candidate of each case
is written as ``--out``/<algo>_<Env>.json; ``--publish`` writes it to the committed
``spinup/presets/<algo>_<Env>.json`` instead (the cases not searched keep theirs).

The grids are small on purpose: each varies the two or three settings that decide how
much computation is spent per env step (update size, network width, when learning
starts) and the step size. Everything else stays at the spec's defaults, so a preset
only lists what differs.

    python benchmarks/preset_search.py --cases ppo_cartpole --seeds 0 1 --publish
    python benchmarks/preset_search.py --list          # print the grids
"""
import argparse
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402
from benchmarks.time_to_threshold import CASES, _median, run_in_subprocess  # noqa: E402

PRESETS, PRESETS_SHOWN = _cli.committed("spinup", "presets")

GRIDS = {
    "ppo_cartpole": [
        {},
        {"steps_per_epoch": 1000, "pi_lr": 1e-3},
        {"steps_per_epoch": 1000, "pi_lr": 3e-3},
        {"steps_per_epoch": 2000, "pi_lr": 1e-3},
        {"steps_per_epoch": 1000, "pi_lr": 1e-3, "train_pi_iters": 40, "train_v_iters": 40},
        {"steps_per_epoch": 500, "pi_lr": 1e-3, "train_pi_iters": 40, "train_v_iters": 40},
    ],
    "dqn_cartpole": [
        {},
        {"eps_decay_steps": 5000, "lr": 2.3e-3},
        {"eps_decay_steps": 5000, "lr": 2.3e-3, "ac_kwargs": {"hidden_sizes": [64, 64]}},
        {"eps_decay_steps": 5000, "lr": 2.3e-3, "target_update_every": 100},
        {"eps_decay_steps": 5000, "lr": 1e-3, "anneal_lr": False, "update_every": 4},
        {"eps_decay_steps": 5000, "lr": 2.3e-3, "double": True},
        {"eps_decay_steps": 5000},
        {"eps_decay_steps": 5000, "n_step": 3},
        {"n_step": 3},
        {"eps_decay_steps": 5000, "target_update_every": 250},
    ],
    "sac_pendulum": [
        {},
        {"update_after": 500},
        {"ac_kwargs": {"hidden_sizes": [64, 64]}},
        {"ac_kwargs": {"hidden_sizes": [64, 64]}, "lr": 3e-3},
        {"ac_kwargs": {"hidden_sizes": [64, 64]}, "update_after": 500, "lr": 3e-3},
        {"ac_kwargs": {"hidden_sizes": [128, 128]}, "update_after": 500},
    ],
}

#: Search budgets: a candidate slower than the defaults' typical solve is not worth more.
SEARCH_BUDGET = {"ppo_cartpole": 60_000, "dqn_cartpole": 50_000, "sac_pendulum": 20_000}


def rank_key(rows):
    inf = float("inf")
    fails = sum(not r["solved"] for r in rows)
    return (fails, _median([r["seconds"] if r["solved"] else inf for r in rows]),
            _median([r["steps"] if r["solved"] else inf for r in rows]))


def main(argv=None):
    p = _cli.parser(__file__, __doc__.split("\n")[0])
    p.add_argument("--cases", nargs="+", default=list(GRIDS), choices=list(GRIDS),
                   help="the cases to search")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1],
                   help="the seeds each candidate runs")
    p.add_argument("--candidates", nargs="+", type=_cli.non_negative, default=None,
                   help="indices into the grid to run (default: all); --list shows them")
    p.add_argument("--budget", type=_cli.positive, default=None,
                   help="env steps per run (default: the case's search budget, "
                        + ", ".join(f"{case} {steps}" for case, steps in SEARCH_BUDGET.items())
                        + ")")
    p.add_argument("--out", default=_cli.scratch("preset_search"),
                   help="folder for preset_search.csv (appended) and the winners' JSON")
    _cli.add_publish(p, f"the winners: {PRESETS_SHOWN}/<algo>_<Env>.json")
    p.add_argument("--write", dest="publish", action="store_true",
                   help=argparse.SUPPRESS)   # the flag's earlier name
    p.add_argument("--list", action="store_true", help="print the grids and exit")
    args = p.parse_args(argv)

    if args.list:
        for case in args.cases:
            for i, cand in enumerate(GRIDS[case]):
                print(case, i, json.dumps(cand))
        return 0
    if args.candidates is not None:
        for case in args.cases:
            if not any(i < len(GRIDS[case]) for i in args.candidates):
                p.error(f"--candidates {' '.join(map(str, args.candidates))}: {case} has "
                        f"candidates 0 to {len(GRIDS[case]) - 1} (--list shows them)")

    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "preset_search.csv")
    new = not os.path.exists(csv_path)
    with open(csv_path, "a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(["case", "candidate", "kwargs", "seed", "solved", "steps", "seconds"])
        for case in args.cases:
            table = []
            for i, cand in enumerate(GRIDS[case]):
                if args.candidates is not None and i not in args.candidates:
                    continue
                rows = []
                for seed in args.seeds:
                    r = run_in_subprocess(case, "spinup", seed,
                                          args.budget or SEARCH_BUDGET[case], cand)
                    rows.append(r)
                    writer.writerow([case, i, json.dumps(cand), seed, r["solved"], r["steps"],
                                     r["seconds"]])
                    f.flush()
                    print(f"{case} #{i} {json.dumps(cand)} seed={seed} solved={r['solved']} "
                          f"steps={r['steps']} s={r['seconds']} {r.get('error', '')}", flush=True)
                table.append((rank_key(rows), i, cand))
            table.sort(key=lambda t: t[0])
            print(f"== {case} ranking (fails, median s, median steps):")
            for key, i, cand in table:
                print(f"   #{i} {key} {json.dumps(cand)}")
            best = table[0][2]  # an empty dict (the defaults) is never written
            if best:
                algo, env_id = CASES[case][0], CASES[case][1]
                picked = "" if args.candidates is None else \
                    " --candidates " + " ".join(map(str, args.candidates))
                budget = "" if args.budget is None else f" --budget {args.budget}"
                seeds = " ".join(map(str, args.seeds))
                preset = {"_about": f"Found by: python benchmarks/preset_search.py --cases {case} "
                                    f"--seeds {seeds}{picked}{budget} --publish; measured in "
                                    "docs/benchmarks/time_to_threshold.rst",
                          "env_name": env_id, **best}
                path = os.path.join(PRESETS if args.publish else args.out,
                                    f"{algo}_{env_id}.json")
                with open(path, "w") as out:
                    json.dump(preset, out, indent=4)
                    out.write("\n")
                print(f"   wrote {os.path.normpath(path)}")
    print(f"runs appended to {csv_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
