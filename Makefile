# Two commands on a fresh machine: `make run` and `make test`. Everything else they need, they install.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC := 1

.PHONY: install run test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

run: install
	$(BIN)/overseer run

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python bench/tool_call_overhead.py
	$(BIN)/python bench/concurrency.py

clean:
	rm -rf $(VENV) build *.egg-info
