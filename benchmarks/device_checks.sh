#!/usr/bin/env bash
# Every GPU check of spinup's `device` support in one go, for a machine with a CUDA GPU
# (docs/user/gpu.rst, "Checking on a GPU"). Writes at most 8 files to $OUT:
#   pytest.log     tests/test_update_graph.py and tests/test_device.py (GPU tests included;
#                  -rfEsxXp: every test id with its outcome, no passed test's output)
#   device.rst/.json  benchmarks/device_speed.py: CPU, GPU eager, GPU graph, every case
#   sac100k.tar.gz 100k-step SAC HalfCheetah-v5 runs on cuda (defaults, seeds 0-2, run together)
#   profile.txt    benchmarks/device_profile.py: where a graph run's time goes
# Wheels in .whl/ (packages the machine lacks, e.g. gymnasium and mujoco) are installed
# first into /tmp/site. Usage: OUT=/some/folder bash benchmarks/device_checks.sh
set -u
OUT=${OUT:-/tmp/device_checks}
. "$(dirname "$0")/_device_setup.sh"   # $OUT, PYTHONPATH, the wheels of .whl/
python3 -c "import torch, gymnasium, mujoco, spinup; print('torch', torch.__version__, torch.cuda.get_device_name(0))" || exit 1

echo "== tests $(date +%T)"
timeout 200 python3 -m pytest -q -rfEsxXp -p no:cacheprovider -o addopts="" -n 8 --timeout 180 \
    tests/test_update_graph.py tests/test_device.py > "$OUT/pytest.log" 2>&1
tail -30 "$OUT/pytest.log"

echo "== speed $(date +%T)"
timeout 330 python3 benchmarks/device_speed.py --out "$OUT/device.rst" --json "$OUT/device.json" \
    2>&1 | grep '^{\|captured\|could not\|Error'

echo "== sac 100k, seeds 0 1 2 at once (learning, not timing) $(date +%T)"
rm -rf /tmp/runs
for seed in 0 1 2; do
    timeout "${SAC_SECONDS:-420}" python3 -m spinup.run sac --env HalfCheetah-v5 --epochs 25 \
        --device cuda --seed $seed --exp_name sac-cuda --data_dir /tmp/runs > /tmp/sac_$seed.log 2>&1 &
done
wait
grep -h 'epoch 25/25\|could not\|Error' /tmp/sac_*.log
(cd /tmp/runs && tar czf "$OUT/sac100k.tar.gz" sac-cuda/*/progress.txt sac-cuda/*/config.json \
    sac-cuda/*/provenance.json)
echo "== profile $(date +%T)"
timeout 150 python3 benchmarks/device_profile.py 2>&1 | grep -v '^epoch\|WARNING\|Logging\|Saving\|Number of\|^$' \
    > "$OUT/profile.txt"
head -12 "$OUT/profile.txt"
echo "== done $(date +%T)"
