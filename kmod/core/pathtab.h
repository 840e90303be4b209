/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What earlier connections learnt of a destination's full queue: the
 * table's policy, kernel-independent (the kernel side, glue/pathcache.c,
 * keeps one table per network namespace, hashes and locks).
 *
 * SyncPQlen trusts its maximum queuing delay only after the connection's
 * own first loss, and a connection of a few round trips (a web response)
 * ends before it has one.  As tcp_metrics keeps a destination's RTT and
 * ssthresh for the next connection, the modules keep, per destination,
 * the largest queuing delay a connection measured up to its loss, for
 * SYNCTCP_PATH_TTL_S; a new connection to it starts with that maximum
 * (variant "best").
 *
 * An entry matches on the full address, as tcp_metrics' do, never on a
 * hash: a peer that picks an address whose hash collides with another's
 * (for IPv6 an unkeyed fold makes that easy) cannot hand its maximum to
 * connections to that other address.  A destination may sit in any of the
 * SYNCTCP_PATH_WAYS slots of its set; a store replaces the same address,
 * else an empty or expired slot, else the oldest.  A maximum of fewer than
 * SYNCTCP_PATH_MIN_TICKS ticks of the OTT source (or below
 * SYNCTCP_PATH_MIN_US) is the source's noise, not a queue: it is not kept.
 */
#ifndef SYNCTCP_PATHTAB_H
#define SYNCTCP_PATHTAB_H

#include "synctcp_compat.h"

#define SYNCTCP_PATH_SLOTS	64U	/* per table (network namespace) */
#define SYNCTCP_PATH_WAYS	4U	/* slots of a set */
#define SYNCTCP_PATH_SETS	(SYNCTCP_PATH_SLOTS / SYNCTCP_PATH_WAYS)
#define SYNCTCP_PATH_TTL_S	600U	/* an entry is kept this long (s) */
#define SYNCTCP_PATH_MIN_TICKS	4U
#define SYNCTCP_PATH_MIN_US	500U

/* A destination: the address (IPv4 in the first 4 bytes) and its family. */
struct synctcp_path_key {
	u8 addr[16];
	u16 family;
};

struct synctcp_path_entry {
	struct synctcp_path_key key;
	u32 max_qdelay_us;	/* its full-queue delay, 0: empty */
	u32 stamp_s;		/* when it was stored (seconds of a local clock) */
};

struct synctcp_path_table {
	struct synctcp_path_entry slot[SYNCTCP_PATH_SLOTS];
};

u32 synctcp_path_set(u32 hash);
u32 synctcp_path_find(const struct synctcp_path_table *t, u32 hash,
		      const struct synctcp_path_key *key, u32 now_s);
void synctcp_path_put(struct synctcp_path_table *t, u32 hash,
		      const struct synctcp_path_key *key, u32 max_qdelay_us,
		      u32 now_s);
bool synctcp_path_worth_keeping(u32 max_qdelay_us, u32 tick_us);

#endif /* SYNCTCP_PATHTAB_H */
