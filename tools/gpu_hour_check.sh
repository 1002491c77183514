#!/usr/bin/env bash
# The first minutes of `--recipe gpu-hour` on one GPU, sized for a short lease (docs/training.md):
#   1. the search kernels compiled (outside the run's clock, as a cached machine would have them);
#   2. the recipe from scratch for $MINUTES minutes of wall time (default 6), a snapshot every
#      $SNAPSHOT minutes (default 2), and the GPU's use sampled every 2 seconds beside it;
#   3. if the epoch in progress would run past $DEADLINE seconds of this script (default 560),
#      the run gets Ctrl-C's signal, which leaves its last checkpoint and snapshots whole.
# The log, metrics.csv, the GPU trace and the newest four snapshots go to $OUT (default
# runs/gpu-hour-check); the run itself to $RUN (default a fresh temporary folder).
#   bash tools/gpu_hour_check.sh [DEVICE] [TRAIN.PY FLAGS...]   DEVICE: cuda (the default), or
#   cpu to rehearse with smaller flags; PY=.venv/bin/python picks the interpreter (default python3).
set -u
DEVICE=${1:-cuda}
shift $(($# > 0 ? 1 : 0))
OUT=${OUT:-runs/gpu-hour-check}
PY=${PY:-python3}
MINUTES=${MINUTES:-6}
SNAPSHOT=${SNAPSHOT:-2}
DEADLINE=${DEADLINE:-560}
RUN=${RUN:-$(mktemp -d)/gpu-hour}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
. "$(dirname "$0")/steps.sh"

machine_line
t0=$SECONDS
$PY -m alphagomoku.compile_kernels >"$OUT/compile.log" 2>&1 || { tail -n 20 "$OUT/compile.log"; exit 1; }
echo "== kernels compiled in $((SECONDS - t0)) s"

if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 2 \
        >"$OUT/gpu-use.csv" 2>&1 &
    sampler=$!
fi
left=$((DEADLINE - SECONDS))
echo "== gpu-hour for $MINUTES minutes (stopped at $left s at the latest): $RUN"
timeout -s INT --kill-after 30 "$left" $PY scripts/train.py --recipe gpu-hour --device "$DEVICE" \
    --time-budget-minutes "$MINUTES" --snapshot-minutes "$SNAPSHOT" --run-dir "$RUN" \
    --no-progress "$@" >"$OUT/train.log" 2>&1
rc=$?
[ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null
echo "== train.py: exit $rc after $((SECONDS - t0)) s"
grep -E "^(device|\[worker 0\]|search kernels|self-play [0-9]+: .*done|epoch |snapshot|time budget|done)" \
    "$OUT/train.log" | tail -n 30
[ -f "$OUT/gpu-use.csv" ] && awk -F', ' '{gsub(/ %/, "", $2); s += $2; n++}
    END {if (n) printf "GPU busy: %.0f%% on average over %d samples\n", s / n, n}' "$OUT/gpu-use.csv"
cp "$RUN/metrics.csv" "$OUT/" 2>/dev/null
for f in $(ls "$RUN"/snapshots/min_*.pt 2>/dev/null | tail -n 4); do cp "$f" "$OUT/"; done
ls -la "$OUT"
exit $rc
