"""Training speed on the CPU and on a GPU, one machine, one run (issue 41).

For each case it trains the algorithm with its defaults except the budget (below) three
ways where they apply: on the CPU (``device='cpu'``), on the GPU launching each kernel from
Python (``device='cuda', cuda_graph=False``), and on the GPU with the update replayed as
a CUDA graph (``cuda_graph=True``; off-policy algorithms and DQN). The figure is env steps
per second of training over the epochs after the first (the first holds the uniform
random steps, set-up and the capture), from the run's own ``progress.txt``; no test
episodes. It then writes ``docs/benchmarks/device.rst`` with the machine's GPU and CPU
names, the date and the command; ``--render`` writes that page from saved runs instead.

Usage::

    python benchmarks/device_speed.py                      # every case, every mode
    python benchmarks/device_speed.py --cases sac td3 --out /tmp/device.rst --json out.json
    python benchmarks/device_speed.py --render docs/benchmarks/device/run*.json

Without a GPU it measures the CPU column only (the page then says so). Take the figures on
an idle machine: a busy one makes them wrong.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Run as a script, this folder comes first on sys.path, where benchmarks/mujoco.py would
# stand in for the mujoco package; the repository root goes there instead.
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]

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


def measure(name, mode, steps):
    """Train case ``name`` in ``mode``; return env steps per second after the first epoch."""
    import gymnasium as gym
    import pandas as pd

    import spinup
    algo, env_id, extra = CASES[name]
    kwargs = dict(extra, **budget(algo, steps))
    if mode != "cpu":
        kwargs["device"] = "cuda"
        if algo in GRAPHED:
            kwargs["cuda_graph"] = mode == "cuda graph"
    with tempfile.TemporaryDirectory() as out:
        getattr(spinup, algo)(lambda: gym.make(env_id), seed=0,
                              logger_kwargs=dict(output_dir=out), **kwargs)
        rows = pd.read_table(os.path.join(out, "progress.txt"))
    done = rows["TotalEnvInteracts"].to_numpy()
    seconds = rows["Time"].to_numpy()
    return float((done[-1] - done[0]) / (seconds[-1] - seconds[0]))


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
        "them by ``python benchmarks/device_speed.py --render docs/benchmarks/device/run*.json``.",
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
                  f"- command: ``{run['command']}``", "", *table(run["results"]), ""]
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


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES),
                        help="which cases to measure")
    parser.add_argument("--steps", type=int, default=0,
                        help="env steps per epoch (0: 1000 off-policy, 2000 DQN, 4000 on-policy)")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES),
                        help="which devices to measure")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "docs",
                                                      "benchmarks", "device.rst"),
                        help="the page to write")
    parser.add_argument("--json", default=None, help="also write the figures as JSON here")
    parser.add_argument("--render", nargs="+", metavar="JSON", default=None,
                        help="measure nothing: write the page from these saved runs (--json "
                             "files), oldest first")
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error(f"--steps must be >= 0, not {args.steps}")
    if args.render:
        runs = []
        for path in args.render:
            try:
                with open(path) as f:
                    runs.append(json.load(f))
            except (OSError, ValueError) as error:
                parser.error(f"--render: cannot read {path}: {error}")
        with open(args.out, "w") as f:
            f.write(page(runs))
        return runs
    import torch
    gpu = torch.cuda.is_available()
    info = machine()
    print(json.dumps(info), flush=True)
    results = {}
    for name in args.cases:
        algo = CASES[name][0]
        steps = args.steps or {"dqn": 2000}.get(algo, 1000 if algo in GRAPHED else 4000)
        for mode in args.modes:
            if (mode != "cpu" and not gpu) or (mode == "cuda graph" and algo not in GRAPHED):
                continue
            start = time.time()
            try:
                rate = measure(name, mode, steps)
            except Exception as error:   # noqa: BLE001 - one failed case must not stop the rest
                print(json.dumps(dict(case=name, mode=mode, error=repr(error)[:300])), flush=True)
                continue
            results.setdefault(name, {})[mode] = rate
            print(json.dumps(dict(case=name, mode=mode, steps_per_s=round(rate, 1),
                                  wall_s=round(time.time() - start, 1))), flush=True)
    shown = ["python benchmarks/device_speed.py"]   # the figures' arguments, not the paths
    if args.cases != list(CASES):
        shown += ["--cases", *args.cases]
    if args.steps:
        shown += ["--steps", str(args.steps)]
    if args.modes != list(MODES):
        shown += ["--modes", *(repr(mode) for mode in args.modes)]
    run = dict(machine=info, results=results, command=" ".join(shown))
    with open(args.out, "w") as f:
        f.write(page([run]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(run, f, indent=1)
    return results


if __name__ == "__main__":
    main()
