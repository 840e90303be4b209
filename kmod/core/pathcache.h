/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What earlier connections learnt of a path's full queue (kernel only).
 *
 * SyncPQlen trusts its maximum queuing delay only after the connection's
 * own first loss, and a connection of a few round trips (a web response)
 * ends before it has one: before issue 17 it ran as plain Reno.  As
 * tcp_metrics keeps a destination's RTT and ssthresh for the next
 * connection, the modules keep, per destination and network namespace,
 * the largest queuing delay a connection measured up to its loss, for ten
 * minutes; a new connection to the destination starts with it
 * (synctcp_qdelay_inherit(), variant "best").  A fixed table of
 * SYNCTCP_PATH_SLOTS entries, indexed by a hash of the address and the
 * namespace, each overwritten by the latest loss that maps to it: no
 * allocation, a spinlock held for a few stores.
 */
#ifndef SYNCTCP_PATHCACHE_H
#define SYNCTCP_PATHCACHE_H

#ifndef __KERNEL__
#error "pathcache.h is kernel-only"
#endif

#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/spinlock.h>
#include <net/ipv6.h>
#include <net/netns/hash.h>
#include <net/sock.h>

#define SYNCTCP_PATH_SLOTS	256U
#define SYNCTCP_PATH_TTL	(600 * HZ)

struct synctcp_path_entry {
	u32 key;		/* synctcp_path_key() of the destination */
	u32 max_qdelay_us;	/* its full-queue delay, 0: empty */
	unsigned long stamp;	/* jiffies when it was stored */
};

static struct synctcp_path_entry synctcp_paths[SYNCTCP_PATH_SLOTS];
static DEFINE_SPINLOCK(synctcp_paths_lock);

static inline u32 synctcp_path_key(const struct sock *sk)
{
	u32 addr = sk->sk_daddr;

#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6)
		addr = ipv6_addr_hash(&sk->sk_v6_daddr);
#endif
	return jhash_2words(addr, net_hash_mix(sock_net(sk)), 0) | 1;
}

/* The full-queue delay stored for this connection's destination, or 0. */
static inline u32 synctcp_path_lookup(const struct sock *sk)
{
	u32 key = synctcp_path_key(sk), max = 0;
	struct synctcp_path_entry *e = &synctcp_paths[key % SYNCTCP_PATH_SLOTS];

	spin_lock_bh(&synctcp_paths_lock);
	if (e->key == key && time_before(jiffies, e->stamp + SYNCTCP_PATH_TTL))
		max = e->max_qdelay_us;
	spin_unlock_bh(&synctcp_paths_lock);
	return max;
}

/* A loss showed this connection's destination's full-queue delay. */
static inline void synctcp_path_store(const struct sock *sk, u32 max_qdelay_us)
{
	u32 key = synctcp_path_key(sk);
	struct synctcp_path_entry *e = &synctcp_paths[key % SYNCTCP_PATH_SLOTS];

	if (!max_qdelay_us)
		return;
	spin_lock_bh(&synctcp_paths_lock);
	e->key = key;
	e->max_qdelay_us = max_qdelay_us;
	e->stamp = jiffies;
	spin_unlock_bh(&synctcp_paths_lock);
}

#endif /* SYNCTCP_PATHCACHE_H */
