# bringup: build, boot and measure Linux kernels for board bring-up.
# `make help` lists the targets.  Variables:
#   BOARD=<name>     a board under boards/ (default qemu-arm)
#   KERNEL=<id>      only this kernel of the board
#   FORCE=1          rebuild even when up to date
#   JOBS=<n>         make -j for kernel builds (default: number of CPUs); for boot-timing,
#                    footprint-report and workloads: up to n boots at once on a board that is not a
#                    labgrid board (default 1; the host-load guard is then off)
#   CROSS_COMPILE=<prefix>  override the board's toolchain prefix (external toolchains)
#   CLOCK=instructions|host  what measures time (default: the board's qemu.clock; docs/clock.md):
#                    instructions: QEMU icount, deterministic, one boot per kernel by default;
#                    host: the host's clock, rounds and tests, the host-load guard
#   RUNS=<n>         boots per kernel for boot-timing (default 1 on the instruction clock, 5 on the host's)
#   BOOT_PATH=direct|u-boot  boot path for boot-timing (default: the board's 'boot')
#   ROOT=ramdisk|nfs  root filesystem for boot-timing (nfs: NFS-Ganesha per run, kernel nfsroot)
#   PROFILE=<name>   boot profile for boot-timing, configs/profiles/: timing (default), initcalls, quiet
#   LMBENCH=quick|full|none  lmbench set for footprint-report
#   KIND=bootlog|lmbench FILE=<file> [LABEL=<text>] [LMBENCH_HOST=<host>] [REPLACE=1]  for make import
#   LMBENCH_RUNS=<n>  footprint rounds: each boots every kernel once (mem_eat + one lmbench pass;
#                    default 1 on the instruction clock, 5 on the host's)
#   DELAY_MS=<ms>    make ab: the known cost arm b's init waits before the userspace marker (default 1000)
#   LMBENCH_SRC=<tree|tarball|URL> [LMBENCH_SHA256=<hex>]  build lmbench from this source
#   UNTIL_CI=1 [CI_PCT=<pct>] [MAX_ROUNDS=<n>]  boot-timing, footprint-report, workloads: add rounds until every
#                    headline difference's 95 % interval is within ±CI_PCT % (default 5), at most
#                    MAX_ROUNDS (default 20); the record's 'stopped' says why (docs/report.md)
#   PLACES=a,b       labgrid places instead of the board file's (boot-timing spreads rounds over them
#                    in parallel, one worker per place; docs/labgrid.md "Several places")
#   WORKLOADS=a,b|all|none WORKLOAD_RUNS=<n> WORKLOAD_MODE=quick|full  for make workloads and make all
#                    (configs/workloads/; default its default set, 3 rounds, quick; all: every one;
#                    none: make all runs none)
#   NO_WAIT=1        a measuring step refuses at once when another run measures the board (the
#                    line names the holder: pid, step, since) instead of waiting for it
#   BENCH_ROUNDS=<n>  rounds of make bench / make bench-ccache (the machine may be shared)
#   BUILD_COST=0     make all: leave out the cold build cost (on by default: every kernel built again
#                    without ccache in a scratch directory, BUILD_COST_RUNS rounds, only to be timed)
#   BUILD_COST_RUNS=<n>  rounds of the cold build cost (make all, make build-cost; default 3); make build-cost
#                    also takes UNTIL_CI=1 [CI_PCT=] [MAX_ROUNDS=] (default at most 6 rounds)
#   BUILD_COST_PARALLEL=<n>  make build-cost: n cold builds at once (CPU time stays each build's own; no guard)
#   BRINGUP_DL_DIR=<dir>[:<dir>...]  download directories searched (by file name, verified by
#                    sha256 or the board's tree id) before a source URL is downloaded;
#                    ../shared/sources beside the clone is added when it exists

BOARD ?= qemu-arm
KERNEL ?=
KIND ?=
FILE ?=
LABEL ?=
LMBENCH_HOST ?=
REPLACE ?=
FORCE ?=
JOBS ?=
CROSS_COMPILE ?=
CLOCK ?=
RUNS ?=
DELAY_MS ?= 1000
BOOT_PATH ?=
ROOT ?= ramdisk
PROFILE ?= timing
LMBENCH ?= quick
LMBENCH_SRC ?=
LMBENCH_RUNS ?=
LMBENCH_SHA256 ?=
UNTIL_CI ?=
CI_PCT ?=
MAX_ROUNDS ?=
WORKLOADS ?=
PLACES ?=
WORKLOAD_RUNS ?=
WORKLOAD_MODE ?= quick
PYTEST_ARGS ?=
BENCH_ROUNDS ?=
NO_WAIT ?=
BUILD_COST ?=
BUILD_COST_RUNS ?=
BUILD_COST_PARALLEL ?=

# What a user gives on the command line reaches the commands as one argument each, exactly as
# typed: make never expands it (qv takes a variable's own text, so `$(shell ...)` stays text),
# the shell never splits or interprets it (single-quoted: ; $() ` and spaces stay inside), and
# an option takes it after '=' (KERNEL=--force is a kernel id, not an option).  Bringup checks
# what each value means (docs/errors.md).  Command-line variables are not exported either
# (exporting would expand them); PYTEST_ARGS alone is split into words (pytest options).
USER_VARS := BOARD KERNEL KIND FILE LABEL LMBENCH_HOST REPLACE FORCE JOBS CROSS_COMPILE CLOCK DELAY_MS RUNS BOOT_PATH \
	ROOT PROFILE LMBENCH LMBENCH_SRC LMBENCH_RUNS LMBENCH_SHA256 UNTIL_CI CI_PCT MAX_ROUNDS WORKLOADS \
	PLACES WORKLOAD_RUNS WORKLOAD_MODE BENCH_ROUNDS BUILD_COST BUILD_COST_RUNS BUILD_COST_PARALLEL PYTEST_ARGS NO_WAIT
unexport $(USER_VARS)
define NEWLINE


endef
# a value with a newline cannot reach a command as one argument (make runs each line of a recipe
# on its own): every bringup command is then this one line naming the variable, and no value is used
NEWLINE_VARS := $(strip $(foreach v,$(USER_VARS),$(if $(findstring $(NEWLINE),$(value $(v))),$(v))))
ifeq ($(NEWLINE_VARS),)
q = '$(subst ','\'',$(1))'
else
q = ''
endif
qv = $(call q,$(value $(1)))
opt = $(if $(value $(2)),$(1)=$(call qv,$(2)))
flag = $(if $(value $(2)),$(1)=$(call qv,$(2)))

SHARED_SOURCES := $(wildcard $(abspath $(CURDIR)/../shared/sources))
ifneq ($(SHARED_SOURCES),)
export BRINGUP_DL_DIR := $(if $(value BRINGUP_DL_DIR),$(value BRINGUP_DL_DIR):)$(SHARED_SOURCES)
endif

BRINGUP := scripts/bringup $(call flag,--no-wait,NO_WAIT)
ifneq ($(NEWLINE_VARS),)
BRINGUP := { echo 'bringup: error: $(firstword $(NEWLINE_VARS))=: its value holds a newline, which make cannot pass on as one argument; give it on one line' >&2; exit 2; }; :
endif
KSEL = $(call opt,--kernel,KERNEL)
KOPT = $(KSEL) $(call flag,--force,FORCE) $(call opt,--jobs,JOBS) $(call opt,--cross-compile,CROSS_COMPILE)
PLACE_OPT = $(call opt,--places,PLACES)
LMSRC = $(call opt,--lmbench-runs,LMBENCH_RUNS) $(call opt,--lmbench-source,LMBENCH_SRC) $(call opt,--lmbench-sha256,LMBENCH_SHA256)
UNTIL = $(if $(value UNTIL_CI),$(call opt,--until-ci-if,UNTIL_CI) $(if $(value CI_PCT),$(call opt,--until-ci,CI_PCT),--until-ci),$(call opt,--ci-pct-alone,CI_PCT)) $(call opt,--max-rounds,MAX_ROUNDS)
WL_OPT = $(call opt,--workloads,WORKLOADS) $(call opt,--workload-runs,WORKLOAD_RUNS) $(call opt,--workload-mode,WORKLOAD_MODE)
BOOT_OPT = $(call opt,--path,BOOT_PATH) $(call opt,--root,ROOT) $(CLOCK_OPT)
CLOCK_OPT = $(call opt,--clock,CLOCK)
COST_OPT = $(call flag,--build-cost-if,BUILD_COST) $(call opt,--build-cost-runs,BUILD_COST_RUNS)
DEPS_STAMP := .venv/.requirements.sha256

# the tests keep their compiled modules (__pycache__, git-ignored) even where the environment
# says PYTHONDONTWRITEBYTECODE: compiling and assert-rewriting every module again costs each
# test worker about 2 s
PYTEST := env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m pytest
# the unit tests on 4 workers that take tests from each other when idle (worksteal): a worker
# left with the slow browser tests no longer holds up the end (54-62 s against 66-153 s for
# xdist's default chunks, side by side on a busy 2-core host, 2026-11-26)
UNIT := -m "not integration" -n 4 --dist worksteal

.PHONY: help deps check lint format typecheck aa ab all study build-all build-cost build-cost-aa build-report boot-timing footprint-report workloads report import boards test test-unit test-integration bench bench-ccache bench-aa bench-boot bench-labgrid bench-places clean

help: ## list the targets
	@printf 'bringup -- make targets (BOARD=%s):\n' $(call qv,BOARD)
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  %-18s %s\n", $$1, $$2}'

deps: ## install Debian packages and the Python venv (idempotent)
	@scripts/install-deps

$(DEPS_STAMP): requirements.txt requirements-dev.txt requirements-labgrid.txt pyproject.toml scripts/debian-packages.txt
	@scripts/install-deps

all: $(DEPS_STAMP) ## the whole study for BOARD: build-all, build cost, boot-timing, footprint-report, workloads, report (skips what is up to date) [PLACES=a,b: labgrid places in parallel; WORKLOADS=none: no workloads; BUILD_COST=0: no build cost]
	@$(BRINGUP) study $(call opt,--board,BOARD) $(call opt,--runs,RUNS) $(call opt,--lmbench,LMBENCH) $(BOOT_OPT) $(call flag,--force,FORCE) $(call opt,--jobs,JOBS) $(LMSRC) $(PLACE_OPT) $(WL_OPT) $(COST_OPT) >/dev/null

study: all ## same as all

boards: $(DEPS_STAMP) ## list the boards
	@$(BRINGUP) boards

build-all: $(DEPS_STAMP) ## fetch sources and build every kernel of BOARD, writing logs/BOARD/KERNEL/build.json
	@$(BRINGUP) build-all $(call opt,--board,BOARD) $(KOPT)

build-cost: $(DEPS_STAMP) ## the cold build cost of BOARD's kernels: make of the image without ccache, BUILD_COST_RUNS rounds interleaved, CPU and wall time; logs/BOARD/build-cost.json [UNTIL_CI=1 MAX_ROUNDS=n BUILD_COST_PARALLEL=n]
	@$(BRINGUP) build-cost $(call opt,--board,BOARD) $(call opt,--runs,BUILD_COST_RUNS) $(UNTIL) $(call opt,--jobs,JOBS) $(call opt,--parallel,BUILD_COST_PARALLEL) $(call flag,--force,FORCE)

build-cost-aa: $(DEPS_STAMP) ## A/A check of the build cost: KERNEL (default the board's last) built cold as two arms; must claim nothing
	@$(BRINGUP) build-cost --aa $(call opt,--board,BOARD) $(call opt,--kernel,KERNEL) $(call opt,--runs,BUILD_COST_RUNS) $(UNTIL) $(call opt,--jobs,JOBS) $(call opt,--parallel,BUILD_COST_PARALLEL) $(call flag,--force,FORCE)

build-report: $(DEPS_STAMP) ## print the build results table with deltas for BOARD
	@$(BRINGUP) build-report $(call opt,--board,BOARD)

boot-timing: $(DEPS_STAMP) ## boot each kernel of BOARD RUNS times over the serial console; milestone table
	@$(BRINGUP) boot-timing $(call opt,--board,BOARD) $(call opt,--runs,RUNS) $(KSEL) $(BOOT_OPT) $(call opt,--profile,PROFILE) $(UNTIL) $(PLACE_OPT) $(call opt,--jobs,JOBS)

footprint-report: $(DEPS_STAMP) ## ramdisk boot: kernel code+data, free, malloc() (mem_eat), lmbench (LMBENCH=quick|full|none)
	@$(BRINGUP) footprint-report $(call opt,--board,BOARD) $(KSEL) $(call opt,--lmbench,LMBENCH) $(LMSRC) $(UNTIL) $(PLACE_OPT) $(CLOCK_OPT) $(call opt,--jobs,JOBS)

workloads: $(DEPS_STAMP) ## application workloads in a ramdisk, WORKLOAD_RUNS rounds [WORKLOADS=a,b|all WORKLOAD_MODE=quick|full]; docs/workloads.md
	@$(BRINGUP) workloads $(call opt,--board,BOARD) $(KSEL) $(call opt,--runs,WORKLOAD_RUNS) $(call opt,--mode,WORKLOAD_MODE) $(call opt,--workloads,WORKLOADS) $(UNTIL) $(PLACE_OPT) $(CLOCK_OPT) $(call opt,--jobs,JOBS)

report: $(DEPS_STAMP) ## write logs/BOARD/report/index.html and report.md from the records (tables, charts, summary)
	@$(BRINGUP) report $(call opt,--board,BOARD)

import: $(DEPS_STAMP) ## import FILE (KIND=bootlog|lmbench) as pseudo-kernel KERNEL of BOARD [LABEL=.. LMBENCH_HOST=.. ROOT=..]; docs/import.md
	@$(if $(and $(value KIND),$(value FILE),$(value KERNEL)),true,{ echo 'bringup: error: make import: give KIND=bootlog|lmbench FILE=<file> KERNEL=<id> (missing: $(strip $(foreach v,KIND FILE KERNEL,$(if $(value $(v)),,$(v)=)))) [BOARD=<board>] [LABEL=<text>] [LMBENCH_HOST=<host>] [REPLACE=1]' >&2; exit 2; })
	@$(BRINGUP) import $(call opt,--board,BOARD) $(KSEL) $(call opt,--label,LABEL) $(call opt,--host,LMBENCH_HOST) $(if $(filter bootlog,$(value KIND)),$(call opt,--root,ROOT)) $(call flag,--replace,REPLACE) -- $(call qv,KIND) $(call qv,FILE)

check: $(DEPS_STAMP) ## quality gate: ruff lint, ruff format check, mypy, unit tests (4 workers: most unit tests wait on sockets and fake boards, not the CPU; quick Hypothesis profile)
	@.venv/bin/ruff check scripts/lib tests bench
	@.venv/bin/ruff format --check scripts/lib tests bench
	@.venv/bin/mypy
	@$(PYTEST) -q $(UNIT) $(value PYTEST_ARGS)

lint: $(DEPS_STAMP) ## ruff lint only
	@.venv/bin/ruff check scripts/lib tests bench

format: $(DEPS_STAMP) ## reformat the Python sources with ruff
	@.venv/bin/ruff format scripts/lib tests bench

typecheck: $(DEPS_STAMP) ## mypy on the package
	@.venv/bin/mypy

test: deps ## run every test: the unit tests (4 workers), then the integration tests (real kernels, real QEMU, one at a time); Hypothesis' full profile; PYTEST_ARGS=<tests> may select either kind
	@HYPOTHESIS_PROFILE=ci $(PYTEST) -q $(UNIT) --durations=5 $(value PYTEST_ARGS) || [ $$? -eq 5 ]
	@HYPOTHESIS_PROFILE=ci $(PYTEST) -m integration --durations=15 $(value PYTEST_ARGS) || [ $$? -eq 5 ]

test-unit: $(DEPS_STAMP) ## run only the fast unit tests (4 workers; HYPOTHESIS_PROFILE=ci for the full profile)
	@$(PYTEST) $(UNIT) $(value PYTEST_ARGS)

test-integration: $(DEPS_STAMP) ## run only the integration tests
	@$(PYTEST) -m integration $(value PYTEST_ARGS)

aa: $(DEPS_STAMP) ## A/A check: KERNEL (default the board's last) as two arms; the summary must claim no difference
	@$(BRINGUP) aa $(call opt,--board,BOARD) $(KSEL) $(call opt,--runs,RUNS) $(call opt,--root,ROOT) $(call opt,--lmbench,LMBENCH) $(call opt,--lmbench-runs,LMBENCH_RUNS) $(CLOCK_OPT)

ab: $(DEPS_STAMP) ## sensitivity check: KERNEL as two arms, arm b DELAY_MS (1000) later before the userspace marker; the summary must claim that and nothing else [CLOCK=host|instructions]
	@$(BRINGUP) aa $(call opt,--board,BOARD) $(KSEL) $(call opt,--runs,RUNS) $(call opt,--root,ROOT) $(call opt,--lmbench,LMBENCH) $(call opt,--lmbench-runs,LMBENCH_RUNS) $(CLOCK_OPT) $(call opt,--delay-ms,DELAY_MS)

bench: $(DEPS_STAMP) ## build benchmarks: bringup vs bare make, ccache cold vs bare and warm vs cold, no-op rerun, ccache settings
	@.venv/bin/python bench/build_bench.py $(call opt,--board,BOARD) $(KSEL) $(call opt,--rounds,BENCH_ROUNDS)

bench-ccache: $(DEPS_STAMP) ## where a cold ccache's cost goes: part of a kernel bare vs ccache settings, cold and warm, interleaved
	@.venv/bin/python bench/ccache_bench.py $(call opt,--board,BOARD) $(KSEL) $(call opt,--rounds,BENCH_ROUNDS)

bench-aa: $(DEPS_STAMP) ## the A/A check on a quiet host and with CPU hogs from halfway, side by side
	@.venv/bin/python bench/aa_bench.py $(call opt,--board,BOARD) $(KSEL)

.PHONY: bench-aa-rate
bench-aa-rate: $(DEPS_STAMP) ## A/A false claims and the power to see a known shift of the summary's decisions, on the real host-clock records, by rounds
	@.venv/bin/python bench/aa_rate.py

bench-boot: $(DEPS_STAMP) ## boot benchmark: printk lag, overhead against bare QEMU
	@.venv/bin/python bench/boot_bench.py $(call opt,--board,BOARD) $(KSEL)

clean: ## remove results under logs/ (the download/build cache is kept: see README)
	@find logs -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +

bench-labgrid: $(DEPS_STAMP) ## labgrid overhead: one QEMU board through a labgrid place vs its own socket console
	@.venv/bin/python bench/labgrid_bench.py $(KSEL)

bench-places: $(DEPS_STAMP) ## several places: one boot-timing study on one labgrid place vs spread over two (wall time)
	@.venv/bin/python bench/places_bench.py $(call opt,-n,BENCH_ROUNDS)
