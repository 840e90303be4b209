#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Register the synctcp modules with DKMS so they are rebuilt for every new
# kernel (make dkms-install / make dkms-uninstall; docs/dkms.md).
#
#   scripts/dkms.sh install   [-k KVER]   stage, add, build and install (KVER: default
#                                         the running kernel)
#   scripts/dkms.sh build     [-k KVER]   stage, add and build only
#   scripts/dkms.sh uninstall             remove every synctcp version from DKMS
#                                         (all kernels) and its /usr/src copy
#   scripts/dkms.sh version               print the package version
#
# Environment (the tests build into temporary trees with these, leaving
# /usr/src, /var/lib/dkms and /lib/modules alone):
#   DKMS_SOURCE_TREE   where the staged source goes   (default /usr/src)
#   DKMS_DKMS_TREE     dkms's own tree                (default /var/lib/dkms)
#   DKMS_INSTALL_TREE  where modules are installed    (default /lib/modules)
#   DKMS_NO_DEPMOD=1   pass --no-depmod to dkms install
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "dkms.sh: $*" >&2; exit 2; }

action=${1:-}
[ $# -gt 0 ] && shift
kver=$(uname -r)
while [ $# -gt 0 ]; do
	case $1 in
	-k) [ $# -ge 2 ] || die "-k needs a kernel release"; kver=$2; shift 2 ;;
	*) die "unknown argument: $1" ;;
	esac
done

# One source for the version: MODULE_VERSION of the modules (dkms.conf reads
# the same line).
version=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$here/kmod/tcp_sync_main.c")
[ -n "$version" ] || die "no MODULE_VERSION in kmod/tcp_sync_main.c"

src_tree=${DKMS_SOURCE_TREE:-/usr/src}
opts=()
[ -n "${DKMS_SOURCE_TREE:-}" ] && opts+=(--sourcetree "$DKMS_SOURCE_TREE")
[ -n "${DKMS_DKMS_TREE:-}" ] && opts+=(--dkmstree "$DKMS_DKMS_TREE")
[ -n "${DKMS_INSTALL_TREE:-}" ] && opts+=(--installtree "$DKMS_INSTALL_TREE")

need_dkms() {
	command -v dkms >/dev/null || die "dkms is not installed (apt-get install dkms, or make setup)"
	[ "$(id -u)" = 0 ] || die "run as root (dkms installs into system directories)"
}

# Copy what DKMS needs (dkms.conf and the module sources, not the unit tests
# or build products) to SRC_TREE/synctcp-VERSION, replacing an older copy.
stage() {
	local dst="$src_tree/synctcp-$version"
	rm -rf "$dst"
	mkdir -p "$dst/kmod"
	cp "$here/dkms.conf" "$dst/"
	tar -C "$here/kmod" --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude=modules.order \
		--exclude=Module.symvers --exclude=tests --exclude=./build -cf - . | tar -C "$dst/kmod" -xf -
}

# Drop an earlier registration of the same version (so a re-run rebuilds
# from the staged sources).
unregister() {
	if dkms status "${opts[@]}" -m synctcp -v "$version" 2>/dev/null | grep -q .; then
		dkms remove "${opts[@]}" -m synctcp -v "$version" --all >/dev/null
	fi
}

case $action in
version)
	echo "$version"
	;;
build | install)
	need_dkms
	[ -e "/lib/modules/$kver/build/include" ] ||
		die "no headers for kernel $kver: apt-get install linux-headers-$kver (or -k KVER)"
	unregister
	stage
	dkms add "${opts[@]}" -m synctcp -v "$version"
	dkms build "${opts[@]}" -m synctcp -v "$version" -k "$kver"
	if [ "$action" = install ]; then
		iopts=()
		[ "${DKMS_NO_DEPMOD:-0}" = 1 ] && iopts+=(--no-depmod)
		dkms install "${opts[@]}" "${iopts[@]}" -m synctcp -v "$version" -k "$kver"
		echo "dkms.sh: synctcp $version installed for $kver; load with: synctcp load all (or modprobe tcp_sync)"
	fi
	;;
uninstall)
	need_dkms
	for v in $(dkms status "${opts[@]}" -m synctcp 2>/dev/null |
		sed -n 's|^synctcp/\([^,:]*\).*|\1|p' | sort -u); do
		dkms remove "${opts[@]}" -m synctcp -v "$v" --all
		rm -rf "$src_tree/synctcp-$v"
	done
	;;
*)
	die "usage: scripts/dkms.sh install|build [-k KVER] | uninstall | version"
	;;
esac
