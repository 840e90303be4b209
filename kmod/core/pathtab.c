// SPDX-License-Identifier: GPL-2.0
/* The destination table's policy; see pathtab.h. */
#include "pathtab.h"

static bool synctcp_path_same(const struct synctcp_path_key *a,
			      const struct synctcp_path_key *b)
{
	size_t i;

	if (a->family != b->family)
		return false;
	for (i = 0; i < sizeof(a->addr); i++)
		if (a->addr[i] != b->addr[i])
			return false;
	return true;
}

static bool synctcp_path_live(const struct synctcp_path_entry *e, u32 now_s)
{
	return e->max_qdelay_us && now_s - e->stamp_s < SYNCTCP_PATH_TTL_S;
}

/* The set a destination's hash selects. */
u32 synctcp_path_set(u32 hash)
{
	return hash % SYNCTCP_PATH_SETS;
}

/**
 * synctcp_path_find - the full-queue delay stored for a destination
 * @t: the table
 * @hash: the destination's hash (selects the set)
 * @key: the destination
 * @now_s: a local clock in seconds
 *
 * Return: the delay (us), 0 when none is stored or it expired.
 */
u32 synctcp_path_find(const struct synctcp_path_table *t, u32 hash,
		      const struct synctcp_path_key *key, u32 now_s)
{
	const struct synctcp_path_entry *e =
		&t->slot[synctcp_path_set(hash) * SYNCTCP_PATH_WAYS];
	u32 i;

	for (i = 0; i < SYNCTCP_PATH_WAYS; i++)
		if (synctcp_path_live(&e[i], now_s) &&
		    synctcp_path_same(&e[i].key, key))
			return e[i].max_qdelay_us;
	return 0;
}

/**
 * synctcp_path_put - a loss showed a destination's full-queue delay
 * @t: the table
 * @hash: the destination's hash
 * @key: the destination
 * @max_qdelay_us: the delay (0: nothing is stored)
 * @now_s: a local clock in seconds
 *
 * Replaces the destination's own entry, else an empty or expired slot of
 * its set, else the oldest one there.
 */
void synctcp_path_put(struct synctcp_path_table *t, u32 hash,
		      const struct synctcp_path_key *key, u32 max_qdelay_us,
		      u32 now_s)
{
	struct synctcp_path_entry *e =
		&t->slot[synctcp_path_set(hash) * SYNCTCP_PATH_WAYS];
	struct synctcp_path_entry *victim = NULL;
	u32 i;

	if (!max_qdelay_us)
		return;
	for (i = 0; i < SYNCTCP_PATH_WAYS; i++) {
		if (synctcp_path_same(&e[i].key, key)) {
			victim = &e[i];
			break;
		}
		if (!synctcp_path_live(&e[i], now_s)) {
			if (!victim || synctcp_path_live(victim, now_s))
				victim = &e[i];
		} else if (!victim || (synctcp_path_live(victim, now_s) &&
				       (s32)(e[i].stamp_s - victim->stamp_s) < 0)) {
			victim = &e[i];
		}
	}
	victim->key = *key;
	victim->max_qdelay_us = max_qdelay_us;
	victim->stamp_s = now_s;
}

/**
 * synctcp_path_worth_keeping - is a learnt maximum a queue, not noise?
 * @max_qdelay_us: the maximum queuing delay a connection measured
 * @tick_us: one tick of its OTT source (1 ms for a 1 kHz TS clock)
 *
 * Return: true when it spans SYNCTCP_PATH_MIN_TICKS ticks and
 * SYNCTCP_PATH_MIN_US: a smaller one would make every later connection
 * cut on the noise of the timestamps.
 */
bool synctcp_path_worth_keeping(u32 max_qdelay_us, u32 tick_us)
{
	return max_qdelay_us >= SYNCTCP_PATH_MIN_US &&
	       (u64)max_qdelay_us >= (u64)SYNCTCP_PATH_MIN_TICKS * tick_us;
}
