"""Env steps per second with many env copies at once (issue 55, docs/benchmarks/parallel.rst).

For PPO (every batched task of ``spinup.envs``), SAC (the two continuous ones) and DQN (the
three discrete ones), with
``num_envs`` copies of a batched task (``gym.make_vec('spinup/<Task>', num_envs=N)``) and,
in the same run, the one-env gymnasium path (``gym.make('<Task>')``, ``num_envs=1``):

* ``collect``: env steps per second while collecting, the update left out. PPO: from the
  first ``store`` of an epoch to its ``get`` (the acting, the env, the buffer, the
  bootstrap values), the epoch before it left out as warm-up. SAC and DQN: from the first
  to the last replay write of a run whose only update round is after its last write
  (``start_steps=0``: the policy acts; DQN epsilon-greedy).
* ``epoch`` (PPO): env steps per second of whole epochs, update included, with
  ``train_pi_iters = train_v_iters = 1`` (the issue's "whole epochs" figure).
* ``loop`` (one env): the plain torch loop a careful user writes with PPO's networks
  (``torch.distributions`` sample, log-probability and V(s) under ``no_grad``, then
  ``env.step``), in microseconds per step; PPO's one-env collection step
  (``1e6 / collect``) is compared with it.

One torch thread (spinup trains with ``RUN_THREADS = 1``). The measurements of every
configuration are interleaved over ``--repeats`` rounds in a shuffled order and the
median is reported, so that a slow moment of the machine does not fall on one
configuration. A speed figure is only worth something on an idle machine.

The raw and median figures go as JSON to ``--out`` (default: a file in the system's temp
folder). ``--publish`` merges them into the committed record of
docs/benchmarks/parallel.rst instead: DQN's figures into ``dqn_throughput.json``, the
``--split`` figures into ``split.json``, the others into ``throughput.json`` (all in
``docs/benchmarks/parallel/``); a figure measured again replaces its entry there, every
other entry stays, listed under ``earlier`` with the machine and command that measured
it. Usage::

    python benchmarks/parallel_envs.py --publish
    python benchmarks/parallel_envs.py --algos ppo --tasks CartPole-v1 --sizes 1 4096 --repeats 1
"""
import contextlib
import io
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

PUBLISHED_DIR, PUBLISHED_SHOWN = _cli.committed("docs", "benchmarks", "parallel")
#: the committed file of each kind of figure (the key's first part); the rest: OTHERS
PUBLISHED = {"dqn": "dqn_throughput.json", "ppo_split": "split.json"}
OTHERS = "throughput.json"

TASKS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0",
         "Pendulum-v1"]
CONTINUOUS = {"MountainCarContinuous-v0", "Pendulum-v1"}
SIZES = [1, 16, 256, 4096, 16384]


def env_fn(task, n):
    """The gymnasium env (``n`` None) or a batched task of ``n`` copies."""
    import gymnasium as gym

    import spinup.envs  # noqa: F401  (registers the batched tasks)
    if n is None:
        return lambda: gym.make(task)
    return lambda: gym.make_vec(f"spinup/{task}", num_envs=n)


def rows_for(n):
    """Batch steps per PPO epoch: about 64k env steps, at least 16 rows, at most 2,000."""
    return max(16, min(2000, 65536 // n))


@contextlib.contextmanager
def patched(cls, name, wrapper):
    original = getattr(cls, name)
    setattr(cls, name, wrapper(original))
    try:
        yield
    finally:
        setattr(cls, name, original)


@contextlib.contextmanager
def epoch_marks():
    """Within the block, ``(starts, gets)``: the times of each PPO epoch's first
    ``PPOBuffer.store`` and of its ``get`` (the end of its collection)."""
    from spinup.algos.ppo.ppo import PPOBuffer
    starts, gets = [], []

    def store(original):
        def wrapped(self, *args):
            if self.ptr == 0:
                starts.append(time.perf_counter())
            return original(self, *args)
        return wrapped

    def get(original):
        def wrapped(self):
            gets.append(time.perf_counter())
            return original(self)
        return wrapped

    with patched(PPOBuffer, "store", store), patched(PPOBuffer, "get", get):
        yield starts, gets


def ppo_rates(task, n):
    """``(collect, epoch)`` env steps/s of PPO on ``task``; ``n`` copies of the batched
    task, or the gymnasium env for None. Three epochs; the first is warm-up."""
    from spinup import ppo
    copies, rows = (n or 1), rows_for(n or 1)
    with tempfile.TemporaryDirectory() as out, epoch_marks() as (starts, gets), \
            contextlib.redirect_stdout(io.StringIO()):
        ppo(env_fn(task, n), num_envs=copies, steps_per_epoch=copies * rows, epochs=3,
            train_pi_iters=1, train_v_iters=1, max_ep_len=10**6,
            logger_kwargs=dict(output_dir=out))
    # store k happens after the first act+step of epoch k: rows - 1 batch steps to get
    collect = statistics.median((rows - 1) * copies / (g - s) for s, g in
                                zip(starts[1:], gets[1:]))
    epoch = rows * copies / (starts[2] - starts[1])
    return collect, epoch


def ppo_split(n, epochs=6):
    """Seconds per epoch of collection and of the update, for PPO with the CartPole preset
    (``steps_per_epoch=2000, pi_lr=1e-3``) on the gymnasium env (``n`` None) or with ``n``
    copies of the batched task and ``steps_per_epoch=2048`` (the ``spinup_batched``
    settings of benchmarks/time_to_threshold.py). The first epoch is left out."""
    from spinup import ppo
    copies, steps = (1, 2000) if n is None else (n, 2048)
    with tempfile.TemporaryDirectory() as out, epoch_marks() as (starts, gets), \
            contextlib.redirect_stdout(io.StringIO()):
        ppo(env_fn("CartPole-v1", n), num_envs=copies, steps_per_epoch=steps, epochs=epochs,
            pi_lr=1e-3, logger_kwargs=dict(output_dir=out))
    collect = [g - s for s, g in zip(starts[1:], gets[1:])]
    update = [s - g for g, s in zip(gets[1:], starts[2:])]   # get to the next epoch's store
    return statistics.median(collect), statistics.median(update)


@contextlib.contextmanager
def write_marks(buffer_cls):
    """Within the block, the times of every ``buffer_cls.store_batch`` call (one replay
    write per batch step)."""
    stamps = []

    def store(original):
        def wrapped(self, *args, **kw):
            stamps.append(time.perf_counter())
            return original(self, *args, **kw)
        return wrapped

    with patched(buffer_cls, "store_batch", store):
        yield stamps


def sac_collect(task, n, batches=None):
    """Env steps/s of SAC's collection on ``task`` (policy acting, batched replay writes)."""
    from spinup import sac
    copies = n or 1
    batches = batches or max(16, min(2000, 32768 // copies))
    from spinup.algos.sac import sac as sac_module
    total = copies * batches
    with tempfile.TemporaryDirectory() as out, write_marks(sac_module.ReplayBuffer) as stamps, \
            contextlib.redirect_stdout(io.StringIO()):
        sac(env_fn(task, n), num_envs=copies, steps_per_epoch=total, epochs=1, start_steps=0,
            update_after=total - copies, update_every=copies, updates_per_step=1 / copies,
            num_test_episodes=0, max_ep_len=10**6, logger_kwargs=dict(output_dir=out))
    # one replay write per batch step: num_envs env steps between two writes
    return (len(stamps) - 1) * copies / (stamps[-1] - stamps[0])


def dqn_collect(task, n, batches=None):
    """Env steps/s of DQN's collection on ``task`` (epsilon-greedy acting from the start,
    batched replay writes), measured like :func:`sac_collect`."""
    from spinup import dqn
    copies = n or 1
    batches = batches or max(16, min(2000, 32768 // copies))
    from spinup.algos.dqn import dqn as dqn_module
    total = copies * batches
    with tempfile.TemporaryDirectory() as out, write_marks(dqn_module.ReplayBuffer) as stamps, \
            contextlib.redirect_stdout(io.StringIO()):
        dqn(env_fn(task, n), num_envs=copies, steps_per_epoch=total, epochs=1, start_steps=0,
            update_after=total - copies, update_every=copies, num_test_episodes=0,
            max_ep_len=10**6, logger_kwargs=dict(output_dir=out))
    return (len(stamps) - 1) * copies / (stamps[-1] - stamps[0])


def plain_loop_us(task, steps=3000):
    """Microseconds per step of the loop a careful user writes for one gymnasium env, with
    PPO's networks: under ``torch.no_grad``, the policy's ``torch.distributions`` object,
    a sample, its log-probability and V(s), then ``env.step`` (reset at an episode end)."""
    import gymnasium as gym
    import numpy as np
    import torch

    from spinup.algos.ppo import core as ppo_core
    env = gym.make(task)
    ac = ppo_core.MLPActorCritic(env.observation_space, env.action_space)
    box = isinstance(env.action_space, gym.spaces.Box)
    obs, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        with torch.no_grad():
            obs_t = torch.as_tensor(obs, dtype=torch.float32)
            pi = ac.pi.distribution(obs_t)
            a = pi.sample()
            ac.pi.log_prob(pi, a), ac.v(obs_t)
        a = a.numpy()
        if box:
            a = np.clip(a, env.action_space.low, env.action_space.high)
        obs, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            obs, _ = env.reset()
    return (time.perf_counter() - start) / steps * 1e6


def machine():
    """What the numbers were measured on."""
    import gymnasium as gym
    import torch
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    return dict(cpu=cpu, cores=os.cpu_count(), torch=torch.__version__,
                gymnasium=gym.__version__, python=platform.python_version(),
                commit=commit.strip(), torch_threads=1,
                load_before=os.getloadavg()[0], date=time.strftime("%Y-%m-%d %H:%M"))


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--algos", nargs="+", default=["ppo", "sac", "dqn"],
                        choices=["ppo", "sac", "dqn"], help="the algorithms to measure")
    parser.add_argument("--tasks", nargs="+", default=TASKS, choices=TASKS,
                        help="the tasks (SAC: the continuous ones; DQN: the discrete ones)")
    parser.add_argument("--sizes", nargs="+", type=_cli.positive, default=SIZES,
                        help="numbers of copies of the batched task (SAC, DQN: up to 4096)")
    parser.add_argument("--repeats", type=_cli.positive, default=3,
                        help="rounds; each figure is their median")
    parser.add_argument("--split", type=_cli.positive, nargs="*", metavar="N",
                        help="instead: PPO's CartPole preset, seconds per epoch collecting "
                             "and updating, one env and N copies (e.g. --split 16 256)")
    parser.add_argument("--out", default=os.path.join(_cli.scratch("parallel_envs"),
                                                      "throughput.json"),
                        help="write the raw and median results here (JSON)")
    _cli.add_publish(parser, f"merged into {PUBLISHED_SHOWN}/{OTHERS}, "
                             f"{PUBLISHED['dqn']} or {PUBLISHED['ppo_split']}")
    args = parser.parse_args(argv)
    args.command = "benchmarks/parallel_envs.py " + " ".join(
        sys.argv[1:] if argv is None else argv)

    if args.split is not None:
        import torch
        torch.set_num_threads(1)
        sizes, raw = [None] + args.split, {}
        for rep in range(args.repeats):
            for n in random.Random(rep).sample(sizes, len(sizes)):
                value = dict(zip(("collect_s", "update_s"), ppo_split(n)))
                raw.setdefault(f"ppo_split|CartPole-v1|{'gym' if n is None else n}",
                               []).append(value)
                print(rep, n, value, flush=True)
        return _report(raw, machine(), args)
    jobs = []
    for task in args.tasks:
        sizes = [None] + args.sizes   # None: the gymnasium env, one copy
        if "ppo" in args.algos:
            jobs += [("ppo", task, n) for n in sizes] + [("loop", task, None)]
        if "sac" in args.algos and task in CONTINUOUS:
            jobs += [("sac", task, n) for n in sizes if n is None or n <= 4096]
        if "dqn" in args.algos and task not in CONTINUOUS:
            jobs += [("dqn", task, n) for n in sizes if n is None or n <= 4096]
    if not jobs:
        parser.error(f"--algos {' '.join(args.algos)} on --tasks {' '.join(args.tasks)}: "
                     "nothing to measure (SAC takes the continuous tasks, DQN the discrete)")
    import torch
    torch.set_num_threads(1)
    raw = {}
    order = random.Random(0)
    info = machine()
    for rep in range(args.repeats):
        order.shuffle(jobs)
        for algo, task, n in jobs:
            if algo == "ppo":
                value = dict(zip(("collect", "epoch"), ppo_rates(task, n)))
            elif algo in ("sac", "dqn"):
                value = dict(collect=(sac_collect if algo == "sac" else dqn_collect)(task, n))
            else:
                value = dict(loop_us=plain_loop_us(task))
            key = f"{algo}|{task}|{'gym' if n is None else n}"
            raw.setdefault(key, []).append(value)
            print(rep, key, {k: round(v, 1) for k, v in value.items()}, flush=True)
    return _report(raw, info, args)


def merge(old, new):
    """The record ``new`` laid over the committed record ``old`` (None: there is none).

    An entry measured again is replaced; every other entry of ``old`` stays, and the
    machine and command that measured it are listed under ``earlier`` (one item per
    earlier run that still has entries, with their keys)."""
    if old is None:
        return new
    rerun = set(new["raw"])
    listed = {key for run in old.get("earlier", []) for key in run["keys"]}
    earlier = [dict(machine=old["machine"], command=old["command"],
                    keys=[key for key in old["raw"] if key not in listed])]
    earlier += old.get("earlier", [])
    earlier = [dict(run, keys=[key for key in run["keys"] if key not in rerun])
               for run in earlier]
    earlier = [run for run in earlier if run["keys"]]
    merged = dict(machine=new["machine"], command=new["command"],
                  raw={**{k: v for k, v in old["raw"].items() if k not in rerun}, **new["raw"]},
                  medians={**{k: v for k, v in old["medians"].items() if k not in rerun},
                           **new["medians"]})
    if earlier:
        merged["earlier"] = earlier
    return merged


def _write(path, record):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {path}")


def _report(raw, info, args):
    """Print the medians; write everything to ``args.out``, or with ``args.publish`` merge
    it into the committed records."""
    medians = {key: {k: statistics.median(v[k] for v in values) for k in values[0]}
               for key, values in raw.items()}
    print("\nmedians (env steps/s; loop: microseconds per step; split: seconds per epoch)")
    for key in sorted(medians):
        print(f"  {key:45s} " + "  ".join(f"{k} {v:12.5g}" for k, v in medians[key].items()))
    info["load_after"] = os.getloadavg()[0]
    if not args.publish:
        _write(args.out, dict(machine=info, command=args.command, raw=raw, medians=medians))
        return 0
    for name in sorted(set(PUBLISHED.values()) | {OTHERS}):
        keys = [key for key in raw if PUBLISHED.get(key.split("|")[0], OTHERS) == name]
        if not keys:
            continue
        path = os.path.join(PUBLISHED_DIR, name)
        old = None
        if os.path.exists(path):
            with open(path) as f:
                old = json.load(f)
        new = dict(machine=info, command=args.command, raw={k: raw[k] for k in keys},
                   medians={k: medians[k] for k in keys})
        _write(path, merge(old, new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
