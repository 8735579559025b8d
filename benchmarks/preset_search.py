"""The search that chose the presets in ``spinup/presets/``: a small grid per case.

Each candidate (a dict of keyword arguments) is run on a few seeds under the protocol
of ``benchmarks/time_to_threshold.py`` (10 deterministic test episodes every 2000 env
steps, evaluation time included, one thread, one subprocess per run). Candidates are
ranked by (number of seeds not solved, median seconds to threshold, median env steps);
``--write`` stores the best one as ``spinup/presets/<algo>_<Env>.json``.

The grids are small on purpose: each varies the two or three settings that decide how
much computation is spent per env step (update size, network width, when learning
starts) and the step size. Everything else stays at the spec's defaults, so a preset
only lists what differs.

    python benchmarks/preset_search.py --cases ppo_cartpole --seeds 0 1 --write
    python benchmarks/preset_search.py --list          # print the grids
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_to_threshold import CASES, _median, run_in_subprocess  # noqa: E402

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
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", nargs="+", default=list(GRIDS), choices=list(GRIDS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--csv", default="preset_search.csv")
    p.add_argument("--candidates", nargs="+", type=int, default=None,
                   help="indices into the grid to run (default: all); --list shows them")
    p.add_argument("--write", action="store_true", help="write the winner to spinup/presets/")
    p.add_argument("--list", action="store_true", help="print the grids and exit")
    args = p.parse_args(argv)

    if args.list:
        for case in args.cases:
            for i, cand in enumerate(GRIDS[case]):
                print(case, i, json.dumps(cand))
        return 0

    new = not os.path.exists(args.csv)
    with open(args.csv, "a", newline="") as f:
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
                    r = run_in_subprocess(case, "spinup", seed, SEARCH_BUDGET[case], cand)
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
            if args.write and best:
                algo, env_id = CASES[case][0], CASES[case][1]
                picked = "" if args.candidates is None else \
                    " --candidates " + " ".join(map(str, args.candidates))
                seeds = " ".join(map(str, args.seeds))
                preset = {"_about": f"Found by: python benchmarks/preset_search.py --cases {case} "
                                    f"--seeds {seeds}{picked} --write; measured in "
                                    "docs/benchmarks/time_to_threshold.rst",
                          "env_name": env_id, **best}
                path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                    "spinup", "presets", f"{algo}_{env_id}.json")
                with open(path, "w") as out:
                    json.dump(preset, out, indent=4)
                    out.write("\n")
                print(f"   wrote {os.path.normpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
