#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# port-check.sh [SERIES]: apply tcp_option/linux-SERIES/ to a fresh tree of
# that kernel (build-kernel.sh --config-only: fetch, patch, configure) and
# compile what the series touches: net/ipv4/, net/ipv6/ and
# net/core/filter.o, with warnings as the kernel's own build shows them;
# then kmod/ against the patched headers with W=1 (the option source,
# TCP_OWTS_API, compiled in).  modpost cannot resolve symbols without a
# vmlinux: its warnings are not counted, the compiler's are.
# Quicker than a whole kernel (SERIES=7.2 make -C tcp_option kernel).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
series=${1:-7.2}
start=$(date +%s)
build=$("$here/build-kernel.sh" --series "$series" --config-only | tail -n1)
src=$(dirname "$build")/src
export CCACHE_DIR=${SYNCTCP_CACHE:-$HOME/.cache/synctcp}/ccache
log=$(dirname "$build")/port-check.log
if ! { make -s -C "$src" O="$build" CC="ccache gcc" -j"$(nproc)" prepare &&
	make -s -C "$src" O="$build" CC="ccache gcc" -j"$(nproc)" \
		net/ipv4/ net/ipv6/ net/core/filter.o; } >"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -20 >&2
	echo "port-check: linux-$series FAILED (log: $log)" >&2
	exit 1
fi
kmod=$(dirname "$build")/kmod
rm -rf "$kmod" && mkdir -p "$kmod"
# kmod/'s sources: Kbuild, the *_main.c, core/, glue/, parts/
(cd "$here/../kmod" && tar --exclude=./build --exclude=./tests --exclude='*.o' \
	--exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' --exclude='*.cmd' \
	--exclude=modules.order --exclude=Module.symvers -cf - .) | tar -C "$kmod" -xf -
if ! { make -s -C "$src" O="$build" CC="ccache gcc" -j"$(nproc)" modules_prepare &&
	make -C "$build" M="$kmod" CC="ccache gcc" KBUILD_MODPOST_WARN=1 W=1 modules; } \
	>>"$log" 2>&1 || [ ! -f "$kmod/tcp_sync.ko" ]; then
	grep -E 'error' "$log" | head -20 >&2
	echo "port-check: kmod/ does not build against linux-$series (log: $log)" >&2
	exit 1
fi
grep -q '^#define TCP_OWTS_API' "$src/include/net/tcp.h" ||
	{ echo "port-check: the series did not define TCP_OWTS_API" >&2; exit 1; }
if grep -q 'warning:' "$log"; then
	grep 'warning:' "$log" | head -20 >&2
	echo "port-check: linux-$series compiles with warnings (log: $log)" >&2
	exit 1
fi
echo "port-check: linux-$series series applies; net/ and kmod/ (W=1) compile without warnings ($(( $(date +%s) - start )) s)"
