#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a User-Mode Linux (ARCH=um) kernel with time-travel (simulated time)
# support, and kmod/ built against it.
#
#   uml/build-uml.sh [--series 6.1|7.N[-debug]] [--config-only] [--print]
#
# 6.1 is Debian 12's linux-source-6.1 (installed with apt), 7.N sid's
# linux-source-7.N (downloaded with a private apt configuration, see
# scripts/private-apt.sh; the system's sources are not touched).  The patches
# uml/linux-SERIES/*.patch (if any) are applied with patch(1); the kernel is
# configured with `make ARCH=um defconfig` plus uml/uml.config (and
# uml/linux-SERIES/series.config, the settings of that series only, if any:
# 7.x's DualPI2, which 6.1 lacks) and built with ccache.  Every
# CONFIG_X=VALUE of the fragments must survive olddefconfig
# (and every "is not set" must stay unset): the script fails listing the
# options that did not.
#
# SERIES-debug (e.g. 6.1-debug) is the same kernel with uml/uml-debug.config
# on top: KASAN, UBSAN, lockdep, KMEMLEAK, DEBUG_ATOMIC_SLEEP (`make
# kernel-test-debug` runs the kernel tests on it).  It has its own cache
# directory, uml-SERIES-debug-KEY, and never replaces the plain build.
#
# Layout (the conventions of tcp_option/build-kernel.sh):
#   ~/.cache/synctcp/kernel/uml-SERIES-KEY/      KEY: hash of the patches, the
#       .done            fragment, the source package version, the fixed
#                        KBUILD_BUILD_* banner and the compiler; the two
#       build/linux      most recently used other directories of the series
#       build/.config    stay (another clone may run one), older ones go
#       modroot/lib/modules/RELEASE/   the kernel's own =m modules
#   KMOD/build/uml-SERIES/*.ko   kmod/ built for this kernel, in the checkout
#                        that ran the script (from a copy of its kmod/,
#                        rebuilt when the sources or the kernel change)
#   KMOD/build/uml-SERIES/.kernel  uml-SERIES-KEY: the kernel scripts/umlrun
#                        boots from this checkout
#   ~/.cache/synctcp/kernel/uml-SERIES -> the last build (for a checkout
#                        without its own)
#
# Then the instances' user-space image (uml/build-rootfs.sh; not with
# SYNCTCP_UML_ROOT=host).  --print prints the cached build directory (exit 1
# if there is none) and builds nothing.  The last line printed is the build directory: BUILD/linux
# is the kernel (scripts/umlrun boots it).  Run it at low priority on a
# shared machine: nice -n 19 ionice -c3 uml/build-uml.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${SYNCTCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/synctcp}
series=6.1
config_only=0
print_only=0
jobs=${SYNCTCP_BUILD_JOBS:-$(nproc)}
log() { echo "build-uml[$series]: $*" >&2; }
die() { log "$*"; exit 1; }
usage() { echo "usage: uml/build-uml.sh [--series 6.1|7.N[-debug]] [--config-only] [--print]" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--series) [ $# -ge 2 ] || usage; series=$2; shift 2 ;;
	--config-only) config_only=1; shift ;;
	--print) print_only=1; shift ;;
	-h|--help) sed -n '4,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
done
[[ $series =~ ^[0-9]+\.[0-9]+(-debug)?$ ]] || usage
base=${series%-debug}                   # the source series
fragments=("$here/uml.config")
# the series' own settings (e.g. a qdisc that 6.1 lacks)
[ ! -f "$here/linux-$base/series.config" ] || fragments+=("$here/linux-$base/series.config")
[ "$base" = "$series" ] || fragments+=("$here/uml-debug.config")
patches=()
for p in "$here/linux-$base"/*.patch; do [ -f "$p" ] && patches+=("$p"); done

if [ "$print_only" = 1 ]; then
	d=$cache/kernel/uml-$series
	[ -f "$d/.done" ] && [ -x "$d/build/linux" ] || { log "not built: uml/build-uml.sh --series $series"; exit 1; }
	echo "$(cd "$d" && pwd -P)/build"
	exit 0
fi

# ---- the source tarball ---------------------------------------------------
# shellcheck source=../scripts/kernel-source.sh
. "$repo/scripts/kernel-source.sh"
# Prints "TARBALL VERSION".
source_tarball() {
	kernel_source "$base" "$repo" "$cache"
}

# The fragment's settings that olddefconfig dropped, one a line.
missing_options() {
	local config=$1 line name
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$config" || echo "${line}" ;;
		"# CONFIG_"*" is not set")
			name=${line#\# }; name=${name%% *}
			! grep -qE "^$name=" "$config" || echo "$line" ;;
		esac
	done < <(cat "${fragments[@]}")
}

# Builds of other keys of this series (other clones' patches, older
# commits) stay: a clone that builds new patches must not delete the
# kernel another clone is running (a run of a clean clone failed in the
# middle that way, docs/platform.md).  Only the least recently used beyond
# KEEP_BUILDS go, never this one.
KEEP_BUILDS=3
prune_builds() {
	local old t n=0
	for old in "$cache/kernel/uml-$series-"????????????; do
		[ -d "$old" ] && [ ! -L "$old" ] && [ "$old" != "$dir" ] || continue
		# last used (.used), else built (.done), else an interrupted build
		t=$(stat -c %Y "$old/.used" 2>/dev/null || stat -c %Y "$old/.done" 2>/dev/null || echo 0)
		echo "$t $old"
	done | sort -rn | while read -r t old; do
		n=$((n + 1))
		[ "$n" -lt "$KEEP_BUILDS" ] || rm -rf "$old"
	done
}

# kmod/ for this kernel, from a copy of this checkout's sources, into
# this checkout's kmod/build/uml-SERIES/ (kmod/*.ko stay the Debian
# kernel's): each clone has its own, so that a clone building its modules
# never replaces another's under its running tests.  Rebuilt when the
# sources or the kernel change.
build_kmod() {
	local dir=$1 out=$repo/kmod/build/uml-$series srchash
	local excl=(--exclude=./build --exclude=./tests --exclude='*.o' --exclude='*.ko'
		--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.cmd'
		--exclude=modules.order --exclude=Module.symvers --exclude=.tmp_versions)
	# the sources only: a local build's generated *.mod.c differ between
	# checkouts and would make two trees rebuild for each other
	# the kernel's headers are named relative to the module directory in the
	# objects (e.g. include/net/tcp.h's WARN_ON): without the prefix, the
	# modules' bytes would depend on where the checkout is
	local rel kcflags
	rel=$(realpath -m --relative-to="$out" "$dir/src")
	kcflags="-fmacro-prefix-map=$rel/="
	srchash=$( (echo "$dir $kcflags"; cd "$repo/kmod" && tar "${excl[@]}" --sort=name --mtime=@0 \
		--owner=0 --group=0 --numeric-owner -cf - .) | sha256sum | cut -c1-16)
	if [ -f "$out/.src-hash" ] && [ "$(cat "$out/.src-hash")" = "$srchash" ] &&
		[ -f "$out/tcp_sync.ko" ]; then
		log "kmod: up to date in $out"
		return 0
	fi
	rm -rf "$out"
	mkdir -p "$out"
	(cd "$repo/kmod" && tar "${excl[@]}" -cf - .) | tar -C "$out" -xf -
	log "kmod: building against the UML kernel"
	if ! make -C "$dir/build" ARCH=um RUSTC=false M="$out" CC="ccache gcc" KCFLAGS="$kcflags" -j"$jobs" modules \
		>"$out/kmod.log" 2>&1; then
		grep -E 'error|Error' "$out/kmod.log" | head -20 >&2
		die "kmod/ does not build for UML (log: $out/kmod.log)"
	fi
	echo "$srchash" >"$out/.src-hash"
	log "kmod: $(cd "$out" && echo *.ko)"
}

# The build is ready (LOG says how): mark it used, link it, build kmod/
# against it and name it this checkout's kernel for scripts/umlrun (after
# build_kmod, which renews kmod/build/uml-SERIES/; the shared uml-SERIES
# link names the series' last build, which another clone may have made),
# then the image; print the build directory
finish() {
	touch "$dir/.used"
	ln -sfn "$dir" "$cache/kernel/uml-$series"
	log "$1"
	build_kmod "$dir"
	echo "${dir##*/}" >"$repo/kmod/build/uml-$series/.kernel"
	build_image
	echo "$build"
}

# The instances' user space (uml/build-rootfs.sh), unless the host's is
# asked for; quiet when it is built
build_image() {
	[ "${SYNCTCP_UML_ROOT:-image}" != host ] || return 0
	"$here/build-rootfs.sh" >/dev/null || die "the user-space image (uml/build-rootfs.sh) failed"
}

for t in make gcc flex bison bc ccache patch xz; do
	command -v "$t" >/dev/null || die "needs $t (make setup)"
done
mkdir -p "$cache/kernel"
exec 8>"$cache/kernel/.build-uml-$series.lock"
flock 8

src_info=$(source_tarball) || die "cannot get the linux-source-$series package"
read -r tarball version <<<"$src_info"
# A reproducible build: the banner's date, user and host are fixed (not
# this machine's), and Kconfig does not look for a Rust compiler (RUSTC=false
# in every make: a rustc on PATH put its version into the .config the kernel
# embeds, another binary), so the same source, configuration and toolchain
# give the same binary on any machine (docs/platform.md, "Determinism"); the
# key covers them and the toolchain's versions
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026" KBUILD_BUILD_USER=synctcp \
	KBUILD_BUILD_HOST=uml KBUILD_BUILD_VERSION=1
compiler="$(gcc --version | head -n1); $(ld --version | head -n1); RUSTC=false"
key=$( (cat ${patches[@]+"${patches[@]}"} "${fragments[@]}"; echo "$version"
	echo "$KBUILD_BUILD_TIMESTAMP $KBUILD_BUILD_USER@$KBUILD_BUILD_HOST #$KBUILD_BUILD_VERSION"
	echo "$compiler") | sha256sum | cut -c1-12)
dir=$cache/kernel/uml-$series-$key
build=$dir/build
export CCACHE_DIR=$cache/ccache
# every key has its own directory: paths relative to it, and no debug-info
# directory in the hash, so that a new key reuses the objects of the last
export CCACHE_BASEDIR=$dir CCACHE_NOHASHDIR=1
if [ -f "$dir/.done" ]; then
	finish "cached, $version ($(cat "$dir/.done")): $dir"
	exit 0
fi

start=$(date +%s)
kernel_unpack "$tarball" "$dir" ${patches[@]+"${patches[@]}"} || exit 1

log "configuring (ARCH=um defconfig + ${fragments[*]#"$here"/})"
{
	make -C "$dir/src" O="$build" ARCH=um RUSTC=false defconfig &&
		(cd "$dir/src" && ARCH=um scripts/kconfig/merge_config.sh -m -O "$build" \
			"$build/.config" "${fragments[@]}") &&
		make -C "$dir/src" O="$build" ARCH=um RUSTC=false olddefconfig
} >"$dir/config.log" 2>&1 || { tail -20 "$dir/config.log" >&2; die "configuration failed"; }
missing=$(missing_options "$build/.config")
if [ -n "$missing" ]; then
	log "olddefconfig dropped these settings of ${fragments[*]#"$here"/}:"
	echo "$missing" | sed 's/^/    /' >&2
	die "configuration incomplete (see $build/.config)"
fi
prune_builds
[ "$config_only" = 0 ] || { echo "$build"; exit 0; }

log "building linux and modules with $jobs jobs (log: $dir/build.log)"
ccache -M 8G >/dev/null
if ! make -C "$dir/src" O="$build" ARCH=um RUSTC=false CC="ccache gcc" -j"$jobs" linux modules \
	>"$dir/build.log" 2>&1; then
	grep -E 'error|Error' "$dir/build.log" | head -20 >&2
	die "build failed (log: $dir/build.log)"
fi
make -C "$dir/src" O="$build" ARCH=um RUSTC=false INSTALL_MOD_PATH="$dir/modroot" modules_install \
	>>"$dir/build.log" 2>&1 || die "modules_install failed (log: $dir/build.log)"
secs=$(($(date +%s) - start))
release=$(cat "$build/include/config/kernel.release")
echo "built in ${secs} s on $(date -u +%FT%TZ), $(nproc) cores, $version, release $release" >"$dir/.done"
finish "built in ${secs} s: $build/linux ($release)"
