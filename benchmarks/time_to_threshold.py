"""How long does each library take to solve a task? Env steps and seconds to a return threshold.

Protocol (the same for every library, so only the learner differs):

* The training env is wrapped in a step counter. Every ``EVAL_EVERY`` (2000) env steps
  of training, the current policy plays ``EVAL_EPISODES`` (10) episodes on a separate
  env, acting deterministically (mean action / greedy action), with reset seeds
  10000..10009. The evaluation's wall-clock time counts.
* The run stops at the first evaluation whose mean return is >= the case's
  threshold: its result is (env steps, seconds). A run that reaches the case's
  step budget, or the library's own end of training, is "not solved".
* Seconds are measured from just before the agent is built (imports excluded) to
  the stop. Each run is a fresh subprocess with ``OMP_NUM_THREADS=1`` and
  ``torch.set_num_threads(1)``.
* The runs of all (case, library, seed) triples are interleaved in one shuffled
  order (fixed by ``--order-seed``), so that a slow period of the machine does not
  fall on one library only.

Libraries (``--libs``):

``spinup``         spinup with the spec's defaults (``epochs`` included).
``spinup_preset``  spinup with ``spinup/presets/<algo>_<Env>.json``.
``spinup_batched`` spinup with the settings :data:`BATCHED` on the batched task
                   ``spinup/<Env>`` (``num_envs`` copies in one tensor program); the
                   evaluation runs at the first batch step that passes each multiple of
                   ``EVAL_EVERY`` env steps.
``sb3``            Stable-Baselines3 with RL Zoo's hyperparameters for the env
                   (``hyperparams/{ppo,dqn,sac}.yml``), trained for the Zoo's
                   ``n_timesteps`` so that its schedules are the Zoo's.
``tianshou``       Tianshou 2.x with the settings of its own test scripts
                   (``test/discrete/test_ppo.py``, ``test/discrete/test_dqn.py``,
                   ``test/continuous/test_sac_with_il.py``), without their own
                   test collectors (this protocol evaluates instead).

Examples::

    python benchmarks/time_to_threshold.py --dry-run
    python benchmarks/time_to_threshold.py --cases ppo_cartpole --libs spinup_preset sb3 --seeds 0 1 2
    python benchmarks/time_to_threshold.py --csv /tmp/ttt.csv      # everything, 3 seeds
    python benchmarks/time_to_threshold.py --jobs 2 --csv /tmp/ttt.csv   # on 2 idle cores

One result line is printed per run and appended to the CSV (``--csv``, by default a file
in the system's temp folder); a table of medians and ranges follows. The tables of
``docs/benchmarks/time_to_threshold.rst`` were made from such CSV files with
``--summarize``; this script writes nothing under ``docs/``.
"""
import argparse
import contextlib
import csv
import importlib.util
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Runs from any folder, its workers too; this folder leaves the path (its mujoco.py would
# hide the mujoco package).
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

EVAL_EVERY = 2000
EVAL_EPISODES = 10
EVAL_SEED = 10_000

#: case -> (spinup algorithm, env id, threshold, step budget)
CASES = {
    "ppo_cartpole": ("ppo", "CartPole-v1", 475.0, 150_000),
    "dqn_cartpole": ("dqn", "CartPole-v1", 475.0, 150_000),
    "sac_pendulum": ("sac", "Pendulum-v1", -250.0, 40_000),
    # the thresholds of issue 55 (docs/benchmarks/parallel.rst)
    "ppo_cartpole500": ("ppo", "CartPole-v1", 500.0, 300_000),
    "dqn_cartpole500": ("dqn", "CartPole-v1", 500.0, 300_000),
    "sac_pendulum200": ("sac", "Pendulum-v1", -200.0, 60_000),
}
LIBS = ["spinup", "spinup_preset", "spinup_batched", "sb3", "tianshou"]

#: algorithm -> what ``spinup_batched`` changes in the preset: ``num_envs`` copies of the
#: batched task share the epoch's steps; everything else (the updates per env step
#: included) is the preset's (docs/benchmarks/parallel.rst).
BATCHED = {
    "ppo": dict(num_envs=16, steps_per_epoch=2048),
    "sac": dict(num_envs=8),
    "dqn": dict(num_envs=8),
}

#: Rough seconds per run on one idle core, for --dry-run: the issue's idle measurements
#: where there are some, else the shared-machine trial runs divided by about 3.
ESTIMATE = {
    ("ppo_cartpole", "spinup"): 25, ("ppo_cartpole", "spinup_preset"): 8,
    ("ppo_cartpole", "sb3"): 13, ("ppo_cartpole", "tianshou"): 25,
    ("dqn_cartpole", "spinup"): 50, ("dqn_cartpole", "spinup_preset"): 12,
    ("dqn_cartpole", "sb3"): 50, ("dqn_cartpole", "tianshou"): 100,
    ("sac_pendulum", "spinup"): 27, ("sac_pendulum", "spinup_preset"): 5,
    ("sac_pendulum", "sb3"): 35, ("sac_pendulum", "tianshou"): 25,
}
RUN_TIMEOUT = 900  # seconds; a run still going is killed and counted as not solved


# ---------------------------------------------------------------------------
# One run (inside the worker subprocess)
# ---------------------------------------------------------------------------

class _Stop(Exception):
    """Raised from inside the training env to end a run (solved or out of budget)."""


class _Run:
    """The shared state of one run: step count, evaluation policy, best mean return."""

    def __init__(self, env_id, threshold, budget):
        self.env_id, self.threshold, self.budget = env_id, threshold, budget
        self.steps, self.best, self.solved = 0, float("-inf"), False
        self.policy = None  # obs -> action, deterministic; set once the agent exists
        self.t0 = None
        self.batched = False  # train on the batched task spinup/<env_id>

    def evaluate(self):
        import gymnasium as gym
        import numpy as np
        env = gym.make(self.env_id)
        returns = []
        for episode in range(EVAL_EPISODES):
            obs, _ = env.reset(seed=EVAL_SEED + episode)
            total, done = 0.0, False
            while not done:
                obs, rew, term, trunc, _ = env.step(self.policy(obs))
                total += float(rew)
                done = term or trunc
            returns.append(total)
        env.close()
        mean = float(np.mean(returns))
        self.best = max(self.best, mean)
        if mean >= self.threshold:
            self.solved = True
            raise _Stop()

    def counted(self, env):
        """Wrap ``env`` so that its steps count, trigger evaluations and end the run."""
        import gymnasium as gym
        run = self

        class Counted(gym.Wrapper):
            def step(self, action):
                out = self.env.step(action)
                run.steps += 1
                if run.steps % EVAL_EVERY == 0 and run.policy is not None:
                    run.evaluate()
                if run.steps >= run.budget:
                    raise _Stop()
                return out

        return Counted(env)

    def counted_batch(self, envs):
        """:meth:`counted` for a batched task: a batch step counts its ``num_envs`` steps."""
        import gymnasium as gym
        run = self

        class CountedBatch(gym.vector.VectorWrapper):
            def step(self, actions):
                out = self.env.step(actions)
                before, run.steps = run.steps, run.steps + self.num_envs
                if run.steps // EVAL_EVERY > before // EVAL_EVERY and run.policy is not None:
                    run.evaluate()
                if run.steps >= run.budget:
                    raise _Stop()
                return out

        return CountedBatch(envs)


def _spinup(run, case, seed, kwargs):
    import torch
    import gymnasium as gym
    import spinup
    from spinup.utils import logx

    algo = CASES[case][0]
    original = logx.EpochLogger.setup_pytorch_saver

    def grab(self, module, *args, **kw):  # the actor-critic passes through here once
        def policy(obs):
            with torch.no_grad():
                return module.act(torch.as_tensor(obs, dtype=torch.float32), deterministic=True)
        run.policy = policy
        return original(self, module, *args, **kw)

    logx.EpochLogger.setup_pytorch_saver = grab
    made = []

    def env_fn():  # the first env made is the training env; later ones (test envs) are plain
        made.append(None)
        if kwargs.get("num_envs", 1) > 1 or run.batched:
            import spinup.envs  # noqa: F401
            envs = gym.make_vec(f"spinup/{run.env_id}", num_envs=kwargs.get("num_envs", 1))
            return run.counted_batch(envs) if len(made) == 1 else envs
        env = gym.make(run.env_id)
        return run.counted(env) if len(made) == 1 else env

    out_dir = tempfile.mkdtemp(prefix=f"ttt_{case}_")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run.t0 = time.perf_counter()
            getattr(spinup, algo)(env_fn, seed=seed, logger_kwargs=dict(output_dir=out_dir),
                                  **kwargs)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def _sb3(run, case, seed):
    """RL Zoo hyperparameters (rl-baselines3-zoo, hyperparams/{ppo,dqn,sac}.yml)."""
    import gymnasium as gym
    from stable_baselines3 import DQN, PPO, SAC
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    class Hook(BaseCallback):
        def _on_training_start(self):
            model = self.model
            run.policy = lambda obs: model.predict(obs, deterministic=True)[0]

        def _on_step(self):
            return True

    def linear(start):
        return lambda progress_remaining: progress_remaining * start

    run.t0 = time.perf_counter()
    if case.startswith("ppo_cartpole"):  # n_timesteps 1e5
        venv = make_vec_env(lambda: run.counted(gym.make(run.env_id)), n_envs=8, seed=seed)
        model = PPO("MlpPolicy", venv, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98,
                    n_epochs=20, ent_coef=0.0, learning_rate=linear(1e-3),
                    clip_range=linear(0.2), seed=seed, device="cpu")
        total = 100_000
    elif case.startswith("dqn_cartpole"):  # n_timesteps 5e4
        model = DQN("MlpPolicy", run.counted(gym.make(run.env_id)), learning_rate=2.3e-3,
                    batch_size=64, buffer_size=100_000, learning_starts=1000, gamma=0.99,
                    target_update_interval=10, train_freq=256, gradient_steps=128,
                    exploration_fraction=0.16, exploration_final_eps=0.04,
                    policy_kwargs=dict(net_arch=[256, 256]), seed=seed, device="cpu")
        total = 50_000
    else:  # sac_pendulum, n_timesteps 2e4
        model = SAC("MlpPolicy", run.counted(gym.make(run.env_id)), learning_rate=1e-3,
                    seed=seed, device="cpu")
        total = 20_000
    model.learn(total, callback=Hook())


def _tianshou(run, case, seed):
    """Settings of Tianshou's own test scripts for these envs (see the module docstring)."""
    import gymnasium as gym
    import numpy as np
    import torch
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams, OnPolicyTrainerParams
    from tianshou.utils.net.common import Net

    np.random.seed(seed)
    torch.manual_seed(seed)
    probe = gym.make(run.env_id)
    obs_shape = probe.observation_space.shape
    big = 10 ** 9

    def envs(n):
        venv = DummyVectorEnv([lambda: run.counted(gym.make(run.env_id)) for _ in range(n)])
        venv.seed(seed)
        return venv

    run.t0 = time.perf_counter()
    if case.startswith("ppo_cartpole"):  # test/discrete/test_ppo.py
        from tianshou.algorithm import PPO
        from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
        from tianshou.utils.net.common import ActorCritic
        from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic
        net = Net(state_shape=obs_shape, hidden_sizes=[64, 64])
        actor = DiscreteActor(preprocess_net=net, action_shape=probe.action_space.n)
        critic = DiscreteCritic(preprocess_net=net)
        for m in ActorCritic(actor, critic).modules():
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.orthogonal_(m.weight)
                torch.nn.init.zeros_(m.bias)
        policy = DiscreteActorPolicy(actor=actor, dist_fn=torch.distributions.Categorical,
                                     action_space=probe.action_space, deterministic_eval=True)
        algorithm = PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=3e-4),
                        gamma=0.99, max_grad_norm=0.5, eps_clip=0.2, vf_coef=0.5, ent_coef=0.0,
                        gae_lambda=0.95, return_scaling=False, advantage_normalization=False,
                        recompute_advantage=False, dual_clip=None, value_clip=False)
        train = envs(20)
        collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(20_000, 20))
        params = OnPolicyTrainerParams(
            training_collector=collector, max_epochs=big, epoch_num_steps=50_000,
            collection_step_num_env_steps=2000, update_step_num_repetitions=10, batch_size=64,
            verbose=False, show_progress=False)
    elif case.startswith("dqn_cartpole"):  # test/discrete/test_dqn.py
        from tianshou.algorithm import DQN
        from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
        net = Net(state_shape=obs_shape, action_shape=probe.action_space.n,
                  hidden_sizes=[128, 128, 128, 128])
        policy = DiscreteQLearningPolicy(model=net, action_space=probe.action_space,
                                         eps_training=0.1, eps_inference=0.0)
        algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9,
                        n_step_return_horizon=3, target_update_freq=320)
        train = envs(10)
        collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(20_000, 10),
                                            exploration_noise=True)

        def training_fn(epoch, env_step):  # the script's epsilon schedule
            if env_step <= 10_000:
                policy.set_eps_training(0.1)
            elif env_step <= 50_000:
                policy.set_eps_training(0.1 - (env_step - 10_000) / 40_000 * 0.09)
            else:
                policy.set_eps_training(0.01)

        params = OffPolicyTrainerParams(
            training_collector=collector, max_epochs=big, epoch_num_steps=10_000,
            collection_step_num_env_steps=10, update_step_num_gradient_steps_per_sample=0.1,
            batch_size=64, training_fn=training_fn, verbose=False, show_progress=False)
        collector.reset()
        collector.collect(n_step=64 * 10)
    else:  # sac_pendulum: test/continuous/test_sac_with_il.py (the SAC part)
        from tianshou.algorithm import SAC
        from tianshou.algorithm.modelfree.sac import AutoAlpha, SACPolicy
        from tianshou.utils.net.continuous import ContinuousActorProbabilistic, ContinuousCritic
        act_shape = probe.action_space.shape
        actor = ContinuousActorProbabilistic(
            preprocess_net=Net(state_shape=obs_shape, hidden_sizes=[128, 128]),
            action_shape=act_shape, unbounded=True)

        def critic():
            return ContinuousCritic(preprocess_net=Net(
                state_shape=obs_shape, action_shape=act_shape, hidden_sizes=[128, 128],
                concat=True))

        alpha = AutoAlpha(-float(np.prod(act_shape)), 0.0, AdamOptimizerFactory(lr=3e-4))
        policy = SACPolicy(actor=actor, action_space=probe.action_space)
        algorithm = SAC(policy=policy, policy_optim=AdamOptimizerFactory(lr=1e-3),
                        critic=critic(), critic_optim=AdamOptimizerFactory(lr=1e-3),
                        critic2=critic(), critic2_optim=AdamOptimizerFactory(lr=1e-3),
                        tau=0.005, gamma=0.99, alpha=alpha, n_step_return_horizon=3)
        train = envs(10)
        collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(20_000, 10),
                                            exploration_noise=True)
        params = OffPolicyTrainerParams(
            training_collector=collector, max_epochs=big, epoch_num_steps=24_000,
            collection_step_num_env_steps=10, update_step_num_gradient_steps_per_sample=0.1,
            batch_size=128, verbose=False, show_progress=False)

    def act(obs):  # deterministic: mode of the distribution / greedy, outside a training step
        was = policy.is_within_training_step
        policy.is_within_training_step = False
        try:
            with torch.no_grad():
                return policy.compute_action(obs)
        finally:
            policy.is_within_training_step = was

    run.policy = act
    algorithm.run_training(params)


def run_one(case, lib, seed, budget=None, kwargs=None):
    """Run one (case, lib, seed) in this process and return its result dict."""
    import torch
    torch.set_num_threads(1)
    algo, env_id, threshold, case_budget = CASES[case]
    run = _Run(env_id, threshold, budget or case_budget)
    try:
        if lib.startswith("spinup"):
            if kwargs is None:
                kwargs = {}
                if lib in ("spinup_preset", "spinup_batched"):
                    from spinup.presets import load_config
                    kwargs = load_config(f"{algo}_{env_id}", algo, flat=False)
                if lib == "spinup_batched":
                    kwargs.update(BATCHED[algo])
            run.batched = lib == "spinup_batched"
            kwargs = {k: v for k, v in kwargs.items() if k != "env_name"}
            _spinup(run, case, seed, kwargs)
        elif lib == "sb3":
            _sb3(run, case, seed)
        elif lib == "tianshou":
            _tianshou(run, case, seed)
        else:
            raise ValueError(f"unknown lib {lib!r}; choose from {LIBS}")
    except _Stop:
        pass
    seconds = time.perf_counter() - run.t0 if run.t0 is not None else float("nan")
    return dict(case=case, lib=lib, seed=seed, solved=run.solved, steps=run.steps,
                seconds=round(seconds, 2), best=round(run.best, 1))


# ---------------------------------------------------------------------------
# The driver: schedule, subprocesses, CSV, summary
# ---------------------------------------------------------------------------

def run_in_subprocess(case, lib, seed, budget=None, kwargs=None, timeout=RUN_TIMEOUT):
    """Run one triple in a fresh interpreter with one thread; return the result dict."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", case, lib, str(seed)]
    if budget:
        cmd += ["--budget", str(budget)]
    if kwargs is not None:
        cmd += ["--kwargs", json.dumps(kwargs)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return dict(case=case, lib=lib, seed=seed, solved=False, steps=-1, seconds=timeout,
                    best=float("nan"), error="timeout")
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return dict(case=case, lib=lib, seed=seed, solved=False, steps=-1, seconds=float("nan"),
                best=float("nan"), error=err)


def schedule(cases, libs, seeds, order_seed):
    """All (case, lib, seed) triples, seed-major, shuffled within each seed round."""
    rng = random.Random(order_seed)
    order = []
    for seed in seeds:
        block = [(c, l, seed) for c in cases for l in libs]
        rng.shuffle(block)
        order += block
    return order


def _median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def summarize(results):
    """Lines of a table: per (case, lib), median and range of steps and seconds.

    An unsolved run counts as infinitely slow in the median (shown as ``-`` when half
    or more of the runs did not solve); the ranges are over the solved runs.
    """
    lines = [f"{'case':14s} {'lib':14s} {'solved':>6s} {'median steps':>12s} "
             f"{'range':>15s} {'median s':>9s} {'range s':>13s}"]
    keys = []
    for r in results:
        if (r["case"], r["lib"]) not in keys:
            keys.append((r["case"], r["lib"]))
    for case, lib in sorted(keys):
        rows = [r for r in results if r["case"] == case and r["lib"] == lib]
        inf = float("inf")
        steps = [r["steps"] if r["solved"] else inf for r in rows]
        secs = [r["seconds"] if r["solved"] else inf for r in rows]
        solved = sum(r["solved"] for r in rows)

        def fmt(v, digits=0):
            return "-" if v == inf else (f"{v / 1000:.0f}k" if digits == 0 else f"{v:.1f}")
        ok_steps = [v for v in steps if v != inf] or [inf]
        ok_secs = [v for v in secs if v != inf] or [inf]
        s_range = "-" if ok_steps == [inf] else f"{fmt(min(ok_steps))}-{fmt(max(ok_steps))}"
        t_range = "-" if ok_secs == [inf] else f"{fmt(min(ok_secs), 1)}-{fmt(max(ok_secs), 1)}"
        lines.append(f"{case:14s} {lib:14s} {solved:>3d}/{len(rows):<2d} "
                     f"{fmt(_median(steps)):>12s} {s_range:>15s} "
                     f"{fmt(_median(secs), 1):>9s} {t_range:>13s}")
    return lines


def rst_table(results):
    """The summary as a reStructuredText list-table: one row per case, one column per lib.

    A cell reads ``median steps / median s (range)``; unsolved runs are counted in the
    cell as ``k/n solved``.
    """
    cases = sorted({r["case"] for r in results})
    libs = [l for l in LIBS if any(r["lib"] == l for r in results)]
    lines = [".. list-table::", "   :header-rows: 1", "", "   * - case"]
    lines += [f"     - {lib}" for lib in libs]
    inf = float("inf")
    for case in cases:
        lines.append(f"   * - {case}")
        for lib in libs:
            rows = [r for r in results if r["case"] == case and r["lib"] == lib]
            if not rows:
                lines.append("     - (not run)")
                continue
            steps = [r["steps"] if r["solved"] else inf for r in rows]
            secs = [r["seconds"] if r["solved"] else inf for r in rows]
            solved = sum(r["solved"] for r in rows)
            ms, mt = _median(steps), _median(secs)
            ok = [r for r in rows if r["solved"]]
            if ms == inf:
                cell = "not solved"
            else:
                cell = (f"{ms / 1000:.0f}k steps ({min(r['steps'] for r in ok) / 1000:.0f}k-"
                        f"{max(r['steps'] for r in ok) / 1000:.0f}k), {mt:.1f} s "
                        f"({min(r['seconds'] for r in ok):.1f}-"
                        f"{max(r['seconds'] for r in ok):.1f})")
            if solved < len(rows):
                cell += f"; {solved}/{len(rows)} solved"
            lines.append(f"     - {cell}")
    return lines


def versions():
    out = {}
    for name in ("spinup", "torch", "gymnasium", "stable_baselines3", "tianshou", "numpy"):
        try:
            from importlib.metadata import version
            out[name] = version(name.replace("_", "-"))
        except Exception:
            out[name] = "not installed"
    return out


#: the module each library needs (spinup's own are always there)
LIB_MODULES = {"sb3": "stable_baselines3", "tianshou": "tianshou"}


def _csv_file(text):
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    return text


def main(argv=None):
    p = _cli.parser(__file__, __doc__.split("\n")[0])
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES),
                   help="the tasks and thresholds")
    p.add_argument("--libs", nargs="+", default=LIBS, choices=LIBS, help="the learners")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="the seeds")
    p.add_argument("--order-seed", type=int, default=0, help="seed of the run order shuffle")
    p.add_argument("--csv", default=os.path.join(_cli.scratch("time_to_threshold"),
                                                 "time_to_threshold.csv"),
                   help="results file (appended)")
    p.add_argument("--dry-run", action="store_true", help="print the order and an estimate")
    p.add_argument("--jobs", type=_cli.positive, default=1,
                   help="runs at the same time (one core each: at most the idle cores)")
    p.add_argument("--budget", type=_cli.positive, default=None,
                   help="env steps per run (default: the case's budget: "
                        + ", ".join(f"{case} {c[3]}" for case, c in CASES.items()) + ")")
    p.add_argument("--summarize", nargs="+", metavar="CSV", type=_csv_file,
                   help="only print the summary (text and reST) of earlier CSV files")
    p.add_argument("--worker", nargs=3, metavar=("CASE", "LIB", "SEED"), help=argparse.SUPPRESS)
    p.add_argument("--kwargs", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        case, lib, seed = args.worker
        kwargs = None
        if args.kwargs is not None:
            from spinup.presets import resolve_kwargs
            kwargs = resolve_kwargs(json.loads(args.kwargs), CASES[case][0])
        print("RESULT " + json.dumps(run_one(case, lib, int(seed), args.budget, kwargs)),
              flush=True)
        return 0

    if args.summarize:
        results = []
        for path in args.summarize:
            with open(path, newline="") as f:
                try:
                    for row in csv.DictReader(f):
                        results.append(dict(row, seed=int(row["seed"]), steps=int(row["steps"]),
                                            seconds=float(row["seconds"]),
                                            solved=row["solved"] == "True"))
                except (KeyError, TypeError, ValueError):
                    p.error(f"--summarize {path}: not a results file of this script")
        print("\n".join(summarize(results)))
        print()
        print("\n".join(rst_table(results)))
        return 0

    missing = [lib for lib in args.libs if lib in LIB_MODULES
               and importlib.util.find_spec(LIB_MODULES[lib]) is None]
    if missing and not args.dry_run:
        p.error(f"--libs {' '.join(missing)}: {', '.join(LIB_MODULES[m] for m in missing)} "
                "not installed here (pip install -e '.[bench]'; or leave them out of --libs)")
    order = schedule(args.cases, args.libs, args.seeds, args.order_seed)
    estimate = sum(ESTIMATE.get((c, l), 60) for c, l, _ in order) / args.jobs
    print(f"# {len(order)} runs, {args.jobs} at a time, estimated {estimate / 60:.0f} min on "
          f"an idle machine; "
          f"versions: {versions()}", flush=True)
    if args.dry_run:
        for c, l, s in order:
            print(f"{c} {l} {s}  ~{ESTIMATE.get((c, l), 60)} s")
        return 0

    fields = ["case", "lib", "seed", "solved", "steps", "seconds", "best", "error"]
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    new = not os.path.exists(args.csv)
    results = []
    with open(args.csv, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each job one subprocess
            pending = [pool.submit(run_in_subprocess, *triple, args.budget)
                       for triple in order]
            done = (fut.result() for fut in pending)  # in schedule order
            for r in done:
                case, lib, seed = r["case"], r["lib"], r["seed"]
                results.append(r)
                writer.writerow(r)
                f.flush()
                status = "solved" if r["solved"] else "NOT solved " + r.get("error", "")
                print(f"{case} {lib} seed={seed} steps={r['steps']} seconds={r['seconds']} "
                      f"best={r['best']} {status}", flush=True)
    print("\n".join(summarize(results)))
    print(f"runs appended to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
