// SPDX-License-Identifier: GPL-2.0
/*
 * Variant "best"'s modes (core/mode.c): when a flow takes the queue for
 * loss-based neighbours', when its epoch drains find it alone or among its
 * own kind again, and when it probes the base.
 */
#include "harness.h"
#include "mode.h"

#define MS	1000ULL
#define FULL_US	100000U		/* the full queue: 100 ms */
#define SRTT_US	100000U
/* CLOCK_REALTIME at local time 0: a multiple of the 10 s epoch */
#define WALL0_NS	(1796000000ULL * 1000000000ULL)

/* An estimator that has seen a full queue of FULL_US and a loss. */
static void full_queue(struct synctcp_qdelay *q)
{
	synctcp_qdelay_init(q, false);
	q->min_ott_us = 0;
	q->max_ott_us = FULL_US;
	q->max_qdelay_us = FULL_US;
	q->loss_max_us = FULL_US;
	q->loss_seen = true;
}

/* Samples every 10 ms from @t_ms for @len_ms, queuing delay @f(t). */
static u32 feed(struct synctcp_mode *m, struct synctcp_qdelay *q, u64 t_ms,
		u64 len_ms, u32 (*f)(u64 t_ms), u32 *enters, u32 *probes)
{
	u32 leaves = 0;
	u64 t;

	for (t = t_ms; t < t_ms + len_ms; t += 10) {
		q->qdelay_us = f(t);
		switch (synctcp_mode_sample(m, q, t * MS, WALL0_NS + t * MS * 1000,
					    SRTT_US, 25)) {
		case SYNCTCP_MODE_ENTER:
			(*enters)++;
			break;
		case SYNCTCP_MODE_PROBE:
			(*probes)++;
			break;
		case SYNCTCP_MODE_LEAVE:
			leaves++;
			break;
		default:
			break;
		}
	}
	return leaves;
}

/* Flows in low-queue mode: around the threshold (25 ms), dips each second. */
static u32 kin(u64 t_ms)
{
	u32 phase = (u32)(t_ms % 1000);

	return phase < 100 ? 5000 : 20000 + (phase % 300) * 30;
}

/* A CUBIC neighbour: the queue between 60% and full, a loss every 5 s. */
static u32 cubic(u64 t_ms)
{
	return 60000 + (u32)(t_ms % 5000) * 8;
}

static u32 empty(u64 t_ms)
{
	return (u32)(t_ms % 2) * 1000;
}

TEST(flows_in_low_queue_mode_are_not_taken_for_competitors)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 120000, kin, &enters, &probes);
	CHECK_EQ(enters, 0);
	/* the first probe only: it dipped below T / 4 every second */
	CHECK_EQ(probes, 1);
	CHECK(!m.competing);
}

/*
 * Samples every 10 ms from @t_ms for @len_ms, as the glue feeds them: the
 * queue @busy_us, but @dip_us while the flow drains when @kin (its own
 * kind drains with it and the queue empties).  Returns the last event
 * other than NONE; counts drains and leaves.
 */
static enum synctcp_mode_event drains(struct synctcp_mode *m,
				      struct synctcp_qdelay *q, u64 t_ms,
				      u64 len_ms, u32 busy_us, bool kin,
				      u32 *n_drains, u32 *leaves)
{
	enum synctcp_mode_event last = SYNCTCP_MODE_NONE, e;
	u64 t;

	for (t = t_ms; t < t_ms + len_ms; t += 10) {
		q->qdelay_us = kin && m->draining ? 0 : busy_us;
		e = synctcp_mode_sample(m, q, t * MS, WALL0_NS + t * MS * 1000,
					SRTT_US, 25);
		if (e == SYNCTCP_MODE_DRAIN)
			(*n_drains)++;
		if (e == SYNCTCP_MODE_LEAVE)
			(*leaves)++;
		if (e != SYNCTCP_MODE_NONE)
			last = e;
	}
	return last;
}

/*
 * A queue that stood above half the maximum for a second makes the flow a
 * candidate; the next epoch's drain decides: without a dip (CUBIC holds
 * the queue) it competes from the drain's end, with one (its own kind
 * drained with it) it stays out.
 */
TEST(a_queue_standing_above_half_the_maximum_for_a_second_is_a_candidate)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0, n = 0, leaves = 0;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 990, cubic, &enters, &probes);
	CHECK(!m.candidate);
	feed(&m, &q, 990, 30, cubic, &enters, &probes);
	CHECK(m.candidate && !m.competing);
	feed(&m, &q, 1020, 9480, cubic, &enters, &probes);	/* to 10.5 s */
	CHECK_EQ(enters, 0);
	CHECK(m.draining);
	feed(&m, &q, 10500, 100, cubic, &enters, &probes);
	CHECK_EQ(enters, 1);
	CHECK(m.competing && !m.candidate);
	CHECK_EQ(m.entries, 1);
	CHECK_EQ(m.drains, 1);
	/* the drain's dip keeps the candidate out */
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 1020, cubic, &enters, &probes);
	CHECK(m.candidate);
	drains(&m, &q, 1020, 9580, 70000, true, &n, &leaves);
	CHECK(!m.candidate && !m.competing);
	CHECK_EQ(n, 1);
	CHECK_EQ(enters, 1);
	/* one sample below half the maximum starts the second over */
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 900, cubic, &enters, &probes);
	q.qdelay_us = 49000;
	CHECK_EQ(synctcp_mode_sample(&m, &q, 910 * MS, 0, SRTT_US, 25),
		 SYNCTCP_MODE_NONE);
	feed(&m, &q, 920, 900, cubic, &enters, &probes);
	CHECK(!m.candidate);
}

TEST(without_compete_a_standing_queue_is_never_a_competitor)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;

	full_queue(&q);
	synctcp_mode_init(&m, false);
	feed(&m, &q, 0, 60000, cubic, &enters, &probes);
	CHECK_EQ(enters, 0);
	CHECK(!m.competing);
	CHECK(probes > 0);		/* the base probe stays on */
}

/* Four round trips when they are longer than a second. */
TEST(the_competitor_test_lasts_four_round_trips_on_long_paths)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u64 t;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	q.qdelay_us = 90000;
	for (t = 0; t < 2390; t += 10)
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 0, 600000, 25),
			 SYNCTCP_MODE_NONE);
	CHECK(!m.candidate);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 2460 * MS, 0, 600000, 25),
		 SYNCTCP_MODE_NONE);
	CHECK(m.candidate);
}

/*
 * In competing mode the flow drains at each 10 s epoch of the wall clock,
 * for max(500 ms, 2 srtt), cwnd held at 2, then takes its window back.
 * Among its own kind the queue empties in the drain: two such drains in
 * a row end competing mode, with half the window.  Next to CUBIC it does
 * not: the flow competes on.
 */
TEST(epoch_drains_end_competing_mode_among_the_flows_own_kind)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0, n = 0, leaves = 0;
	u64 t;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 11000, cubic, &enters, &probes);
	CHECK(m.competing && m.epoch_end_ns);
	/* next to CUBIC: a drain every 10 s, no dip, no leave */
	drains(&m, &q, 11000, 29000, 70000, false, &n, &leaves);
	CHECK_EQ(n, 2);
	CHECK_EQ(m.drains, 3);			/* and the candidate's */
	CHECK_EQ(leaves, 0);
	CHECK(m.competing);
	/* the drain starts on the epoch and holds cwnd at 2 for 500 ms */
	q.qdelay_us = 70000;
	CHECK_EQ(synctcp_mode_sample(&m, &q, 40000 * MS, WALL0_NS + 40000 * MS * 1000,
				     SRTT_US, 25), SYNCTCP_MODE_DRAIN);
	CHECK_EQ(synctcp_mode_cwnd(&m, 40000 * MS, 60), 2);
	CHECK_EQ(synctcp_mode_cwnd(&m, 40010 * MS, 2), 2);
	for (t = 40010; t < 40500; t += 10)
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, WALL0_NS + t * MS * 1000,
					     SRTT_US, 25), SYNCTCP_MODE_NONE);
	CHECK(m.draining);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 40520 * MS, WALL0_NS + 40520 * MS * 1000,
				     SRTT_US, 25), SYNCTCP_MODE_NONE);
	CHECK(!m.draining);
	CHECK_EQ(synctcp_mode_cwnd(&m, 40520 * MS, 2), 60);	/* back */
	CHECK_EQ(synctcp_mode_cwnd(&m, 40530 * MS, 61), 61);
	/* among its own kind: the first drain with a dip does not end it */
	n = 0;
	CHECK_EQ(drains(&m, &q, 40530, 9470, 70000, true, &n, &leaves),
		 SYNCTCP_MODE_NONE);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 50000 * MS, WALL0_NS + 50000 * MS * 1000,
				     SRTT_US, 25), SYNCTCP_MODE_DRAIN);
	CHECK_EQ(synctcp_mode_cwnd(&m, 50000 * MS, 61), 2);
	CHECK_EQ(drains(&m, &q, 50010, 9990, 70000, true, &n, &leaves),
		 SYNCTCP_MODE_NONE);
	CHECK(m.competing);
	CHECK_EQ(m.alone, 1);
	CHECK_EQ(synctcp_mode_cwnd(&m, 51000 * MS, 2), 61);
	/* the second does, and the window comes back halved */
	CHECK_EQ(drains(&m, &q, 60000, 10, 70000, true, &n, &leaves),
		 SYNCTCP_MODE_DRAIN);
	CHECK_EQ(synctcp_mode_cwnd(&m, 60000 * MS, 61), 2);
	drains(&m, &q, 60010, 590, 70000, true, &n, &leaves);
	CHECK_EQ(leaves, 1);
	CHECK(!m.competing);
	CHECK_EQ(synctcp_mode_cwnd(&m, 60600 * MS, 2), 30);
	CHECK_EQ(synctcp_mode_cwnd(&m, 60610 * MS, 2), 2);
	/* a drain without a dip starts the count over */
	feed(&m, &q, 70000, 11000, cubic, &enters, &probes);
	CHECK(m.competing);
	n = 0;
	drains(&m, &q, 81000, 9500, 70000, true, &n, &leaves);	/* 90 s: dip */
	drains(&m, &q, 90500, 10000, 70000, false, &n, &leaves); /* 100 s: none */
	drains(&m, &q, 100500, 10000, 70000, true, &n, &leaves); /* 110 s: dip */
	CHECK(m.competing);
	CHECK_EQ(leaves, 1);
	CHECK_EQ(n, 3);
}

/*
 * Two drains in a row with a dip end competing mode.  Back in it within
 * 30 s of leaving it: its neighbours allowed those dips, and it takes four
 * in a row (then eight) to leave again; a stay of 30 s outside starts
 * again from two.
 */
TEST(a_quick_return_to_competing_mode_doubles_the_drains_needed_to_leave)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0, n = 0, leaves = 0;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 11000, cubic, &enters, &probes);	/* in at 10.5 s */
	CHECK(m.competing && m.need == 2);
	drains(&m, &q, 11000, 20000, 70000, true, &n, &leaves);
	CHECK_EQ(leaves, 1);			/* 20, 30 s */
	CHECK(!m.competing);
	feed(&m, &q, 31000, 11000, cubic, &enters, &probes);	/* in at 40.5 s */
	CHECK(m.competing);
	CHECK_EQ(m.need, 4);
	drains(&m, &q, 42000, 37000, 70000, true, &n, &leaves);
	CHECK_EQ(leaves, 1);			/* 50, 60, 70 s */
	drains(&m, &q, 79000, 2000, 70000, true, &n, &leaves);
	CHECK_EQ(leaves, 2);			/* 80 s */
	CHECK(!m.competing);
	feed(&m, &q, 81000, 11000, cubic, &enters, &probes);	/* in at 90.5 s */
	CHECK_EQ(m.need, 8);
	drains(&m, &q, 92000, 79000, 70000, true, &n, &leaves);
	CHECK_EQ(leaves, 3);			/* 100 .. 170 s */
	/* 20 s outside is a quick return still (at most 8); 30 s is not */
	feed(&m, &q, 171000, 15000, kin, &enters, &probes);
	CHECK(!m.competing);
	feed(&m, &q, 186000, 5000, cubic, &enters, &probes);	/* in at 190.5 s */
	CHECK(m.competing);
	CHECK_EQ(m.need, 8);
	drains(&m, &q, 191000, 80000, 70000, true, &n, &leaves);
	CHECK_EQ(leaves, 4);			/* 200 .. 270 s */
	CHECK(!m.competing);
	feed(&m, &q, 271000, 30000, kin, &enters, &probes);
	CHECK(!m.competing);
	feed(&m, &q, 301000, 11000, cubic, &enters, &probes);	/* in at 310.5 s */
	CHECK(m.competing);
	CHECK_EQ(m.need, 2);
}

/*
 * A drain of 2 srtt that would take more than 1/20 of the time drains on
 * every 2^k-th epoch only: srtt 600 ms, 1.2 s, every fourth (40 s).  A
 * drain no sample ends is over after twice its length, without a verdict;
 * without the wall clock there is none.
 */
TEST(long_paths_drain_on_every_2k_th_epoch_and_drains_end)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 drained = 0;
	u64 t;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	q.qdelay_us = 90000;
	for (t = 0; t < 200000; t += 10) {
		enum synctcp_mode_event e;

		e = synctcp_mode_sample(&m, &q, t * MS, WALL0_NS + t * MS * 1000,
					600000, 25);
		if (e == SYNCTCP_MODE_DRAIN) {
			CHECK_EQ(t % 40000, 0);
			drained++;
		}
	}
	CHECK(m.competing);
	CHECK_EQ(drained, 4);			/* 40, 80, 120, 160 s */
	CHECK_EQ(m.drain_hold, 1171);		/* 1.2 s, us >> 10 */
	/* the drain of 200 s, with no sample after it began */
	t = 200000;
	CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, WALL0_NS + t * MS * 1000, 600000,
				     25), SYNCTCP_MODE_DRAIN);
	CHECK_EQ(synctcp_mode_cwnd(&m, t * MS, 50), 2);
	CHECK_EQ(synctcp_mode_cwnd(&m, (t + 2300) * MS, 2), 2);
	CHECK_EQ(synctcp_mode_cwnd(&m, (t + 2420) * MS, 2), 50);
	CHECK(!m.draining && m.competing);
	/* no wall clock, no drain, and a candidate stays one */
	synctcp_mode_init(&m, true);
	for (t = 0; t < 100000; t += 10)
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 0, SRTT_US, 25),
			 SYNCTCP_MODE_NONE);
	CHECK(m.candidate && !m.competing && !m.drains);
}

/*
 * A loss while the drain holds the window (or before it is given back)
 * halves what comes back, or the drain would undo the kernel's cut.  A
 * wall clock stepped back an hour is no drain of its own (the other hosts
 * did not step): the drains go on at the new time's epochs, not an hour
 * later.
 */
TEST(a_loss_in_a_drain_halves_what_comes_back_and_a_clock_step_keeps_the_drains)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0, n = 0, leaves = 0;
	const u64 back_ns = 3600ULL * 1000000000ULL;
	u64 t;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 11000, cubic, &enters, &probes);
	CHECK(m.competing);
	q.qdelay_us = 70000;
	CHECK_EQ(synctcp_mode_sample(&m, &q, 20000 * MS, WALL0_NS + 20000 * MS * 1000,
				     SRTT_US, 25), SYNCTCP_MODE_DRAIN);
	CHECK_EQ(synctcp_mode_cwnd(&m, 20000 * MS, 60), 2);
	synctcp_mode_loss(&m);
	drains(&m, &q, 20010, 600, 70000, false, &n, &leaves);
	CHECK_EQ(synctcp_mode_cwnd(&m, 20610 * MS, 2), 30);
	/* no drain saved: a loss changes nothing */
	synctcp_mode_loss(&m);
	CHECK_EQ(synctcp_mode_cwnd(&m, 20620 * MS, 25), 25);
	/* the clock stepped back an hour at 25 s: a drain at 30 s local
	 * (the new time's epoch), and 10 s later
	 */
	n = 0;
	for (t = 25000; t < 41000; t += 10) {
		if (synctcp_mode_sample(&m, &q, t * MS,
					WALL0_NS + t * MS * 1000 - back_ns,
					SRTT_US, 25) == SYNCTCP_MODE_DRAIN) {
			CHECK(t == 30000 || t == 40000);
			n++;
		}
	}
	CHECK_EQ(n, 2);
}

TEST(the_base_is_probed_first_after_two_seconds_then_after_ten_without_a_dip)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;
	u64 t;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	q.qdelay_us = 20000;	/* below the competitor level, above T / 4 */
	for (t = 0; t < 30000; t += 10) {
		enum synctcp_mode_event e;

		e = synctcp_mode_sample(&m, &q, t * MS, 0, SRTT_US, 25);
		if (e == SYNCTCP_MODE_PROBE)
			probes++;
		/* the first 2 s after the detector came on, then 10 s apart */
		if (t == 2000 || t == 12000 || t == 22000)
			CHECK_EQ(e, SYNCTCP_MODE_PROBE);
	}
	CHECK_EQ(probes, 3);
	CHECK_EQ(m.probes, 3);
	/* dips reset the wait, not the first probe's */
	synctcp_mode_init(&m, true);
	probes = 0;
	feed(&m, &q, 0, 60000, empty, &enters, &probes);
	CHECK_EQ(probes, 1);
	CHECK_EQ(enters, 0);
	/* the first probe counts from the first loss, 8 RTTs on long paths */
	synctcp_mode_init(&m, true);
	q.loss_seen = false;
	for (t = 0; t < 5000; t += 10)
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 0, 600000, 25),
			 SYNCTCP_MODE_NONE);
	q.loss_seen = true;
	for (t = 5000; t < 9790; t += 10)
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 0, 600000, 25),
			 SYNCTCP_MODE_NONE);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 9810 * MS, 0, 600000, 25),
		 SYNCTCP_MODE_PROBE);
}

/* Nothing happens before a loss has shown what a full queue is. */
TEST(no_mode_before_the_first_loss)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;

	full_queue(&q);
	q.loss_seen = false;
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 60000, cubic, &enters, &probes);
	CHECK_EQ(enters, 0);
	CHECK_EQ(probes, 0);
	CHECK(!m.competing && !m.drains);
}

static const struct harness_test tests[] = {
	T(flows_in_low_queue_mode_are_not_taken_for_competitors),
	T(a_queue_standing_above_half_the_maximum_for_a_second_is_a_candidate),
	T(without_compete_a_standing_queue_is_never_a_competitor),
	T(the_competitor_test_lasts_four_round_trips_on_long_paths),
	T(epoch_drains_end_competing_mode_among_the_flows_own_kind),
	T(a_quick_return_to_competing_mode_doubles_the_drains_needed_to_leave),
	T(long_paths_drain_on_every_2k_th_epoch_and_drains_end),
	T(a_loss_in_a_drain_halves_what_comes_back_and_a_clock_step_keeps_the_drains),
	T(the_base_is_probed_first_after_two_seconds_then_after_ten_without_a_dip),
	T(no_mode_before_the_first_loss),
};

HARNESS_MAIN("mode", tests)
