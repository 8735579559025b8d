#!/usr/bin/env bash
# Learning benchmarks for TRPO / NPG (issue 4). Results: docs/benchmarks/trpo.rst.
# Usage: benchmarks/trpo_learning.sh [--publish] [OUT_DIR]   (default /work/bench_out/issue4)
# Every experiment runs as its own process, all in parallel (niced), then plots. The plots
# go to OUT_DIR; with --publish to docs/images/, the figures of the docs pages.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PUBLISH=0
if [ "${1:-}" = "--publish" ]; then PUBLISH=1; shift; fi
case "${1:-}" in
  -h|--help) sed -n '2,5p' "$0" | cut -c3-; exit 0 ;;
  -*) echo "trpo_learning.sh: unknown option ${1} (see --help)" >&2; exit 2 ;;
esac
OUT=${1:-/work/bench_out/issue4}
mkdir -p "$OUT"
IMAGES="$OUT"
if [ "$PUBLISH" = 1 ]; then IMAGES="$ROOT/docs/images"; fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
R="nice -n 5 python -m spinup.run"

# CartPole-v1, defaults (50 epochs x 4000 steps), seeds 0 10 20
for s in 0 10 20; do
  $R trpo --env CartPole-v1 --exp_name trpo_cartpole --seed $s --data_dir "$OUT" \
    > "$OUT/cartpole_s$s.log" 2>&1 &
done
# InvertedPendulum-v5, 50 epochs
$R trpo --env InvertedPendulum-v5 --exp_name trpo_invpend --seed 0 --data_dir "$OUT" \
  > "$OUT/invpend.log" 2>&1 &
# Exercise 2.1, reduced from the spec's 250 epochs / seeds 0 10 20 to 50 epochs / seeds
# 0 10. Same runs as `--train_v_iters[v] 0 80 --exp_name ex21 --epochs 50 --seed 0 10 --dt`,
# one process each, named ex21_v0 / ex21_v80. The train_v_iters=80 runs are also our
# Hopper-v5 benchmark.
for v in 0 80; do
  for s in 0 10; do
    $R trpo --env Hopper-v5 --train_v_iters $v --exp_name ex21_v$v --epochs 50 --seed $s \
      --dt --data_dir "$OUT" > "$OUT/ex21_v${v}_s$s.log" 2>&1 &
  done
done
# NPG (no line search) and two MPI processes, CartPole-v1, 20 epochs
$R npg --env CartPole-v1 --exp_name npg_cartpole --epochs 20 --seed 0 --data_dir "$OUT" \
  > "$OUT/npg.log" 2>&1 &
$R trpo --env CartPole-v1 --exp_name trpo_cartpole_cpu2 --cpu 2 --epochs 20 --seed 0 \
  --data_dir "$OUT" > "$OUT/cpu2.log" 2>&1 &
wait

# Plots (docs/images with --publish)
python -m spinup.run plot "$OUT"/*_ex21_v0/ "$OUT"/*_ex21_v80/ \
  --legend "train_v_iters=0" "train_v_iters=80" --savefig "$IMAGES/trpo_ex21.png"
python -m spinup.run plot "$OUT"/trpo_cartpole/ "$OUT"/npg_cartpole/ "$OUT"/trpo_cartpole_cpu2/ \
  --legend "TRPO (3 seeds)" "NPG (seed 0)" "TRPO --cpu 2 (seed 0)" \
  --savefig "$IMAGES/trpo_cartpole.png"
python -m spinup.run plot "$OUT"/trpo_invpend/ --legend "TRPO InvertedPendulum-v5 (seed 0)" \
  --savefig "$IMAGES/trpo_invpend.png"
python "$ROOT/benchmarks/trpo_summary.py" "$OUT"
