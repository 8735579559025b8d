"""The MuJoCo benchmark: six algorithms on five locomotion tasks, compared with Spinning Up's runs.

    python benchmarks/mujoco.py run [--scale here|spec] [--part onpolicy offpolicy long]
                                    [--algos ...] [--envs ...] [--seeds ...]
                                    [--extra_seeds ...] [--jobs N]
                                    [--launcher local|ray] [--ray_address ADDR]
                                    [--data_dir DIR]
    python benchmarks/mujoco.py collect [--data_dir DIR] --publish  # finished runs -> repo
    python benchmarks/mujoco.py verify [--algos --envs --seeds] [--publish]  # rerun epoch 1
    python benchmarks/mujoco.py report [--publish]           # figures + tables for the docs page
    python benchmarks/mujoco.py speed [--publish]         # hours per 1M steps (idle machine)
    python benchmarks/mujoco.py tfinit [--algo --env --seeds]  # the initialisation experiment
    python benchmarks/mujoco.py physics [--versions ...] [--publish]  # engine versions
    python benchmarks/mujoco.py sb3 [--algo --env --seeds --steps]  # SAC/TD3 from SB3
    python benchmarks/mujoco.py nocontact [--algo --seeds --steps --tfinit]  # Ant as Ant-v2 ran
    python benchmarks/mujoco.py noclip [--algo --env --seeds --steps --tfinit]  # unclipped acts
    python benchmarks/mujoco.py tanheps [--env --seeds --steps]  # SAC's floored tanh correction
    python benchmarks/mujoco.py saturation [--algo --env --inits --seeds --steps] [--publish]

``run`` builds one ``ExperimentGrid`` per algorithm and part (tasks x seeds, every other
argument at the algorithm's default, ``steps_per_epoch`` 4000) and runs all of them through
the project's grid launcher (``--jobs`` here, ``--launcher ray`` on a cluster). It always
resumes: a run that finished in ``--data_dir`` is skipped, one with a checkpoint continues,
and a run whose finished copy is already committed under ``docs/benchmarks/mujoco/runs`` is
not run at all (so the command is safe to repeat on a new machine).

Scales (steps are environment interactions per run):

=========  ===========================  ========================  ======================
scale      on-policy (VPG, TRPO, PPO)   off-policy (DDPG/TD3/SAC)  long (SAC, TD3)
=========  ===========================  ========================  ======================
``here``   1M steps, seeds 0 1 2        300k steps, seeds 0 1     1M, seed 0, 3 tasks
``spec``   3M steps, seeds 0 1 2        3M steps, seeds 0..9      (part of ``offpolicy``)
=========  ===========================  ========================  ======================

A long run continues the finished 300k run of its seed (same arguments but ``epochs``;
resuming is exact), so within one command the long part runs after the others.

``--scale spec`` is days of compute for one core per run: it is meant for a cluster
(``--launcher ray --ray_address ...``); its runs go to a separate tree (``spec_`` names).
``collect`` copies each finished run's ``progress.txt`` and ``config.json`` (nothing else)
to ``docs/benchmarks/mujoco/runs/<scale>/<algo>/<task>/s<seed>/``; ``report`` draws the
figures with the project's plotter and writes the tables the docs page includes.
Only a publish step writes the evidence: every subcommand that produces a file of the page
(``collect``, ``verify``, ``report``, ``speed``, ``physics``, ``saturation`` and the gap
experiments) writes it under ``--data_dir`` (the same relative path as in the repository)
unless given ``--publish``, so a try-out with other flags never changes the repository. A
publish from a partial selection adds to the committed record and never drops the rest of
it (``verify --publish`` on a few runs adds them to ``verified.json``).
"""
import argparse
import contextlib
import json
import os
import os.path as osp
import re
import shlex
import shutil
import subprocess
import sys

HERE = osp.dirname(osp.abspath(__file__))
# Run as a script, this file's folder comes first on sys.path, where its own name would
# hide the ``mujoco`` package from gymnasium: take the folder off the path.
sys.path[:] = [p for p in sys.path if osp.abspath(p or ".") != HERE]
ROOT = osp.dirname(HERE)
PAGE_DIR = osp.join(ROOT, "docs", "benchmarks", "mujoco")
RUNS_DIR = osp.join(PAGE_DIR, "runs")
REF_DIR = osp.join(PAGE_DIR, "reference")
IMAGE_DIR = osp.join(ROOT, "docs", "images")
DEFAULT_DATA = osp.expanduser("~/spinup-mujoco")


def _target(args, committed_dir, *parts):
    """Where a subcommand writes ``parts``: the committed ``committed_dir`` with
    ``--publish``, else the same relative path under ``--data_dir``."""
    if getattr(args, "publish", False):
        return osp.join(committed_dir, *parts)
    rel = osp.relpath(committed_dir, ROOT)
    if rel.startswith(".."):        # a committed_dir outside the checkout (the tests')
        rel = osp.basename(committed_dir)
    return osp.join(args.data_dir, rel, *parts)


def _write_text(path, lines):
    """Write ``lines`` to ``path`` (its folder created if needed)."""
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
STEPS_PER_EPOCH = 4000

ON_POLICY = ["vpg", "trpo", "ppo"]
OFF_POLICY = ["ddpg", "td3", "sac"]
TASKS = ["HalfCheetah", "Hopper", "Walker2d", "Swimmer", "Ant"]
LONG_TASKS = ["HalfCheetah", "Hopper", "Walker2d"]
#: PPO on Humanoid, against the reference's Humanoid-v2 PPO curves (its own part).
HUMANOID = "Humanoid"
ALL_TASKS = TASKS + [HUMANOID]

# part -> (algorithms, tasks, seeds, steps), for each scale
SCALES = {
    "here": {
        "onpolicy": (ON_POLICY, TASKS, [0, 1, 2], 1_000_000),
        "offpolicy": (OFF_POLICY, TASKS, [0, 1], 300_000),
        "long": (["sac", "td3"], LONG_TASKS, [0], 1_000_000),
        "humanoid": (["ppo"], [HUMANOID], [0, 1, 2], 1_000_000),
    },
    "spec": {
        "onpolicy": (ON_POLICY, TASKS, [0, 1, 2], 3_000_000),
        "offpolicy": (OFF_POLICY, TASKS, list(range(10)), 3_000_000),
    },
}


def grid_name(scale, part, algo):
    """The grid's name, which is also the first part of every run directory's name."""
    suffix = {"onpolicy": "", "offpolicy": "", "long": "-1m", "humanoid": ""}[part]
    return ("spec_" if scale == "spec" else "") + algo + suffix


def committed_dir(scale, part, algo, task, seed):
    """Where ``collect`` puts one run's files in the repository."""
    return osp.join(RUNS_DIR, scale, grid_name("here", part, algo), task, f"s{seed}")


def _rows(run_dir):
    """Rows (epochs) in ``run_dir``'s progress.txt; 0 if it has none."""
    from spinup.machinery.run_dir import _count_rows
    return _count_rows(run_dir)


def _commit_run(src, dst):
    """Copy a finished run's progress.txt, config.json and provenance.json (nothing else)
    to ``dst``; the config's ``output_dir`` loses the machine's part of the path."""
    from spinup.machinery.run_dir import read_run_config
    os.makedirs(dst, exist_ok=True)
    shutil.copyfile(osp.join(src, "progress.txt"), osp.join(dst, "progress.txt"))
    if osp.exists(osp.join(src, "provenance.json")):
        shutil.copyfile(osp.join(src, "provenance.json"), osp.join(dst, "provenance.json"))
    config = read_run_config(src)
    _write_config(osp.join(dst, "config.json"), _without_machine_paths(config))
    print(f"collected {dst}")


def _without_machine_paths(config):
    """``config`` with ``logger_kwargs.output_dir`` cut to its last two parts
    (``<experiment>/<run>``, as under any ``--data_dir``): a committed file names no
    directory of the machine that made it."""
    out = dict(config)
    lk = out.get("logger_kwargs")
    if isinstance(lk, dict) and isinstance(lk.get("output_dir"), str) \
            and osp.isabs(lk["output_dir"]):
        parts = osp.normpath(lk["output_dir"]).split(os.sep)
        out["logger_kwargs"] = dict(lk, output_dir="/".join(parts[-2:]))
    return out


def _write_config(path, config):
    """config.json in the Logger's own layout."""
    from spinup.machinery.serialization_utils import config_text as _config_text
    with open(path, "w") as f:
        f.write(_config_text(config))


def plan(scale, parts, algos=None, tasks=None, only_seeds=None, extra_seeds=()):
    """Every run of the chosen parts: a list of dicts (scale, part, algo, task, seed, epochs).

    ``algos``, ``tasks`` and ``only_seeds`` narrow the selection when given;
    ``extra_seeds`` are run in addition to the scale's seeds (more seeds for a cell whose
    spread decides whether it is a gap: the table uses every committed seed)."""
    out = []
    for part in parts:
        if part not in SCALES[scale]:
            continue
        part_algos, part_tasks, seeds, steps = SCALES[scale][part]
        # seed slowest: every algorithm and task gets a first seed early
        for seed in list(seeds) + [s for s in extra_seeds if s not in seeds]:
            if only_seeds is not None and seed not in only_seeds:
                continue
            for algo in part_algos:
                if algos and algo not in algos:
                    continue
                for task in part_tasks:
                    if tasks and task not in tasks:
                        continue
                    out.append(dict(scale=scale, part=part, algo=algo, task=task, seed=seed,
                                    epochs=steps // STEPS_PER_EPOCH))
    return out


def cmd_run(args):
    """Run the selected parts of the protocol (described at the top of
    benchmarks/mujoco.py): a run already finished is skipped, one with a checkpoint
    continues from it."""
    selected = plan(args.scale, args.part, args.algos, args.envs, args.seeds,
                    getattr(args, "extra_seeds", None) or ())
    if not selected:
        raise ValueError(f"run: --scale {args.scale} --part {' '.join(args.part)} with these "
                         "--algos/--envs/--seeds selects no run (at --scale spec the long "
                         "runs are part of offpolicy)")
    todo = [r for r in selected
            if _rows(committed_dir(**{k: r[k] for k in
                                      ("scale", "part", "algo", "task", "seed")})) < r["epochs"]]
    if not todo:
        print("mujoco: every run of this selection is finished and committed; nothing to do")
        return 0
    if args.launcher == "local" and isinstance(args.jobs, int):
        # Checked here rather than left to the grid launcher, whose refusal suggests
        # --cpu and --oversubscribe, options of spinup.run that this command lacks.
        from spinup.machinery.cores import available_cores
        cores = available_cores()
        if args.jobs > cores:
            raise ValueError(f"run: --jobs {args.jobs} is more than the {cores} CPU cores "
                             f"available here; give --jobs {cores} or fewer (or auto)")
    # The long runs continue finished 300k runs (see _start_long_runs): they are planned
    # only after the other parts of the selection are done.
    for phase in ([r for r in todo if r["part"] != "long"],
                  [r for r in todo if r["part"] == "long"]):
        if phase:
            _run_phase(args, phase)
    return 0


def _run_phase(args, todo):
    """Run the plan entries ``todo`` as one call of the grid launcher."""
    import spinup
    from spinup.launch import grid_launch
    from spinup.launch.run_utils import plan_runs
    runs = []
    groups = {}
    for r in todo:
        groups.setdefault((r["part"], r["algo"]), []).append(r)
    for (part, algo), members in groups.items():
        fn = getattr(spinup, algo)
        variants, names = _grid(args.scale, part, algo, members)
        if part == "long":
            _start_long_runs(fn, args.scale, algo, variants, names, args.data_dir)
        runs += plan_runs(fn, variants, names, args.data_dir, resume=True)
    order = {(grid_name(args.scale, r["part"], r["algo"]), r["seed"], r["task"]): i
             for i, r in enumerate(todo)}
    runs.sort(key=lambda run: order.get(_key_of(run), 0))
    with contextlib.redirect_stdout(_InHarnessTerms(sys.stdout, _command_line(args))):
        grid_launch.run_grid(runs, jobs=args.jobs, launcher=args.launcher,
                             ray_address=args.ray_address)


def _command_line(args):
    """The command line that gave ``args`` (``main`` records it), to be given again."""
    return getattr(args, "command_line", None) or "python benchmarks/mujoco.py run ..."


# The grid launcher and the checks it calls word their advice for ``python -m spinup.run``
# (--resume, --exp_name, --overwrite, ...). This harness has none of those options: giving
# the same command again skips the finished runs and continues the others, and a run that
# cannot be continued must be moved out of --data_dir. Each pair: the launcher's words (a
# regular expression) and this harness's; "{command}" is the command line to repeat.
_MOVE_IT = ("move that directory out of --data_dir (or delete it) and give the same "
            "command to start the run again")
_LAUNCHER_ADVICE = (
    (r"Continue the grid with the same command and --resume \(Python: resume=True\)\.",
     "Continue with the same command (finished runs are skipped, the others go on from "
     "their last checkpoint): {command}"),
    (r"the same command with --resume \(Python: resume=True\) continues it\.",
     "the same command continues it: {command}"),
    (r"^--resume: ", ""),
    (r"\. Only --epochs, --device and --cuda_graph may change: give the original values, "
     r"or a new --exp_name for a new run", "; " + _MOVE_IT),
    (r"Give a new --exp_name, or delete the directory to start it again",
     _MOVE_IT[0].upper() + _MOVE_IT[1:]),
    (r"Choose a new --exp_name, add --dt for date-stamped directories, or pass --overwrite "
     r"\(Python: [^)]*\)\.", _MOVE_IT[0].upper() + _MOVE_IT[1:] + "."),
)


def in_harness_terms(text, command):
    """``text`` (a message of the grid launcher) with its advice reworded for this harness:
    the options it names are replaced by what works here, ``command`` being the command
    line to give again."""
    for pattern, words in _LAUNCHER_ADVICE:
        text = re.sub(pattern, lambda m: words.replace("{command}", command), text,
                      flags=re.MULTILINE)
    return text


class _InHarnessTerms:
    """A stream that writes to ``stream`` what it is given, in harness terms
    (:func:`in_harness_terms`): stdout while the grid launcher prints. Each piece of
    advice is one ``print``, so one ``write``."""

    def __init__(self, stream, command):
        self._stream, self._command = stream, command

    def write(self, text):
        return self._stream.write(in_harness_terms(text, self._command))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _grid(scale, part, algo, members):
    """One ExperimentGrid for the runs ``members`` of one part and algorithm.

    Returns the variants (task x seed, every other argument at its default but
    ``epochs`` and ``steps_per_epoch``) and their names, which are the grid's own."""
    from spinup.launch.run_utils import ExperimentGrid
    eg = ExperimentGrid(name=grid_name(scale, part, algo))
    eg.add("env_name", sorted({f"{m['task']}-v5" for m in members}), "", in_name=True)
    eg.add("seed", sorted({m["seed"] for m in members}))
    eg.add("epochs", members[0]["epochs"])
    eg.add("steps_per_epoch", STEPS_PER_EPOCH)
    wanted = {(f"{m['task']}-v5", m["seed"]) for m in members}
    variants = [v for v in eg.variants() if (v["env_name"], v["seed"]) in wanted]
    return variants, [eg.variant_name(v) for v in variants]


def _start_long_runs(fn, scale, algo, variants, names, data_dir):
    """Start each long run (1M steps) from the finished 300k run of the same seed.

    The two runs have the same arguments but ``epochs``, and resuming a run is exact
    (``tests/test_resume.py``), so the 300k run continued to 1M is the 1M run a fresh
    start would give, 300k steps sooner. Only a 300k run that finished (its checkpoint
    is at its last epoch) is used; otherwise the long run starts from scratch.
    """
    from spinup.machinery.checkpoint import checkpoint_path, load_checkpoint
    from spinup.launch.run_utils import plan_runs
    short_epochs = SCALES[scale]["offpolicy"][3] // STEPS_PER_EPOCH
    long_runs = plan_runs(fn, variants, names, data_dir)
    short_runs = plan_runs(fn, [dict(v, epochs=short_epochs) for v in variants],
                           _grid(scale, "offpolicy", algo, [
                               dict(task=v["env_name"][:-3], seed=v["seed"],
                                    epochs=short_epochs) for v in variants])[1], data_dir)
    for long, short in zip(long_runs, short_runs):
        if osp.exists(long.output_dir) or not osp.exists(checkpoint_path(short.output_dir)):
            continue
        if int(load_checkpoint(short.output_dir, rank=0)["epoch"]) != short_epochs:
            continue
        continue_run(short.output_dir, long.output_dir, long.kwargs["epochs"],
                     long.kwargs["logger_kwargs"]["exp_name"])
        print(f"{long.label}: starts from {short.output_dir} (epoch {short_epochs})")


def continue_run(src, dst, epochs, exp_name):
    """Copy the run directory ``src`` to ``dst`` as a run of ``epochs`` epochs named
    ``exp_name``, to be resumed there (``resume=True``).

    ``config.json`` gets the new ``epochs``, ``exp_name`` and output directory, and
    ``_continued_from`` names ``src``; everything else (checkpoint, rows) is copied
    as it is. Raises FileExistsError if ``dst`` exists.
    """
    from spinup.machinery.run_dir import read_run_config
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".spinup.lock"))
    path = osp.join(dst, "config.json")
    config = read_run_config(dst)
    config.update(epochs=epochs, exp_name=exp_name, _continued_from=osp.basename(src),
                  logger_kwargs=dict(config.get("logger_kwargs") or {},
                                     exp_name=exp_name, output_dir=dst))
    with open(path, "w") as f:
        f.write(json.dumps(config, separators=(",", ":\t"), indent=4, sort_keys=True))


def _key_of(run):
    exp = run.kwargs["logger_kwargs"]["exp_name"]
    task = run.kwargs["env_name"].split("-")[0]
    return exp.split("_")[0], run.kwargs["seed"], task


def cmd_collect(args):
    """Copy finished runs (all epochs logged) from ``--data_dir`` into the repository
    (seeds 0-9 of the ``here`` scale: its own and any ``run --extra_seeds``)."""
    from spinup.launch.run_utils import valid_str
    copied = 0
    for r in (plan("here", list(SCALES["here"]), extra_seeds=range(10))
              + plan("spec", list(SCALES["spec"]))):
        name = grid_name(r["scale"], r["part"], r["algo"])
        exp = valid_str(f"{name}_{r['task']}-v5")   # as ExperimentGrid names it
        src = osp.join(args.data_dir, exp, f"{exp}_s{r['seed']}")
        dst = committed_dir(r["scale"], r["part"], r["algo"], r["task"], r["seed"])
        if _rows(src) < r["epochs"] or _rows(dst) >= r["epochs"]:
            continue
        if getattr(args, "publish", False):
            _commit_run(src, dst)
        else:
            print(f"finished, not yet committed: {src}")
        copied += 1
    if getattr(args, "publish", False):
        print(f"mujoco: {copied} new finished run(s) copied to {osp.relpath(RUNS_DIR, ROOT)}")
    else:
        print(f"mujoco: {copied} finished run(s) to copy; --publish copies them to "
              f"{osp.relpath(RUNS_DIR, ROOT)}")
    return 0


# ---- verify: the committed runs are what the code gives on this machine ----

#: Which machine reproduces the committed runs: the numbers signature
#: (spinup.machinery.provenance) of a machine on which ``verify --record`` found every first
#: epoch it reran equal to the committed row, digit for digit. The runs themselves were
#: made before runs recorded their provenance.
VERIFIED = osp.join(RUNS_DIR, "here", "verified.json")


def first_epoch(run_dir, out_dir):
    """Rerun the first epoch of the committed run in ``run_dir`` with its task, seed and
    epoch size (every other argument at the algorithm's default, as ``run`` made it).

    Returns:
        (committed, rerun): the two first rows as pandas Series, ``Time`` dropped.
    """
    import gymnasium as gym
    import pandas as pd

    import spinup
    from spinup.machinery.run_dir import read_run_config, saved_env_id
    config = read_run_config(run_dir)
    env_id = saved_env_id(config)
    getattr(spinup, config["_algorithm"])(
        lambda: gym.make(env_id), seed=config["seed"], epochs=1,
        steps_per_epoch=config["steps_per_epoch"],
        logger_kwargs=dict(output_dir=out_dir, exp_name="rerun"))
    committed = pd.read_table(osp.join(run_dir, "progress.txt")).iloc[0]
    rerun = pd.read_table(osp.join(out_dir, "progress.txt")).iloc[0]
    return committed.drop("Time"), rerun.drop("Time")


def cmd_verify(args):
    """Rerun epoch 1 of each selected committed run (``here`` scale) and compare it with
    the committed row exactly. With ``--record``, when all agree, write this machine's
    numbers signature and the runs checked to ``runs/here/verified.json``."""
    import datetime
    import tempfile

    import numpy as np

    from spinup.machinery.provenance import numbers_signature, provenance
    runs = [r for r in plan("here", ["onpolicy", "offpolicy"], args.algos, args.envs,
                            only_seeds=args.seeds, extra_seeds=range(10))
            if _rows(committed_dir("here", r["part"], r["algo"], r["task"], r["seed"]))]
    if not runs:
        raise ValueError("verify: no committed run matches --algos/--envs/--seeds")
    checked, differ = [], []
    for r in runs:
        src = committed_dir("here", r["part"], r["algo"], r["task"], r["seed"])
        with tempfile.TemporaryDirectory() as out:
            committed, rerun = first_epoch(src, out)
        same = np.array_equal(committed.to_numpy(float), rerun.to_numpy(float), equal_nan=True)
        name = osp.relpath(src, osp.join(RUNS_DIR, "here"))
        (checked if same else differ).append(name)
        where = ", ".join(committed.index[committed.ne(rerun)])
        print(f"{name:24s} {'equal' if same else 'DIFFERS in ' + where}", flush=True)
    print(f"mujoco verify: {len(checked)} of {len(runs)} first epochs equal to the committed rows")
    if args.publish and not differ:
        signature = numbers_signature(provenance())
        old = {}
        if osp.exists(VERIFIED):
            with open(VERIFIED) as f:
                old = json.load(f)
        if old and old.get("signature") == signature:
            checked = sorted(set(old.get("runs", [])) | set(checked))   # add, drop nothing
        elif old and set(old.get("runs", [])) - set(checked):
            print("mujoco verify: the record is of another machine and this selection does "
                  f"not rerun all {len(old['runs'])} of its runs: nothing recorded (verify "
                  "every committed run, without --algos/--envs/--seeds, to replace it)")
            return 1
        with open(VERIFIED, "w") as f:
            json.dump(dict(signature=signature, cpu=provenance()["cpu"],
                           date=datetime.date.today().isoformat(), runs=sorted(checked),
                           command=getattr(args, "command_line",
                                           "python benchmarks/mujoco.py verify --publish")),
                      f, indent=4, sort_keys=True)
            f.write("\n")
        print(f"mujoco verify: wrote {osp.relpath(VERIFIED, ROOT)} ({len(checked)} runs)")
    elif args.publish:
        print("mujoco verify: some rows differ: nothing recorded")
    return 1 if differ else 0


# ---- report: figures and tables ----

def _load(scale="here"):
    """All committed runs as one pandas table: algo, task, seed, steps, perf, Time."""
    import pandas as pd
    frames = []
    base = osp.join(RUNS_DIR, scale)
    for algo in sorted(os.listdir(base)) if osp.isdir(base) else []:
        if not osp.isdir(osp.join(base, algo)):
            continue                # verified.json
        for task in sorted(os.listdir(osp.join(base, algo))):
            if not osp.isdir(osp.join(base, algo, task)):
                continue            # e.g. an experiment's patch next to its runs
            for sdir in sorted(os.listdir(osp.join(base, algo, task))):
                t = pd.read_table(osp.join(base, algo, task, sdir, "progress.txt"))
                perf = "AverageTestEpRet" if "AverageTestEpRet" in t else "AverageEpRet"
                frames.append(pd.DataFrame(dict(
                    algo=algo, task=task, seed=int(sdir[1:]), steps=t["TotalEnvInteracts"],
                    perf=t[perf], time=t["Time"])))
    return pd.concat(frames, ignore_index=True) if frames else None


def _load_reference():
    import pandas as pd
    ref = pd.read_table(osp.join(REF_DIR, "spinningup-mujoco-3M.tsv"))
    ref["task"] = ref["env"].str.replace("-v2", "", regex=False)
    ref["perf"] = ref["AverageTestEpRet"].where(ref["algo"] != "ppo", ref["AverageEpRet"])
    return ref.rename(columns={"TotalEnvInteracts": "steps"})


GRID = 20_000     # the reference keeps one evaluation every 20k steps


def _on_grid(table, algo):
    """The rows at the reference's evaluation points: every 20k steps, from 4k steps for
    the on-policy algorithms (its PPO rows are epochs 0, 5, 10, ...: 4000, 24000, ...) and
    from 20k for the off-policy ones (its rows say 19999, 39999, ...; ours 20000, 40000).
    Comparing only these points applies one estimator to both data sets."""
    offset = 4000 if algo.split("-")[0] in ON_POLICY else 0
    rounded = (table["steps"] + 1) // 1000 * 1000
    return table[rounded % GRID == offset].assign(steps=rounded)


def _at(table, steps, algo, window=60_000):
    """Each seed's mean performance over its three grid points in (steps - window, steps];
    None if the runs have not reached ``steps``."""
    grid = _on_grid(table, algo)
    near = grid[(grid["steps"] > steps - window) & (grid["steps"] <= steps)]
    if near.empty or table["steps"].max() < steps - 1:
        return None
    return near.groupby("seed")["perf"].mean()


def _cell(values):
    """"mean ± s (seeds)" of per-seed values, s the sample standard deviation (divisor
    n - 1; one seed has none); a seed without a value (the reference TSV has a few blank
    evaluations) is not counted."""
    if values is None:
        return "--"
    values = values.dropna()
    if len(values) < 2:
        return f"{values.mean():.0f} ({len(values)})"
    return f"{values.mean():.0f} ± {values.std(ddof=1):.0f} ({len(values)})"


#: Seeds of ours a cell needs before the table gives it a verdict: inside, below or above.
SEEDS_TO_DECIDE = 5
#: The rule, in the words the table's caption and claims.json use.
RULE = (f"with at least {SEEDS_TO_DECIDE} of our seeds: 'inside', 'below' or 'above', where "
        "our mean lies against the reference's band (its mean ± its sample standard "
        f"deviation); with fewer: 'consistent with the band (n seeds)' for a mean inside it, "
        "else 'undecided (side, n seeds)'; the same rule for every side")


def _seeds(n):
    return f"{n} seed{'s' if n != 1 else ''}"


def _verdict(ours, theirs):
    """Our per-seed values against the reference's band (its mean ± its sample standard
    deviation), by :data:`RULE`: "inside", "below" or "above" with at least
    :data:`SEEDS_TO_DECIDE` seeds; "consistent with the band (n seeds)" or
    "undecided (side, n seeds)" with fewer; "--" without data."""
    if ours is None or theirs is None or len(theirs.dropna()) < 2:
        return "--"
    ours, theirs = ours.dropna(), theirs.dropna()
    low = theirs.mean() - theirs.std(ddof=1)
    high = theirs.mean() + theirs.std(ddof=1)
    side = "below" if ours.mean() < low else "above" if ours.mean() > high else "inside"
    if len(ours) >= SEEDS_TO_DECIDE:
        return side
    if side == "inside":
        return f"consistent with the band ({_seeds(len(ours))})"
    return f"undecided ({side}, {_seeds(len(ours))})"


def welch(a, b):
    """Welch's unequal-variances t-test of two samples (each of >= 2 values): ``(t, df,
    p)``, t positive when ``a``'s mean is the larger, df by Welch-Satterthwaite, p
    two-sided. None when a sample has fewer than two values."""
    import numpy as np
    from scipy import stats
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    t = (a.mean() - b.mean()) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return float(t), float(df), float(2 * stats.t.sf(abs(t), df))


def _summary(values):
    """n, mean, sample sd (None for one value), and the values by seed, unrounded."""
    if values is None:
        return None
    values = values.dropna()
    return dict(n=int(len(values)), mean=float(values.mean()),
                sd=float(values.std(ddof=1)) if len(values) > 1 else None,
                by_seed={str(int(k)): float(v) for k, v in values.items()})


def table_cells(ours, ref):
    """Every cell of the performance table: a list of dicts (algo, task, mark, ours,
    reference, verdict, welch), the values unrounded; the table and claims.json are both
    written from this one list."""
    cells = []
    for algo in ON_POLICY + OFF_POLICY:
        for task in TASKS + ([HUMANOID] if algo == "ppo" else []):
            theirs = ref[(ref.algo == algo) & (ref.task == task)]
            for steps in (300_000, 1_000_000):
                # 1M steps of TD3 and SAC come from the long part (seed 0 only).
                name = algo + "-1m" if algo in ("sac", "td3") and steps > 300_000 else algo
                mine = ours[(ours.algo == name) & (ours.task == task)]
                a, b = _at(mine, steps, algo), _at(theirs, steps, algo)
                test = welch(a.dropna(), b.dropna()) if a is not None and b is not None \
                    else None
                cells.append(dict(
                    algo=algo, task=task, mark=f"{steps // 1000}k" if steps < 1_000_000
                    else "1M", ours=a, reference=None if theirs.empty else b,
                    verdict=_verdict(a, b) if not theirs.empty else "n/a",
                    welch=None if test is None else dict(zip(("t", "df", "p"), test))))
    return cells


def _write_claims(ours, ref, path):
    """claims.json: what the page's prose may quote about each cell (verdict, seeds,
    means, Welch's test against the reference), unrounded; tests/docs/test_mujoco_claims.py
    checks every quoting sentence against it."""
    out = dict(rule=RULE, seeds_to_decide=SEEDS_TO_DECIDE,
               command="python benchmarks/mujoco.py report --publish", cells={})
    for c in table_cells(ours, ref):
        out["cells"][f"{c['algo']} {c['task']} {c['mark']}"] = dict(
            verdict=c["verdict"], ours=_summary(c["ours"]),
            reference=_summary(c["reference"]), welch=c["welch"])
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def cmd_report(args):
    """Write docs/benchmarks/mujoco/{table,status,experiments,hours}.inc and one figure per
    task (docs/images/mujoco_<task>.png) from the committed runs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    from spinup.utils.plot import get_datasets, plot_data

    ours, ref = _load(), _load_reference()
    if ours is None:
        print("mujoco: no committed runs yet")
        return 1
    lines = [".. list-table:: Performance at 300k and 1M steps: mean ± sample standard "
             "deviation over seeds (number of seeds) of each seed's mean over its three "
             "evaluations in the 60k steps up to the mark; ours on ``-v5``, Spinning Up's on "
             f"``-v2``; 'against band', {RULE}",
             "   :header-rows: 1", "", "   * - algorithm", "     - task",
             "     - ours 300k", "     - reference 300k", "     - against band 300k",
             "     - ours 1M", "     - reference 1M", "     - against band 1M"]
    below = []
    cells = table_cells(ours, ref)
    for i in range(0, len(cells), 2):          # one row: the 300k and the 1M cell
        row = [cells[i]["algo"].upper(), cells[i]["task"]]
        for c in cells[i:i + 2]:
            no_ref = c["verdict"] == "n/a"
            row += [_cell(c["ours"]), "n/a" if no_ref else _cell(c["reference"]),
                    c["verdict"]]
            if c["verdict"] not in ("inside", "--", "n/a"):
                below.append(f"{c['algo']} {c['task']} {c['mark']}: {c['verdict']}")
        lines += ["   * - " + row[0]] + ["     - " + x for x in row[1:]]
    _write_text(_target(args, PAGE_DIR, "table.inc"), lines)
    print("not inside the reference band:", "; ".join(below) or "none")
    _write_claims(ours, ref, _target(args, PAGE_DIR, "claims.json"))
    _write_status(ours, _target(args, PAGE_DIR, "status.inc"))
    _write_experiments(ours, ref, _target(args, PAGE_DIR, "experiments.inc"))
    _write_hours(ours, _target(args, PAGE_DIR, "hours.inc"))

    def runs(directory, algo, end):
        """The runs below ``directory`` on the reference's 20k grid up to ``end`` steps (the
        same points the table uses, for ours and the reference alike), runs without a
        value there left out."""
        out = []
        for t in get_datasets(directory, condition="run") if osp.isdir(directory) else []:
            t = _on_grid(t.assign(steps=t["TotalEnvInteracts"]), algo)
            t = t[(t["steps"] <= end) & t["Performance"].notna()]
            if not t.empty:
                out.append(t.assign(TotalEnvInteracts=t["steps"]))
        return out

    def seeds(n):
        return f"{n} seed" + ("" if n == 1 else "s")

    # One figure per task, one panel per row, each with its own steps and legend:
    # the on-policy runs (1M steps), the off-policy runs (300k) and, once committed, the
    # seed-0 runs of TD3 and SAC carried on to 1M. Curves drawn by spinup.utils.plot.
    for task in ALL_TASKS:
        long = [a for a in ("td3", "sac")
                if osp.isdir(osp.join(RUNS_DIR, "here", a + "-1m", task))]
        panels = [(f"{task}-v5, on-policy: return of the training episodes",
                   ON_POLICY, [(a, a) for a in ON_POLICY], 1_000_000),
                  (f"{task}-v5, off-policy: return of the test episodes (300k-step runs)",
                   OFF_POLICY, [(a, a) for a in OFF_POLICY], 300_000)]
        if task == HUMANOID:   # the humanoid part: PPO alone
            if not osp.isdir(osp.join(RUNS_DIR, "here", "ppo", task)):
                continue
            panels = [(f"{task}-v5: PPO, return of the training episodes", ON_POLICY,
                       [("ppo", "ppo")], 1_000_000)]
        if long:
            panels.append((f"{task}-v5, off-policy: the seed-0 runs carried on to 1M steps",
                           OFF_POLICY, [(a, a + "-1m") for a in long], 1_000_000))
        with sns.axes_style("darkgrid"):
            fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 2.8 * len(panels)),
                                     squeeze=False)
        for ax, (title, algos, members, end) in zip(axes[:, 0], panels):
            curves = []
            for algo, variant in members:
                for label, data, dashed in (
                        (f"spinup {algo}" + (", 1M run" if variant != algo else ""),
                         runs(osp.join(RUNS_DIR, "here", variant, task), algo, end), False),
                        (f"Spinning Up {algo}, -v2",
                         runs(osp.join(REF_DIR, "runs", algo, task), algo, end), True)):
                    if not data:
                        continue
                    label = f"{label} ({seeds(len(data))})"
                    data = [t.assign(Condition1=label) for t in data]
                    n_lines, n_bands = len(ax.get_lines()), len(ax.collections)
                    plot_data(data, xaxis="TotalEnvInteracts", value="Performance",
                              smooth=3, ax=ax)
                    # one call, one curve: its line and (with seeds to spread) its band
                    line = ax.get_lines()[n_lines]
                    bands = ax.collections[n_bands:]
                    curves.append((label, line, bands, f"C{algos.index(algo)}", dashed))
            _restyle(ax, curves, title, end)
        fig.tight_layout(h_pad=1.2)
        figure = _target(args, IMAGE_DIR, f"mujoco_{task.lower()}.png")
        os.makedirs(osp.dirname(figure), exist_ok=True)
        fig.savefig(figure, dpi=150)
        plt.close(fig)
    return 0


def _restyle(ax, curves, title, end):
    """One colour per algorithm, the reference's curves dashed; the legend outside the
    plotted area (right of it), so that it hides no curve; steps written as 100k, 1M.

    ``curves``: (label, line, bands, colour, dashed) for each curve drawn on ``ax``."""
    from matplotlib.ticker import FuncFormatter
    for label, line, bands, colour, dashed in curves:
        line.set_color(colour)
        line.set_linestyle("--" if dashed else "-")
        line.set_linewidth(1.6)
        line.set_label(label)
        for band in bands:
            band.set_facecolor(colour)
            band.set_alpha(0.15)
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    ax.legend(handles=[c[1] for c in curves], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=10, frameon=False, handlelength=2.4, borderaxespad=0.0)
    ax.set_xlim(0, end)
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda x, _: "0" if x == 0 else f"{x / 1e6:g}M" if x >= 1e6 else f"{x / 1e3:g}k"))
    ax.set_title(title, fontsize=11, loc="left")
    ax.set_xlabel("environment steps", fontsize=10)
    ax.set_ylabel("return", fontsize=10)
    ax.tick_params(labelsize=10)


def cmd_speed(args):
    """Hours per 1M steps of each algorithm, measured one run at a time (idle machine only).

    Each algorithm runs ``--epochs`` epochs of its defaults on ``--env`` with one torch
    thread; the speed is taken from the ``Time`` column over the last two epochs, where
    the off-policy algorithms already update (``start_steps`` 10000 = 2.5 epochs) and
    run their 10 test episodes, as in every later epoch of a real run.
    """
    import tempfile

    import gymnasium as gym
    import pandas as pd
    import torch

    import spinup
    torch.set_num_threads(1)
    lines = [".. list-table:: Hours per 1M environment steps, one run alone on an idle core "
             f"({args.env}-v5, defaults; ``python benchmarks/mujoco.py speed --write-docs``)",
             "   :header-rows: 1", "", "   * - algorithm", "     - hours per 1M steps"]
    for algo in args.algos or ON_POLICY + OFF_POLICY:
        with tempfile.TemporaryDirectory() as out:
            getattr(spinup, algo)(lambda: gym.make(f"{args.env}-v5"), seed=0,
                                  epochs=args.epochs, logger_kwargs=dict(output_dir=out))
            t = pd.read_table(osp.join(out, "progress.txt"))
        seconds = (t["Time"].iloc[-1] - t["Time"].iloc[-3]) / 2
        hours = seconds / STEPS_PER_EPOCH * 1e6 / 3600
        print(f"{algo}: {hours:.2f} h per 1M steps", flush=True)
        lines += [f"   * - {algo.upper()}", f"     - {hours:.2f}"]
    path = _target(args, PAGE_DIR, "speed.inc")
    _write_text(path, lines)
    print(f"mujoco speed: wrote {path}")
    return 0


def cmd_tfinit(args):
    """The initialisation experiment for a gap: ``--algo`` with TensorFlow 1's default
    layer initialisation instead of PyTorch's, everything else as in the benchmark.

    Spinning Up's reference runs were made with TensorFlow, whose dense layers start with
    Glorot-uniform weights (bound sqrt(6 / (fan_in + fan_out))) and zero biases; PyTorch's
    ``nn.Linear`` starts with weights and biases uniform in +-1/sqrt(fan_in). This runs the
    algorithm with an ``actor_critic`` that re-initialises every ``nn.Linear`` of the
    default one the TensorFlow way, one seed after another (each resumable), and copies each
    finished run to ``docs/benchmarks/mujoco/runs/experiments/<algo>-tfinit/<task>/s<seed>``.
    """
    return _run_variant(args, "tfinit", _tf_init(args.algo))


def _tf_init(algo):
    """``algo``'s default actor-critic class with every ``nn.Linear`` re-initialised as
    TensorFlow 1 does: Glorot-uniform weights, zero biases."""
    import importlib

    from torch import nn
    base = importlib.import_module(f"spinup.algos.{algo}.core").MLPActorCritic

    class TFInitActorCritic(base):
        """The default actor-critic with every linear layer initialised as TF1 does."""

        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)
                    nn.init.zeros_(m.bias)

    return TFInitActorCritic


def cmd_tanheps(args):
    """The saturation-price experiment for a SAC gap: SAC's log-probability with the
    tanh correction ``log(1 - tanh(u)^2 + 1e-6)`` (Stable-Baselines3's form) instead of the
    exact ``2 (log 2 - u - softplus(-2u))`` (this project's and the reference's form).

    The two agree while ``|u|`` is small; for a saturated action the exact correction keeps
    growing (about ``2|u|``), the other stops at ``-log(1e-6)``, about 13.8 per action
    dimension, so a policy that pushes its actions to the bounds pays a bounded entropy
    price. Same weights, same random numbers as the default runs of the same seed (only the
    formula differs), so each seed is a paired comparison. Runs go to
    ``docs/benchmarks/mujoco/runs/experiments/sac-tanheps/<task>/s<seed>``."""
    import torch

    from spinup.algos.sac import core

    class EpsActor(core.SquashedGaussianMLPActor):
        """The default actor with the floored tanh correction."""

        def forward(self, obs, deterministic=False, with_logprob=True):
            features = self.net(obs)
            mu = self.mu_layer(features)
            log_std = self.log_std_layer(features).clamp(core.LOG_STD_MIN, core.LOG_STD_MAX)
            u = mu if deterministic else mu + log_std.exp() * torch.randn_like(mu)
            act = torch.tanh(u)
            if not with_logprob:
                return act, None
            gaussian = torch.distributions.Normal(mu, log_std.exp()).log_prob(u).sum(-1)
            return act, gaussian - torch.log(1 - act.pow(2) + 1e-6).sum(-1)

    class EpsActorCritic(core.MLPActorCritic):
        """The default actor-critic, its policy's log-probability as in ``EpsActor``."""

        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.pi.__class__ = EpsActor        # same module, same weights, new forward

    args.algo = "sac"
    return _run_variant(args, "tanheps", EpsActorCritic)


def _run_variant(args, label, actor_critic=None, env_kwargs=None, wrapper=None):
    """Run ``args.algo`` on ``args.env`` with ``actor_critic`` (default: the algorithm's
    own) and the task made with ``env_kwargs`` (default: none), wrapped in ``wrapper``
    (a gymnasium wrapper class; default: none) for ``args.steps`` steps,
    each seed of ``args.seeds`` in turn (resumable), every other argument as in the
    benchmark; copy each finished run to ``runs/experiments/<algo>-<label>/<task>/s<seed>``."""
    import functools

    import gymnasium as gym
    import torch

    import spinup
    from spinup.machinery.checkpoint import checkpoint_path
    torch.set_num_threads(1)
    epochs = args.steps // STEPS_PER_EPOCH
    for seed in args.seeds:
        name = f"{args.algo}-{label}_{args.env.lower()}-v5"
        out = osp.join(args.data_dir, "experiments", name, f"{name}_s{seed}")
        dst = osp.join(RUNS_DIR, "experiments", f"{args.algo}-{label}", args.env, f"s{seed}")
        if _rows(dst) >= epochs:
            continue
        if _rows(out) < epochs:
            make = functools.partial(gym.make, f"{args.env}-v5", **(env_kwargs or {}))
            getattr(spinup, args.algo)(
                make if wrapper is None else functools.partial(_wrapped, wrapper, make),
                seed=seed, **(dict(actor_critic=actor_critic) if actor_critic else {}),
                epochs=epochs, steps_per_epoch=STEPS_PER_EPOCH,
                logger_kwargs=dict(output_dir=out, exp_name=name,
                                   resume=osp.exists(checkpoint_path(out))))
        if args.publish:
            _commit_run(out, dst)
        else:
            print(f"finished in {out}; --publish copies it to {osp.relpath(dst, ROOT)}")
    return 0


def cmd_nocontact(args):
    """The task-version experiment for an Ant gap: ``--algo`` on Ant-v5 without the contact
    forces, as the reference's Ant-v2 ran under mujoco-py 2 (its contact forces were all
    zero there, so its contact cost was zero and 84 of its 111 observed numbers were zeros).

    Ant-v5 is made with ``contact_cost_weight=0`` (no contact cost in the reward) and
    ``include_cfrc_ext_in_observation=False`` (27 observed numbers: the positions and
    velocities, the same information the reference's policy had); everything else, the
    algorithm's arguments included, is as in the benchmark. Runs go to
    ``docs/benchmarks/mujoco/runs/experiments/<algo>-nocontact/Ant/s<seed>``.

    With ``--tfinit`` the layers also start as TensorFlow 1's do (see ``cmd_tfinit``): the
    reference's task and the reference's initialisation together. Those runs go to
    ``<algo>-nocontact-tfinit``."""
    return _run_variant(args, "nocontact-tfinit" if args.tfinit else "nocontact",
                        _tf_init(args.algo) if args.tfinit else None,
                        env_kwargs=dict(contact_cost_weight=0.0,
                                        include_cfrc_ext_in_observation=False))


def _wrapped(wrapper, make):
    return wrapper(make())


def cmd_noclip(args):
    """The scoring experiment for the on-policy cells above the band: ``--algo`` (PPO, VPG,
    TRPO) passing its Gaussian samples to the task unclipped, as Spinning Up's TF1 code did.

    Our on-policy algorithms clip each sampled action to the action box before ``env.step``.
    MuJoCo clamps a control to its range either way, so the motion is the same; what differs
    is the reward: the tasks charge a control cost on the action they are given
    (HalfCheetah 0.1, Ant 0.5 times its squared norm), and a sample beyond the box costs more
    unclipped. Here the task is wrapped by :func:`unbounded_actions`, so the algorithm's clip
    does nothing. With ``--tfinit`` the layers also start as TF1's do (larger initial means,
    so more samples beyond the box). Runs go to
    ``docs/benchmarks/mujoco/runs/experiments/<algo>-noclip[-tfinit]/<task>/s<seed>``."""
    return _run_variant(args, "noclip-tfinit" if args.tfinit else "noclip",
                        _tf_init(args.algo) if args.tfinit else None,
                        wrapper=unbounded_actions)


def unbounded_actions(env):
    """``env`` behind a gymnasium wrapper whose action space has the same shape and infinite
    bounds, so that an algorithm that clips to its env's bounds passes its actions on as
    they are."""
    import gymnasium as gym
    import numpy as np
    wrapped = gym.Wrapper(env)
    wrapped.action_space = gym.spaces.Box(-np.inf, np.inf, env.action_space.shape,
                                          env.action_space.dtype)
    return wrapped


def cmd_saturation(args):
    """The saturation count for a gap of a deterministic actor (DDPG, TD3): after a short
    run, how many seeds have an actor whose actions all sit at the bounds?

    These actors end in ``tanh``; once its inputs are large (|u| of 8 gives a slope of
    about 5e-7) the policy gradient through it vanishes and the actor cannot move again,
    whatever the critic learns. For each init of ``--inits`` (``default``: PyTorch's;
    ``tf``: TF1's, as in ``tfinit``) and each seed of ``--seeds``, this trains ``--algo``
    on ``--env`` for ``--steps`` steps (benchmark defaults otherwise, only the last model
    saved), then runs 5 deterministic episodes of the final policy (reset seeds
    1000-1004) and records their mean return and length, the share of actions within
    0.01 of a bound (|tanh(u)| > 0.99), and the median of |u| over the actions and
    dimensions. A seed counts
    as stuck when at least 99% of its actions are at a bound. Rows go to
    ``runs/experiments/saturation/<algo>-<task>.tsv`` (a seed already there is not run
    again); the table for the page to ``saturation.inc``. Both under ``--data_dir``
    unless ``--write-docs``."""
    import functools

    import gymnasium as gym
    import numpy as np
    import pandas as pd
    import torch

    import spinup
    torch.set_num_threads(1)
    runs_dir = _target(args, RUNS_DIR, "experiments", "saturation")
    table = osp.join(runs_dir, f"{args.algo}-{args.env}.tsv")
    rows = pd.read_table(table).to_dict("records") if osp.exists(table) else []
    for init in args.inits:
        for seed in args.seeds:
            if any((r["init"], r["seed"], r["steps"]) == (init, seed, args.steps) for r in rows):
                continue
            out = osp.join(args.data_dir, "experiments", "saturation",
                           f"{args.algo}-{init}_{args.env.lower()}-v5_s{seed}")
            shutil.rmtree(out, ignore_errors=True)      # a short run: start it over
            ac = getattr(spinup, args.algo)(
                functools.partial(gym.make, f"{args.env}-v5"), seed=seed,
                epochs=args.steps // STEPS_PER_EPOCH, steps_per_epoch=STEPS_PER_EPOCH,
                save_freq=10**9, logger_kwargs=dict(output_dir=out, exp_name="saturation"),
                **(dict(actor_critic=_tf_init(args.algo)) if init == "tf" else {}))
            before_tanh = ac.pi.pi[:-1]                 # the actor's layers up to its tanh
            env = gym.make(f"{args.env}-v5")
            low, high = env.action_space.low, env.action_space.high
            rets, lens, us = [], [], []
            for episode in range(5):
                obs, _ = env.reset(seed=1000 + episode)
                rets.append(0.0)
                for t in range(1000):
                    with torch.no_grad():
                        us.append(before_tanh(torch.as_tensor(obs, dtype=torch.float32)))
                    act = low + (torch.tanh(us[-1]).numpy() + 1) / 2 * (high - low)
                    obs, rew, term, trunc, _ = env.step(act)
                    rets[-1] += rew
                    if term or trunc:
                        break
                lens.append(t + 1)
            u = torch.stack(us).abs()
            row = dict(init=init, seed=seed, steps=args.steps, ret=np.mean(rets),
                       len=np.mean(lens),
                       at_bound=float((torch.tanh(u) > 0.99).float().mean()),
                       median_abs_u=float(u.median()))
            print(f"saturation {args.algo} {args.env} init {init} seed {seed}: " +
                  ", ".join(f"{k} {v:.3g}" for k, v in row.items()
                            if k not in ("init", "seed")))
            rows.append(row)
            os.makedirs(runs_dir, exist_ok=True)
            pd.DataFrame(rows).to_csv(table, sep="\t", index=False)
    _write_saturation(runs_dir, _target(args, PAGE_DIR, "saturation.inc"))
    return 0


def _write_saturation(runs_dir=None, inc=None):
    """saturation.inc (``inc``, default the page's): one line per (algorithm, task, init,
    steps) of the saturation count in ``runs_dir`` (default the committed rows): seeds,
    seeds stuck, and each seed's return / share of actions at a bound."""
    import glob

    import pandas as pd
    lines = [".. list-table:: Saturated actors: deterministic test episodes of the policy "
             "after a short run (5 episodes per seed)", "   :header-rows: 1", "",
             "   * - algorithm, task", "     - init", "     - steps", "     - seeds stuck",
             "     - per seed: return (share of actions at a bound)"]
    runs_dir = runs_dir or osp.join(RUNS_DIR, "experiments", "saturation")
    for path in sorted(glob.glob(osp.join(runs_dir, "*.tsv"))):
        algo, task = osp.basename(path)[:-4].split("-", 1)
        for (init, steps), g in pd.read_table(path).groupby(["init", "steps"], sort=False):
            g = g.sort_values("seed")
            lines += [f"   * - {algo.upper()}, {task}", f"     - {init}",
                      f"     - {steps // 1000}k",
                      f"     - {int((g.at_bound >= 0.99).sum())} of {len(g)}",
                      "     - " + ", ".join(f"s{s}: {r:.0f} ({b:.2f})" for s, r, b in
                                            zip(g.seed, g.ret, g.at_bound))]
    _write_text(inc or osp.join(PAGE_DIR, "saturation.inc"), lines)


# One engine's step from given states. Run in a subprocess whose path starts with one
# release of ``mujoco``: argv is the states file, the number of states and the tasks. The
# first call (the installed release) records the states: a random-action rollout per task
# (seed 0; a new episode when one ends). Every call then resets, sets each recorded state,
# takes the recorded action and prints {version, runs: {task: [[obs..., rew], ...]}}.
_ONE_STEP = """
import json, os, sys
import gymnasium as gym, mujoco, numpy as np
path, steps, tasks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
states = json.load(open(path)) if os.path.exists(path) else {}
out = {}
for task in tasks:
    env = gym.make(task + "-v5")
    sim = env.unwrapped
    if task not in states:
        env.reset(seed=0)
        env.action_space.seed(0)
        states[task] = []
        for i in range(steps):
            act = env.action_space.sample()
            states[task].append([sim.data.qpos.tolist(), sim.data.qvel.tolist(), act.tolist()])
            _, _, term, trunc, _ = env.step(act)
            if term or trunc:
                env.reset(seed=i + 1)
    out[task] = []
    for qpos, qvel, act in states[task]:
        env.reset(seed=0)
        sim.set_state(np.array(qpos), np.array(qvel))
        obs, rew, _, _, _ = env.step(np.array(act, dtype=env.action_space.dtype))
        out[task].append(obs.tolist() + [float(rew)])
json.dump(states, open(path, "w"))
print(json.dumps(dict(version=mujoco.__version__, runs=out)))
"""


def cmd_physics(args):
    """The engine-version experiment: does one step of each ``-v5`` task give the same
    result under other releases of the ``mujoco`` package?

    The installed release first records ``--steps`` states per task (a random-action
    rollout from seed 0, states and actions stored in ``<data_dir>/physics-states.json``).
    For each version in ``--versions`` this installs ``mujoco==V`` (no dependencies) into
    ``<data_dir>/mujoco-V`` with pip and, in a subprocess whose path starts there, sets
    every recorded state, takes its action and compares the next observation and reward
    with the installed release's: the largest difference over all states, and how many
    states differ by more than 1e-6. One step, not a whole rollout: these tasks are
    chaotic, so two rollouts part after a few hundred steps from any difference in
    rounding, while a one-step difference is a difference in the engine itself.
    Writes ``physics.inc`` and its raw data, ``runs/experiments/physics/differences.tsv``
    (one row per release, task and state: the largest difference in that state's next
    observation or reward), into the page with ``--publish``."""
    import numpy as np
    states = osp.join(osp.abspath(args.data_dir), "physics-states.json")

    def one_step(path):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (path, os.environ.get("PYTHONPATH")) if p))
        out = subprocess.run([sys.executable, "-c", _ONE_STEP, states, str(args.steps),
                              *TASKS], env=env, capture_output=True, text=True,
                             cwd=args.data_dir)
        if out.returncode:
            raise RuntimeError(f"physics: the step with {path or 'the installed mujoco'} "
                               f"failed:\n{out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    os.makedirs(args.data_dir, exist_ok=True)
    if osp.exists(states):
        os.remove(states)           # record the states with the installed release
    base = one_step(None)
    lines = [".. list-table:: One step of each task under other releases of the engine, "
             f"against mujoco {base['version']}: the largest difference in the next "
             f"observation or reward over {args.steps} recorded states (states differing "
             "by more than 1e-6)", "   :header-rows: 1", "",
             "   * - mujoco"] + [f"     - {t}" for t in TASKS]
    raw = ["release\ttask\tstate\tdifference"]
    for version in args.versions:
        target = osp.join(osp.abspath(args.data_dir), f"mujoco-{version}")
        if not osp.isdir(osp.join(target, "mujoco")):
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                            "--target", target, f"mujoco=={version}"], check=True)
        other = one_step(target)
        if other["version"] != version:
            raise RuntimeError(f"physics: {target} holds mujoco {other['version']}")
        lines.append(f"   * - {version}")
        for task in TASKS:
            diff = np.abs(np.array(base["runs"][task]) - np.array(other["runs"][task]))
            worst, many = float(diff.max()), int((diff.max(axis=1) > 1e-6).sum())
            raw += [f"{version}\t{task}\t{i}\t{d:.3g}" for i, d in enumerate(diff.max(axis=1))]
            print(f"mujoco {version} vs {base['version']}  {task:12s} largest difference "
                  f"{worst:.1e}, {many} of {len(diff)} states above 1e-6")
            lines.append(f"     - {worst:.0e} ({many})")
    path = _target(args, PAGE_DIR, "physics.inc")
    _write_text(path, lines)
    _write_text(_target(args, RUNS_DIR, "experiments", "physics", "differences.tsv"), raw)
    print(f"mujoco physics: wrote {path} and its raw data")
    return 0


def cmd_sb3(args):
    """The independent-implementation control for a SAC or TD3 gap: Stable-Baselines3's
    algorithm (``--algo``) with Spinning Up's defaults on the same task, evaluated as the
    benchmark evaluates.

    Settings both: 256x256 ReLU networks, learning rate 1e-3 for every network, batch 100,
    replay 1M, ``gamma`` 0.99, ``tau`` 0.005 (``polyak`` 0.995), 50 environment steps then
    50 updates, updates from step 1000 and uniform random actions for the first 10000
    steps (SB3 ties the random phase to ``learning_starts``; a subclass keeps them apart
    as Spinning Up does). SAC: fixed ``alpha`` 0.2. TD3: Gaussian action noise of std 0.1,
    target noise 0.2 clipped at 0.5, the actor and the targets updated every second
    update. Every 4000 steps: 10 deterministic episodes on a separate environment. SB3 is
    imported from ``<data_dir>/sb3`` (``pip install --no-deps --target <data_dir>/sb3
    stable-baselines3``; its other requirements are this project's). Each seed's
    ``progress.txt`` (Epoch, TotalEnvInteracts, AverageTestEpRet, Time) goes to
    ``docs/benchmarks/mujoco/runs/experiments/sb3-<algo>/<task>/s<seed>``.
    """
    import time

    import gymnasium as gym
    import numpy as np
    import pandas as pd
    import torch
    sys.path.insert(0, osp.join(osp.abspath(args.data_dir), "sb3"))
    try:
        from stable_baselines3 import SAC, TD3
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.noise import NormalActionNoise
    except ImportError:
        raise SystemExit(f"sb3: Stable-Baselines3 is not in {args.data_dir}/sb3; install it "
                         f"with: pip install --no-deps --target {args.data_dir}/sb3 "
                         "stable-baselines3")
    torch.set_num_threads(1)
    start_steps = 10_000

    class SpinningUpStart({"sac": SAC, "td3": TD3}[args.algo]):
        """Random actions for the first ``start_steps`` steps, whatever ``learning_starts``."""

        def _sample_action(self, learning_starts, action_noise=None, n_envs=1):
            return super()._sample_action(max(learning_starts, start_steps), action_noise,
                                          n_envs)

    class Evaluate(BaseCallback):
        """10 deterministic test episodes at the end of every 4000-step epoch."""

        def __init__(self, test_env):
            super().__init__()
            self.test_env, self.rows, self.t0 = test_env, [], time.time()

        def _on_step(self):
            if self.num_timesteps % STEPS_PER_EPOCH == 0:
                rets = []
                for _ in range(10):
                    o, _ = self.test_env.reset()
                    done, ret = False, 0.0
                    while not done:
                        a, _ = self.model.predict(o, deterministic=True)
                        o, r, term, trunc, _ = self.test_env.step(a)
                        ret, done = ret + r, term or trunc
                    rets.append(ret)
                self.rows.append(dict(Epoch=len(self.rows) + 1,
                                      TotalEnvInteracts=self.num_timesteps,
                                      AverageTestEpRet=np.mean(rets),
                                      Time=time.time() - self.t0))
                print(f"sb3-{args.algo} {args.env} s{self.model.seed} steps {self.num_timesteps} "
                      f"test {np.mean(rets):.1f}", flush=True)
            return True

    for seed in args.seeds:
        dst = osp.join(RUNS_DIR, "experiments", f"sb3-{args.algo}", args.env, f"s{seed}")
        if _rows(dst) >= args.steps // STEPS_PER_EPOCH:
            continue
        env, test_env = gym.make(f"{args.env}-v5"), gym.make(f"{args.env}-v5")
        test_env.reset(seed=seed + 1)
        common = dict(learning_rate=1e-3, buffer_size=1_000_000, learning_starts=1000,
                      batch_size=100, tau=0.005, gamma=0.99, train_freq=50, gradient_steps=50,
                      policy_kwargs=dict(net_arch=[256, 256]), seed=seed, device="cpu")
        n = env.action_space.shape[0]
        own = dict(ent_coef=0.2) if args.algo == "sac" else dict(
            policy_delay=2, target_policy_noise=0.2, target_noise_clip=0.5,
            action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)))
        model = SpinningUpStart("MlpPolicy", env, **own, **common)
        callback = Evaluate(test_env)
        model.learn(total_timesteps=args.steps, callback=callback)
        dst = dst if args.publish else _target(args, dst)
        os.makedirs(dst, exist_ok=True)
        pd.DataFrame(callback.rows).to_csv(osp.join(dst, "progress.txt"), sep="\t",
                                           index=False)
        with open(osp.join(dst, "config.json"), "w") as f:
            json.dump(dict(exp_name=f"sb3-{args.algo}_{args.env.lower()}-v5",
                           library="stable-baselines3",
                           version=__import__("stable_baselines3").__version__, seed=seed,
                           steps=args.steps, see=cmd_sb3.__doc__.split("\n\n")[1]), f,
                      indent=1)
        print(f"collected {dst}")
    return 0


def _write_experiments(ours, ref, path):
    """experiments.inc: each gap experiment beside the default runs and the reference.

    Columns: the evaluation at 40k, 100k, 200k and 300k steps (one grid point each: the
    experiments are about when the curves part) and the mean of the grid evaluations up
    to 300k steps (the area under the curve, per seed). A directory in
    ``runs/experiments`` whose runs are shorter shows "--" where they stop."""
    exp = _load("experiments")
    if exp is None:
        _write_text(path, ["No experiment has finished yet."])
        return
    marks = (40_000, 100_000, 200_000, 300_000)
    lines = [".. list-table:: Gap experiments: the evaluation at each mark, mean ± sample "
             "standard deviation over seeds (number of seeds); for on-policy runs the grid "
             "point 16k before each mark (24k, 84k, 184k, 284k), where the reference has its "
             "evaluations",
             "   :header-rows: 1", "", "   * - runs", "     - task"]
    lines += [f"     - {m // 1000}k" for m in marks] + ["     - mean up to 300k"]
    # the algorithm an experiment is about: the part of its name that is one ("sb3-sac")
    about = exp["algo"].map(lambda n: next(p for p in n.split("-") if p in ON_POLICY + OFF_POLICY))
    for (algo, task), group in exp.groupby([about, "task"]):
        rows = [(f"Spinning Up {algo} (-v2)", ref[(ref.algo == algo) & (ref.task == task)]),
                (f"{algo}, defaults", ours[(ours.algo == algo) & (ours.task == task)])]
        rows += list(group.groupby("algo"))
        for label, table in rows:
            grid = _on_grid(table, algo)
            early = grid[grid["steps"] <= marks[-1]]
            area = early.groupby("seed")["perf"].mean() \
                if table["steps"].max() >= marks[-1] - 1 else None
            lines += [f"   * - {label}", f"     - {task}"]
            lines += [f"     - {_cell(_at(table, m, algo, window=GRID))}" for m in marks]
            lines += [f"     - {_cell(area)}"]
    _write_text(path, lines)


def _write_status(ours, path):
    """How much of the ``here`` protocol is committed, per part and algorithm."""
    lines = [".. list-table:: Runs committed so far (of the protocol above)", "   :header-rows: 1",
             "", "   * - part", "     - algorithm", "     - finished runs", "     - planned"]
    for part, (algos, tasks, seeds, steps) in SCALES["here"].items():
        for algo in algos:
            name = grid_name("here", part, algo)
            done = sum(_rows(osp.join(RUNS_DIR, "here", name, t, f"s{s}"))
                       >= steps // STEPS_PER_EPOCH for t in tasks for s in seeds)
            lines += [f"   * - {part}", f"     - {name.upper()}", f"     - {done}",
                      f"     - {len(tasks) * len(seeds)}"]
    _write_text(path, lines)


def _write_hours(ours, path):
    """hours.inc: the run-hours of the committed ``here`` runs, from their ``Time`` column.

    ``Time`` is the wall-clock seconds since a run started (a resumed run's earlier part
    included). A long run counts only its part after the 300k run it continues, which is
    counted as a run of its own. The rate of a run is its hours per 1M of its steps."""
    import numpy as np
    pieces = []         # (algorithm, steps, seconds) of each run or continued part
    for (name, task, seed), t in ours.groupby(["algo", "task", "seed"]):
        t = t.sort_values("steps")
        start = t[t["steps"] <= 300_000].iloc[-1] if name.endswith("-1m") else None
        steps = t["steps"].iloc[-1] - (start["steps"] if start is not None else 0)
        seconds = t["time"].iloc[-1] - (start["time"] if start is not None else 0)
        pieces.append((name.replace("-1m", ""), steps, seconds))
    rate = {}
    lines = [".. list-table:: Run-hours of the committed runs (each run's ``Time`` column; "
             "the runs shared the 2-core machine with other runs, usually two at a time, so "
             "a run alone may be faster)", "   :header-rows: 1", "",
             "   * - algorithm", "     - runs", "     - million steps",
             "     - run-hours", "     - hours per 1M steps: median (lowest to highest run)"]
    for algo in ON_POLICY + OFF_POLICY:
        mine = [(s, sec) for a, s, sec in pieces if a == algo]
        if not mine:
            continue
        per_1m = np.array([sec / 3600 / (s / 1e6) for s, sec in mine])
        rate[algo] = float(np.median(per_1m))
        lines += [f"   * - {algo.upper()}", f"     - {len(mine)}",
                  f"     - {sum(s for s, _ in mine) / 1e6:.1f}",
                  f"     - {sum(sec for _, sec in mine) / 3600:.1f}",
                  f"     - {rate[algo]:.2f} ({per_1m.min():.2f} to {per_1m.max():.2f})"]
    total = sum(sec for _, _, sec in pieces) / 3600

    def protocol(scale):
        """Run-hours of a whole scale at the median rates (None without a rate for all)."""
        hours = 0.0
        for part, (algos, tasks, seeds, steps) in SCALES[scale].items():
            if any(a not in rate for a in algos):
                return None
            done = 300_000 if part == "long" else 0   # a long run continues a 300k run
            hours += sum(rate[a] for a in algos) * len(tasks) * len(seeds) * (steps - done) / 1e6
        return hours
    here, spec = protocol("here"), protocol("spec")
    lines += ["", f"In all, the {len(pieces)} committed runs (long runs counted by their part "
              f"after 300k steps) took {total:.0f} run-hours."]
    if here is not None and spec is not None:
        lines[-1] += (f" At the median rates above, the ``here`` protocol is about {here:.0f} "
                      f"run-hours and ``--scale spec`` about {spec:.0f}.")
    _write_text(path, lines)


def cmd_reference(args):
    """Turn the reference TSV into progress.txt/config.json directories the plotter reads
    (reference/README.md says where the TSV comes from)."""
    import pandas as pd
    ref = pd.read_table(osp.join(REF_DIR, "spinningup-mujoco-3M.tsv"))
    for (algo, env, seed), t in ref.groupby(["algo", "env", "seed"]):
        task = env.replace("-v2", "")
        if task not in TASKS and (task, algo) != (HUMANOID, "ppo"):
            continue
        d = _target(args, REF_DIR, "runs", algo, task, f"s{seed}")
        os.makedirs(d, exist_ok=True)
        cols = ["Epoch", "TotalEnvInteracts", "AverageEpRet"] + (
            ["AverageTestEpRet"] if algo != "ppo" else [])
        t[cols].to_csv(osp.join(d, "progress.txt"), sep="\t", index=False)
        with open(osp.join(d, "config.json"), "w") as f:
            json.dump({"exp_name": f"spinningup_{algo}_{task}",
                       "source": "docs/benchmarks/mujoco/reference/README.md"}, f)
    return 0


COMMANDS = {"run": cmd_run, "collect": cmd_collect, "verify": cmd_verify, "report": cmd_report,
            "reference": cmd_reference, "speed": cmd_speed, "tfinit": cmd_tfinit,
            "tanheps": cmd_tanheps, "sb3": cmd_sb3, "nocontact": cmd_nocontact,
            "saturation": cmd_saturation, "physics": cmd_physics, "noclip": cmd_noclip}

#: The subcommands that train: one task, some seeds, ``--steps`` each.
TRAINS = ("tfinit", "tanheps", "sb3", "nocontact", "saturation", "noclip")

#: The subcommands that read what is already in ``--data_dir`` (the others create it).
READS_DATA_DIR = ("collect", "sb3")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's help followed by its default, unless it has none (``None``, or off
    for a switch: the help says what happens without it); a list as its items."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        if isinstance(action.default, (list, tuple)):
            return f"{action.help} (default: {' '.join(map(str, action.default))})"
        return super()._get_help_string(action)


def _description(fn):
    """The first paragraph of ``fn``'s docstring, for its subcommand's ``--help``."""
    return " ".join(fn.__doc__.split("\n\n")[0].split()).replace("``", "")


def build_parser():
    """The command line: one subparser per subcommand of the module docstring."""
    parser = argparse.ArgumentParser(prog="benchmarks/mujoco.py", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, help):
        return sub.add_parser(name, help=help, description=_description(COMMANDS[name]),
                              formatter_class=_HelpFormatter)

    def data_dir(p, what):
        p.add_argument("--data_dir", default=DEFAULT_DATA, help=what)

    algorithms = ON_POLICY + OFF_POLICY
    run = add("run", "run (or continue) the benchmark's grids")
    run.add_argument("--scale", choices=list(SCALES), default="here",
                     help="here: the protocol for this machine; spec: the full one, for a "
                          "cluster (its runs are named spec_...)")
    run.add_argument("--part", nargs="+", default=["onpolicy", "offpolicy", "long", "humanoid"],
                     choices=["onpolicy", "offpolicy", "long", "humanoid"],
                     help="which parts of the protocol to run (long continues the finished "
                          "offpolicy runs of seed 0 to 1M steps; humanoid is PPO on "
                          "Humanoid-v5, 3 seeds of 1M steps)")
    run.add_argument("--algos", nargs="+", choices=algorithms,
                     help="only these algorithms of the chosen parts (default: all of them)")
    run.add_argument("--envs", nargs="+", choices=ALL_TASKS,
                     help="only these tasks of the chosen parts (default: all of them)")
    run.add_argument("--seeds", nargs="+", type=int,
                     help="only these seeds of the scale's seeds (default: all of them)")
    run.add_argument("--extra_seeds", nargs="+", type=int,
                     help="also run these seeds, beyond the scale's (committed and tabled "
                          "beside the others)")
    run.add_argument("--jobs", help="runs at once on this machine: a positive integer or "
                                    "auto (default: auto, one per core; not with --launcher "
                                    "ray)")
    run.add_argument("--launcher", default="local", choices=["local", "ray"],
                     help="local: processes of this machine; ray: tasks of a Ray cluster")
    run.add_argument("--ray_address",
                     help="the Ray cluster to join, host:port (with --launcher ray; "
                          "without it a local Ray instance is started)")
    data_dir(run, "where the runs write (created if needed); giving the same command again "
                  "continues the runs found there")
    col = add("collect", "copy finished runs into docs/benchmarks/mujoco/runs (--publish)")
    data_dir(col, "the directory that run wrote to (it must exist)")
    ver = add("verify", "rerun the first epoch of committed runs and compare exactly "
                        "(--publish: add them to verified.json)")
    ver.add_argument("--algos", nargs="+", choices=algorithms,
                     help="only the committed runs of these algorithms (default: all)")
    ver.add_argument("--envs", nargs="+", choices=TASKS,
                     help="only the committed runs on these tasks (default: all)")
    ver.add_argument("--seeds", nargs="+", type=int,
                     help="only the committed runs of these seeds (default: all)")
    rep_ = add("report", "write the page's figures and tables")
    data_dir(rep_, "where the tables and figures go unless --publish (created if needed)")
    refp = add("reference", "unpack the reference TSV for the plotter")
    data_dir(refp, "where the runs go unless --publish (created if needed)")
    speed = add("speed", "hours per 1M steps per algorithm (idle machine!)")
    speed.add_argument("--algos", nargs="+", choices=algorithms,
                       help="the algorithms to time (default: all six)")
    speed.add_argument("--env", default="HalfCheetah", choices=TASKS,
                       help="the task the algorithms are timed on")
    speed.add_argument("--epochs", type=int, default=5,
                       help="at least 3: the speed is taken over the last two")
    data_dir(speed, "where the table goes unless --publish (created if needed)")
    # The gap experiments that train: one task, some seeds, a step budget each.
    for name, about, seeds, steps in (
            ("tfinit", "TF1's layer initialisation", [0, 1], 300_000),
            ("tanheps", "SAC with the floored tanh correction", [0, 1, 2], 40_000),
            ("sb3", "Stable-Baselines3's SAC or TD3 with Spinning Up's defaults", [0, 1, 2],
             40_000),
            ("nocontact", "Ant-v5 without contact forces (as Ant-v2 under mujoco-py 2)",
             [0, 1], 300_000),
            ("noclip", "on-policy actions passed to the task unclipped (as Spinning Up's "
             "TF1 code did)", [0, 1, 2], 300_000)):
        exp = add(name, f"a gap experiment: {about}")
        if name in ("tfinit", "nocontact"):
            exp.add_argument("--algo", default="sac", choices=algorithms,
                             help="the algorithm to run")
        if name == "noclip":
            exp.add_argument("--algo", default="ppo", choices=["ppo", "vpg", "trpo"],
                             help="the on-policy algorithm to run")
            exp.add_argument("--tfinit", action="store_true",
                             help="also start every layer as TF1 does (as in tfinit)")
        if name == "sb3":
            exp.add_argument("--algo", default="sac", choices=["sac", "td3"],
                             help="Stable-Baselines3's algorithm to run")
        if name == "nocontact":                 # about Ant alone: no --env to give
            exp.set_defaults(env="Ant")
            exp.add_argument("--tfinit", action="store_true",
                             help="also start every layer as TF1 does (as in tfinit)")
        else:
            exp.add_argument("--env", default="HalfCheetah", choices=TASKS,
                             help="the task to train on")
        exp.add_argument("--seeds", nargs="+", type=int, default=seeds,
                         help="the seeds to run, one after another")
        exp.add_argument("--steps", type=int, default=steps,
                         help=f"environment steps per run, a multiple of {STEPS_PER_EPOCH}")
        data_dir(exp, "where the runs write (created if needed)" if name != "sb3" else
                 "the directory whose sb3 folder holds Stable-Baselines3 (it must exist)")
    sat = add("saturation", "a gap experiment: how many seeds of a deterministic actor end "
                            "with every action at a bound")
    sat.add_argument("--algo", default="ddpg", choices=["ddpg", "td3"],
                     help="the deterministic actor to train")
    sat.add_argument("--env", default="Hopper", choices=TASKS, help="the task to train on")
    sat.add_argument("--inits", nargs="+", default=["default", "tf"], choices=["default", "tf"],
                     help="the layer initialisations to compare: PyTorch's or TF1's")
    sat.add_argument("--seeds", nargs="+", type=int, default=list(range(10)),
                     help="the seeds to run for each init")
    sat.add_argument("--steps", type=int, default=12_000,
                     help=f"environment steps per run, a multiple of {STEPS_PER_EPOCH}")
    data_dir(sat, "where the runs, the rows and (unless --publish) the table go "
                  "(created if needed)")
    physics = add("physics", "a gap experiment: the tasks under other releases of the "
                             "mujoco engine")
    physics.add_argument("--versions", nargs="+",
                         default=["2.3.3", "3.0.1", "3.2.7", "3.3.7", "3.8.1", "3.17.0"],
                         help="the mujoco releases to compare with the installed one")
    physics.add_argument("--steps", type=int, default=1000,
                         help="the states recorded per task, each stepped once per release")
    data_dir(physics, "where the releases are installed and (unless --publish) the "
                      "table goes (created if needed)")
    publishes = {col: "copy the finished runs into the repository (default: list them)",
                 ver: "when every row is equal, add this machine and the runs checked to "
                      "verified.json (a record of another machine is replaced only by a "
                      "verify of every committed run)",
                 rep_: "write the page's committed tables and figures (default: under "
                       "--data_dir)",
                 refp: "write the committed reference/runs (default: under --data_dir)",
                 speed: None, sat: None, physics: None}
    for name in ("tfinit", "tanheps", "sb3", "nocontact", "noclip"):
        publishes[sub.choices[name]] = ("copy each finished run into docs/benchmarks/mujoco/"
                                        "runs/experiments (default: it stays under "
                                        "--data_dir)")
    for p, what in publishes.items():
        p.add_argument("--publish", action="store_true", help=what or (
            "write the result into the docs page's committed files (default: under "
            "--data_dir)"))
        # the names of earlier versions, for commands in old notes and records
        old = "--record" if p is ver else "--write-docs"
        p.add_argument(old, dest="publish", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    parser = build_parser()
    script = parser.prog if argv is not None else sys.argv[0]
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command_line = f"python {shlex.join([script] + argv)}"
    if args.command in READS_DATA_DIR and not osp.isdir(args.data_dir):
        # One line and exit status 2, as a usage error, and nothing read or written.
        why = "is not a directory" if osp.exists(args.data_dir) else "does not exist"
        if args.command == "sb3" and not osp.exists(args.data_dir):
            why += (f"; install Stable-Baselines3 there first: pip install --no-deps "
                    f"--target {osp.join(args.data_dir, 'sb3')} stable-baselines3")
        parser.exit(2, f"mujoco {args.command}: --data_dir {args.data_dir} {why}\n")
    if args.command == "run" and args.seeds:
        allowed = sorted({seed for part in args.part if part in SCALES[args.scale]
                          for seed in SCALES[args.scale][part][2]} | set(args.extra_seeds or ()))
        if not set(args.seeds) <= set(allowed):
            parser.error(f"run: --seeds {' '.join(map(str, args.seeds))}: the parts chosen "
                         f"at --scale {args.scale} have seeds {allowed}")
    if args.command == "speed" and args.epochs < 3:
        parser.error(f"speed: --epochs {args.epochs}: give at least 3 (the speed is taken "
                     "over the last two epochs, after the first)")
    if args.command == "physics" and args.steps < 1:
        parser.error(f"physics: --steps {args.steps}: give a positive number of states")
    if args.command in TRAINS and (args.steps < STEPS_PER_EPOCH
                                   or args.steps % STEPS_PER_EPOCH):
        parser.error(f"{args.command}: --steps {args.steps}: give a positive multiple of "
                     f"{STEPS_PER_EPOCH} (the steps per epoch)")
    if getattr(args, "jobs", None) not in (None, "auto") and str(args.jobs).isdigit():
        args.jobs = int(args.jobs)
    if args.command == "run":   # the launcher's own check of its options (grid_launch)
        from spinup.launch.grid_launch import LaunchError, check_launch_options
        try:
            check_launch_options(args.jobs, args.launcher, getattr(args, "ray_address", None))
        except LaunchError as e:
            parser.error(f"run: {e}")
        if args.jobs is None:
            args.jobs = "auto"
    from spinup.launch.grid_launch import GridError
    from spinup.launch.run_utils import LaunchError
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("mujoco: interrupted; the same command continues where the runs stopped: "
              f"{args.command_line}")
        return 130
    except subprocess.CalledProcessError as e:
        print(f"mujoco {args.command}: {' '.join(e.cmd)} failed (exit {e.returncode}); "
              "check the version or package name and the connection to the package index")
        return 1
    except (GridError, LaunchError, FileExistsError, RuntimeError, ValueError) as e:
        print(f"mujoco: {in_harness_terms(str(e), args.command_line)}")
        return 1

if __name__ == "__main__":
    sys.exit(main())
