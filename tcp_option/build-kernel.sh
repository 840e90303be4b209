#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a small test kernel with the one-way-timestamp (OWTS) patch series.
#
#   tcp_option/build-kernel.sh [--series 6.1|7.2] [--config-only]
#
# 6.1 is Debian 12's linux-source-6.1 (installed with apt), 7.2 sid's
# linux-source-7.2 (downloaded with a private apt configuration, see
# scripts/private-apt.sh; the system's sources are not touched).  The series
# tcp_option/linux-SERIES/*.patch is applied with patch(1), the kernel is
# configured with virtme-ng's defconfig plus tcp_option/kernel.config and
# built with ccache.
#
# Everything lives under ~/.cache/synctcp/kernel/linux-SERIES-owts-KEY/, KEY
# being a hash of the patches, the config fragment and the source package
# version: an unchanged series is never rebuilt, a changed
# one gets a new directory (older ones of the same series are removed).
# ~/.cache/synctcp/kernel/linux-SERIES-owts points at the newest.  The last
# line printed is the build directory (O=): BUILD/arch/x86/boot/bzImage is
# the kernel, and out-of-tree modules build with make -C BUILD M=...
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${SYNCTCP_CACHE:-$HOME/.cache/synctcp}
series=6.1
config_only=0
log() { echo "build-kernel[$series]: $*" >&2; }
die() { log "$*"; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--series) series=${2:?}; shift 2 ;;
	--config-only) config_only=1; shift ;;
	*) echo "usage: $0 [--series 6.1|7.2] [--config-only]" >&2; exit 2 ;;
	esac
done
patches=("$here/linux-$series"/*.patch)
[ -f "${patches[0]}" ] || die "no patch series tcp_option/linux-$series/"

# ---- the source tarball ---------------------------------------------------
# shellcheck source=../scripts/kernel-source.sh
. "$repo/scripts/kernel-source.sh"
# The cache key's version string, as it has always been: the Debian version
# for 6.1, the .deb's file name for sid's series.
source_tarball() {
	local tarball pkg
	read -r tarball pkg <<<"$(kernel_source "$series" "$repo" "$cache")" && [ -n "$pkg" ] || return 1
	case $series in
	6.1) echo "$tarball ${pkg#linux-source-6.1_}" ;;
	*) echo "$tarball $pkg.deb" ;;
	esac
}

for t in make gcc flex bison bc ccache virtme-configkernel; do
	command -v "$t" >/dev/null || die "needs $t (make setup)"
done
mkdir -p "$cache/kernel"
exec 8>"$cache/kernel/.build-$series.lock"
flock 8

src_info=$(source_tarball) || die "cannot get the linux-source-$series package"
read -r tarball version <<<"$src_info"
key=$( (cat "${patches[@]}" "$here/kernel.config"; echo "$version") |
	sha256sum | cut -c1-12)
dir=$cache/kernel/linux-$series-owts-$key
build=$dir/build
if [ -f "$dir/.done" ]; then
	ln -sfn "$dir" "$cache/kernel/linux-$series-owts"
	log "cached, $version ($(cat "$dir/.done")): $dir"
	echo "$build"
	exit 0
fi

start=$(date +%s)
kernel_unpack "$tarball" "$dir" "${patches[@]}" || exit 1

log "configuring (virtme-ng defconfig + tcp_option/kernel.config)"
(cd "$dir/src" && virtme-configkernel --defconfig --custom "$here/kernel.config" \
	O="$build" >"$dir/config.log" 2>&1) || { tail -20 "$dir/config.log" >&2; die "configuration failed"; }
"$dir/src/scripts/config" --file "$build/.config" -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
	-d DEBUG_INFO_DWARF4 -d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
make -s -C "$dir/src" O="$build" olddefconfig >>"$dir/config.log" 2>&1
# Every =y of the fragment must have survived the dependency resolution.
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=y$' "$here/kernel.config" | while read -r want; do
	grep -qx "$want" "$build/.config" || echo "${want%=y}"
done)
[ -z "$missing" ] || die "configuration lacks:" $missing
for old in "$cache/kernel/linux-$series-owts-"*; do     # stale series
	[ "$old" = "$dir" ] || [ -L "$old" ] || rm -rf "$old"
done
[ "$config_only" = 0 ] || { echo "$build"; exit 0; }

log "building bzImage and modules with $(nproc) jobs (log: $dir/build.log)"
export CCACHE_DIR=$cache/ccache
ccache -M 8G >/dev/null
if ! make -C "$dir/src" O="$build" CC="ccache gcc" -j"$(nproc)" bzImage modules \
	>"$dir/build.log" 2>&1; then
	grep -E 'error|Error' "$dir/build.log" | head -20 >&2
	die "build failed (log: $dir/build.log)"
fi
secs=$(($(date +%s) - start))
echo "built in ${secs} s on $(date -u +%FT%TZ), $(nproc) cores, $version" >"$dir/.done"
ln -sfn "$dir" "$cache/kernel/linux-$series-owts"
log "built in ${secs} s: $build/arch/x86/boot/bzImage"
echo "$build"
