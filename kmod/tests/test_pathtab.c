// SPDX-License-Identifier: GPL-2.0
/* The destination table: full-address match, per-set replacement, noise. */
#include <string.h>

#include "harness.h"
#include "pathtab.h"

/* An IPv6 address from its 8 groups. */
static struct synctcp_path_key v6(const u16 g[8])
{
	struct synctcp_path_key k = { .family = 10 };
	int i;

	for (i = 0; i < 8; i++) {
		k.addr[2 * i] = (u8)(g[i] >> 8);
		k.addr[2 * i + 1] = (u8)g[i];
	}
	return k;
}

static struct synctcp_path_key v4(u8 a, u8 b, u8 c, u8 d)
{
	struct synctcp_path_key k = { .family = 2, .addr = { a, b, c, d } };

	return k;
}

/*
 * Issue 28, 5: 2001:db8:1::10 and 2001:db8:bad:1::bac:11 fold to the same
 * 0x20000da8 in ipv6_addr_hash(), and b0ac820 matched entries on the hash
 * alone: an attacker with a /64 stored a tiny maximum that every later
 * connection to the victim inherited.  Here both land in one set (the
 * same hash, the worst case) and each finds only its own.
 */
TEST(colliding_ipv6_addresses_do_not_share_an_entry)
{
	static const u16 victim_g[8] = { 0x2001, 0xdb8, 1, 0, 0, 0, 0, 0x10 };
	static const u16 attacker_g[8] = { 0x2001, 0xdb8, 0xbad, 1, 0, 0, 0xbac, 0x11 };
	struct synctcp_path_table t;
	struct synctcp_path_key victim = v6(victim_g), attacker = v6(attacker_g);
	u32 hash = 0x20000da8;

	memset(&t, 0, sizeof(t));
	synctcp_path_put(&t, hash, &attacker, 600, 100);
	CHECK_EQ(synctcp_path_find(&t, hash, &victim, 101), 0);
	CHECK_EQ(synctcp_path_find(&t, hash, &attacker, 101), 600);
	synctcp_path_put(&t, hash, &victim, 60000, 102);
	CHECK_EQ(synctcp_path_find(&t, hash, &victim, 103), 60000);
	CHECK_EQ(synctcp_path_find(&t, hash, &attacker, 103), 600);
	/* the attacker storing again replaces only its own entry */
	synctcp_path_put(&t, hash, &attacker, 500, 104);
	CHECK_EQ(synctcp_path_find(&t, hash, &victim, 105), 60000);
}

/* IPv4 and an IPv6 address with the same first bytes are different keys. */
TEST(family_is_part_of_the_key)
{
	struct synctcp_path_table t;
	struct synctcp_path_key a = v4(10, 0, 0, 1), b = a;

	memset(&t, 0, sizeof(t));
	b.family = 10;
	synctcp_path_put(&t, 7, &a, 40000, 0);
	CHECK_EQ(synctcp_path_find(&t, 7, &b, 1), 0);
	CHECK_EQ(synctcp_path_find(&t, 7, &a, 1), 40000);
}

/* Entries expire after SYNCTCP_PATH_TTL_S, also across the u32 clock wrap. */
TEST(entries_expire)
{
	struct synctcp_path_table t;
	struct synctcp_path_key a = v4(10, 0, 0, 1);

	memset(&t, 0, sizeof(t));
	synctcp_path_put(&t, 3, &a, 40000, U32_MAX - 10);
	CHECK_EQ(synctcp_path_find(&t, 3, &a, 100), 40000);
	CHECK_EQ(synctcp_path_find(&t, 3, &a, SYNCTCP_PATH_TTL_S - 11), 0);
}

/*
 * A full set replaces its oldest entry: five destinations of one set keep
 * the newest four, and a store to a known destination replaces its own.
 */
TEST(full_set_replaces_the_oldest)
{
	struct synctcp_path_table t;
	struct synctcp_path_key k[5];
	u32 i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < 5; i++) {
		k[i] = v4(10, 0, 0, (u8)(i + 1));
		synctcp_path_put(&t, 9, &k[i], 1000 * (i + 1), 10 + i);
	}
	CHECK_EQ(synctcp_path_find(&t, 9, &k[0], 20), 0);
	for (i = 1; i < 5; i++)
		CHECK_EQ(synctcp_path_find(&t, 9, &k[i], 20), 1000 * (i + 1));
	synctcp_path_put(&t, 9, &k[2], 7777, 30);
	CHECK_EQ(synctcp_path_find(&t, 9, &k[2], 31), 7777);
	CHECK_EQ(synctcp_path_find(&t, 9, &k[1], 31), 2000);
	/* other sets are untouched */
	for (i = 0; i < SYNCTCP_PATH_SLOTS; i++)
		if (i / SYNCTCP_PATH_WAYS != synctcp_path_set(9))
			CHECK_EQ(t.slot[i].max_qdelay_us, 0);
}

/* A maximum within the timestamps' noise is not kept. */
TEST(maximum_within_the_noise_is_not_worth_keeping)
{
	CHECK(!synctcp_path_worth_keeping(1000, 1000));	/* one 1 kHz tick */
	CHECK(!synctcp_path_worth_keeping(3999, 1000));
	CHECK(synctcp_path_worth_keeping(4000, 1000));
	CHECK(!synctcp_path_worth_keeping(400, 1));		/* below 0.5 ms */
	CHECK(synctcp_path_worth_keeping(600, 1));
	CHECK(!synctcp_path_worth_keeping(10000, 4000));	/* 250 Hz */
}

static const struct harness_test tests[] = {
	T(colliding_ipv6_addresses_do_not_share_an_entry),
	T(family_is_part_of_the_key),
	T(entries_expire),
	T(full_set_replaces_the_oldest),
	T(maximum_within_the_noise_is_not_worth_keeping),
};

HARNESS_MAIN("pathtab", tests)
