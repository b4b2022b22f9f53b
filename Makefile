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

FUZZ_SECONDS  ?= 60

IMAGE         ?= attnsweep:$(shell sed -n '/^project/s/.*VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

.PHONY: setup build test run fuzz clean image image-test

setup:
	@scripts/setup.sh $(SETUP_FLAGS)

# make test also installs what the tests need beyond the build (a headless Chromium).
test: SETUP_FLAGS := --with-test-tools

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja \
	  -DCMAKE_PREFIX_PATH="$$($(VENV)/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)')"

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# make run builds the attnsweep program and what it links only: the tests, their
# libraries and the example op library (its CUDA file is the build's slowest step)
# are make test's (issue 35).
run: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target attnsweep
	$(BUILD_DIR)/attnsweep run $(CONFIG) --db $(DB) $(if $(DEVICE),--device $(DEVICE))

# Fuzz the config loader for FUZZ_SECONDS; fails on a crash, a leak or an unexpected exception.
# New inputs go to build-fuzz/corpus, the seed corpus in tests/fuzz/corpus stays as it is.
fuzz: setup
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DATTNSWEEP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz
	mkdir -p build-fuzz/corpus
	build-fuzz/fuzz_config build-fuzz/corpus tests/fuzz/corpus -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -rss_limit_mb=4096 -artifact_prefix=build-fuzz/ -print_final_stats=1

# The container image (container/Dockerfile) with podman or docker, whichever works
# (podman installed when neither does); the base made from Debian's mirror when the
# registry cannot be reached. Prints the image's name and size. docs/hf-jobs.md.
# IMAGE reaches the scripts through the environment, as one word that no shell reads
# ("my image" is not built as "my", "x;cmd" runs nothing); they refuse what is no image name.
image image-test: export ATTNSWEEP_MAKE_IMAGE = $(IMAGE)
image:
	@scripts/image.sh "$$ATTNSWEEP_MAKE_IMAGE"

# The image, then the quickstart and `attnsweep env` inside it, and the from-source
# job script in its build stage (scripts/image_test.sh).
image-test: image
	@scripts/image_test.sh "$$ATTNSWEEP_MAKE_IMAGE"

clean:
	rm -rf $(BUILD_DIR) build-fuzz
