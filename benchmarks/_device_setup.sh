# Sourced by the scripts a lent GPU machine runs (device_checks.sh, warp_checks.sh): make
# $OUT, put the checkout on PYTHONPATH and install the wheels waiting in .whl/ (packages the
# machine lacks) into /tmp/site, ahead of it on the path.
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD
if ls .whl/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
fi
nvidia-smi -L
