#!/usr/bin/env bash
# The CUDA path, checked for real on one GPU in one pass (docs/benchmarks.md#gpu):
#   1. the device check, with its spawned CUDA worker;
#   2. the network's forward rate, with and without mixed precision;
#   3. self-play on spawned CUDA workers against that raw forward rate, in mixed precision
#      (bf16, or fp16 below compute capability 8.0) and in fp32;
#   4. one torchrun rank with NCCL: a DDP step, a checkpoint and a resume;
#   5. a short training run with spawned CUDA self-play workers;
#   6. the overlap measurements (docs/gpu-selfplay.md), the CPU recipes' layout beside the GPU
#      one in the same run: the GPU tests (CUDA graphs, pinned submit), the stand-in device on the CPU
#      side, self-play with one group (the CPU default) and with two (the CUDA default), at 1, 2, 4
#      and 8 workers for tiny and small, and the forward rate at batch 1,024 they are held to;
#   7. the trainer's steps with batches made on threads, and the replay buffer's save.
# Each step has its own time limit and the script goes on after a failure, so one broken step
# still leaves the others' figures. Logs (with the JSON) go to $OUT (default runs/cuda-check).
#   bash tools/cuda_check.sh [DEVICE]   DEVICE: cuda (the default), or cpu to rehearse the script;
#   PY=.venv/bin/python picks the interpreter (default python3).
set -u
DEVICE=${1:-cuda}
OUT=${OUT:-runs/cuda-check}
PY=${PY:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# Run directories and the kernel cache stay out of $OUT, which keeps only logs.
WORK=$(mktemp -d)
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$WORK/numba-cache}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
. "$(dirname "$0")/steps.sh"

machine_line

step check_device 120 $PY scripts/check_device.py --device "$DEVICE" --json
step nn_amp_on 75 $PY scripts/benchmark.py nn --device "$DEVICE" --amp on --threads all \
    --batch-sizes 1,64,256,1024 --json
step nn_amp_off 75 $PY scripts/benchmark.py nn --device "$DEVICE" --amp off --threads all \
    --batch-sizes 1,64,256,1024 --json
step selfplay 120 $PY scripts/benchmark.py selfplay --device "$DEVICE" --preset small \
    --workers 1,4 --repeats 1 --json
# The same at 4 workers in fp32: which precision is faster at self-play batches depends on the GPU.
step selfplay_fp32 90 $PY scripts/benchmark.py selfplay --device "$DEVICE" --preset small \
    --workers 4 --repeats 1 --amp off --json
step torchrun 100 $PY -m torch.distributed.run --standalone --nproc-per-node 1 scripts/train.py \
    --device "$DEVICE" --board-size 9 --model-preset tiny --selfplay-games 8 --simulations 16 \
    --batch-size 64 --min-buffer-positions 32 --parallel-workers 2 --epochs 2 --no-progress \
    --run-dir "$WORK/ddp-run"
step torchrun_resume 80 $PY -m torch.distributed.run --standalone --nproc-per-node 1 \
    scripts/train.py --device "$DEVICE" --run-dir "$WORK/ddp-run" --resume --epochs 3 --no-progress
step train 170 $PY scripts/train.py --device "$DEVICE" --recipe cpu-hour --model-preset small \
    --parallel-workers 4 --time-budget-minutes 2 --epochs 1000 --final-eval-games 0 --no-progress \
    --run-dir "$WORK/train-run"
# 6. Overlapped batches and CUDA graphs. The gpu-marked tests first: if they fail, the figures
#    after them measure a broken path.
step gpu_tests 240 $PY -m pytest -q -m gpu -rs tests/test_nn_graphs.py
step overlap_simulated 150 $PY scripts/benchmark.py selfplay --simulated-device 1,1.5 \
    --games-per-worker 64 --repeats 3 --json
for preset in tiny small; do
    # Old default (one group, no graphs) beside the new (two groups, graphs): same workers.
    step "selfplay_${preset}_groups1" 300 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
        --preset "$preset" --workers 1,2,4,8 --repeats 1 --groups 1 --graphs off --json
    step "selfplay_${preset}_groups2" 300 $PY scripts/benchmark.py selfplay --device "$DEVICE" \
        --preset "$preset" --workers 1,2,4,8 --repeats 1 --groups 2 --json
    step "nn_${preset}" 90 $PY scripts/benchmark.py nn --device "$DEVICE" --presets "$preset" \
        --batch-sizes 16,64,1024 --json
done
# 7. The trainer between epochs: gradient steps with the batches made in the loop (the old way)
#    beside four and eight threads, and the replay buffer's save before and now.
step trainer 240 $PY scripts/benchmark.py train --device "$DEVICE" --recipe gpu-hour \
    --positions 400000 --steps 120 --repeats 1 --batch-threads 4,8 --json
rm -rf "$WORK"
exit $status
