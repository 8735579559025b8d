#!/bin/sh
# Learning benchmarks of A2C and A3C (issue 6). Results: docs/benchmarks/a2c_a3c.rst.
# Usage: sh benchmarks/a2c_a3c_learning.sh OUT_DIR   (runs for a long time; run in the
# background). Summarise/plot with: python benchmarks/a2c_a3c_plot.py OUT_DIR
set -e
OUT=${1:-/tmp/a2c_a3c_bench}
# The page reports EP_A2C=15 (60k steps) for all seeds and EP_A2C=40 (160k) for the
# seeds that had not reached 475 at 60k; A3C 10 x 10000 = 100k; InvertedPendulum 20 x 4000.
EP_A2C=${EP_A2C:-40}
EP_A3C=${EP_A3C:-10}
python -m spinup.run a2c --env CartPole-v1 --epochs $EP_A2C --seed 0 10 20 \
    --exp_name a2c_cp_cpu1 --data_dir $OUT &
python -m spinup.run a2c --env CartPole-v1 --epochs $EP_A2C --cpu 2 --seed 0 10 20 \
    --exp_name a2c_cp_cpu2 --data_dir $OUT &
python -m spinup.run a3c --env CartPole-v1 --epochs $EP_A3C --num_workers 2 --seed 0 10 20 \
    --exp_name a3c_cp_w2 --data_dir $OUT &
python -m spinup.run a2c --env InvertedPendulum-v5 --epochs ${EP_IP:-20} --seed 0 \
    --exp_name a2c_ip --data_dir $OUT &
wait
