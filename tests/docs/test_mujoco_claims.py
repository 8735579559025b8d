"""The MuJoCo page's sentences about table cells against ``docs/benchmarks/mujoco/claims.json``.

``python benchmarks/mujoco.py report --publish`` writes the table and claims.json from the
same per-seed values: every cell's verdict (one rule for every side, five seeds for a
verdict), its seeds, unrounded means and standard deviations, and Welch's t-test of our
seeds against the reference's. :data:`QUOTES` lists each passage of the page that quotes
one of those for a cell: the passage (whitespace collapsed) must still be on the page, and
every value it prints must be the claim's value as the page rounds it. A new seed that
moves a cell, or an edit of a quoted p-value, fails here until prose and claims agree.

Statistics of the gap experiments (tfinit, sb3, ...) are not table cells and are not in
claims.json; their sentences say which runs they use, and test_mujoco_experiments.py
recomputes them from those runs.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ROOT / "docs" / "benchmarks" / "mujoco" / "claims.json"
PAGES = {"gaps": ROOT / "docs" / "benchmarks" / "mujoco" / "gaps.inc",
         "mujoco": ROOT / "docs" / "benchmarks" / "mujoco.rst"}
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}

#: (page, passage, cell, {field: as printed}). Fields: verdict (the claim's verdict, or
#: "consistent"/"undecided" for its kind), n (our seeds, a digit or a word), mean, sd
#: (ours), ref_mean, ref_sd, ref_n, t, df, p (Welch, ours against the reference).
QUOTES = [
    ("gaps", "with three seeds the cell is 7878 ± 1216, consistent with the band (three seeds; "
     "a verdict needs five; Welch t = −0.81, df = 5.0, p = 0.45)", "sac HalfCheetah 300k",
     dict(verdict="consistent", n="three", mean="7878", sd="1216", t="−0.81", df="5.0",
          p="0.45")),
    ("gaps", "With five seeds the cell is 7102 ± 754 against 7793 ± 619, its mean 72 below the "
     "band's lower edge (7174): \"below\" by the page's rule, by a margin the seeds cannot "
     "support on their own (Welch t = −1.58, df = 7.7, p = 0.15)", "td3 HalfCheetah 300k",
     dict(verdict="below", n="five", mean="7102", sd="754", ref_mean="7793", ref_sd="619",
          t="−1.58", df="7.7", p="0.15")),
    ("gaps", "827 ± 551 against the reference's 1057 ± 268 (6 seeds): inside the band, its "
     "mean 37 above the lower edge; the seeds are spread too widely for a test to say more "
     "(Welch t = −0.85, df = 5.6, p = 0.43)", "ddpg Hopper 300k",
     dict(verdict="inside", mean="827", sd="551", ref_mean="1057", ref_sd="268", ref_n="6",
          t="−0.85", df="5.6", p="0.43")),
    ("gaps", "With five seeds the cell is 1770 ± 1557 against the reference's 1298 ± 368 (4 "
     "seeds), its mean 104 above the band's upper edge: \"above\" by the page's rule. The test "
     "does not back it (Welch t = 0.66, df = 4.5, p = 0.54)", "td3 Walker2d 300k",
     dict(verdict="above", n="five", mean="1770", sd="1557", ref_mean="1298", ref_sd="368",
          ref_n="4", t="0.66", df="4.5", p="0.54")),
    ("gaps", "cell is 1577 ± 615 against the reference's 2739 ± 549 (5 seeds, 2037 to 3539), "
     "its mean 612 below the lower edge (2190): below the band by the page's rule (Welch "
     "t = −3.15, df = 7.9, p = 0.014)", "sac Ant 300k",
     dict(verdict="below", mean="1577", sd="615", ref_mean="2739", ref_sd="549", ref_n="5",
          t="−3.15", df="7.9", p="0.014")),
    ("gaps", "cell is 1650 ± 812 against 2589 ± 113", "td3 Ant 300k",
     dict(mean="1650", sd="812", ref_mean="2589", ref_sd="113")),
    ("gaps", "the table calls it below the band by the page's rule (Welch t = −2.56, df = 4.2, "
     "p = 0.06", "td3 Ant 300k", dict(verdict="below", t="−2.56", df="4.2", p="0.06")),
    ("gaps", "five seeds the cell is 2157 ± 328 against 1844 ± 348 (8 seeds): inside, 35 below "
     "the band's upper edge (Welch t = 1.64, df = 9.1, p = 0.14)", "ppo Hopper 1M",
     dict(verdict="inside", n="five", mean="2157", sd="328", ref_mean="1844", ref_sd="348",
          ref_n="8", t="1.64", df="9.1", p="0.14")),
    ("gaps", "but not on Walker2d at 1M (t = 1.97, df = 8.5, p = 0.082)", "ppo Walker2d 1M",
     dict(t="1.97", df="8.5", p="0.082")),
    ("gaps", "(p < 0.001, 0.020, < 0.001 and 0.001 for HalfCheetah 300k", "ppo HalfCheetah 300k",
     dict(p="< 0.001")),
    ("gaps", "(p < 0.001, 0.020, < 0.001 and 0.001 for", "ppo Walker2d 300k", dict(p="0.020")),
    ("gaps", "0.020, < 0.001 and 0.001 for HalfCheetah 300k", "ppo Ant 300k", dict(p="< 0.001")),
    ("gaps", "< 0.001 and 0.001 for HalfCheetah 300k, Walker2d 300k, Ant 300k and Ant 1M",
     "ppo Ant 1M", dict(p="0.001")),
    ("gaps", "the column says \"above\" at 300k on HalfCheetah, Walker2d and Ant and at 1M on "
     "Walker2d and Ant", "ppo Walker2d 1M", dict(verdict="above")),
    ("gaps", "(Welch t = 7.57, df = 10.1, p < 0.001)", "ppo HalfCheetah 300k",
     dict(t="7.57", df="10.1", p="< 0.001")),
    ("gaps", "with all five our mean is 40.7 ± 1.2, inside the band (5 seeds); Welch t = 0.58, "
     "df = 8.0, p = 0.58", "sac Swimmer 300k",
     dict(mean="40.7", sd="1.2", verdict="inside", t="0.58", df="8.0", p="0.58")),
    ("mujoco", "373 ± 12 against 334 ± 61 at 300k", "ppo Humanoid 300k",
     dict(mean="373", sd="12", ref_mean="334", ref_sd="61")),
    ("mujoco", "460 ± 30 against 451 ± 46 at 1M", "ppo Humanoid 1M",
     dict(mean="460", sd="30", ref_mean="451", ref_sd="46")),
    ("mujoco", "consistent with the reference's band at both marks, from three seeds",
     "ppo Humanoid 1M", dict(verdict="consistent", n="three")),
    ("mujoco", "our TD3 reaches 8780 and our SAC 11572 at 1M", "td3 HalfCheetah 1M",
     dict(mean="8780")),
    ("mujoco", "our TD3 reaches 8780 and our SAC 11572 at 1M", "sac HalfCheetah 1M",
     dict(mean="11572")),
    ("mujoco", "On Hopper our SAC reaches 3520 and our TD3 3569 at 1M (one seed each), both "
     "consistent with the reference's bands (3468 ± 140 and 3392 ± 274, five seeds each; ours "
     "one seed each)", "sac Hopper 1M",
     dict(verdict="consistent", n="one", mean="3520", ref_mean="3468", ref_sd="140",
          ref_n="five")),
    ("mujoco", "our TD3 3569 at 1M (one seed each), both consistent with the reference's bands "
     "(3468 ± 140 and 3392 ± 274", "td3 Hopper 1M",
     dict(verdict="consistent", mean="3569", ref_mean="3392", ref_sd="274")),
    ("mujoco", "On Walker2d our TD3 reaches 4110 at 1M (one seed), above the reference's band "
     "(3752 ± 301, its four seeds with test returns) but one seed decides nothing, so the "
     "table says \"undecided\"", "td3 Walker2d 1M",
     dict(verdict="undecided", n="one", mean="4110", ref_mean="3752", ref_sd="301",
          ref_n="four")),
    ("mujoco", "Our SAC on Walker2d reaches 3820 at 1M (one seed), consistent with the "
     "reference's band (4271 ± 1148, five seeds)", "sac Walker2d 1M",
     dict(verdict="consistent", n="one", mean="3820", ref_mean="4271", ref_sd="1148",
          ref_n="five")),
]


def collapse(text):
    return " ".join(text.split())


def _number(text):
    return int(WORDS.get(text, text))


def _matches(field, printed, claim):
    """Whether ``printed`` is the claim's value of ``field`` as the page prints it."""
    ours, ref, test = claim["ours"], claim["reference"], claim["welch"]
    if field == "verdict":
        return claim["verdict"] == printed or (
            printed in ("consistent", "undecided") and claim["verdict"].startswith(printed))
    if field in ("n", "ref_n"):
        return _number(printed) == (ours if field == "n" else ref)["n"]
    if field in ("mean", "sd", "ref_mean", "ref_sd"):
        side = ref if field.startswith("ref_") else ours
        value = side[field.replace("ref_", "")]
        decimals = len(printed.split(".")[1]) if "." in printed else 0   # as printed
        return value is not None and f"{value:.{decimals}f}" == printed
    value = test[field]
    if field == "p" and printed.startswith("<"):
        return value < float(printed[1:])
    if field == "t":
        return f"{value:.2f}".replace("-", "−") == printed
    if field == "df":
        return f"{value:.1f}" == printed
    decimals = len(printed.split(".")[1])           # p as printed: round to its digits
    return round(value, decimals) == float(printed)


def problems(pages, claims):
    """Every disagreement between the pages' text (name -> collapsed text) and claims."""
    found = []
    for page, passage, cell, fields in QUOTES:
        passage = collapse(passage)
        if passage not in pages[page]:
            found.append(f"{page}: passage not on the page: {passage[:80]}...")
            continue
        claim = claims["cells"].get(cell)
        if claim is None:
            found.append(f"{cell}: no such cell in claims.json")
            continue
        for field, printed in fields.items():
            if printed not in passage:
                found.append(f"{cell}: the passage does not print {field} {printed!r}")
            elif not _matches(field, printed, claim):
                found.append(f"{cell}: the page prints {field} {printed!r}; claims.json "
                             f"has {claim['verdict'] if field == 'verdict' else claim}")
    return found


@pytest.fixture(scope="module")
def claims():
    return json.loads(CLAIMS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pages():
    return {name: collapse(path.read_text(encoding="utf-8")) for name, path in PAGES.items()}


def test_every_quoted_cell_agrees_with_claims(pages, claims):
    assert problems(pages, claims) == []


@pytest.mark.parametrize("edit", [("p = 0.15", "p = 0.16"), ("p = 0.014", "p = 0.14"),
                                  ("df = 8.0, p = 0.58", "df = 8.0, p = 0.68")])
def test_an_edited_quote_fails(pages, claims, edit):
    """The check bites: an edit of one quoted value on the page is reported."""
    old, new = edit
    assert pages["gaps"].count(old) >= 1
    edited = dict(pages, gaps=pages["gaps"].replace(old, new))
    assert problems(edited, claims)


def test_an_edited_claim_fails(pages, claims):
    """... and so is a claim that moved (a new seed) while the page stayed."""
    moved = json.loads(json.dumps(claims))
    moved["cells"]["td3 HalfCheetah 300k"]["welch"]["p"] = 0.049
    assert any("td3 HalfCheetah 300k" in p for p in problems(pages, moved))


def test_the_table_shows_the_claims_verdicts(claims):
    """table.inc and claims.json come from one report: each row's two verdicts, in order."""
    table = (ROOT / "docs" / "benchmarks" / "mujoco" / "table.inc").read_text(encoding="utf-8")
    cells = re.findall(r"^   \* - (\w+)\n((?:     - .*\n){7})", table, flags=re.M)[1:]
    assert len(cells) == len(claims["cells"]) // 2          # [1:]: not the header row
    for algo, block in cells:
        values = [line[len("     - "):] for line in block.splitlines()]
        task = values[0]
        for mark, verdict in (("300k", values[3]), ("1M", values[6])):
            assert claims["cells"][f"{algo.lower()} {task} {mark}"]["verdict"] == verdict


def test_the_rule_on_the_page_is_the_rule_in_the_claims(pages, claims):
    assert claims["seeds_to_decide"] == 5
    assert "a verdict, \"inside\", \"below\" or \"above\", needs five seeds of ours" \
        in pages["mujoco"]


def test_the_engine_table_and_its_sentences_come_from_the_raw_differences(pages):
    """physics.inc and the sentences about it, recomputed from the committed raw data
    (``mujoco.py physics --publish`` writes both)."""
    import pandas as pd
    bench = ROOT / "docs" / "benchmarks" / "mujoco"
    raw = pd.read_table(bench / "runs" / "experiments" / "physics" / "differences.tsv",
                        dtype={"release": str})
    table = (bench / "physics.inc").read_text(encoding="utf-8")
    tasks = re.findall(r"^     - (\w+)$", table.split("   * - 2.3.3")[0], flags=re.M)
    for release, block in re.findall(r"^   \* - ([\d.]+)\n((?:     - .*\n)+)", table, flags=re.M):
        cells = [line[len("     - "):] for line in block.splitlines()]
        for task, cell in zip(tasks, cells):
            d = raw[(raw.release == release) & (raw.task == task)]["difference"]
            assert len(d) == 1000
            assert cell == f"{d.max():.0e} ({int((d > 1e-6).sum())})", (release, task)
    hopper = raw[(raw.task == "Hopper") & raw.release.isin(["2.3.3", "3.0.1", "3.2.7", "3.3.7"])]
    counts = hopper.groupby("release")["difference"].apply(lambda d: int((d > 1e-6).sum()))
    assert set(counts) == {599} and round(hopper["difference"].max(), 1) == 0.2
    assert "(under the older releases 599 of the 1000 states differ, by up to 0.2)" \
        in pages["mujoco"]
    ant = raw[raw.task == "Ant"].groupby("release")["difference"]
    assert set(ant.apply(lambda d: int((d > 1e-6).sum()))) == {984}
    assert 2 <= ant.max().min() and ant.max().max() <= 3
    assert "(984 of the 1000 states, by up to 2 or 3)" in pages["mujoco"]


def test_the_published_tables_come_from_their_sources():
    """Each number of the Zoo and CleanRL tables is a row of published.tsv (file, commit and
    address of the source, the value as the source prints it, rounded as the page does)."""
    import pandas as pd
    bench = ROOT / "docs" / "benchmarks"
    rows = pd.read_table(bench / "mujoco" / "published.tsv", dtype=str)
    assert rows["url"].str.contains(r"/blob/[0-9a-f]{40}/").all()
    for _, r in rows.iterrows():               # the page's number is the source's, rounded
        assert f"{float(r['value']):.0f}" == r["as_printed_on_page"], dict(r)
    page = (bench / "mujoco.rst").read_text(encoding="utf-8")
    section = page.split("Other published results")[1]
    tables = re.findall(r"^(PPO|TD3|SAC|DDPG) +(?:1M|``-v\d``) +(.+)$", section, flags=re.M)
    assert len(tables) == 7                     # 3 Zoo rows, 4 CleanRL rows
    printed = set(rows["as_printed_on_page"])
    for algo, cells in tables:
        for number in re.findall(r"\d+", cells):
            assert number in printed, (algo, number)
        sources = rows[rows["algorithm"].str.upper() == algo]
        assert set(re.findall(r"\d+", cells)) <= set(sources["as_printed_on_page"]), algo
