"""First epochs under kernel settings that may give the same numbers on every x86-64 CPU.

The committed MuJoCo runs reproduce exactly only on a CPU like the one that made them
(``tests/test_mujoco_benchmark.py``). ``benchmarks/kernel_probe.py`` traced the difference
to two choices torch makes at run time: MKL's matrix-product code path, and ATen's vector
kernel family. Both can be fixed from the environment before torch starts:

- ``MKL_CBWR=COMPATIBLE``: MKL's reproducibility mode on its SSE2 branch, the one branch
  that MKL's documentation offers for Intel and non-Intel processors alike (on an AMD
  CPU the other branches fall back to ``AUTO``);
- ``ATEN_CPU_CAPABILITY=avx2``: ATen's AVX2 kernels, which every x86-64 CPU with AVX2
  runs (without the setting an AVX-512 CPU uses its AVX-512 kernels).

Whether this really gives equal numbers across CPUs can only be answered on a second CPU.
This script makes that one command. ``record`` reruns the first epoch of six committed
runs (one per algorithm, the cases of the rerun test) under these settings and writes the
rows with this machine's provenance to ``--out`` (with ``--publish``: to the committed
``docs/benchmarks/mujoco/portable_rows.json``); ``check`` reruns them on the machine at
hand and compares every column but ``Time`` exactly with the committed rows (or those of
``--against``; exit 1 if any differs)::

    python benchmarks/portable_rows.py check
    python benchmarks/portable_rows.py record --publish     # on the machine of the runs
"""
import argparse
import importlib.util
import json
import os
import os.path as osp
import subprocess
import sys
import tempfile

HERE = osp.dirname(osp.abspath(__file__))
ROOT = osp.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if osp.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

ROWS, ROWS_SHOWN = _cli.committed("docs", "benchmarks", "mujoco", "portable_rows.json")
SETTINGS = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "avx2"}
CASES = [("vpg", "Hopper", 0), ("trpo", "Hopper", 0), ("ppo", "Hopper", 0),
         ("ddpg", "Hopper", 0), ("td3", "Walker2d", 0), ("sac", "HalfCheetah", 0)]


def _harness():
    spec = importlib.util.spec_from_file_location("mujoco_harness",
                                                  osp.join(ROOT, "benchmarks", "mujoco.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(out_path):
    """Runs under SETTINGS: the first-epoch rows of CASES, with this run's provenance."""
    from spinup.machinery.provenance import provenance
    harness = _harness()
    rows = {}
    for algo, task, seed in CASES:
        run_dir = osp.join(harness.RUNS_DIR, "here", algo, task, f"s{seed}")
        with tempfile.TemporaryDirectory() as out:
            _, rerun = harness.first_epoch(run_dir, out)
        rows[f"{algo}/{task}/s{seed}"] = {k: float(v) for k, v in rerun.items()}
        print(f"{algo}/{task}/s{seed}: done", flush=True)
    with open(out_path, "w") as f:
        json.dump(dict(settings=SETTINGS, provenance=provenance(), rows=rows), f, indent=1,
                  sort_keys=True)


def rerun_rows():
    """Run :func:`child` in a process started with SETTINGS (they must be set before torch
    loads); its output as a dict."""
    with tempfile.TemporaryDirectory() as tmp:
        out = osp.join(tmp, "rows.json")
        env = dict(os.environ, **SETTINGS, PYTHONPATH=ROOT)
        done = subprocess.run([sys.executable, osp.abspath(__file__), "child", out], env=env)
        if done.returncode != 0:
            raise SystemExit(f"portable_rows: the rerun failed (exit {done.returncode}); its "
                             "error is above")
        with open(out) as f:
            return json.load(f)


def main(argv=None):
    p = _cli.parser(__file__, __doc__.splitlines()[0])
    p.add_argument("command", choices=["record", "check", "child"], metavar="{record,check}",
                   help="record: write this machine's rows; check: compare them with the "
                        "recorded ones")
    p.add_argument("child_out", nargs="?", help=argparse.SUPPRESS)
    p.add_argument("--out", default=os.path.join(_cli.scratch("portable_rows"),
                                                 "portable_rows.json"),
                   help="record: where the rows go")
    _cli.add_publish(p, f"record: {ROWS_SHOWN}")
    p.add_argument("--against", default=ROWS,
                   help=f"check: the recorded rows to compare with (default: {ROWS_SHOWN})")
    args = p.parse_args(argv)
    if args.command == "child":
        if not args.child_out:
            p.error("child: give the file to write")
        child(args.child_out)
        return 0
    if args.command == "check" and not osp.isfile(args.against):
        p.error(f"--against {args.against}: no such file")
    new = rerun_rows()
    if args.command == "record":
        out = ROWS if args.publish else args.out
        os.makedirs(osp.dirname(osp.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(new, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"portable_rows: wrote {osp.relpath(out, ROOT) if args.publish else out}")
        return 0
    with open(args.against) as f:
        old = json.load(f)
    for who, rec in (("recorded on", old), ("rerun on", new)):
        print(f"{who:12s} {rec['provenance'].get('cpu')} "
              f"[{rec['provenance'].get('cpu_capability')}]")
    same = lambda a, b: a == b or (a != a and b != b)   # noqa: E731  (NaN equals NaN)
    differ = 0
    for case, row in old["rows"].items():
        cols = [k for k in row if not same(row[k], new["rows"][case].get(k))]
        differ += bool(cols)
        print(f"{case:24s} {'DIFFERS in ' + ', '.join(cols) if cols else 'equal'}")
    print(f"portable_rows: {len(old['rows']) - differ} of {len(old['rows'])} rows equal")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
