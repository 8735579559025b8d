"""Env steps per second of the MuJoCo Warp tasks (spinup/HalfCheetah-v5, ...), on a GPU.

Two figures per task and number of copies ``N``:

* ``sim``: the task alone, ``N`` copies stepped with random actions drawn on the same
  device (no host copy, no policy): the ceiling any algorithm can reach with it.
* ``collect``: the path PPO takes today: the task's observations copied to the host, PPO's
  MLP actor-critic (64, 64) sampling on the CPU, the actions sent back, as
  ``spinup.envs.batch.BatchedTask`` does in a run.

Each figure is the median over ``--repeats`` rounds, the configurations interleaved in a
shuffled order in every round, after ``--warmup`` batch steps that are not timed (the first
steps compile Warp's kernels). A speed figure is only worth something on an idle machine.

Writes JSON to ``--out`` (default: a file in the system's temp folder); ``--publish``
writes the committed record, docs/benchmarks/warp/speed.json, instead (run it on a lent
GPU). Usage::

    python benchmarks/warp_speed.py --device cuda --sizes 1024 4096 16384
    python benchmarks/warp_speed.py --device cpu --tasks Hopper --sizes 4 --steps 5
"""
import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Runs from any folder, with or without an installed spinup; and this folder leaves the
# path, or its mujoco.py would hide the mujoco package.
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]

TASKS = ["HalfCheetah", "Hopper", "Walker2d", "Ant", "Humanoid"]
PUBLISHED = os.path.join(ROOT, "docs", "benchmarks", "warp", "speed.json")


def _sync(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_sim(task, steps, device):
    """Env steps per second of ``steps`` batch steps with random actions on ``device``."""
    import torch
    n, act_dim = task.num_envs, task.single_action_space.shape[0]
    gen = torch.Generator(device=device).manual_seed(0)
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        task.step(2 * torch.rand(n, act_dim, generator=gen, device=device) - 1)
    _sync(device)
    return n * steps / (time.perf_counter() - start)


def measure_collect(batched, actor, steps):
    """Env steps per second of PPO's acting path: host observations, CPU actor, host
    actions (``batched`` a BatchedTask)."""
    import numpy as np
    import torch
    obs = batched.reset(0)
    low, high = batched.action_space.low, batched.action_space.high
    start = time.perf_counter()
    for _ in range(steps):
        a, _, _ = actor.step(torch.as_tensor(obs, dtype=torch.float32))
        obs = batched.step(np.clip(a, low, high))[0]
    return batched.num_envs * steps / (time.perf_counter() - start)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Env steps per second of the MuJoCo Warp tasks (sim alone; PPO's "
                    "collection path).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=TASKS, choices=TASKS)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1024, 4096, 16384],
                        help="numbers of copies")
    parser.add_argument("--device", default="cuda", help="cpu, cuda or cuda:N")
    parser.add_argument("--steps", type=int, default=100, help="timed batch steps per round")
    parser.add_argument("--warmup", type=int, default=10, help="untimed batch steps first")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the median is kept")
    parser.add_argument("--figures", nargs="+", default=["sim", "collect"],
                        choices=["sim", "collect"])
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "warp_speed.json"),
                        help="where the JSON goes")
    parser.add_argument("--publish", action="store_true",
                        help=f"write the committed record ({os.path.relpath(PUBLISHED, ROOT)}) "
                             "instead of --out")
    args = parser.parse_args(argv)
    for name in ("steps", "repeats"):
        if getattr(args, name) < 1:
            parser.exit(2, f"warp_speed: --{name} {getattr(args, name)}: give at least 1\n")
    if args.warmup < 0 or min(args.sizes) < 1:
        parser.exit(2, "warp_speed: --warmup must be >= 0 and every --sizes entry >= 1\n")

    import torch
    try:
        device = torch.device(args.device)
    except RuntimeError:
        parser.exit(2, f"warp_speed: --device {args.device}: not a torch device name\n")
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.exit(2, f"warp_speed: --device {args.device}: this machine has no CUDA GPU "
                       "(--device cpu measures the CPU, slowly)\n")
    if device.type not in ("cpu", "cuda"):
        parser.exit(2, f"warp_speed: --device {args.device}: give cpu, cuda or cuda:N\n")
    try:
        from spinup.envs import mujoco_warp
        mujoco_warp._import_warp()
    except ImportError as e:
        parser.exit(2, f"warp_speed: {e}\n")
    from spinup.algos.ppo import core
    from spinup.envs.batch import BatchedTask
    torch.set_num_threads(1)

    tasks, results = {}, []
    for name in args.tasks:
        for n in args.sizes:
            task = getattr(mujoco_warp, name)(num_envs=n, device=device)
            task.reset(seed=0)
            measure_sim(task, args.warmup, device)
            torch.manual_seed(0)
            actor = core.MLPActorCritic(task.single_observation_space,
                                        task.single_action_space)
            tasks[name, n] = (task, BatchedTask(task), actor)
    configs = [(name, n, fig) for (name, n) in tasks for fig in args.figures]
    rng = random.Random(0)
    raw = {c: [] for c in configs}
    for _ in range(args.repeats):
        rng.shuffle(configs)
        for name, n, fig in configs:
            task, batched, actor = tasks[name, n]
            speed = (measure_sim(task, args.steps, device) if fig == "sim"
                     else measure_collect(batched, actor, args.steps))
            raw[name, n, fig].append(speed)
    for (name, n, fig), speeds in sorted(raw.items()):
        results.append(dict(task=name, num_envs=n, figure=fig, steps_per_s=speeds,
                            median=statistics.median(speeds)))
        print(f"{name:12s} N={n:6d} {fig:8s} {statistics.median(speeds):12,.0f} env steps/s")

    import mujoco_warp as mjw
    import warp as wp
    record = dict(
        command="python benchmarks/warp_speed.py " + " ".join(sys.argv[1:] if argv is None
                                                               else argv),
        date=time.strftime("%Y-%m-%d"), device=str(device),
        device_name=(torch.cuda.get_device_name(device) if device.type == "cuda"
                     else platform.processor() or platform.machine()),
        torch=torch.__version__, warp=wp.__version__,
        mujoco_warp=getattr(mjw, "__version__", "unknown"),
        steps=args.steps, warmup=args.warmup, repeats=args.repeats, results=results)
    out = PUBLISHED if args.publish else args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
