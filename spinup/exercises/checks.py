"""Automatic checks of the function-level exercises (1.1, 1.3's pieces, 3.1, 3.2, 3.3,
4.1).

Every ``check_exerciseX_Y(...)`` takes the student's functions (4.1: a task class), runs
them on random inputs against the reference solution (and, where one exists, an
independent brute-force or library computation; 4.1 against a per-copy computation in
plain Python only) and returns ``(correct, message)``: ``message``
lists what failed, with hints for the usual mistakes. Starter code that is not filled
in (returns ``None`` or raises ``NotImplementedError``) is reported as such.
"""
import math

import numpy as np
import torch

from spinup.exercises.common import Incorrect, call_student, require, run_checks


def _result(title, checks):
    ok, failures = run_checks(title, checks)
    return ok, "\n".join("- " + f for f in failures)


def _as_tensor(out, name, shape=None):
    require(isinstance(out, torch.Tensor),
            f"{name} should return a torch.Tensor, got {type(out).__name__}")
    if shape is not None:
        require(tuple(out.shape) == tuple(shape),
                f"{name} returned shape {tuple(out.shape)}, expected {tuple(shape)}")
    return out


def _close(a, b, atol=1e-4, rtol=1e-4):
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       atol=atol, rtol=rtol)


# --------------------------------------------------------------------------- 1.1
def check_exercise1_1(gaussian_likelihood):
    """Exercise 1.1: ``gaussian_likelihood(x, mu, log_std)`` against the solution and
    ``torch.distributions.Normal`` on random batches."""
    from spinup.exercises.problem_set_1_solutions import exercise1_1_soln as soln
    name = "gaussian_likelihood"
    gen = torch.Generator().manual_seed(0)

    def batch(b, d, shared_std):
        x = torch.randn(b, d, generator=gen)
        mu = torch.randn(b, d, generator=gen)
        log_std = torch.randn(d if shared_std else (b, d), generator=gen) * 0.5
        return x, mu, log_std

    def compare(shared_std):
        for b, d in [(32, 7), (1, 1), (100, 3)]:
            x, mu, log_std = batch(b, d, shared_std)
            out = _as_tensor(call_student(gaussian_likelihood, x, mu, log_std, name=name),
                             name, (b,)).detach()
            want = soln.gaussian_likelihood(x, mu, log_std)
            ref = torch.distributions.Normal(mu, log_std.exp()).log_prob(x).sum(-1)
            require(_close(want, ref), "internal error: solution disagrees with torch")
            if not _close(out, want):
                raise Incorrect(_diagnose_1_1(out, want, x, mu, log_std, d))

    def gradient():
        x, mu, log_std = batch(8, 4, False)
        mu.requires_grad_(True)
        log_std.requires_grad_(True)
        out = call_student(gaussian_likelihood, x, mu, log_std, name=name)
        require(isinstance(out, torch.Tensor) and out.requires_grad,
                "the result carries no gradient: compute it with torch operations on the "
                "input tensors (no numpy, no .detach(), no .item())")
        out.sum().backward()
        mu_ref, ls_ref = mu.detach().clone().requires_grad_(True), \
            log_std.detach().clone().requires_grad_(True)
        soln.gaussian_likelihood(x, mu_ref, ls_ref).sum().backward()
        require(_close(mu.grad, mu_ref.grad) and _close(log_std.grad, ls_ref.grad),
                "gradients with respect to mu / log_std are wrong")

    return _result("Exercise 1.1 (gaussian_likelihood)", [
        ("log-likelihoods match on random batches (log_std per sample)", lambda: compare(False)),
        ("log-likelihoods match with a shared log_std of shape [dim]", lambda: compare(True)),
        ("gradients flow to mu and log_std", gradient),
    ])


def _diagnose_1_1(out, want, x, mu, log_std, d):
    """Name the usual mistakes from the difference between the answer and the truth."""
    diff = (out - want).double()
    k_log2pi = 0.5 * d * np.log(2 * np.pi)
    sum_log_std = log_std.expand_as(x).sum(-1).double()
    hints = [
        (torch.allclose(diff, torch.full_like(diff, k_log2pi), atol=1e-3),
         "the result is too high by k/2 * log(2*pi): you are missing the log(2*pi) term"),
        (torch.allclose(diff, torch.full_like(diff, -k_log2pi), atol=1e-3),
         "the log(2*pi) term is counted twice (it is -k/2 * log(2*pi))"),
        (d > 1 and torch.allclose(diff, torch.full_like(diff, k_log2pi * (1 - 1 / d)),
                                  atol=1e-3),
         "the log(2*pi) term is added once, not once per dimension (-k/2 * log(2*pi))"),
        (torch.allclose(diff, sum_log_std, atol=1e-3),
         "you are missing the -log(sigma) normalisation term"),
        (torch.allclose(out.double(), -want.double(), atol=1e-3),
         "the sign is flipped: a log-likelihood is -0.5 * (...)"),
        (torch.allclose(diff, -sum_log_std, atol=1e-3) or
         torch.allclose(diff, 2 * sum_log_std, atol=1e-3),
         "the log(sigma) term has the wrong factor (it is -sum_i log sigma_i)"),
    ]
    for cond, hint in hints:
        if cond:
            return hint
    return ("values differ from the reference (max abs error %.3g); remember to divide "
            "(x - mu) by sigma = exp(log_std), and to sum over the last dimension"
            % diff.abs().max().item())


# --------------------------------------------------------------------------- 1.3
def check_exercise1_3(target_actions, bellman_backup, q_loss, pi_loss, policy_update_due):
    """Exercise 1.3: the five TD3 computations, on random inputs."""
    from spinup.exercises.problem_set_1_solutions import exercise1_3_soln as soln
    torch.manual_seed(0)

    def smoothing():
        name = "target_actions"
        pi_targ = torch.rand(50, 3) * 2 - 1
        a2 = _as_tensor(call_student(target_actions, pi_targ, 0.0, 0.5, name=name), name,
                        (50, 3))
        require(torch.allclose(a2, pi_targ, atol=1e-6),
                "with target_noise=0 the target actions should equal mu_targ(s')")
        zeros = torch.zeros(100000, 2)
        a2 = call_student(target_actions, zeros, 0.2, 0.5, name=name)
        require(a2.std(0).min() > 0.15 and a2.std(0).max() < 0.25,
                "smoothing noise should be N(0, target_noise^2) for every element (measured "
                "std %s with target_noise=0.2)" % a2.std(0).numpy().round(3))
        require(a2.mean(0).abs().max() < 0.01, "smoothing noise should have mean 0")
        require(not torch.allclose(a2[:, 0], a2[:, 1]) and a2[:, 0].unique().numel() > 1000,
                "draw fresh noise for every element (torch.randn_like), not one number")
        a2 = call_student(target_actions, zeros, 1.0, 0.3, name=name)
        require(a2.abs().max() <= 0.3 + 1e-6,
                "the noise must be clipped to [-noise_clip, noise_clip] (got |noise| up to "
                "%.3f with noise_clip=0.3)" % a2.abs().max())
        require((a2.abs() > 0.3 - 1e-6).float().mean() > 0.5,
                "clip the noise itself (with target_noise=1 most of it hits +-noise_clip)")
        a2 = call_student(target_actions, torch.full((10000, 2), 0.95), 0.2, 0.5, name=name)
        require(a2.max() <= 1.0 + 1e-6,
                "clip the smoothed action to the action range [-1, 1] (got %.3f)" % a2.max())
        require(a2.min() < 0.9, "the noise should also push actions down (mean %.3f)"
                % a2.mean())

    def backup():
        name = "bellman_backup"
        r, q1, q2 = torch.randn(64), torch.randn(64), torch.randn(64)
        d = (torch.rand(64) < 0.3).float()
        y = _as_tensor(call_student(bellman_backup, r, d, q1, q2, 0.9, name=name), name, (64,))
        want = soln.bellman_backup(r, d, q1, q2, 0.9)
        if not torch.allclose(y, want, atol=1e-5):
            for cand, hint in [
                    (r + 0.9 * (1 - d) * torch.max(q1, q2), "use the min of the two target "
                     "Q-values (clipped double-Q), not the max"),
                    (r + 0.9 * (1 - d) * q1, "use min(Q1_targ, Q2_targ), not Q1_targ alone"),
                    (r + 0.9 * (1 - d) * (q1 + q2) / 2, "use min(Q1_targ, Q2_targ), not "
                     "their mean"),
                    (r + 0.9 * torch.min(q1, q2), "do not bootstrap from a terminal state: "
                     "multiply by (1 - d)"),
                    (r + 0.9 * d * torch.min(q1, q2), "(1 - d), not d: bootstrap only when "
                     "the state is not terminal")]:
                if torch.allclose(y, cand, atol=1e-5):
                    raise Incorrect(hint)
            raise Incorrect("y should be r + gamma * (1 - d) * min(Q1_targ, Q2_targ)")

    def qloss():
        name = "q_loss"
        q1, q2 = torch.randn(32, requires_grad=True), torch.randn(32, requires_grad=True)
        b = torch.randn(32)
        loss = call_student(q_loss, q1, q2, b, name=name)
        require(isinstance(loss, torch.Tensor) and loss.dim() == 0,
                "q_loss should return a scalar Tensor (shape ()), got %s"
                % (getattr(loss, "shape", type(loss).__name__),))
        want = soln.q_loss(q1, q2, b)
        if not torch.allclose(loss, want, atol=1e-5):
            if torch.allclose(loss, want / 2, atol=1e-5):
                raise Incorrect("q_loss is the SUM of the two mean squared errors, not their "
                                "mean")
            raise Incorrect("q_loss should be mean((q1 - y)^2) + mean((q2 - y)^2)")
        loss.backward()
        require(q1.grad is not None and q2.grad is not None,
                "q_loss must have gradients with respect to both q1 and q2")

    def piloss():
        name = "pi_loss"
        q = torch.randn(32, requires_grad=True)
        loss = call_student(pi_loss, q, name=name)
        require(isinstance(loss, torch.Tensor) and loss.dim() == 0,
                "pi_loss should return a scalar Tensor")
        if torch.allclose(loss, q.mean(), atol=1e-6):
            raise Incorrect("wrong sign: the optimizer minimises, and the policy should "
                            "maximise Q1(s, mu(s))")
        require(torch.allclose(loss, soln.pi_loss(q), atol=1e-6),
                "pi_loss should be the negative mean of Q1(s, mu(s))")
        require(loss.requires_grad, "pi_loss carries no gradient")

    def delay():
        name = "policy_update_due"
        for d in (1, 2, 3):
            got = [bool(call_student(policy_update_due, t, d, name=name)) for t in range(12)]
            want = [soln.policy_update_due(t, d) for t in range(12)]
            require(got == want, "with policy_delay=%d the policy should be updated at timer "
                    "%s, got %s" % (d, [t for t in range(12) if want[t]],
                                    [t for t in range(12) if got[t]]))

    return _result("Exercise 1.3 (TD3 computations)", [
        ("target policy smoothing (target_actions)", smoothing),
        ("clipped double-Q target (bellman_backup)", backup),
        ("Q-loss (q_loss)", qloss),
        ("policy loss (pi_loss)", piloss),
        ("delayed policy updates (policy_update_due)", delay),
    ])


# --------------------------------------------------------------------------- 3.1
def _brute_rtg(rews, last_val, gamma):
    T = len(rews)
    return np.array([sum(gamma ** (k - t) * rews[k] for k in range(t, T))
                     + gamma ** (T - t) * last_val for t in range(T)])


def _brute_gae(rews, vals, last_val, gamma, lam):
    T = len(rews)
    v = list(vals) + [last_val]
    deltas = [rews[t] + gamma * v[t + 1] - v[t] for t in range(T)]
    return np.array([sum((gamma * lam) ** (l - t) * deltas[l] for l in range(t, T))
                     for t in range(T)])


def check_exercise3_1(rewards_to_go, gae_advantages):
    """Exercise 3.1: rewards-to-go and GAE-lambda against a brute-force double loop."""
    rng = np.random.default_rng(0)
    cases = [(T, last_val, gamma, lam) for T in (1, 2, 7, 60)
             for last_val in (0.0, 3.7) for gamma, lam in ((0.99, 0.95), (0.9, 0.5))]

    def as_array(out, name, T):
        out = np.asarray(out.detach() if hasattr(out, "detach") else out, dtype=np.float64)
        require(out.shape == (T,), f"{name} returned shape {out.shape}, expected ({T},)")
        return out

    def rtg():
        for T, last_val, gamma, _ in cases:
            rews = rng.normal(size=T).astype(np.float32)
            got = as_array(call_student(rewards_to_go, rews.copy(), last_val, gamma,
                                        name="rewards_to_go"), "rewards_to_go", T)
            want = _brute_rtg(rews, last_val, gamma)
            if not _close(got, want):
                if _close(got, _brute_rtg(rews, 0.0, gamma)):
                    raise Incorrect("last_val is ignored: a cut-off trajectory must "
                                    "bootstrap with gamma^(T-t) * last_val")
                if _close(got, _brute_rtg(rews, last_val, 1.0)):
                    raise Incorrect("the rewards are not discounted by gamma")
                if T > 1 and _close(got[:-1], want[1:]):
                    raise Incorrect("off by one: R_t includes r_t itself")
                raise Incorrect("rewards_to_go differs from the definition (T=%d, last_val=%s, "
                                "gamma=%s; max error %.3g)" % (T, last_val, gamma,
                                                               np.abs(got - want).max()))

    def gae():
        for T, last_val, gamma, lam in cases:
            rews = rng.normal(size=T).astype(np.float32)
            vals = rng.normal(size=T).astype(np.float32)
            got = as_array(call_student(gae_advantages, rews.copy(), vals.copy(), last_val,
                                        gamma, lam, name="gae_advantages"), "gae_advantages", T)
            want = _brute_gae(rews, vals, last_val, gamma, lam)
            if not _close(got, want):
                for cand, hint in [
                        (_brute_gae(rews, vals, 0.0, gamma, lam),
                         "last_val is ignored: delta_{T-1} = r_{T-1} + gamma * last_val - "
                         "V(s_{T-1})"),
                        (_brute_gae(rews, vals, last_val, gamma, 1.0),
                         "lambda is ignored: the deltas are discounted by gamma * lam"),
                        (_brute_gae(rews, vals, last_val, 1.0, lam) if gamma != 1 else None,
                         "gamma is missing somewhere (deltas and the sum both use it)"),
                        (_brute_rtg(rews, last_val, gamma) - vals,
                         "this is R_t - V(s_t) (lambda = 1), not GAE-lambda"),
                        (_brute_gae(rews, vals, last_val, lam, gamma),
                         "lambda only discounts the sum of deltas; the deltas use gamma")]:
                    if cand is not None and _close(got, cand):
                        raise Incorrect(hint)
                raise Incorrect("gae_advantages differs from the definition (T=%d, "
                                "last_val=%s, gamma=%s, lam=%s; max error %.3g)"
                                % (T, last_val, gamma, lam, np.abs(got - want).max()))

    def limits():
        rews = rng.normal(size=20)
        vals = rng.normal(size=20)
        a0 = as_array(call_student(gae_advantages, rews, vals, 1.5, 0.99, 0.0,
                                   name="gae_advantages"), "gae_advantages", 20)
        deltas = rews + 0.99 * np.append(vals[1:], 1.5) - vals
        require(_close(a0, deltas), "with lam=0 the advantages should be the TD residuals")
        a1 = as_array(call_student(gae_advantages, rews, vals, 1.5, 0.99, 1.0,
                                   name="gae_advantages"), "gae_advantages", 20)
        r = as_array(call_student(rewards_to_go, rews, 1.5, 0.99, name="rewards_to_go"),
                     "rewards_to_go", 20)
        require(_close(a1, r - vals), "with lam=1 the advantages should be R_t - V(s_t)")

    return _result("Exercise 3.1 (rewards-to-go and GAE-lambda)", [
        ("rewards_to_go matches the definition (terminated and cut-off trajectories)", rtg),
        ("gae_advantages matches the definition", gae),
        ("lam=0 gives TD residuals, lam=1 gives R_t - V(s_t)", limits),
    ])


# --------------------------------------------------------------------------- 3.2
def _spd(n, cond, seed):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return q @ np.diag(np.geomspace(1.0, cond, n)) @ q.T


class _TinyPolicy:
    """A categorical MLP policy with explicit parameter tensors, and the mean KL from
    its current (frozen) distribution to the one given by any parameter vector."""

    def __init__(self, seed=0, obs_dim=3, hid=4, n_act=3, batch=16):
        g = torch.Generator().manual_seed(seed)
        self.shapes = [(hid, obs_dim), (hid,), (n_act, hid), (n_act,)]
        self.params = [(torch.randn(*s, generator=g) * 0.7).requires_grad_(True)
                       for s in self.shapes]
        self.obs = torch.randn(batch, obs_dim, generator=g)
        with torch.no_grad():
            self.logp_old = self._logp(self.params)

    def _logp(self, ps):
        w1, b1, w2, b2 = ps
        return torch.log_softmax(torch.tanh(self.obs @ w1.T + b1) @ w2.T + b2, dim=-1)

    def kl_of(self, ps):
        """Mean KL(pi_old || pi_ps); 0 with zero gradient at ps = params."""
        logp = self._logp(ps)
        return (self.logp_old.exp() * (self.logp_old - logp)).sum(-1).mean()

    def hessian(self):
        flat = torch.cat([p.detach().reshape(-1) for p in self.params])

        def f(v):
            ps, i = [], 0
            for s in self.shapes:
                n = int(np.prod(s))
                ps.append(v[i:i + n].reshape(s))
                i += n
            return self.kl_of(ps)
        return torch.autograd.functional.hessian(f, flat)


def check_exercise3_2(conjugate_gradient, hessian_vector_product):
    """Exercise 3.2: CG against ``np.linalg.solve`` and the reference iterates; the
    Hessian-vector product against the explicit Hessian of a small policy's KL."""
    from spinup.exercises.problem_set_3_solutions import exercise3_2_soln as soln

    def to_np(out, name, n):
        require(isinstance(out, (torch.Tensor, np.ndarray)),
                f"{name} should return a 1-D tensor, got {type(out).__name__}")
        out = np.asarray(out.detach() if isinstance(out, torch.Tensor) else out,
                         dtype=np.float64)
        require(out.shape == (n,), f"{name} returned shape {out.shape}, expected ({n},)")
        return out

    def cg_exact():
        n = 12
        A = _spd(n, 50.0, 1)
        b = torch.as_tensor(np.random.default_rng(2).normal(size=n))
        A_t = torch.as_tensor(A)
        calls = []

        def Ax(v):
            calls.append(1)
            return A_t @ v
        x = to_np(call_student(conjugate_gradient, Ax, b.clone(), 2 * n, 1e-20,
                               name="conjugate_gradient"), "conjugate_gradient", n)
        require(len(calls) <= 2 * n + 1, "conjugate_gradient called Ax %d times for "
                "cg_iters=%d" % (len(calls), 2 * n))
        want = np.linalg.solve(A, b.numpy())
        err = np.linalg.norm(x - want) / np.linalg.norm(want)
        require(err < 1e-6, "with cg_iters >= dim, CG should solve A x = b (relative error "
                "%.2g; check the signs of the x and r updates and the beta = r'r_new / r'r "
                "ratio)" % err)

    def cg_iterates():
        n = 30
        A_t = torch.as_tensor(_spd(n, 1e3, 3))
        b = torch.as_tensor(np.random.default_rng(4).normal(size=n))
        for k in (1, 3, 5):
            calls = []

            def Ax(v):
                calls.append(1)
                return A_t @ v
            x = to_np(call_student(conjugate_gradient, Ax, b.clone(), k, 1e-10,
                                   name="conjugate_gradient"), "conjugate_gradient", n)
            want = soln.conjugate_gradient(lambda v: A_t @ v, b.clone(), k, 1e-10).numpy()
            require(len(calls) <= k + 1, "cg_iters=%d but Ax was called %d times"
                    % (k, len(calls)))
            require(_close(x, want, atol=1e-7, rtol=1e-6),
                    "after cg_iters=%d iterations x differs from conjugate gradient's iterate "
                    "(start from x = 0, r = p = b; alpha = r'r / p'Ap)" % k)

    def cg_tol():
        b = torch.tensor([1e-6, 0.0, 0.0], dtype=torch.float64)
        calls = []

        def Ax(v):
            calls.append(1)
            return 2 * v
        x = to_np(call_student(conjugate_gradient, Ax, b, 10, 1e-10,
                               name="conjugate_gradient"), "conjugate_gradient", 3)
        require(len(calls) == 0 and np.allclose(x, 0), "when r'r < residual_tol already, "
                "CG should stop at once and return x = 0")

    def hvp():
        pol = _TinyPolicy(seed=5)
        kl = pol.kl_of(pol.params)
        damping = 0.1
        Hx = call_student(hessian_vector_product, kl, pol.params, damping,
                          name="hessian_vector_product")
        require(callable(Hx), "hessian_vector_product should return a function Hx(x)")
        H = pol.hessian().double().numpy()
        n = H.shape[0]
        rng = np.random.default_rng(6)
        for i in range(3):  # several calls on the same graph
            x = torch.as_tensor(rng.normal(size=n), dtype=torch.float32)
            got = to_np(call_student(Hx, x, name="Hx (returned by hessian_vector_product)"),
                        "Hx", n)
            want = H @ x.double().numpy() + damping * x.double().numpy()
            if not _close(got, want, atol=1e-4, rtol=1e-3):
                if _close(got, H @ x.double().numpy(), atol=1e-4, rtol=1e-3):
                    raise Incorrect("the damping term is missing: return (H + damping * I) x")
                if _close(got, damping * x.double().numpy(), atol=1e-4, rtol=1e-3):
                    raise Incorrect("only the damping term is there: at the old policy the "
                                    "KL gradient is 0 but its Hessian is not (differentiate "
                                    "grad(KL) . x once more)")
                raise Incorrect("Hx(x) differs from (H + damping * I) x computed from the "
                                "explicit Hessian (max error %.3g)" % np.abs(got - want).max())

    def hvp_in_trpo():
        # CG with the student's Hx must find the natural gradient direction H^-1 g.
        pol = _TinyPolicy(seed=7)
        kl = pol.kl_of(pol.params)
        Hx = call_student(hessian_vector_product, kl, pol.params, 0.1,
                          name="hessian_vector_product")
        H = pol.hessian().double().numpy() + 0.1 * np.eye(sum(p.numel() for p in pol.params))
        g = torch.as_tensor(np.random.default_rng(8).normal(size=H.shape[0]),
                            dtype=torch.float32)
        x = soln.conjugate_gradient(lambda v: call_student(Hx, v, name="Hx"), g, 60, 1e-12)
        want = np.linalg.solve(H, g.double().numpy())
        err = np.linalg.norm(x.detach().double().numpy() - want) / np.linalg.norm(want)
        require(err < 1e-2, "CG with your Hx does not find H^-1 g (relative error %.2g)" % err)

    return _result("Exercise 3.2 (conjugate gradient, KL Hessian-vector product)", [
        ("CG solves A x = b when cg_iters >= dim", cg_exact),
        ("CG iterates match after 1, 3 and 5 iterations", cg_iterates),
        ("CG stops when the residual is already below residual_tol", cg_tol),
        ("Hx(x) = (H + damping I) x against the explicit KL Hessian", hvp),
        ("CG with your Hx finds the natural gradient H^-1 g", hvp_in_trpo),
    ])


# --------------------------------------------------------------------------- 3.3
def _brute_n_step(rews, term, ends, vals, gamma, n, cross_ends=False, term_bootstrap=False,
                  ends_are_terminal=False, disc_off_by_one=False):
    """Reference n-step targets, and (via the flags) the usual mistakes."""
    T = len(rews)
    y = np.zeros(T)
    for t in range(T):
        m = 0
        while m < n and t + m < T:
            m += 1
            if ends[t + m - 1] and not cross_ends:
                break
        j = t + m - 1
        ret = sum(gamma ** k * rews[t + k] for k in range(m))
        dead = ends[j] if ends_are_terminal else term[j]
        if term_bootstrap:
            dead = 0.0
        y[t] = ret + gamma ** (m - 1 if disc_off_by_one else m) * (1 - dead) * vals[j]
    return y


def _episodes(rng, T):
    """Random episode boundaries: some terminated, some truncated."""
    term, ends = np.zeros(T), np.zeros(T)
    t = 0
    while t < T:
        t += int(rng.integers(1, 6))
        if t <= T:
            ends[t - 1] = 1
            term[t - 1] = float(rng.random() < 0.5)
    return term, ends


def check_exercise3_3(double_dqn_next_values, n_step_targets):
    """Exercise 3.3: Double-DQN bootstrap values and n-step targets against a
    brute-force loop, with terminations, truncations and data ends."""
    rng = np.random.default_rng(0)

    def double_q():
        name = "double_dqn_next_values"
        qo, qt = torch.randn(64, 5), torch.randn(64, 5)
        got = _as_tensor(call_student(double_dqn_next_values, qo, qt, name=name), name,
                         (64,))
        want = qt[torch.arange(64), qo.argmax(1)]
        if not torch.allclose(got, want, atol=1e-6):
            for cand, hint in [
                    (qt.max(1).values, "this is vanilla DQN (max of Q_targ): let the ONLINE "
                     "network choose the action, the target network evaluate it"),
                    (qo.max(1).values, "the online network evaluates too: use Q_targ at the "
                     "online network's argmax"),
                    (qo[torch.arange(64), qt.argmax(1)], "the roles are swapped: the online "
                     "network selects (argmax), the target network evaluates")]:
                if torch.allclose(got, cand, atol=1e-6):
                    raise Incorrect(hint)
            raise Incorrect("should be Q_targ(s', argmax_a Q(s', a)) for each row")

    def targets(n_values):
        name = "n_step_targets"
        for n in n_values:
            for gamma in (0.9, 0.5):
                T = 40
                rews = rng.normal(size=T)
                vals = rng.normal(size=T) * 3
                term, ends = _episodes(rng, T)
                args = [torch.as_tensor(a, dtype=torch.float32) for a in (rews, term, ends, vals)]
                got = _as_tensor(call_student(n_step_targets, *args, gamma, n, name=name),
                                 name, (T,)).detach().double().numpy()
                want = _brute_n_step(rews, term, ends, vals, gamma, n)
                if _close(got, want):
                    continue
                for flags, hint in [
                        (dict(term_bootstrap=True), "you bootstrap through terminal states: "
                         "multiply the bootstrap by (1 - terminated)"),
                        (dict(ends_are_terminal=True), "a truncated episode (ends=1, "
                         "terminated=0) must still bootstrap from its last next state"),
                        (dict(cross_ends=True), "the n-step sum crosses into the next "
                         "episode: stop summing at a transition with ends=1"),
                        (dict(disc_off_by_one=True), "the bootstrap is discounted by "
                         "gamma^m, where m is the number of rewards summed"),
                        (dict(cross_ends=True, term_bootstrap=True),
                         "episode boundaries are ignored entirely")]:
                    if _close(got, _brute_n_step(rews, term, ends, vals, gamma, n, **flags)):
                        raise Incorrect(hint + " (n=%d)" % n)
                bad = np.flatnonzero(~np.isclose(got, want, atol=1e-4, rtol=1e-4))
                t = int(bad[0])
                raise Incorrect("n=%d, gamma=%s: y[%d] = %.4f, expected %.4f (rewards %s, "
                                "terminated %s, ends %s)" % (
                                    n, gamma, t, got[t], want[t],
                                    np.round(rews[t:t + n], 3).tolist(),
                                    term[t:t + n].tolist(), ends[t:t + n].tolist()))

    def data_end():
        name = "n_step_targets"
        # One unfinished episode: the last transitions have fewer than n rewards left.
        rews = torch.ones(4)
        zeros = torch.zeros(4)
        vals = torch.full((4,), 10.0)
        got = call_student(n_step_targets, rews, zeros, zeros, vals, 0.5, 3, name=name)
        want = torch.tensor([1 + .5 + .25 + .125 * 10, 1 + .5 + .25 + .125 * 10,
                             1 + .5 + .25 * 10, 1 + .5 * 10])
        require(torch.allclose(got.float(), want, atol=1e-5),
                "near the end of the data, sum the rewards that exist and bootstrap from "
                "the last next state (expected %s, got %s)" % (want.tolist(),
                                                                got.float().tolist()))

    return _result("Exercise 3.3 (Double-DQN n-step targets)", [
        ("Double-DQN bootstrap values", double_q),
        ("one-step targets (n=1) with terminations and truncations", lambda: targets([1])),
        ("n-step targets (n=3, 5) stop at episode ends", lambda: targets([3, 5])),
        ("n-step sums stop at the end of the data", data_end),
    ])


# --------------------------------------------------------------------------- 4.1
#: WalledReach as exercise4_1.py describes it; the checker never reads the answer's numbers.
_WR_DT, _WR_FRICTION, _WR_COST, _WR_RADIUS, _WR_STOP = 0.1, 0.5, 0.01, 0.05, 0.2
#: The start state the checker substitutes for new episodes while it grades ``step``.
_WR_MARK = (0.5, -0.5, 0.0, 0.0, -0.25, 0.75)


def _wr_step_one(row, action, friction_sign=1.0, explicit_euler=False, clip=True,
                 walls=True, wall_stops=True, reward_before=False, cost=True):
    """One WalledReach step of ONE copy in plain Python floats (the keywords build the
    usual wrong answers). Returns ``(next_row, reward, terminated, margin)``; ``margin``
    is how close the step came to a threshold (a wall, the goal radius, the stopping
    speed), where float32 and float64 may decide differently."""
    px, py, vx, vy, gx, gy = (float(x) for x in row)
    fx, fy = (float(a) for a in action)
    if clip:
        fx, fy = min(max(fx, -1.0), 1.0), min(max(fy, -1.0), 1.0)
    old_vx, old_vy = vx, vy
    vx += _WR_DT * (fx - friction_sign * _WR_FRICTION * vx)
    vy += _WR_DT * (fy - friction_sign * _WR_FRICTION * vy)
    old_px, old_py = px, py
    px += _WR_DT * (old_vx if explicit_euler else vx)
    py += _WR_DT * (old_vy if explicit_euler else vy)
    margin = min(abs(abs(px) - 1.0), abs(abs(py) - 1.0))
    if walls and abs(px) > 1.0:
        px, vx = math.copysign(1.0, px), 0.0 if wall_stops else vx
    if walls and abs(py) > 1.0:
        py, vy = math.copysign(1.0, py), 0.0 if wall_stops else vy
    dist, speed = math.hypot(gx - px, gy - py), math.hypot(vx, vy)
    seen = math.hypot(gx - old_px, gy - old_py) if reward_before else dist
    reward = -seen - (_WR_COST * (fx * fx + fy * fy) if cost else 0.0)
    terminated = dist < _WR_RADIUS and speed < _WR_STOP
    margin = min(margin, abs(dist - _WR_RADIUS), abs(speed - _WR_STOP))
    return [px, py, vx, vy, gx, gy], reward, terminated, margin


def _wr_rows(states, actions, **flags):
    """:func:`_wr_step_one` for every row: next states (N, 6), rewards, terminated, margins."""
    out = [_wr_step_one(s, a, **flags) for s, a in zip(np.asarray(states, np.float64),
                                                        np.asarray(actions, np.float64),
                                                        strict=True)]
    return (np.array([o[0] for o in out]), np.array([o[1] for o in out]),
            np.array([o[2] for o in out], dtype=bool), np.array([o[3] for o in out]))


def _wr_obs(states):
    """Observations of rows (N, 6) as numpy: p, v, g - p."""
    s = np.asarray(states, np.float64)
    return np.concatenate([s[:, 0:4], s[:, 4:6] - s[:, 0:2]], axis=1)


def _wr_ref_dynamics(state, actions):
    """The per-copy reference dressed as a task's ``_dynamics`` (used while grading step)."""
    nxt, rew, term, _ = _wr_rows(state.detach().cpu().numpy(), actions.detach().cpu().numpy())
    return (torch.tensor(nxt, dtype=torch.float32), torch.tensor(rew, dtype=torch.float32),
            torch.tensor(term))


def _wr_states(rng, n):
    """n test rows and actions that hit walls, clip forces, reach the goal and miss it,
    kept away from the thresholds (so float32 rounding cannot flip a decision)."""
    rows, acts = [], []
    while len(rows) < n:
        pos = rng.uniform(-1, 1, 2)
        goal = rng.uniform(-0.8, 0.8, 2)
        vel = rng.uniform(-3, 3, 2)
        act = rng.uniform(-1.6, 1.6, 2)
        if rng.random() < 0.3:   # near the goal and slow: many of these terminate
            pos, vel, act = goal + rng.normal(0, 0.03, 2), rng.normal(0, 0.15, 2), \
                rng.normal(0, 0.3, 2)
        row = np.float32(np.concatenate([pos, vel, goal]))
        act = np.float32(act)
        if _wr_step_one(row, act)[3] > 1e-3:
            rows.append(row)
            acts.append(act)
    return np.array(rows), np.array(acts)


def _wr_first_bad(got, want, atol=1e-4):
    """Index of the first row where ``got`` and ``want`` differ, or None."""
    bad = ~np.isclose(np.asarray(got, np.float64).reshape(len(want), -1),
                      np.asarray(want, np.float64).reshape(len(want), -1), atol=atol, rtol=0)
    rows = np.flatnonzero(bad.any(axis=1))
    return int(rows[0]) if len(rows) else None


def _wr_tensor(out, name, shape, kind=None):
    out = _as_tensor(out, name, shape)
    if kind == "bool":
        require(out.dtype == torch.bool, f"{name} should be a bool tensor, got {out.dtype}")
    elif kind == "float32":
        require(out.dtype == torch.float32, f"{name} should be float32, got {out.dtype}")
    return out.detach().cpu()


def check_exercise4_1(task_cls):
    """Exercise 4.1: the batched task ``task_cls`` (``WalledReach``) against a per-copy
    computation in plain Python: start states and seeding, observations, the dynamics of
    many copies at once, and ``step`` (restarts in the same step, the time limit as a
    truncation, terminated and truncated kept apart)."""
    rng = np.random.default_rng(0)
    mark = torch.tensor(_WR_MARK)

    def make(n, **kwargs):
        return call_student(task_cls, num_envs=n, name="WalledReach(...)", **kwargs)

    def start_states():
        env, n = make(4000), 4000
        before = torch.random.get_rng_state()
        call_student(env.reset, seed=5, name="reset (which calls your _initial_state)")
        require(torch.equal(before, torch.random.get_rng_state()),
                "start states were drawn from torch's global generator: pass "
                "generator=self.rng to torch.rand, so that reset(seed=...) decides them")
        s = _wr_tensor(env.state, "the start states (self.state after reset)", (n, 6),
                       "float32").double()
        require(torch.all(s[:, 2:4] == 0), "start velocities must be exactly 0")
        for cols, half, what in (((0, 1), 1.0, "positions"), ((4, 5), 0.8, "goals")):
            part = s[:, list(cols)]
            require(part.abs().max() <= half + 1e-6,
                    f"start {what} must lie in [-{half}, {half}]^2 (got up to "
                    f"{part.abs().max():.3f})")
            require(part.min() < -0.95 * half and part.max() > 0.95 * half
                    and part.mean(0).abs().max() < 0.1 * half,
                    f"start {what} should be uniform over all of [-{half}, {half}]^2 "
                    f"(got values from {part.min():.3f} to {part.max():.3f}): torch.rand "
                    "draws from [0, 1), scale and shift it")
        require(s[:, 0].unique().numel() > n // 2,
                "every copy needs its own start state (draw n rows, not one)")
        corr = np.corrcoef(s.numpy().T[[0, 1, 4, 5]])
        require(np.abs(corr - np.eye(4)).max() < 0.2,
                "the columns of the start states should be drawn independently")
        call_student(env.reset, seed=5, name="reset")
        require(torch.equal(env.state.double(), s),
                "reset(seed=5) twice gave different start states: draw them with "
                "generator=self.rng")
        call_student(env.reset, seed=6, name="reset")
        require(not torch.equal(env.state.double(), s),
                "reset(seed=6) gave the start states of reset(seed=5)")

    def observe():
        rows, _ = _wr_states(rng, 500)
        env, state = make(500), torch.tensor(rows)
        obs = _wr_tensor(call_student(env._observe, state, name="_observe"), "_observe",
                         (500, 6), "float32")
        want = _wr_obs(rows)
        if _wr_first_bad(obs, want) is not None:
            if _wr_first_bad(obs, rows) is None:
                raise Incorrect("the last two columns are the offset to the goal g - p, "
                                "not the goal g")
            if _wr_first_bad(obs[:, 4:], -want[:, 4:]) is None:
                raise Incorrect("the offset to the goal is g - p, not p - g")
            i = _wr_first_bad(obs, want)
            raise Incorrect(f"state {rows[i].round(4).tolist()}: observation "
                            f"{obs[i].numpy().round(4).tolist()}, expected "
                            f"{want[i].round(4).tolist()} (p, v, g - p)")
        before = state.clone()
        obs = call_student(env._observe, state, name="_observe")
        obs.add_(1.0)
        require(torch.equal(state, before),
                "changing the observation changed the state: return a new tensor "
                "(torch.cat makes one), not the state or a view of it")

    def dynamics():
        n = 3000
        rows, acts = _wr_states(rng, n)
        env, state, actions = make(n), torch.tensor(rows), torch.tensor(acts)
        out = call_student(env._dynamics, state, actions.clone(), name="_dynamics")
        require(isinstance(out, tuple) and len(out) == 3,
                "_dynamics should return a tuple (next_state, reward, terminated)")
        require(torch.equal(state, torch.tensor(rows)),
                "_dynamics changed the state it was given in place: build new tensors")
        nxt = _wr_tensor(out[0], "next_state", (n, 6), "float32")
        rew = _wr_tensor(out[1], "reward", (n,))
        term = _wr_tensor(out[2], "terminated", (n,), "bool").numpy()
        want_nxt, want_rew, want_term, _ = _wr_rows(rows, acts)
        require(want_term.sum() > 50 and (~want_term).sum() > 50,
                "internal error: the test states should both end and go on")
        if _wr_first_bad(nxt, want_nxt) is None and _wr_first_bad(rew, want_rew) is None:
            i = np.flatnonzero(term != want_term)
            require(len(i) == 0, "terminated is wrong for state %s, action %s: "
                    "terminated when |g - p'| < 0.05 and |v'| < 0.2, both after the step" % (
                        rows[i[0]].round(4).tolist(), acts[i[0]].round(4).tolist())
                    if len(i) else "")
            return
        for flags, hint in [
                (dict(friction_sign=-1.0), "a sign error in the friction: it slows the mass "
                 "down, v' = v + dt (a - 0.5 v)"),
                (dict(explicit_euler=True), "the position must move with the NEW velocity "
                 "(semi-implicit Euler): update v first, then p' = p + dt v'"),
                (dict(clip=False), "clip each force component to [-1, 1] before using it"),
                (dict(walls=False), "the walls are missing: clip each coordinate of p' to "
                 "[-1, 1]"),
                (dict(wall_stops=False), "at a wall, set the velocity component along that "
                 "axis to 0"),
                (dict(reward_before=True), "the reward uses the distance after the step, "
                 "|g - p'|, not the one before it"),
                (dict(cost=False), "the reward is missing the action cost -0.01 |a|^2")]:
            alt_nxt, alt_rew, _, _ = _wr_rows(rows, acts, **flags)
            if _wr_first_bad(nxt, alt_nxt) is None and _wr_first_bad(rew, alt_rew) is None:
                raise Incorrect(hint)
        i = _wr_first_bad(nxt, want_nxt)
        if i is not None:
            raise Incorrect(f"from state {rows[i].round(4).tolist()} with action "
                            f"{acts[i].round(4).tolist()}: next state "
                            f"{nxt[i].numpy().round(4).tolist()}, expected "
                            f"{want_nxt[i].round(4).tolist()}")
        i = _wr_first_bad(rew, want_rew)
        raise Incorrect(f"from state {rows[i].round(4).tolist()} with action "
                        f"{acts[i].round(4).tolist()}: reward {float(rew[i]):.4f}, expected "
                        f"{want_rew[i]:.4f}")

    def graded_env(n, limit):
        """A task whose physics and start states are the checker's, so that only the
        answer's ``step`` is graded here."""
        env = make(n, max_episode_steps=limit)
        env._dynamics = _wr_ref_dynamics
        env._observe = lambda s: torch.tensor(_wr_obs(s.detach().cpu().numpy()),
                                              dtype=torch.float32)
        env._initial_state = lambda k: mark.repeat(k, 1)
        call_student(env.reset, seed=0, name="reset")
        return env

    def call_step(env, actions):
        out = call_student(env.step, actions, name="step")
        require(isinstance(out, tuple) and len(out) == 5,
                "step should return (obs, reward, terminated, truncated, info)")
        n = env.num_envs
        obs = _wr_tensor(out[0], "obs", (n, 6), "float32").numpy()
        rew = _wr_tensor(out[1], "reward", (n,)).numpy()
        term = _wr_tensor(out[2], "terminated", (n,), "bool").numpy()
        trunc = _wr_tensor(out[3], "truncated", (n,), "bool").numpy()
        info = out[4]
        require(isinstance(info, dict) and "final_obs" in info and "_final_obs" in info,
                "info should be a dict with 'final_obs' and '_final_obs'")
        final = _wr_tensor(info["final_obs"], "info['final_obs']", (n, 6)).numpy()
        ended = _wr_tensor(info["_final_obs"], "info['_final_obs']", (n,), "bool").numpy()
        return obs, rew, term, trunc, final, ended

    def same_step():
        n, limit, q = 64, 5, 16
        env = graded_env(n, limit)
        # Four groups of q copies: terminate; reach the time limit; both; neither.
        rows, elapsed = np.zeros((n, 6), np.float32), np.zeros(n, np.int64)
        acts = np.float32(rng.uniform(-1, 1, (n, 2)))
        for i in range(n):
            goal = rng.uniform(-0.4, 0.4, 2)
            if (i // q) in (0, 2):     # on the goal, at rest, no force: terminates
                rows[i], acts[i] = np.concatenate([goal, [0, 0], goal]), 0.0
            else:                      # 0.4 m or more from the goal: goes on
                away = rng.uniform(0.4, 0.6) * np.array([1, -1])[rng.integers(2)]
                rows[i] = np.concatenate([goal + away, rng.uniform(-0.3, 0.3, 2), goal])
            elapsed[i] = limit - 1 if (i // q) in (1, 2) else rng.integers(0, limit - 1)
        env.state, env.elapsed = torch.tensor(rows), torch.tensor(elapsed)
        obs, rew, term, trunc, final, ended = call_step(env, torch.tensor(acts))
        want_nxt, want_rew, want_term, _ = _wr_rows(rows, acts)
        want_trunc = elapsed + 1 >= limit
        done = want_term | want_trunc
        require(want_term.tolist() == [True] * q + [False] * q + [True] * q + [False] * q,
                "internal error: the groups of test copies are not as planned")
        if not np.array_equal(term, want_term):
            if np.array_equal(term, done):
                raise Incorrect("terminated is also True for copies that only reached the "
                                "time limit: a truncation is not a termination (the "
                                "value after it is not 0), report it in truncated alone")
            raise Incorrect("terminated should be what _dynamics says, got %s for the "
                            "copies that should terminate" % term[want_term].tolist())
        if not np.array_equal(trunc, want_trunc):
            if not trunc.any():
                raise Incorrect("no copy was truncated, though some had run "
                                "max_episode_steps steps: count steps in self.elapsed and "
                                "set truncated where it reaches self.max_episode_steps")
            if np.array_equal(trunc, done):
                raise Incorrect("truncated is True for copies that terminated before the "
                                "time limit: truncated means the time limit only")
            if np.array_equal(trunc, want_trunc & ~want_term):
                raise Incorrect("a copy that terminates on its last allowed step is both "
                                "terminated and truncated: set truncated from the step "
                                "count alone")
            raise Incorrect("truncated should be True exactly where the step count reaches "
                            "max_episode_steps (copies at %s steps before this one)"
                            % sorted(set(elapsed[trunc != want_trunc].tolist())))
        require(_wr_first_bad(rew, want_rew) is None, "reward is not what _dynamics returned")
        require(np.array_equal(ended, done),
                "info['_final_obs'] should be True exactly for the copies that finished "
                "(terminated or truncated) in this step")
        if _wr_first_bad(final[done], _wr_obs(want_nxt)[done]) is not None:
            raise Incorrect("info['final_obs'] of a finished copy should be the observation "
                            "it reached in this step, before its restart (the state to "
                            "bootstrap from after a truncation)")
        require(_wr_first_bad(obs[~done], _wr_obs(want_nxt)[~done]) is None,
                "obs of a copy that goes on should be the observation of its next state")
        if _wr_first_bad(obs[done], _wr_obs(want_nxt)[done]) is None:
            raise Incorrect("copies whose episode ended were not restarted in this step: "
                            "their obs is still the last observation of the old episode. "
                            "Restart them in the same call (obs = the first observation of "
                            "the next episode; the old one goes in info['final_obs']); "
                            "restarting on the next call makes the algorithm store a "
                            "'transition' from the end of one episode to the start of "
                            "another")
        mark_obs = _wr_obs(mark[None].numpy())[0]
        require(_wr_first_bad(obs[done], np.tile(mark_obs, (done.sum(), 1))) is None,
                "a finished copy should restart from a state drawn by self._initial_state")
        got_elapsed = _wr_tensor(env.elapsed, "self.elapsed", (n,)).numpy()
        want_elapsed = np.where(done, 0, elapsed + 1)
        if not np.array_equal(got_elapsed, want_elapsed):
            raise Incorrect("self.elapsed should count the steps of each copy's episode: "
                            "+1 per step, back to 0 for a copy that restarts (expected %s, "
                            "got %s)" % (want_elapsed[:8].tolist(), got_elapsed[:8].tolist()))
        # The next call steps the restarted copies from their start state, once.
        state = np.where(done[:, None], mark.numpy()[None], want_nxt)
        zeros = np.zeros((n, 2), np.float32)
        obs, _, _, _, _, _ = call_step(env, torch.tensor(zeros))
        want2, _, term2, _ = _wr_rows(state, zeros)
        want2[term2 | (want_elapsed + 1 >= limit)] = _WR_MARK   # finished again: restarted
        require(_wr_first_bad(obs, _wr_obs(want2)) is None,
                "on the call after a restart, every copy should simply take one step from "
                "the state it was left in (a finished copy is restarted once, in the step "
                "where it finished)")

    def time_limit():
        n, limit = 32, 7
        env = graded_env(n, limit)
        goal = rng.uniform(-0.3, 0.3, (n, 2))
        rows = np.concatenate([goal + 0.6, np.zeros((n, 2)), goal], 1).astype(np.float32)
        env.state = torch.tensor(rows)
        first = []
        for t in range(1, 2 * limit + 1):
            acts = np.float32(rng.uniform(-0.2, 0.2, (n, 2)))
            _, _, term, trunc, _, _ = call_step(env, torch.tensor(acts))
            if term.any():
                raise Incorrect("terminated is True at the time limit: a truncation is not a "
                                "termination" if np.array_equal(term, trunc) else
                                "terminated is True for copies that are far from their goal")
            if trunc.any():
                first.append(t)
            require(trunc.all() or not trunc.any(),
                    "copies that started together should reach the time limit together")
        require(first == [limit, 2 * limit],
                f"with max_episode_steps={limit}, copies that started together were "
                f"truncated after steps {first} of {2 * limit}, expected after steps "
                f"{[limit, 2 * limit]}: an episode lasts exactly max_episode_steps steps")

    return _result("Exercise 4.1 (a batched task: WalledReach)", [
        ("start states (_initial_state) and seeding", start_states),
        ("observations (_observe)", observe),
        ("dynamics of 3000 copies at once (_dynamics)", dynamics),
        ("step: restarts in the same step, terminated and truncated kept apart", same_step),
        ("step: the time limit over two episodes", time_limit),
    ])
