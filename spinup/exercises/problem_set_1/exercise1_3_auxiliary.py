"""Exercise 1.3 support code (no need to edit): command line, checks and the run."""
import argparse
import os.path as osp
import time

import numpy as np

from spinup.exercises.common import finish

HOLES = ("target_actions", "bellman_backup", "q_loss", "pi_loss", "policy_update_due")

#: Anecdotal scores after 10 epochs (spec), for the summary.
BARS = {"HalfCheetah": (300, "go over 300"), "InvertedPendulum": (150, "max out at 150")}


def main(g, argv=None):
    """``g``: the globals of ``exercise1_3`` (its functions and ``td3``)."""
    parser = argparse.ArgumentParser(description="Exercise 1.3: TD3 computations")
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exp_name", default="ex13-td3")
    parser.add_argument("--output_dir", default=None,
                        help="log directory (default /tmp/experiments/<exp_name>_<time>)")
    parser.add_argument("--use_soln", action="store_true", help="run spinup's TD3 instead")
    parser.add_argument("--use_soln_functions", action="store_true",
                        help="fill the holes with the reference solution and run this file's "
                        "TD3 (checks the given code)")
    parser.add_argument("--check_only", action="store_true",
                        help="only check the five functions, do not train")
    # The spec's setting is 10 epochs of 4000 steps; these shrink it for a smoke run.
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps_per_epoch", type=int, default=4000)
    parser.add_argument("--start_steps", type=int, default=10000)
    parser.add_argument("--update_after", type=int, default=1000)
    parser.add_argument("--num_test_episodes", type=int, default=10)
    args = parser.parse_args(argv)

    import gymnasium as gym
    from spinup.exercises.checks import check_exercise1_3
    if args.use_soln_functions or args.use_soln:
        from spinup.exercises.problem_set_1_solutions import exercise1_3_soln as soln
        for name in HOLES:
            g[name] = getattr(soln, name)
    ok, _ = check_exercise1_3(*[g[name] for name in HOLES])
    if not ok:
        finish(False, "Fix the failures above before training (no TD3 run was started).")
    if args.check_only:
        finish(True, "The five TD3 functions pass their checks (training skipped).")

    from spinup.algos.td3.core import MLPActorCritic
    output_dir = args.output_dir or osp.join("/tmp/experiments", "%s_%s_%d" % (
        args.exp_name, args.env, int(time.time())))
    kwargs = dict(env_fn=lambda: gym.make(args.env), actor_critic=MLPActorCritic,
                  ac_kwargs=dict(hidden_sizes=[128, 128]), max_ep_len=150, seed=args.seed,
                  epochs=args.epochs, steps_per_epoch=args.steps_per_epoch,
                  start_steps=args.start_steps, update_after=args.update_after,
                  num_test_episodes=args.num_test_episodes,
                  logger_kwargs=dict(output_dir=output_dir, exp_name=args.exp_name))
    if args.use_soln:
        from spinup.algos.td3.td3 import td3
        print("\nRunning spinup's TD3 (--use_soln)\n")
    else:
        td3 = g["td3"]
    start = time.time()
    td3(**kwargs)
    summarize(output_dir, args.env, time.time() - start)


def summarize(output_dir, env, seconds):
    import pandas as pd
    prog = pd.read_table(osp.join(output_dir, "progress.txt"))
    test = np.asarray(prog["AverageTestEpRet"])
    print("\nAverageTestEpRet per epoch: " + ", ".join("%.1f" % v for v in test))
    print("Final %.1f, best %.1f after %d env steps (%.0f s). Logs: %s"
          % (test[-1], test.max(), prog["TotalEnvInteracts"].iloc[-1], seconds, output_dir))
    for key, (bar, text) in BARS.items():
        if env.startswith(key):
            print("Anecdotally, within 10 epochs the score in %s should %s: %s."
                  % (key, text, "reached" if test.max() >= bar - 1e-6 else "not reached"))
