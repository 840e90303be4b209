#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Wall cost of the testbed's samplers alone, on simulated time, no traffic:
# qsampler at 100 Hz on two htb leaves (one process), then the inet_diag
# sampler over 21 namespaces at 2 Hz (what a weigle-ftp case runs), each
# for SECS simulated seconds.  Run it in UML, from the repository:
#
#   scripts/umlrun sh uml/sampler-cost.sh MARKDIR [SECS] [QSAMPLER_SOURCE]
#
# It touches MARKDIR/mark-{0,q,py,diag} (new files: hostfs gives them the
# host's mtime, i.e. wall time) after each phase; the wall seconds of a
# phase are the differences of their mtimes:
#
#   stat -c '%n %.3Y' MARKDIR/mark-*
set -e
dir=$1; secs=${2:-60}; src=${3:-testbed/synctcp_testbed/qsampler.c}
[ -n "$dir" ] || { echo "usage: sampler-cost.sh MARKDIR [SECS] [QSAMPLER_SOURCE]" >&2; exit 2; }
mkdir -p "$dir"; rm -f "$dir"/mark-*
gcc -O2 -o /tmp/qs "$src"
for n in q1 q2; do
  ip netns add $n; ip -n $n link set lo up
  ip -n $n link add d0 type dummy; ip -n $n link set d0 up
  tc -n $n qdisc add dev d0 root handle 1: htb default 10
  tc -n $n class add dev d0 parent 1: classid 1:10 htb rate 10mbit
  tc -n $n qdisc add dev d0 parent 1:10 handle 10: pfifo limit 92
done
i=1; while [ $i -le 21 ]; do ip netns add dg$i; i=$((i + 1)); done
touch "$dir/mark-0"
/tmp/qs -n q1 -i d0 -p 1:10 -o /tmp/a.csv -n q2 -i d0 -p 1:10 -o /tmp/b.csv -r 100 -d "$secs" >/dev/null
echo "qsampler, 2 targets at 100 Hz: $(($(wc -l < /tmp/a.csv) - 1)) + $(($(wc -l < /tmp/b.csv) - 1)) samples"
touch "$dir/mark-q"
echo | python3 -m synctcp_testbed.measure.sampler --diag-stdin >/dev/null
touch "$dir/mark-py"
spec=; i=1
while [ $i -le 21 ]; do spec="$spec dg$i:*:/tmp/dg$i.jsonl"; i=$((i + 1)); done
echo "$spec" | python3 -m synctcp_testbed.measure.sampler --diag-stdin --hz 2 --max-seconds "$secs" >/dev/null
echo "inet_diag sampler, 21 namespaces at 2 Hz: $(wc -l < /tmp/dg1.jsonl) samples"
touch "$dir/mark-diag"
