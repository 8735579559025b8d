"""Agent steps per second of the two Atari paths of docs/user/pixels.rst (issue 57).

The two ways a run can step ``num_envs`` Atari games with the same preprocessing
(no-op starts, frame skip 4 with max pooling, grey 84x84, 4 zero-padded frames, sticky
actions, FIRE at a reset, episodic life and clipped rewards for training):

* ``gymnasium``: ``num_envs`` envs of :func:`spinup.envs.atari` (gymnasium's wrappers)
  stepped one after another in Python by :class:`spinup.envs.batch.EnvList`, the path a
  run takes with ``--env ALE/<Game>-v5 --num_envs N``;
* ``ale_vector``: one :func:`spinup.envs.atari_vector` (ale-py's C++ ``AtariVectorEnv``,
  its threads chosen by ale-py, seen through ``AtariGames``) in
  :class:`spinup.envs.batch.BatchedTask`, the path of ``ppo(atari_vector(id, N), num_envs=N)``.

Only the envs are timed: uniformly random actions drawn in advance, no network. One agent
step is four emulator frames; the figure is agent steps per second summed over the copies.
Each (game, num_envs, path) is measured ``--repeats`` times, the rounds interleaved in a
shuffled order, and the median is reported: a slow moment of the machine then does not
fall on one configuration. A speed figure is only worth something on an idle machine.

Usage::

    python benchmarks/atari_speed.py                  # --out: a scratch JSON in the temp folder
    python benchmarks/atari_speed.py --publish        # docs/benchmarks/pixels/atari_speed.json

``--publish`` also writes the table of docs/benchmarks/pixels.rst (``atari_speed.inc``)
from that record; tests/test_pixels_benchmark.py checks that the two agree.
"""
import json
import os
import platform
import random
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
from benchmarks import _cli  # noqa: E402
from spinup.envs import atari, atari_vector  # noqa: E402
from spinup.envs.batch import BatchedTask, EnvList  # noqa: E402
from spinup.machinery.provenance import cpu_model  # noqa: E402

PUBLISHED, PUBLISHED_SHOWN = _cli.committed("docs", "benchmarks", "pixels", "atari_speed.json")
TABLE, _ = _cli.committed("docs", "benchmarks", "pixels", "atari_speed.inc")
GAMES = ("Pong", "Breakout", "BeamRider", "SpaceInvaders", "Seaquest", "Qbert")


def make(path, game, num_envs):
    """The ``num_envs`` copies of ``ALE/<game>-v5`` on ``path``, as a run holds them."""
    env_id = f"ALE/{game}-v5"
    if path == "gymnasium":
        return EnvList([atari(env_id)() for _ in range(num_envs)])
    return BatchedTask(atari_vector(env_id, num_envs)())


def steps_per_second(envs, batch_steps, seed):
    """Agent steps per second (all copies) of ``batch_steps`` batch steps after a warm-up
    of 50, random actions drawn before the clock starts."""
    rng = np.random.default_rng(seed)
    actions = rng.integers(envs.action_space.n, size=(batch_steps + 50, envs.num_envs))
    envs.reset(seed)
    for a in actions[:50]:
        envs.step(a)
    start = time.perf_counter()
    for a in actions[50:]:
        envs.step(a)
    return batch_steps * envs.num_envs / (time.perf_counter() - start)


def main(argv=None):
    parser = _cli.parser(__file__, __doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="+", default=["Pong", "Breakout"], choices=GAMES,
                        metavar="GAME", help=f"ALE games, of {', '.join(GAMES)}")
    parser.add_argument("--sizes", nargs="+", type=_cli.positive, default=[1, 8],
                        help="numbers of copies (num_envs)")
    parser.add_argument("--agent_steps", type=_cli.positive, default=4000,
                        help="agent steps (all copies) per measurement")
    parser.add_argument("--repeats", type=_cli.positive, default=5,
                        help="interleaved rounds; the median is reported")
    parser.add_argument("--out", default=os.path.join(_cli.scratch("atari_speed"),
                                                      "atari_speed.json"),
                        help="where the JSON record goes without --publish")
    _cli.add_publish(parser, PUBLISHED_SHOWN)
    args = parser.parse_args(argv)

    paths = ["gymnasium", "ale_vector"]
    configs = [(g, n, p) for g in args.games for n in args.sizes for p in paths]
    envs = {c: make(c[2], c[0], c[1]) for c in configs}
    raw = {c: [] for c in configs}
    order = random.Random(0)
    for r in range(args.repeats):
        round_ = list(configs)
        order.shuffle(round_)
        for c in round_:
            sps = steps_per_second(envs[c], max(1, args.agent_steps // c[1]), seed=r)
            raw[c].append(sps)
            print(f"round {r}  {c[0]:<9} num_envs {c[1]:>2}  {c[2]:<10} {sps:8.0f} steps/s",
                  flush=True)
    rows = [dict(game=g, num_envs=n, path=p, median=statistics.median(raw[(g, n, p)]),
                 raw=[round(x, 1) for x in raw[(g, n, p)]]) for g, n, p in configs]
    record = dict(
        command="python benchmarks/atari_speed.py " + " ".join(argv if argv is not None
                                                                 else sys.argv[1:]),
        machine=dict(processor=cpu_model(), cores=os.cpu_count(), python=platform.python_version()),
        measured=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        agent_steps=args.agent_steps, repeats=args.repeats, rows=rows)
    out = PUBLISHED if args.publish else args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=1)
    print(table(record))
    if args.publish:
        with open(TABLE, "w") as f:
            f.write(table(record))
    print(f"wrote {out}")


def table(record):
    """The reST list-table of a record: one row per (game, num_envs), the median agent
    steps per second of each path and their ratio (ale_vector / gymnasium)."""
    median = {(r["game"], r["num_envs"], r["path"]): r["median"] for r in record["rows"]}
    lines = [".. list-table::", "   :header-rows: 1", "",
             "   * - game", "     - num_envs", "     - gymnasium (steps/s)",
             "     - ale_vector (steps/s)", "     - ratio"]
    for (game, n, path), a in median.items():
        if path != "gymnasium":
            continue
        b = median[(game, n, "ale_vector")]
        lines += [f"   * - {game}", f"     - {n}", f"     - {a:,.0f}", f"     - {b:,.0f}",
                  f"     - {b / a:.2f}"]
    m = record["machine"]
    lines += ["", f"Measured {record['measured']} on {m['processor']} ({m['cores']} cores), "
              f"median of {record['repeats']} interleaved rounds of {record['agent_steps']:,} "
              f"agent steps, by ``{record['command']}``.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
