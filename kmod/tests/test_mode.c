// SPDX-License-Identifier: GPL-2.0
/*
 * Variant "best"'s modes (core/mode.c): when a flow takes the queue for
 * loss-based neighbours', when it finds itself alone again, and when it
 * probes the base.
 */
#include "harness.h"
#include "mode.h"

#define MS	1000ULL
#define FULL_US	100000U		/* the full queue: 100 ms */
#define SRTT_US	100000U

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
		switch (synctcp_mode_sample(m, q, t * MS, SRTT_US, 25)) {
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

TEST(a_queue_standing_above_half_the_maximum_for_a_second_is_a_competitor)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 990, cubic, &enters, &probes);
	CHECK_EQ(enters, 0);
	feed(&m, &q, 990, 30, cubic, &enters, &probes);
	CHECK_EQ(enters, 1);
	CHECK(m.competing);
	CHECK_EQ(m.entries, 1);
	/* one sample below half the maximum starts the second over */
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 900, cubic, &enters, &probes);
	q.qdelay_us = 49000;
	CHECK_EQ(synctcp_mode_sample(&m, &q, 910 * MS, SRTT_US, 25),
		 SYNCTCP_MODE_NONE);
	feed(&m, &q, 920, 900, cubic, &enters, &probes);
	CHECK(!m.competing);
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
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 600000, 25),
			 SYNCTCP_MODE_NONE);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 2460 * MS, 600000, 25),
		 SYNCTCP_MODE_ENTER);
}

/* One alone-looking loss check, at @at ms: the queue dips to 0 after it. */
static enum synctcp_mode_event alone_loss(struct synctcp_mode *m,
					  struct synctcp_qdelay *q, u64 at)
{
	enum synctcp_mode_event e;

	synctcp_mode_loss(m, q, at * MS, SRTT_US, 50000);
	q->qdelay_us = 0;
	synctcp_mode_sample(m, q, (at + 100) * MS, SRTT_US, 25);
	q->qdelay_us = 70000;
	e = synctcp_mode_sample(m, q, (at + 310) * MS, SRTT_US, 25);
	return e;
}

/*
 * After a loss a flow alone (Reno's halving, B = 50 ms, M = 100 ms) leaves
 * (M - B) / 2 = 25 ms: within M / 8 of it, it is alone.  Next to CUBIC
 * the queue stays above 60 ms: it competes on.
 */
TEST(a_loss_that_leaves_the_queue_a_flow_alone_leaves_ends_competing)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 2000, cubic, &enters, &probes);
	CHECK(m.competing);
	synctcp_mode_loss(&m, &q, 2000 * MS, SRTT_US, 50000);
	CHECK_EQ(m.expect_us, 25000);
	CHECK_EQ(feed(&m, &q, 2000, 1000, cubic, &enters, &probes), 0);
	CHECK(m.competing);
	/* two such losses in a row: the first does not end it */
	CHECK_EQ(alone_loss(&m, &q, 2400), SYNCTCP_MODE_NONE);
	CHECK(m.competing);

	synctcp_mode_loss(&m, &q, 3000 * MS, SRTT_US, 50000);
	q.qdelay_us = 30000;	/* 25 ms + 5 ms: within 12.5 ms */
	CHECK_EQ(synctcp_mode_sample(&m, &q, 3100 * MS, SRTT_US, 25),
		 SYNCTCP_MODE_NONE);
	q.qdelay_us = 70000;
	CHECK_EQ(synctcp_mode_sample(&m, &q, 3290 * MS, SRTT_US, 25),
		 SYNCTCP_MODE_NONE);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 3310 * MS, SRTT_US, 25),
		 SYNCTCP_MODE_LEAVE);
	CHECK(!m.competing);
	/* the samples of the first half round trip do not count */
	feed(&m, &q, 4000, 2000, cubic, &enters, &probes);
	CHECK(m.competing);
	synctcp_mode_loss(&m, &q, 6000 * MS, SRTT_US, 50000);
	q.qdelay_us = 0;
	synctcp_mode_sample(&m, &q, 6040 * MS, SRTT_US, 25);
	q.qdelay_us = 70000;
	CHECK_EQ(feed(&m, &q, 6060, 400, cubic, &enters, &probes), 0);
	CHECK(m.competing);
}

/*
 * Two losses in a row that look alone end competing mode.  Back in it
 * within 30 s of leaving it: the losses it left on were shared by its
 * neighbours, and it takes four in a row (then eight) to leave again; a
 * stay of 30 s outside starts again from two.
 */
TEST(a_quick_return_to_competing_mode_doubles_the_losses_needed_to_leave)
{
	struct synctcp_qdelay q;
	struct synctcp_mode m;
	u32 enters = 0, probes = 0;
	u64 t;

	full_queue(&q);
	synctcp_mode_init(&m, true);
	feed(&m, &q, 0, 2000, cubic, &enters, &probes);
	CHECK(m.competing && m.need == 2);
	CHECK_EQ(alone_loss(&m, &q, 1500), SYNCTCP_MODE_NONE);
	CHECK_EQ(alone_loss(&m, &q, 2000), SYNCTCP_MODE_LEAVE);
	feed(&m, &q, 2400, 2000, cubic, &enters, &probes);
	CHECK(m.competing);
	CHECK_EQ(m.need, 4);
	CHECK_EQ(alone_loss(&m, &q, 4500), SYNCTCP_MODE_NONE);
	CHECK(m.competing);
	/* a loss its neighbours keep the queue through starts the count over */
	synctcp_mode_loss(&m, &q, 5000 * MS, SRTT_US, 50000);
	feed(&m, &q, 5000, 400, cubic, &enters, &probes);
	for (t = 5500; t < 7000; t += 500)
		CHECK_EQ(alone_loss(&m, &q, t), SYNCTCP_MODE_NONE);
	CHECK_EQ(alone_loss(&m, &q, 7000), SYNCTCP_MODE_LEAVE);
	CHECK(!m.competing);
	feed(&m, &q, 7400, 2000, cubic, &enters, &probes);
	CHECK_EQ(m.need, 8);
	for (t = 9500; t < 13000; t += 500)
		CHECK_EQ(alone_loss(&m, &q, t), SYNCTCP_MODE_NONE);
	CHECK_EQ(alone_loss(&m, &q, 13000), SYNCTCP_MODE_LEAVE);
	/* 20 s outside is a quick return still (at most 8); 30 s is not */
	feed(&m, &q, 13400, 20000, kin, &enters, &probes);
	CHECK(!m.competing);
	feed(&m, &q, 33400, 2000, cubic, &enters, &probes);
	CHECK(m.competing);
	CHECK_EQ(m.need, 8);
	for (t = 35500; t < 39500; t += 500)
		alone_loss(&m, &q, t);
	CHECK(!m.competing);
	feed(&m, &q, 39500, 30000, kin, &enters, &probes);
	CHECK(!m.competing);
	feed(&m, &q, 69500, 2000, cubic, &enters, &probes);
	CHECK(m.competing);
	CHECK_EQ(m.need, 2);
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

		e = synctcp_mode_sample(&m, &q, t * MS, SRTT_US, 25);
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
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 600000, 25),
			 SYNCTCP_MODE_NONE);
	q.loss_seen = true;
	for (t = 5000; t < 9790; t += 10)
		CHECK_EQ(synctcp_mode_sample(&m, &q, t * MS, 600000, 25),
			 SYNCTCP_MODE_NONE);
	CHECK_EQ(synctcp_mode_sample(&m, &q, 9810 * MS, 600000, 25),
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
	synctcp_mode_loss(&m, &q, 0, SRTT_US, 50000);
	CHECK(!m.checking);
}

static const struct harness_test tests[] = {
	T(flows_in_low_queue_mode_are_not_taken_for_competitors),
	T(a_queue_standing_above_half_the_maximum_for_a_second_is_a_competitor),
	T(without_compete_a_standing_queue_is_never_a_competitor),
	T(the_competitor_test_lasts_four_round_trips_on_long_paths),
	T(a_loss_that_leaves_the_queue_a_flow_alone_leaves_ends_competing),
	T(a_quick_return_to_competing_mode_doubles_the_losses_needed_to_leave),
	T(the_base_is_probed_first_after_two_seconds_then_after_ten_without_a_dip),
	T(no_mode_before_the_first_loss),
};

HARNESS_MAIN("mode", tests)
