# The two set-up commands of README.md: `make run` and `make test`. Each creates .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INDEX ?= index
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: setup run test lint index bench relevance clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==26.0.1
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Build the index from seeds/ when there is none yet.
$(INDEX)/CURRENT: | $(STAMP)
	$(BIN)/pubsearch index --index $(INDEX) seeds

index: $(STAMP)
	$(BIN)/pubsearch index --index $(INDEX) seeds

# Serve the search page (open http://$(HOST):$(PORT)/); the index is built first if missing.
run: $(STAMP) $(INDEX)/CURRENT
	$(BIN)/pubsearch serve --index $(INDEX) --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check src tests $(wildcard bench)
	$(BIN)/ruff format --check src tests $(wildcard bench)
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

# Ranking quality on SciFact (../shared/data/scifact): nDCG@10, Recall@100, MRR@10.
relevance: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/relevance.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
