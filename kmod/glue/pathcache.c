// SPDX-License-Identifier: GPL-2.0
/*
 * The destinations' learnt full-queue delays, kernel side: one table of
 * core/pathtab.h per network namespace (net_generic), so that no namespace
 * sees or evicts another's; a lock per set of the table, taken when a
 * connection starts and when one loses, never on an ordinary ACK.
 */
#include <linux/jhash.h>
#include <linux/net.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "pathcache.h"
#include "../core/pathtab.h"

struct synctcp_pathcache {
	spinlock_t lock[SYNCTCP_PATH_SETS];	/* one per set of t */
	struct synctcp_path_table t;
};

static unsigned int synctcp_pathcache_id __read_mostly;
static u32 synctcp_path_seed __read_mostly;

static int __net_init synctcp_pathcache_net_init(struct net *net)
{
	struct synctcp_pathcache *pc = net_generic(net, synctcp_pathcache_id);
	u32 i;

	for (i = 0; i < SYNCTCP_PATH_SETS; i++)
		spin_lock_init(&pc->lock[i]);
	return 0;
}

static struct pernet_operations synctcp_pathcache_ops = {
	.init = synctcp_pathcache_net_init,
	.id = &synctcp_pathcache_id,
	.size = sizeof(struct synctcp_pathcache),
};

int synctcp_pathcache_register(void)
{
	return register_pernet_subsys(&synctcp_pathcache_ops);
}

void synctcp_pathcache_unregister(void)
{
	unregister_pernet_subsys(&synctcp_pathcache_ops);
}

/* The connection's destination address, IPv4 in the first 4 bytes. */
static void synctcp_path_addr(const struct sock *sk, u8 *addr)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		memcpy(addr, &sk->sk_v6_daddr, sizeof(sk->sk_v6_daddr));
		return;
	}
#endif
	memcpy(addr, &sk->sk_daddr, sizeof(sk->sk_daddr));
}

/* The connection's destination, and its hash (keyed once per boot). */
static u32 synctcp_path_key_of(const struct sock *sk,
			       struct synctcp_path_key *key)
{
	memset(key, 0, sizeof(*key));
	key->family = sk->sk_family;
	synctcp_path_addr(sk, key->addr);
	net_get_random_once(&synctcp_path_seed, sizeof(synctcp_path_seed));
	return jhash(key->addr, sizeof(key->addr), synctcp_path_seed ^ key->family);
}

static u32 synctcp_path_now(void)
{
	return (u32)ktime_get_seconds();
}

/* The full-queue delay stored for this connection's destination, or 0. */
u32 synctcp_path_lookup(const struct sock *sk)
{
	struct synctcp_pathcache *pc = net_generic(sock_net(sk),
						   synctcp_pathcache_id);
	struct synctcp_path_key key;
	u32 hash = synctcp_path_key_of(sk, &key), set, max;

	set = synctcp_path_set(hash);
	spin_lock_bh(&pc->lock[set]);
	max = synctcp_path_find(&pc->t, hash, &key, synctcp_path_now());
	spin_unlock_bh(&pc->lock[set]);
	return max;
}

/*
 * A loss showed this connection's destination's full-queue delay; one
 * below the noise of its OTT source (tick_us) is not kept.
 */
void synctcp_path_store(const struct sock *sk, u32 max_qdelay_us, u32 tick_us)
{
	struct synctcp_pathcache *pc = net_generic(sock_net(sk),
						   synctcp_pathcache_id);
	struct synctcp_path_key key;
	u32 hash, set;

	if (!synctcp_path_worth_keeping(max_qdelay_us, tick_us))
		return;
	hash = synctcp_path_key_of(sk, &key);
	set = synctcp_path_set(hash);
	spin_lock_bh(&pc->lock[set]);
	synctcp_path_put(&pc->t, hash, &key, max_qdelay_us, synctcp_path_now());
	spin_unlock_bh(&pc->lock[set]);
}
