#!/usr/bin/env bash
# Learning benchmark for VPG and PPO with the spec's defaults (4000 steps/epoch).
# Usage: bash benchmarks/onpolicy_learning.sh [OUT_DIR] [EPOCHS]
# Then:  python benchmarks/summarize.py OUT_DIR   (final/peak Performance per run)
set -euo pipefail
out=${1:-data/bench_onpolicy}
epochs=${2:-50}
for algo in ppo vpg; do
  python -m spinup.run "$algo" --env CartPole-v1 --epochs "$epochs" --seed 0 10 20 \
    --exp_name "${algo}_cartpole" --data_dir "$out"
done
