"""Summarize the off-policy learning runs of ``offpolicy_learning.sh`` as RST tables.

    python benchmarks/offpolicy_summary.py [OUT]      # OUT defaults to /work/bench_out/issue3

For every run directory under OUT (``<exp_name>/<exp_name>_s<seed>/progress.txt``) it
prints the last epoch reached, ``TotalEnvInteracts``, the final ``AverageTestEpRet`` and
the wall-clock ``Time``; for HalfCheetah runs also ``AverageTestEpRet`` at 100k/200k/300k.
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

DEFAULT_OUT = "/work/bench_out/issue3"   # benchmarks/offpolicy_learning.sh's default


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=DEFAULT_OUT, metavar="OUT", type=_cli.folder,
                        help="the folder benchmarks/offpolicy_learning.sh wrote to")
    out = parser.parse_args(argv).out
    import pandas as pd
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "*", "*", "progress.txt"))):
        run = os.path.basename(os.path.dirname(path))
        try:
            df = pd.read_table(path)
        except pd.errors.EmptyDataError:
            df = pd.DataFrame()
        if df.empty:
            rows.append((run, "-", "0", "(no epoch finished)", "-", ""))
            continue
        if "AverageTestEpRet" not in df:
            rows.append((run, "-", "-", "(no AverageTestEpRet: not an off-policy run)", "-", ""))
            continue
        last = df.iloc[-1]
        marks = ""
        if "cheetah" in run or "hopper" in run:
            hits = [f"{k // 1000}k: {df.loc[df.TotalEnvInteracts == k, 'AverageTestEpRet'].iloc[0]:.0f}"
                    for k in (100_000, 200_000, 300_000) if (df.TotalEnvInteracts == k).any()]
            marks = ", ".join(hits)
        rows.append((run, str(int(last.Epoch)), str(int(last.TotalEnvInteracts)),
                     f"{last.AverageTestEpRet:.1f}", f"{last.Time:.0f}", marks))
    if not rows:
        parser.error(f"no runs under {out} (expected <exp_name>/<run>/progress.txt)")
    header = ("run", "epochs", "TotalEnvInteracts", "final AverageTestEpRet", "Time (s)", "milestones")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    print(rule)
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print(rule)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print(rule)
    return 0


if __name__ == "__main__":
    sys.exit(main())
