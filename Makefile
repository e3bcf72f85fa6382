# The two commands for a fresh machine:
#   make run    install what is missing, build (Release), open the GUI on the vector_add preset
#   make test   install what is missing, build, run every test (GUI tests offscreen);
#               with CI set (as .ci/run does) the fuzzers run first, FUZZ_SECONDS each
#   make fuzz   build the libFuzzer targets (clang, ASan+UBSan) and run each for FUZZ_SECONDS
#   make deb    the .deb package;  make bundle  the relocatable tar.xz (packaging/)
# Warnings are errors when CI is set (as .ci/run does); override with WERROR=ON/OFF.

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
WERROR     ?= $(if $(CI),ON,OFF)
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PRESET     ?= vector_add
# The fuzz build is a tree of its own, built with clang++ (tests/fuzz).
FUZZ_DIR     ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_CMAKE_ARGS ?=

.PHONY: all deps configure build run test test-gpu gpu-integration fuzz fuzz-build bench format format-check clean deb bundle

all: build

deps:
	@bash packaging/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DKPG_WERROR=$(WERROR) --log-level=WARNING

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] && [ -z "$$QT_QPA_PLATFORM" ]; then \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset); to look at the window anyway:"; \
	  echo "  QT_QPA_PLATFORM=offscreen $(BUILD_DIR)/bin/kernel-playground --screenshot window.png"; \
	  exit 1; fi
	$(BUILD_DIR)/bin/kernel-playground --preset $(PRESET)

# In CI the fuzzers run before ctest (a finding stops the run), so ctest's
# closing line stays the last thing printed; developers run them with make fuzz.
test: build $(if $(CI),fuzz)
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# Only the device tests (on a machine with an NVIDIA GPU).
test-gpu: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -L gpu

# The device tests, screenshots and command-line numbers of a GPU host
# (tests/gpu/integration.sh), logs and pictures in $(BUILD_DIR)/gpu-integration.
gpu-integration: build
	@bash tests/gpu/integration.sh $(abspath $(BUILD_DIR))/gpu-integration

# libFuzzer targets with ASan+UBSan, each run for FUZZ_SECONDS on a scratch
# copy of its corpus; fails naming the crashing input (tests/fuzz/run.sh).
fuzz-build: deps
	@cmake -S . -B $(FUZZ_DIR) -DKPG_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKPG_WERROR=$(WERROR) \
	  $(FUZZ_CMAKE_ARGS) --log-level=WARNING
	@cmake --build $(FUZZ_DIR) -j $(JOBS)

fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_TARGETS)

# The .deb ($(BUILD_DIR)/kernel-playground_<version>-1_amd64.deb, CPack) and the
# relocatable bundle ($(BUILD_DIR)/kernel-playground-<version>-linux-x86_64.tar.xz,
# packaging/make-bundle.sh).
deb: build
	@cd $(BUILD_DIR) && cpack -G DEB

bundle: build
	@cmake --build $(BUILD_DIR) --target bundle

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run -Werror

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR)
