"""Which torch kernel makes a run's numbers differ between two settings (issue 42).

A run's numbers depend on the CPU because torch picks its kernels at run time: ATen's
vectorised kernels by the CPU capability (``ATEN_CPU_CAPABILITY`` overrides it) and MKL's
matrix products by the processor (``MKL_CBWR`` asks for a fixed code path). This script runs
a short piece of one algorithm twice, in two processes whose environments differ by the
given settings, records every torch operation with a hash of its inputs and outputs
(``TorchDispatchMode``), and names the operations whose inputs were identical in both
processes but whose outputs were not: the kernels that introduce the difference. Usage::

    python benchmarks/kernel_probe.py --algo sac --set ATEN_CPU_CAPABILITY=avx2
    python benchmarks/kernel_probe.py --algo vpg --set MKL_CBWR=COMPATIBLE --set-b ...

``--set`` applies to the second process only (the first runs with this shell's settings);
``--set-b`` / ``--set-a`` give each side explicitly. The piece run is one epoch of
``--steps`` steps (400) on ``--env`` (Hopper-v5), one thread; off-policy algorithms update
from a third of the steps on, every 50 steps, in batches of 32, or with ``--defaults`` use
their own settings. Exit status 1 if the two runs differ.

Found with it on an AMD EPYC with AVX-512 (torch 2.13.0+cpu), 2026-11-27:

- any ``MKL_CBWR`` value (``AUTO`` included) changes ``aten.linear`` from the first
  forward pass of VPG on Hopper-v5 (4000 steps): MKL's default mode and its reproducible
  mode give different products;
- ``ATEN_CPU_CAPABILITY=avx2`` changes nothing in VPG (4000 steps) or PPO, and in SAC on
  HalfCheetah-v5 (4000 steps, defaults) exactly one call of ``aten.softplus`` (and its
  backward) out of 1.4 million operations: enough to change the first epoch's row.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

CHILD = r"""
import hashlib, json, sys, tempfile
import gymnasium as gym
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
torch.set_num_threads(1)
import spinup

def digest(values):
    h = hashlib.sha1()
    for v in tree_leaves(values):
        if isinstance(v, torch.Tensor):
            h.update(v.detach().contiguous().cpu().numpy().tobytes() if v.numel() else b"-")
        elif isinstance(v, (int, float, bool)):
            h.update(repr(v).encode())
    return h.hexdigest()[:12]

class Record(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []
        self.fresh = set()   # storages made by empty* or set_: contents not yet written
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        inputs = (args, {k: v for k, v in kwargs.items() if k != "out"})
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if first is not None and first.data_ptr() in self.fresh:
            self.fresh.discard(first.data_ptr())
            if func._schema.name.endswith("_") or "out" in func._overloadname:
                inputs = (args[1:], inputs[1])   # overwritten, not read
        out = func(*args, **kwargs)
        if "empty" in name or name.startswith("aten.set_.source_Storage"):
            self.fresh.update(t.data_ptr() for t in tree_leaves(out)
                              if isinstance(t, torch.Tensor))
            self.calls.append([name, digest(inputs), "uninitialised"])
        else:
            self.calls.append([name, digest(inputs), digest(out)])
        return out

algo, steps, env_name = sys.argv[1], int(sys.argv[3]), sys.argv[4]
small = (dict(steps_per_epoch=steps) if algo in ("vpg", "trpo", "ppo") or sys.argv[5] == "1" else
         dict(steps_per_epoch=steps, start_steps=steps // 3, update_after=steps // 3,
              update_every=50, batch_size=32, num_test_episodes=1))
rec = Record()
with rec:
    getattr(spinup, algo)(lambda: gym.make(env_name), epochs=1, seed=0,
                          logger_kwargs=dict(output_dir=tempfile.mkdtemp()),
                          **small)
json.dump(dict(capability=torch.backends.cpu.get_cpu_capability(), calls=rec.calls),
          open(sys.argv[2], "w"))
"""


def _settings(pairs):
    return dict(pair.partition("=")[::2] for pair in pairs or [])


def record(algo, settings, steps, env_name, defaults=False):
    """Run the child with ``settings`` added to the environment; its list of calls."""
    env = dict(os.environ, **settings, PYTHONPATH=ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "calls.json")
        done = subprocess.run([sys.executable, "-c", CHILD, algo, out, str(steps), env_name,
                               "1" if defaults else "0"], env=env, stdout=subprocess.DEVNULL,
                              cwd=tmp)   # not the caller's folder: it may hold a mujoco.py
        if done.returncode != 0:
            raise SystemExit(f"kernel_probe: the {algo} run with {settings or 'no settings'} "
                             f"failed (exit {done.returncode}); its error is above")
        with open(out) as f:
            return json.load(f)


def compare(a, b):
    """The operations that first make ``b`` differ from ``a``: same op, same inputs,
    other outputs. Returns (ops introducing differences as a Counter, number of calls
    compared, index of the first differing output or None)."""
    introduced, first = collections.Counter(), None
    n = min(len(a), len(b))
    for i in range(n):
        (op_a, in_a, out_a), (op_b, in_b, out_b) = a[i], b[i]
        if op_a != op_b:   # control flow parted: nothing after this lines up
            n = i
            break
        if out_a != out_b:
            first = i if first is None else first
            if in_a == in_b:
                introduced[op_a] += 1
    return introduced, n, first


def main(argv=None):
    p = _cli.parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--algo", default="sac", choices=["vpg", "trpo", "ppo", "ddpg", "td3", "sac"],
                   help="the algorithm whose first epoch is run")
    p.add_argument("--env", default="Hopper-v5", type=_cli.gym_task, help="a gymnasium task id")
    p.add_argument("--steps", type=_cli.positive, default=400, help="steps in the one epoch")
    p.add_argument("--defaults", action="store_true",
                   help="off-policy: every argument but steps_per_epoch at its default")
    p.add_argument("--set", nargs="*", default=[], type=_cli.settings,
                   help="NAME=VALUE for the second run")
    p.add_argument("--set-a", nargs="*", default=[], type=_cli.settings,
                   help="NAME=VALUE for the first run")
    p.add_argument("--set-b", nargs="*", default=[], type=_cli.settings,
                   help="more NAME=VALUE for the second run")
    args = p.parse_args(argv)
    env_a, env_b = _settings(args.set_a), _settings(args.set + args.set_b)
    a, b = (record(args.algo, env, args.steps, args.env, args.defaults) for env in (env_a, env_b))
    introduced, n, first = compare(a["calls"], b["calls"])
    print(f"{args.algo} on {args.env}: A {env_a or '(as is)'} [{a['capability']}] against "
          f"B {env_b} [{b['capability']}]: {n} operations compared")
    if first is None:
        print("identical: every output of every operation is the same")
        return 0
    print(f"first differing output: call {first} ({a['calls'][first][0]})")
    for op, count in introduced.most_common():
        print(f"  {count:6d} x {op}: same inputs, other outputs")
    return 1


if __name__ == "__main__":
    sys.exit(main())
