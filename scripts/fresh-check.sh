#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README's commands on a pristine Debian 12, as a newcomer runs them.
#
#   scripts/fresh-check.sh [--full|--short] [--out DIR] [--keep] [--rebuild]
#
# A minbase bookworm root (mmdebstrap, from this machine's own apt sources,
# cached as a tarball in ~/.cache/synctcp/fresh/, keyed by those sources)
# is unpacked afresh for every run, a clean clone of this repository's HEAD
# is copied to /root/synctcp in it, and the steps run there as root in a
# chroot with its own mount and PID namespaces (/proc, /sys, /dev, /run as
# a booted machine has them; every process of the run ends with it).  Only
# what a new machine of this workplace has is copied in: the CA bundle,
# the pip configuration, resolv.conf.
#
#   --full   (make fresh-check) the README's prerequisite line, then
#            `make demo` and `make test` in full, with nothing cached:
#            downloads and the patched test kernel start cold (about 1.5 h
#            on 2 cores).
#   --short  (make fresh-check-short, run by CI after make test) the
#            prerequisite line, `make setup`, `make demo` (its table is the
#            development machine's to the last digit: docs/platform.md), `make modules`,
#            the golden figures (`make golden-test`: the same figures to the
#            last digit as on the machine that committed them), the C and
#            Python unit tests (among them the commands check of
#            tests/unit/test_setup_commands.py) with the root's own Python
#            and environment, and a smoke subset of the kernel tests in the
#            VM (ping, topologies, module loading, the documented commands);
#            downloaded .debs and wheels (the project's and the UML image's)
#            are kept between runs, not the installs.
#
# Each step's exit code and wall time go to OUT/summary.txt and
# OUT/summary.json (default OUT: results/fresh-check-FORM), its output to
# OUT/NN-step.log; on a failure the lines that name a missing command,
# file or package are printed.  Exit status: 0 when every step passed,
# 1 when one failed (later steps are not run), 2 on a usage or setup error.
# The whole script is one brace group, read before it runs: bash reads a
# script as it goes, and a checkout edited during the hour and a half a
# full check takes would otherwise run half of each version.
{
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SYNCTCP_CACHE:-$HOME/.cache/synctcp}/fresh
form=full out="" keep=0 rebuild=0
die() { echo "fresh-check: $*" >&2; exit 2; }
usage() { sed -n '3,4p' "$0" | sed 's/^# *//' >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--full) form=full; shift ;;
	--short) form=short; shift ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--keep) keep=1; shift ;;
	--rebuild) rebuild=1; shift ;;
	-h|--help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fresh-check: unknown option $1" >&2; usage ;;
	esac
done
[ "$(id -u)" = 0 ] || die "needs root (a chroot with its own namespaces)"
out=${out:-$here/results/fresh-check-$form}
git -C "$here" rev-parse --verify -q HEAD >/dev/null || die "$here is not a git checkout with a commit"

# ---- the tools of the check itself (not of the project) -------------------
need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v unshare >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
	echo "fresh-check: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# ---- the pristine root, cached --------------------------------------------
# This machine's apt sources and apt options (never written into the repo):
# the new root reaches the same mirror the same way.
aptopts=$(mktemp)
trap 'rm -f "$aptopts"' EXIT
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	srcfile=/etc/apt/sources.list.d/debian.sources
elif grep -qE '^deb ' /etc/apt/sources.list 2>/dev/null; then
	srcfile=/etc/apt/sources.list
else
	die "no Debian sources in /etc/apt (sources.list.d/debian.sources or sources.list)"
fi
cat /etc/apt/apt.conf.d/* 2>/dev/null | grep -E '^Acquire::' >"$aptopts" || true
key=$( (echo minbase-bookworm-1; cat "$srcfile" "$aptopts") | sha256sum | cut -c1-12)
tarball=$cache/bookworm-minbase-$key.tar
mkdir -p "$cache"
if [ ! -s "$tarball" ] || [ "$rebuild" = 1 ]; then
	echo "fresh-check: building a pristine bookworm root (mmdebstrap --variant=minbase)"
	mmopt=()
	[ ! -s "$aptopts" ] || mmopt=(--aptopt="$aptopts")
	mmdebstrap --quiet --variant=minbase "${mmopt[@]}" bookworm "$cache/.new-$key.tar" "$srcfile" ||
		die "mmdebstrap failed"
	mv "$cache/.new-$key.tar" "$tarball"
	for old in "$cache"/bookworm-minbase-*.tar; do [ "$old" = "$tarball" ] || rm -f "$old"; done
fi

# ---- a fresh copy of it, with the project and the machine's CA and pip config
work=$(mktemp -d /var/tmp/synctcp-fresh.XXXXXX)
root=$work/root
cleanup() {
	rm -f "$aptopts"
	if [ "$keep" = 1 ]; then echo "fresh-check: kept $root"; else rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT
mkdir -p "$root"
tar -xf "$tarball" -C "$root"
git clone -q --no-hardlinks "$here" "$root/root/synctcp"
git -C "$root/root/synctcp" remote remove origin
rev=$(git -C "$here" rev-parse --short HEAD)
dirty=$(git -C "$here" status --porcelain --untracked-files=no | wc -l)
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/etc/ssl/certs" "$root/usr/local/share/ca-certificates"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
# local CAs survive the root's own update-ca-certificates (ca-certificates)
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
[ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$root/etc/pip.conf"

# downloads kept between short runs (the installs themselves are not)
binds=()
if [ "$form" = short ]; then
	mkdir -p "$cache/apt-archives/partial" "$cache/pip" "$cache/ccache" "$cache/rootfs-debs"
	# and the compiler cache: the demo builds the UML kernel (docs/platform.md);
	# and the .debs of the UML image (uml/build-rootfs.sh), which it builds too
	binds=("$cache/apt-archives:/var/cache/apt/archives" "$cache/pip:/root/.cache/pip"
		"$cache/ccache:/root/.cache/synctcp/ccache"
		"$cache/rootfs-debs:/root/.cache/synctcp/rootfs/debs")
	# apt deletes the .debs it installed unless told to keep them
	echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$root/etc/apt/apt.conf.d/90keep"
	rm -f "$root/etc/apt/apt.conf.d/docker-clean"
fi

# ---- the steps ------------------------------------------------------------
prereq='apt-get update -qq && apt-get install -y -qq git make >/dev/null'
steps=("prereq|$prereq")
if [ "$form" = full ]; then
	steps+=("make-demo|make demo" "make-test|make test")
else
	smoke='ping or dumbbell or loads or registers or docs'
	steps+=("make-setup|make setup"
		"make-demo|make demo"
		"make-modules|make modules"
		"golden|make golden-test"
		"unit-tests|SYNCTCP_FRESH_ROOT=1 make unit pytest-unit"
		"kernel-smoke|. .venv/bin/activate && scripts/vmrun --vm .venv/bin/python3 -m pytest -q -p no:cacheprovider tests/kernel -k '$smoke'")
fi

# One step in the root: its own mount and PID namespaces, a clean
# environment as a login on a new machine has it.
run_in_root() {
	local b mounts=""
	printf 'cd /root/synctcp\n%s\n' "$1" >"$root/root/.fresh-step"
	for b in "${binds[@]}"; do
		mounts+="mkdir -p '$root${b#*:}'; mount --bind '${b%%:*}' '$root${b#*:}'; "
	done
	# pivot_root, not chroot: a chrooted process may not create user
	# namespaces (unshare(2): EPERM), which umlrun's unprivileged UML needs;
	# a machine's own root is the root of its mount namespace
	unshare --mount --pid --fork --propagation private bash -c "
		set -e
		mount --bind '$root' '$root'
		mount -t proc proc '$root/proc'
		mount --rbind /sys '$root/sys'
		mount --rbind /dev '$root/dev'
		mount -t tmpfs -o mode=755 tmpfs '$root/run'
		mkdir -p '$root/run/lock'
		mountpoint -q '$root/dev/shm' || { mkdir -p '$root/dev/shm'; mount -t tmpfs -o mode=1777 tmpfs '$root/dev/shm'; }
		$mounts
		cd '$root'
		mkdir -p .fresh-oldroot
		pivot_root . .fresh-oldroot
		cd /
		umount -l /.fresh-oldroot
		rmdir /.fresh-oldroot
		exec /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			${CI:+CI=$CI} bash /root/.fresh-step
	"
}

# The commands a failed step's log says it could not find, and the package
# that has each on this machine (which has more installed than the root).
missing_packages() {
	local c path pkg real
	grep -aoE "(bash: |sh: [0-9]+: )[A-Za-z0-9_.+-]+: (command )?not found|No such file or directory: '[A-Za-z0-9_.+-]+'|needs [a-z][A-Za-z0-9_.+-]+ \(make setup\)" "$1" |
		sed -E "s/^(bash|sh: [0-9]+): ([^:]+):.*/\2/; s/.*directory: '([^']+)'/\1/; s/^needs ([^ ]+) .*/\1/" |
		sort -u | head -10 | while read -r c; do
			path=$(command -v "$c" 2>/dev/null || true)
			pkg=
			if [ -n "$path" ]; then      # usrmerge: /usr/bin/x may be packaged as /bin/x
				real=$(readlink -f "$path")
				pkg=$(dpkg -S "$real" "${real#/usr}" 2>/dev/null | grep -v '^diversion' | cut -d: -f1 | head -n1 || true)
			fi
			echo "  missing command: $c${pkg:+ (package $pkg on this machine: add it to scripts/setup.sh)}"
		done
}

mkdir -p "$out"
rm -f "$out"/*.log "$out"/summary.*
echo "fresh-check ($form): $(basename "$tarball"), synctcp $rev$([ "$dirty" = 0 ] || echo " (HEAD; $dirty uncommitted changes not included)")"
json="" failed="" n=0 total0=$(date +%s)
for s in "${steps[@]}"; do
	name=${s%%|*} cmd=${s#*|}
	n=$((n + 1))
	log=$(printf '%s/%02d-%s.log' "$out" "$n" "$name")
	t0=$(date +%s)
	set +e
	# through a pipe: qemu reopens /proc/self/fd/1 by name, which would
	# truncate a log file and lose what the step printed before the VM
	run_in_root "$cmd" 2>&1 | cat >"$log"
	rc=${PIPESTATUS[0]}
	set -e
	secs=$(($(date +%s) - t0))
	printf '  %-13s exit %-3s %6s s   %s\n' "$name" "$rc" "$secs" "$cmd" | tee -a "$out/summary.txt"
	qcmd=${cmd//\\/\\\\}
	json+="${json:+,}{\"step\":\"$name\",\"command\":\"${qcmd//\"/\\\"}\",\"exit\":$rc,\"seconds\":$secs}"
	if [ "$rc" != 0 ]; then
		failed=$name
		echo "fresh-check: '$cmd' failed with exit $rc (log: $log); what it was missing:" >&2
		grep -aiE 'command not found|not found|no such file|could not be found|please install|unable to locate|needs [a-z]|no module named|E: ' "$log" |
			grep -av '^\s*$' | sort -u | head -15 | sed 's/^/    /' >&2 || true
		missing_packages "$log" >&2
		echo "  last lines:" >&2
		tail -n 15 "$log" | sed 's/^/    /' >&2
		break
	fi
done
total=$(($(date +%s) - total0))
du_root=$(du -sxm "$root" 2>/dev/null | cut -f1)
printf '{"form":"%s","revision":"%s","tarball":"%s","steps":[%s],"failed":%s,"seconds":%s,"root_mb":%s}\n' \
	"$form" "$rev" "$(basename "$tarball")" "$json" "$([ -n "$failed" ] && echo "\"$failed\"" || echo null)" \
	"$total" "${du_root:-null}" >"$out/summary.json"
if [ -n "$failed" ]; then
	echo "fresh-check ($form): FAILED at $failed after $total s"
	exit 1
fi
echo "fresh-check ($form): all $n steps passed in $total s; the root grew to ${du_root} MB (summary: $out/summary.txt)"
exit
}
