# Two commands on a fresh machine: `make run` and `make test`. Everything else they need, they install.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WEB_STAMP := web/dist/index.html
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) web/index.html web/package.json web/package-lock.json web/vite.config.ts web/tsconfig.json
CHROMIUM ?= /usr/bin/chromium
export LITELLM_LOCAL_MODEL_COST_MAP := True
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC := 1

.PHONY: install web chromium run run-cli test bench soak clean conformance

# Python deps only: `make run` works for any user. The tests also need Debian's Chromium and, without a
# server at 127.0.0.1:5432, Debian's postgresql (apt, root).
install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

# The dashboard, built to web/dist and served by `overseer serve`.
web: $(WEB_STAMP)

$(WEB_STAMP): $(WEB_SOURCES)
	cd web && npm ci --no-audit --no-fund && npm run build
	touch $(WEB_STAMP)

# Debian's Chromium for the browser server and tests (Playwright drives it; it never downloads a browser).
chromium:
	@test -x $(CHROMIUM) || (apt-get update -q && apt-get install -y -q --no-install-recommends chromium)

run: install web
	$(BIN)/overseer serve

run-cli: install
	$(BIN)/overseer run

# Two pytest workers, a whole test file each (a module shares one pool of tool servers); files go
# out in collection order, which keeps the browser tests last in each worker (see tests/conftest.py).
PYTEST_WORKERS ?= 2

# The import contracts (pyproject.toml) first: a layering violation fails in seconds. The tests need
# PostgreSQL: the one at $OVERSEER_TEST_POSTGRES_URL (default 127.0.0.1:5432), else a private server
# for the run (scripts/with_postgres.py: Debian's postgresql, apt as root if missing; initdb in a
# temporary folder, stopped and removed when the run ends).
test: install chromium web
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/python scripts/with_postgres.py $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: install chromium web
	$(BIN)/python bench/tool_call_overhead.py
	$(BIN)/python bench/concurrency.py
	$(BIN)/python bench/approval_roundtrip.py
	$(BIN)/python bench/engines.py
	$(BIN)/python bench/host_cpu.py
	$(BIN)/python bench/model_paths.py
	$(BIN)/python bench/remote_tool_call.py
	$(BIN)/python bench/tool_selection.py
	$(BIN)/python bench/tool_selection_embeddings.py
	$(BIN)/python scripts/with_postgres.py $(BIN)/python bench/event_bridge.py
	$(BIN)/python scripts/with_postgres.py $(BIN)/python bench/multihost.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/sandbox_questions.py

clean:
	rm -rf $(VENV) build *.egg-info web/dist web/node_modules

# The stateful property test of the approval core, longer (OVERSEER_SOAK_EXAMPLES=20000 make soak), and
# the API's fuzzing with more examples per operation than the suite's.
soak: install
	OVERSEER_SOAK_EXAMPLES=$${OVERSEER_SOAK_EXAMPLES:-5000} $(BIN)/python -m pytest -q -p no:cacheprovider tests/approvals/test_core_properties.py tests/api/test_schema_fuzz.py

# The MCP conformance suite (@modelcontextprotocol/conformance, pinned in conformance/package-lock.json),
# not part of `make test`: the server side against a real `overseer serve`'s /mcp, the client side
# against Overseer's MCP client (scripts/conformance_*.py). Each side's known failures, with their
# reasons, are in conformance/*-baseline.yml (the README's "MCP conformance"); anything else fails the
# target. Registry access only for the first install (stamps below); the suite needs Node 22
# (fs.globSync): an older Node gets the `node` package from the npm registry in conformance/node.
CONFORMANCE_JS := conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
CONFORMANCE_STAMP := conformance/node_modules/.package-lock.json
CONFORMANCE_NODE_STAMP := conformance/node/node_modules/.package-lock.json

$(CONFORMANCE_STAMP): conformance/package.json conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund
	touch $(CONFORMANCE_STAMP)

$(CONFORMANCE_NODE_STAMP): conformance/node/package.json conformance/node/package-lock.json
	cd conformance/node && npm ci --no-audit --no-fund
	touch $(CONFORMANCE_NODE_STAMP)

conformance: install $(CONFORMANCE_STAMP)
	@node_ok() { "$$1" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null; }; \
	NODE=$$(command -v node || true); \
	if [ -z "$$NODE" ] || ! node_ok "$$NODE"; then \
	  $(MAKE) --no-print-directory $(CONFORMANCE_NODE_STAMP) && NODE=$(CURDIR)/conformance/node/node_modules/.bin/node; \
	fi; \
	echo "conformance: $$NODE $$($$NODE --version)"; \
	rm -rf conformance/results; status=0; \
	$(BIN)/python scripts/conformance_server.py "$$NODE" $(CONFORMANCE_JS) conformance/results/server \
	  --expected-failures conformance/server-baseline.yml || status=1; \
	$(BIN)/python scripts/conformance_client_suite.py "$$NODE" $(CONFORMANCE_JS) conformance/results/client \
	  conformance/client-baseline.yml || status=1; \
	exit $$status
