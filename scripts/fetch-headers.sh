#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-headers.sh SUITE
#
# Fetch the newest amd64 kernel headers of a Debian SUITE (e.g. sid) together
# with the toolchain that kernel was built with, WITHOUT touching the system's
# apt sources or dpkg database, and unpack them under
#   ~/.cache/synctcp/headers/SUITE/
# The last line printed on stdout is the KDIR to use:
#   make -C "$(scripts/fetch-headers.sh sid | tail -n1)" M=$PWD/kmod modules
#
# Idempotent: once unpacked it only prints KDIR (set SYNCTCP_REFRESH=1, or
# delete the directory, to look for a newer kernel in SUITE).
#
# What this does, and why (found on Debian 12 "bookworm" with sid's
# linux-headers-7.2.13+deb14-amd64, 2026-11):
#
#  * apt runs with a private sources.list, lists and cache under
#    ~/.cache/synctcp/apt-SUITE (Dir::Etc::SourceList/SourceParts,
#    Dir::State::Lists, Dir::Cache, APT::Architecture=amd64) and an empty
#    private dpkg status, so it resolves the whole dependency closure of the
#    headers package as on an empty system.  Nothing is installed: the .debs
#    are unpacked with dpkg-deb -x and then deleted (the tree is the cache).
#  * The amd64 headers package depends on linux-headers-X-common,
#    linux-kbuild-X (fixdep, modpost, objtool, resolve_btfids; it pulls in
#    pahole) and on the compiler the kernel was built with (sid: gcc-16, via
#    gcc-16-for-host).  Debian 12's gcc-12 cannot build against sid's headers:
#    their Makefile passes "-fmin-function-alignment=16" (gcc: error:
#    unrecognized command-line option) and their autoconf.h turns on gcc-15
#    features (__counted_by -> dozens of -Wattributes warnings with W=1).
#    CONFIG_*=... overrides on the make command line cannot undo autoconf.h,
#    and gcc >= 14 is not packaged for bookworm, so the suite's own gcc,
#    binutils (gcc-16 emits ".base64", which bookworm's as 2.40 rejects),
#    pahole and libc6 are unpacked beside the headers (~82 MB of .debs).
#  * Those binaries need glibc >= 2.38 (bookworm: 2.36); e.g. modpost.real,
#    resolve_btfids, genksyms, cc1, pahole: "GLIBC_2.38 not found".  Instead
#    of rebuilding anything, each dynamically linked executable in the tree
#    is replaced by a 2-line sh wrapper that starts it through the suite's own
#    ld.so with --library-path (see below).  patchelf --set-interpreter does
#    not work: it corrupts gcc-16's cc1 (SIGSEGV).
#  * The amd64 headers' Makefile names /usr/src/linux-headers-X-common and
#    KBUILD_OUTPUT=/usr/src/... by absolute path, and symlinks may be
#    absolute: all are rewritten to point inside the tree.  .kernelvariables
#    gets CROSS_COMPILE and PAHOLE pointing at the unpacked toolchain, so a
#    plain "make -C KDIR M=... modules" uses exactly the kernel's gcc and
#    pahole (no "compiler/pahole differs" warnings; module BTF is generated).
#  * Cost on the 2-core machine: cold ~25 s (82 MB at ~20-30 MB/s, unpack,
#    wrap), cached ~10 ms.  Disk ~470 MB per suite.
set -euo pipefail

usage() { echo "usage: $0 SUITE   (e.g. sid, trixie, bookworm)" >&2; exit 2; }
[ $# -eq 1 ] || usage
SUITE=$1
[[ $SUITE =~ ^[a-z][a-z0-9.-]*$ ]] || usage

ARCH=amd64
CACHE=${SYNCTCP_CACHE:-$HOME/.cache/synctcp}
ROOT=$CACHE/headers/$SUITE
STAMP=$ROOT/.synctcp-kdir

log() { echo "fetch-headers[$SUITE]: $*" >&2; }

# ---- fast path ----------------------------------------------------------
if [ -z "${SYNCTCP_REFRESH:-}" ] && [ -s "$STAMP" ]; then
	kdir=$(cat "$STAMP")
	if [ -f "$kdir/Makefile" ]; then
		echo "$kdir"
		exit 0
	fi
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.fetch-$SUITE.lock"
flock 9
if [ -z "${SYNCTCP_REFRESH:-}" ] && [ -s "$STAMP" ] && [ -f "$(cat "$STAMP")/Makefile" ]; then
	cat "$STAMP"   # another run finished it while we waited
	exit 0
fi

for t in apt-get apt-cache dpkg-deb; do
	command -v "$t" >/dev/null || { log "needs $t (Debian/Ubuntu host)"; exit 1; }
done

# ---- private apt configuration (scripts/private-apt.sh) ------------------
# shellcheck source=private-apt.sh
. "$(dirname "$0")/private-apt.sh"
private_apt_init "$SUITE"

log "apt-get update ($(cut -d" " -f2- "$APTDIR/sources.list"))"
apt-get -q "${APTOPTS[@]}" update >&2

# ---- newest linux-headers-*-amd64 ---------------------------------------
deps=$(apt-cache "${APTOPTS[@]}" depends linux-headers-$ARCH 2>/dev/null || true)
hdr=$(sed -n "s/^ *Depends: \(linux-headers-[0-9][^ ]*-$ARCH\)\$/\1/p;T;q" <<<"$deps")
if [ -z "$hdr" ]; then
	hdr=$(apt-cache "${APTOPTS[@]}" search --names-only "^linux-headers-[0-9].*-$ARCH\$" |
		awk '{print $1}' | grep -Ev -- '-(cloud|rt)-' | sort -V | tail -n1)
fi
[ -n "$hdr" ] || { log "no linux-headers-*-$ARCH in $SUITE"; exit 1; }
krel=${hdr#linux-headers-}
kdir=$ROOT/usr/src/$hdr
log "newest headers: $hdr ($(apt-cache "${APTOPTS[@]}" show --no-all-versions "$hdr" | sed -n 's/^Version: //p'))"

# (SYNCTCP_REFRESH) already unpacked and still the newest: nothing to do
if [ -f "$kdir/Makefile" ] && [ "$(cat "$ROOT/.synctcp-done" 2>/dev/null)" = "$hdr" ]; then
	echo "$kdir"
	exit 0
fi

# ---- dependency closure (empty status => everything the headers need) ---
mapfile -t pkgs < <(apt-get -s "${APTOPTS[@]}" --no-install-recommends \
	install "$hdr" 2>/dev/null | awk '/^Inst /{print $2}')
[ ${#pkgs[@]} -gt 0 ] || { log "could not resolve dependencies of $hdr"; exit 1; }
for want in "$hdr" "linux-headers-${krel%-$ARCH}-common"; do
	grep -qx -- "$want" <<<"$(printf '%s\n' "${pkgs[@]}")" || { log "$want missing from closure"; exit 1; }
done
grep -q '^linux-kbuild-' <<<"$(printf '%s\n' "${pkgs[@]}")" || { log "no linux-kbuild-* in closure"; exit 1; }
log "downloading ${#pkgs[@]} packages (headers, common, kbuild, compiler, pahole, libc ...)"
(cd "$APTDIR/debs" && rm -f ./*.deb && apt-get -q "${APTOPTS[@]}" download "${pkgs[@]}" >&2)

# ---- unpack into a fresh tree, then swap in atomically -------------------
tmp=$ROOT.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
log "unpacking into $ROOT"
for deb in "$APTDIR"/debs/*.deb; do
	dpkg-deb -x "$deb" "$tmp"
done

# Absolute symlinks -> the same path inside the tree (absolute, since the
# cache is not relocated; relative ones already stay inside).
while IFS= read -r -d '' l; do
	t=$(readlink "$l")
	case $t in /*) ln -sfn "$ROOT$t" "$l" ;; esac
done < <(find "$tmp" -type l -print0)

# Run the suite's binaries on the suite's own glibc: every dynamically linked
# executable moves to $ROOT/.elf/ and is replaced by a two-line sh wrapper
# that starts it through the suite's ld.so with the suite's library dirs
# (--argv0 keeps argv[0], which gcc, ld and the modpost/objtool dispatchers
# use to find their siblings).  Nothing leaks into child processes, so host
# programs keep the host's libc.  (patchelf --set-interpreter was tried
# first: it corrupts gcc-16's cc1, a 40 MB non-PIE executable -> SIGSEGV.)
libdirs=()
for d in usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib64 lib64; do
	if [ -d "$tmp/$d" ] && [ ! -L "$tmp/$d" ]; then libdirs+=("$ROOT/$d"); fi
done
ldso=
for d in usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib64 lib64; do
	if [ -f "$tmp/$d/ld-linux-x86-64.so.2" ] && [ ! -L "$tmp/$d/ld-linux-x86-64.so.2" ]; then
		ldso=$d/ld-linux-x86-64.so.2
		break
	fi
done
[ -n "$ldso" ] || { log "no ld-linux-x86-64.so.2 in the closure"; exit 1; }
libpath=$(IFS=:; echo "${libdirs[*]}")
if command -v readelf >/dev/null; then
	readelf=(readelf)
else
	readelf=("$tmp/$ldso" --library-path "${libpath//$ROOT/$tmp}" "$tmp/usr/bin/x86_64-linux-gnu-readelf")
fi
n=0
while IFS= read -r -d '' f; do
	[ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
	phdrs=$(LC_ALL=C "${readelf[@]}" -lW "$f" 2>/dev/null || true)
	[[ $phdrs == *'program interpreter'* ]] || continue
	rel=${f#"$tmp"/}
	mkdir -p "$tmp/.elf/${rel%/*}"
	mv "$f" "$tmp/.elf/$rel"
	printf '#!/bin/sh\n# fetch-headers.sh: %s binary on its own glibc\nexec "%s" --library-path "%s" --argv0 "$0" "%s" "$@"\n' \
		"$SUITE" "$ROOT/$ldso" "$libpath" "$ROOT/.elf/$rel" >"$f"
	chmod 755 "$f"
	n=$((n + 1))
done < <(find "$tmp/usr" -type f -perm /111 ! -name '*.so' ! -name '*.so.*' -print0)
log "wrapped $n executables to run on $ROOT/$ldso"

# gcc looks for `as' in its libexec dir before $PATH: give it the suite's
# binutils (Debian 12's as 2.40 lacks e.g. the .base64 directive gcc-15+ emits).
for d in "$tmp"/usr/libexec/gcc/x86_64-linux-gnu/*/; do
	[ -d "$d" ] || continue
	for t in as ld; do
		if [ -e "$tmp/usr/bin/x86_64-linux-gnu-$t" ] && [ ! -e "$d$t" ]; then
			ln -s "$ROOT/usr/bin/x86_64-linux-gnu-$t" "$d$t"
		fi
	done
done

# The amd64 Makefile names /usr/src/...-common (and KBUILD_OUTPUT) by absolute
# path: point it inside the tree.  .kernelvariables (read by the common
# Makefile after its defaults) selects the compiler the kernel was built with:
# make that the unpacked one, by absolute path, and pahole too.
mk=$tmp/usr/src/$hdr/Makefile
kv=$tmp/usr/src/$hdr/.kernelvariables
[ -f "$mk" ] || { log "$hdr has no Makefile"; exit 1; }
[ -f "$kv" ] || { log "$hdr has no .kernelvariables: unknown Debian layout"; exit 1; }
sed -i -E "s#(^|[[:space:]=])/usr/(src|lib)/#\\1$ROOT/usr/\\2/#g" "$mk"
cc=$(sed -n 's/^CC = .*(CROSS_COMPILE)\([^ ]*\)$/\1/p' "$kv")
[ -n "$cc" ] || cc=gcc
[ -x "$tmp/usr/bin/x86_64-linux-gnu-$cc" ] || { log "compiler x86_64-linux-gnu-$cc not in the closure"; exit 1; }
cat >>"$kv" <<EOF
# synctcp (scripts/fetch-headers.sh): use the toolchain unpacked from $SUITE
override CROSS_COMPILE = $ROOT/usr/bin/x86_64-linux-gnu-
PAHOLE = $ROOT/usr/bin/pahole
export PATH := $ROOT/usr/bin:\$(PATH)
EOF

echo "$hdr" >"$tmp/.synctcp-done"
echo "$kdir" >"$tmp/.synctcp-kdir"
# The tree was patched for its final path: move it there.
rm -rf "$ROOT.old"
if [ -e "$ROOT" ]; then mv "$ROOT" "$ROOT.old"; fi
mv "$tmp" "$ROOT"
rm -rf "$ROOT.old"
trap - EXIT
rm -f "$APTDIR"/debs/*.deb   # the unpacked tree is the cache
gcc_ver=$("$ROOT/usr/bin/x86_64-linux-gnu-$cc" --version | head -n1) ||
	{ log "unpacked compiler does not run"; exit 1; }
"$ROOT/usr/bin/pahole" --version >/dev/null || { log "unpacked pahole does not run"; exit 1; }
log "ready: $hdr, $gcc_ver"
echo "$kdir"
