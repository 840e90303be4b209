/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The destinations' learnt full-queue delays, one table per network
 * namespace (core/pathtab.h has the policy and why).  Declarations only.
 */
#ifndef SYNCTCP_PATHCACHE_H
#define SYNCTCP_PATHCACHE_H

#include <net/sock.h>

int synctcp_pathcache_register(void);
void synctcp_pathcache_unregister(void);
u32 synctcp_path_lookup(const struct sock *sk);
void synctcp_path_store(const struct sock *sk, u32 max_qdelay_us, u32 tick_us);

#endif /* SYNCTCP_PATHCACHE_H */
