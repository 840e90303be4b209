// SPDX-License-Identifier: GPL-2.0
/* Reverse-path compensation: cwnd follows the ACK path's delay. */
#include "harness.h"
#include "revcomp.h"

/* Apply one sample to *cwnd as the module does. */
static void feed(struct synctcp_revcomp *r, u32 rev_us, u32 *cwnd,
		 u32 rtt_us)
{
	*cwnd += synctcp_revcomp_update(r, rev_us, *cwnd, rtt_us, true);
}

/*
 * The ACK path's queue grows by 50 ms in 1 ms steps on a 50 ms path:
 * cwnd 40 must become 80, so that cwnd / RTT, the rate, is unchanged;
 * and back to 40 when the queue drains.
 */
TEST(rate_is_kept_when_the_reverse_queue_grows_and_drains)
{
	struct synctcp_revcomp r;
	u32 cwnd = 40, q;

	synctcp_revcomp_restart(&r, 7000);
	for (q = 1; q <= 50; q++)
		feed(&r, 7000 + q * 1000, &cwnd, 50000 + q * 1000);
	CHECK_NEAR(cwnd, 80, 1);
	for (q = 50; q-- > 0;)
		feed(&r, 7000 + q * 1000, &cwnd, 50000 + q * 1000);
	CHECK_NEAR(cwnd, 40, 1);
}

/* +-1 ms of TS quantization on a steady path moves cwnd by nothing. */
TEST(jitter_of_the_reverse_delay_does_not_drift_cwnd)
{
	struct synctcp_revcomp r;
	u32 cwnd = 100, i;

	synctcp_revcomp_restart(&r, 0);
	for (i = 0; i < 100000; i++) {
		u32 rev = (i * 7919) % 3 * 1000;

		feed(&r, rev, &cwnd, 50000 + rev);
	}
	CHECK_NEAR(cwnd, 100, 1);
}

/* In loss recovery the change is kept, and applied after. */
TEST(change_is_kept_while_cwnd_may_not_move)
{
	struct synctcp_revcomp r;
	u32 cwnd = 20;

	synctcp_revcomp_restart(&r, 1000);
	CHECK_EQ(synctcp_revcomp_update(&r, 11000, cwnd, 110000, false), 0);
	CHECK_EQ(r.credit_us, 10000);
	/* 20 * 10 / 100 */
	CHECK_EQ(synctcp_revcomp_update(&r, 11000, cwnd, 110000, true), 2);
	CHECK_EQ(r.credit_us, 0);
}

/* A jump of over half a round trip is not followed beyond that. */
TEST(credit_is_bounded_by_a_round_trip)
{
	struct synctcp_revcomp r;

	synctcp_revcomp_restart(&r, 0);
	synctcp_revcomp_update(&r, 4000000000u, 10, 50000, false);
	CHECK_EQ(r.credit_us, -25000);	/* 4e9 as s32 is negative */
	synctcp_revcomp_restart(&r, 0);
	synctcp_revcomp_update(&r, 900000, 10, 50000, false);
	CHECK_EQ(r.credit_us, 25000);
	/* no srtt yet: nothing */
	CHECK_EQ(synctcp_revcomp_update(&r, 950000, 10, 0, true), 0);
	CHECK_EQ(r.credit_us, 0);
}

static const struct harness_test tests[] = {
	T(rate_is_kept_when_the_reverse_queue_grows_and_drains),
	T(jitter_of_the_reverse_delay_does_not_drift_cwnd),
	T(change_is_kept_while_cwnd_may_not_move),
	T(credit_is_bounded_by_a_round_trip),
};

HARNESS_MAIN("revcomp", tests)
