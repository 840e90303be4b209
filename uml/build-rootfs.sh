#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The user space of the UML instances: a Debian 12 root built with
# mmdebstrap from pinned packages and pinned Python wheels, cached by the
# hash of what it is made of, like the kernels (docs/platform.md, "The
# instances' user space").
#
#   uml/build-rootfs.sh [--print | --key | --lock | --renew]
#
# Inputs, in uml/rootfs/:
#   packages         the Debian packages wanted
#   requirements.in  the Python packages wanted
#   debs.lock        every package of the image: name, version, architecture,
#                    SHA256 of its .deb and its path in the archive, and the
#                    SOURCE_DATE_EPOCH the image is stamped with
#   wheels.lock      every wheel: NAME==VERSION --hash=sha256:HEX (pip's format)
# KEY: the first 12 hex digits of the SHA256 of this script, debs.lock and
# wheels.lock (scripts/umlrun computes it the same way).
#
# The packages come from this machine's apt sources (the mirror must still
# have the locked versions; SYNCTCP_ROOTFS_SOURCES=FILE names other sources,
# e.g. snapshot.debian.org at the lock's date), with mmdebstrap
# --variant=custom and exactly the locked versions; every .deb must have the
# locked SHA256.  The wheels come through pip (this machine's pip
# configuration), --require-hashes.
#
# Output, in ~/.cache/synctcp/rootfs/ (SYNCTCP_CACHE):
#   KEY/root/          the tree scripts/umlrun boots (hostfs, read-only)
#   KEY/.done          build time and date, the content hash
#   KEY/manifest       a line per file: path, type, mode, owner, size, SHA256
#                      or link target (no times)
#   KEY/content.sha256 SHA256 of the manifest: two builds of one KEY that
#                      have the same one are the same tree
#   KEY/build.log
#   debs/, wheels/     downloads kept for the next build
# The three newest images are kept.
#
# Idempotent: with the image built it prints its root and nothing else.
# --print prints the root if built (exit 1 if not), --key the key; --lock
# resolves packages and requirements.in against the mirror's and the
# index's current versions and rewrites debs.lock and wheels.lock (a new
# KEY); --renew rewrites only the lines of debs.lock whose version the
# mirror no longer has (Debian's mirror keeps one version per suite: a
# point release or a security update drops the locked one, and a new
# machine, without the kept .debs, cannot build the image) with the
# mirror's version of the same package, and leaves every other package and
# every wheel as locked (a new KEY; the golden figures say whether the
# image's figures moved).  The last line on stdout is the root directory.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
inputs=$here/rootfs
cache=${SYNCTCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/synctcp}
store=$cache/rootfs
keep=3
log() { echo "build-rootfs: $*" >&2; }
die() { log "$*"; exit 1; }
usage() { echo "usage: uml/build-rootfs.sh [--print | --key | --lock | --renew]" >&2; exit 2; }

# the wheels are for the image's Python (3.11, glibc 2.36, x86_64), whatever
# Python runs pip here
pip_target=(--only-binary=:all: --python-version 3.11 --implementation cp --abi cp311)
for x in $(seq 36 -1 5); do pip_target+=(--platform "manylinux_2_${x}_x86_64"); done
pip_target+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64
	--platform manylinux1_x86_64 --platform linux_x86_64)

image_key() {
	cat "$self" "$inputs/debs.lock" "$inputs/wheels.lock" | sha256sum | cut -c1-12
}

# This machine's apt sources (never written into the repo), as a file in
# DIR: the deb822 files of sources.list.d together (an mmdebstrap root has
# 0000debian.sources), else sources.list.
apt_sources() {
	local out=$1/sources f
	if [ -n "${SYNCTCP_ROOTFS_SOURCES:-}" ]; then
		[ -f "$SYNCTCP_ROOTFS_SOURCES" ] || die "SYNCTCP_ROOTFS_SOURCES=$SYNCTCP_ROOTFS_SOURCES: no such file"
		cp "$SYNCTCP_ROOTFS_SOURCES" "$out"
	elif ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
		for f in /etc/apt/sources.list.d/*.sources; do cat "$f"; echo; done >"$out"
	elif grep -qE '^deb ' /etc/apt/sources.list 2>/dev/null; then
		cp /etc/apt/sources.list "$out"
	else
		die "no Debian sources in /etc/apt (sources.list.d/*.sources or sources.list)"
	fi
	echo "$out"
}

need_tools() {
	local t
	for t in mmdebstrap python3 sha256sum; do
		command -v "$t" >/dev/null || die "needs $t (make setup)"
	done
	python3 -m pip --version >/dev/null 2>&1 || die "needs pip for python3 (make setup: python3-pip)"
}

pip_() { python3 -m pip --disable-pip-version-check "$@"; }

# ---- hooks, run by mmdebstrap with the root as $1 --------------------------
# lock: what got installed, with each .deb's SHA256 and archive path
hook_lock() {
	local root=$1 out=$2 p v a
	dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Package}\t${Version}\t${Architecture}\n' |
		LC_ALL=C sort | while IFS=$'\t' read -r p v a; do
			APT_CONFIG=$MMDEBSTRAP_APT_CONFIG apt-cache show --no-all-versions "$p:$a=$v" |
				awk -v p="$p" -v v="$v" -v a="$a" '/^SHA256: / { h = $2 } /^Filename: / { f = $2 } END { if (h == "" || f == "") exit 1; print p, v, a, h, f }' ||
				{ echo "no SHA256 for $p $v" >&2; exit 1; }
		done >"$out"
}

# build: apt's cache starts with the locked .debs kept from earlier builds
hook_seed() {
	local root=$1 lock=$2 arch=$1/var/cache/apt/archives f h
	declare -A want
	while read -r _ _ _ h _; do want[$h]=1; done < <(grep -v '^#' "$lock")
	mkdir -p "$arch"
	for f in "$store"/debs/*.deb; do
		[ -f "$f" ] || continue
		h=$(sha256sum "$f" | cut -d' ' -f1)
		[ -z "${want[$h]:-}" ] || cp "$f" "$arch/"
	done
}

# build: the .debs are the locked ones; keep them for the next build
hook_debs() {
	local root=$1 lock=$2 arch=$1/var/cache/apt/archives f h n=0 bad=0
	declare -A want
	while read -r _ _ _ h _; do want[$h]=1; done < <(grep -v '^#' "$lock")
	for f in "$arch"/*.deb; do
		h=$(sha256sum "$f" | cut -d' ' -f1)
		if [ -z "${want[$h]:-}" ]; then
			echo "build-rootfs: $(basename "$f") is not the locked .deb (SHA256 $h)" >&2
			bad=1
		fi
		n=$((n + 1))
	done
	[ "$bad" = 0 ] || exit 1
	[ "$n" = "${#want[@]}" ] || { echo "build-rootfs: $n .debs downloaded, ${#want[@]} locked" >&2; exit 1; }
	mkdir -p "$store/debs"
	cp -n "$arch"/*.deb "$store/debs/"
	# the installed set is the locked set
	diff <(grep -v '^#' "$lock" | awk '{print $1, $2, $3}' | LC_ALL=C sort) \
		<(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Package} ${Version} ${Architecture}\n' |
			LC_ALL=C sort) >&2 || { echo "build-rootfs: the installed packages are not the locked ones" >&2; exit 1; }
}

# build: the wheels, the bytecode the instances load, the boot script
hook_python() {
	local root=$1 wheels=$2 sde=$3 pipwhl
	local env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 SOURCE_DATE_EPOCH="$sde" HOME=/root)
	mkdir -p "$root/tmp/wheels"
	cp "$wheels"/* "$root/tmp/wheels/"
	pipwhl=$(cd "$root/tmp/wheels" && ls pip-*.whl)
	# pip runs from its own wheel (Debian's python3 has no ensurepip)
	chroot "$root" "${env[@]}" python3 "/tmp/wheels/$pipwhl/pip" install -q --no-index \
		--find-links /tmp/wheels --require-hashes --no-deps --break-system-packages \
		--root-user-action=ignore --disable-pip-version-check --no-cache-dir \
		-r /tmp/wheels/wheels.lock
	rm -rf "$root/tmp/wheels"
	# Instances run with PYTHONPYCACHEPREFIX=/run/pycache, where /usr is this
	# tree (uml/init.sh): the image's own modules load bytecode compiled
	# here, never bytecode another Python wrote (docs/platform.md)
	chroot "$root" "${env[@]}" PYTHONPYCACHEPREFIX=/usr/lib/pycache python3 -m compileall -q \
		--invalidation-mode unchecked-hash /usr/lib/python3 /usr/lib/python3.11 \
		/usr/local/lib/python3.11 >/dev/null || true      # a few test files do not compile
	[ -f "$root/usr/lib/pycache/usr/lib/python3.11/os.cpython-311.pyc" ] ||
		{ echo "build-rootfs: the bytecode of the image's Python was not compiled" >&2; exit 1; }
	# the packages' own __pycache__ are never read (the prefix above is), and
	# which of them py3compile or an import wrote, timestamped or hashed,
	# varies from build to build
	find "$root/usr" -name __pycache__ -type d -prune -exec rm -rf {} +
	# openssh-server's postinst makes random host keys: another image every
	# build (the namespace hosts of remote/lab.py bring their own)
	rm -f "$root"/etc/ssh/ssh_host_*_key "$root"/etc/ssh/ssh_host_*_key.pub
	# PID 1 of an instance: mounts the repository's uml/ and runs its init.sh
	# (the image does not know where the repository is; scripts/umlrun does)
	mkdir -p "$root/usr/lib/synctcp" "$root/usr/lib/modules"
	cat >"$root/usr/lib/synctcp/boot" <<'BOOT'
#!/bin/sh
# PID 1 of a UML instance on this image (scripts/umlrun):
#   init=/usr/lib/synctcp/boot -- INITDIR RUNDIR
# mounts the host's INITDIR (the repository's uml/) and runs its init.sh.
mount -n -t tmpfs -o mode=755 boot /run || exit 1
mkdir /run/init || exit 1
mount -n -r -t hostfs -o "$1" hostfs /run/init || exit 1
exec /bin/sh /run/init/init.sh "$2" image
BOOT
	chmod 755 "$root/usr/lib/synctcp/boot"
	# init.sh starts the command at this absolute simulated time, whatever
	# its own steps cost (their clock reads depend on the host's paths)
	cat >"$root/usr/lib/synctcp/sleep-until.c" <<'SRC'
/* sleep-until SECONDS: sleep until CLOCK_MONOTONIC reads SECONDS (uml/init.sh) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec t;
	char *end;
	double s;
	int err;

	if (argc != 2 || (s = strtod(argv[1], &end)) < 0 || *end) {
		fprintf(stderr, "usage: sleep-until SECONDS\n");
		return 2;
	}
	t.tv_sec = (time_t)s;
	t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
	while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL)) == EINTR)
		;
	return err ? 1 : 0;
}
SRC
	chroot "$root" "${env[@]}" gcc -O2 -Wall -Wextra -o /usr/lib/synctcp/sleep-until \
		/usr/lib/synctcp/sleep-until.c
	echo uml >"$root/etc/hostname"
	printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
	: >"$root/etc/resolv.conf"
	rm -f "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old
}

# ---- the manifest: what the tree is, without times ------------------------
write_manifest() {
	python3 - "$1" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1]
lines = []
for dirpath, dirs, files in os.walk(root):
    dirs.sort()
    for name in sorted(dirs + files):
        p = os.path.join(dirpath, name)
        st = os.lstat(p)
        rel = "/" + os.path.relpath(p, root)
        kind = stat.S_IFMT(st.st_mode)
        what = ""
        if stat.S_ISREG(st.st_mode):
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            what = f"{st.st_size} {h.hexdigest()}"
        elif stat.S_ISLNK(st.st_mode):
            what = "-> " + os.readlink(p)
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            what = f"{os.major(st.st_rdev)},{os.minor(st.st_rdev)}"
        lines.append(f"{rel}\t{kind:o}\t{stat.S_IMODE(st.st_mode):o}\t{st.st_uid}:{st.st_gid}\t{what}")
lines.sort()
sys.stdout.write("".join(l + "\n" for l in lines))
EOF
}

# ---- --lock: the current versions ------------------------------------------
lock() {
	need_tools
	local srcfile includes now sde mm=()
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-rootfs.XXXXXX")     # global: the trap needs it
	trap 'rm -rf "$tmp"' EXIT
	srcfile=$(apt_sources "$tmp")
	cat /etc/apt/apt.conf.d/* 2>/dev/null | grep -E '^Acquire::' >"$tmp/aptopts" || true
	[ ! -s "$tmp/aptopts" ] || mm=(--aptopt="$tmp/aptopts")
	includes=$(sed 's/#.*//' "$inputs/packages" | xargs | tr ' ' ',')
	now=$(date -u +%Y%m%dT%H%M%SZ)
	sde=$(date -u -d "$(date -u +%F)" +%s)      # the day of the lock
	log "resolving $includes"
	mmdebstrap bookworm "$tmp/root" "$srcfile" --quiet --variant=essential --include="$includes" \
		"${mm[@]}" --customize-hook="\"$self\" --hook lock \"\$1\" \"$tmp/debs\"" ||
		die "mmdebstrap failed"
	{
		echo "# uml/build-rootfs.sh --lock, $now, from $(grep -hoE '(URIs:|^deb) *[^ ]+' "$srcfile" | awk '{print $NF}' | sort -u | xargs)"
		echo "# the same versions later: snapshot.debian.org/archive/debian/$now and debian-security/$now"
		echo "# SOURCE_DATE_EPOCH: $sde"
		echo "# package version architecture sha256 filename"
		cat "$tmp/debs"
	} >"$inputs/debs.lock"
	log "resolving the wheels of requirements.in"
	pip_ download -q -d "$tmp/wheels" "${pip_target[@]}" -r "$inputs/requirements.in" ||
		die "pip download failed"
	{
		echo "# uml/build-rootfs.sh --lock, $now: pip install --require-hashes --no-deps -r wheels.lock"
		for w in "$tmp"/wheels/*; do
			case $w in *.whl) ;; *) die "not a wheel: $(basename "$w")" ;; esac
			local base name version
			base=$(basename "$w" .whl)
			name=$(echo "${base%%-*}" | tr 'A-Z_.' 'a-z--')
			version=$(echo "$base" | cut -d- -f2)
			echo "$name==$version --hash=sha256:$(sha256sum "$w" | cut -d' ' -f1)"
		done | LC_ALL=C sort
	} >"$inputs/wheels.lock"
	log "$(grep -vc '^#' "$inputs/debs.lock") packages, $(grep -vc '^#' "$inputs/wheels.lock") wheels; key $(image_key)"
}

# ---- the mirror's versions --------------------------------------------------
# The lines of debs.lock whose version the mirror no longer has, to
# stdout; apt with a private state (scripts/private-apt.sh) over this
# machine's sources (apt_sources, written into DIR), APTOPTS left set.
# Every version in the mirror's Packages lists counts (apt-cache dumpavail
# has only each package's candidate).
dropped_lines() {
	local dir=$1
	# shellcheck source=../scripts/private-apt.sh
	. "$here/../scripts/private-apt.sh"
	private_apt_init rootfs-mirror "$(apt_sources "$dir")"
	apt-get -q "${APTOPTS[@]}" update >"$dir/update.log" 2>&1 ||
		{ tail -3 "$dir/update.log" >&2; die "apt-get update of this machine's sources failed"; }
	apt-get "${APTOPTS[@]}" indextargets --format '$(FILENAME)' 'Identifier: Packages' |
		xargs -r /usr/lib/apt/apt-helper "${APTOPTS[@]}" cat-file |
		awk '/^Package: / { p = $2 } /^Version: / { v = $2 } /^Architecture: / { a = $2 } /^$/ { if (p != "") print p, v, a; p = "" }' >"$dir/avail"
	[ -s "$dir/avail" ] || die "the mirror's package lists are empty (apt-get update: $dir/update.log)"
	awk 'NR == FNR { have[$1 " " $2 " " $3]; next } !/^#/ && !(($1 " " $2 " " $3) in have)' "$dir/avail" "$inputs/debs.lock"
}

# ---- --renew: the locked versions the mirror dropped -----------------------
# each dropped line becomes the mirror's version, SHA256 and path of the
# same package; a header line after SOURCE_DATE_EPOCH names the day
renew() {
	local p v a h f line n
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-rootfs.XXXXXX")     # global: the trap needs it
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$store"
	exec 8>"$store/.build.lock"
	flock 8
	dropped_lines "$tmp" >"$tmp/dropped"
	n=$(wc -l <"$tmp/dropped")
	if [ "$n" = 0 ]; then
		log "every locked version is on the mirror; debs.lock unchanged (key $(image_key))"
		return 0
	fi
	while IFS= read -r line; do
		if ! grep -qxF "$line" "$tmp/dropped"; then
			echo "$line"
			continue
		fi
		read -r p v a h f <<<"$line"
		apt-cache "${APTOPTS[@]}" show --no-all-versions "$p:$a" 2>/dev/null |
			awk -v p="$p" -v a="$a" '/^Version: / { v = $2 } /^SHA256: / { h = $2 } /^Filename: / { f = $2 } END { if (v == "" || h == "" || f == "") exit 1; print p, v, a, h, f }' >"$tmp/line" ||
			die "$p ($a) is not on the mirror at all: uml/build-rootfs.sh --lock"
		log "$p $v -> $(cut -d' ' -f2 "$tmp/line")"
		cat "$tmp/line"
	done <"$inputs/debs.lock" >"$tmp/debs.lock"
	# (each awk program on one line: tests/unit/test_setup_commands.py reads
	# quoted text line by line)
	awk -v now="$(date -u +%Y%m%dT%H%M%SZ)" -v n="$n" '/^# uml\/build-rootfs.sh --renew/ { next } { print } /^# SOURCE_DATE_EPOCH: / { print "# uml/build-rootfs.sh --renew, " now ": " n " package(s) the mirror no longer had at their locked version, at its version of that day" }' "$tmp/debs.lock" >"$inputs/debs.lock"
	log "$n package(s) renewed; key $(image_key)"
}

# Before mmdebstrap, whose error does not say it: the locked versions
# neither kept from an earlier build nor on the mirror any more, one line
missing_locked() {
	local dir=$1 p v a h f gone=() kept
	kept=$(for f in "$store"/debs/*.deb; do [ ! -f "$f" ] || sha256sum "$f"; done | cut -d' ' -f1)
	grep -v '^#' "$inputs/debs.lock" | awk '{print $4}' | grep -qvxF -e "${kept:-none}" || return 0
	dropped_lines "$dir" >"$dir/dropped"       # not in a subshell: its die ends the build
	while read -r p v a h f; do
		grep -qxF "$h" <<<"$kept" || gone+=("$p=$v")
	done <"$dir/dropped"
	[ "${#gone[@]}" = 0 ] ||
		die "${#gone[@]} locked version(s) no longer on the mirror ($(IFS=,; echo "${gone[*]:0:3}")$([ "${#gone[@]}" -le 3 ] || echo ",...")): uml/build-rootfs.sh --renew, or SYNCTCP_ROOTFS_SOURCES naming snapshot.debian.org at the lock's date (docs/platform.md)"
}

# ---- the build --------------------------------------------------------------
build() {
	local key=$1 dir=$store/$1 new tmp srcfile sde pkgs start secs mm=()
	need_tools
	sde=$(sed -n 's/^# SOURCE_DATE_EPOCH: \([0-9]*\)$/\1/p' "$inputs/debs.lock")
	[ -n "$sde" ] || die "uml/rootfs/debs.lock has no SOURCE_DATE_EPOCH line"
	start=$(date +%s)
	new=$store/.new-$key
	rm -rf "$new"
	mkdir -p "$new" "$store/wheels"
	tmp=$new/tmp
	mkdir -p "$tmp/wheels"
	missing_locked "$tmp"
	srcfile=$(apt_sources "$tmp")
	log "building the instances' user space $key (log: $dir/build.log)"
	# the wheels: pip checks every hash; the locked files, by their hash
	pip_ download -q --no-deps --require-hashes -d "$store/wheels" "${pip_target[@]}" \
		-r "$inputs/wheels.lock" >>"$new/build.log" 2>&1 ||
		{ tail -5 "$new/build.log" >&2; die "pip download of uml/rootfs/wheels.lock failed"; }
	python3 - "$inputs/wheels.lock" "$store/wheels" "$tmp/wheels" <<'EOF' || die "a locked wheel is missing"
import hashlib, os, re, shutil, sys
lock, src, dst = sys.argv[1:]
want = set(re.findall(r"--hash=sha256:([0-9a-f]{64})", open(lock).read()))
for name in sorted(os.listdir(src)):
    h = hashlib.sha256(open(os.path.join(src, name), "rb").read()).hexdigest()
    if h in want:
        shutil.copy(os.path.join(src, name), dst)
        want.discard(h)
if want:
    sys.exit(f"build-rootfs: no wheel with SHA256 {sorted(want)[0]} in {src}")
EOF
	cp "$inputs/wheels.lock" "$tmp/wheels/"
	cat /etc/apt/apt.conf.d/* 2>/dev/null | grep -E '^Acquire::' >"$tmp/aptopts" || true
	[ ! -s "$tmp/aptopts" ] || mm=(--aptopt="$tmp/aptopts")
	pkgs=$(grep -v '^#' "$inputs/debs.lock" | awk '{printf "%s%s:%s=%s", (NR > 1 ? "," : ""), $1, $3, $2}')
	mkdir -p "$store/debs"
	# debs of earlier builds seed apt's cache (apt checks their hashes)
	if ! SOURCE_DATE_EPOCH=$sde mmdebstrap bookworm "$new/root" "$srcfile" --quiet \
		--variant=custom --include="$pkgs" "${mm[@]}" \
		--skip=essential/unlink \
		--setup-hook="\"$self\" --hook seed \"\$1\" \"$inputs/debs.lock\"" \
		--customize-hook="\"$self\" --hook debs \"\$1\" \"$inputs/debs.lock\"" \
		--customize-hook="\"$self\" --hook python \"\$1\" \"$tmp/wheels\" $sde" \
		>>"$new/build.log" 2>&1; then
		grep -E 'E: |rror|not the locked|build-rootfs:' "$new/build.log" | head -10 >&2
		die "mmdebstrap failed (log: $new/build.log); a locked version no longer on the mirror: SYNCTCP_ROOTFS_SOURCES (snapshot.debian.org at the lock's date) or uml/build-rootfs.sh --renew"
	fi
	rm -rf "$tmp"
	# every time the clamp of SOURCE_DATE_EPOCH: the tree's times are the lock's
	find "$new/root" -newermt "@$sde" -print0 | xargs -0 -r touch -h -d "@$sde"
	write_manifest "$new/root" >"$new/manifest"
	sha256sum <"$new/manifest" | cut -d' ' -f1 >"$new/content.sha256"
	secs=$(($(date +%s) - start))
	echo "built in $secs s on $(date -u +%FT%TZ), $(du -sm "$new/root" | cut -f1) MB, content $(cat "$new/content.sha256")" >"$new/.done"
	rm -rf "$dir"
	mv "$new" "$dir"
	log "built in $secs s: $dir/root (content $(cut -c1-12 "$dir/content.sha256"))"
	# the newest images stay
	ls -1dt "$store"/*/.done 2>/dev/null | tail -n +$((keep + 1)) | while read -r old; do
		rm -rf "$(dirname "$old")"
	done
}

# ---- main -------------------------------------------------------------------
if [ "${1:-}" = --hook ]; then
	shift
	case $1 in
	lock) hook_lock "$2" "$3" ;;
	seed) hook_seed "$2" "$3" ;;
	debs) hook_debs "$2" "$3" ;;
	python) hook_python "$2" "$3" "$4" ;;
	*) exit 2 ;;
	esac
	exit 0
fi
mode=build
case ${1:-} in
"") ;;
--print) mode=print ;;
--key) mode=key ;;
--lock) mode=lock ;;
--renew) mode=renew ;;
-h|--help) sed -n '3,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
*) usage ;;
esac
[ $# -le 1 ] || usage
if [ "$mode" != lock ] && ! { [ -f "$inputs/debs.lock" ] && [ -f "$inputs/wheels.lock" ]; }; then
	die "no uml/rootfs/debs.lock or wheels.lock: uml/build-rootfs.sh --lock"
fi
case $mode in
key) image_key; exit 0 ;;
lock) lock; exit 0 ;;
renew) renew; exit 0 ;;
esac
key=$(image_key)
if [ -f "$store/$key/.done" ]; then
	echo "$store/$key/root"
	exit 0
fi
[ "$mode" = print ] && { log "not built: uml/build-rootfs.sh"; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap makes the image's files root's)"
mkdir -p "$store"
exec 8>"$store/.build.lock"
flock 8
[ -f "$store/$key/.done" ] || build "$key"
echo "$store/$key/root"
