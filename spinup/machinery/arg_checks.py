"""Checking an algorithm's arguments, and what this machine allows, before anything is written.

Shared rules live once in :data:`COMMON_RULES`; each algorithm's own are its entry of
:data:`RULES` (``dict(BASIC_RULES, ...)``, replacing a common rule of that name), its spaces
its entry of :data:`SPACES` (both at the end of this file). An algorithm's run checks its call
through the door (:class:`spinup.machinery.door.Run`); the CLI calls :func:`check_cli` per variant.
A failed check raises one line, ``<algo>: <name>=<value!r> is not allowed: <what is allowed>``:
``TypeError`` for a value of the wrong kind, ``ValueError`` for a wrong value.
"""
import collections
import inspect
import math
import numbers
import operator
import os

from spinup.machinery.cores import available_cores, physical_cores
from spinup.machinery.memory import (_NETWORKS, _gigabytes, available_memory,  # noqa: F401
                                     check_saved_model_memory, estimate_training_bytes,
                                     hidden_parameters)
from spinup.utils import mpi_tools
from spinup.machinery.env_checks import (BOUNDED_BOX, DISCRETE, FLAT_BOX, FLAT_OR_IMAGE,
                                         make_env)
from spinup.machinery.run_dir import check_resume_algorithm


def _message(algo, name, value, allowed):
    return f"{algo}: {name}={value!r} is not allowed: {allowed}"


#: What a rule may read besides its value: all arguments (defaults filled in), the number
#: of MPI processes, and whether ``actor_critic`` is the function's default.
_Context = collections.namedtuple("_Context", "config procs default_model")


# ---- Rules ----

class Rule:
    """The allowed values of one argument.

    Args:
        allowed (str or callable): those values in words, ``{name}`` standing for the
            argument's name; or ``(name, ctx) -> words`` when they depend on other arguments.
        kind (callable): ``value -> bool``; False raises ``TypeError``.
        within (callable or None): ``(value, ctx) -> bool`` for a value of the right
            kind; False raises ``ValueError``.
        late (bool): the rule reads other arguments, so it runs after their rules.
    """

    def __init__(self, allowed, kind, within=None, late=False):
        self.allowed, self.kind, self.within, self.late = allowed, kind, within, late

    def describe(self, name, ctx):
        """The allowed values in words, for argument ``name`` in context ``ctx``."""
        if callable(self.allowed):
            return self.allowed(name, ctx)
        return self.allowed.replace("{name}", name)

    def check(self, algo, name, value, ctx):
        """Raise TypeError/ValueError unless ``value`` is allowed for ``name`` of ``algo``."""
        if not self.kind(value):
            raise TypeError(_message(algo, name, value, self.describe(name, ctx)))
        if self.within is not None and not self.within(value, ctx):
            raise ValueError(_message(algo, name, value, self.describe(name, ctx)))


def is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _int_list(value):
    return isinstance(value, (list, tuple)) and all(map(is_int, value))


def _int_or(value, fallback):
    return value if is_int(value) else fallback


def int_at_least(low):
    """An int (not a bool) that is ``>= low``."""
    return Rule(f"an int with {{name}} >= {low}", is_int, lambda v, ctx: v >= low)


#: An int >= 1: sizes, counts of steps, epochs and iterations.
positive_int = int_at_least(1)
#: An int >= 0: counts that may be zero (``start_steps``, ``num_test_episodes``).
nonneg_int = int_at_least(0)


def in_range(low=None, high=None, low_open=False, high_open=False):
    """A finite real number (not a bool) between ``low`` and ``high`` (``None``: unbounded),
    a bound excluded when ``low_open``/``high_open``."""
    above, below = (operator.gt if low_open else operator.ge), (
        operator.lt if high_open else operator.le)
    hi = "" if high is None else f" {'<' if high_open else '<='} {high}"
    if low is None:
        words = "a finite number" + (f" with {{name}}{hi}" if hi else "")
    elif high is None:
        words = f"a finite number with {{name}} {'>' if low_open else '>='} {low}"
    else:
        words = f"a number with {low} {'<' if low_open else '<='} {{name}}{hi}"
    return Rule(words, is_number, lambda v, ctx: (low is None or above(v, low)) and (
        high is None or below(v, high)) and math.isfinite(v))


#: A finite number > 0: learning rates, KL and step sizes.
positive = in_range(0, low_open=True)
#: A finite number >= 0: coefficients that may be switched off with 0.
nonneg = in_range(0)
#: A number in [0, 1]: discount factors, polyak, probabilities.
unit_interval = in_range(0, 1)


def optional(rule):
    """``None``, or a value that ``rule`` allows."""
    return Rule(lambda name, ctx: "None or " + rule.describe(name, ctx),
                lambda v: v is None or rule.kind(v),
                lambda v, ctx: v is None or rule.within is None or rule.within(v, ctx),
                late=rule.late)


def one_of(*choices):
    """One of the given strings (or ``None`` if it is among them)."""
    words = "one of " + ", ".join(repr(c) for c in choices)
    return Rule(words, lambda v: isinstance(v, str) or (v is None and None in choices),
                lambda v, ctx: v in choices)


#: True or False.
boolean = Rule("True or False", lambda v: isinstance(v, bool))
#: A callable, e.g. ``env_fn`` or ``actor_critic``.
is_callable = Rule("a callable", callable)
#: A dict, e.g. ``logger_kwargs``.
a_dict = Rule("a dict", lambda v: isinstance(v, dict))

#: ``hidden_sizes`` of an MLP: a list or tuple of ints >= 1 (empty: no hidden layer).
hidden_sizes = Rule("a list or tuple of ints >= 1, e.g. [64, 64]", _int_list,
                    lambda v, ctx: all(size >= 1 for size in v))


def _is_activation(value):
    import torch
    if not (isinstance(value, type) and issubclass(value, torch.nn.Module)):
        return False
    try:  # made without arguments (torch.nn.Linear needs two)
        return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in inspect.signature(value).parameters.values())
    except (TypeError, ValueError):
        return True


#: ``activation``: a ``torch.nn.Module`` subclass made without arguments (not an instance).
activation = Rule("a torch.nn.Module subclass, e.g. torch.nn.ReLU, that takes no arguments "
                  "(an activation; --act on the command line)", _is_activation)


class _ModelKwargs(Rule):
    """A dict of keywords ``actor_critic`` takes; for the default model, valid
    ``hidden_sizes``/``activation`` that fit in memory."""

    def __init__(self):
        super().__init__("a dict", lambda v: isinstance(v, dict))

    def check(self, algo, name, value, ctx):
        super().check(algo, name, value, ctx)
        check_model_keys(algo, name, value, ctx.config.get("actor_critic"))
        if not ctx.default_model:
            return  # a user's class: the values of its keyword arguments are its business
        for key, rule in (("hidden_sizes", hidden_sizes), ("activation", activation)):
            if key in value:
                rule.check(algo, f"{name}[{key!r}]", value[key], ctx)
        check_model_memory(algo, name, value, ctx)


#: ``ac_kwargs`` of the default MLP actor-critic.
mlp_ac_kwargs = _ModelKwargs()


def steps_over_procs(*blocks):
    """``steps_per_epoch``: an int >= 1 that splits evenly over the MPI processes,
    and, with ``blocks`` (names of other arguments, e.g. ``'n_steps'``, ``'num_envs'``),
    into whole rollouts of that many steps (times that many env copies) on every process."""
    def factor(ctx):
        each = [ctx.config.get(block) for block in blocks]
        return ctx.procs * math.prod(e if is_int(e) and e >= 1 else 1 for e in each)

    def words(name, ctx):
        each = "".join(f"{block} ({ctx.config.get(block)!r}) times " for block in blocks
                       if ctx.config.get(block, 1) != 1)
        return f"an int >= 1 that is a multiple of {each}the number of MPI processes ({ctx.procs})"

    return Rule(words, is_int, lambda v, ctx: v >= 1 and v % factor(ctx) == 0, late=True)


def single_process(why):
    """For the key ``num_cpu``: the run must be one process, for reason ``why``."""
    return Rule(f"1 ({why})", is_int, lambda v, ctx: v == 1, late=True)


def _highest_seed(ctx):
    """The largest ``seed`` numpy takes for the run: process or A3C worker k adds
    ``10000 * k``, a test env 1, and numpy seeds are below 2**32."""
    workers = ctx.config.get("num_workers", inspect.Parameter.empty)
    if workers is inspect.Parameter.empty:
        seeds = max(ctx.procs, 1)
    else:
        seeds = workers if is_int(workers) and workers >= 1 else (os.cpu_count() or 1)
    return 2 ** 32 - 2 - 10000 * (seeds - 1)


#: ``seed``: an int that numpy accepts for every process, worker and test env of the run.
seed_range = Rule(lambda name, ctx: (f"an int with 0 <= {name} <= {_highest_seed(ctx)} (numpy "
                                     "seeds are below 2**32; each extra process adds 10000)"),
                  is_int, lambda v, ctx: 0 <= v <= _highest_seed(ctx), late=True)


# ---- Rules across arguments, applied to every algorithm (COMMON_RULES) ----

#: Bytes of the smallest replay transition (1-D obs, next obs, act, rew, done as float32).
_LEAST_TRANSITION_BYTES = 20


def _batch_words(name, ctx):
    return (f"an int >= batch_size ({ctx.config.get('batch_size')!r}): the buffer must hold "
            "at least one batch")


def _replay_memory_words(name, ctx):
    need = ctx.config["replay_size"] * _LEAST_TRANSITION_BYTES
    return (f"the replay buffer would take at least {_gigabytes(need)} "
            f"({_LEAST_TRANSITION_BYTES} bytes per transition with one-dimensional "
            f"observations and actions) but {_gigabytes(available_memory() or 0)} of "
            "memory is available; use a smaller replay_size")


def _replay_fits(v, ctx):
    avail = available_memory()
    return avail is None or v * _LEAST_TRANSITION_BYTES <= avail


def _first_update_step(ctx):
    """The env step of an off-policy run's first update, and the run's total steps."""
    after = _int_or(ctx.config.get("update_after"), 0)
    every = max(1, _int_or(ctx.config.get("update_every"), 1))
    total = _int_or(ctx.config.get("epochs"), 1) * _int_or(ctx.config.get("steps_per_epoch"), 1)
    return -(-after // every) * every, total


def _local_batch(ctx):
    """The samples one MPI process collects per epoch of an on-policy run."""
    return max(1, _int_or(ctx.config.get("steps_per_epoch"), 1) // max(1, ctx.procs))


def _update_words(name, ctx):
    first, total = _first_update_step(ctx)
    return (f"the run has epochs * steps_per_epoch = {total} env steps and the first "
            f"update would come at step {first} (update_after rounded up to a multiple "
            "of update_every), so no update would ever happen; lower update_after or "
            "raise epochs/steps_per_epoch")


class _DeviceRule(Rule):
    """``device``, checked by :func:`spinup.machinery.device.resolve_device`."""

    def __init__(self):
        super().__init__("'cpu', 'cuda', 'cuda:N' or 'auto'", lambda value: True)

    def check(self, algo, name, value, ctx):
        from spinup.machinery.device import resolve_device
        resolve_device(algo, value, ctx.procs)


#: Rules :func:`check_args` applies, after the algorithm's own, to every algorithm taking an
#: argument of that name and declaring no rule of its own for it (a key in ``_CROSS_KEYS``
#: stands for the argument it names).
COMMON_RULES = dict(
    {name: positive_int for name in (
        "steps_per_epoch", "epochs", "replay_size", "batch_size", "update_every",
        "target_update_every", "n_step", "n_steps", "max_ep_len", "save_freq",
        "train_pi_iters", "policy_delay", "cg_iters", "num_envs")},
    **{name: nonneg_int for name in (
        "start_steps", "update_after", "eps_decay_steps", "num_test_episodes",
        "train_v_iters", "backtrack_iters")},
    num_workers=optional(positive_int), device=_DeviceRule(), cuda_graph=boolean,
    replay_size_vs_batch=Rule(_batch_words, is_int, lambda v, ctx: v >= max(
        1, _int_or(ctx.config.get("batch_size"), 1)), late=True),
    replay_size_vs_memory=Rule(_replay_memory_words, is_int, _replay_fits, late=True),
    update_after_vs_budget=Rule(_update_words, is_int, lambda v, ctx: v >= 0 and operator.lt(
        *_first_update_step(ctx)), late=True))
_CROSS_KEYS = {"replay_size_vs_batch": "replay_size", "replay_size_vs_memory": "replay_size",
               "update_after_vs_budget": "update_after"}

#: Rules every algorithm shares: spread into its entry of :data:`RULES` with
#: ``dict(BASIC_RULES, ...)``.
BASIC_RULES = dict(env_fn=is_callable, actor_critic=is_callable, ac_kwargs=mlp_ac_kwargs,
                   seed=seed_range, logger_kwargs=a_dict)


# ---- Checking a call ----

def _rules_of(fn):
    """The argument rules and env spaces of algorithm ``fn`` (:data:`RULES`, :data:`SPACES`,
    keyed by its module's name: ``npg`` is ``trpo``'s); ``({}, None)`` for another function."""
    name = getattr(inspect.getmodule(fn), "__name__", "").rsplit(".", 1)[-1]
    return RULES.get(name, {}), SPACES.get(name)


def check_args(algo, fn, kwargs, procs=None):
    """Check the arguments of a call of algorithm ``fn`` against its rules (:data:`RULES`).

    Arguments not in ``kwargs`` take ``fn``'s defaults; keywords ``fn`` does not take
    are ignored. A rule under the key ``num_cpu`` checks the number of processes.
    ``kwargs['_algorithm']`` is set to ``algo`` (unless set), so that ``config.json``
    records it; resuming another algorithm's run is refused.

    Args:
        algo (str): the name used in messages, e.g. ``'ppo'``.
        fn (callable): the algorithm function; its module's name keys :data:`RULES`.
        kwargs (dict): the arguments, e.g. ``dict(locals())`` inside ``fn``.
        procs (int or None): the number of MPI processes; ``None`` asks MPI.

    Raises:
        TypeError, ValueError: the first argument that is not allowed, in one line.
    """
    params = inspect.signature(fn).parameters
    config = {name: p.default for name, p in params.items()
              if p.default is not inspect.Parameter.empty}
    config.update((k, v) for k, v in kwargs.items() if k in params)
    default_ac = params["actor_critic"].default if "actor_critic" in params else None
    ctx = _Context(config, mpi_tools.num_procs() if procs is None else procs,
                   config.get("actor_critic") is default_ac)
    rules, _ = _rules_of(fn)
    kwargs.setdefault("_algorithm", algo)
    check_resume_algorithm(algo, fn, config.get("logger_kwargs"))
    for name, rule in sorted(rules.items(), key=lambda item: item[1].late):  # stable sort
        if name == "num_cpu":
            rule.check(algo, name, ctx.procs, ctx)
        elif name in config:
            rule.check(algo, name, config[name], ctx)
    for key, rule in sorted(COMMON_RULES.items(), key=lambda item: item[1].late):
        name = _CROSS_KEYS.get(key, key)
        if name in config and name in params and key not in rules:   # the algorithm's wins
            rule.check(algo, name, config[name], ctx)


# ---- The command line ----

_checked = set()  # (algo, env id) made and tried by check_cli in this process
_handed_over = {}  # env id -> an env the command line already made, for check_cli to probe


def hand_over_env(env_name, env):
    """Keep ``env``, made from the id ``env_name``, for :func:`check_cli` to probe instead
    of making another; one handed over for the same id before is closed."""
    old = _handed_over.pop(env_name, None)
    if old is not None:
        old.close()
    _handed_over[env_name] = env


def check_cli(algo, fn, kwargs):
    """Check one grid variant in the launching process: :func:`check_args` and, once per
    algorithm and env id, :func:`~spinup.machinery.env_checks.make_env` with the ``SPACES``.

    Args:
        algo (str): the command, e.g. ``'ppo'``.
        fn (callable): the algorithm function.
        kwargs (dict): its keyword arguments as the CLI builds them: ``env_name`` instead of
            ``env_fn``, plus ``num_cpu`` (an int or ``'auto'``).

    Raises:
        TypeError, ValueError: the one-line message of the check that failed.
    """
    args = dict(kwargs)
    num_cpu = args.pop("num_cpu", 1)
    if num_cpu == "auto":
        num_cpu = physical_cores()
    env_name = args.pop("env_name", None)
    check_args(algo, fn, args, procs=num_cpu)
    _, spaces = _rules_of(fn)
    if env_name is not None and spaces is not None and (algo, env_name) not in _checked:
        from spinup.machinery.run_dir import env_maker
        made = _handed_over.pop(env_name, None)
        params = inspect.signature(fn).parameters
        num_envs = args.get("num_envs", params["num_envs"].default) \
            if "num_envs" in params else None
        make_env(algo, (lambda: made) if made is not None else
                 env_maker(env_name, num_envs, args.get("device")), num_envs=num_envs,
                 **spaces).close()
        _checked.add((algo, env_name))


# ---- Launch-time limits: legal values that cannot work here ----

def check_model_keys(algo, name, value, actor_critic):
    """TypeError naming the first key of ``value`` (argument ``name``, ``ac_kwargs``) that
    ``actor_critic(obs_space, act_space, **value)`` does not take, and the allowed keys. A
    class taking ``**kwargs``, or whose signature cannot be read, is not checked."""
    try:
        params = list(inspect.signature(actor_critic).parameters.values())
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    named = [p for p in params if p.kind is not p.VAR_POSITIONAL]
    allowed = [p.name for p in named[2:] if p.kind is not p.POSITIONAL_ONLY]
    for key in value:
        if key not in allowed:
            who = getattr(actor_critic, "__name__", "the actor-critic")
            keys = ", ".join(allowed) if allowed else "none"
            raise TypeError(_message(algo, f"{name}[{key!r}]", value[key],
                                     f"{who} takes no argument {key!r}; its keys are: {keys}"))


def check_model_memory(algo, name, value, ctx):
    """ValueError (estimated and available bytes) for default-model ``hidden_sizes`` whose
    :func:`estimate_training_bytes` exceeds :func:`available_memory`."""
    sizes = value.get("hidden_sizes")
    if sizes is None:
        try:
            sizes = inspect.signature(ctx.config["actor_critic"]).parameters[
                "hidden_sizes"].default
        except (KeyError, TypeError, ValueError):
            return
    if not _int_list(sizes):
        return
    workers = ctx.config.get("num_workers") or os.cpu_count() or 1
    need, per_net = estimate_training_bytes(algo, sizes, workers if is_int(workers) else 1)
    avail = available_memory()
    if avail is None or need <= avail:
        return
    trained, copies = _NETWORKS.get(algo, (2, 0))
    how = (f"{trained} trained networks" + (f" and {copies} target networks" if copies else "")
           + f" of at least {per_net:,} parameters each, 4 bytes per parameter, x4 for "
           "gradients and Adam's moments" + (f", plus {workers} workers' copies"
                                              if algo == "a3c" else ""))
    raise ValueError(_message(algo, f"{name}['hidden_sizes']", list(sizes),
                              f"training needs at least {_gigabytes(need)} ({how}) but only "
                              f"{_gigabytes(avail)} of memory is available; use smaller "
                              "hidden layers"))


def check_workers(algo, num_workers, oversubscribe=False):
    """ValueError for more worker processes (A3C's ``num_workers``) than there are cores,
    unless ``oversubscribe``."""
    if oversubscribe or not is_int(num_workers):
        return
    cores = available_cores()
    if num_workers > cores:
        raise ValueError(f"{algo}: --num_workers {num_workers} asks for more worker processes "
                         f"than the {cores} CPU cores available here; use --num_workers {cores} "
                         "or less, or add --oversubscribe to start them anyway")


# ---- Each algorithm's rules and spaces: one table (keyed by module name) ----

def _alpha_words(name, ctx):
    learned = ctx is not None and ctx.config.get("target_entropy") is not None
    return ("'auto' or a number " + ("> 0 (with target_entropy set, alpha is the "
                                     "learned temperature's start)" if learned else ">= 0"))


def _alpha_ok(alpha, ctx):
    if isinstance(alpha, str):
        return alpha == "auto"
    learned = ctx.config.get("target_entropy") is not None
    return alpha > 0 if learned else alpha >= 0


def _updates_words(name, ctx):
    return (f"a number > 0 with round(update_every ({ctx.config.get('update_every')!r}) * "
            f"{name}) >= 1, so that each round of update_every env steps has an update")


#: ``updates_per_step``: a ratio of updates to env steps that gives a round of
#: ``update_every`` env steps at least one update.
def _gives_updates(value, ctx):
    every = ctx.config.get("update_every")
    if not (is_int(every) and every >= 1):
        return value > 0   # update_every's own rule speaks
    return value > 0 and round(every * value) >= 1


updates_ratio = Rule(_updates_words, is_number, _gives_updates, late=True)

#: ``replay_size``: an int >= 1 that holds at least one batch step of ``num_envs`` copies.
replay_holds_a_batch = Rule(
    lambda name, ctx: f"an int >= num_envs ({ctx.config.get('num_envs')!r}): one batch "
                      "step of every copy must fit in the buffer", is_int,
    lambda v, ctx: v >= max(1, _int_or(ctx.config.get("num_envs"), 1)), late=True)

#: Off-policy algorithms: an epoch is whole batch steps of the ``num_envs`` copies, and
#: ``updates_per_step`` gradient steps are taken per env step.
OFF_POLICY = dict(BASIC_RULES, steps_per_epoch=steps_over_procs("num_envs"),
                  updates_per_step=updates_ratio, replay_size=replay_holds_a_batch)

VPG = dict(BASIC_RULES, steps_per_epoch=steps_over_procs("num_envs"), gamma=unit_interval,
           pi_lr=positive, vf_lr=positive, train_v_iters=positive_int,
           lam=in_range(0, 1, low_open=True))

TRPO = dict(BASIC_RULES, steps_per_epoch=steps_over_procs("num_envs"), gamma=unit_interval,
            delta=positive, vf_lr=positive, damping_coeff=nonneg,
            backtrack_coeff=in_range(0, 1, low_open=True, high_open=True), lam=unit_interval,
            algo=one_of("trpo", "npg"))

#: PPO's ``minibatch_size``: None, or an int from 1 to the samples of one process's batch.
minibatch_in_batch = optional(Rule(
    lambda name, ctx: "an int from 1 to the samples one MPI process collects per epoch "
                      f"(steps_per_epoch / processes = {_local_batch(ctx)})", is_int,
    lambda v, ctx: 1 <= v <= _local_batch(ctx), late=True))

PPO = dict(BASIC_RULES, steps_per_epoch=steps_over_procs("num_envs"), gamma=unit_interval,
           clip_ratio=in_range(0, 1, low_open=True, high_open=True), pi_lr=positive,
           vf_lr=positive, train_v_iters=positive_int, lam=in_range(0, 1, low_open=True),
           target_kl=positive, ent_coef=nonneg, clip_vloss=boolean,
           minibatch_size=minibatch_in_batch)

DDPG = dict(OFF_POLICY, gamma=unit_interval, polyak=unit_interval, pi_lr=positive,
            q_lr=positive, act_noise=nonneg,
            num_cpu=single_process("DDPG does not average gradients over MPI processes"))

TD3 = dict(OFF_POLICY, gamma=unit_interval, polyak=unit_interval, pi_lr=positive,
           q_lr=positive, act_noise=nonneg, target_noise=nonneg, noise_clip=nonneg,
           num_cpu=single_process("TD3 does not average gradients over MPI processes"))

SAC = dict(OFF_POLICY, gamma=unit_interval, polyak=unit_interval, lr=positive,
           alpha=Rule(_alpha_words, lambda a: isinstance(a, str) or is_number(a),
                      _alpha_ok, late=True),
           target_entropy=optional(in_range()),
           num_cpu=single_process("SAC does not average its updates over MPI processes"))

DQN = dict(OFF_POLICY, updates_per_step=optional(updates_ratio), gamma=unit_interval,
           lr=positive, polyak=optional(unit_interval),
           eps_start=unit_interval, eps_end=unit_interval, eps_test=unit_interval,
           double=boolean, dueling=boolean, prioritized_replay=boolean, per_alpha=in_range(0),
           per_beta=unit_interval, per_eps=positive, huber=boolean,
           max_grad_norm=optional(positive), anneal_lr=boolean,
           num_cpu=single_process("DQN is a single-process algorithm"))

A2C = dict(BASIC_RULES, steps_per_epoch=steps_over_procs("n_steps", "num_envs"),
           gamma=unit_interval, lam=unit_interval, lr=positive, anneal_lr=boolean,
           ent_coef=nonneg, vf_coef=nonneg, max_grad_norm=optional(nonneg))

A3C = dict(BASIC_RULES, gamma=unit_interval, lam=unit_interval, lr=positive,
           anneal_lr=boolean, ent_coef=nonneg, vf_coef=nonneg, max_grad_norm=optional(nonneg),
           num_cpu=single_process("A3C starts its own worker processes: under mpiexec every "
                                  "rank would run a whole separate A3C. Run it without "
                                  "mpiexec and set num_workers=N instead (CLI: "
                                  "--num_workers N, not --cpu)"))

#: Algorithm module name -> its argument rules (``npg`` is a form of ``trpo``).
RULES = dict(vpg=VPG, trpo=TRPO, ppo=PPO, ddpg=DDPG, td3=TD3, sac=SAC, dqn=DQN, a2c=A2C, a3c=A3C)

_ON_POLICY = dict(obs=FLAT_BOX, act=(FLAT_BOX, DISCRETE))
_PIXELS = dict(obs=FLAT_OR_IMAGE, act=(FLAT_BOX, DISCRETE))   # a CNN for images (DESIGN 21)
_CONTINUOUS = dict(obs=FLAT_BOX, act=BOUNDED_BOX)
#: Algorithm module name -> the observation and action spaces it supports.
SPACES = dict(vpg=_PIXELS, trpo=_ON_POLICY, ppo=_PIXELS, a2c=_PIXELS, a3c=_ON_POLICY,
              ddpg=_CONTINUOUS, td3=_CONTINUOUS, sac=_CONTINUOUS,
              dqn=dict(obs=FLAT_OR_IMAGE, act=DISCRETE))
