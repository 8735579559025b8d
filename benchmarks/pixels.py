"""The pixels benchmark: PPO and DQN on MinAtar and Atari, against published numbers.

    python benchmarks/pixels.py run --suite minatar|atari [--algos ppo dqn] [--games ...]
                                    [--seeds 0 ...] [--steps N] [--data_dir DIR] [--jobs 1]
                                    [--dry-run]
    python benchmarks/pixels.py collect --data_dir DIR [--out DIR | --publish]
    python benchmarks/pixels.py report [--runs DIR] [--out DIR | --publish]

``run`` starts one command line per algorithm, game and seed, the same one a person would
type::

    python -m spinup.run ALGO --config ALGO_SUITE --env ID --epochs E --seed S \\
        --data_dir DIR --exp_name ALGO_SUITE-GAME

(``ID`` is ``MinAtar/<Game>-v1`` or ``ALE/<Game>-v5``; ``GAME`` is the game's name in lower
case; ``E`` is ``--steps`` divided by the preset's ``steps_per_epoch``, rounded up; without
``--steps`` the preset's own length). A run that has all its epochs, in ``--data_dir`` or
committed under ``docs/benchmarks/pixels/runs``, is skipped; a run that stopped with a
checkpoint is continued (the same command and ``--resume``); a run another process is
writing is left alone. Each command's output goes to ``DIR/logs/<exp_name>_s<seed>.log``.

``collect`` copies ``progress.txt``, ``config.json`` (its ``output_dir`` cut to the run's
own two folders) and ``provenance.json`` of every run it finds in ``--data_dir`` (nothing
else: no model, no checkpoint) to ``<out>/runs/<exp_name>/s<seed>/``, or with ``--publish``
to ``docs/benchmarks/pixels/runs/<exp_name>/s<seed>/``. A run still in progress, or one
that stopped early, is collected too, and said to be partial (rows of its planned epochs).
A run started again from its command (after its checkpoint was lost, or on another machine)
replaces its copy only if the rows both have agree in every column but ``Time``; one that
disagrees is left out and named, the copy stays as it was, and ``collect`` exits 1.

``report`` reads the collected runs (``--runs``; default the committed ones) and the
published numbers (``docs/benchmarks/pixels/published.tsv``) and writes ``table.inc`` (the
table of docs/benchmarks/pixels.rst), ``claims.json`` (the same numbers unrounded), one
figure of learning curves per game (``curves_<suite>_<game>.png``) and ``figures.inc``
(the page's list of them) to ``--out``, or with ``--publish`` to ``docs/benchmarks/pixels/``. Nothing under ``docs/``
changes without ``--publish``.

The final score of a seed is the mean of its last 10% of rows (at least one) of
``AverageEpRet`` for MinAtar and of ``AverageGameScore`` (the unclipped score of whole
games) for Atari, epochs without a value left out. The verdict against a published number
follows :data:`RULE`.
"""
import csv
import functools
import json
import math
import os
import os.path as osp
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = osp.dirname(osp.abspath(__file__))
# Runs from any folder; this folder leaves the path (its mujoco.py would hide the package).
sys.path[:] = [osp.dirname(HERE)] + [p for p in sys.path if osp.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402

ROOT = _cli.ROOT
PAGE_DIR, PAGE_SHOWN = _cli.committed("docs", "benchmarks", "pixels")
RUNS_DIR = osp.join(PAGE_DIR, "runs")
PUBLISHED = osp.join(PAGE_DIR, "published.tsv")
PRESETS = osp.join(ROOT, "spinup", "presets")
DEFAULT_DATA = "~/spinup-pixels"
NAME = "pixels"

SUITES = ("minatar", "atari")
ALGOS = ("ppo", "dqn")
GAMES = {"minatar": ("Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders"),
         "atari": ("Pong", "Breakout", "BeamRider")}
#: The column a seed's final score is taken from.
SCORE = {"minatar": "AverageEpRet", "atari": "AverageGameScore"}
#: The packages a suite's envs come from (what ``pip install -e ".[pixels]"`` brings).
NEEDS = {"minatar": "minatar", "atari": "ale_py"}
#: Share of a seed's rows, counted from its last, that make its final score.
LAST_SHARE = 0.10

#: Seeds a comparison needs before its verdict is decided by a test.
SEEDS_TO_DECIDE = 5
#: The test's level.
ALPHA = 0.05
#: The rule, in the words of the table's caption, the page and claims.json.
RULE = (f"with at least {SEEDS_TO_DECIDE} of our seeds, a two-sided one-sample t test of "
        "the seeds' final scores against the published number: 'below' or 'above' when "
        f"p < {ALPHA}, else 'consistent with the target', with t, df and p stated; with fewer "
        "seeds, 'consistent with the target (n seeds)' when the published number lies "
        "within our mean ± our sample standard deviation, else 'undecided (below or above, "
        "n seeds)'; the same rule on either side. Before the runs reach the published "
        "step count: 'not comparable yet'")

EXP_RE = re.compile(r"^(ppo|dqn)_(minatar|atari)-([a-z0-9]+)$")
SEED_RE = re.compile(r"_s(\d+)$")


# ---- names ----

def exp_name(algo, suite, game):
    """The experiment's name, which is also its folder: ``ppo_minatar-breakout``."""
    return f"{algo}_{suite}-{game.lower()}"


def env_id(suite, game):
    return f"MinAtar/{game}-v1" if suite == "minatar" else f"ALE/{game}-v5"


def preset_name(algo, suite):
    return f"{algo}_{suite}"


@functools.cache
def preset(algo, suite):
    """The preset's settings (spinup/presets/<algo>_<suite>.json) as a dict."""
    with open(osp.join(PRESETS, preset_name(algo, suite) + ".json")) as f:
        return json.load(f)


def epochs_for(algo, suite, steps):
    """Epochs of ``steps`` environment steps (rounded up); the preset's own without ``steps``."""
    p = preset(algo, suite)
    return p["epochs"] if steps is None else math.ceil(steps / p["steps_per_epoch"])


def parse_exp(name):
    """``(algo, suite, game)`` of an experiment folder's name, or None for another name."""
    found = EXP_RE.match(name)
    if not found:
        return None
    algo, suite, low = found.groups()
    game = {g.lower(): g for g in GAMES[suite]}.get(low)
    return None if game is None else (algo, suite, game)


def k_steps(steps):
    """``735k``: steps in thousands."""
    return f"{round(steps / 1000):,}k"


def m_steps(steps):
    """``10M``, ``5M``, ``2.5M``."""
    return f"{steps / 1e6:g}M"


def _seeds(n):
    return f"{n} seed{'' if n == 1 else 's'}"


# ---- reading runs ----

def complete_lines(path):
    """The lines of ``path`` that a writer has finished: a last line without its newline
    (a row being written) is left out, and so is any row whose number of fields differs
    from the header's."""
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    lines = lines[:-1]              # "" after a final newline, or a line being written
    if not lines:
        return []
    fields = len(lines[0].split("\t"))
    return [lines[0]] + [ln for ln in lines[1:] if len(ln.split("\t")) == fields]


def read_table(path):
    """A ``progress.txt`` as ``{column: [float, ...]}`` (its complete rows, see
    :func:`complete_lines`); an empty or ``nan`` field is ``nan``."""
    lines = [ln.split("\t") for ln in complete_lines(path)]
    if not lines:
        return {}

    def number(text):
        try:
            return float(text)
        except ValueError:
            return math.nan
    return {name: [number(r[i]) for r in lines[1:]] for i, name in enumerate(lines[0])}


def count_rows(run_dir):
    """Complete rows in ``run_dir/progress.txt`` (0 without one)."""
    path = osp.join(run_dir, "progress.txt")
    if not osp.isfile(path):
        return 0
    table = read_table(path)
    return len(next(iter(table.values()), []))


def _config(run_dir):
    try:
        with open(osp.join(run_dir, "config.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def final_score(values):
    """The mean of the last :data:`LAST_SHARE` of ``values`` (at least one), ``nan``s left
    out; None when none of them has a value."""
    window = values[-max(1, math.ceil(LAST_SHARE * len(values))):] if values else []
    window = [v for v in window if not math.isnan(v)]
    return statistics.fmean(window) if window else None


def load_runs(runs_dir):
    """Every collected run under ``runs_dir`` (``<exp_name>/s<seed>/``), by cell:
    ``{(algo, suite, game): {seed: run}}``, each run a dict of its score, steps, rows,
    planned epochs and steps, hours, config and ``curve`` (its TotalEnvInteracts and
    score column, row by row)."""
    cells = {}
    for name in sorted(os.listdir(runs_dir)) if osp.isdir(runs_dir) else []:
        key = parse_exp(name)
        if key is None or not osp.isdir(osp.join(runs_dir, name)):
            continue
        algo, suite, _ = key
        for sdir in sorted(os.listdir(osp.join(runs_dir, name))):
            run_dir = osp.join(runs_dir, name, sdir)
            if not re.fullmatch(r"s\d+", sdir) or not osp.isfile(
                    osp.join(run_dir, "progress.txt")):
                continue
            table = read_table(osp.join(run_dir, "progress.txt"))
            rows = len(table.get("Epoch", []))
            if rows == 0:
                continue
            config = _config(run_dir)
            spe = config.get("steps_per_epoch") or preset(algo, suite)["steps_per_epoch"]
            epochs = config.get("epochs")
            cells.setdefault(key, {})[int(sdir[1:])] = dict(
                score=final_score(table.get(SCORE[suite], [])),
                steps=int(table["TotalEnvInteracts"][-1]), rows=rows, epochs=epochs,
                planned_steps=None if epochs is None else int(epochs * spe),
                partial=epochs is not None and rows < epochs,
                hours=table["Time"][-1] / 3600 if table.get("Time") else None,
                config=config, curve=(table["TotalEnvInteracts"], table.get(SCORE[suite], [])))
    return cells


def read_published(path=PUBLISHED):
    """published.tsv as a list of dicts (``steps`` an int, ``value`` a float, ``shown`` the
    value as written)."""
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out.append(dict(row, steps=int(row["steps"]), value=float(row["value"]),
                            shown=row["value"]))
    return out


# ---- the verdict ----

def t_test(values, target):
    """Two-sided one-sample t test of ``values`` (>= 2) against ``target``: ``(t, df, p)``;
    seeds without any spread have no t (None) and p 1 at the target, else 0."""
    from scipy.special import stdtr
    n, mean, sd = len(values), statistics.fmean(values), statistics.stdev(values)
    if sd == 0:
        return None, n - 1, 1.0 if mean == target else 0.0
    t = (mean - target) / (sd / math.sqrt(n))
    return t, n - 1, float(2 * stdtr(n - 1, -abs(t)))


def _p(p):
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict(values, target, reached, published_steps):
    """The words of :data:`RULE` for our per-seed final ``values`` against ``target``, the
    runs having reached ``reached`` steps (the fewest of the seeds) where the published
    number is at ``published_steps``: ``(words, test)``, test ``{t, df, p}`` or None."""
    if reached < published_steps:
        return f"not comparable yet ({k_steps(reached)} of {m_steps(published_steps)} steps)", \
            None
    if reached > published_steps * 1.01:
        return (f"not comparable (ran {k_steps(reached)} steps; published at "
                f"{m_steps(published_steps)})"), None
    if not values:
        return "--", None
    n, mean = len(values), statistics.fmean(values)
    test = dict(zip(("t", "df", "p"), t_test(values, target))) if n >= 2 else None
    side = "below" if mean < target else "above"
    if n >= SEEDS_TO_DECIDE:
        stated = (f"t = {test['t']:.2f}, df = {test['df']}, {_p(test['p'])}"
                  if test["t"] is not None else f"no spread over the {n} seeds")
        if test["p"] < ALPHA:
            return f"{side} ({stated})", test
        return f"consistent with the target ({stated})", test
    sd = statistics.stdev(values) if n >= 2 else 0.0
    if abs(mean - target) <= sd:
        return f"consistent with the target ({_seeds(n)})", test
    return f"undecided ({side}, {_seeds(n)})", test


# ---- the report ----

def _number(x, scale):
    """``x`` with as many decimals as numbers of the size of ``scale`` need."""
    return f"{x:.0f}" if abs(scale) >= 100 else f"{x:.1f}"


def _score_cell(values):
    if not values:
        return "--"
    mean = statistics.fmean(values)
    if len(values) == 1:
        return _number(mean, mean)
    return f"{_number(mean, mean)} ± {_number(statistics.stdev(values), mean)}"


def _summary(runs):
    values = {s: r["score"] for s, r in runs.items() if r["score"] is not None}
    v = list(values.values())
    return dict(n=len(v), mean=statistics.fmean(v) if v else None,
                sd=statistics.stdev(v) if len(v) > 1 else None,
                by_seed={str(s): x for s, x in values.items()})


def _differs_from_preset(run, algo, suite):
    """The preset's settings that ``run``'s config.json does not have (``epochs`` aside)."""
    if not run["config"]:
        return []
    return sorted(k for k, v in preset(algo, suite).items()
                  if k not in ("_about", "epochs") and run["config"].get(k) != v)


def _command(algo, suite, game, seeds, steps):
    return (f"python benchmarks/pixels.py run --suite {suite} --algos {algo} --games {game} "
            f"--seeds {' '.join(map(str, seeds))} --steps {steps}")


def report(runs_dir, out_dir, published_path=PUBLISHED):
    """Write ``out_dir/table.inc`` and ``out_dir/claims.json`` from the runs in
    ``runs_dir``; return the claims (a dict)."""
    cells = load_runs(runs_dir)
    published = read_published(published_path)
    claims = dict(rule=RULE, seeds_to_decide=SEEDS_TO_DECIDE, alpha=ALPHA,
                  final_score=(f"mean of the last {LAST_SHARE:.0%} of a seed's rows (at least "
                               "one), epochs without a value left out"),
                  score_column=dict(SCORE), command="python benchmarks/pixels.py report "
                  "--publish", cells={})
    header = ["suite", "algorithm", "game", "steps reached", "seeds", "final score",
              "hours per run", "published", "verdict"]
    rows, notes, commands = [], [], []
    order = [(a, s, g) for s in SUITES for a in ALGOS for g in GAMES[s]]
    for algo, suite, game in [key for key in order if key in cells]:
        runs = cells[(algo, suite, game)]
        seeds = sorted(runs)
        values = [runs[s]["score"] for s in seeds if runs[s]["score"] is not None]
        reached = min(r["steps"] for r in runs.values())
        partial = [s for s in seeds if runs[s]["partial"]]
        hours = [r["hours"] for r in runs.values() if r["hours"] is not None]
        differs = {str(s): d for s in seeds if (d := _differs_from_preset(runs[s], algo,
                                                                           suite))}
        comparisons = []
        for p in [p for p in published if (p["algorithm"], p["suite"], p["game"])
                  == (algo, suite, game)]:
            words, test = verdict(values, p["value"], reached, p["steps"])
            comparisons.append(dict(source=p["source"], value=p["value"], steps=p["steps"],
                                    note=p["note"], verdict=words, test=test,
                                    shown=p["shown"]))
        key = f"{algo} {suite} {game}"
        claims["cells"][key] = dict(
            algorithm=algo, suite=suite, game=game, env_id=env_id(suite, game),
            exp_name=exp_name(algo, suite, game), score_column=SCORE[suite],
            ours=_summary(runs), steps=dict(min=reached, by_seed={
                str(s): runs[s]["steps"] for s in seeds}),
            rows={str(s): runs[s]["rows"] for s in seeds},
            epochs_planned={str(s): runs[s]["epochs"] for s in seeds},
            partial_seeds=partial,
            hours=dict(mean=statistics.fmean(hours) if hours else None,
                       by_seed={str(s): runs[s]["hours"] for s in seeds}),
            hours_per_million_steps=statistics.fmean(
                [r["hours"] / r["steps"] * 1e6 for r in runs.values()
                 if r["hours"] is not None and r["steps"]]) if hours else None,
            differs_from_preset=differs,
            comparisons=[{k: v for k, v in c.items() if k != "shown"} for c in comparisons])
        steps_cell = k_steps(reached) + (" (partial)" if partial else "")
        seeds_cell = str(len(seeds)) + (f" ({len(partial)} partial)" if partial else "")
        hours_cell = (f"{statistics.fmean(hours):.2f}" + (" so far" if partial else "")
                      if hours else "--")
        ours = [suite, algo.upper(), game, steps_cell, seeds_cell, _score_cell(values),
                hours_cell]
        for c in comparisons or [None]:
            shown = "--" if c is None else (
                f"{'≥ ' if 'target' in c['source'] else ''}{c['shown']} "
                f"({c['source']}, {m_steps(c['steps'])})")
            rows.append(ours + [shown, "no published number" if c is None else c["verdict"]])
        for s in partial:
            notes.append(f"{key} seed {s}: partial, {runs[s]['rows']} of "
                         f"{runs[s]['epochs']} epochs ({k_steps(runs[s]['steps'])} of "
                         f"{k_steps(runs[s]['planned_steps'])} steps)")
        for s, d in differs.items():
            notes.append(f"{key} seed {s}: config.json differs from the preset "
                         f"{preset_name(algo, suite)} in {', '.join(d)}")
        by_steps = {}
        for s in seeds:
            by_steps.setdefault(runs[s]["planned_steps"] or runs[s]["steps"], []).append(s)
        commands += [_command(algo, suite, game, ss, st) for st, ss in by_steps.items()]
    lines = [".. list-table:: Final scores against published numbers "
             "(``python benchmarks/pixels.py report --publish``)", "   :header-rows: 1", ""]
    for row in [header] + (rows or [["no runs collected yet"] + ["--"] * (len(header) - 1)]):
        lines += ["   * - " + row[0]] + ["     - " + str(x) for x in row[1:]]
    lines += ["", f"Final score: for each seed, the mean of "
              f"{', '.join(f'``{SCORE[s]}`` ({s})' for s in SUITES)} over its last "
              f"{LAST_SHARE:.0%} of epochs (at least one; epochs without a value left out); "
              "the table gives the mean ± sample standard deviation over seeds. Verdict: "
              f"{RULE}.", ""]
    if not rows:
        lines.append("No run has been collected yet: nothing in this table is measured.")
    else:
        lines += ["The runs of this table, each reproduced by:", ""]
        lines += [f"- ``{c}``" for c in commands]
        if notes:
            lines += ["", "Notes on the runs:", ""] + [f"- {n}" for n in notes]
    os.makedirs(out_dir, exist_ok=True)
    with open(osp.join(out_dir, "table.inc"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(osp.join(out_dir, "claims.json"), "w") as f:
        json.dump(claims, f, indent=1, sort_keys=True, allow_nan=False)
        f.write("\n")
    figures(cells, published, out_dir)
    return claims


def figures(cells, published, out_dir):
    """One figure per game with runs, ``curves_<suite>_<game>.png``: every seed's curve of
    the score column against env steps (thin; a moving mean over 1% of its rows, at least
    one, drawn thick), one colour per algorithm, and each published number for the game as
    a dashed level ending at its step count. ``figures.inc`` includes them in the page."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.ticker import FuncFormatter
    lines = []
    for suite, game in sorted({(s, g) for _, s, g in cells}, key=lambda k: (
            SUITES.index(k[0]), GAMES[k[0]].index(k[1]))):
        fig, ax = plt.subplots(figsize=(7.0, 4.4))
        for colour, algo in enumerate(ALGOS):
            for seed, run in sorted(cells.get((algo, suite, game), {}).items()):
                steps, values = run["curve"]
                steps = [s / 1e6 for s in steps]
                smooth = pd.Series(values, dtype=float).rolling(
                    max(1, len(values) // 100), min_periods=1).mean()   # nan rows left out
                ax.plot(steps, values, color=f"C{colour}", alpha=0.15, linewidth=0.6)
                ax.plot(steps, smooth, color=f"C{colour}", linewidth=1.6,
                        label=f"spinup {algo.upper()} seed {seed}")
        for i, p in enumerate(p for p in published if (p["suite"], p["game"]) == (suite, game)):
            ax.hlines(p["value"], 0, p["steps"] / 1e6, colors=f"C{2 + i}", linestyles="--",
                      linewidth=1.2, label=f"{p['source']}: {p['shown']} "
                      f"({p['algorithm'].upper()}, {m_steps(p['steps'])})")
        ax.set_xlabel("env steps (millions)")
        ax.set_ylabel(SCORE[suite])
        ax.set_title(f"{env_id(suite, game)}: each seed; published numbers dashed")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}M"))
        ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
                  frameon=False)
        fig.tight_layout()
        name = f"curves_{suite}_{game.lower()}.png"
        fig.savefig(osp.join(out_dir, name), dpi=110)
        plt.close(fig)
        lines += [f".. figure:: pixels/{name}", "   :width: 100%", "",
                  f"   {env_id(suite, game)}: the collected runs' ``{SCORE[suite]}`` per epoch "
                  "(faint) and its moving mean over 1% of the rows (solid).", ""]
    with open(osp.join(out_dir, "figures.inc"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines or ["No run has been collected yet: no figure."]) + "\n")


# ---- collect ----

def _without_machine_paths(config):
    """``config`` with ``logger_kwargs.output_dir`` cut to ``<exp_name>/<run>``: a
    committed file names no folder of the machine that made it."""
    out = dict(config)
    lk = out.get("logger_kwargs")
    if isinstance(lk, dict) and isinstance(lk.get("output_dir"), str):
        parts = osp.normpath(lk["output_dir"]).split(os.sep)
        out["logger_kwargs"] = dict(lk, output_dir="/".join(parts[-2:]))
    return out


def _copy_rows(src, dst):
    """Copy ``src``'s header and complete rows to ``dst``; return the rows copied."""
    lines = complete_lines(src)
    with open(dst, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    return max(0, len(lines) - 1)


def find_runs(data_dir):
    """The runs in ``data_dir``: ``[(algo, suite, game, seed, run_dir)]``, each with a
    ``progress.txt`` of at least one row."""
    found = []
    for name in sorted(os.listdir(data_dir)):
        key = parse_exp(name)
        if key is None or not osp.isdir(osp.join(data_dir, name)):
            continue
        for sub in sorted(os.listdir(osp.join(data_dir, name))):
            seed = SEED_RE.search(sub)
            run_dir = osp.join(data_dir, name, sub)
            if sub.startswith(name + "_s") and seed and count_rows(run_dir) > 0:
                found.append((*key, int(seed.group(1)), run_dir))
    return found


#: Columns that may differ between two runs of one command (seconds, a machine's speed).
MACHINE_COLUMNS = ("Time",)


def first_difference(src, dst):
    """Where two ``progress.txt`` files disagree on the rows both have, ``None`` where
    they agree: the same columns, and each shared row the same text in every column but
    :data:`MACHINE_COLUMNS`. A run started again from the same command, on this machine
    or another, should agree with its first start (its seeds fix every number).

    Returns:
        str or None: ``"the columns"`` or ``"epoch E, column C (X there, Y here)"``.
    """
    if not (osp.isfile(src) and osp.isfile(dst)):
        return None
    here, there = complete_lines(src), complete_lines(dst)
    if not here or not there:
        return None
    header = there[0].split("\t")
    if here[0].split("\t") != header:
        return "the columns"
    for old, new in zip(there[1:], here[1:]):
        row = new.split("\t")
        for name, a, b in zip(header, old.split("\t"), row):
            if a != b and name not in MACHINE_COLUMNS:
                return f"epoch {row[0]}, column {name} ({a} there, {b} here)"
    return None


def collect(data_dir, runs_dir):
    """Copy every run of ``data_dir`` whose copy in ``runs_dir`` has fewer rows; return
    ``(copied, up_to_date, skipped, differing)`` counts. A run whose shared rows differ
    from its copy's (:func:`first_difference`) is neither copied nor changed there: it is
    counted in ``differing`` and named with its first difference."""
    copied = same = skipped = differing = 0
    for algo, suite, game, seed, src in find_runs(data_dir):
        config = _config(src)
        made = _saved_env(config)
        if config.get("_algorithm", algo) != algo or (made and made != env_id(suite, game)):
            print(f"{NAME} collect: {src} is not {algo} on {env_id(suite, game)} (its "
                  f"config.json: {config.get('_algorithm')} on {made}); not collected")
            skipped += 1
            continue
        dst = osp.join(runs_dir, exp_name(algo, suite, game), f"s{seed}")
        rows, have = count_rows(src), count_rows(dst)
        where = first_difference(osp.join(src, "progress.txt"), osp.join(dst, "progress.txt"))
        if where is not None:
            print(f"{NAME} collect: {exp_name(algo, suite, game)} s{seed} in {src} differs "
                  f"from the copy in {_shown(dst)} at {where}; not collected (compare the "
                  f"two provenance.json files)")
            differing += 1
            continue
        if have >= rows:
            same += 1
            continue
        os.makedirs(dst, exist_ok=True)
        rows = _copy_rows(osp.join(src, "progress.txt"), osp.join(dst, "progress.txt"))
        from spinup.machinery.serialization_utils import config_text
        with open(osp.join(dst, "config.json"), "w") as f:
            f.write(config_text(_without_machine_paths(config)))
        if osp.isfile(osp.join(src, "provenance.json")):
            shutil.copyfile(osp.join(src, "provenance.json"), osp.join(dst, "provenance.json"))
        epochs = config.get("epochs")
        state = ("finished" if epochs is not None and rows >= epochs else
                 f"partial: {rows} of {epochs} epochs" if epochs is not None else
                 f"{rows} rows")
        print(f"collected {exp_name(algo, suite, game)} s{seed} ({state}) -> {_shown(dst)}")
        copied += 1
    return copied, same, skipped, differing


def _saved_env(config):
    from spinup.machinery.run_dir import saved_env_id
    return saved_env_id(config)


def _shown(path):
    """``path`` relative to the repository when inside it."""
    rel = osp.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


# ---- run ----

def plan(suite, algos, games, seeds, steps, data_dir):
    """The runs of a selection: dicts of algo, game, seed, epochs, exp, run_dir, argv."""
    out = []
    for seed in seeds:        # seed slowest: every game gets its first seed early
        for algo in algos:
            for game in games:
                exp = exp_name(algo, suite, game)
                epochs = epochs_for(algo, suite, steps)
                argv = ["-m", "spinup.run", algo, "--config", preset_name(algo, suite),
                        "--env", env_id(suite, game), "--epochs", str(epochs),
                        "--seed", str(seed), "--data_dir", data_dir, "--exp_name", exp]
                out.append(dict(algo=algo, game=game, seed=seed, epochs=epochs, exp=exp,
                                run_dir=osp.join(data_dir, exp, f"{exp}_s{seed}"),
                                committed=osp.join(RUNS_DIR, exp, f"s{seed}"), argv=argv))
    return out


def _state(run):
    """What to do with a planned run: ``('skip', why)``, ``('start', '')`` or
    ``('resume', '')``."""
    from spinup.machinery.run_dir import (
        RunInProgressError,
        can_resume,
        check_run_dir_free,
        holds_run,
    )
    done = count_rows(run["run_dir"])
    if done >= run["epochs"]:
        return "skip", f"finished ({done} epochs)"
    if count_rows(run["committed"]) >= run["epochs"]:
        return "skip", f"finished and committed ({_shown(run['committed'])})"
    if osp.isdir(run["run_dir"]):
        try:
            check_run_dir_free(run["run_dir"])
        except RunInProgressError:
            return "skip", "another process is writing it"
        if holds_run(run["run_dir"]):
            if can_resume(run["run_dir"]):
                return "resume", ""
            return "skip", (f"stopped after {done} epochs without a checkpoint; move "
                            f"{run['run_dir']} away to start it again")
    return "start", ""


def _shell(argv):
    return shlex.join(["python"] + argv)


def cmd_run(args):
    data_dir = osp.abspath(osp.expanduser(args.data_dir))
    runs = plan(args.suite, args.algos, args.games, args.seeds, args.steps, data_dir)
    todo = []
    for run in runs:
        what, why = _state(run)
        label = f"{run['exp']} s{run['seed']}"
        if what == "skip":
            print(f"{label}: skipped, {why}")
            continue
        argv = run["argv"] + (["--resume"] if what == "resume" else [])
        todo.append((label, argv, osp.join(data_dir, "logs", f"{run['exp']}_s{run['seed']}.log")))
        print(f"{label}: {'would run' if args.dry_run else 'runs'}: {_shell(argv)}")
    if args.dry_run or not todo:
        print(f"{NAME} run: {len(todo)} of {len(runs)} run(s) to "
              f"{'start or continue' if todo else 'do: nothing to do'}")
        return 0
    os.makedirs(osp.join(data_dir, "logs"), exist_ok=True)
    waiting, active, failed = list(todo), [], []
    while waiting or active:
        while waiting and len(active) < args.jobs:
            label, argv, log = waiting.pop(0)
            handle = open(log, "a")
            active.append((label, log, handle, subprocess.Popen(
                [sys.executable] + argv, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)))
            print(f"{label}: started (output: {log})", flush=True)
        time.sleep(1.0)
        for item in [a for a in active if a[3].poll() is not None]:
            active.remove(item)
            label, log, handle, proc = item
            handle.close()
            if proc.returncode:
                failed.append(label)
                print(f"{label}: FAILED (exit {proc.returncode}); see {log}", flush=True)
            else:
                print(f"{label}: done", flush=True)
    print(f"{NAME} run: {len(todo) - len(failed)} of {len(todo)} run(s) ended well"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def cmd_collect(args):
    runs_dir = RUNS_DIR if args.publish else osp.join(args.out, "runs")
    copied, same, skipped, differing = collect(args.data_dir, runs_dir)
    print(f"{NAME} collect: {copied} run(s) copied to {_shown(runs_dir)}, {same} already there"
          + (f", {skipped} not collected" if skipped else "")
          + (f", {differing} differing from their copies (left as they were)"
             if differing else "")
          + ("" if args.publish else f"; --publish copies them to {PAGE_SHOWN}/runs"))
    return 1 if differing else 0


def cmd_report(args):
    runs_dir = args.runs or RUNS_DIR
    out = PAGE_DIR if args.publish else args.out
    claims = report(runs_dir, out)
    for key, cell in claims["cells"].items():
        for c in cell["comparisons"]:
            print(f"{key} vs {c['source']}: {c['verdict']}")
    print(f"{NAME} report: {len(claims['cells'])} cell(s) from {_shown(runs_dir)}; wrote "
          f"{_shown(osp.join(out, 'table.inc'))} and {_shown(osp.join(out, 'claims.json'))}")
    return 0


# ---- the command line ----

def build_parser():
    p = _cli.parser(__file__, __doc__.split("\n\n")[0], epilog=(
        "Each subcommand has its own --help. Outputs go to a scratch folder (default: "
        f"{_cli.scratch(NAME)}) unless --publish, which writes {PAGE_SHOWN}/."))
    sub = p.add_subparsers(dest="command", required=True, metavar="{run,collect,report}",
                           parser_class=functools.partial(_cli.Parser, name=NAME))

    run = sub.add_parser("run", help="start (or continue) the runs of a selection",
                         description="Start or continue one spinup.run command per algorithm, "
                         "game and seed (finished runs are skipped).",
                         formatter_class=_cli.Formatter)
    run.add_argument("--suite", required=True, choices=SUITES, help="the family of games")
    run.add_argument("--algos", nargs="+", choices=ALGOS, default=list(ALGOS),
                     help="the algorithms, each with its preset <algo>_<suite>")
    run.add_argument("--games", nargs="+", type=str, help="games of the suite (default: all "
                     f"of it; minatar: {' '.join(GAMES['minatar'])}; atari: "
                     f"{' '.join(GAMES['atari'])})")
    run.add_argument("--seeds", nargs="+", type=_cli.non_negative, default=[0],
                     help="the seeds to run")
    run.add_argument("--steps", type=_cli.positive, help="environment steps per run, rounded "
                     "up to whole epochs of the preset (default: the preset's own length, "
                     "10M steps; dqn_minatar 5M)")
    run.add_argument("--data_dir", default=DEFAULT_DATA, help="where the runs write "
                     "(created if needed); the same command again continues them")
    run.add_argument("--jobs", type=_cli.positive, default=1, help="runs at once")
    run.add_argument("--dry-run", dest="dry_run", action="store_true",
                     help="print the commands and start nothing")

    col = sub.add_parser("collect", help="copy the runs' records out of --data_dir",
                         description="Copy progress.txt, config.json and provenance.json of "
                         "each run found in --data_dir (partial runs too).",
                         formatter_class=_cli.Formatter)
    col.add_argument("--data_dir", default=DEFAULT_DATA, type=_existing,
                     help="the folder that run wrote to (it must exist)")
    col.add_argument("--out", default=_cli.scratch(NAME),
                     help="where the copies go (as <out>/runs/...) unless --publish")
    _cli.add_publish(col, f"{PAGE_SHOWN}/runs")

    rep = sub.add_parser("report", help="write the page's table and claims.json",
                         description="Write table.inc and claims.json from the collected runs "
                         "and published.tsv.", formatter_class=_cli.Formatter)
    rep.add_argument("--runs", type=_existing, help="the collected runs to report (default: "
                     f"the committed ones, {PAGE_SHOWN}/runs); not with --publish")
    rep.add_argument("--out", default=_cli.scratch(NAME),
                     help="where table.inc and claims.json go unless --publish")
    _cli.add_publish(rep, f"{PAGE_SHOWN}/table.inc and claims.json")
    return p


def _existing(text):
    """A folder that exists (``~`` expanded)."""
    return _cli.folder(osp.expanduser(text))


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.games is None:
            args.games = list(GAMES[args.suite])
        else:
            known = {g.lower(): g for g in GAMES[args.suite]}
            wrong = [g for g in args.games if g.lower() not in known]
            if wrong:
                parser.error(f"run: --games {' '.join(wrong)}: not a {args.suite} game "
                             f"(choose from {', '.join(GAMES[args.suite])})")
            args.games = list(dict.fromkeys(known[g.lower()] for g in args.games))
        missing = NEEDS[args.suite]
        if not args.dry_run:
            import importlib.util
            if importlib.util.find_spec(missing) is None:
                parser.error(f"run: --suite {args.suite} needs the {missing} package: "
                             "pip install -e \".[pixels]\"")
    if args.command == "report" and args.publish and args.runs and \
            osp.realpath(args.runs) != osp.realpath(RUNS_DIR):
        parser.error(f"report: --publish reports the committed runs ({PAGE_SHOWN}/runs); "
                     "leave out --runs, or leave out --publish")
    if args.command == "collect" and not args.publish and \
            osp.realpath(osp.join(args.out, "runs")) == osp.realpath(RUNS_DIR):
        parser.error("collect: --out names the committed folder; give --publish to write it")
    return {"run": cmd_run, "collect": cmd_collect, "report": cmd_report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
