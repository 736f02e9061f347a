# bringup: build, boot and measure Linux kernels for board bring-up.
# `make help` lists the targets.  Variables:
#   BOARD=<name>     a board under boards/ (default qemu-arm)
#   KERNEL=<id>      only this kernel of the board
#   FORCE=1          rebuild even when up to date
#   JOBS=<n>         make -j for kernel builds (default: number of CPUs)
#   CROSS_COMPILE=<prefix>  override the board's toolchain prefix (external toolchains)
#   RUNS=<n>         boots per kernel for boot-timing (default 5)
#   BOOT_PATH=direct|u-boot  boot path for boot-timing (default: the board's 'boot')
#   ROOT=ramdisk|nfs  root filesystem for boot-timing (nfs: NFS-Ganesha per run, kernel nfsroot)
#   LMBENCH=quick|full|none  lmbench set for footprint-report
#   LMBENCH_RUNS=<n>  footprint rounds: each boots every kernel once (mem_eat + one lmbench pass)
#   LMBENCH_SRC=<tree|tarball|URL> [LMBENCH_SHA256=<hex>]  build lmbench from this source
#   BENCH_ROUNDS=<n>  rounds of make bench / make bench-ccache (the machine may be shared)
#   BRINGUP_DL_DIR=<dir>[:<dir>...]  download directories searched (by file name, verified by
#                    sha256 or the board's tree id) before a source URL is downloaded;
#                    ../shared/sources beside the clone is added when it exists

BOARD ?= qemu-arm
KERNEL ?=
FORCE ?=
JOBS ?=
CROSS_COMPILE ?=
RUNS ?= 5
BOOT_PATH ?=
ROOT ?= ramdisk
LMBENCH ?= quick
LMBENCH_SRC ?=
LMBENCH_RUNS ?= 5
LMBENCH_SHA256 ?=
PYTEST_ARGS ?=
BENCH_ROUNDS ?=

SHARED_SOURCES := $(wildcard $(abspath $(CURDIR)/../shared/sources))
ifneq ($(SHARED_SOURCES),)
export BRINGUP_DL_DIR := $(if $(BRINGUP_DL_DIR),$(BRINGUP_DL_DIR):)$(SHARED_SOURCES)
endif

BRINGUP := scripts/bringup
KSEL := $(if $(KERNEL),--kernel $(KERNEL))
KOPT := $(KSEL) $(if $(FORCE),--force) $(if $(JOBS),-j $(JOBS)) $(if $(CROSS_COMPILE),--cross-compile $(CROSS_COMPILE))
LMSRC := --lmbench-runs $(LMBENCH_RUNS) $(if $(LMBENCH_SRC),--lmbench-source $(LMBENCH_SRC)) $(if $(LMBENCH_SHA256),--lmbench-sha256 $(LMBENCH_SHA256))
DEPS_STAMP := .venv/.requirements.sha256
# the tests keep their compiled modules (__pycache__, git-ignored) even where the environment
# says PYTHONDONTWRITEBYTECODE: compiling and assert-rewriting every module again costs each
# test worker about 2 s
PYTEST := env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m pytest

.PHONY: help deps check lint format typecheck aa all study build-all build-report boot-timing footprint-report report boards test test-unit test-integration bench bench-ccache bench-aa bench-boot clean

help: ## list the targets
	@echo "bringup -- make targets (BOARD=$(BOARD)):"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  %-18s %s\n", $$1, $$2}'

deps: ## install Debian packages and the Python venv (idempotent)
	@scripts/install-deps

$(DEPS_STAMP): requirements.txt requirements-dev.txt pyproject.toml scripts/debian-packages.txt
	@scripts/install-deps

all: $(DEPS_STAMP) ## the whole study for BOARD: build-all, boot-timing, footprint-report, report (skips what is up to date)
	@$(BRINGUP) study --board $(BOARD) --runs $(RUNS) --lmbench $(LMBENCH) $(if $(BOOT_PATH),--path $(BOOT_PATH)) --root $(ROOT) $(if $(FORCE),--force) $(if $(JOBS),-j $(JOBS)) $(LMSRC) >/dev/null

study: all ## same as all

boards: $(DEPS_STAMP) ## list the boards
	@$(BRINGUP) boards

build-all: $(DEPS_STAMP) ## fetch sources and build every kernel of BOARD, writing logs/BOARD/KERNEL/build.json
	@$(BRINGUP) build-all --board $(BOARD) $(KOPT)

build-report: $(DEPS_STAMP) ## print the build results table with deltas for BOARD
	@$(BRINGUP) build-report --board $(BOARD)

boot-timing: $(DEPS_STAMP) ## boot each kernel of BOARD RUNS times over the serial console; milestone table
	@$(BRINGUP) boot-timing --board $(BOARD) --runs $(RUNS) $(KSEL) $(if $(BOOT_PATH),--path $(BOOT_PATH)) --root $(ROOT)

footprint-report: $(DEPS_STAMP) ## ramdisk boot: kernel code+data, free, malloc() (mem_eat), lmbench (LMBENCH=quick|full|none)
	@$(BRINGUP) footprint-report --board $(BOARD) $(KSEL) --lmbench $(LMBENCH) $(LMSRC)

report: $(DEPS_STAMP) ## write logs/BOARD/report/index.html and report.md from the records (tables, charts, summary)
	@$(BRINGUP) report --board $(BOARD)

check: $(DEPS_STAMP) ## quality gate: ruff lint, ruff format check, mypy, unit tests (2 workers, quick Hypothesis profile)
	@.venv/bin/ruff check scripts/lib tests bench
	@.venv/bin/ruff format --check scripts/lib tests bench
	@.venv/bin/mypy
	@$(PYTEST) -q -m "not integration" -n 2 $(PYTEST_ARGS)

lint: $(DEPS_STAMP) ## ruff lint only
	@.venv/bin/ruff check scripts/lib tests bench

format: $(DEPS_STAMP) ## reformat the Python sources with ruff
	@.venv/bin/ruff format scripts/lib tests bench

typecheck: $(DEPS_STAMP) ## mypy on the package
	@.venv/bin/mypy

test: deps ## run every test: fast unit tests, then integration tests (real kernels, real QEMU); Hypothesis' full profile
	@HYPOTHESIS_PROFILE=ci $(PYTEST) $(PYTEST_ARGS)

test-unit: $(DEPS_STAMP) ## run only the fast unit tests (2 workers; HYPOTHESIS_PROFILE=ci for the full profile)
	@$(PYTEST) -m "not integration" -n 2 $(PYTEST_ARGS)

test-integration: $(DEPS_STAMP) ## run only the integration tests
	@$(PYTEST) -m integration $(PYTEST_ARGS)

aa: $(DEPS_STAMP) ## A/A check: KERNEL (default the board's last) as two arms; the summary must claim no difference
	@$(BRINGUP) aa --board $(BOARD) $(KSEL) --runs $(RUNS) --lmbench $(LMBENCH) --lmbench-runs $(LMBENCH_RUNS)

bench: $(DEPS_STAMP) ## build benchmarks: bringup vs bare make, ccache cold vs bare and warm vs cold, no-op rerun, ccache settings
	@.venv/bin/python bench/build_bench.py --board $(BOARD) $(KSEL) $(if $(BENCH_ROUNDS),--rounds $(BENCH_ROUNDS))

bench-ccache: $(DEPS_STAMP) ## where a cold ccache's cost goes: part of a kernel bare vs ccache settings, cold and warm, interleaved
	@.venv/bin/python bench/ccache_bench.py --board $(BOARD) $(KSEL) $(if $(BENCH_ROUNDS),--rounds $(BENCH_ROUNDS))

bench-aa: $(DEPS_STAMP) ## the A/A check on a quiet host and with CPU hogs from halfway, side by side
	@.venv/bin/python bench/aa_bench.py --board $(BOARD) $(KSEL)

bench-boot: $(DEPS_STAMP) ## boot benchmark: printk lag, overhead against bare QEMU
	@.venv/bin/python bench/boot_bench.py --board $(BOARD) $(KSEL)

clean: ## remove results under logs/ (the download/build cache is kept: see README)
	@find logs -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
