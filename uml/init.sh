#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a User-Mode Linux instance started by scripts/umlrun:
#
#   init=/REPO/uml/init.sh -- RUNDIR
#
# The root filesystem is the host's / through hostfs, read-only.  RUNDIR
# (written by umlrun) holds:
#   rw       the directories to mount writable (host paths), one a line
#   job.sh   the command: cd, exports, exec
#   kmod     optional: "UMLKO REPOKO" pairs, UML builds bind-mounted over
#            the repository's Debian .ko files (inside this instance only)
#   modules  optional: the UML kernel's /lib/modules tree
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

# read the run directory's lists now: the tmpfs mounts below may hide it
# (a repository under /tmp) until its writable mount is in place
rw=$(cat "$run/rw") || fail "cannot read $run/rw"
mods=
[ -f "$run/modules" ] && IFS= read -r mods <"$run/modules"
kmods=
[ -f "$run/kmod" ] && kmods=$(cat "$run/kmod")
out_kind=tty err_kind=tty
[ -f "$run/stdio" ] && read -r out_kind err_kind <"$run/stdio"

mount -n -t proc proc /proc || fail "cannot mount /proc"
mount -n -t sysfs sysfs /sys
# CONFIG_DEVTMPFS_MOUNT mounts /dev for block-device roots only
[ -c /dev/null ] || mount -n -t devtmpfs devtmpfs /dev || fail "cannot mount /dev"
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
mount -n -t tmpfs -o mode=755,nosuid,nodev run /run
mkdir -p /run/netns /run/lock /run/mount
mount -n -t tmpfs -o mode=1777,nosuid,nodev tmp /tmp
mount -n -t tmpfs -o mode=1777,nosuid,nodev vartmp /var/tmp
[ -d /sys/fs/cgroup ] && mount -n -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

# the writable host directories, each its own read-write hostfs mount
# (mkdir: a directory under /tmp needs its mount point in the new tmpfs)
while IFS= read -r dir; do
	[ -n "$dir" ] || continue
	[ -d "$dir" ] || mkdir -p "$dir"
	mount -n -t hostfs -o "$dir" hostfs "$dir" || fail "cannot mount $dir writable"
done <<EOF
$rw
EOF
# the UML kernel's modules where modprobe looks for them
[ -n "$mods" ] && [ -d "$mods" ] && mount -n --bind "$mods" /lib/modules
# kmod/*.ko of the repository are the Debian kernel's: the UML builds over them
while read -r uko rko; do
	[ -n "$uko" ] && [ -f "$uko" ] && [ -f "$rko" ] && mount -n --bind "$uko" "$rko"
done <<EOF
$kmods
EOF
[ -f "$run/job.sh" ] || fail "cannot see $run/job.sh"
ip link set lo up
echo uml >/proc/sys/kernel/hostname

# Simulated time starts at 0 and boot costs none of it; programs that take
# a monotonic tv_sec of 0 for "unset" (iputils ping: no 1 s pacing) would
# misbehave, so the command starts at uptime 1 s.
sleep 1
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
