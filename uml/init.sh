#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a User-Mode Linux instance started by scripts/umlrun:
#
#   init=/REPO/uml/init.sh -- RUNDIR                  (the host's user space)
#   init=/usr/lib/synctcp/boot -- /REPO/uml RUNDIR    (an image's)
#
# The root filesystem is, through hostfs and read-only, the host's / or an
# image of uml/build-rootfs.sh, whose /usr/lib/synctcp/boot mounts the
# repository's uml/ and runs this script as "init.sh RUNDIR image".  On an
# image the root becomes RUNDIR/root, a skeleton of the image's top level
# with the image's usr, etc, var and opt bound in (read-only) and the host
# directories below at their host paths; this script pivots into it.
# RUNDIR (written by umlrun) holds:
#   rw       the directories to mount writable (host paths), one a line
#   ro       optional: host directories to mount read-only (on an image)
#   root/    on an image: the new root's skeleton
#   job.sh   the command: cd, exports, exec
#   kmod     optional: "UMLKO REPOKO" pairs, UML builds bind-mounted over
#            the repository's Debian .ko files (inside this instance only)
#   modules  optional: the UML kernel's /lib/modules tree
#   repo     on an image: "HOSTPATH INSIDE", the repository also seen at
#            INSIDE (its mount point in root/), where job.sh names it
# It writes RUNDIR/dmesg.txt and reports on /dev/ttyS2 (a pipe to umlrun):
#   "start UPTIME" when the command starts, "end STATUS UPTIME" after.
# The command's stdout is /dev/ttyS0, its stderr /dev/ttyS1 (umlrun's own
# stdout and stderr), through a pipe where umlrun's are not terminals
# (RUNDIR/stdio: "tty" or "pipe" for each); this script's output goes to the
# console log.
#
# Each process costs host time (UML intercepts their system calls), so this
# script uses few; it must never busy-wait (simulated time would stop).

run=$1
rootfs=${2:-host}
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
ctl=/dev/ttyS2

fail() {
	echo "uml-init: $*" >&2
	[ -c "$ctl" ] && echo "end 125 0" >"$ctl"
	poweroff_now
}

poweroff_now() {
	sync
	[ -e /proc/sysrq-trigger ] || mount -n -t proc proc /proc
	echo o >/proc/sysrq-trigger
	# sysrq-o powers off from a work queue: wait for it without spinning
	while :; do sleep 1; done
}

mount -n -t proc proc /proc || fail "cannot mount /proc"
# CONFIG_DEVTMPFS_MOUNT mounts /dev for block-device roots only; an image
# always gets the kernel's devices, not the image's few static nodes
if [ "$rootfs" = image ]; then
	mountpoint -q /dev || mount -n -t devtmpfs devtmpfs /dev || fail "cannot mount /dev"
elif ! [ -c /dev/null ]; then
	mount -n -t devtmpfs devtmpfs /dev || fail "cannot mount /dev"
fi

# read the run directory's lists now: the tmpfs mounts below may hide it
# (a repository under /tmp) until its writable mount is in place; on an
# image it is not visible at all before its own mount
lists=$run
if [ "$rootfs" = image ]; then
	lists=/run/rundir
	mkdir -p "$lists" && mount -n -r -t hostfs -o "$run" hostfs "$lists" ||
		fail "cannot mount the run directory $run"
fi
rw=$(cat "$lists/rw") || fail "cannot read $run/rw"
ro=
[ -f "$lists/ro" ] && ro=$(cat "$lists/ro")
mods=
[ -f "$lists/modules" ] && IFS= read -r mods <"$lists/modules"
kmods=
[ -f "$lists/kmod" ] && kmods=$(cat "$lists/kmod")
repo_host= repo_at=
[ "$rootfs" = image ] && [ -f "$lists/repo" ] && read -r repo_host repo_at <"$lists/repo"
out_kind=tty err_kind=tty
[ -f "$lists/stdio" ] && read -r out_kind err_kind <"$lists/stdio"

# The host directories, each its own hostfs mount at its host path below
# $1, writable (rw) or not (ro); mkdir: a directory under /tmp needs its
# mount point in the new tmpfs.
mount_host_dirs() {
	while read -r mode dir; do
		[ -n "$dir" ] || continue
		[ -d "$1$dir" ] || mkdir -p "$1$dir" || fail "no mount point for $dir"
		if [ "$mode" = rw ]; then
			mount -n -t hostfs -o "$dir" hostfs "$1$dir" || fail "cannot mount $dir writable"
		else
			mount -n -r -t hostfs -o "$dir" hostfs "$1$dir" || fail "cannot mount $dir"
		fi
	done <<-EOF
	$(printf '%s\n' "$rw" | sed 's/^/rw /'; printf '%s\n' "$ro" | sed 's/^/ro /')
	EOF
}

# An image's root: RUNDIR/root, the skeleton umlrun made on the host (the
# image's top-level links and directories, the host directories' mount
# points: made there, not in a tmpfs here, whose every new inode takes a
# random number and would make the kernel's random numbers depend on the
# host's paths), with the image's usr, etc, var and opt bound in
if [ "$rootfs" = image ]; then
	umount -n "$lists"
	new=/mnt
	mount -n -r -t hostfs -o "$run/root" hostfs "$new" || fail "cannot mount $run/root"
	for name in usr etc var opt; do
		[ -d "/$name" ] || continue
		mount -n --bind "/$name" "$new/$name" && mount -n -o remount,bind,ro "$new/$name" ||
			fail "cannot mount the image's /$name"
	done
	mount -n -t tmpfs -o mode=755,nosuid,nodev run "$new/run"
	mkdir -p "$new/run/netns" "$new/run/lock" "$new/run/mount"
	mount -n -t tmpfs -o mode=1777,nosuid,nodev tmp "$new/tmp"
	mount -n -t tmpfs -o mode=1777,nosuid,nodev vartmp "$new/var/tmp"
	mount_host_dirs "$new"
	mount -n --move /proc "$new/proc" && mount -n --move /dev "$new/dev" ||
		fail "cannot move /proc and /dev"
	cd "$new" && pivot_root . .oldroot || fail "cannot pivot into the new root"
	cd /
	umount -n -l /.oldroot
fi
mount -n -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -n -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -n -t tmpfs -o mode=1777,nosuid,nodev shm /dev/shm
# devtmpfs lacks these links (bash process substitution needs /dev/fd)
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
[ -c "$ctl" ] || fail "no $ctl"
stty -F /dev/ttyS0 raw -echo
stty -F /dev/ttyS1 raw -echo
stty -F "$ctl" raw -echo
if [ "$rootfs" != image ]; then
	mount -n -t tmpfs -o mode=755,nosuid,nodev run /run
	mkdir -p /run/netns /run/lock /run/mount
	mount -n -t tmpfs -o mode=1777,nosuid,nodev tmp /tmp
	mount -n -t tmpfs -o mode=1777,nosuid,nodev vartmp /var/tmp
fi
[ -d /sys/fs/cgroup ] && mount -n -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

[ "$rootfs" = image ] || mount_host_dirs ""
# An image's Python loads the bytecode compiled with it (umlrun sets
# PYTHONPYCACHEPREFIX=/run/pycache there): the image's own, and the
# repository's compiled afresh in each instance, never a .pyc file another
# Python wrote (docs/platform.md, "The instances' user space")
if [ "$rootfs" = image ] && [ -d /usr/lib/pycache/usr ]; then
	mkdir -p /run/pycache/usr
	mount -n --bind /usr/lib/pycache/usr /run/pycache/usr &&
		mount -n -o remount,bind,ro /run/pycache/usr
fi
# the UML kernel's modules where modprobe looks for them
[ -n "$mods" ] && [ -d "$mods" ] && mount -n --bind "$mods" /lib/modules
# kmod/*.ko of the repository are the Debian kernel's: the UML builds over
# them.  On an image one mount for each UML build, failing where the
# repository has no .ko (make modules): every process takes random numbers
# (stack canary, address-space layout), and their count before the command
# must not depend on what the host built
while read -r uko rko; do
	if [ "$rootfs" = image ]; then
		[ -n "$uko" ] && mount -n --bind "$uko" "$rko" 2>/dev/null
	else
		[ -n "$uko" ] && [ -f "$uko" ] && [ -f "$rko" ] && mount -n --bind "$uko" "$rko"
	fi
done <<EOF
$kmods
EOF
# the repository at a path that is the same on every machine, with the
# UML builds above (recursive): what job.sh runs names it there
if [ -n "$repo_at" ]; then
	mount -n --rbind "$repo_host" "$repo_at" || fail "cannot mount $repo_host at $repo_at"
fi
[ -f "$run/job.sh" ] || fail "cannot see $run/job.sh"
ip link set lo up
echo uml >/proc/sys/kernel/hostname

# Simulated time starts at 0 and boot costs none of it; programs that take
# a monotonic tv_sec of 0 for "unset" (iputils ping: no 1 s pacing) would
# misbehave, so the command starts at uptime 1 s.  On an image, at 1 s
# exactly: the steps above read the clock a number of times that depends on
# the host's paths (each read advances it 256 ns; docs/platform.md)
if [ -x /usr/lib/synctcp/sleep-until ]; then
	/usr/lib/synctcp/sleep-until 1 || fail "sleep-until failed"
else
	sleep 1
fi
read -r up _ </proc/uptime
echo "start $up" >"$ctl"
# as on the host, programs see a pipe (no colours, block buffering) unless
# umlrun's stream is a terminal
out=/dev/ttyS0 err=/dev/ttyS1 copiers=
# (the FIFOs are made by umlrun in RUNDIR: on hostfs they are local pipes)
if [ "$out_kind" = pipe ] && [ -p "$run/stdout.fifo" ]; then
	cat "$run/stdout.fifo" >/dev/ttyS0 &
	copiers="$copiers $!" out=$run/stdout.fifo
fi
if [ "$err_kind" = pipe ] && [ -p "$run/stderr.fifo" ]; then
	cat "$run/stderr.fifo" >/dev/ttyS1 &
	copiers="$copiers $!" err=$run/stderr.fifo
fi
sh "$run/job.sh" </dev/null >"$out" 2>"$err"
status=$?
# The copiers end when the last writer closes its end.  A daemon the
# command left behind may hold it: wait 1 simulated second at most, the
# power-off ends them.
n=0
for pid in $copiers; do
	while [ -d "/proc/$pid" ] && [ $n -lt 100 ]; do sleep 0.01; n=$((n + 1)); done
done
read -r up _ </proc/uptime
dmesg >"$run/dmesg.txt" 2>&1
sync
echo "end $status $up" >"$ctl"
poweroff_now
