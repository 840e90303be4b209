// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_mixreact's per-connection decisions (core/mixreact_cc.c): variant
 * "best"'s once-per-RTT hold (issue 28, 6).
 */
#include "harness.h"
#include "mixreact_cc.h"

#define MSS	1448U

/* A new (trend, region) indication for the next cong_avoid. */
static void indicate(struct synctcp_mix *m, u8 trend, u8 region, u32 qdelay)
{
	m->fresh = true;
	m->detect.trend = trend;
	m->detect.region = region;
	m->flow.q.qdelay_us = qdelay;
}

/*
 * A decrease within the held round trip keeps cwnd: b0ac820 jumped over
 * it and kept the increase in force (+25% per RTT) while the indication
 * said the queue grows.
 */
TEST(blocked_decrease_keeps_cwnd_and_stops_growth)
{
	struct synctcp_mix m;
	struct synctcp_cwnd w = { .cwnd = 100, .ssthresh = 1000 };
	u32 una = 1000, nxt = una + 100 * MSS, i;

	synctcp_mix_init(&m, SYNCTCP_VARIANT_BEST);
	m.flow.q.loss_seen = true;
	indicate(&m, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, 30000);
	CHECK(!synctcp_mix_cong_avoid(&m, una, nxt, 100000, 1, true, ~0U, &w));
	CHECK(w.cwnd < 100);	/* the decrease, and a hold until nxt */
	/* the queue drains: +25% per RTT in force */
	indicate(&m, SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R0_25, 1000);
	synctcp_mix_cong_avoid(&m, una + MSS, nxt, 100000, 1, true, ~0U, &w);
	CHECK_EQ(m.react.action, SYNCTCP_MIXREACT_ADD_25PCT);
	/* it grows again within the hold: a decrease is due but blocked */
	indicate(&m, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R50_75, 20000);
	synctcp_mix_cong_avoid(&m, una + 2 * MSS, nxt, 100000, 1, true, ~0U, &w);
	CHECK_EQ(m.react.action, SYNCTCP_MIXREACT_KEEP);
	for (i = 0; i < 200; i++) {
		u32 before = w.cwnd;

		synctcp_mix_cong_avoid(&m, una + 3 * MSS, nxt, 100000, 1, true,
				       ~0U, &w);
		CHECK_EQ(w.cwnd, before);
	}
}

/*
 * b0ac820 asked whether the hold was over only when a decrease was due:
 * after 2^31 bytes without one, before() wrapped and blocked decreases
 * for up to another 2 GB.  Asked on every ACK, the hold ends.
 */
TEST(hold_does_not_outlive_two_gigabytes)
{
	struct synctcp_mix m;
	struct synctcp_cwnd w = { .cwnd = 100, .ssthresh = 1000 };
	u32 una = 1000, nxt = una + 100 * MSS, cwnd_before;
	u64 moved;

	synctcp_mix_init(&m, SYNCTCP_VARIANT_BEST);
	m.flow.q.loss_seen = true;
	indicate(&m, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, 30000);
	synctcp_mix_cong_avoid(&m, una, nxt, 100000, 1, true, ~0U, &w);
	/* 2.5 GB acknowledged, no decrease due meanwhile */
	for (moved = 0; moved < 2500000000ULL; moved += 65536) {
		una += 65536;
		synctcp_mix_cong_avoid(&m, una, una + 100 * MSS, 100000, 1,
				       true, ~0U, &w);
	}
	CHECK(before(una, nxt));	/* the wrap the old code fell into */
	indicate(&m, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, 30000);
	cwnd_before = w.cwnd;
	synctcp_mix_cong_avoid(&m, una, una + 100 * MSS, 100000, 1, true,
			       ~0U, &w);
	CHECK(w.cwnd < cwnd_before);
}

/* Variant "paper" has no hold: a decrease every indication that asks. */
TEST(paper_decreases_on_every_indication)
{
	struct synctcp_mix m;
	struct synctcp_cwnd w = { .cwnd = 100, .ssthresh = 1000 };

	synctcp_mix_init(&m, SYNCTCP_VARIANT_PAPER);
	indicate(&m, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, 30000);
	synctcp_mix_cong_avoid(&m, 1000, 2000, 100000, 1, true, ~0U, &w);
	CHECK_EQ(w.cwnd, 50);
	indicate(&m, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, 30000);
	synctcp_mix_cong_avoid(&m, 1001, 2000, 100000, 1, true, ~0U, &w);
	CHECK_EQ(w.cwnd, 25);
}

static const struct harness_test tests[] = {
	T(blocked_decrease_keeps_cwnd_and_stops_growth),
	T(hold_does_not_outlive_two_gigabytes),
	T(paper_decreases_on_every_indication),
};

HARNESS_MAIN("mixreact_cc", tests)
