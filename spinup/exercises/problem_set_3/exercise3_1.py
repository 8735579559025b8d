"""Exercise 3.1: GAE-Lambda Advantages and Rewards-to-Go.

When a trajectory ends (or is cut off), PPO, VPG and TRPO turn its rewards and value
estimates into two arrays: the rewards-to-go (targets for the value function) and the
GAE-lambda advantages (weights for the policy gradient). Write both, for one
trajectory of ``T`` steps, in numpy.

``last_val`` is the value of the state after the last step: 0 when the episode really
ended (terminated), ``V(s_T)`` when it was cut off (time limit, ``max_ep_len`` or the
end of the epoch), so the rewards that would have come next are bootstrapped.

Run this file to check your work::

    python -m spinup.exercises.problem_set_3.exercise3_1
"""
import numpy as np


def rewards_to_go(rews, last_val, gamma):
    """
    Args:
        rews: numpy array [T], rewards r_0 ... r_{T-1}.
        last_val (float): value of the state reached after the last step.
        gamma (float): discount factor.

    Returns:
        numpy array [T]: R_t = sum_{k=t}^{T-1} gamma^(k-t) r_k + gamma^(T-t) last_val.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def gae_advantages(rews, vals, last_val, gamma, lam):
    """
    Args:
        rews: numpy array [T], rewards r_0 ... r_{T-1}.
        vals: numpy array [T], value estimates V(s_0) ... V(s_{T-1}).
        last_val (float): V(s_T) if the trajectory was cut off, 0 if it terminated.
        gamma (float): discount factor.
        lam (float): GAE lambda.

    Returns:
        numpy array [T]: the GAE-lambda advantages
        A_t = sum_{l=0}^{T-1-t} (gamma * lam)^l delta_{t+l}, with the TD residuals
        delta_t = r_t + gamma V(s_{t+1}) - V(s_t) and V(s_T) = last_val.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


if __name__ == "__main__":
    import argparse
    from spinup.exercises.checks import check_exercise3_1
    from spinup.exercises.common import finish
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_soln", action="store_true")
    if parser.parse_args().use_soln:
        from spinup.exercises.problem_set_3_solutions.exercise3_1_soln import (
            gae_advantages, rewards_to_go)
    finish(check_exercise3_1(rewards_to_go, gae_advantages)[0])
