#!/usr/bin/env bash
# Self-play on one GPU against the same network's raw forward rate, the CPU recipes' layout beside
# the GPU one in one run (docs/gpu-selfplay.md#on-a-gpu), sized for a ten-minute lease:
#   1. the gpu-marked tests (CUDA graphs, pinned submit): if they fail, what follows measures a
#      broken path;
#   2. the raw forward rate of tiny and small at batch 16 to 1,024, fp32 and mixed precision;
#   3. self-play at $WORKERS workers (default 8) for each preset: the CPU recipes' layout (64
#      games a worker, one batch in flight, eager calls), then the GPU layout (two groups,
#      CUDA graphs) at each of $GAMES games a worker (default "256"; a list such as "1024 512"
#      measures each: tiny at every size, then small at the first);
#   4. with MPS=1, the first new tiny row again under NVIDIA's multi-process service, which
#      lets the workers' kernels share the GPU instead of taking turns (left out, and said so,
#      where the daemon will not start);
#   5. small at the first size without the evaluation cache: on a fast device the workers are
#      CPU-bound, and the cache's bookkeeping (about 7 us of a worker's CPU a position on the
#      CPU machine) may cost more than the few evaluations it saves;
#   6. small at the other sizes, and the steps that say where the gain comes from (fp32; two
#      groups and graphs at 64 games; twice the workers).
# The steps run in that order, each with its own limit, and a step that would end after
# $DEADLINE seconds (default 540) is left out and said so: a short lease still gets the figures
# that matter most. The search kernels compile in the background while the network is timed.
# Logs (with the JSON) go to $OUT (default runs/gpu-selfplay), one file a step.
#   bash tools/gpu_selfplay_check.sh [DEVICE]   DEVICE: cuda (the default), or cpu to rehearse;
#   PY=.venv/bin/python picks the interpreter (default python3).
set -u
DEVICE=${1:-cuda}
OUT=${OUT:-runs/gpu-selfplay}
PY=${PY:-python3}
WORKERS=${WORKERS:-8}
GAMES=${GAMES:-256}
DEADLINE=${DEADLINE:-540}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
. "$(dirname "$0")/steps.sh"
STEP_TAIL=4
read -r -a games_list <<<"$GAMES"
FIRST=${games_list[0]}

machine_line
$PY -m alphagomoku.compile_kernels >"$OUT/compile.log" 2>&1 &
compiling=$!

step gpu_tests 120 $PY -m pytest -q -m gpu -rs -p no:cacheprovider tests/test_nn_graphs.py
step nn_fp32 60 $PY scripts/benchmark.py nn --device "$DEVICE" --presets tiny,small --amp off \
    --threads all --batch-sizes 16,64,128,256,1024 --seconds 0.5 --json
step nn_amp 60 $PY scripts/benchmark.py nn --device "$DEVICE" --presets tiny,small --amp on \
    --threads all --batch-sizes 16,64,128,256,1024 --seconds 0.5 --json
wait $compiling || { echo "== compile: failed"; tail -n 20 "$OUT/compile.log"; status=1; }
for preset in tiny small; do
    step "${preset}_old" 120 $PY scripts/benchmark.py selfplay --device "$DEVICE" --preset "$preset" \
        --workers "$WORKERS" --repeats 1 --groups 1 --graphs off --json
    for games in "${games_list[@]}"; do
        step "${preset}_new_${games}" 120 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
            --preset "$preset" --workers "$WORKERS" --repeats 1 --groups 2 \
            --games-per-worker "$games" --games-at-once "$games" --json
        [ "$preset" = small ] && break   # small's other sizes after the MPS row
    done
done
if [ "${MPS:-0}" = 1 ]; then
    if nvidia-cuda-mps-control -d >"$OUT/mps.log" 2>&1; then
        step "tiny_new_${FIRST}_mps" 120 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
            --preset tiny --workers "$WORKERS" --repeats 1 --groups 2 \
            --games-per-worker "$FIRST" --games-at-once "$FIRST" --json
        echo quit | nvidia-cuda-mps-control
    else
        echo "== tiny_new_${FIRST}_mps: left out (the MPS daemon did not start: $(head -c 200 "$OUT/mps.log"))"
    fi
fi
step "small_new_${FIRST}_no_cache" 120 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
    --preset small --workers "$WORKERS" --repeats 1 --groups 2 --games-per-worker "$FIRST" \
    --games-at-once "$FIRST" --eval-cache 0 --json
for games in "${games_list[@]:1}"; do
    step "small_new_${games}" 150 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
        --preset small --workers "$WORKERS" --repeats 1 --groups 2 \
        --games-per-worker "$games" --games-at-once "$games" --json
done
step small_new_fp32 150 $PY scripts/benchmark.py selfplay --device "$DEVICE" --preset small \
    --workers "$WORKERS" --repeats 1 --groups 2 --games-per-worker "$FIRST" \
    --games-at-once "$FIRST" --amp off --json
step tiny_groups_only 150 $PY scripts/benchmark.py selfplay --device "$DEVICE" --preset tiny \
    --workers "$WORKERS" --repeats 1 --groups 2 --json
step tiny_new_twice_the_workers 150 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
    --preset tiny --workers $((2 * WORKERS)) --repeats 1 --groups 2 --games-per-worker "$FIRST" \
    --games-at-once "$FIRST" --json
exit $status
