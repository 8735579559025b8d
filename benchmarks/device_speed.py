"""Training speed on the CPU and on a GPU, one machine, one run (issue 41).

For each case it trains the algorithm with its defaults except the budget (below) three
ways where they apply: on the CPU (``device='cpu'``), on the GPU launching each kernel from
Python (``device='cuda', cuda_graph=False``), and on the GPU with the update replayed as
a CUDA graph (``cuda_graph=True``; off-policy algorithms and DQN). From the run's own
``progress.txt`` (no test episodes) it takes three figures:

- env steps per second over the epochs after the first (the first holds the uniform random
  steps and set-up): the page's main table, as in every committed run;
- the steady state: env steps per second over the epochs after the first epoch that holds
  an update. With the budget below the off-policy runs update from their second epoch on,
  and in the graph mode that epoch also holds the eager warm-up round and the capture, so
  the first figure understates what a long run does;
- the seconds spent in that warm-up round and in the captures (0 where there are none).

It writes a page like ``docs/benchmarks/device.rst`` (the machine's GPU and CPU names, the
date and the command) to ``--out``, by default a file in the system's temp folder;
``--render`` writes the page from saved runs instead. Only ``--publish`` writes the committed
page: with ``--render``, from the runs given; with a measurement (on a GPU machine, with
``--label``), it adds the run to ``docs/benchmarks/device/`` as the next ``run<N>_device.json``
and writes the page from every committed run.

Usage::

    python benchmarks/device_speed.py                      # every case, every mode it can
    python benchmarks/device_speed.py --cases sac td3 --out page.rst --json out.json
    python benchmarks/device_speed.py --render docs/benchmarks/device/run*.json --publish

Without a GPU it measures the CPU column only (the page then says so), and refuses a GPU
mode asked for with ``--modes``. Take the figures on an idle machine: a busy one makes them
wrong.
"""
import contextlib
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Run as a script, this folder comes first on sys.path, where benchmarks/mujoco.py would
# stand in for the mujoco package; the repository root goes there instead.
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

#: the committed page and the folder of the committed runs it is written from
PAGE, PAGE_NAME = _cli.committed("docs", "benchmarks", "device.rst")
RUNS_DIR, RUNS_NAME = _cli.committed("docs", "benchmarks", "device")

#: name -> (algorithm, env id, extra arguments). Off-policy budgets: update_after and
#: start_steps 1000 (so the updates start in the first epoch), replay_size the budget.
CASES = {
    "sac": ("sac", "HalfCheetah-v5", {}),
    "td3": ("td3", "HalfCheetah-v5", {}),
    "ddpg": ("ddpg", "HalfCheetah-v5", {}),
    "dqn-cartpole": ("dqn", "CartPole-v1", {}),
    "dqn-lunarlander": ("dqn", "LunarLander-v3", {}),
    "ppo-1env": ("ppo", "HalfCheetah-v5", dict(num_envs=1)),
    "ppo-8envs": ("ppo", "HalfCheetah-v5", dict(num_envs=8)),
    "vpg": ("vpg", "HalfCheetah-v5", {}),
    "trpo": ("trpo", "HalfCheetah-v5", {}),
    "a2c": ("a2c", "HalfCheetah-v5", {}),
}
GRAPHED = {"sac", "td3", "ddpg", "dqn"}
MODES = ("cpu", "cuda eager", "cuda graph")


def budget(algo, steps):
    """The arguments that size a run of ``algo`` to ``3 * steps`` env steps."""
    if algo in ("sac", "td3", "ddpg", "dqn"):
        return dict(steps_per_epoch=steps, epochs=3, start_steps=min(1000, steps),
                    update_after=min(1000, steps), replay_size=3 * steps,
                    num_test_episodes=0)
    return dict(steps_per_epoch=steps, epochs=3)


def rates(rows):
    """The figures of one run's ``progress.txt`` (a DataFrame with ``TotalEnvInteracts``,
    ``Time`` and its ``Loss*`` columns, one row per epoch): env steps per second after the
    first epoch, and after the first epoch that holds an update (its ``Loss*`` values are
    numbers; None when no later epoch is left)."""
    import numpy as np
    done = rows["TotalEnvInteracts"].to_numpy(dtype=float)
    seconds = rows["Time"].to_numpy(dtype=float)

    def rate(start):   # from the end of row ``start`` to the end of the run
        if start >= len(rows) - 1:
            return None
        return float((done[-1] - done[start]) / (seconds[-1] - seconds[start]))

    losses = rows[[c for c in rows.columns if c.startswith("Loss")]].to_numpy(dtype=float)
    updated = np.flatnonzero(np.isfinite(losses).any(axis=1)) if losses.size else []
    return rate(0), (rate(int(updated[0])) if len(updated) else None)


@contextlib.contextmanager
def setup_timer():
    """While open, the seconds spent in ``CapturedCall``'s warm-up rounds and captures
    (``timer['seconds']``), the GPU's work included (synchronized before and after)."""
    import torch

    from spinup.machinery.update_graph import CapturedCall
    timer = dict(seconds=0.0)
    plain = dict(_warm_up=CapturedCall._warm_up, _capture=CapturedCall._capture)

    def timed(method):
        def wrapper(self, *args, **kwargs):
            on_gpu = self.device.type == "cuda" and torch.cuda.is_available()
            if on_gpu:
                torch.cuda.synchronize(self.device)
            start = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                if on_gpu:
                    torch.cuda.synchronize(self.device)
                timer["seconds"] += time.perf_counter() - start
        return wrapper

    for name, method in plain.items():
        setattr(CapturedCall, name, timed(method))
    try:
        yield timer
    finally:
        for name, method in plain.items():
            setattr(CapturedCall, name, method)


def measure(name, mode, steps):
    """Train case ``name`` in ``mode``; return a dict: ``rate`` (env steps per second after
    the first epoch), ``steady`` (after the first epoch with an update, or None) and
    ``setup_s`` (seconds in the graph's warm-up round and captures)."""
    import gymnasium as gym
    import pandas as pd

    import spinup
    algo, env_id, extra = CASES[name]
    kwargs = dict(extra, **budget(algo, steps))
    if mode != "cpu":
        kwargs["device"] = "cuda"
        if algo in GRAPHED:
            kwargs["cuda_graph"] = mode == "cuda graph"
    with tempfile.TemporaryDirectory() as out, setup_timer() as timer:
        getattr(spinup, algo)(lambda: gym.make(env_id), seed=0,
                              logger_kwargs=dict(output_dir=out), **kwargs)
        rows = pd.read_table(os.path.join(out, "progress.txt"))
    rate, steady = rates(rows)
    return dict(rate=rate, steady=steady, setup_s=timer["seconds"])


def machine():
    import torch
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = f"{names[0]} ({len(names)} logical CPUs)" if names else cpu
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return dict(cpu=cpu, gpu=gpu, torch=torch.__version__,
                date=datetime.date.today().isoformat())


def table(results):
    """The reStructuredText table of one run's ``results`` (case -> mode -> steps/s)."""
    def cell(name, mode):
        value = results.get(name, {}).get(mode)
        return "n/a" if value is None else f"{value:,.0f}"

    def ratio(name):
        row = results.get(name, {})
        best = max((row.get(m) or 0) for m in MODES[1:])
        return f"{best / row['cpu']:.1f}x" if row.get("cpu") and best else "n/a"

    header = ("Case", "Env", "CPU", "GPU eager", "GPU graph", "best GPU / CPU")
    body = [(name, CASES[name][1], cell(name, "cpu"), cell(name, "cuda eager"),
             cell(name, "cuda graph") if CASES[name][0] in GRAPHED else "--", ratio(name))
            for name in CASES if name in results]
    widths = [max(len(str(r[i])) for r in [header] + body) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), rule]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in body]
    return lines + [rule]


def split_table(run):
    """The table of the steady state apart from the warm-up and capture, for a run that
    measured it (runs committed before it was measured have no ``steady``: empty)."""
    if "steady" not in run:
        return []
    steady, setup = run["steady"], run.get("setup_s", {})

    def cell(name, mode):
        if mode == "cuda graph" and CASES[name][0] not in GRAPHED:
            return "--"
        value = steady.get(name, {}).get(mode)
        return "n/a" if value is None else f"{value:,.0f}"

    def seconds(name):
        if CASES[name][0] not in GRAPHED:
            return "--"
        value = setup.get(name, {}).get("cuda graph")
        return "n/a" if value is None else f"{value:.2f}"

    header = ("Case", "CPU steady", "GPU eager steady", "GPU graph steady",
              "warm-up + capture (s)")
    body = [(name, cell(name, "cpu"), cell(name, "cuda eager"), cell(name, "cuda graph"),
             seconds(name)) for name in CASES if name in steady]
    widths = [max(len(str(r[i])) for r in [header] + body) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    intro = ("Steady state: env steps per second over the epochs after the first epoch that "
             "holds an update (the table above counts that epoch, which in the graph mode "
             "also holds the eager warm-up round and the capture); the last column is the "
             "seconds the warm-up round and the captures of the graph mode took.")
    lines = [intro, "", rule, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
             rule]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in body]
    return lines + [rule, ""]


def page(runs):
    """The reStructuredText of docs/benchmarks/device.rst from saved runs (the dicts
    that ``--json`` writes, each with ``machine``, ``results`` and ``command``, and
    optionally ``commit`` and ``label``, added when a run is committed), newest first."""
    title = "Training speed: CPU and GPU"
    lines = [
        ".. _device-speed:", "", title, "=" * len(title), "",
        "Env steps per second of training (after the first epoch, no test episodes), "
        "measured by ``benchmarks/device_speed.py``: every mode of a case on one machine in "
        "one run, one case after another, nothing else running. What the columns mean, and "
        "why the figures come out as they do: :doc:`../user/gpu`. The raw figures and the "
        "test logs of each run are in ``docs/benchmarks/device/``; this page is written from "
        "them by ``python benchmarks/device_speed.py --render docs/benchmarks/device/run*.json "
        "--publish``.",
        "",
    ]
    for number, run in sorted(enumerate(runs, 1), key=lambda item: -item[0]):
        info = run["machine"]
        heading = f"Run {number}, {info['date']}"
        lines += [heading, "-" * len(heading), ""]
        if run.get("label"):
            lines += [run["label"][0].upper() + run["label"][1:] + ".", ""]
        lines += [f"- GPU: {info['gpu'] or 'none (the GPU columns are n/a)'}",
                  f"- CPU: {info['cpu']}; the CPU runs use one torch thread, as every spinup run",
                  f"- torch {info['torch']}" + (f", spinup at commit {run['commit']}"
                                               if run.get("commit") else ""),
                  f"- command: ``{run['command']}``", "", *table(run["results"]), "",
                  *split_table(run)]
    lines += [
        "Budgets: three epochs each (off-policy 1000 steps, DQN 2000, on-policy 4000; "
        "off-policy ``start_steps`` and ``update_after`` 1000, ``replay_size`` the budget, "
        "``num_test_episodes=0``); every other argument at its default (256x256 networks "
        "for SAC, TD3 and DDPG, batch 100, one update per env step; DQN 64x64, batch 64, "
        "one update every 2 steps; PPO, VPG, TRPO and A2C 64x64).", ""]
    sac_cpu = [run["results"]["sac"]["cpu"] for run in runs
               if run["results"].get("sac", {}).get("cpu")]
    if len(sac_cpu) > 1:
        lines[-2] += (" Runs of the same command differ: SAC's CPU column was "
                      + ", ".join(f"{v:.0f}" for v in sac_cpu) + " steps/s in runs "
                      + ", ".join(str(i) for i, run in enumerate(runs, 1)
                                  if run["results"].get("sac", {}).get("cpu")) + ".")
    return "\n".join(lines)


def committed_runs():
    """The paths of the committed runs, oldest first (``run1_device.json``, ``run2_...``)."""
    import glob
    import re
    paths = glob.glob(os.path.join(RUNS_DIR, "run*_device.json"))
    return sorted(paths, key=lambda p: int(re.search(r"run(\d+)_", os.path.basename(p))[1]))


def publish(run, label):
    """Commit a measured GPU ``run``: it gets ``label`` and the commit of this checkout, goes
    to ``docs/benchmarks/device/`` as the next ``run<N>_device.json``, and the committed page
    is written again from every committed run. Returns the new file's path."""
    def git(*args):
        proc = subprocess.run(["git", *args], cwd=_cli.ROOT, capture_output=True, text=True,
                              check=False)
        return proc.stdout.strip() if proc.returncode == 0 else ""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    run = dict(commit=commit, label=label, **run)
    path = os.path.join(RUNS_DIR, f"run{len(committed_runs()) + 1}_device.json")
    with open(path, "w") as f:
        json.dump(run, f, indent=1)
    write_page(PAGE, load_runs(committed_runs()))
    return path


def write_page(out, runs):
    """Write the page of the saved ``runs`` (dicts as ``--json`` writes them, oldest first)
    to ``out``."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(page(runs))


def load_runs(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    return runs


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES),
                        help="which cases to measure")
    parser.add_argument("--steps", type=int, default=0,
                        help="env steps per epoch (0: 1000 off-policy, 2000 DQN, 4000 on-policy)")
    parser.add_argument("--modes", nargs="+", default=None, choices=list(MODES),
                        help="which devices to measure (default: every one this machine has; "
                             "a GPU mode asked for on a machine without one is refused)")
    parser.add_argument("--out", default=os.path.join(_cli.scratch("device_speed"),
                                                      "device.rst"),
                        help="the page to write")
    parser.add_argument("--json", default=None, help="also write the figures as JSON here")
    parser.add_argument("--render", nargs="+", metavar="JSON", default=None,
                        help="measure nothing: write the page from these saved runs (--json "
                             "files), oldest first")
    _cli.add_publish(parser, PAGE_NAME + f" and, with a measurement, {RUNS_NAME}/run<N>_device"
                                         ".json")
    parser.add_argument("--label", default=None,
                        help="with --publish and a measurement: what the run measured, in "
                             "words (the page's line under the run's heading)")
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error(f"--steps must be >= 0, not {args.steps}")
    if args.render:
        runs = []
        for path in args.render:
            try:
                runs += load_runs([path])
            except (OSError, ValueError) as error:
                parser.error(f"--render: cannot read {path}: {error}")
        out = PAGE if args.publish else args.out
        write_page(out, runs)
        print(f"wrote {out}")
        return runs
    asked = args.modes or list(MODES)
    pairs = [(name, mode) for name in args.cases for mode in asked
             if mode != "cuda graph" or CASES[name][0] in GRAPHED]
    if not pairs:
        parser.error(f"nothing to measure: none of --cases {' '.join(args.cases)} has a CUDA "
                     f"graph (only {', '.join(sorted(GRAPHED))} do)")
    if args.publish and not args.label:
        parser.error("--publish with a measurement needs --label (what the run measured)")
    import torch
    gpu = torch.cuda.is_available()
    on_gpu = [mode for mode in asked if mode != "cpu"]
    none = "this machine has none (torch.cuda.is_available() is False)"
    if not gpu and args.publish:
        parser.error(f"--publish commits a run measured on a CUDA GPU, and {none}")
    if not gpu and args.modes and on_gpu:
        parser.error(f"--modes {' '.join(repr(m) for m in on_gpu)} needs a CUDA GPU, and {none}")
    info = machine()
    print(json.dumps(info), flush=True)
    results, steady, setup_s = {}, {}, {}
    for name, mode in pairs:
        if mode != "cpu" and not gpu:
            continue
        algo = CASES[name][0]
        steps = args.steps or {"dqn": 2000}.get(algo, 1000 if algo in GRAPHED else 4000)
        start = time.time()
        try:
            got = measure(name, mode, steps)
        except Exception as error:   # noqa: BLE001 - one failed case must not stop the rest
            print(json.dumps(dict(case=name, mode=mode, error=repr(error)[:300])), flush=True)
            continue
        results.setdefault(name, {})[mode] = got["rate"]
        steady.setdefault(name, {})[mode] = got["steady"]
        setup_s.setdefault(name, {})[mode] = got["setup_s"]
        print(json.dumps(dict(case=name, mode=mode, steps_per_s=round(got["rate"], 1),
                              steady_steps_per_s=(None if got["steady"] is None
                                                  else round(got["steady"], 1)),
                              setup_s=round(got["setup_s"], 2),
                              wall_s=round(time.time() - start, 1))), flush=True)
    shown = ["python benchmarks/device_speed.py"]   # the figures' arguments, not the paths
    if args.cases != list(CASES):
        shown += ["--cases", *args.cases]
    if args.steps:
        shown += ["--steps", str(args.steps)]
    if args.modes and args.modes != list(MODES):
        shown += ["--modes", *(repr(mode) for mode in args.modes)]
    run = dict(machine=info, results=results, steady=steady, setup_s=setup_s,
               command=" ".join(shown))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(run, f, indent=1)
    if args.publish:
        print(f"wrote {publish(run, args.label)} and {PAGE}")
    else:
        write_page(args.out, [run])
        print(f"wrote {args.out}")
    return results


if __name__ == "__main__":
    main()
