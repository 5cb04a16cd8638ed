# Every target works on a fresh machine: it creates .venv when missing and installs the project with
# its test extra (again whenever pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
# One test process per core (pytest-xdist). A module's tests stay on one worker, so a fixture they
# share (a whole match) runs once; modules go out in the order tests/conftest.py gives, heavy first.
PARALLEL ?= -n auto --dist loadscope --no-loadscope-reorder

.PHONY: install test check play firmware clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The project and its tools in .venv, nothing run: then `.venv/bin/jenga-robot --help`.
install: $(INSTALLED)

# The whole suite, in parallel.
test: $(INSTALLED)
	$(BIN)/python -m pytest $(PARALLEL) $(PYTEST_ARGS)

# The fast tests only (no simulator, no rendering, no planning through the command line): for the
# edit-test loop.
check: $(INSTALLED)
	$(BIN)/python -m pytest $(PARALLEL) -m "not slow and not hil" $(PYTEST_ARGS)

# A match, robot against the simulated person, on the default simulated cell; PLAY_ARGS passes
# options on (`make play PLAY_ARGS="--seed 2 --person-skill 0.3"`).
play: $(INSTALLED)
	$(BIN)/jenga-robot play $(PLAY_ARGS)

# The arm's firmware in C (hardware/firmware): the host build (library, sanitized tests, pty server)
# and the Cortex-M build QEMU runs (build/mcu/jenga-firmware.elf, its size in size.txt).
firmware:
	$(MAKE) -C hardware/firmware test

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	$(MAKE) -C hardware/firmware clean
