"""Solution to Exercise 2.2: Silent Bug in DDPG.

The bug
-------
``BuggedMLPQFunction.forward`` returns the network's output as it is, with shape
``[batch, 1]``, instead of squeezing it to ``[batch]`` (the correct version, in
``spinup/algos/ddpg/core.py``, ends with ``torch.squeeze(q, -1)``)::

    def forward(self, obs, act):
        q = self.q(torch.cat([obs, act], dim=-1))
        return torch.squeeze(q, -1)  # Critical to ensure q has right shape.

How it breaks DDPG
------------------
Nothing crashes, because of broadcasting. In the Q-loss

    backup = r + gamma * (1 - d) * q_pi_targ     # r, d: [batch]; q_pi_targ: [batch, 1]
    loss_q = ((q - backup) ** 2).mean()          # q: [batch, 1]

``(1 - d) * q_pi_targ`` broadcasts ``[batch]`` against ``[batch, 1]`` to
``[batch, batch]``: entry ``(i, j)`` is ``r_j + gamma (1 - d_j) Q_targ(s'_i, mu(s'_i))``,
a mix of the reward of transition j with the next state of transition i. ``q - backup``
is again ``[batch, batch]``, so each ``Q(s_i, a_i)`` is regressed to the targets of
*every* transition in the batch: the minimiser is roughly the batch mean of the
rewards plus the discounted value of its own next state. The Q-function therefore
learns almost nothing about which action led to which reward; ``Q(s, a)`` becomes
nearly flat in ``a``, its gradient with respect to ``a`` (the only signal the DDPG
policy gets, via ``pi_loss = -Q(s, mu(s)).mean()``) is mostly noise, and the policy
does not improve. The policy loss itself is unaffected (a mean over ``[batch, 1]`` is
the same number), which is why the code looks like it works.

What the runs show
------------------
The correct DDPG improves quickly; the bugged one stays near the return of a random
or poor policy, over all three seeds (see the plot on the exercises page of the docs).

Bonus: hyperparameters that hide the bug
----------------------------------------
A batch size of 1 makes the broadcast ``[1, 1]``: the bug disappears (at the cost of
very noisy updates). More generally, anything that makes the cross terms matter less
weakens the effect: rewards that do not depend on the action, ``gamma`` close to 0
with nearly constant rewards, or environments so easy that any slight gradient signal
suffices. Shape assertions (``assert q.shape == backup.shape``) catch it at once.
"""
