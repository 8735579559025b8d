#!/usr/bin/env bash
# Learning runs for DDPG / TD3 / SAC recorded in docs/benchmarks/offpolicy.rst.
#   bash benchmarks/offpolicy_learning.sh pendulum [OUT]   # 3 seeds x {ddpg, td3, sac, sac alpha=auto}, 20k steps
#   bash benchmarks/offpolicy_learning.sh cheetah  [OUT]   # SAC and TD3, HalfCheetah-v5, 300k steps, 256x256
# OUT defaults to /work/bench_out/issue3 (keep it outside the repository).
set -euo pipefail
what=${1:-pendulum}
OUT=${2:-/work/bench_out/issue3}
mkdir -p "$OUT"
run() { python -m spinup.run "$@" --data_dir "$OUT"; }
case "$what" in
  pendulum)   # one stream per algorithm pair, so two runs share the machine at a time
    ( for s in 0 10 20; do run ddpg --env Pendulum-v1 --epochs 5 --start_steps 1000 --seed $s --exp_name pend_ddpg
                           run td3  --env Pendulum-v1 --epochs 5 --start_steps 1000 --seed $s --exp_name pend_td3; done ) &
    ( for s in 0 10 20; do run sac  --env Pendulum-v1 --epochs 5 --start_steps 1000 --seed $s --exp_name pend_sac
                           run sac  --env Pendulum-v1 --epochs 5 --start_steps 1000 --seed $s --alpha auto --exp_name pend_sac_auto; done ) &
    wait ;;
  cheetah)
    run sac --env HalfCheetah-v5 --hid "[256,256]" --epochs 75 --seed 0 --exp_name cheetah_sac &
    run td3 --env HalfCheetah-v5 --hid "[256,256]" --epochs 75 --seed 0 --exp_name cheetah_td3 &
    wait ;;
  *) echo "usage: $0 pendulum|cheetah [OUT]"; exit 2 ;;
esac
