#!/usr/bin/env bash
# The GPU checks of the MuJoCo Warp tasks (issue 56) in one call of a lent GPU machine.
# Prepared on a CPU machine and not yet run on a GPU. Writes to $OUT:
#   pytest.log       the MuJoCo Warp tests and every device test, with their ids (-rA);
#                    the repository and temp paths replaced by <repo> and <tmp>
#   warp_speed.json  benchmarks/warp_speed.py: sim alone and PPO's collection path
#   ppo_<task>_s<seed>.tar.gz  PPO on spinup/<task>-v5 with 2048 copies, cut at $PPO_SECONDS
# Packages the machine lacks go in .whl/ first (on the CPU machine, for the device's
# Python: pip download --no-deps -d .whl mujoco-warp==4.0.0 warp-lang==1.19.0 ...).
# Usage: OUT=/some/folder bash benchmarks/warp_checks.sh
set -u
OUT=${OUT:-/tmp/warp_checks}
PPO_SECONDS=${PPO_SECONDS:-150}
SEEDS=${SEEDS:-0}
TASKS=${TASKS:-"Ant HalfCheetah"}
. "$(dirname "$0")/_device_setup.sh"   # $OUT, PYTHONPATH, the wheels of .whl/
python3 -c "import torch, warp, mujoco_warp, spinup.envs; print('torch', torch.__version__, torch.cuda.get_device_name(0), 'warp', warp.__version__)" || exit 1
scrub() { sed -i "s#$PWD#<repo>#g; s#/tmp/[A-Za-z0-9_./-]*#<tmp>#g" "$1"; }

echo "== tests $(date +%T)"
timeout 240 python3 -m pytest -rA -p no:cacheprovider -o addopts="" -n 4 --timeout 200 \
    tests/envs/test_mujoco_warp.py tests/test_update_graph.py tests/test_device.py \
    > "$OUT/pytest.log" 2>&1
scrub "$OUT/pytest.log"
grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|passed|failed" "$OUT/pytest.log" | tail -40

echo "== speed $(date +%T)"
timeout 150 python3 benchmarks/warp_speed.py --device cuda --sizes 1024 4096 16384 \
    --steps 50 --repeats 3 --out "$OUT/warp_speed.json" 2>&1 | tail -32

echo "== ppo, 2048 copies, ${PPO_SECONDS} s each (learning, not timing) $(date +%T)"
rm -rf /tmp/warp_runs
for task in $TASKS; do
    for seed in $SEEDS; do
        timeout "$PPO_SECONDS" python3 -m spinup.run ppo --env "spinup/$task-v5" \
            --num_envs 2048 --steps_per_epoch 65536 --epochs 1000 --device cuda \
            --seed "$seed" --exp_name "ppo_$task" --data_dir /tmp/warp_runs \
            > "/tmp/warp_ppo_${task}_$seed.log" 2>&1
        tail -2 "/tmp/warp_ppo_${task}_$seed.log"
        (cd /tmp/warp_runs && tar czf "$OUT/ppo_${task}_s$seed.tar.gz" \
            "ppo_$task/ppo_${task}_s$seed/progress.txt" "ppo_$task/ppo_${task}_s$seed/config.json")
    done
done
echo "== done $(date +%T)"
