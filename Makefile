# hwsync top-level Makefile: a thin wrapper over CMake.
#   make          build into build/ (CLI at build/hwsync); configures every time
#   make demo     the main job: characterize this machine and write the report
#   make test     build and run every test (ctest)
#   make install  headers, libraries, CMake package and pkg-config file (PREFIX=/usr/local)
#   make deb      Debian packages into build/deb (docs/packaging.md); make test-deb
#                  also installs them into a Debian 12 chroot (ctest label deb)
#   make ci       what .ci/run does: test + ThreadSanitizer + arm64 under qemu-user
#   make test-kmod only the kmod tests (module build, qemu boot); also part of make test
#   make test-kmod-bochs  only the Bochs test: the driver's MWAIT wakes on the
#                  store (about 3 min; also part of make test, docs/kmwait.md)
#   make test-slice-vm SLICE_VM_SRC=DIR  the kernel's rseq time-slice extension
#                  in a VM whose kernel has it, built from the Linux 7.x source
#                  tree DIR, or from the newest linux-source-7.x package that
#                  SLICE_VM_SID_INDEX=FILE names (fetched from SLICE_VM_MIRROR=URL;
#                  without an index, the mirror's unstable one)
#                  (some minutes the first time; not part of make test)
BUILD   ?= build
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc)
GEN     := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CMAKE_FLAGS ?=

.PHONY: all build configure demo test install deb test-deb ci test-tsan test-arm64 test-kmod test-kmod-bochs test-slice-vm clean deps

all: build

deps:
	@scripts/deps.sh build

# Configure on every build (a few seconds): CMake then looks again for the
# optional peers (Concurrency Kit, GNU OpenMP) that `scripts/deps.sh demo|test`
# may have installed since the last run, so `make` followed by `make demo` ends
# with every peer that is installed.  The generator and the install prefix are
# set on the first run; later runs keep the cached ones unless PREFIX is given.
CONFIGURE_ARGS = $(if $(wildcard $(BUILD)/CMakeCache.txt),$(if $(filter-out file default,$(origin PREFIX)),-DCMAKE_INSTALL_PREFIX=$(PREFIX)),$(GEN) -DCMAKE_INSTALL_PREFIX=$(PREFIX))

configure:
	cmake -S . -B $(BUILD) $(CONFIGURE_ARGS) $(CMAKE_FLAGS)

build:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD) -j $(JOBS)

demo:
	@scripts/deps.sh demo
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh $(BUILD)

test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j 1 --timeout 300 $(CTEST_ARGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

deb:
	@scripts/deps.sh build
	@scripts/deb.sh $(BUILD)/deb

test-deb:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -L '^deb$$'

# ThreadSanitizer build of the unit and stress tests (clang).
test-tsan:
	@scripts/deps.sh tsan
	CC=clang CXX=clang++ cmake -S . -B build-tsan $(GEN) -DHWS_TSAN=ON -DHWS_WERROR=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -L "unit|stress" -LE "notsan" --timeout 600

# arm64 cross build; unit tests run under qemu-user (exercises the WFE path).
test-arm64:
	@scripts/deps.sh arm64
	cmake -S . -B build-arm64 $(GEN) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DHWS_WITH_HWLOC=OFF -DHWS_WERROR=ON
	cmake --build build-arm64 -j $(JOBS)
	cd build-arm64 && ctest --output-on-failure -L unit -LE "notarm64" --timeout 600

# The hwsync_mwait module: build with W=1 and the qemu functional test (docs/kmwait.md).
test-kmod:
	@scripts/deps.sh kmod
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -L '^kmod$$' --timeout 300

# The same driver under Bochs, which models the monitor: proves a store ends
# the MWAIT (docs/kmwait.md).  About 3 minutes; also run by make test.
test-kmod-bochs:
	@scripts/deps.sh kmod-bochs
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -L kmod-bochs

# The shim and the kernel's rseq time-slice extension on a kernel that has it
# (tests/slice_vm, results in docs/results/kvm-epyc-2vcpu/slice-vm.md): builds
# a small kernel from SLICE_VM_SRC into $(BUILD)/slice-vm, boots it under qemu.
# SLICE_VM_SID_INDEX and SLICE_VM_MIRROR add a run with another C library.
test-slice-vm:
	@scripts/deps.sh slice-vm
	@$(MAKE) --no-print-directory build
	tests/slice_vm/run.sh . $(BUILD) "$(SLICE_VM_SRC)"

ci:
	$(MAKE) test CMAKE_FLAGS="-DHWS_WERROR=ON"
	$(MAKE) test-tsan
	$(MAKE) test-arm64

clean:
	rm -rf $(BUILD) build-tsan build-arm64
