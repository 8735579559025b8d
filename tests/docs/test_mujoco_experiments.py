"""The gap experiments' numbers on the MuJoCo page, recomputed from the committed runs.

``docs/benchmarks/mujoco/gaps.inc`` quotes statistics that are not cells of the performance
table, so claims.json (see test_mujoco_claims.py) does not hold them: the experiments under
``docs/benchmarks/mujoco/runs/experiments/`` (tfinit, tforder, tanheps, sb3, nocontact,
noclip, saturation), the default runs at other marks or with fewer seeds (how a cell stood
before its last seeds), pooled samples, areas under the curve. Each entry of :data:`QUOTES`
is a passage of gaps.inc with its numbers as ``{fields}`` and a function that recomputes
those fields, formatted as the page prints them, from the raw ``progress.txt`` files with
the functions of ``benchmarks/mujoco.py`` (its estimators, ``welch``). The passage with the
recomputed numbers filled in must be on the page (whitespace collapsed); when only the
numbers differ, the failure names each printed and recomputed value.

experiments.inc and saturation.inc are written whole by ``mujoco.py report`` and
``mujoco.py saturation --publish``; they are regenerated here and compared line for line.
"""
import functools
import re
import string
from pathlib import Path

import pytest

from conftest import load_benchmark

MJ = load_benchmark("mujoco")
PAGE_DIR = Path(MJ.PAGE_DIR)
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
         9: "nine", 10: "ten", 11: "eleven"}


# ---- formatting, as the page prints numbers ----

def num(x, decimals=0):
    """``x`` rounded, with the page's minus sign (U+2212)."""
    return f"{x:.{decimals}f}".replace("-", "−")


def ms(values):
    """"mean ± sample standard deviation", both rounded to units."""
    return f"{num(values.mean())} ± {num(values.std(ddof=1))}"


def span(values):
    return f"{num(values.min())} to {num(values.max())}"


def listing(values, decimals=0):
    """"a, b and c" in seed order."""
    items = [num(v, decimals) for v in values]
    return ", ".join(items[:-1]) + " and " + items[-1]


def pvalue(p, decimals):
    """"= 0.048" (to ``decimals``) or "< 0.001": a template writes "p {p}"."""
    return "< 0.001" if p < 0.001 else f"= {p:.{decimals}f}"


def band(values):
    """The reference's band: its mean ± its sample standard deviation."""
    return values.mean() - values.std(ddof=1), values.mean() + values.std(ddof=1)


# ---- the committed runs ----

def _memo(method):
    """Each value computed once per :class:`Runs` (the quotes share many of them)."""
    @functools.wraps(method)
    def cached(self, *args, **kwargs):
        key = (method.__name__, args, tuple(sorted(kwargs.items())))
        if key not in self.memo:
            self.memo[key] = method(self, *args, **kwargs)
        return self.memo[key]
    return cached


class Runs:
    """The committed default runs (``runs/here``), experiments (``runs/experiments``) and
    the reference's data set, read by ``benchmarks/mujoco.py``'s own loaders."""

    def __init__(self, here=None, exp=None, ref=None):
        self.here = MJ._load() if here is None else here
        self.exp = MJ._load("experiments") if exp is None else exp
        self.ref = MJ._load_reference() if ref is None else ref
        self.memo = {}

    @staticmethod
    def algo(name):
        """The algorithm a run name is about: "sb3-td3" -> "td3", "ref ppo" -> "ppo"."""
        return next(p for p in re.split("[- ]", name) if p in MJ.ON_POLICY + MJ.OFF_POLICY)

    @_memo
    def table(self, name, task):
        """``name``: "ref ALGO" for the reference, else a directory of runs/here or of
        runs/experiments ("td3", "td3-1m", "sb3-td3", ...)."""
        if name.startswith("ref "):
            table = self.ref[(self.ref.algo == name[4:]) & (self.ref.task == task)]
        else:
            source = self.here if (self.here.algo == name).any() else self.exp
            table = source[(source.algo == name) & (source.task == task)]
        assert not table.empty, (name, task)
        return table

    @_memo
    def at(self, name, task, steps=300_000, first=None, window=60_000):
        """Per-seed values at ``steps``: by default the table's estimator (each seed's mean
        over its three grid points up to the mark); ``first``: the lowest ``first`` seeds
        (how a cell stood before its later seeds)."""
        values = MJ._at(self.table(name, task), steps, self.algo(name), window=window)
        values = values.dropna().sort_index()
        return values if first is None else values.iloc[:first]

    def point(self, name, task, steps, first=None):
        """Per-seed evaluation at one grid point (the experiments table's columns)."""
        return self.at(name, task, steps, first, window=MJ.GRID)

    @_memo
    def area(self, name, task, first=None):
        """Per-seed mean of the grid evaluations up to 300k (the experiments table's last
        column)."""
        grid = MJ._on_grid(self.table(name, task), self.algo(name))
        values = grid[grid["steps"] <= 300_000].groupby("seed")["perf"].mean().sort_index()
        return values if first is None else values.iloc[:first]

    def evaluation(self, name, task, steps):
        """Per-seed value of the epoch that ends at ``steps`` (any epoch, not the grid)."""
        table = self.table(name, task)
        rows = table[(table["steps"] + 1) // 1000 * 1000 == steps]
        return rows.groupby("seed")["perf"].mean()

    @staticmethod
    def welch(a, b, p, prefix=""):
        """Welch's test of ``a`` against ``b`` as the page prints it: t to 2 decimals, df to
        1, p with its relation, to ``p`` decimals ("= 0.31") or "< 0.001"."""
        t, df, pv = MJ.welch(a, b)
        return {prefix + "t": num(t, 2), prefix + "df": num(df, 1),
                prefix + "p": pvalue(pv, p)}


def _sac_eleven(d):
    """SAC on HalfCheetah at 40k: the three default seeds and the eight experiment runs
    (tfinit, tforder, tanheps) that showed no effect there."""
    import pandas as pd
    return pd.concat([d.point(n, "HalfCheetah", 40_000)
                      for n in ("sac", "sac-tfinit", "sac-tforder", "sac-tanheps")])


def _sac_cheetah_40k(d):
    ref, eleven = d.point("ref sac", "HalfCheetah", 40_000), _sac_eleven(d)
    return dict(ref_span=span(ref), ref_mean=num(ref.mean()), n=WORDS[len(eleven)],
                span=span(eleven), mean=num(eleven.mean()), **d.welch(eleven, ref, 3))


def _sac_passes(d):
    """The steps between which the default seeds' mean passes the reference's 40k mean."""
    target = d.point("ref sac", "HalfCheetah", 40_000).mean()
    table = d.table("sac", "HalfCheetah")
    steps = sorted(s for s in ((table["steps"] + 1) // 1000 * 1000).unique() if s > 40_000)
    means = [(s, d.evaluation("sac", "HalfCheetah", s).mean()) for s in steps]
    i = next(i for i, (_, m) in enumerate(means) if m > target)
    (s0, m0), (s1, m1) = means[i - 1], means[i]
    return dict(before=f"{s0 // 1000}k", after=f"{s1 // 1000}k", m0=num(m0), m1=num(m1))


def _sac_against_defaults(d, name):
    runs, default = d.point(name, "HalfCheetah", 40_000), d.point("sac", "HalfCheetah", 40_000)
    return dict(runs=listing(runs), default=listing(default), **d.welch(runs, default, 2))


def _sb3_sac(d):
    sb3, ref = d.point("sb3-sac", "HalfCheetah", 40_000), d.point("ref sac", "HalfCheetah",
                                                                  40_000)
    return dict(n=WORDS[len(sb3)], span=span(sb3), ms=ms(sb3), **d.welch(sb3, ref, 3, "ref_"),
                **d.welch(sb3, _sac_eleven(d), 3, "ours_"))


def _sac_findings(d):
    ref = d.point("ref sac", "HalfCheetah", 40_000).mean()
    sb3, eleven = d.point("sb3-sac", "HalfCheetah", 40_000), _sac_eleven(d)
    return dict(sb3_gap=num(ref - sb3.mean()), our_gap=num(ref - eleven.mean()))


def _sac_sb3_vs_us(d):
    sb3, eleven = d.point("sb3-sac", "HalfCheetah", 40_000), _sac_eleven(d)
    return dict(gap=num(sb3.mean() - eleven.mean()), p=d.welch(sb3, eleven, 3)["p"],
                n_sb3=WORDS[len(sb3)], n_ours=WORDS[len(eleven)])


def _sac_tfinit(d):
    default = d.at("sac", "HalfCheetah")
    return dict(seeds=listing(d.at("sac-tfinit", "HalfCheetah")), default=span(default),
                n=WORDS[len(default)], early=listing(d.point("sac-tfinit", "HalfCheetah",
                                                             40_000)))


def _td3_cheetah(d, first):
    ours, ref = d.at("td3", "HalfCheetah", first=first), d.at("ref td3", "HalfCheetah")
    return dict(ms=ms(ours), ref_ms=ms(ref), ref_n=str(len(ref)),
                below=num(band(ref)[0] - ours.mean()), **d.welch(ours, ref, 2))


def _td3_cheetah_sb3(d):
    sb3, ours = d.at("sb3-td3", "HalfCheetah"), d.at("td3", "HalfCheetah")
    return dict(seeds=listing(sb3), ms=ms(sb3), n=WORDS[len(ours)], **d.welch(sb3, ours, 2))


def _td3_cheetah_pooled(d):
    import pandas as pd
    sb3, ours, ref = (d.at(n, "HalfCheetah") for n in ("sb3-td3", "td3", "ref td3"))
    return dict(n_pool=WORDS[len(ours) + len(sb3)], n_ours=WORDS[len(ours)],
                n_sb3=WORDS[len(sb3)], n_ref=WORDS[len(ref)],
                **d.welch(pd.concat([ours, sb3]), ref, 3),
                p3=d.welch(pd.concat([ours.iloc[:3], sb3]), ref, 3)["p"],
                **d.welch(sb3, ref, 2, "sb3_"))


def _td3_cheetah_tfinit(d):
    tf, ours = d.at("td3-tfinit", "HalfCheetah"), d.at("td3", "HalfCheetah")
    return dict(seeds=listing(tf), ms=ms(tf), n=str(len(tf)),
                **d.welch(tf, ours.iloc[:3], 2, "three_"), **d.welch(tf, ours, 2, "five_"))


def _td3_cheetah_tfinit_curve(d):
    tf = [d.point("td3-tfinit", "HalfCheetah", s).mean() for s in (40_000, 100_000, 200_000)]
    area = {n: d.area(n, "HalfCheetah") for n in ("td3-tfinit", "ref td3", "td3")}
    return dict(curve=", ".join(num(x) for x in tf[:2]) + " and " + num(tf[2]),
                tf=ms(area["td3-tfinit"]), ref=ms(area["ref td3"]),
                three=ms(area["td3"].iloc[:3]), five=ms(area["td3"]),
                **d.welch(area["td3-tfinit"], area["td3"].iloc[:3], 2),
                **d.welch(area["td3-tfinit"], area["td3"], 2, "five_"))


def _td3_cheetah_early(d):
    out = {}
    for steps in (40_000, 100_000):
        out[f"ours{steps // 1000}"] = listing(d.point("td3", "HalfCheetah", steps, first=3))
        out[f"ref{steps // 1000}"] = ms(d.point("ref td3", "HalfCheetah", steps))
    out["ours200"] = listing(d.point("td3", "HalfCheetah", 200_000, first=3))
    out["ref200"] = span(d.point("ref td3", "HalfCheetah", 200_000))
    gain = (d.point("td3", "HalfCheetah", 300_000, first=3)
            - d.point("td3", "HalfCheetah", 200_000, first=3))
    ref200, ref300 = (d.point("ref td3", "HalfCheetah", s).mean() for s in (200_000, 300_000))
    return dict(out, gain=span(gain), ref_gain=num(ref300 - ref200), r200=num(ref200),
                r300=num(ref300))


def _td3_cheetah_below(d):
    """The grid points at which the five seeds' mean is below the reference's band."""
    below, low300, mean300 = [], None, None
    for steps in range(MJ.GRID, 300_001, MJ.GRID):
        mean = d.point("td3", "HalfCheetah", steps).mean()
        low = band(d.point("ref td3", "HalfCheetah", steps))[0]
        if mean < low:
            below.append(steps)
        low300, mean300 = low, mean
    first, last = below[0], below[-1]
    missing = [s for s in range(first, last + 1, MJ.GRID) if s not in below]
    assert len(missing) == 1 and 300_000 not in below
    return dict(first=f"{first // 1000}k", last=f"{last // 1000}k",
                missing=f"{missing[0] // 1000}k", mean=num(mean300), low=num(low300))


def _td3_seed(d, seed):
    """A default TD3 seed on HalfCheetah at 300k: the table's value and its three grid
    evaluations."""
    grid = [d.point("td3", "HalfCheetah", s).iloc[seed] for s in (260_000, 280_000, 300_000)]
    return {f"s{seed}": num(d.at("td3", "HalfCheetah").iloc[seed]), f"g{seed}": listing(grid)}


def _td3_walker_seeds(d):
    ours, ref = d.at("td3", "Walker2d"), d.at("ref td3", "Walker2d")
    low, high = ours[ours < ref.min()], ours[ours > ref.max()]
    assert len(low) == len(high) == 2 and len(ours) == 5
    return dict(low=listing(low), ref_low=num(ref.min()), high=listing(high),
                ref_high=num(ref.max()))


def _history(d, algo, task, first, p=2):
    ours, ref = d.at(algo, task, first=first), d.at("ref " + algo, task)
    low, high = band(ref)
    return dict(ms=ms(ours), n=str(len(ours)), below=num(low - ours.mean()),
                high=num(high), **d.welch(ours, ref, p))


def _td3_ant_history(d):
    ref = d.at("ref td3", "Ant")
    out = {}
    for k in (4, 3, 2):
        ours = d.at("td3", "Ant", first=k)
        out[f"ms{k}"] = ms(ours)
        out[f"p{k}"] = d.welch(ours, ref, 2)["p"]
    return out


def _ant_early(d):
    out = {}
    for algo, marks in (("sac", (100_000, 200_000)), ("td3", (40_000, 100_000))):
        for i, steps in enumerate(marks):
            ours = d.point(algo, "Ant", steps)
            ref = d.point("ref " + algo, "Ant", steps)
            assert ours.max() < ref.min()               # "all below the reference's lowest"
            out[f"{algo}{i}"] = span(ours)
            out[f"{algo}_ref{i}"] = num(ref.min())
    return out


def _nocontact_cells(d):
    out = {}
    for key, name, algo, first in (("sac_def", "sac", "sac", 3),
                                   ("sac_nc", "sac-nocontact", "sac", None),
                                   ("td3_def", "td3", "td3", 2),
                                   ("td3_nc", "td3-nocontact", "td3", None),
                                   ("td3_nctf", "td3-nocontact-tfinit", "td3", None),
                                   ("sac_ref", "ref sac", "sac", None),
                                   ("td3_ref", "ref td3", "td3", None)):
        values = d.at(name, "Ant", first=first)
        out[key] = ms(values)
        if not name.startswith("ref"):
            out[key + "_seeds"] = ", ".join(num(v) for v in values)
        else:
            out[key + "_n"] = str(len(values))
    sac, td3 = d.at("sac", "Ant"), d.at("td3", "Ant")
    out["sac_later"] = ", ".join(num(v) for v in sac.iloc[3:])
    out["td3_seed2"] = num(td3.iloc[2])
    return out


def _sac_nocontact(d):
    nc, ref = d.at("sac-nocontact", "Ant"), d.at("ref sac", "Ant")
    default = d.at("sac", "Ant", first=len(nc))
    return dict(inside=num(nc.iloc[1]), above=", ".join(num(v) for v in nc.drop(nc.index[1])),
                mean=num(nc.mean()), over=num(nc.mean() - band(ref)[1]), n=str(len(nc)),
                gain=num(nc.mean() - default.mean()), **d.welch(nc, default, 3, "def_"),
                ref_gain=num(nc.mean() - ref.mean()), **d.welch(nc, ref, 2, "ref_"))


def _sac_nocontact_curve(d):
    n = len(d.at("sac-nocontact", "Ant"))
    out = {}
    for steps in (40_000, 200_000):
        out[f"nc{steps // 1000}"] = listing(d.point("sac-nocontact", "Ant", steps))
        out[f"def{steps // 1000}"] = listing(d.point("sac", "Ant", steps, first=n))
    return dict(out, nc=ms(d.area("sac-nocontact", "Ant")), ref=ms(d.area("ref sac", "Ant")),
                default=ms(d.area("sac", "Ant", first=n)))


def _td3_nocontact_seeds(d):
    marks = (40_000, 100_000, 200_000, 300_000)
    nc = [d.point("td3-nocontact", "Ant", s) for s in marks]
    ref = [d.point("ref td3", "Ant", s).mean() for s in marks]
    default = [d.point("td3", "Ant", s, first=2) for s in marks]
    area_nc, area_def = d.area("td3-nocontact", "Ant"), d.area("td3", "Ant", first=2)
    return dict(s0=listing([v.iloc[0] for v in nc]), ref=listing(ref),
                default=", ".join(f"{num(v.iloc[0])} and {num(v.iloc[1])}" for v in default),
                area0=num(area_nc.iloc[0]), ref_area=ms(d.area("ref td3", "Ant")),
                area_def=listing(area_def), s1=listing([v.iloc[1] for v in nc]),
                cell1=num(d.at("td3-nocontact", "Ant").iloc[1]), area1=num(area_nc.iloc[1]),
                pairs=f"{num(area_nc.iloc[0])} against {num(area_def.iloc[0])}, "
                      f"{num(area_nc.iloc[1])} against {num(area_def.iloc[1])}",
                before=num(d.point("td3", "Ant", 280_000).iloc[1]),
                after=num(d.point("td3", "Ant", 300_000).iloc[1]))


def _td3_nocontact(d):
    nc, ref = d.at("td3-nocontact", "Ant"), d.at("ref td3", "Ant")
    default = d.at("td3", "Ant", first=len(nc))
    low = band(ref)[0]
    return dict(ms=ms(nc), low=num(low), below=num(low - nc.mean()),
                def_below=num(low - default.mean()), **d.welch(nc, ref, 2, "ref_"),
                **d.welch(nc, default, 2, "def_"), n=WORDS[len(nc)])


def _td3_nocontact_tfinit(d):
    v, ref = d.at("td3-nocontact-tfinit", "Ant"), d.at("ref td3", "Ant")
    marks = (40_000, 100_000, 200_000, 300_000)
    points = [d.point("td3-nocontact-tfinit", "Ant", s) for s in marks]
    top = d.point("ref td3", "Ant", 300_000).max()
    assert points[-1].iloc[0] > top
    area = d.area("td3-nocontact-tfinit", "Ant")
    return dict(s0=num(v.iloc[0]), e0=num(points[-1].iloc[0]), top=num(top), s1=num(v.iloc[1]),
                ms=ms(v), n=str(len(v)), **d.welch(v, ref, 2),
                curve=", ".join(f"{num(p.iloc[0])} and {num(p.iloc[1])}" for p in points),
                area=listing(area), ref_area=ms(d.area("ref td3", "Ant")))


def _td3_ant_steps(d):
    """Seed by seed, the defaults, without contact forces, and with TF1's init as well."""
    names = ("td3", "td3-nocontact", "td3-nocontact-tfinit")
    areas = [d.area(n, "Ant") for n in names]
    cells = [d.at(n, "Ant") for n in names]
    return {f"{kind}{seed}": glue.join(num(v.iloc[seed]) for v in values)
            for kind, values, glue in (("area", areas, ", then "), ("cell", cells, ", "))
            for seed in (0, 1)}


def _td3_ant_findings(d):
    cells = [d.at(n, "Ant", first=2) for n in ("td3", "td3-nocontact", "td3-nocontact-tfinit")]
    ref = d.at("ref td3", "Ant")
    seed1 = [c.iloc[1] for c in cells]
    assert max(seed1) < ref.min()
    return dict(means=", then ".join(num(c.mean()) for c in cells), ref=num(ref.mean()),
                ref_spread=num(ref.max() - ref.min()), tf_spread=num(cells[2].max()
                                                                    - cells[2].min()),
                lo=num(min(seed1)), hi=num(max(seed1)))


def _ppo_early(d):
    out = {}
    for task in ("HalfCheetah", "Ant"):
        ours, ref = d.at("ppo", task), d.at("ref ppo", task)
        out.update({f"{task}_ours": span(ours), f"{task}_ref": span(ref),
                    f"{task}_n": WORDS[len(ours)], f"{task}_ref_n": WORDS[len(ref)],
                    **d.welch(ours, ref, 3, task + "_")})
    return out


def _ppo_start(d):
    out = {}
    for task in ("HalfCheetah", "Ant"):
        out[task + "_ours"] = span(d.point("ppo", task, 4_000))
        out[task + "_ref"] = span(d.point("ref ppo", task, 4_000))
    return out


def _ppo_noclip_start(d):
    p = {n: d.point(n, "HalfCheetah", 4_000)
         for n in ("ref ppo", "ppo", "ppo-noclip", "ppo-tfinit", "ppo-noclip-tfinit")}
    return dict(ref=num(p["ref ppo"].mean()), ref_span=span(p["ref ppo"]), ours=num(p["ppo"].mean()),
                noclip=num(p["ppo-noclip"].mean()), tfinit=num(p["ppo-tfinit"].mean()),
                both=num(p["ppo-noclip-tfinit"].mean()), both_span=span(p["ppo-noclip-tfinit"]))


def _ppo_noclip_cheetah(d):
    v = {n: d.at(n, "HalfCheetah")
         for n in ("ref ppo", "ppo", "ppo-noclip", "ppo-tfinit", "ppo-noclip-tfinit")}
    low, high = band(v["ref ppo"])
    return dict(low=num(low), high=num(high), ours=ms(v["ppo"]), n_ours=str(len(v["ppo"])),
                noclip=ms(v["ppo-noclip"]), n_noclip=str(len(v["ppo-noclip"])),
                **d.welch(v["ppo-noclip"], v["ref ppo"], 3),
                tfinit=ms(v["ppo-tfinit"]), n_tfinit=str(len(v["ppo-tfinit"])),
                tfinit_seeds=listing(v["ppo-tfinit"]), both=ms(v["ppo-noclip-tfinit"]),
                n_both=str(len(v["ppo-noclip-tfinit"])),
                both_seeds=listing(v["ppo-noclip-tfinit"]), ref=ms(v["ref ppo"]))


def _ppo_noclip_ant(d):
    v = {n: d.at(n, "Ant") for n in ("ref ppo", "ppo", "ppo-tfinit", "ppo-noclip-tfinit")}
    start = {n: d.point(n, "Ant", 4_000).mean() for n in ("ref ppo", "ppo", "ppo-noclip-tfinit")}
    low, high = band(v["ref ppo"])
    assert v["ppo-tfinit"].mean() > high                  # "still above the band"
    both = v["ppo-noclip-tfinit"]
    return dict(low=num(low), high=num(high), both0=num(start["ppo-noclip-tfinit"]),
                ref0=num(start["ref ppo"]), ours0=num(start["ppo"]), both=ms(both),
                n=str(len(both)), seeds=", ".join(num(x) for x in both), ref=ms(v["ref ppo"]),
                ours=ms(v["ppo"]), tfinit=ms(v["ppo-tfinit"]),
                n_tfinit=str(len(v["ppo-tfinit"])))


@functools.cache
def _saturation():
    import pandas as pd
    base = Path(MJ.RUNS_DIR) / "experiments" / "saturation"
    return {algo: pd.read_table(base / f"{algo}-Hopper.tsv")
            for algo in ("ddpg", "td3")}


def _saturation_ddpg(d):
    ddpg = _saturation()["ddpg"]
    early = ddpg[ddpg.steps == 12_000]
    stuck = early.at_bound >= 0.99
    by_init = early[stuck].groupby("init").size()
    free = early[~stuck].at_bound
    middle = free.between(1 / 3, 3 / 4)
    late = ddpg[ddpg.steps == 40_000]
    s1 = early[(early.init == "default") & (early.seed == 1)].at_bound.iloc[0]
    return dict(default=str(by_init["default"]), tf=str(by_init["tf"]),
                s1_300k=num(d.at("ddpg", "Hopper").iloc[1]),
                n=str((early.init == "default").sum()), free=str(len(free)),
                middle=str(int(middle.sum())), more=WORDS[int((free > 3 / 4).sum())],
                top=f"{free.max():.2f}", s1=f"{s1:.2f}", stuck=WORDS[int(stuck.sum())],
                still=WORDS[int((late.at_bound >= 0.99).sum())])


def _saturation_u(d):
    ddpg, td3 = _saturation()["ddpg"], _saturation()["td3"]
    s0 = ddpg[(ddpg.init == "default") & (ddpg.seed == 0)].median_abs_u
    stuck = td3[td3.at_bound >= 0.99]
    assert set(stuck.seed) == {8} and len(stuck) == 2     # stuck at 12k and at 40k
    first = td3[(td3.steps == 12_000) & (td3.seed == 0)]
    return dict(ddpg_u=num(s0.iloc[0], 1), ddpg_u40=num(s0.iloc[-1], 1),
                n=str((td3.steps == 12_000).sum()),
                len=num(stuck.len.iloc[0]), td3_u=num(stuck.median_abs_u.iloc[-1], 1),
                share=f"{first.at_bound.iloc[0]:.0%}")


#: (passage of gaps.inc with its numbers as {fields}, function of the runs that returns
#: each field as the page prints it).
QUOTES = [
    # SAC, HalfCheetah
    ("The protocol's two seeds gave {ms} ({seeds}) against the reference's {ref_ms} (five "
     "seeds, {ref_span}): at the band's lower edge ({low})",
     lambda d: dict(ms=ms(d.at("sac", "HalfCheetah", first=2)),
                    seeds=listing(d.at("sac", "HalfCheetah", first=2)),
                    ref_ms=ms(d.at("ref sac", "HalfCheetah")),
                    ref_span=span(d.at("ref sac", "HalfCheetah")),
                    low=num(band(d.at("ref sac", "HalfCheetah"))[0]))),
    ("It reached {s2} (its last evaluation: {last}), and with three seeds the cell is {ms}, "
     "consistent with the band (three seeds; a verdict needs five; Welch t = {t}, df = {df}, "
     "p {p})",
     lambda d: dict(s2=num(d.at("sac", "HalfCheetah").iloc[2]),
                    last=num(d.point("sac", "HalfCheetah", 300_000).iloc[2]),
                    ms=ms(d.at("sac", "HalfCheetah")),
                    **d.welch(d.at("sac", "HalfCheetah"), d.at("ref sac", "HalfCheetah"), 2))),
    ("At 40k steps the reference's five seeds are at {ref_span} (mean {ref_mean}). "
     "{n} runs of this project's SAC are at {span} (mean {mean})", lambda d: {
         **_sac_cheetah_40k(d), "n": _sac_cheetah_40k(d)["n"].capitalize()}),
    ("none of which showed an effect at 40k (Welch t = {t}, df = {df}, p {p} for the {n} "
     "against the reference)", _sac_cheetah_40k),
    ("passes the reference's 40k mean between {before} and {after} steps ({m0}, then {m1})",
     _sac_passes),
    ("On the table's estimator the two seeds reach {seeds}, inside the range of the {n} "
     "default seeds ({default}); at 40k they are at {early}", _sac_tfinit),
    ("40k steps: {runs}, against the default seeds' {default} (Welch t = {t}, df = {df}, "
     "p {p})", lambda d: _sac_against_defaults(d, "sac-tforder")),
    ("{n} seeds, 40k steps: {span}, mean {ms}. That is below the reference as well (Welch "
     "t = {ref_t}, df = {ref_df}, p {ref_p}) and above our eleven runs (t = {ours_t}, "
     "df = {ours_df}, p {ours_p})", _sb3_sac),
    ("So the runs are two samples, not pairs: {runs} at 40k against the defaults' {default} "
     "(Welch t = {t}, df = {df}, p {p})", lambda d: _sac_against_defaults(d, "sac-tanheps")),
    ("also starts slower than the reference, by {sb3_gap} points at 40k where ours is "
     "{our_gap} behind", _sac_findings),
    ("the {gap} points between SB3 and us at 40k (p {p}, {n_sb3} and {n_ours} runs)",
     _sac_sb3_vs_us),
    # TD3, HalfCheetah
    ("Seed 0 is at {s0} (grid evaluations {g0} at 260k to 300k), inside the range of the "
     "reference's five seeds ({ref_span} on the same estimator); seed 1 at {s1} ({g1}), "
     "below all of them. The two seeds' mean, {ms}, was {below} below the band's lower edge "
     "({low})",
     lambda d: dict(
         s0=num(d.at("td3", "HalfCheetah").iloc[0]), s1=num(d.at("td3", "HalfCheetah").iloc[1]),
         g0=listing([d.point("td3", "HalfCheetah", s).iloc[0]
                     for s in (260_000, 280_000, 300_000)]),
         g1=listing([d.point("td3", "HalfCheetah", s).iloc[1]
                     for s in (260_000, 280_000, 300_000)]),
         ref_span=span(d.at("ref td3", "HalfCheetah")),
         ms=ms(d.at("td3", "HalfCheetah", first=2)),
         below=num(band(d.at("ref td3", "HalfCheetah"))[0]
                   - d.at("td3", "HalfCheetah", first=2).mean()),
         low=num(band(d.at("ref td3", "HalfCheetah"))[0]))),
    ("It reached {s2} ({g2}), also below every reference seed", lambda d: _td3_seed(d, 2)),
    ("reached {s3} ({g3}) and {s4} ({g4}), the first inside the reference's range, the "
     "second {over} above its lowest seed",
     lambda d: {**_td3_seed(d, 3), **_td3_seed(d, 4),
                "over": num(d.at("td3", "HalfCheetah").iloc[4]
                            - d.at("ref td3", "HalfCheetah").min())}),
    ("With three seeds the cell was {ms} against {ref_ms} ({ref_n}), its mean {below} below "
     "the lower edge (Welch t = {t}, df = {df}, p {p}): undecided by the page's rule",
     lambda d: _td3_cheetah(d, 3)),
    ("With five seeds the cell is {ms} against {ref_ms}, its mean {below} below the band's "
     "lower edge", lambda d: _td3_cheetah(d, None)),
    ("by a margin the seeds cannot support on their own (Welch t = {t}, df = {df}, p {p})",
     lambda d: _td3_cheetah(d, None)),
    ("at 40k our three are at {ours40} against the reference's {ref40}, at 100k at "
     "{ours100} against {ref100}. The difference opens later: at 200k ours are at {ours200} "
     "(the reference's seeds: {ref200}), and from 200k to 300k ours gain {gain} where the "
     "reference's mean gains {ref_gain} ({r200} at 200k, {r300} at 300k)", _td3_cheetah_early),
    ("our mean is below the reference's band at every grid point from {first} to {last} "
     "except {missing}, and not at 300k ({mean} against the band's lower edge of {low} "
     "there)", _td3_cheetah_below),
    ("Its two seeds reach {seeds} at 300k (the table's estimator), {ms}, a mean also below "
     "the band's lower edge. It is lower than our {n} seeds by an amount the test cannot "
     "tell from zero (Welch t = {t}, df = {df}, p {p})", _td3_cheetah_sb3),
    ("its mean curve is at {curve} at 40k, 100k and 200k",
     lambda d: dict(curve=listing([d.point("sb3-td3", "HalfCheetah", s).mean()
                                   for s in (40_000, 100_000, 200_000)]))),
    ("SB3's {n_sb3} seeds alone against the reference's {n_ref}: Welch t = {sb3_t}, "
     "df = {sb3_df}, p {sb3_p}, no evidence either way. Pooling all {n_pool} PyTorch runs, "
     "our {n_ours} and SB3's {n_sb3}, against the reference's {n_ref} gives t = {t}, "
     "df = {df}, p {p} (with only our first three seeds it was p {p3})",
     _td3_cheetah_pooled),
    ("The two reach {seeds}, {ms} ({n} seeds), consistent with the band; against the three "
     "default seeds, Welch t = {three_t}, df = {three_df}, p {three_p} (against all five: "
     "t = {five_t}, df = {five_df}, p {five_p})", _td3_cheetah_tfinit),
    ("Along the curve their mean is at {curve} at 40k, 100k and 200k, and the mean of their "
     "evaluations up to 300k is {tf}, against the reference's {ref} and the first three "
     "default seeds' {three} (all five: {five}) (TF-initialised against the three default "
     "seeds on that measure: t = {t}, df = {df}, p {p}; against all five: t = {five_t}, "
     "df = {five_df}, p {five_p})", _td3_cheetah_tfinit_curve),
    ("but its two seeds do not differ from the reference significantly (p {sb3_p}), and "
     "pooled with ours p {p}", _td3_cheetah_pooled),
    ("but two seeds against five (p {five_p}) cannot decide it", _td3_cheetah_tfinit),
    ("At 300k steps the defaults' mean (five seeds) is {gap} below the reference's",
     lambda d: dict(gap=num(d.at("ref td3", "HalfCheetah").mean()
                            - d.at("td3", "HalfCheetah").mean()))),
    # TD3, Walker2d
    ("The cell was then {ms} ({n} seeds), its mean above the band's upper edge ({high}), and "
     "the table called it undecided (above, 2 seeds); Welch t = {t}, df = {df}, p {p}",
     lambda d: _history(d, "td3", "Walker2d", 2)),
    ("2026-11-29): {later}. With five seeds the cell is {ms} against the reference's {ref_ms} "
     "({ref_n} seeds), its mean {above} above the band's upper edge",
     lambda d: dict(later=listing(d.at("td3", "Walker2d").iloc[2:]),
                    ms=ms(d.at("td3", "Walker2d")), ref_ms=ms(d.at("ref td3", "Walker2d")),
                    ref_n=str(len(d.at("ref td3", "Walker2d"))),
                    above=num(d.at("td3", "Walker2d").mean()
                              - band(d.at("ref td3", "Walker2d"))[1]))),
    ("two are below every reference seed ({low} against its lowest, {ref_low}), two above "
     "every one ({high} against its highest, {ref_high}), one inside", _td3_walker_seeds),
    ("The mean is carried by seed 3 alone; without it the other four average {rest}",
     lambda d: dict(rest=num(d.at("td3", "Walker2d").drop(3).mean()))),
    # SAC and TD3, Ant
    ("and with three seeds the cell was {ms}, {below} below the band's lower edge (Welch "
     "t = {t}, df = {df}, p {p}): undecided", lambda d: _history(d, "sac", "Ant", 3)),
    ("(With four seeds it was {ms4}, p {p4}; with three {ms3}, p {p3}; with the first "
     "two, {ms2}.", _td3_ant_history),
    ("at 100k and 200k SAC's five seeds are at {sac0} and at {sac1}, all below the "
     "reference's lowest seed ({sac_ref0} and {sac_ref1}); TD3's five seeds are at {td30} at "
     "40k and at {td31} at 100k, all below the reference's lowest ({td3_ref0} and "
     "{td3_ref1})", _ant_early),
    ("   * - SAC\n     - {sac_def_seeds}: {sac_def} (seeds 0 to 2, as the variants; seeds 3 "
     "and 4: {sac_later})\n     - {sac_nc_seeds}: {sac_nc}\n     - not run\n     - {sac_ref} "
     "({sac_ref_n})\n   * - TD3\n     - {td3_def_seeds}: {td3_def} (and seed 2: {td3_seed2})\n"
     "     - {td3_nc_seeds}: {td3_nc}\n     - {td3_nctf_seeds}: {td3_nctf}\n     - {td3_ref} "
     "({td3_ref_n})", _nocontact_cells),
    ("SAC's three runs without the contact forces end inside the reference's band ({inside}) "
     "or above it ({above}); their mean, {mean}, is {over} above the band's upper edge, which "
     "by the table's rule would be undecided (above, {n} seeds). Against the default runs the "
     "mean is {gain} higher (Welch t = {def_t}, df = {def_df}, p {def_p}), against the "
     "reference {ref_gain} higher (t = {ref_t}, df = {ref_df}, p {ref_p})", _sac_nocontact),
    ("Their mean is above the default runs' mean at 40k ({nc40} against {def40}) and at "
     "every grid point from 180k to 300k (at 200k: {nc200} against {def200}), and their mean "
     "evaluation up to 300k is {nc}, against the reference's {ref} and the default runs' "
     "{default}", _sac_nocontact_curve),
    ("TD3's seed 0 without contact forces is at {s0} at 40k, 100k, 200k and 300k, against "
     "the reference's means {ref} and the default seeds' {default}; its mean evaluation up "
     "to 300k, the area under the curve, is {area0}, against the reference's {ref_area} and "
     "the default seeds' {area_def}. Seed 1 is at {s1} at the same marks, {cell1} on the "
     "table's estimator, a mean evaluation of {area1} up to 300k. Each run without contact "
     "forces has a larger area than the default run with the same seed number ({pairs})",
     _td3_nocontact_seeds),
    ("the last after a jump from {before} at 280k to {after}", _td3_nocontact_seeds),
    ("The TD3 cell without contact forces, {ms}, still has its mean below the reference's "
     "band (lower edge {low}), by {below} where the default cell's is {def_below} below "
     "(Welch t = {ref_t}, df = {ref_df}, p {ref_p} against the reference; t = {def_t}, "
     "df = {def_df}, p {def_p} against the defaults; {n} seeds each)", _td3_nocontact),
    ("Seed 0 reaches {s0} (its evaluation at 300k, {e0}, is above every reference seed's, "
     "the highest of which is {top}), seed 1 reaches {s1}; the cell is {ms} ({n} seeds), "
     "consistent with the band. Against the reference, Welch t = {t}, df = {df}, p {p}",
     _td3_nocontact_tfinit),
    ("At 40k, 100k, 200k and 300k the two seeds are at {curve}; their mean evaluation up to "
     "300k is {area}, against the reference's {ref_area}", _td3_nocontact_tfinit),
    ("(seed 0: {area0}; seed 1: {area1}) and, in three of the four steps, the 300k value "
     "(seed 0: {cell0}; seed 1: {cell1})",
     _td3_ant_steps),
    ("with three seeds a side and p {def_p} against the defaults", _sac_nocontact),
    ("Its mean moved toward the reference's with each change ({means}, against {ref}), but "
     "the spread is large: the reference's five seeds lie within {ref_spread} of each other, "
     "our two TF-initialised seeds without contact forces {tf_spread} apart, and our seed 1 "
     "stays between {lo} and {hi} in all three settings", _td3_ant_findings),
    ("its two seeds reach {seeds} ({ms}), consistent with the reference's band of {ref}, "
     "whose six seeds run from {ref_span}",
     lambda d: dict(seeds=listing(d.at("ddpg", "Ant")), ms=ms(d.at("ddpg", "Ant")),
                    ref=ms(d.at("ref ddpg", "Ant")), ref_span=span(d.at("ref ddpg", "Ant")))),
    # PPO
    ("which is above the band by {over} points and not by the test",
     lambda d: dict(over=num(d.at("ppo", "Walker2d", 1_000_000).mean()
                             - band(d.at("ref ppo", "Walker2d", 1_000_000))[1]))),
    ("Hopper at 1M was undecided with three seeds ({ms}); seeds 3 and 4 (run the same way, "
     "2026-11-27) reached {later}",
     lambda d: dict(ms=ms(d.at("ppo", "Hopper", 1_000_000, first=3)),
                    later=listing(d.at("ppo", "Hopper", 1_000_000).iloc[3:]))),
    ("At 300k on HalfCheetah our {HalfCheetah_n} seeds are at {HalfCheetah_ours} and the "
     "reference's {HalfCheetah_ref_n} at {HalfCheetah_ref} (Welch t = {HalfCheetah_t}, "
     "df = {HalfCheetah_df}, p {HalfCheetah_p}); on Ant our {Ant_n} are at {Ant_ours} and "
     "the reference's {Ant_ref_n} at {Ant_ref} (t = {Ant_t}, df = {Ant_df}, p {Ant_p})",
     _ppo_early),
    ("on HalfCheetah ours are at {HalfCheetah_ours} and the reference's at {HalfCheetah_ref}, "
     "on Ant {Ant_ours} against {Ant_ref}", _ppo_start),
    ("On HalfCheetah at 4k steps (the untrained policy's episodes), the reference is at "
     "{ref} ({ref_span}) and ours at {ours}; unclipped actions alone give {noclip}, TF1's "
     "start alone {tfinit}, both together {both} ({both_span})", _ppo_noclip_start),
    ("with the reference's band at {low} to {high}: ours {ours} ({n_ours} seeds, above it); "
     "unclipped alone {noclip} ({n_noclip} seeds, still above; Welch t = {t}, df = {df}, "
     "p {p} against the reference); TF1's start alone {tfinit} ({n_tfinit} seeds: "
     "{tfinit_seeds}, consistent with the band); both together {both} ({n_both} seeds, "
     "consistent with the band: {both_seeds}), against the reference's {ref}",
     _ppo_noclip_cheetah),
    ("On Ant (band {low} to {high}) both together give {both0} at 4k (reference {ref0}, ours "
     "{ours0}) and {both} at 300k ({n} seeds: {seeds}) against the reference's {ref}, where "
     "ours are at {ours}; TF1's start alone gives {tfinit} ({n_tfinit} seeds, still above the "
     "band)", _ppo_noclip_ant),
    # DDPG on Hopper: the saturation runs
    ("At 12k, {default} of {n} seeds are stuck with this project's initialisation and {tf} "
     "of {n} with TensorFlow's. The other {free} are not stuck but many lean on the bounds: "
     "{middle} have between a third and three quarters of their actions there, {more} more "
     "than that (up to {top}); the one of them that ran on, seed 1 of the protocol ({s1} at "
     "12k), reached {s1_300k}. Of the {stuck} stuck at 12k, {still} are still stuck at 40k",
     _saturation_ddpg),
    ("(seed 0: a median :math:`|u|` of {ddpg_u} at both)", _saturation_u),
    ("finds 1 of {n} seeds stuck at 12k (seed 8, every action at a bound, episodes of {len} "
     "steps), still stuck at 40k with the same median :math:`|u|` ({td3_u})", _saturation_u),
    ("(seed 0: {share} of its actions at a bound at 12k", _saturation_u),
]


def collapse(text):
    return re.sub(r"\s+", " ", text).strip()


def _pieces(template):
    """The template as (literal, field name or None) pairs, whitespace collapsed."""
    return [(re.sub(r"\s+", " ", literal), field)
            for literal, field, _, _ in string.Formatter().parse(template)]


def problems(page, runs):
    """Every quote whose recomputed passage is not on ``page`` (collapsed text): either the
    passage is gone or reworded, or it prints numbers other than the recomputed ones."""
    found = []
    for template, compute in QUOTES:
        expected = compute(runs)
        pieces = _pieces(template)
        fields = [f for _, f in pieces if f is not None]
        assert set(fields) <= set(expected), (template[:60], set(fields) - set(expected))
        if collapse(template.format(**expected)) in page:
            continue
        # Where is the passage with other numbers? Each field may be any short text.
        pattern = "".join(re.escape(lit) + (f"(?P<{f}_{i}>.{{1,80}}?)" if f else "")
                          for i, (lit, f) in enumerate(pieces))
        match = re.search(pattern.strip(), page)
        if match is None:
            found.append(f"passage not on the page: {collapse(template)[:100]}...")
            continue
        for i, (_, f) in enumerate(pieces):
            if f and match.group(f"{f}_{i}") != expected[f]:
                found.append(f"{collapse(template)[:50]}...: the page prints {f} = "
                             f"{match.group(f'{f}_{i}')!r}, the runs give {expected[f]!r}")
    return found


@pytest.fixture(scope="module")
def runs():
    return Runs()


def _read(name):
    return (PAGE_DIR / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def gaps():
    return collapse(_read("gaps.inc"))


def test_every_quoted_experiment_number_is_recomputed(gaps, runs):
    assert problems(gaps, runs) == []


@pytest.mark.parametrize("old, new, report", [
    ("p = 0.048", "p = 0.047", "'= 0.047', the runs give '= 0.048'"),         # sb3-sac
    ("1739 ± 159", "1739 ± 160", "'1739 ± 160', the runs give '1739 ± 159'"),  # sac-nocontact
    ("3826, 3858 and 3128", "3826, 3858 and 3182", "and 3182', the runs give"),  # sac-tforder
    ("t = 3.94, df = 6.9", "t = 3.94, df = 6.8", "'6.8', the runs give '6.9'"),  # ppo-noclip
    ("6427 ± 1100", "6472 ± 1100", "'6472 ± 1100', the runs give '6427 ± 1100'"),  # sb3-td3
    ("p = 0.40 against the defaults", "p = 0.41 against the defaults",
     "'= 0.41', the runs give '= 0.40'"),                                   # td3-nocontact
])
def test_an_edited_number_fails(gaps, runs, old, new, report):
    """The check bites: one quoted value edited on a copy of the page is reported as that
    value against the recomputed one."""
    assert gaps.count(old) == 1
    found = problems(gaps.replace(old, new), runs)
    assert any(report in f for f in found), found
    assert all("the runs give" in f for f in found), found


def test_a_moved_run_fails(gaps, runs):
    """... and so does a committed run whose numbers moved while the page stayed: SB3's
    SAC 50 points higher at every evaluation."""
    exp = runs.exp.copy()
    exp.loc[exp.algo == "sb3-sac", "perf"] += 50.0
    moved = Runs(runs.here, exp, runs.ref)
    found = problems(gaps, moved)
    assert found and all("the runs give" in f for f in found)
    assert any("the page prints ms = '4046 ± 220', the runs give '4096 ± 220'" in f
               for f in found), found


def test_the_experiments_table_is_the_runs(tmp_path, runs):
    """experiments.inc, every cell, is what ``report`` writes from the committed runs."""
    out = tmp_path / "experiments.inc"
    MJ._write_experiments(runs.here, runs.ref, str(out))
    assert out.read_text(encoding="utf-8") == _read("experiments.inc")


def test_the_saturation_table_is_the_runs(tmp_path):
    """saturation.inc, every cell, is what ``saturation --publish`` writes from its TSVs."""
    out = tmp_path / "saturation.inc"
    MJ._write_saturation(inc=str(out))
    assert out.read_text(encoding="utf-8") == _read("saturation.inc")
