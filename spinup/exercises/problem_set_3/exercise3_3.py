"""Exercise 3.3: Double-DQN Targets with n-Step Returns.

DQN regresses Q(s_t, a_t) to a target y_t. Write the two halves of the target used by
``spinup.dqn`` with ``double=True, n_step=n``:

1. ``double_dqn_next_values``: the value of a next state s' under Double DQN, where
   the online network *selects* the action and the target network *evaluates* it:
   Q_targ(s', argmax_a Q(s', a)).

2. ``n_step_targets``: for a stretch of experience in time order (it may hold several
   episodes), the n-step targets

       y_t = sum_{k=0}^{m-1} gamma^k r_{t+k} + gamma^m (1 - terminated_{t+m-1}) v_{t+m-1}

   where ``v_j`` is the next-state value of transition j (from part 1) and ``m <= n``
   is the number of rewards actually available: the sum never crosses the end of an
   episode (``ends[j]``: transition j was the last of its episode, because the episode
   terminated, was truncated by a time limit, or hit ``max_ep_len``) nor the end of
   the data. Only a true terminal state (``terminated``) stops the bootstrap: after a
   truncation the next state is a real state whose value still counts.

Run this file to check your work::

    python -m spinup.exercises.problem_set_3.exercise3_3
"""
import torch


def double_dqn_next_values(q_online_next, q_targ_next):
    """
    Args:
        q_online_next: Tensor [batch, n_actions], Q(s', .) from the online network.
        q_targ_next: Tensor [batch, n_actions], Q_targ(s', .) from the target network.

    Returns:
        Tensor [batch]: Q_targ(s', argmax_a Q(s', a)).
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


def n_step_targets(rews, terminated, ends, next_vals, gamma, n):
    """
    Args:
        rews: Tensor [T], rewards r_0 ... r_{T-1} (time order).
        terminated: Tensor [T] of 0./1., 1 if s'_t is a terminal state.
        ends: Tensor [T] of 0./1., 1 if transition t is the last of its episode
            (terminated or truncated); terminated implies ends.
        next_vals: Tensor [T], v_t = the bootstrap value of s'_t.
        gamma (float): discount factor.
        n (int): number of reward steps (n = 1: the usual one-step target).

    Returns:
        Tensor [T]: the targets y_0 ... y_{T-1}.
    """
    #######################
    #                     #
    #   YOUR CODE HERE    #
    #                     #
    #######################
    pass


if __name__ == "__main__":
    import argparse
    from spinup.exercises.checks import check_exercise3_3
    from spinup.exercises.common import finish
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_soln", action="store_true")
    if parser.parse_args().use_soln:
        from spinup.exercises.problem_set_3_solutions.exercise3_3_soln import (
            double_dqn_next_values, n_step_targets)
    finish(check_exercise3_3(double_dqn_next_values, n_step_targets)[0])
