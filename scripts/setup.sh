#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install what synctcp needs on Debian 12, once: quiet and fast when all
# of it is already there.  Run as root (make setup).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# Debian packages: build tools, a VM kernel (image + headers) for virtme-ng,
# the emulator, the networking tools of the testbed, and what the patched
# test kernel of tcp_option/ builds from (linux-source-6.1, ccache).
pkgs=(build-essential bc flex bison libelf-dev kmod
      linux-image-amd64 linux-headers-amd64 qemu-system-x86
      iperf3 iproute2 tcpdump ethtool procps python3-pip python3-venv
      dkms gpsd gpsd-clients chrony pps-tools mokutil
      linux-source-6.1 libssl-dev ccache dwarves
      clang libclang-rt-14-dev   # libFuzzer: make fuzz, and make unit's short pass
      busybox-static file iputils-ping   # virtme-ng: its initramfs, its static check; ping: kernel tests
      stress-ng   # the platform tests: a busy host must not change simulated-time figures
      valgrind   # make bench-ack: instructions per ACK (callgrind)
      nginx apache2-utils   # a real web server and client: the kernel load test (50,000 connections)
      slurm-wlm munge   # --slurm and its test: a one-node Slurm the test runs itself
      mininet   # Mininet 2.3 (python3-mininet for the system python; no Open vSwitch: docs/mininet.md)
      openssh-client   # synctcp-testbed hosts check, run --hosts: OpenSSH to the hosts (docs/real-hosts.md)
      mmdebstrap)   # uml/build-rootfs.sh: the UML instances' pinned user space (docs/platform.md)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "setup: run as root to install: ${missing[*]}" >&2; exit 1; }
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# chrony and gpsd are installed for their programs (synctcp clock and its
	# tests run private instances); their services must not start from the
	# package scripts, chronyd would steer this host's clock: a policy-rc.d
	# that says no, for the install, unless the system has one already.
	nostart=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		nostart=1
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	if [ -n "$nostart" ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
fi

# The headers must match the VM kernel the tests boot.
kver=$(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n 1 | sed 's|.*/vmlinuz-||')
if [ -n "$kver" ] && [ ! -d "/lib/modules/$kver/build" ]; then
	echo "setup: installing linux-headers-$kver"
	apt-get install -y -qq "linux-headers-$kver" >/dev/null
fi

# Python, for the system: virtme-ng (vng: scripts/vmrun's VM) and the
# libraries this project's packages import (pyproject.toml's dependencies
# and test extras), none of which depends on a clone.  This project's own
# packages go only into the checkout's environment, .venv/ (scripts/venv.sh,
# below): another clone's setup cannot re-point them, and deleting that clone
# breaks nothing here.
py=${SYNCTCP_BASE_PYTHON:-python3}
if ! command -v vng >/dev/null || ! "$py" -c 'import pyroute2, matplotlib, rich, dpkt, pydantic, scipy, pytest, scapy, distributed, dask_jobqueue' 2>/dev/null; then
	echo "setup: installing Python packages (virtme-ng, the libraries of synctcp)"
	# pyproject.toml's dependencies and test extras, one a line
	mapfile -t deps < <("$py" -c 'import sys, tomllib; p = tomllib.load(open(sys.argv[1], "rb"))["project"]; print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))' "$here/pyproject.toml")
	pipargs=(-q --root-user-action=ignore --disable-pip-version-check virtme-ng "${deps[@]}")
	# Debian's own python3 refuses system-wide pip installs (PEP 668).
	"$py" -m pip install "${pipargs[@]}" 2>/dev/null ||
		"$py" -m pip install --break-system-packages "${pipargs[@]}"
	# pyenv only shows new console scripts (vng) after a rehash
	if command -v pyenv >/dev/null; then pyenv rehash; fi
fi

# mn runs the custom topologies (mininet/synctcp_mininet/topos.py) with
# Debian's /usr/bin/python3 whatever $PYTHON is, and they build their
# scenario with its typed models: pydantic 2 there too (Debian 12's
# python3-pydantic is 1.10).
sys_py=/usr/bin/python3
if [ -x "$sys_py" ] && ! "$sys_py" -c 'import sys, pydantic; sys.exit(pydantic.VERSION < "2")' 2>/dev/null; then
	echo "setup: installing pydantic 2 for $sys_py (mn --custom)"
	pipargs=(-q --root-user-action=ignore --disable-pip-version-check "pydantic>=2")
	"$sys_py" -m pip install "${pipargs[@]}" 2>/dev/null ||
		"$sys_py" -m pip install --break-system-packages "${pipargs[@]}"
fi

# This checkout's Python environment: .venv/, its packages editable (make
# venv), made from Debian's /usr/bin/python3 unless SYNCTCP_BASE_PYTHON says
# otherwise (scripts/venv.sh: the instances' image has that interpreter)
"$here/scripts/venv.sh"
