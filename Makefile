# Floe — the two commands that matter: `make run` and `make test`.
# Every target installs what is missing first (scripts/bootstrap is idempotent and quick).

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
CTEST_JOBS ?= 2
FUZZ_SECONDS ?= 10
CMAKE_FLAGS ?=
# Let ccache share results between clones of the repository (paths are made relative).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: all bootstrap build run test test-unit test-integration test-asan test-fuzz bench fmt clean chaos

all: build

bootstrap:
	@bash scripts/bootstrap

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Starts `floe serve` on the embedded defaults (./floe.yaml, data under ./floe-data). Builds only
# the floe executable (not the tests and benchmarks), so a first run waits less. Settings: FLOE_*
# environment variables (`FLOE_KAFKA_LISTEN=127.0.0.1:19092 make run`) or ARGS, passed to
# `floe serve` as they are (`make run ARGS='--set floe.kafka.listen=127.0.0.1:19092'`).
ARGS ?=
run: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target floe
	./$(BUILD)/bin/floe serve $(ARGS)

test-unit: build
	cd $(BUILD) && ctest -L unit -j $(CTEST_JOBS) --output-on-failure --timeout 600

test-integration: build
	cd $(BUILD) && ctest -L integration -j $(CTEST_JOBS) --output-on-failure --timeout 900

# Unit tests and fuzz replays again under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: bootstrap
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLOE_SANITIZE=ON \
	  -DFLOE_UNIT_ONLY=ON -DFLOE_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest -L unit -j $(CTEST_JOBS) --output-on-failure --timeout 900

# libFuzzer targets (clang, ASan+UBSan), each for a short bounded run; scripts/fuzz runs longer.
test-fuzz: bootstrap
	CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DFLOE_FUZZ=ON -DFLOE_SANITIZE=ON -DFLOE_UNIT_ONLY=ON -DFLOE_BUILD_BENCH=OFF \
	  -DFLOE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	cd $(FUZZ_BUILD) && ctest -L fuzz -j $(CTEST_JOBS) --output-on-failure --no-tests=ignore

# Everything: unit and integration tests, then the sanitizer build, then short fuzz runs.
test: test-unit test-integration test-asan test-fuzz
	@echo "make test: all suites passed"

# A chaos run (tests/chaos/chaos.py): three brokers on one redis-server and a shared lake under a
# fault schedule drawn from SEED (the same SEED replays the same schedule; none: a random one,
# printed), with tc netem faults on lo; the report and timeline.svg stay in CHAOS_WORK.
SECONDS   ?= 600
SEED      ?=
CHAOS_WORK ?= $(CURDIR)/$(BUILD)/chaos
chaos: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target floe
	rm -rf $(CHAOS_WORK)
	python3 tests/chaos/chaos.py $(BUILD)/bin/floe --seconds $(SECONDS) $(if $(SEED),--seed $(SEED)) \
	  --work $(CHAOS_WORK) --netem

bench: build
	bash bench/run

fmt:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
