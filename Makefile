# attnsweep: `make run` runs the default sweep, `make test` runs the tests.
# Both install what they need first (scripts/setup.sh) and build.

TORCH_VERSION ?= 2.11.0
VENV          ?= $(HOME)/.cache/attnsweep/venv-torch-$(TORCH_VERSION)
BUILD_DIR     ?= build
CONFIG        ?= configs/quickstart.yaml
DB            ?= results.db
DEVICE        ?=
JOBS          ?= $(shell nproc)

export ATTNSWEEP_VENV := $(VENV)
export TORCH_VERSION

.PHONY: setup build test run clean

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja \
	  -DCMAKE_PREFIX_PATH="$$($(VENV)/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)')"

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

run: build
	$(BUILD_DIR)/attnsweep run $(CONFIG) --db $(DB) $(if $(DEVICE),--device $(DEVICE))

clean:
	rm -rf $(BUILD_DIR)
