# The README's commands. Each target sets up .venv on its own first, so a fresh clone needs only
# python3 (3.10+) and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
FINAL_EVAL_GAMES ?= 20
# make train's budget: the default recipe (the cpu-hour one, scaled down) for this many minutes.
TRAIN_MINUTES ?= 4
# Compiled Numba kernels live in one cache that every entry point shares, make or not
# (alphagomoku/numba_config.py: ~/.cache/alphagomoku/numba, or NUMBA_CACHE_DIR when set).

.PHONY: setup train test bench clean

setup: $(VENV)/.installed

# The [onnx] extra makes CPU self-play about twice as fast; where no onnxruntime wheel exists for
# this platform, set-up goes on without it (inference then runs on torch and says so). The last
# step compiles the search kernels (about a minute, once), so that no later command waits for them.
$(VENV)/.installed: pyproject.toml tools/install_torch.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) tools/install_torch.py
	$(PY) -m pip install --quiet -e '.[dev,onnx]' || { \
	    echo "setup: onnxruntime could not be installed: CPU self-play will use torch (slower)"; \
	    $(PY) -m pip install --quiet -e '.[dev]'; }
	$(PY) -m alphagomoku.compile_kernels
	touch $@

# A fresh run directory each time: a run is never overwritten (continue one with
# `python scripts/train.py --run-dir DIR --resume`).
RUN ?= runs/make-train-$(shell date +%Y%m%d-%H%M%S)

train: setup
	$(PY) scripts/train.py --run-dir $(RUN) --epochs 1000 --time-budget-minutes $(TRAIN_MINUTES) \
	    --final-eval-games $(FINAL_EVAL_GAMES)

# The suite runs in TEST_WORKERS processes (pytest-xdist), each test file in one of them so its
# module fixtures are built once. On 2 cores, with the Ray and web extras, the suite takes 5.5 to
# 12 minutes with two, depending on the machine (docs/benchmarks.md, "The first run and the test suite").
# `make test TEST_WORKERS=0` runs it in this process alone.
TEST_WORKERS ?= 2

test: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: setup
	$(PY) scripts/benchmark.py all

clean:
	rm -rf $(VENV) .pytest_cache
