"""Where a SAC (and TD3, DDPG) run's time goes on a GPU machine, with the update replayed as
a CUDA graph: time per update round (the GPU's work, which the CPU waits for when it reads the
logged values), time to refresh the CPU copy of the policy, a cProfile of one run, and the
cost of acting and of one HalfCheetah-v5 step on the CPU.

Usage (on a machine with a CUDA GPU): ``python benchmarks/device_profile.py``.

``docs/benchmarks/device/run2_profile.txt`` (issue 41) came from a first draft of this script
with the same measurements, at commit 7455c04. The fifth SAC line swaps in the fused Adam with
``capturable=True``; from commit cfbfb40 on, that is already what spinup builds on a GPU, so
the line repeats the default there.
"""
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# as a script, this folder would come first on sys.path, where mujoco.py hides the package
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

timers = {"round": 0.0, "refresh": 0.0, "rounds": 0}
plain = {}   # the unpatched UpdateRound.__call__ and Placement.refresh, set by main


def timed_round(self, *args, **kwargs):
    import torch
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = plain["round"](self, *args, **kwargs)
    timers["round"] += time.perf_counter() - start
    timers["rounds"] += 1
    return out


def timed_refresh(self):
    start = time.perf_counter()
    plain["refresh"](self)
    timers["refresh"] += time.perf_counter() - start


def run(algo, profile=False):
    """Train ``algo`` on HalfCheetah-v5 (device_speed's budget) on cuda; print its figures."""
    import gymnasium as gym
    import pandas as pd

    import spinup
    for key in timers:
        timers[key] = 0
    with tempfile.TemporaryDirectory() as out:
        kwargs = dict(steps_per_epoch=1000, epochs=3, start_steps=1000, update_after=1000,
                      replay_size=3000, num_test_episodes=0, device="cuda", seed=0,
                      logger_kwargs=dict(output_dir=out))
        prof = cProfile.Profile() if profile else None
        if prof:
            prof.enable()
        start = time.perf_counter()
        getattr(spinup, algo)(lambda: gym.make("HalfCheetah-v5"), **kwargs)
        wall = time.perf_counter() - start
        if prof:
            prof.disable()
        rows = pd.read_table(os.path.join(out, "progress.txt"))
    done, seconds = rows.TotalEnvInteracts.to_numpy(), rows.Time.to_numpy()
    rounds = max(1, timers["rounds"])
    print(f"{algo} {{}}: {(done[-1] - done[0]) / (seconds[-1] - seconds[0]):.0f} steps/s "
          f"(epochs 2-3); whole run {wall:.1f} s, {timers['rounds']} rounds: "
          f"{1e3 * timers['round'] / rounds:.1f} ms/round (sync+rows+replay+read), "
          f"refresh {1e3 * timers['refresh'] / rounds:.2f} ms/round", flush=True)
    if prof:
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
        print(text.getvalue()[:6000])


def fused_adam(params, lr, fused=None):
    import torch

    from spinup.utils import torch_tools
    params = list(params)
    if params and params[0].is_cuda:
        return torch.optim.Adam(params, lr=torch.tensor(float(lr), device=params[0].device),
                                capturable=True, fused=True)
    return torch_tools.adam(params, lr, fused)


def acting_cost(steps=2000):
    """Microseconds per step: the CPU policy's forward plus an env step, and the step alone."""
    import gymnasium as gym
    import torch

    import spinup.algos.sac.core
    env = gym.make("HalfCheetah-v5")
    obs, _ = env.reset(seed=0)
    ac = spinup.algos.sac.core.MLPActorCritic(env.observation_space, env.action_space)
    torch.set_num_threads(1)
    start = time.perf_counter()
    for _ in range(steps):
        with torch.no_grad():
            a, _ = ac.pi(torch.as_tensor(obs, dtype=torch.float32), False, False)
        obs, _, terminated, truncated, _ = env.step(a.numpy())
        if terminated or truncated:
            obs, _ = env.reset()
    print(f"acting + env step: {1e6 * (time.perf_counter() - start) / steps:.0f} us/step")
    start = time.perf_counter()
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    print(f"env step alone: {1e6 * (time.perf_counter() - start) / steps:.0f} us/step")


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        parser.error("needs a CUDA GPU, and this machine has none "
                     "(torch.cuda.is_available() is False)")
    import spinup.algos.sac.sac as sac_mod
    from spinup.machinery import device, update_graph
    plain["round"], plain["refresh"] = update_graph.UpdateRound.__call__, device.Placement.refresh
    update_graph.UpdateRound.__call__ = timed_round
    device.Placement.refresh = timed_refresh
    for algo in ("sac", "sac", "td3", "ddpg"):
        run(algo)
    plain_adam, sac_mod.Adam = sac_mod.Adam, fused_adam
    try:
        run("sac")
    except Exception as error:   # noqa: BLE001 - report and go on
        print("fused capturable:", repr(error)[:300])
    sac_mod.Adam = plain_adam
    run("sac", profile=True)
    acting_cost()
    return 0


if __name__ == "__main__":
    sys.exit(main())
