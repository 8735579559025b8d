"""The measured numbers of the docs pages, each with the command that measures it again.

One :class:`Entry` per passage of a page (intro, algorithms, user guide) that states a
number read off a run: a return, a loss, the epoch or step at which something happened,
a count, a time. An entry holds the page, a short piece of its text (compared with the
page after collapsing whitespace) with the numbers in it, the numbers as the page prints
them, and the command that produces them.

*Fast* entries are checked by ``tests/docs/test_measured_numbers.py``: their ``measure``
function runs the command (each under a minute of one core; all of them together about
two minutes of CPU), or, for a number taken from a committed benchmark run, reads that
run, and returns the numbers formatted the way the page prints them, which must equal the
page's, digit for digit.
That holds on the machine they were measured on: a run's numbers depend on the kind of
CPU and the library versions (docs/user/saving_and_loading.rst, "What a Run's Numbers
Depend On"), so :data:`MEASURED_ON` records the machine, and elsewhere the test compares
only the entries marked ``anywhere`` (exact enumerations and arithmetic).

*Slow* entries take longer (minutes to hours: most are the benchmark runs of
``benchmarks/`` and ``docs/benchmarks/``) or were measured on another machine, or are
timings, which no two machines share. They carry the date, the git commit and the
machine they were measured on; ``source`` names the file that records the result, and
the snippets listed there must still be in that file, so a rerun of a benchmark that
changes its page is noticed on the page that quotes it.

    python docs/measured.py             # rerun the fast entries: page, expected, got
    python docs/measured.py --all       # also the slow entries that have a function
    python docs/measured.py --list      # every entry with its command, date, commit
    python docs/measured.py NAME ...    # only these entries (implies --all)
"""
import argparse
import functools
import glob
import importlib.util
import os
import os.path as osp
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
DOCS = osp.join(ROOT, "docs")

#: The machine the fast entries were measured on: the CPU entries of
#: :func:`spinup.machinery.provenance.numbers_signature` (``python -m spinup.machinery.provenance``).
#: The library versions are not a reason to skip: a number that changes with a new torch
#: is a number the page has to be told about.
MEASURED_ON = {"cpu": "AuthenticAMD family 26 model 2: AMD EPYC", "cpu_capability": "AVX512"}
#: The same machine in words, for the slow entries measured here.
HERE = "AMD EPYC (AVX-512), the project's shared 2-core machine"
TODAY, HEAD = "2026-11-27", "a8819a5"


@dataclass(frozen=True)
class Entry:
    name: str
    page: str                # relative to docs/
    snippet: str             # text of the page that holds the numbers
    numbers: tuple           # the numbers as printed, each one a piece of ``snippet``
    command: str             # what produces them
    fast: bool               # rerun by the test suite
    date: str                # when they were measured
    commit: str              # the code they were measured with
    machine: str = HERE
    measure: object = None   # () -> tuple of str formatted as on the page, or None
    anywhere: bool = False   # the numbers do not depend on the CPU
    source: tuple = ()       # (path from the repo root, (snippets of that file, ...))
    note: str = field(default="", compare=False)


def normalise(text):
    """``text`` with every run of whitespace turned into one space."""
    return " ".join(text.split())


def page_text(page):
    with open(osp.join(DOCS, page), encoding="utf-8") as f:
        return normalise(f.read())


# ---- running the commands ----

def _run(command, cwd):
    """Run the shell ``command`` in ``cwd`` with this Python; raise with its output if it
    fails."""
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{command} exited with {proc.returncode}:\n{proc.stderr[-3000:]}")


@functools.lru_cache(maxsize=None)
def progress(command):
    """The ``progress.txt`` table of one run of ``command`` (a page's command plus
    ``--exp_name``/``--data_dir`` into a temporary directory, which change no number)."""
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:
        _run(f"{command} --exp_name run --data_dir {tmp}", tmp)
        (path,) = glob.glob(osp.join(tmp, "**", "progress.txt"), recursive=True)
        return pd.read_table(path)


def pg(script, seed):
    """A run of ``spinup/examples/pg_math`` with its defaults (50 epochs) on CartPole."""
    return progress(f"python -m spinup.examples.pg_math.{script} --env CartPole-v1 "
                    f"--seed {seed}")


def half_up(x):
    """``x`` rounded to the nearest integer, halves away from zero (Python's ``round``
    sends them to the even neighbour)."""
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def thousands(n):
    return f"{half_up(n):,}"


def minus(x, fmt):
    """``x`` formatted with ``fmt``, with the typographic minus sign the page uses."""
    return format(x, fmt).replace("-", "\N{MINUS SIGN}")


def words(items):
    """'a', 'a and b', 'a, b and c'."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ---- policy_optimization.rst ----

PG_RTG = "python -m spinup.examples.pg_math.2_rtg_pg --env CartPole-v1 --seed 0"
PG_SIMPLE = "python -m spinup.examples.pg_math.1_simple_pg --env CartPole-v1 --seed 0"
PG_TABLE = ("for seed in 0 1 2; do for script in 1_simple_pg 2_rtg_pg; do "
            "python -m spinup.examples.pg_math.$script --env CartPole-v1 --seed $seed "
            "--exp_name pg_$script --data_dir /tmp/intro_pg; done; done")


def pg_loss_rtg():
    d = pg("2_rtg_pg", 0)
    return (f"{d.LossPi.iloc[0]:.1f}", f"{d.LossPi.iloc[-1]:.1f}",
            f"{d.AverageEpRet.iloc[0]:.1f}", f"{d.AverageEpRet.iloc[-1]:.1f}")


def pg_loss_simple():
    d = pg("1_simple_pg", 0)
    return (f"{d.LossPi.iloc[0]:.1f}", f"{d.LossPi.iloc[-1]:.1f}")


def first_reaching(d, level=400):
    """``TotalEnvInteracts`` at the first epoch whose mean return reached ``level``, or
    None."""
    hit = d[d.AverageEpRet >= level]
    return None if hit.empty else int(hit.TotalEnvInteracts.iloc[0])


def pg_row(script, seed):
    d = pg(script, seed)
    first = first_reaching(d)
    return (f"``{script}`` {seed} {d.AverageEpRet.iloc[-5:].mean():.1f} "
            f"{d.AverageEpRet.max():.1f} " + (f"{first:,} steps" if first else "never"),)


def pg_rows(script, seeds):
    return lambda: (" ".join(pg_row(script, s)[0] for s in seeds),)


def pg_all():
    return {(script, seed): pg(script, seed) for script in ("1_simple_pg", "2_rtg_pg")
            for seed in (0, 1, 2)}


def pg_gap():
    """How much earlier reward-to-go passes 400: the means over the table's seeds of the
    steps at the first epoch >= 400 (seeds that never get there left out), and their
    difference rounded to thousands."""
    import numpy as np
    runs = pg_all()
    mean = {}
    for script in ("1_simple_pg", "2_rtg_pg"):
        hits = [first_reaching(runs[script, s]) for s in (0, 1, 2)]
        mean[script] = np.mean([h for h in hits if h is not None])
    gap = mean["1_simple_pg"] - mean["2_rtg_pg"]
    return (f"{half_up(gap / 1000) * 1000:,}", thousands(mean["2_rtg_pg"]),
            thousands(mean["1_simple_pg"]))


def pg_spread():
    """The range of the six runs' last-five-epoch means, per script, to the unit."""
    runs = pg_all()
    out = []
    for script in ("1_simple_pg", "2_rtg_pg"):
        means = [runs[script, s].AverageEpRet.iloc[-5:].mean() for s in (0, 1, 2)]
        out.append(f"{min(means):.0f} to {max(means):.0f}")
    return tuple(out)


def pg_steps():
    """Steps per run (mean over the six, to thousands) and per epoch (the range, widened to
    multiples of 500)."""
    import numpy as np
    runs = pg_all().values()
    total = np.mean([d.TotalEnvInteracts.iloc[-1] for d in runs])
    per_epoch = np.concatenate([np.diff(d.TotalEnvInteracts, prepend=0) for d in runs])
    low, high = per_epoch.min() // 500 * 500, -(-per_epoch.max() // 500) * 500
    return (f"{half_up(total / 1000) * 1000:,}", f"{low:,} to {high:,}")


def pg_first_episodes():
    """The mean episode length of the six runs' first epochs, to tens."""
    import numpy as np
    first = np.mean([d.EpLen.iloc[0] for d in pg_all().values()])
    return (str(half_up(first / 10) * 10),)


def _load_file(name, *path):
    """The Python file ROOT/path imported as module ``name`` (benchmarks/ and tests/ are
    not packages)."""
    spec = importlib.util.spec_from_file_location(name, osp.join(ROOT, *path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pg_math_test_module():
    return _load_file("test_pg_math", "tests", "test_pg_math.py")


def pg_variance():
    """The exact total variance of the one-trajectory estimate with either weighting, on
    the three-step problem of ``test_reward_to_go_same_mean_lower_variance`` (all eight
    trajectories listed, the scripts' own weight functions)."""
    import itertools

    import torch
    t = _pg_math_test_module()
    theta = torch.tensor([[0.3, -0.2], [0.0, 0.5], [-0.4, 0.1]])
    probs = torch.softmax(theta, dim=1)
    m1, m2 = [0, 0], [0, 0]
    for acts in itertools.product(range(2), repeat=t.T):
        p = float(torch.prod(probs[torch.arange(t.T), list(acts)]))
        for i, g in enumerate(t.estimators(theta, acts)):
            m1[i] = m1[i] + p * g
            m2[i] = m2[i] + p * float((g ** 2).sum())
    return tuple(f"{m2[i] - float((m1[i] ** 2).sum()):.2f}" for i in (0, 1))


# ---- ppo.rst, sac.rst ----

PPO_KL = "python -m spinup.run ppo --env CartPole-v1 --seed 0 --epochs 20"


def ppo_kl_stop():
    """Where the early stop fired (``StopIter`` below ``train_pi_iters``, 80) and the first
    epoch with a mean return of 500, with the stop and with ``--target_kl 1000``."""
    stop, free = progress(PPO_KL), progress(PPO_KL + " --target_kl 1000")
    fired = stop.StopIter[stop.StopIter < 80].astype(int).tolist()

    def first_500(d):
        return int(d.Epoch[d.AverageEpRet >= 500].iloc[0])
    return (f"{len(fired)} of {len(stop)}", words(fired), f"epoch {first_500(stop)}",
            f"against {first_500(free)}")


SAC_ALPHA = ('python -m spinup.run sac --env Pendulum-v1 --seed 0 --hid "[64,64]" '
             "--alpha auto --epochs 4 --steps_per_epoch 2000")


def sac_alpha():
    d = progress(SAC_ALPHA)
    return (", ".join(f"{a:.2f}" for a in d.Alpha),
            ", ".join(minus(x, ".2f") for x in d.AverageLogPi),
            minus(d.AverageTestEpRet.iloc[0], ".0f"), minus(d.AverageTestEpRet.iloc[-1], ".0f"))


def trpo_lossv_ratio():
    """How many times larger the final ``LossV`` is without value fitting, per seed, from
    the exercise's table (entry trpo-ex21-table)."""
    table = BY_NAME["trpo-ex21-table"].numbers
    none = [int(x) for x in table[2].split(" / ")]
    fitted = [int(x) for x in table[5].split(" / ")]
    ratios = sorted(half_up(a / b) for a, b in zip(none, fitted))
    return (f"{ratios[0]} to {ratios[-1]} times",)


# ---- research.rst: numbers recomputed from committed runs ----

def _mujoco_harness():
    return _load_file("mujoco_harness", "benchmarks", "mujoco.py")


def sac_cheetah_spread():
    """The two protocol seeds of SAC on HalfCheetah at 300k steps (the MuJoCo table's
    estimator) and their standard deviation with divisor n and with n - 1."""
    h = _mujoco_harness()
    ours = h._load()
    values = h._at(ours[(ours.algo == "sac") & (ours.task == "HalfCheetah")], 300_000, "sac")
    two = values.loc[[0, 1]].to_numpy()
    return (f"{two[0]:.0f} and {two[1]:.0f}", f"{two.std(ddof=0):.0f}", f"{two.std(ddof=1):.0f}")


def ddpg_hopper_stuck():
    """DDPG's seed 0 on Hopper: its epochs, the mean over all of them of its test episodes'
    length and return, and the mean Q-value of its last ten epochs, to the unit."""
    import pandas as pd
    d = pd.read_table(osp.join(ROOT, "docs", "benchmarks", "mujoco", "runs", "here", "ddpg",
                               "Hopper", "s0", "progress.txt"))
    return (f"{len(d)} epochs", f"``TestEpLen`` was {d.TestEpLen.mean():.0f}",
            f"``TestEpRet`` {d.AverageTestEpRet.mean():.0f}",
            f"settled near {d.AverageQVals.iloc[-10:].mean():.0f}")


def _hours_inc():
    with open(osp.join(ROOT, "docs", "benchmarks", "mujoco", "hours.inc"),
              encoding="utf-8") as f:
        return f.read()


def mujoco_hours():
    """Hours per 1M steps from the MuJoCo page's table (``benchmarks/mujoco.py report``):
    the range of the on-policy medians and SAC's median, to one decimal, and the fastest
    on-policy and SAC runs."""
    rates = dict(re.findall(r"\* - (\w+)\n(?:\s+- .*\n){3}\s+- ([0-9.]+ \([0-9.]+)",
                            _hours_inc()))
    median = {a: float(v.split()[0]) for a, v in rates.items()}
    low = {a: float(v.split("(")[1]) for a, v in rates.items()}
    on = sorted({f"{median[a]:.1f}" for a in ("VPG", "TRPO", "PPO")}, key=float)
    fastest_on = min(low[a] for a in ("VPG", "TRPO", "PPO"))
    return (" to ".join(on[::max(1, len(on) - 1)]) + " hours", f"{median['SAC']:.1f}",
            f"{fastest_on:.1f} and {low['SAC']:.1f}")


def mujoco_protocol():
    """The run-hours ``report`` estimates for the page's protocol (``here``) and for
    ``--scale spec``, the latter to hundreds."""
    here, spec = re.search(r"``here`` protocol is about (\d+) run-hours and ``--scale spec`` "
                           r"about (\d+)", " ".join(_hours_inc().split())).groups()
    return here, str(half_up(int(spec) / 100) * 100)


def ddpg_hopper_s0():
    """DDPG's seed 0 on Hopper: the range of its epochs' mean test episode length, its
    epochs, and the saturation rerun of its first 12k steps (share of test actions at a
    bound, median ``|u|`` before the ``tanh``)."""
    import pandas as pd
    mujoco = osp.join(ROOT, "docs", "benchmarks", "mujoco", "runs")
    d = pd.read_table(osp.join(mujoco, "here", "ddpg", "Hopper", "s0", "progress.txt"))
    sat = pd.read_table(osp.join(mujoco, "experiments", "saturation", "ddpg-Hopper.tsv"))
    row = sat[(sat.init == "default") & (sat.seed == 0) & (sat.steps == 12000)].iloc[0]
    share = "every" if row.at_bound == 1 else f"{row.at_bound:.0%} of the"
    return (f"{d.TestEpLen.min():.1f} to {d.TestEpLen.max():.1f}", f"{len(d)} epochs",
            f"{share} test action", f"{row.median_abs_u:.1f}")


# ---- gpu.rst: ranges over the committed GPU runs ----

def _device_runs():
    """The ``results`` of the committed GPU runs (docs/benchmarks/device/run<N>_device.json),
    in run order: case -> mode -> env steps per second."""
    import json
    paths = glob.glob(osp.join(ROOT, "docs", "benchmarks", "device", "run*_device.json"))
    paths.sort(key=lambda p: int(re.search(r"run(\d+)_", osp.basename(p))[1]))
    results = []
    for path in paths:
        with open(path) as f:
            results.append(json.load(f)["results"])
    return results


def _span(values, fmt, unit=""):
    """'lowest to highest' of ``values``, each formatted with ``fmt`` and ``unit``."""
    return f"{min(values):{fmt}}{unit} to {max(values):{fmt}}{unit}"


def _graph_ratios(case):
    """The best GPU mode over the CPU, within each committed run that measured ``case``."""
    return [max(r["cuda eager"], r["cuda graph"]) / r["cpu"]
            for r in (run[case] for run in _device_runs() if case in run)]


def gpu_offpolicy_rows():
    """Per algorithm of gpu.rst's table, its lowest and highest figure over the committed runs
    in each mode, and the range of its graph-over-CPU ratio taken within each run."""
    rows = []
    for case in ("sac", "td3", "ddpg"):
        runs = [run[case] for run in _device_runs() if case in run]
        cells = [_span([r[mode] for r in runs], ",.0f")
                 for mode in ("cpu", "cuda eager", "cuda graph")]
        rows.append(f"{case.upper()} {' '.join(cells)} "
                    f"({_span(_graph_ratios(case), '.1f', 'x')}")
    return tuple(rows)


def gpu_offpolicy_ratio():
    """The range of the graph-over-CPU ratio of SAC, TD3 and DDPG over every committed run."""
    ratios = [x for case in ("sac", "td3", "ddpg") for x in _graph_ratios(case)]
    return (_span(ratios, ".1f"),)


# ---- the registry ----

E = Entry
PO = "intro/policy_optimization.rst"
BENCH = "docs/benchmarks/"
ENTRIES = [
    # policy_optimization.rst: rerun
    E("pg-loss-rtg", PO,
      "logs ``LossPi`` 9.4 in its first epoch and 126.3 in its last, while the mean return "
      "rises from 20.5 to 487.4", ("9.4", "126.3", "20.5", "487.4"), PG_RTG, True, TODAY, HEAD,
      measure=pg_loss_rtg),
    E("pg-loss-simple", PO, "(``1_simple_pg``: ``LossPi`` 17.8 to 149.0;", ("17.8", "149.0"),
      PG_SIMPLE, True, TODAY, HEAD, measure=pg_loss_simple),
    E("pg-table-simple-s0", PO, "``1_simple_pg`` 0 312.3 447.8 214,515 steps",
      ("``1_simple_pg`` 0 312.3 447.8 214,515 steps",), PG_SIMPLE, True, TODAY, HEAD,
      measure=lambda: pg_row("1_simple_pg", 0)),
    E("pg-table-rtg-s0", PO, "``2_rtg_pg`` 0 492.0 500.0 172,526 steps",
      ("``2_rtg_pg`` 0 492.0 500.0 172,526 steps",), PG_RTG, True, TODAY, HEAD,
      measure=lambda: pg_row("2_rtg_pg", 0)),
    E("pg-variance", PO, "**21.35 with the full return and 14.03 with reward-to-go**",
      ("21.35", "14.03"), "python docs/measured.py pg-variance", True, TODAY, HEAD,
      measure=pg_variance, anywhere=True,
      note="exact: a sum over the eight trajectories, no sampling"),
    # policy_optimization.rst: the other four runs of the table, and what is read off all six
    E("pg-table-simple-s12", PO,
      "``1_simple_pg`` 1 386.1 426.5 198,346 steps ``1_simple_pg`` 2 343.4 384.8 never",
      ("``1_simple_pg`` 1 386.1 426.5 198,346 steps ``1_simple_pg`` 2 343.4 384.8 never",),
      PG_TABLE, False, "2026-11-25", "a6862e1", measure=pg_rows("1_simple_pg", (1, 2)),
      note="two runs of about 30 s of CPU each"),
    E("pg-table-rtg-s12", PO,
      "``2_rtg_pg`` 1 484.3 500.0 162,692 steps ``2_rtg_pg`` 2 485.4 500.0 182,443 steps",
      ("``2_rtg_pg`` 1 484.3 500.0 162,692 steps ``2_rtg_pg`` 2 485.4 500.0 182,443 steps",),
      PG_TABLE, False, "2026-11-25", "a6862e1", measure=pg_rows("2_rtg_pg", (1, 2)),
      note="two runs of about 30 s of CPU each"),
    E("pg-gap", PO,
      "passing 400 about 34,000 steps before the two full-return seeds that get there at all "
      "(172,554 against 206,431 steps", ("34,000", "172,554", "206,431"), PG_TABLE, False,
      "2026-11-27", "a615ddd", measure=pg_gap, note="all six runs of the table"),
    E("pg-spread", PO, "means spread over 312 to 386, against 484 to 492",
      ("312 to 386", "484 to 492"), PG_TABLE, False, "2026-11-25", "a6862e1",
      measure=pg_spread, note="all six runs of the table"),
    E("pg-steps-per-run", PO, "out of about 257,000 in each run", ("257,000",), PG_TABLE, False,
      TODAY, HEAD, measure=lambda: pg_steps()[:1],
      note="all six runs: their mean, to thousands (the page said 256,000 until 2026-11-27)"),
    E("pg-steps-per-epoch", PO, "every epoch is 5,000 to 5,500 steps", ("5,000 to 5,500",),
      PG_TABLE, False, "2026-11-25", "a6862e1", measure=lambda: pg_steps()[1:],
      note="all six runs"),
    E("pg-first-episodes", PO, "with episodes of about 20 steps", ("20",), PG_TABLE, False,
      "2026-11-27", "a615ddd", measure=pg_first_episodes,
      note="the first epoch's mean length, over the six runs, to tens"),
    # ppo.rst
    E("ppo-kl-stop", "algorithms/ppo.rst",
      "the stop fired in 3 of 20 epochs (``StopIter`` 16, 7 and 5), and the run with the stop "
      "reached a mean return of 500 first (epoch 14, against 17 without it)",
      ("3 of 20", "16, 7 and 5", "epoch 14", "against 17"),
      f"{PPO_KL}; {PPO_KL} --target_kl 1000", True, TODAY, HEAD, measure=ppo_kl_stop),
    E("ppo-kl-stop-elsewhere", "algorithms/ppo.rst",
      "gave 4 stops (16, 8, 10, 6), and there the run *without* the stop got to 500 first "
      "(epoch 13 against 18)", ("4 stops", "16, 8, 10, 6", "epoch 13 against 18"),
      f"{PPO_KL}; {PPO_KL} --target_kl 1000", False, "2026-11-27", "0cf2a22",
      machine="another machine (a CPU other than this one), reported in the project's issues",
      note="the same commands as ppo-kl-stop; on this machine they give ppo-kl-stop's numbers"),
    E("ppo-num-envs-speed", "algorithms/ppo.rst",
      "``num_envs=8`` acts for 11 us per env step instead of 77", ("11 us", "77"),
      "python benchmarks/acting_speed.py --algos vpg trpo ppo a2c ppo8 --repeats 5 --no-epoch",
      False, "2026-11-24", "5e28d6d", source=(BENCH + "acting.rst", (
          "so acting costs 11 us per env step instead of 77",)),
      note="a timing: depends on the machine and its load"),
    # sac.rst
    E("sac-alpha", "algorithms/sac.rst",
      "logged ``Alpha`` 0.45, 0.23, 0.26, 0.32 and ``AverageLogPi`` −0.57, 0.29, 1.03, 1.04 "
      "against the target :math:`-\\bar H = 1`, while ``AverageTestEpRet`` went from −1737 "
      "to −131", ("0.45, 0.23, 0.26, 0.32", "−0.57, 0.29, 1.03, 1.04", "−1737", "−131"),
      SAC_ALPHA, True, TODAY, HEAD, measure=sac_alpha),
    E("sac-pendulum-20k", "algorithms/sac.rst",
      "with ``--start_steps 1000`` (instead of 10000) reached −200 or better within 20k steps "
      "in all the runs of", ("−200", "20k"),
      "bash benchmarks/offpolicy_learning.sh pendulum; python benchmarks/offpolicy_summary.py "
      "OUT", False, "2026-11-25", "b8d9ccf",
      source=(BENCH + "offpolicy.rst", ("All twelve runs end above −200 (worst −185)",))),
    # td3.rst, ddpg.rst
    E("td3-pendulum", "algorithms/td3.rst",
      "(about −830 to −1060 against −190 to −720), plausibly because its actor had taken half "
      "as many gradient steps; by 12k steps the two were level",
      ("−830 to −1060", "−190 to −720", "12k"),
      "bash benchmarks/offpolicy_learning.sh pendulum; python benchmarks/offpolicy_summary.py "
      "OUT", False, "2026-11-24", "e1dab93", source=(BENCH + "offpolicy.rst", (
          "TD3 0 −1041", "TD3 10 −828", "TD3 20 −1056", "DDPG 10 −191", "DDPG 20 −724"))),
    E("ddpg-hopper-s0", "algorithms/ddpg.rst",
      "its test episodes last 21.5 to 22.4 steps on average in every one of its 75 epochs, and "
      "a rerun of its first 12k steps ends with every test action at a bound and a median "
      ":math:`|u|` of 28.4", ("21.5 to 22.4", "75 epochs", "every test action", "28.4"),
      "python benchmarks/mujoco.py run --part offpolicy --algos ddpg --envs Hopper --seeds 0; "
      "python benchmarks/mujoco.py saturation --publish", True, TODAY, HEAD,
      measure=ddpg_hopper_s0, anywhere=True,
      source=(BENCH + "mujoco/runs/experiments/saturation/ddpg-Hopper.tsv", ()),
      note="the check reads the committed run and the saturation table (the runs take hours)"),
    E("ddpg-hopper-stuck", "algorithms/ddpg.rst",
      "of ten seeds, two were stuck after 12k steps and one of them still at 40k",
      ("two were stuck after 12k", "one of them still at 40k"),
      "python benchmarks/mujoco.py saturation --publish", False, "2026-11-27", "8bd842a",
      source=(BENCH + "mujoco/saturation.inc", ("- 2 of 10", "- 1 of 2"))),
    E("td3-hopper-stuck", "algorithms/ddpg.rst", "same actor and the same risk (one of ten "
      "seeds there)", ("one of ten",), "python benchmarks/mujoco.py saturation --algo td3 "
      "--inits default", False, "2026-11-26", "440d179",
      source=(BENCH + "mujoco/saturation.inc", ("- 1 of 10",))),
    E("ddpg-pendulum", "algorithms/ddpg.rst",
      "Pendulum-v1 starts near −1200 to −1500 and reaches −200 or better within 20k steps "
      "with the defaults", ("−1200 to −1500", "−200", "20k"),
      "bash benchmarks/offpolicy_learning.sh pendulum; python benchmarks/offpolicy_summary.py "
      "OUT", False, "2026-11-24", "4fd497a", source=(BENCH + "offpolicy.rst", ()),
      note="the start is the return of the first epochs' uniform random actions; "
           "the 20k end is the table of docs/benchmarks/offpolicy.rst"),
    # dqn.rst, a2c.rst, trpo.rst
    E("dqn-eps-end", "algorithms/dqn.rst",
      "``eps_end=0.05`` left one all-switch CartPole seed below 475", ("one", "475"),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-24", "8c9b62d",
      source=(BENCH + "dqn.rst", ("constant lr, ε → 0.05 (the previous defaults): 500 / 500 / "
                                  "**458**",))),
    E("dqn-constant-lr", "algorithms/dqn.rst",
      "seeds dropped from 500 to 100-460 in the last epochs", ("100-460",),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-24", "8c9b62d",
      source=(BENCH + "dqn.rst", ("a test epoch drops to 100-460",))),
    E("dqn-defaults-solve", "algorithms/dqn.rst",
      "25 epochs × 4000 steps solve it for the seeds of", ("25 epochs × 4000 steps",),
      "python -m spinup.run dqn --env CartPole-v1 --seed 0 10 20 (and with the four switches)",
      False, "2026-11-24", "8c9b62d", source=(BENCH + "dqn.rst", ("All six runs end at 500",))),
    E("dqn-defaults", "algorithms/dqn.rst", "the defaults reach 475-500 within 100k steps",
      ("475-500", "100k"),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-24", "8c9b62d", source=(BENCH + "dqn.rst", (
          "Target: final ``AverageTestEpRet`` ≥ 475 within 100k steps",
          "All six runs end at 500"))),
    E("a2c-baselines-settings", "algorithms/a2c.rst",
      "the return reached 500 at 40k steps and then fell back to 62-421",
      ("40k", "62-421"), "bash benchmarks/a2c_a3c_learning.sh", False, "2026-11-24", "ec98b33",
      source=(BENCH + "a2c_a3c.rst", ("reached 500 at 40k, then", "fell to 62-421"))),
    E("trpo-ex21-table", "algorithms/trpo.rst",
      "0 189 / 247 / 307 / 332 / 344 344 / 402 21025 / 26661 "
      "80 186 / 240 / 322 / 406 / 505 505 / 460 464 / 562",
      ("189 / 247 / 307 / 332 / 344", "344 / 402", "21025 / 26661",
       "186 / 240 / 322 / 406 / 505", "505 / 460", "464 / 562"),
      "bash benchmarks/trpo_learning.sh; python benchmarks/trpo_summary.py", False,
      "2026-11-21", "774d450", note="four Hopper-v5 runs of 50 epochs"),
    E("trpo-ex21-time", "algorithms/trpo.rst",
      "each Hopper-v5 run took 12 to 42 minutes on our shared 2-core machine",
      ("12 to 42 minutes",), "bash benchmarks/trpo_learning.sh", False, "2026-11-21", "774d450",
      note="a timing: depends on the machine and its load"),
    E("trpo-ex21-lossv-ratio", "algorithms/trpo.rst",
      "``LossV``, ends 45 to 47 times larger)", ("45 to 47 times",),
      "python docs/measured.py trpo-ex21-lossv-ratio", True, TODAY, HEAD,
      measure=trpo_lossv_ratio, anywhere=True, note="arithmetic on the table's LossV column"),
    E("trpo-ex21-findings", "algorithms/trpo.rst",
      "(final ``AverageEpRet`` 344 and 402 against 505 and 460)",
      ("344 and 402", "505 and 460"), "bash benchmarks/trpo_learning.sh", False, "2026-11-21",
      "774d450"),
    # research.rst
    E("research-ddpg-bug", "intro/research.rst",
      "near -1100 on all three seeds while the correct code reaches -130 to -230",
      ("-1100", "-130 to -230"),
      "python -m spinup.exercises.problem_set_2.exercise2_2 --env Pendulum-v1 --total_steps "
      "10000 --steps_per_epoch 1000 --start_steps 1000 --max_ep_len 200 --num_test_episodes 5",
      False, "2026-11-25", "3b8676b", source=("docs/exercises.rst", (
          "The correct DDPG reaches test returns between -130 and -230",
          "stays at about -1100 on every seed")),
      note="six DDPG runs of 10k steps"),
    E("research-dqn-oscillation", "intro/research.rst",
      "single test epochs dropped to 100-460", ("100-460",),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-25", "51e9f1d", source=(BENCH + "dqn.rst", ("drops to 100-460",))),
    E("research-ddpg-hopper", "intro/research.rst",
      "from the first of its 75 epochs to the last, ``TestEpLen`` was 22 and ``TestEpRet`` 38 "
      "(the hopper falls at once), while its ``QVals`` settled near 21",
      ("75 epochs", "``TestEpLen`` was 22", "``TestEpRet`` 38", "settled near 21"),
      "python benchmarks/mujoco.py run --part offpolicy --algos ddpg --envs Hopper --seeds 0",
      True, TODAY, HEAD, measure=ddpg_hopper_stuck, anywhere=True,
      source=(BENCH + "mujoco/runs/here/ddpg/Hopper/s0/progress.txt", ()),
      note="the check reads the committed run (the run itself takes hours)"),
    E("research-sac-ant", "intro/research.rst",
      "one SAC seed on Ant scored about a thousand at 300k steps", ("a thousand", "300k"),
      "python benchmarks/mujoco.py run --part offpolicy --algos sac --envs Ant; "
      "python benchmarks/mujoco.py report", False, "2026-11-27", "de42be0",
      source=(BENCH + "mujoco/runs/here/sac/Ant/s0/progress.txt", ())),
    E("research-cartpole-cost", "intro/research.rst",
      "| PPO with its defaults: 500 on all three seeds by 100k steps; | 50 epochs take about "
      "70 s", ("500", "100k", "70 s"),
      "bash benchmarks/onpolicy_learning.sh data/bench_onpolicy 50", False, "2026-11-27",
      "de42be0", source=(BENCH + "ppo.rst", ("70 s for the",)),
      note="the 70 s is a timing"),
    E("research-pendulum-cost", "intro/research.rst",
      "| DDPG, TD3 and SAC, three seeds each: every run above −200 | from 12k steps on",
      ("−200", "12k"), "bash benchmarks/offpolicy_learning.sh pendulum", False, "2026-11-27",
      "de42be0", source=(BENCH + "offpolicy.rst", (
          "every run is above −200 from 12k",))),
    E("research-invpendulum-cost", "intro/research.rst",
      "| PPO, seed 0: the maximum return of 1000 within 20 epochs of | 4000 steps",
      ("1000", "20 epochs"), "bash benchmarks/onpolicy_learning.sh data/bench_onpolicy 50",
      False, "2026-11-27", "de42be0", source=(BENCH + "ppo.rst", ("905.6, 1000, 1000",))),
    E("research-mujoco-hours", "intro/research.rst",
      "takes about 0.2 to 0.3 hours of one core for VPG, TRPO and PPO and about 2.4 for SAC here "
      "(medians of the committed runs, which shared the machine with other runs; the fastest "
      "took 0.1 and 1.4)", ("0.2 to 0.3 hours", "2.4", "0.1 and 1.4"),
      "python benchmarks/mujoco.py report", True, TODAY, HEAD, measure=mujoco_hours,
      anywhere=True, source=(BENCH + "mujoco/hours.inc", ()),
      note="timings of the committed runs (their Time column, on a shared machine); the "
           "check reads them from the table that report writes"),
    E("research-mujoco-protocol", "intro/research.rst",
      "That page's whole protocol is about 35 run-hours, and the protocol of Spinning Up's own "
      "benchmark (3M steps, up to ten seeds) about 800", ("35", "800"),
      "python benchmarks/mujoco.py report", True, TODAY, HEAD, measure=mujoco_protocol,
      anywhere=True, source=(BENCH + "mujoco/hours.inc", ()),
      note="estimated by report from the committed runs' median rates; the check reads it"),
    E("research-ppo-seeds", "intro/research.rst",
      "PPO on CartPole-v1 at 50k steps: ``AverageEpRet`` 475, 364 and 411",
      ("475, 364 and 411",), "bash benchmarks/onpolicy_learning.sh data/bench_onpolicy 50; "
      "python benchmarks/summarize.py data/bench_onpolicy --at 50000 100000 200000", False,
      "2026-11-25", "3b8676b", source=(BENCH + "ppo.rst", (
          "PPO 0 475.4", "PPO 10 364.3", "PPO 20 411.2"))),
    E("research-dqn-seeds", "intro/research.rst",
      "first reaches a test return of 475 at 68k, 56k and 48k steps depending on the seed",
      ("68k, 56k and 48k",),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-25", "3b8676b", source=(BENCH + "dqn.rst", (
          "defaults 0 122 113 316 500 **500** 68k", "defaults 10 140 152 500 500 **500** 56k",
          "defaults 20 180 146 500 485 **500** 48k"))),
    E("research-dqn-all-switches", "intro/research.rst",
      "With every switch on, the three seeds reach it at 28k", ("28k",),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-25", "3b8676b", source=(BENCH + "dqn.rst", ("28k against 48-68k",))),
    E("research-ddpg-seeds", "intro/research.rst",
      "test returns -177, -698 and -293 for seeds 0, 10 and 20", ("-177, -698 and -293",),
      "python -m spinup.exercises.problem_set_2.exercise2_2 --env Pendulum-v1 --total_steps "
      "10000 --steps_per_epoch 1000 --start_steps 1000 --max_ep_len 200 --num_test_episodes 5",
      False, "2026-11-25", "3b8676b",
      source=("docs/exercises.rst", ("- -177.2", "- -698.2", "- -292.9"))),
    E("research-sac-seeds", "intro/research.rst",
      "SAC on Pendulum-v1 at 4k steps: -154, -833, -337; at 20k: -134, -166, -185",
      ("-154, -833, -337", "-134, -166, -185"),
      "bash benchmarks/offpolicy_learning.sh pendulum; python benchmarks/offpolicy_summary.py "
      "OUT", False, "2026-11-25", "3b8676b", source=(BENCH + "offpolicy.rst", (
          "SAC 0 −154 −112 −145 −132 **−134**", "SAC 10 −833 −411 −174 −130 **−166**",
          "SAC 20 −337 −133 −170 −144 **−185**"))),
    E("research-pendulum-spread", "intro/research.rst",
      "by 20k steps all twelve runs lie between -133 and -185", ("-133", "-185"),
      "bash benchmarks/offpolicy_learning.sh pendulum; python benchmarks/offpolicy_summary.py "
      "OUT", False, "2026-11-25", "b435ba3",
      source=(BENCH + "offpolicy.rst", ("(worst −185)",))),
    E("research-dqn-tuning", "intro/research.rst",
      "The DQN defaults were chosen after trying eight settings on one to three seeds each",
      ("eight", "one to three"), "see the list under the first table of docs/benchmarks/dqn.rst",
      False, "2026-11-25", "b435ba3", source=(BENCH + "dqn.rst", (
          "constant lr, ε → 0.05 (the previous defaults)",))),
    E("research-sac-cheetah-std", "intro/research.rst",
      "6778 and 7671, have a standard deviation of 447 by the first formula and 632 by the "
      "second", ("6778 and 7671", "447", "632"),
      "python docs/measured.py research-sac-cheetah-std", True, TODAY, HEAD,
      measure=sac_cheetah_spread, anywhere=True,
      source=(BENCH + "mujoco/gaps.inc", ("7225 ± 632 (6778 and 7671)",)),
      note="the check reads the committed runs with benchmarks/mujoco.py's estimator "
           "(the runs themselves take hours)"),
    E("research-welch", "intro/research.rst", "(Welch's t-test, p = 0.27, two seeds against "
      "three)", ("p = 0.27",), "python benchmarks/mujoco.py tfinit; python benchmarks/mujoco.py "
      "report", False, "2026-11-27", "de42be0",
      source=(BENCH + "mujoco/gaps.inc", ("p = 0.27",))),
    # concepts.rst
    E("concepts-sac-1m", "intro/concepts.rst",
      "Its SAC run of 1M steps on HalfCheetah (about three hours on a CPU core shared with "
      "other runs) reaches test returns above 11,000", ("1M", "three hours", "11,000"),
      "python benchmarks/mujoco.py run --part long --algos sac --envs HalfCheetah",
      False, TODAY, HEAD, source=(BENCH + "mujoco/runs/here/sac-1m/HalfCheetah/s0/progress.txt",
                                  ()),
      note="its Time column ends at 2.9 hours; its test returns pass 11,000 from about 700k"),
    # gpu.rst
    E("gpu-offpolicy-table", "user/gpu.rst",
      "SAC 141 to 176 116 to 134 593 to 788 (3.9x to 4.5x the CPU) "
      "TD3 249 to 271 237 to 252 985 to 1,285 (3.6x to 5.2x) "
      "DDPG 273 to 280 226 to 239 1,093 to 1,156 (4.0x to 4.1x)",
      ("SAC 141 to 176 116 to 134 593 to 788 (3.9x to 4.5x",
       "TD3 249 to 271 237 to 252 985 to 1,285 (3.6x to 5.2x",
       "DDPG 273 to 280 226 to 239 1,093 to 1,156 (4.0x to 4.1x"),
      "python benchmarks/device_speed.py (runs 1 to 3 on the GPU machine; their figures: "
      "docs/benchmarks/device/run*_device.json)", True, "2026-11-27", "cfbfb40",
      machine="NVIDIA H200 and a 16-core Xeon (the lent GPU machines)",
      measure=gpu_offpolicy_rows, anywhere=True,
      source=(BENCH + "device/run3_device.json", ()),
      note="timings on another machine; the check recomputes the ranges from the committed "
           "runs"),
    E("gpu-offpolicy-ratio", "user/gpu.rst",
      "same GPU is 3.6 to 5.2 times faster than the CPU of its run", ("3.6 to 5.2",),
      "python benchmarks/device_speed.py (runs 1 to 3 on the GPU machine; their figures: "
      "docs/benchmarks/device/run*_device.json)", True, "2026-11-27", "cfbfb40",
      machine="NVIDIA H200 and a 16-core Xeon (the lent GPU machines)",
      measure=gpu_offpolicy_ratio, anywhere=True,
      source=(BENCH + "device/run3_device.json", ()),
      note="the lowest and highest ratio of SAC, TD3 and DDPG over the committed runs"),
    # choosing.rst
    E("choosing-acting-speed", "user/choosing.rst",
      "PPO runs CartPole-v1 at about 3,500 environment steps per second with one environment "
      "and 7,900 with eight", ("3,500", "7,900"),
      "python benchmarks/ppo_vs_sb3.py --repeats 3 --epochs 5", False, "2026-11-25", "51e9f1d",
      source=(BENCH + "acting.rst", ("spinup 3501 (1 env) and 7865 (8 envs)",)),
      note="a timing"),
    E("choosing-sac-speed", "user/choosing.rst", "it ran at about 200 steps per second here",
      ("200",), "python benchmarks/offpolicy_speed.py --steps 3000 --repeats 5", False,
      "2026-11-25", "b435ba3", source=(BENCH + "offpolicy.rst", ("203.0",)),
      note="a timing"),
    E("choosing-sac-12k", "user/choosing.rst",
      "it was above a test return of -200 from 12k steps on, on all three seeds",
      ("-200", "12k"), "bash benchmarks/offpolicy_learning.sh pendulum", False, "2026-11-25",
      "b435ba3",
      source=(BENCH + "offpolicy.rst", ("every run is above −200 from 12k",))),
    E("choosing-grid-jobs", "user/choosing.rst",
      "a four-seed PPO grid took 39 s with ``--jobs 2`` against 64 s one after another",
      ("39 s", "64 s"), "python benchmarks/grid_parallel.py", False, "2026-11-25", "51e9f1d",
      source=(BENCH + "grid_parallel.rst", ("- 64.0 s", "- 39.0 s")), note="a timing"),
    E("choosing-ppo-100k", "user/choosing.rst",
      "PPO reaches 500 on CartPole within 100k steps on all three benchmark seeds",
      ("500", "100k"), "bash benchmarks/onpolicy_learning.sh data/bench_onpolicy 50", False,
      "2026-11-25", "3b8676b", source=(BENCH + "ppo.rst", (
          "PPO 0 475.4 500.0", "PPO 10 364.3 500.0", "PPO 20 411.2 500.0"))),
    E("choosing-vpg-200k", "user/choosing.rst",
      "VPG with the spec's defaults is at 47-50 on CartPole after 200k steps", ("47-50", "200k"),
      "bash benchmarks/onpolicy_learning.sh data/bench_onpolicy 50; "
      "python benchmarks/summarize.py data/bench_onpolicy --at 50000 100000 200000", False,
      "2026-11-25", "3b8676b", source=(BENCH + "ppo.rst", (
          "VPG 0 24.3 34.1 47.0", "VPG 10 27.3 34.3 49.7", "VPG 20 26.3 33.0 50.2"))),
    E("choosing-ddpg-seeds", "user/choosing.rst",
      "Pendulum-v1 after 10k steps gave -177, -698 and -293 for seeds 0, 10 and 20",
      ("-177, -698 and -293",),
      "python -m spinup.exercises.problem_set_2.exercise2_2 --env Pendulum-v1 --total_steps "
      "10000 --steps_per_epoch 1000 --start_steps 1000 --max_ep_len 200 --num_test_episodes 5",
      False, "2026-11-25", "3b8676b",
      source=("docs/exercises.rst", ("- -177.2", "- -698.2", "- -292.9"))),
    E("choosing-ddpg-bug", "user/choosing.rst",
      "near -1100 on every seed instead of reaching -130 to -230", ("-1100", "-130 to -230"),
      "python -m spinup.exercises.problem_set_2.exercise2_2 --env Pendulum-v1 --total_steps "
      "10000 --steps_per_epoch 1000 --start_steps 1000 --max_ep_len 200 --num_test_episodes 5",
      False, "2026-11-25", "3b8676b", source=("docs/exercises.rst", (
          "between -130 and -230", "about -1100 on every seed"))),
    E("choosing-dqn-settings", "user/choosing.rst",
      "records eight settings that were tried before its defaults were chosen and how each "
      "ended (:doc:`../benchmarks/dqn`): constant step sizes solved CartPole and then fell "
      "back to 100-460 on some seeds", ("eight", "100-460"),
      "python benchmarks/dqn_ablation.py run --data_dir DIR (see docs/benchmarks/dqn.rst)",
      False, "2026-11-25", "3b8676b", source=(BENCH + "dqn.rst", ("drops to 100-460",))),
]
BY_NAME = {e.name: e for e in ENTRIES}


# ---- command line ----

def machine_matches():
    """Whether this machine's CPU is the one of :data:`MEASURED_ON`, and this machine's
    signature."""
    from spinup.machinery.provenance import numbers_signature, provenance
    here = numbers_signature(provenance())
    return all(here.get(k) == v for k, v in MEASURED_ON.items()), here


def rerun(entry):
    """(numbers got, seconds) for an entry with a ``measure`` function."""
    start = time.time()
    got = tuple(entry.measure())
    return got, time.time() - start


def main(argv=None):
    cli = argparse.ArgumentParser(description="rerun the measured numbers of the docs pages "
                                  "and compare them with the pages")
    cli.add_argument("names", nargs="*", help="only these entries (default: the fast ones)")
    cli.add_argument("--all", action="store_true", help="also the slow entries that have a "
                     "function (the others are listed with their command)")
    cli.add_argument("--list", action="store_true", help="list every entry with its command, "
                     "date, commit and machine, and run nothing")
    args = cli.parse_args(argv)
    unknown = [n for n in args.names if n not in BY_NAME]
    if unknown:
        cli.error(f"no entry {', '.join(unknown)}; --list shows them")
    if args.list:
        for e in ENTRIES:
            kind = "fast" if e.fast else "slow"
            print(f"{e.name} [{kind}] {e.page}: {', '.join(e.numbers)}\n"
                  f"    command: {e.command}\n"
                  f"    measured {e.date} at {e.commit} on {e.machine}"
                  + (f"\n    recorded in: {e.source[0]}" if e.source else "")
                  + (f"\n    note: {e.note}" if e.note else ""))
        return 0
    chosen = ([BY_NAME[n] for n in args.names] if args.names
              else [e for e in ENTRIES if e.fast or args.all])
    same_cpu, here = machine_matches()
    if not same_cpu:
        print(f"note: this CPU ({here['cpu']}, {here['cpu_capability']}) is not the one the "
              f"numbers were measured on ({MEASURED_ON['cpu']}, "
              f"{MEASURED_ON['cpu_capability']}); runs may differ in the last digits")
    bad = 0
    for e in chosen:
        text = page_text(e.page)
        if normalise(e.snippet) not in text:
            print(f"{e.name}: MISSING from {e.page}: {e.snippet!r}")
            bad += 1
            continue
        if e.measure is None:
            print(f"{e.name}: {e.page}: not rerun here ({e.note or 'slow'}); run: {e.command}")
            continue
        got, seconds = rerun(e)
        ok = got == tuple(e.numbers)
        bad += not ok
        print(f"{e.name}: {e.page} ({seconds:.0f} s) {'ok' if ok else 'DIFFERS'}\n"
              f"    expected {e.numbers}\n    got      {got}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
