# `make test` works on a fresh machine: it creates .venv when missing, installs the project with its
# test extra (again whenever pyproject.toml changes) and runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: test play clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

test: $(INSTALLED)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# A match, robot against the simulated person, on the default simulated cell; PLAY_ARGS passes
# options on (`make play PLAY_ARGS="--seed 2 --person-skill 0.3"`).
play: $(INSTALLED)
	$(BIN)/jenga-robot play $(PLAY_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
