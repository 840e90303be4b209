# SPDX-License-Identifier: GPL-2.0
# synctcp: OTT-based TCP congestion control modules and their testbeds.
#
#   make            build the modules (kmod/*.ko)
#   make demo       the modules against reno/cubic on emulated bottlenecks (native, else
#                   User-Mode Linux on simulated time; --platform in DEMO_ARGS);
#                   DEMO_ARGS="--cc reno,cubic,sync --no-small-buffer" for a shorter one;
#                   MININET=1 runs it on Mininet (results/demo-mininet/)
#   make test       unit tests, Python tests, kernel tests on simulated time (UML)
#                   and in a VM (kernel-smoke), the platform's own tests
#                   (platform-test), cases on Dask and Slurm (dist-test), the
#                   patched kernel of tcp_option/ (built once, then cached):
#                   every part, then a table of them, the excused skips
#                   (tests/skips.toml) and the failed parts (scripts/make-test)
#   make bench      weigle-ftp and gu-smallbuffer, 5 seeds, mean and 95% CI of each
#                   figure and its ratios to Reno/CUBIC; BENCH_ARGS=--quick for the
#                   quick set, BENCH_ARGS="--only gu-smallbuffer --duration 10" for a part,
#                   BENCH_ARGS="--dask tcp://HOST:8786" (or --slurm, --jobs N) to spread
#                   the cases (docs/scaling.md)
#   make ledger     docs/results.md from the run summaries in docs/results/runs/
#   make bench-platform  simulated seconds per wall second of reference cases on
#                   UML and TCG (docs/platform.md)
#   make bench-ack  per-ACK cost (ns and instructions) through the congestion-control
#                   hooks: the kernel's reno, cubic, bbr, vegas, dctcp (built from the
#                   linux-source tarball, make uml-kernel) and our modules; then the
#                   cores alone against Reno's
#   make kernel-test-debug  the kernel tests on a KASAN/UBSAN/lockdep/KMEMLEAK UML kernel
#   make load       insmod the modules on this host (root; needs module support)
#   make install    install the modules for modprobe (modules_install + depmod)
#   make setup      install what the above need (Debian 12, idempotent), and
#                   the checkout's Python environment .venv/ (make venv: that alone,
#                   no root; . .venv/bin/activate puts synctcp, synctcp-testbed on PATH)
#   make checkpatch Linux coding style of the kernel C
#   make fuzz       libFuzzer on the cores and the option parser, FUZZ_SECONDS (60) each
#   make uml-kernel the time-travel UML kernel and modules for scripts/umlrun, and the
#                   instances' pinned user-space image (uml/build-rootfs.sh; docs/platform.md)
#   make golden-test  cases whose figures must equal the committed ones on any machine
#   make fresh-check        the README's prerequisites, `make demo` and `make test` in full
#                           in a pristine Debian 12 root (mmdebstrap; cold, ~1.5 h)
#   make fresh-check-short  setup, the demo, the golden figures, the unit tests and a
#                           kernel-test smoke subset in a pristine root (CI runs it after make test)

# This checkout's own Python environment (scripts/venv.sh, made by make setup
# or make venv): a venv that sees the system's packages and holds this
# checkout's packages, installed editable, with their commands.  Every target
# runs this checkout's code, whatever another clone installs or deletes.
VENV := $(CURDIR)/.venv
PYTHON ?= $(VENV)/bin/python3
export PATH := $(VENV)/bin:$(PATH)
VMRUN := scripts/vmrun
RESULTS ?= results
DEMO_ARGS ?=
BENCH_ARGS ?=
MODULES := $(patsubst %.o,%,$(filter %.o,$(shell sed -n 's/^obj-m += //p' kmod/Kbuild)))

all: modules

setup:
	@scripts/setup.sh

# .venv/ alone (setup runs it too): quiet and fast when it is there
venv:
	@scripts/venv.sh

# Inside a UML instance (scripts/umlrun) kmod/*.ko are the UML builds of
# uml/build-uml.sh, bind-mounted: nothing to build there.
modules:
ifeq ($(SYNCTCP_PLATFORM),uml)
	@test -f kmod/tcp_sync.ko || { echo "modules: no UML build of kmod/ (uml/build-uml.sh)" >&2; exit 1; }
else
	@$(MAKE) -s -C kmod modules
endif

install:
	$(MAKE) -C kmod install

load: modules
	@for m in $(MODULES); do \
		grep -q "^$$m " /proc/modules 2>/dev/null || insmod kmod/$$m.ko || exit 1; \
	done; cat /proc/sys/net/ipv4/tcp_available_congestion_control

unload:
	@for m in $(MODULES); do \
		! grep -q "^$$m " /proc/modules 2>/dev/null || rmmod $$m || exit 1; \
	done

unit:
	@$(MAKE) -s -C kmod/tests

# libFuzzer harnesses of the cores and of the option parser (kmod/tests/fuzz),
# FUZZ_SECONDS each (default 60; FUZZERS="ott etcp" for some); `make unit`
# runs a 3 s pass of each.
fuzz:
	@$(MAKE) -s -C kmod/tests/fuzz fuzz $(if $(FUZZ_SECONDS),FUZZ_SECONDS=$(FUZZ_SECONDS)) \
		$(if $(FUZZERS),FUZZERS="$(FUZZERS)")

pytest-unit: venv
	@$(PYTHON) -m pytest -q tests/unit

# The kernel tests on simulated time (UML: deterministic, load-independent;
# KERNEL_TEST_PLATFORM=tcg or native to choose) on bookworm's kernel series,
# 6.1, the one the VM and Debian 12 hosts run; then the modules loaded into
# the real Debian kernel in a VM (kernel-smoke).
KERNEL_TEST_PLATFORM ?= uml
KERNEL_TEST_UML_SERIES ?= 6.1
# On UML the time-edge tests also run on the newest series, whose peers can
# have a 1 MHz TS clock (tcp_usec_ts, Linux >= 6.7), and the load tests run
# there only (seccomp user space: a third of 6.1's wall time), as do the
# L4S and CAKE tests (DualPI2 and AccECN: Linux >= 6.18) and the namespace
# hosts of tests/kernel/test_remote_lab.py (sshd: 5 times faster there).
KERNEL_TEST_USEC_SERIES ?= 7.2
KERNEL_TEST_SECOND := tests/kernel/test_time_edges.py tests/kernel/test_first_sample.py \
	tests/kernel/test_short_flows.py tests/kernel/test_load.py \
	tests/kernel/test_l4s_cake.py tests/kernel/test_remote_lab.py tests/kernel/test_remote_run.py \
	tests/kernel/test_zz_kernel_reports.py
kernel-test: modules venv
ifeq ($(KERNEL_TEST_PLATFORM),uml)
	@$(MAKE) -s uml-kernels
	@# both series, whatever the first gives: a newcomer sees all of it in one run
	@# tests that compare figures (marked figures) each in an instance of its own:
	@# in a shared one the random generator and clock carry over (docs/platform.md)
	@# the two shared instances side by side (simulated time: the figures do
	@# not depend on it; the first's output follows the second's), then the
	@# figures tests, two instances at once (scripts/own-instances --jobs)
	@rc=0; first=$$(mktemp); \
	SYNCTCP_UML_SERIES=$(KERNEL_TEST_UML_SERIES) $(VMRUN) --platform uml \
		$(PYTHON) -m pytest -q -p no:cacheprovider -m "not figures" tests/kernel \
		$(addprefix --ignore=,$(KERNEL_TEST_SECOND)) >$$first 2>&1 & pid=$$!; \
	SYNCTCP_UML_SERIES=$(KERNEL_TEST_USEC_SERIES) $(VMRUN) --platform uml \
		$(PYTHON) -m pytest -q -p no:cacheprovider -m "not figures" $(KERNEL_TEST_SECOND) || rc=1; \
	wait $$pid || rc=1; cat $$first; rm -f $$first; \
	$(PYTHON) scripts/own-instances --series $(KERNEL_TEST_UML_SERIES) tests/kernel \
		$(addprefix --ignore=,$(KERNEL_TEST_SECOND)) || rc=1; \
	$(PYTHON) scripts/own-instances --series $(KERNEL_TEST_USEC_SERIES) \
		$(filter-out %/test_zz_kernel_reports.py,$(KERNEL_TEST_SECOND)) || rc=1; \
	exit $$rc
else
	@$(VMRUN) --platform $(KERNEL_TEST_PLATFORM) $(PYTHON) -m pytest -q -p no:cacheprovider tests/kernel
endif

# The kernel tests on the debug UML kernel (uml/uml-debug.config: KASAN,
# UBSAN, lockdep, KMEMLEAK, DEBUG_ATOMIC_SLEEP; built once, ~20 min, cached):
# tests/kernel/test_zz_kernel_reports.py fails on any report (docs/hardening.md)
KERNEL_TEST_DEBUG_SERIES ?= 7.2-debug
kernel-test-debug: modules venv
	@$(MAKE) -s uml-kernel UML_SERIES=$(KERNEL_TEST_DEBUG_SERIES)
	@SYNCTCP_UML_SERIES=$(KERNEL_TEST_DEBUG_SERIES) $(VMRUN) --platform uml \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests/kernel

kernel-smoke: modules venv
	@$(VMRUN) --vm $(PYTHON) -m pytest -q -p no:cacheprovider tests/kernel -k "loads or registers or malformed"

# The simulated-time platform proves itself (determinism, load independence,
# ceilings, agreement with the TCG VM): UML instances started from here.
platform-test: modules uml-kernel venv
	@$(PYTHON) -m pytest -q -p no:cacheprovider tests/platform

# The golden figures (tests/platform/test_golden.py; also in platform-test):
# short cases whose every figure must equal the committed ones, on any
# machine with the same user-space image and kernel (docs/platform.md)
golden-test: modules uml-kernel venv
	@$(PYTHON) -m pytest -q -p no:cacheprovider tests/platform/test_golden.py

# Sweeps beyond one machine (docs/scaling.md): the same summaries from --jobs 1,
# --jobs 2, a Dask cluster on loopback and a one-node Slurm started by the test;
# a Dask worker killed mid-case, a client killed mid-run and --resume.
dist-test: modules uml-kernel venv
	@$(PYTHON) -m pytest -q -p no:cacheprovider -rs tests/distributed

# The one-way-timestamp option: the patched test kernel (built once, cached
# in ~/.cache/synctcp/kernel), the modules for it, tests/owts in a VM.
owts-test:
	@$(MAKE) -s -C tcp_option test

# make test's parts, in order.  scripts/make-test runs every one of them
# whatever fails, then prints a table of the parts (pass/FAIL, wall seconds),
# the skips the reviewed allow-list tests/skips.toml excuses with their
# reasons, and exits non-zero naming the failed parts; a skip not on the
# allow-list fails it too.  uml-kernels comes before pytest-unit, whose UML
# build tests need the kernels (on a cold machine they would skip).
TEST_PARTS := modules unit uml-kernels pytest-unit kernel-test kernel-smoke platform-test \
	dist-test owts-test

test: setup
	@$(PYTHON) scripts/make-test $(TEST_PARTS)

# both UML kernels the kernel tests run on, with this checkout's modules for them
uml-kernels:
	@$(MAKE) -s uml-kernel UML_SERIES=$(KERNEL_TEST_UML_SERIES)
	@$(MAKE) -s uml-kernel UML_SERIES=$(KERNEL_TEST_USEC_SERIES)

bench: setup modules
	@start=$$(date +%s); \
	$(PYTHON) -m synctcp_testbed.bench --out $(RESULTS)/bench $(BENCH_ARGS) && \
	echo "make bench: done in $$(( $$(date +%s) - start )) s; see $(RESULTS)/bench/"

# Per-ACK cost in user space (kmod/tests/bench): the modules' hooks, the
# kernel's and ours, compiled against kshim/; the cores against Reno's
bench-ack: setup
	@$(MAKE) -s --no-print-directory -C kmod/tests/bench run

# docs/results.md, the ledger of the seeds' claims, regenerated from the
# summaries of the runs it was made from (docs/results/runs/*: meta.json,
# plan.json and summary.json of each run directory; docs/testbed.md); no root
ledger: venv
	@$(PYTHON) -m synctcp_testbed.cli ledger $(sort $(wildcard docs/results/runs/*))

# Simulated seconds per wall second of reference cases on UML, and the same
# through the TCG VM (BENCH_PLATFORM_ARGS="--platforms uml --only 1G-1")
bench-platform: setup modules uml-kernel
	@$(PYTHON) -m synctcp_testbed.benchplatform --out $(RESULTS)/bench-platform $(BENCH_PLATFORM_ARGS)

# MININET=1: the same two parts on Mininet (synctcp_mininet.demo, docs/mininet.md)
ifeq ($(MININET),1)
DEMO_MODULE := synctcp_mininet.demo
DEMO_OUT := $(RESULTS)/demo-mininet
else
DEMO_MODULE := synctcp_testbed.demo
DEMO_OUT := $(RESULTS)/demo
endif

demo: setup modules
	@start=$$(date +%s); \
	$(PYTHON) -m $(DEMO_MODULE) --out $(DEMO_OUT) $(DEMO_ARGS) && \
	echo "make demo: done in $$(( $$(date +%s) - start )) s; see $(DEMO_OUT)/"

checkpatch:
	@scripts/checkpatch.sh

fresh-check:
	@scripts/fresh-check.sh --full

# Simulated time (docs/platform.md): the time-travel UML kernel and the
# modules for it, cached in ~/.cache/synctcp/kernel/uml-SERIES: sid's 7.2 by
# default (seccomp user space: 2-3 times faster than 6.1's ptrace);
# UML_SERIES=6.1 for bookworm's.  scripts/umlrun CMD runs a command in it.
uml-kernel:
	@nice -n 19 uml/build-uml.sh --series $(or $(UML_SERIES),7.2) >/dev/null

fresh-check-short:
	@scripts/fresh-check.sh --short

clean:
	$(MAKE) -C kmod clean
	$(MAKE) -C kmod/tests clean

.PHONY: bench ledger all setup venv modules install load unload unit fuzz bench-ack pytest-unit kernel-test kernel-test-debug owts-test test demo checkpatch clean \
	fresh-check fresh-check-short uml-kernel uml-kernels kernel-smoke platform-test golden-test dist-test bench-platform

# DKMS (docs/dkms.md): rebuild the modules for every new kernel.
#   make dkms-install [KVER=release]   stage /usr/src/synctcp-VERSION, dkms add/build/install
#   make dkms-uninstall                remove synctcp from DKMS (all versions and kernels)
dkms-install:
	@scripts/dkms.sh install $(if $(KVER),-k $(KVER))

dkms-uninstall:
	@scripts/dkms.sh uninstall

.PHONY: dkms-install dkms-uninstall
