"""Microseconds per env step: the env alone, acting alone, and a whole epoch.

For every algorithm this prints three numbers, all in microseconds per env step:

* ``env``: the environment's own ``env.step`` (random actions, resets included);
* ``acting``: the algorithm's acting call alone, on observations recorded from the
  env (so no env time is in it): ``ac.step(obs)`` for the on-policy methods (action,
  value and log-probability in one no-grad call), ``ac.pi`` plus exploration noise
  for DDPG/TD3, ``ac.pi(obs, False, False)`` for SAC, the greedy ``q.act`` for DQN;
  each includes turning the numpy observation into a tensor and the result back;
* ``epoch``: wall time of whole epochs of the algorithm (acting, env, buffer,
  logging and the update) divided by the env steps, from the ``Time`` column of
  ``progress.txt``; the first epoch (which builds the optimizers) is left out.

The on-policy methods and DQN run on CartPole-v1, DDPG/TD3/SAC on Pendulum-v1, with
their default networks and one torch thread. ``ppo8`` is PPO with ``num_envs=8``:
its acting call takes 8 observations at once, and its numbers are per env step
(the call's time divided by 8). ``acting`` is the median of
``--repeats`` timings of ``--steps`` calls. Usage::

    python benchmarks/acting_speed.py [--algos ppo vpg ...] [--steps 5000] [--repeats 5]
                                      [--no-epoch] [--cpu-time] [--ref OTHER_CHECKOUT]

With ``--ref`` the acting calls of another checkout's ``core.py`` files (e.g. the code
before a change) are timed in turn with this one's, which gives a speed-up that holds
even on a loaded machine.
"""
import argparse
import contextlib
import importlib
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

ON_POLICY = ("vpg", "trpo", "ppo", "a2c", "a3c")
ALGO_OF = dict(ppo8="ppo")   # row name -> algorithm
BATCH = dict(ppo8=8)         # observations per acting call (envs stepped together)
ENV_OF = dict(vpg="CartPole-v1", trpo="CartPole-v1", ppo="CartPole-v1",
              ppo8="CartPole-v1", a2c="CartPole-v1", a3c="CartPole-v1", dqn="CartPole-v1", ddpg="Pendulum-v1", td3="Pendulum-v1",
              sac="Pendulum-v1")
# Whole-epoch runs: default hyperparameters except the budget (and, off-policy, learning
# from the start, so every measured epoch contains updates).
EPOCH_KWARGS = dict(
    vpg=dict(steps_per_epoch=4000, epochs=4),
    trpo=dict(steps_per_epoch=4000, epochs=4),
    ppo=dict(steps_per_epoch=4000, epochs=4),
    ppo8=dict(steps_per_epoch=4000, epochs=4, num_envs=8),
    a2c=dict(steps_per_epoch=4000, epochs=4),
    a3c=dict(steps_per_epoch=4000, epochs=4, num_workers=1, num_test_episodes=0),
    dqn=dict(steps_per_epoch=2000, epochs=4, start_steps=1000, update_after=1000,
             num_test_episodes=0),
    ddpg=dict(steps_per_epoch=1000, epochs=4, start_steps=1000, update_after=1000,
              num_test_episodes=0),
    td3=dict(steps_per_epoch=1000, epochs=4, start_steps=1000, update_after=1000,
             num_test_episodes=0),
    sac=dict(steps_per_epoch=1000, epochs=4, start_steps=1000, update_after=1000,
             num_test_episodes=0),
)


def record_observations(env_id, n):
    """``n`` observations of ``env_id`` under random actions, and the env's own step
    time in microseconds (resets included)."""
    import gymnasium as gym
    env = gym.make(env_id)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    actions = [env.action_space.sample() for _ in range(n)]
    observations = []
    start = time.perf_counter()
    for a in actions:
        observations.append(obs)
        obs, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            obs, _ = env.reset()
    env_us = (time.perf_counter() - start) / n * 1e6
    env.close()
    return observations, env_us


def load_core(algo, ref=None):
    """``spinup.algos.<algo>.core``, or the same file of another checkout ``ref``."""
    if ref is None:
        return importlib.import_module(f"spinup.algos.{algo}.core")
    path = Path(ref) / "spinup" / "algos" / algo / "core.py"
    spec = importlib.util.spec_from_file_location(f"ref_{algo}_core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def acting_call(algo, env_id, ref=None):
    """The algorithm's per-step acting call, ``f(numpy obs) -> numpy action``
    (with the core module of checkout ``ref`` when given)."""
    import gymnasium as gym
    import numpy as np
    import torch
    env = gym.make(env_id)
    algo = ALGO_OF.get(algo, algo)
    core = load_core(algo, ref)
    if algo in ON_POLICY:
        ac = core.MLPActorCritic(env.observation_space, env.action_space)
        return lambda o: ac.step(torch.as_tensor(o, dtype=torch.float32))
    if algo == "dqn":
        q = core.MLPQFunction(env.observation_space, env.action_space)
        return lambda o: q.act(torch.as_tensor(o, dtype=torch.float32)).item()
    ac = core.MLPActorCritic(env.observation_space, env.action_space)
    act_dim = env.action_space.shape[0]
    if algo == "sac":
        def sac_act(o):
            with torch.no_grad():
                a, _ = ac.pi(torch.as_tensor(o, dtype=torch.float32), False, False)
            return a.numpy()
        return sac_act

    def noisy_act(o):  # DDPG / TD3: mu(s) plus Gaussian noise, clipped
        with torch.no_grad():
            a = ac.pi(torch.as_tensor(o, dtype=torch.float32)).numpy()
        a += 0.1 * np.random.randn(act_dim).astype(np.float32)
        return np.minimum(np.maximum(a, -1.0), 1.0)
    return noisy_act


def acting_us(algo, observations, repeats, ref=None, clock=time.perf_counter):
    """Median over ``repeats`` of the microseconds per acting call, and the same for
    checkout ``ref`` (``nan`` without one), the two timed in turn with ``clock``."""
    import numpy as np
    calls = [acting_call(algo, ENV_OF[algo])]
    if ref is not None:
        calls.append(acting_call(algo, ENV_OF[algo], ref))
    batch = BATCH.get(algo, 1)
    if batch > 1:  # one call per group of `batch` observations; time per observation
        observations = [np.stack(observations[i:i + batch])
                        for i in range(0, len(observations) - batch + 1, batch)]
    for act in calls:
        for o in observations[:200]:  # warm-up
            act(o)
    times = [[] for _ in calls]
    for _ in range(repeats):
        for act, spent in zip(calls, times):
            start = clock()
            for o in observations:
                act(o)
            spent.append((clock() - start) / (len(observations) * batch) * 1e6)
    medians = [statistics.median(spent) for spent in times]
    return medians[0], (medians[1] if ref is not None else float("nan"))


def epoch_us(algo):
    """Median microseconds per env step of whole epochs (the first left out)."""
    import gymnasium as gym
    import numpy as np
    import pandas as pd

    import spinup
    kwargs = EPOCH_KWARGS[algo]
    with tempfile.TemporaryDirectory() as out, open(os.devnull, "w") as quiet:
        with contextlib.redirect_stdout(quiet):  # keep the table readable
            getattr(spinup, ALGO_OF.get(algo, algo))(lambda: gym.make(ENV_OF[algo]), seed=0,
                                  logger_kwargs=dict(output_dir=out), **kwargs)
        elapsed = pd.read_csv(Path(out) / "progress.txt", sep="\t")["Time"].to_numpy()
    per_epoch = np.diff(elapsed)
    return float(np.median(per_epoch)) / kwargs["steps_per_epoch"] * 1e6


def _checkout(text):
    """A folder holding another checkout's ``spinup/algos``."""
    _cli.folder(text)
    if not os.path.isdir(os.path.join(text, "spinup", "algos")):
        raise argparse.ArgumentTypeError(f"{text}: no spinup/algos/ in it (not a checkout)")
    return text


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.splitlines()[0])
    parser.add_argument("--algos", nargs="+", default=list(ENV_OF), choices=list(ENV_OF),
                        help="the rows to measure")
    parser.add_argument("--steps", type=_cli.positive, default=5000,
                        help="acting calls per timing")
    parser.add_argument("--repeats", type=_cli.positive, default=5,
                        help="timings per algorithm")
    parser.add_argument("--no-epoch", action="store_true", help="skip the whole-epoch runs")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the acting calls in CPU time of this process instead of "
                        "wall time (less sensitive to other jobs on a shared machine)")
    parser.add_argument("--ref", type=_checkout,
                        help="another checkout (e.g. the code before a change) whose "
                        "acting calls are timed in turn with this one's (column 'ref us')")
    args = parser.parse_args(argv)
    if "ppo8" in args.algos and args.steps < BATCH["ppo8"]:
        parser.error(f"--steps {args.steps}: ppo8 acts on {BATCH['ppo8']} observations at "
                     "once; give at least that many")
    import gymnasium as gym
    import torch
    torch.set_num_threads(1)
    env_cache = {}
    print(f"torch {torch.__version__}, gymnasium {gym.__version__}, 1 torch thread, acting "
          f"in {'CPU' if args.cpu_time else 'wall'} time, load average {os.getloadavg()[0]:.2f}")
    print(f"{'algo':6s} {'env':12s} {'env us':>8s} {'acting us':>10s} {'epoch us':>9s}"
          + (f" {'ref us':>8s} {'speed-up':>8s}" if args.ref else ""))
    for algo in args.algos:
        env_id = ENV_OF[algo]
        if env_id not in env_cache:
            env_cache[env_id] = record_observations(env_id, args.steps)
        observations, env_step = env_cache[env_id]
        clock = time.process_time if args.cpu_time else time.perf_counter
        acting, ref = acting_us(algo, observations, args.repeats, args.ref, clock)
        epoch = float("nan") if args.no_epoch else epoch_us(algo)
        line = f"{algo:6s} {env_id:12s} {env_step:8.1f} {acting:10.1f} {epoch:9.1f}"
        if args.ref:
            line += f" {ref:8.1f} {ref / acting:7.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
