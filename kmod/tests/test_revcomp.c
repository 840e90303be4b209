// SPDX-License-Identifier: GPL-2.0
/* Reverse-path compensation: cwnd follows the ACK path's delay, bounded. */
#include "harness.h"
#include "revcomp.h"

#define MSS	1448U

/*
 * A steady flow: one ACK per segment, a round trip every cwnd ACKs.  The
 * caller sets the reverse delay and the RTT of each ACK; the flow is
 * cwnd-limited unless told otherwise, with as much in flight as cwnd.
 */
struct flow {
	struct synctcp_revcomp r;
	struct synctcp_revcomp_in in;
	u32 cwnd;
};

static void flow_init(struct flow *f, u32 cwnd, u32 base_rtt_us)
{
	synctcp_revcomp_init(&f->r);
	f->cwnd = cwnd;
	f->in = (struct synctcp_revcomp_in){
		.rtt_us = base_rtt_us, .srtt_us = base_rtt_us,
		.min_rtt_us = base_rtt_us, .tick_us = 1000,
		.snd_una = 1, .clamp = 1U << 30,
		.cwnd_limited = true, .apply = true,
	};
}

/* One ACK: forward OTT @ott_us (+ any offset), RTT @rtt_us. */
static void ack(struct flow *f, s64 ott_us, u32 rtt_us)
{
	f->in.ott_us = ott_us;
	f->in.rtt_us = rtt_us;
	f->in.now_us += 100;
	f->in.snd_una += MSS;
	f->in.cwnd = f->cwnd;
	f->in.max_flight = f->cwnd;
	f->in.snd_nxt = f->in.snd_una + f->cwnd * MSS;
	f->cwnd = synctcp_revcomp_update(&f->r, &f->in);
}

/* 200 ACKs over a reverse queue of @q_ms on a 50 ms path. */
static void reverse_queue(struct flow *f, u32 q_ms)
{
	u32 i;

	f->in.srtt_us = 50000 + q_ms * 1000;
	for (i = 0; i < 200; i++)
		ack(f, 20000, 50000 + q_ms * 1000);
}

/*
 * The review's scenario (issue 28, 1): the path holds still, the RTT
 * sample (our microsecond clock) is flat at 50 ms, and the OTT is a 1 ms
 * sawtooth from the peer's 1 kHz TS clock.  Stepwise scaling made cwnd
 * 100 -> 141 in 1000 ACKs; against a reference it must not move.
 */
TEST(ts_rounding_with_a_flat_rtt_does_not_move_cwnd)
{
	struct flow f;
	u32 i;

	flow_init(&f, 100, 50000);
	for (i = 0; i < 100000; i++)
		ack(&f, 30000 + (i * 7) % 1000, 50000);
	CHECK_EQ(f.cwnd, 100);
	/* and on a 10 ms path, where the step is a tenth of the RTT */
	flow_init(&f, 100, 10000);
	f.in.srtt_us = f.in.min_rtt_us = 10000;
	for (i = 0; i < 100000; i++)
		ack(&f, 5000 + (i * 7) % 1000, 10000);
	CHECK_EQ(f.cwnd, 100);
}

/*
 * The ACK path's queue grows by 50 ms on a 50 ms path: cwnd 40 becomes 80,
 * so that cwnd / RTT, the rate, is unchanged; and back to exactly 40 when
 * the queue drains.
 */
TEST(rate_is_kept_when_the_reverse_queue_grows_and_drains)
{
	struct flow f;
	u32 q;

	flow_init(&f, 40, 50000);
	for (q = 0; q <= 50; q++)
		reverse_queue(&f, q);
	CHECK_NEAR(f.cwnd, 80, 1);
	for (q = 50; q-- > 0;)
		reverse_queue(&f, q);
	CHECK_EQ(f.cwnd, 40);
	CHECK_EQ(f.r.applied_us, 0);
}

/* A rise and its fall, any number of times, leave cwnd where it was. */
TEST(rises_and_falls_do_not_ratchet)
{
	struct flow f;
	u32 cycle, i;

	flow_init(&f, 57, 40000);
	for (cycle = 0; cycle < 500; cycle++) {
		u32 q = 3000 + (cycle * 7919) % 37000;

		f.in.srtt_us = 40000 + q;
		for (i = 0; i < 150; i++)
			ack(&f, 1000, 40000 + q);
		f.in.srtt_us = 40000;
		for (i = 0; i < 150; i++)
			ack(&f, 1000, 40000);
	}
	CHECK_EQ(f.cwnd, 57);
}

/* Not cwnd-limited (receive window, application): never raised. */
TEST(no_rise_unless_cwnd_limited)
{
	struct flow f;
	u32 i;

	flow_init(&f, 20, 10000);
	f.in.cwnd_limited = false;
	for (i = 0; i < 5000; i++) {
		f.in.srtt_us = 40000;
		ack(&f, 0, 40000);
	}
	CHECK_EQ(f.cwnd, 20);
	CHECK_EQ(f.r.applied_us, 0);
}

/* A rise leaves cwnd at most twice the last round's flight. */
TEST(a_rise_is_at_most_twice_the_flight)
{
	struct flow f;
	u32 i;

	flow_init(&f, 10, 10000);
	for (i = 0; i < 20; i++)
		ack(&f, 0, 10000);
	/* 30 ms of reverse queue on a 10 ms path: x4, but in steps of x2 */
	f.in.srtt_us = 40000;
	f.in.max_flight = 10;
	f.in.ott_us = 0;
	f.in.rtt_us = 40000;
	f.in.snd_una = f.in.snd_nxt;	/* a round ends at this ACK */
	f.in.cwnd = f.cwnd;
	f.cwnd = synctcp_revcomp_update(&f.r, &f.in);
	CHECK(f.cwnd <= 20);
	CHECK(f.r.applied_us < 30000);
}

/* However large the reverse queue, the factor is at most 4. */
TEST(total_factor_is_bounded)
{
	struct flow f;
	u32 i;

	flow_init(&f, 100, 10000);
	for (i = 0; i < 200; i++)
		ack(&f, 0, 10000);
	for (i = 0; i < 20000; i++) {
		f.in.srtt_us = 1010000;
		ack(&f, 0, 1010000);	/* a second of reverse queue */
	}
	CHECK(f.cwnd <= 400);
	CHECK(f.cwnd >= 390);
}

/*
 * A peer whose TSvals drift (its clock 5% slow, the rate snapped to 1 kHz)
 * makes RTT - OTT grow by 50 ms a second while the RTT stays flat: no
 * queue the round trip shows, so no rise (issue 28, 2).
 */
TEST(reverse_queue_is_bounded_by_what_the_rtt_shows)
{
	struct flow f;
	u32 i;

	flow_init(&f, 100, 100000);
	for (i = 0; i < 100000; i++)	/* 10 s */
		ack(&f, 50000 - (s64)i * 5, 100000);
	CHECK_EQ(f.cwnd, 100);
}

/* Changes below one tick of the OTT source are not followed. */
TEST(changes_below_a_tick_are_ignored)
{
	struct flow f;
	u32 i;

	flow_init(&f, 100, 50000);
	f.in.tick_us = 4000;	/* a 250 Hz peer */
	for (i = 0; i < 200; i++)
		ack(&f, 20000, 50000);
	for (i = 0; i < 2000; i++) {
		f.in.srtt_us = 53000;
		ack(&f, 20000, 53000);	/* 3 ms: below the tick */
	}
	CHECK_EQ(f.cwnd, 100);
	for (i = 0; i < 2000; i++) {
		f.in.srtt_us = 58000;
		ack(&f, 20000, 58000);	/* 8 ms: followed */
	}
	CHECK_NEAR(f.cwnd, 116, 1);
}

/* In loss recovery nothing changes; the next round trip applies it. */
TEST(change_waits_while_cwnd_may_not_move)
{
	struct flow f;
	u32 i;

	flow_init(&f, 20, 100000);
	for (i = 0; i < 100; i++)
		ack(&f, 0, 100000);
	f.in.apply = false;
	for (i = 0; i < 200; i++) {
		f.in.srtt_us = 110000;
		ack(&f, 0, 110000);
	}
	CHECK_EQ(f.cwnd, 20);
	f.in.apply = true;
	for (i = 0; i < 200; i++)
		ack(&f, 0, 110000);
	CHECK_EQ(f.cwnd, 22);
}

/* A restart (new OTT base) withdraws the scaling before it learns again. */
TEST(restart_withdraws_the_scaling)
{
	struct flow f;
	u32 i;

	flow_init(&f, 50, 50000);
	for (i = 0; i < 100; i++)
		ack(&f, 0, 50000);
	for (i = 0; i < 500; i++) {
		f.in.srtt_us = 100000;
		ack(&f, 0, 100000);
	}
	CHECK_NEAR(f.cwnd, 100, 1);
	synctcp_revcomp_restart(&f.r);
	for (i = 0; i < 500; i++)
		ack(&f, 777777, 100000);	/* a new base, same queue */
	CHECK_NEAR(f.cwnd, 50, 1);
	/* and a connection without OTT samples any more withdraws too */
	flow_init(&f, 50, 50000);
	for (i = 0; i < 100; i++)
		ack(&f, 0, 50000);
	for (i = 0; i < 500; i++) {
		f.in.srtt_us = 100000;
		ack(&f, 0, 100000);
	}
	f.in.cwnd = f.cwnd;
	CHECK_NEAR(synctcp_revcomp_withdraw(&f.r, &f.in), 50, 1);
	CHECK_EQ(f.r.applied_us, 0);
}

/* Degenerate inputs: nothing divides by zero, nothing moves. */
TEST(degenerate_inputs_change_nothing)
{
	struct flow f;
	u32 i;

	flow_init(&f, 0, 0);
	for (i = 0; i < 100; i++)
		ack(&f, (s64)i * 1000, i * 1000);
	CHECK_EQ(f.cwnd, 0);
	flow_init(&f, 10, 0);
	f.in.srtt_us = 0;
	for (i = 0; i < 100; i++)
		ack(&f, 0, 50000);
	CHECK_EQ(f.cwnd, 10);
	/* a reverse delay far from the reference restarts it */
	flow_init(&f, 10, 50000);
	ack(&f, 0, 50000);
	ack(&f, -(3LL << 30), 50000);
	CHECK_EQ(f.cwnd, 10);
	CHECK(f.r.started);
}

/*
 * The reverse queue drains from 50 ms to none, after a delay cut set
 * ssthresh to cwnd; the kernel runs tcp_slow_start() (cwnd below ssthresh:
 * one more segment per segment acknowledged, to at most ssthresh) after
 * each ACK.  Left at the cut window, ssthresh let slow start undo every
 * fall within an ACK (seen in reverse-path-full: the factor fell 16% in
 * 50 ms, cwnd stayed 34, and the ACKs the drained queue released were sent
 * into the forward queue).  With ssthresh following the fall, cwnd
 * halves as the rate needs.  In slow start (ssthresh above cwnd) and on
 * a rise ssthresh stays.
 */
TEST(a_fall_is_not_undone_by_slow_start)
{
	u32 follow;

	for (follow = 0; follow < 2; follow++) {
		struct flow f;
		u32 q, i, ssthresh = 80;

		flow_init(&f, 40, 50000);
		for (q = 0; q <= 50; q++)
			reverse_queue(&f, q);
		CHECK_NEAR(f.cwnd, 80, 1);
		ssthresh = f.cwnd;		/* a delay cut of nothing */
		for (q = 50; q-- > 0;) {
			f.in.srtt_us = 50000 + q * 1000;
			for (i = 0; i < 200; i++) {
				u32 before = f.cwnd;

				ack(&f, 20000, 50000 + q * 1000);
				if (follow)
					ssthresh = synctcp_revcomp_ssthresh(before,
									    f.cwnd,
									    ssthresh);
				if (f.cwnd < ssthresh)	/* tcp_slow_start() */
					f.cwnd = min_t(u32, f.cwnd + 1, ssthresh);
			}
		}
		if (follow)
			CHECK_NEAR(f.cwnd, 40, 1);
		else
			CHECK_NEAR(f.cwnd, 80, 1);
	}
	CHECK_EQ(synctcp_revcomp_ssthresh(40, 30, 1000), 1000); /* slow start */
	CHECK_EQ(synctcp_revcomp_ssthresh(40, 30, 40), 30);
	CHECK_EQ(synctcp_revcomp_ssthresh(40, 30, 20), 20);	/* below: stays */
	CHECK_EQ(synctcp_revcomp_ssthresh(40, 50, 40), 40);	/* a rise */
}

static const struct harness_test tests[] = {
	T(a_fall_is_not_undone_by_slow_start),
	T(ts_rounding_with_a_flat_rtt_does_not_move_cwnd),
	T(rate_is_kept_when_the_reverse_queue_grows_and_drains),
	T(rises_and_falls_do_not_ratchet),
	T(no_rise_unless_cwnd_limited),
	T(a_rise_is_at_most_twice_the_flight),
	T(total_factor_is_bounded),
	T(reverse_queue_is_bounded_by_what_the_rtt_shows),
	T(changes_below_a_tick_are_ignored),
	T(change_waits_while_cwnd_may_not_move),
	T(restart_withdraws_the_scaling),
	T(degenerate_inputs_change_nothing),
};

HARNESS_MAIN("revcomp", tests)
