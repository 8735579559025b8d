"""``benchmarks/pixels.py``: the report's numbers and verdicts, collect, the commands that
``run`` starts, one-line refusals, and a try-out that leaves a clean clone clean.

Everything here works on small synthetic run folders (no training). The report is checked
against numbers worked out by hand (final scores, the rule of few seeds) and against
scipy's one-sample t test (five seeds); the committed table and claims.json against a
fresh report of the committed runs.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "pixels.py"
PAGE = ROOT / "docs" / "benchmarks" / "pixels"
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")


@pytest.fixture(scope="module")
def px():
    return load_benchmark("pixels")


def write_run(folder, scores, *, spe=100, epochs=None, game_scores=None, time_step=36.0,
              config=None, cut_last=False):
    """A run folder: progress.txt with one row per score (``AverageEpRet``; with
    ``game_scores`` also ``AverageGameScore``) and a config.json."""
    folder.mkdir(parents=True)
    header = ["Epoch", "AverageEpRet"] + (["AverageGameScore"] if game_scores else []) + [
        "TotalEnvInteracts", "Time"]
    lines = ["\t".join(header)]
    for i, score in enumerate(scores):
        row = [i, score] + ([game_scores[i]] if game_scores else []) + [
            (i + 1) * spe, (i + 1) * time_step]
        lines.append("\t".join(str(x) for x in row))
    text = "\n".join(lines) + "\n"
    if cut_last:
        text += "99\t1.0"           # a row still being written: no newline yet
    (folder / "progress.txt").write_text(text)
    cfg = dict(epochs=len(scores) if epochs is None else epochs, steps_per_epoch=spe)
    cfg.update(config or {})
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def cell_run(px, runs, algo, suite, game, seed, scores, **kw):
    """A collected run (``runs/<exp_name>/s<seed>``) whose config holds its preset's
    settings (so that the report notes no difference from the preset)."""
    settings = {k: v for k, v in px.preset(algo, suite).items() if k not in ("_about", "epochs")}
    settings.update(kw.pop("config", {}))
    spe = kw.pop("spe", settings["steps_per_epoch"])
    settings["steps_per_epoch"] = spe
    return write_run(runs / px.exp_name(algo, suite, game) / f"s{seed}", scores, spe=spe,
                     config=settings, **kw)


def published(path, *rows):
    """A published.tsv of ``rows``: (source, algorithm, suite, game, steps, value)."""
    lines = ["source\talgorithm\tsuite\tgame\tsteps\tvalue\tnote"]
    lines += ["\t".join(map(str, row)) + "\tnote" for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def verdicts(claims, key):
    return {c["source"]: c["verdict"] for c in claims["cells"][key]["comparisons"]}


# ---- the report's numbers ------------------------------------------------------------------

def test_final_score_is_the_mean_of_the_last_tenth_and_seeds_are_counted(px, tmp_path):
    runs = tmp_path / "runs"
    for seed in range(3):   # 20 rows: the last 2 make the score, 11, 12 and 13
        cell_run(px, runs, "ppo", "minatar", "Breakout", seed,
                 [0.0] * 18 + [10 + seed, 12 + seed])      # 2,048 steps per epoch
    table = published(tmp_path / "p.tsv", ("A", "ppo", "minatar", "Breakout", 40960, 12))
    claims = px.report(runs, tmp_path / "out", table)
    cell = claims["cells"]["ppo minatar Breakout"]
    assert cell["ours"]["n"] == 3 and cell["ours"]["by_seed"] == {"0": 11, "1": 12, "2": 13}
    assert cell["ours"]["mean"] == pytest.approx(12) and cell["ours"]["sd"] == pytest.approx(1)
    assert cell["steps"] == {"min": 40960, "by_seed": {"0": 40960, "1": 40960, "2": 40960}}
    assert cell["hours"]["mean"] == pytest.approx(20 * 36 / 3600)
    assert cell["partial_seeds"] == [] and cell["differs_from_preset"] == {}
    assert verdicts(claims, "ppo minatar Breakout") == {"A": "consistent with the target (3 seeds)"}
    inc = (tmp_path / "out" / "table.inc").read_text()
    row = ["minatar", "PPO", "Breakout", "41k", "3", "12.0 ± 1.0", "0.20", "12 (A, 0.04096M)",
           "consistent with the target (3 seeds)"]
    assert "   * - " + "\n     - ".join(row) in inc
    assert ("python benchmarks/pixels.py run --suite minatar --algos ppo --games Breakout "
            "--seeds 0 1 2 --steps 40960") in inc
    assert json.loads((tmp_path / "out" / "claims.json").read_text()) == claims


def test_a_window_of_ten_rows_has_one_and_nan_is_left_out(px):
    assert px.final_score([1.0, 2.0, 3.0]) == 3.0
    assert px.final_score([0.0] * 10 + [4.0, 6.0]) == 5.0          # ceil(1.2) = 2 rows
    assert px.final_score([5.0, math.nan]) is None       # its one row has no value
    assert px.final_score([1.0] * 18 + [math.nan, 8.0]) == 8.0
    assert px.final_score([1.0, math.nan]) is None and px.final_score([]) is None


def test_atari_scores_games_not_lives(px, tmp_path):
    runs = tmp_path / "runs"
    cell_run(px, runs, "ppo", "atari", "Pong", 0, [1.0] * 10, spe=1000,
             game_scores=[-21] * 8 + ["nan", 15])
    cell_run(px, runs, "ppo", "atari", "Pong", 1, [1.0] * 10, spe=1000,
             game_scores=[-21] * 9 + [19])
    table = published(tmp_path / "p.tsv", ("Z", "ppo", "atari", "Pong", 10_000, 17))
    claims = px.report(runs, tmp_path / "out", table)
    cell = claims["cells"]["ppo atari Pong"]
    assert cell["score_column"] == "AverageGameScore"
    assert cell["ours"]["by_seed"] == {"0": 15, "1": 19}
    assert verdicts(claims, "ppo atari Pong") == {"Z": "consistent with the target (2 seeds)"}


def test_fewer_than_five_seeds_decide_nothing_on_either_side(px, tmp_path):
    runs = tmp_path / "runs"
    for seed, score in enumerate([11, 12, 13]):
        cell_run(px, runs, "dqn", "minatar", "Freeway", seed, [score] * 4, spe=250)
    cell_run(px, runs, "dqn", "minatar", "Seaquest", 0, [30] * 4, spe=250)
    table = published(tmp_path / "p.tsv",
                      ("in", "dqn", "minatar", "Freeway", 1000, 12.9),
                      ("high", "dqn", "minatar", "Freeway", 1000, 14.5),
                      ("low", "dqn", "minatar", "Freeway", 1000, 9),
                      ("one", "dqn", "minatar", "Seaquest", 1000, 30.5),
                      ("same", "dqn", "minatar", "Seaquest", 1000, 30))
    claims = px.report(runs, tmp_path / "out", table)
    assert verdicts(claims, "dqn minatar Freeway") == {
        "in": "consistent with the target (3 seeds)", "high": "undecided (below, 3 seeds)",
        "low": "undecided (above, 3 seeds)"}
    assert verdicts(claims, "dqn minatar Seaquest") == {
        "one": "undecided (below, 1 seed)", "same": "consistent with the target (1 seed)"}
    with_test = claims["cells"]["dqn minatar Freeway"]["comparisons"][1]["test"]
    assert with_test["df"] == 2 and with_test["t"] < 0       # stated, not used, below 5 seeds


def test_five_seeds_are_decided_by_a_one_sample_t_test(px, tmp_path):
    from scipy import stats
    runs = tmp_path / "runs"
    scores = [11.0, 12.5, 13.0, 14.0, 15.5]
    for seed, score in enumerate(scores):
        cell_run(px, runs, "ppo", "minatar", "SpaceInvaders", seed, [score] * 10, spe=100)
    table = published(tmp_path / "p.tsv",
                      ("near", "ppo", "minatar", "SpaceInvaders", 1000, 13.5),
                      ("high", "ppo", "minatar", "SpaceInvaders", 1000, 20),
                      ("low", "ppo", "minatar", "SpaceInvaders", 1000, 8))
    claims = px.report(runs, tmp_path / "out", table)
    got = {c["source"]: c for c in claims["cells"]["ppo minatar SpaceInvaders"]["comparisons"]}
    for source, target, word in (("near", 13.5, "consistent with the target"),
                                 ("high", 20, "below"), ("low", 8, "above")):
        ref = stats.ttest_1samp(scores, target)
        test = got[source]["test"]
        assert test["t"] == pytest.approx(ref.statistic) and test["df"] == 4
        assert test["p"] == pytest.approx(ref.pvalue)
        assert (ref.pvalue < 0.05) == (word != "consistent with the target")
        p = "p < 0.001" if ref.pvalue < 0.001 else f"p = {ref.pvalue:.3f}"
        assert got[source]["verdict"] == f"{word} (t = {ref.statistic:.2f}, df = 4, {p})"


def test_seeds_without_spread_have_no_t(px):
    assert px.verdict([21.0] * 5, 20, 10, 10) == (
        "above (no spread over the 5 seeds)", {"t": None, "df": 4, "p": 0.0})
    assert px.verdict([21.0] * 5, 21, 10, 10)[0] == (
        "consistent with the target (no spread over the 5 seeds)")


def test_short_and_partial_runs_are_not_comparable_yet_and_kept(px, tmp_path):
    runs = tmp_path / "runs"
    # seed 0 planned 4883 epochs and has 20; seed 1 has 30: the fewest steps count
    cell_run(px, runs, "ppo", "minatar", "Breakout", 0, [5.0] * 20, epochs=4883)
    cell_run(px, runs, "ppo", "minatar", "Breakout", 1, [6.0] * 30, epochs=4883)
    table = published(tmp_path / "p.tsv",
                      ("gymnax", "ppo", "minatar", "Breakout", 10_000_000, 28),
                      ("issue 57 target", "ppo", "minatar", "Breakout", 10_000_000, 25))
    claims = px.report(runs, tmp_path / "out", table)
    cell = claims["cells"]["ppo minatar Breakout"]
    assert cell["partial_seeds"] == [0, 1] and cell["rows"] == {"0": 20, "1": 30}
    assert cell["ours"]["n"] == 2 and cell["steps"]["min"] == 20 * 2048
    assert set(verdicts(claims, "ppo minatar Breakout").values()) == {
        "not comparable yet (41k of 10M steps)"}
    assert all(c["test"] is None for c in cell["comparisons"])
    inc = (tmp_path / "out" / "table.inc").read_text()
    assert "41k (partial)" in inc and "2 (2 partial)" in inc and "so far" in inc
    assert "≥ 25 (issue 57 target, 10M)" in inc
    assert "ppo minatar Breakout seed 0: partial, 20 of 4883 epochs" in inc
    assert "--seeds 0 1 --steps 10000384" in inc     # the command of the planned runs


def test_a_run_past_the_published_steps_is_not_compared(px, tmp_path):
    runs = tmp_path / "runs"
    cell_run(px, runs, "dqn", "minatar", "Asterix", 0, [17.0] * 10, spe=1000)
    table = published(tmp_path / "p.tsv", ("YT", "dqn", "minatar", "Asterix", 5000, 17))
    claims = px.report(runs, tmp_path / "out", table)
    assert verdicts(claims, "dqn minatar Asterix") == {
        "YT": "not comparable (ran 10k steps; published at 0.005M)"}


def test_a_setting_other_than_the_presets_is_noted(px, tmp_path):
    runs = tmp_path / "runs"
    cell_run(px, runs, "ppo", "minatar", "Freeway", 0, [50.0] * 5, config=dict(pi_lr=0.01))
    claims = px.report(runs, tmp_path / "out", published(tmp_path / "p.tsv"))
    assert claims["cells"]["ppo minatar Freeway"]["differs_from_preset"] == {"0": ["pi_lr"]}
    inc = (tmp_path / "out" / "table.inc").read_text()
    assert "config.json differs from the preset ppo_minatar in pi_lr" in inc
    assert "no published number" in inc


def test_zero_runs_give_an_empty_table_that_says_so(px, tmp_path):
    claims = px.report(tmp_path / "none", tmp_path / "out")
    assert claims["cells"] == {}
    inc = (tmp_path / "out" / "table.inc").read_text()
    assert "   * - no runs collected yet" in inc and "No run has been collected yet" in inc
    assert (tmp_path / "out" / "figures.inc").read_text() == (
        "No run has been collected yet: no figure.\n")


# ---- collect -------------------------------------------------------------------------------

def test_collect_copies_three_files_keeps_partial_runs_and_cuts_machine_paths(
        px, tmp_path, capsys):
    data = tmp_path / "data"
    src = write_run(data / "ppo_minatar-breakout" / "ppo_minatar-breakout_s3", [1.0, 2.0, 3.0],
                    epochs=10, cut_last=True, config=dict(
                        _algorithm="ppo", env_fn="spinup.machinery.run_dir.gym.make("
                        "'MinAtar/Breakout-v1')", logger_kwargs=dict(
                            exp_name="ppo_minatar-breakout", output_dir=str(
                                data / "ppo_minatar-breakout" / "ppo_minatar-breakout_s3"))))
    (src / "provenance.json").write_text('{"run": {"cpu": "x"}}')
    (src / "pyt_save").mkdir()
    (src / "pyt_save" / "model.pt").write_text("weights")
    (src / "vars.json").write_text("{}")
    write_run(data / "dqn_minatar-freeway" / "dqn_minatar-freeway_s0", [1.0], config=dict(
        _algorithm="dqn", env_fn="spinup.machinery.run_dir.gym.make('MinAtar/Asterix-v1')"))
    (data / "notes").mkdir()
    out = tmp_path / "runs"
    assert px.collect(str(data), str(out)) == (1, 0, 1, 0)
    said = capsys.readouterr().out
    assert "ppo_minatar-breakout s3 (partial: 3 of 10 epochs)" in said
    assert "is not dqn on MinAtar/Freeway-v1" in said
    dst = out / "ppo_minatar-breakout" / "s3"
    assert sorted(p.name for p in dst.iterdir()) == ["config.json", "progress.txt",
                                                     "provenance.json"]
    assert (dst / "progress.txt").read_text() == (src / "progress.txt").read_text()[:-len(
        "99\t1.0")]
    config = json.loads((dst / "config.json").read_text())
    assert config["logger_kwargs"]["output_dir"] == (
        "ppo_minatar-breakout/ppo_minatar-breakout_s3")
    assert str(tmp_path) not in (dst / "config.json").read_text()
    assert px.collect(str(data), str(out)) == (0, 1, 1, 0)   # nothing new: nothing copied


def test_a_run_started_again_is_collected_only_where_it_repeats_the_copy(px, tmp_path,
                                                                        capsys):
    """A run started again from its command (here: another machine, so other times) is
    copied over its committed copy only when their shared rows agree, Time aside; a run
    that disagrees leaves the copy as it was, is named, and ``collect`` exits 1."""
    runs = tmp_path / "runs"
    committed = write_run(runs / "ppo_minatar-breakout" / "s1", [1.0, 2.0, 3.0], epochs=10)
    before = (committed / "progress.txt").read_text()

    def again(scores, **kw):
        data = tmp_path / f"data{len(scores)}"
        write_run(data / "ppo_minatar-breakout" / "ppo_minatar-breakout_s1", scores, epochs=10,
                  time_step=50.0, **kw)
        return data

    shorter = again([1.0, 2.0])
    assert px.first_difference(str(shorter / "ppo_minatar-breakout" /
                                   "ppo_minatar-breakout_s1" / "progress.txt"),
                               str(committed / "progress.txt")) is None
    assert px.collect(str(shorter), str(runs)) == (0, 1, 0, 0)
    assert (committed / "progress.txt").read_text() == before

    differs = again([1.0, 2.5, 3.0, 4.0])
    assert px.collect(str(differs), str(runs)) == (0, 0, 0, 1)
    said = capsys.readouterr().out
    assert "differs from the copy" in said
    assert "epoch 1, column AverageEpRet (2.0 there, 2.5 here)" in said
    assert (committed / "progress.txt").read_text() == before
    # --out DIR collects into DIR/runs, which holds the copy here
    result = subprocess.run([sys.executable, str(SCRIPT), "collect", "--data_dir", str(differs),
                             "--out", str(tmp_path)], capture_output=True, text=True, env=ENV)
    assert result.returncode == 1 and "1 differing from their copies" in result.stdout

    longer = again([1.0, 2.0, 3.0, 4.0, 5.0])
    assert px.collect(str(longer), str(runs)) == (1, 0, 0, 0)
    assert px.count_rows(str(committed)) == 5
    assert (committed / "progress.txt").read_text().startswith(before.split("\n")[0])


# ---- run: the commands it starts -----------------------------------------------------------

def test_run_starts_the_cli_command_and_skips_a_finished_run(px, tmp_path, capsys):
    data = tmp_path / "data"
    # seed 9: no committed run of that seed is in the way
    write_run(data / "ppo_minatar-freeway" / "ppo_minatar-freeway_s9", [1.0] * 489, spe=2048)
    assert px.main(["run", "--suite", "minatar", "--algos", "ppo", "--games", "breakout",
                    "FREEWAY", "--seeds", "9", "--steps", "1000000", "--data_dir", str(data),
                    "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert (f"ppo_minatar-breakout s9: would run: python -m spinup.run ppo --config "
            f"ppo_minatar --env MinAtar/Breakout-v1 --epochs 489 --seed 9 --data_dir {data} "
            "--exp_name ppo_minatar-breakout\n") in said
    assert "ppo_minatar-freeway s9: skipped, finished (489 epochs)" in said
    assert px.main(["run", "--suite", "atari", "--games", "BeamRider", "--seeds", "2",
                    "--data_dir", str(data), "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert ("python -m spinup.run ppo --config ppo_atari --env ALE/BeamRider-v5 --epochs 9766 "
            f"--seed 2 --data_dir {data} --exp_name ppo_atari-beamrider") in said
    assert ("python -m spinup.run dqn --config dqn_atari --env ALE/BeamRider-v5 --epochs 100 "
            f"--seed 2 --data_dir {data} --exp_name dqn_atari-beamrider") in said
    assert not (data / "logs").exists()
    assert px.epochs_for("dqn", "minatar", None) == 100
    assert px.epochs_for("ppo", "atari", 1_000_001) == math.ceil(1_000_001 / 1024)


# ---- the command line ----------------------------------------------------------------------

def script(*args, cwd, env=ENV, path=SCRIPT):
    return subprocess.run([sys.executable, str(path), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


REFUSALS = [
    (["run", "--suite", "minatar", "--games", "Pong"], "not a minatar game"),
    (["run", "--suite", "chess"], "invalid choice: 'chess'"),
    (["run", "--suite", "atari", "--steps", "0"], "--steps: 0"),
    (["run", "--suite", "atari", "--seeds", "-1"], "--seeds: -1"),
    (["run", "--suite", "atari", "--jobs", "x"], "'x' is not an integer"),
    (["collect", "--data_dir", "missing"], "missing: no such directory"),
    (["report", "--runs", "missing"], "missing: no such directory"),
    (["report", "--publish", "--runs", "."], "--publish reports the committed runs"),
    ([], "required"),
    (["plot"], "invalid choice: 'plot'"),
]


@pytest.mark.parametrize("args, says", REFUSALS, ids=["_".join(a) or "none" for a, _ in REFUSALS])
def test_bad_input_is_refused_in_one_line(args, says, tmp_path):
    out = script(*args, cwd=tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pixels: ") and says in lines[0], lines
    assert out.stdout == "" and list(tmp_path.iterdir()) == []


def test_help_shows_the_defaults(tmp_path):
    for sub in ([], ["run"], ["collect"], ["report"]):
        out = script(*sub, "--help", cwd=tmp_path)
        assert out.returncode == 0 and out.stdout.startswith(
            "usage: python benchmarks/pixels.py"), out.stderr
        assert "(default" in out.stdout
    assert list(tmp_path.iterdir()) == []


def git(*args):
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com",
                           "-c", "commit.gpgsign=false", *map(str, args)],
                          capture_output=True, text=True, check=True).stdout


def test_collect_and_report_without_publish_leave_a_clean_clone_clean(px, tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and this repository's history")
    clone = tmp_path / "clone"
    git("clone", "-q", ROOT, clone)
    for part in ("benchmarks", "docs/benchmarks/pixels"):   # as in the working tree
        shutil.rmtree(clone / part, ignore_errors=True)
        shutil.copytree(ROOT / part, clone / part, ignore=shutil.ignore_patterns("__pycache__"))
    git("-C", clone, "add", "-A", "benchmarks", "docs/benchmarks/pixels")
    git("-C", clone, "commit", "-q", "--allow-empty", "-m", "the working tree's files")
    data, work, temp = tmp_path / "data", tmp_path / "work", tmp_path / "temp"
    for folder in (work, temp):
        folder.mkdir()
    write_run(data / "ppo_minatar-breakout" / "ppo_minatar-breakout_s0", [1.0, 2.0], epochs=5,
              config=dict(_algorithm="ppo"))
    env = dict(ENV, TMPDIR=str(temp))       # the scratch folder goes under temp
    path = clone / "benchmarks" / "pixels.py"
    out = script("collect", "--data_dir", data, cwd=work, env=env, path=path)
    assert out.returncode == 0, out.stderr[-2000:]
    scratch = temp / "spinup_benchmarks" / "pixels"
    assert (scratch / "runs" / "ppo_minatar-breakout" / "s0" / "progress.txt").is_file()
    out = script("report", "--runs", scratch / "runs", cwd=work, env=env, path=path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "not comparable yet" in out.stdout
    assert (scratch / "table.inc").is_file() and (scratch / "claims.json").is_file()
    assert (scratch / "curves_minatar_breakout.png").stat().st_size > 10_000
    assert ".. figure:: pixels/curves_minatar_breakout.png" in (scratch / "figures.inc").read_text()
    status = git("-C", clone, "status", "--porcelain", "--ignored", "--untracked-files=all")
    assert [ln for ln in status.splitlines() if "__pycache__" not in ln] == []
    assert list(work.iterdir()) == []


# ---- the committed record ------------------------------------------------------------------

def test_committed_table_and_claims_are_a_fresh_report_of_the_committed_runs(px, tmp_path):
    if not (PAGE / "table.inc").exists() and not (PAGE / "runs").is_dir():
        pytest.skip("no committed runs or table yet")
    px.report(PAGE / "runs", tmp_path)
    figures = re.findall(r"^\.\. figure:: pixels/(\S+)$", (PAGE / "figures.inc").read_text(),
                         re.MULTILINE)
    assert figures and all((PAGE / name).is_file() for name in figures)
    assert sorted(figures) == sorted(p.name for p in tmp_path.glob("curves_*.png"))
    for name in ("table.inc", "claims.json", "figures.inc"):
        assert (tmp_path / name).read_text(encoding="utf-8") == (PAGE / name).read_text(
            encoding="utf-8"), (f"docs/benchmarks/pixels/{name} is not what the committed runs "
                                "give: python benchmarks/pixels.py report --publish")


def test_published_numbers_are_well_formed(px):
    rows = px.read_published()
    assert rows and list(rows[0])[:7] == ["source", "algorithm", "suite", "game", "steps",
                                          "value", "note"]
    for r in rows:
        assert r["algorithm"] in px.ALGOS and r["suite"] in px.SUITES, r
        assert r["game"] in px.GAMES[r["suite"]] and r["steps"] > 0 and r["note"].strip(), r
    found = {(r["source"], r["algorithm"], r["suite"], r["game"]): (r["value"], r["steps"])
             for r in rows}
    assert found[("Young & Tian 2019", "dqn", "minatar", "Freeway")] == (50, 5_000_000)
    assert found[("gymnax README (Lange 2022)", "ppo", "minatar", "SpaceInvaders")] == (
        131, 10_000_000)
    assert found[("issue 57 target", "ppo", "atari", "Pong")] == (18, 10_000_000)


def test_the_atari_speed_table_and_sentences_are_those_of_the_committed_record():
    speed = load_benchmark("atari_speed")
    record = json.loads((PAGE / "atari_speed.json").read_text())
    assert (PAGE / "atari_speed.inc").read_text() == speed.table(record)
    for row in record["rows"]:
        assert math.isclose(row["median"], sorted(row["raw"])[len(row["raw"]) // 2], rel_tol=1e-3)
    ratio = {(r["game"], r["num_envs"]): r["median"] for r in record["rows"]
             if r["path"] == "ale_vector"}
    for r in record["rows"]:
        if r["path"] == "gymnasium":
            ratio[(r["game"], r["num_envs"])] /= r["median"]
    one = sorted(v for (g, n), v in ratio.items() if n == 1)
    eight = [v for (g, n), v in ratio.items() if n == 8]
    page = " ".join((ROOT / "docs" / "benchmarks" / "pixels.rst").read_text(
        encoding="utf-8").split())
    user = " ".join((ROOT / "docs" / "user" / "pixels.rst").read_text(
        encoding="utf-8").split())
    assert ".. include:: pixels/atari_speed.inc" in page
    assert f"differ little ({one[0]:.1f} to {one[-1]:.1f} times)" in page
    for text in (page, user):
        assert all(f"{v:.1f}" == "2.4" for v in eight) and "about 2.4 times" in text


def test_the_page_states_the_presets_lengths_and_includes_the_table(px):
    page = " ".join((ROOT / "docs" / "benchmarks" / "pixels.rst").read_text(
        encoding="utf-8").split())
    assert ".. include:: pixels/table.inc" in page and ":file: pixels/published.tsv" in page
    assert ".. include:: pixels/figures.inc" in page
    for algo in px.ALGOS:
        for suite in px.SUITES:
            p = px.preset(algo, suite)
            steps = p["epochs"] * p["steps_per_epoch"]
            assert (f"``{algo}_{suite}``: {p['epochs']:,} epochs of {p['steps_per_epoch']:,} "
                    f"steps, {math.floor(steps / 1e6):g}M steps") in page, (algo, suite)
