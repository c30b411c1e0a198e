# Floe — the two commands that matter: `make run` and `make test`.
# Every target installs what is missing first (scripts/bootstrap is idempotent and quick).

BUILD      ?= build
SAN_BUILD  ?= build-san
JOBS       ?= $(shell nproc)
CTEST_JOBS ?= 2
FUZZ_SECONDS ?= 10
CMAKE_FLAGS ?=
# Let ccache share results between clones of the repository (paths are made relative).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: all bootstrap build build-for-tests run test test-unit test-integration san-build test-asan test-fuzz bench fmt clean chaos

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

# What the integration tests run (floe and the test tools), without the unit tests and benchmarks.
build-for-tests: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target for-integration

test-integration: build-for-tests
	cd $(BUILD) && ctest -L 'integration|release' -j $(CTEST_JOBS) --output-on-failure --timeout 900

# One sanitizer tree (clang, ASan+UBSan, libFuzzer coverage) serves both suites below: the unit
# tests again under the sanitizers, then each libFuzzer target for a short bounded run
# (scripts/fuzz runs them longer). One tree instead of two saves a whole compile of src/.
san-build: bootstrap
	CC=clang-16 CXX=clang++-16 cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DFLOE_SANITIZE=ON -DFLOE_FUZZ=ON -DFLOE_UNIT_ONLY=ON -DFLOE_BUILD_BENCH=OFF \
	  -DFLOE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(CMAKE_FLAGS)
	cmake --build $(SAN_BUILD) -j $(JOBS)

test-asan: san-build
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest -L unit -j $(CTEST_JOBS) --output-on-failure --timeout 900

test-fuzz: san-build
	cd $(SAN_BUILD) && ctest -L fuzz -j $(CTEST_JOBS) --output-on-failure --no-tests=ignore

# Everything: the integration tests on the Release tree while the sanitizer tree compiles beside
# them at low priority, then the unit tests under ASan+UBSan and short fuzz runs (scripts/make-test).
test: bootstrap
	BUILD=$(BUILD) SAN_BUILD=$(SAN_BUILD) CTEST_JOBS=$(CTEST_JOBS) bash scripts/make-test

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
	  --work $(CHAOS_WORK) --netem --netns

bench: build
	bash bench/run

fmt:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(SAN_BUILD) build-asan build-fuzz
