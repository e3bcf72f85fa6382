# The two commands for a fresh machine:
#   make run    install what is missing, build (Release), open the GUI on the vector_add preset
#   make test   install what is missing, build, run every test (GUI tests offscreen)
# Warnings are errors when CI is set (as .ci/run does); override with WERROR=ON/OFF.

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
WERROR     ?= $(if $(CI),ON,OFF)
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PRESET     ?= vector_add

.PHONY: all deps configure build run test test-gpu bench format format-check clean

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

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# Only the device tests (on a machine with an NVIDIA GPU).
test-gpu: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -L gpu

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run -Werror

clean:
	rm -rf $(BUILD_DIR)
