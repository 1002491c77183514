# The step runner of the GPU scripts (tools/cuda_check.sh, tools/gpu_selfplay_check.sh), sourced:
#   step NAME SECONDS COMMAND...   run with a time limit, log to $OUT/NAME.log, time it, show the
#                                  log's last $STEP_TAIL lines; a failure sets status=1.
# With $DEADLINE set, a step that could end after DEADLINE seconds of the script is left out,
# and said so, so that a short lease still gets the steps that come first.
# machine_line                     the GPU, and the versions of python, torch, numba and numpy.
status=0

step() {
    local name=$1 limit=$2; shift 2
    if [ -n "${DEADLINE:-}" ] && [ $((SECONDS + limit)) -gt "$DEADLINE" ]; then
        echo "== $name: left out (${limit} s would pass the ${DEADLINE} s deadline at ${SECONDS} s)"
        return
    fi
    local t0=$SECONDS
    echo "== $name: $*"
    timeout --kill-after 10 "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    echo "== $name: exit $rc after $((SECONDS - t0)) s"
    tail -n "${STEP_TAIL:-25}" "$OUT/$name.log"
    [ $rc -eq 0 ] || status=1
}

machine_line() {
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
    $PY -c "import sys, torch, numba, numpy; print('python', sys.version.split()[0], '| torch',
torch.__version__, '| cuda', torch.version.cuda, '| numba', numba.__version__, '| numpy',
numpy.__version__)"
}
