// SPDX-License-Identifier: GPL-2.0
/*
 * SyncMix detection (Weigle 2003, section 3.5.5, Tables 3.1 and 3.2),
 * driven by queuing-delay traces through the real estimator (core/ott.c).
 */
#include "harness.h"
#include "ott.h"
#include "syncmix.h"

/* The OTT of an empty queue; samples are this plus their queuing delay. */
#define BASE_OTT_US	20000

struct rig {
	struct synctcp_qdelay q;
	struct synctcp_syncmix m;
	u32 preloss_max_us;
};

/* An estimator that knows min OTT and a max qdelay of @max_q_us. */
static void rig_init(struct rig *r, u32 max_q_us, bool seen_loss)
{
	synctcp_qdelay_init(&r->q, false);
	synctcp_qdelay_update(&r->q, BASE_OTT_US);
	synctcp_qdelay_update(&r->q, BASE_OTT_US + (s64)max_q_us);
	synctcp_syncmix_init(&r->m);
	if (seen_loss)
		synctcp_qdelay_on_loss(&r->q);
	r->preloss_max_us = SYNCTCP_MIX_PRELOSS_MAX_US;
}

/* One ACK carrying a sample of @qdelay_us; true on a new indication. */
static bool rig_sample(struct rig *r, u32 qdelay_us)
{
	synctcp_qdelay_update(&r->q, BASE_OTT_US + (s64)qdelay_us);
	return synctcp_syncmix_update(&r->m, &r->q, r->preloss_max_us);
}

/* Feed a trace; return how many samples gave a new indication. */
static int rig_trace(struct rig *r, const u32 *trace, size_t n)
{
	int fresh = 0;
	size_t i;

	for (i = 0; i < n; i++)
		fresh += rig_sample(r, trace[i]);
	return fresh;
}

/*
 * Six samples at @level (the average is then exactly @level and on its
 * 1/8 weight), then three that move the average by @d per sample:
 * sample = avg + 8 d.  Nine averages: L x6, L+d, L+2d, L+3d.
 */
static size_t step_trace(u32 *out, u32 level, int d)
{
	size_t i;

	for (i = 0; i < 6; i++)
		out[i] = level;
	out[6] = (u32)((int)level + 8 * d);
	out[7] = (u32)((int)level + 9 * d);
	out[8] = (u32)((int)level + 10 * d);
	return 9;
}

TEST(weights_are_table_3_1_exactly)
{
	static const u32 eighths[] = { 8, 8, 6, 4, 2, 1, 1, 1, 1, 1 };
	u32 n;

	for (n = 1; n <= 10; n++)
		CHECK_EQ(synctcp_syncmix_weight_eighths(n), eighths[n - 1]);
	CHECK_EQ(synctcp_syncmix_weight_eighths(1000000), 1);
}

TEST(average_bootstraps_with_weights_1_1_3q_1h_1q_then_1e)
{
	/* avg = (1 - w) avg + w q with w = 1, 1, 3/4, 1/2, 1/4, 1/8, 1/8 */
	static const u32 trace[] = { 8000, 16000, 0, 8000, 14000, 16000, 17000 };
	static const u32 avg[] = { 8000, 16000, 4000, 6000, 8000, 9000, 10000 };
	struct rig r;
	size_t i;

	rig_init(&r, 60000, true);
	for (i = 0; i < ARRAY_SIZE(trace); i++) {
		rig_sample(&r, trace[i]);
		CHECK_EQ(synctcp_syncmix_avg_us(&r.m), avg[i]);
	}
	/* one more 1/8 step keeps the fraction: 10000 + 1/8 us */
	rig_sample(&r, 10001);
	CHECK_EQ(r.m.avg_fp, (10000ULL << SYNCTCP_MIX_AVG_SHIFT) +
			     (1ULL << (SYNCTCP_MIX_AVG_SHIFT - 3)));
	CHECK_EQ(synctcp_syncmix_avg_us(&r.m), 10000);
}

TEST(average_is_not_started_from_zero)
{
	struct rig r;

	rig_init(&r, 60000, true);
	rig_sample(&r, 30000);
	CHECK_EQ(synctcp_syncmix_avg_us(&r.m), 30000);
}

TEST(first_eight_averages_are_not_enough_samples)
{
	struct rig r;
	u32 i;

	rig_init(&r, 60000, true);
	for (i = 1; i <= 8; i++) {
		CHECK(!rig_sample(&r, i * 4000));	/* a steep rise */
		CHECK_EQ(r.m.trend, SYNCTCP_MIX_NONE);
	}
	CHECK(rig_sample(&r, 36000));
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
}

TEST(new_indication_every_three_samples)
{
	struct rig r;
	u32 i;

	rig_init(&r, 60000, true);
	for (i = 1; i <= 30; i++) {
		bool fresh = rig_sample(&r, i * 1000);

		CHECK_EQ(fresh, i >= 9 && i % 3 == 0);
	}
}

TEST(median_of_three)
{
	CHECK_EQ(synctcp_median3(1, 2, 3), 2);
	CHECK_EQ(synctcp_median3(3, 2, 1), 2);
	CHECK_EQ(synctcp_median3(2, 3, 1), 2);
	CHECK_EQ(synctcp_median3(1, 3, 2), 2);
	CHECK_EQ(synctcp_median3(5, 5, 1), 5);
	CHECK_EQ(synctcp_median3(0, 0xFFFFFFFFu, 7), 7);
}

TEST(increasing_when_m0_below_m2)
{
	u32 trace[9];
	struct rig r;

	rig_init(&r, 40000, true);
	CHECK_EQ(rig_trace(&r, trace, step_trace(trace, 10000, 500)), 1);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
}

TEST(decreasing_when_m0_above_m2)
{
	u32 trace[9];
	struct rig r;

	rig_init(&r, 40000, true);
	CHECK_EQ(rig_trace(&r, trace, step_trace(trace, 10000, -500)), 1);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_DECREASING);
}

TEST(equal_medians_without_earlier_trend_give_no_indication)
{
	struct rig r;
	int i;

	rig_init(&r, 40000, true);
	for (i = 0; i < 30; i++)
		CHECK(!rig_sample(&r, 5000));
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_NONE);
	CHECK(r.m.last_flat);
	CHECK_EQ(r.m.flat_trends, (30 - 9) / 3 + 1);
}

TEST(equal_medians_keep_the_indication_in_force_and_are_not_new)
{
	u32 trace[9], avg;
	struct rig r;
	int i, fresh = 0;

	rig_init(&r, 40000, true);
	CHECK_EQ(rig_trace(&r, trace, step_trace(trace, 14000, 500)), 1);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R25_50);
	/* the average stays where it is: samples equal to it */
	avg = synctcp_syncmix_avg_us(&r.m);
	for (i = 0; i < 6; i++)
		fresh += rig_sample(&r, avg);
	CHECK_EQ(fresh, 2);	/* the rise is still in the window */
	CHECK(!r.m.last_flat);
	/* from the 9th such sample on, the window is nine equal averages */
	for (i = 0; i < 15; i++)
		CHECK(!rig_sample(&r, avg));
	CHECK(r.m.last_flat);
	CHECK_EQ(r.m.flat_trends, 5);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R25_50);
	/* a real change is a new indication again */
	for (i = 0; i < 3; i++)
		fresh += rig_sample(&r, avg - 8000);
	CHECK_EQ(fresh, 3);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_DECREASING);
	CHECK(!r.m.last_flat);
}

/* Region of the average after step_trace(level, d), max qdelay 40 ms. */
static u8 region_after_step(u32 level, int d)
{
	u32 trace[9];
	struct rig r;

	rig_init(&r, 40000, true);
	CHECK_EQ(rig_trace(&r, trace, step_trace(trace, level, d)), 1);
	return r.m.region;
}

TEST(region_is_average_as_quarter_of_max_qdelay)
{
	/* final averages 5.5, 15.5, 25.5, 35.5 ms of 40 ms */
	CHECK_EQ(region_after_step(4000, 500), SYNCTCP_MIX_R0_25);
	CHECK_EQ(region_after_step(14000, 500), SYNCTCP_MIX_R25_50);
	CHECK_EQ(region_after_step(24000, 500), SYNCTCP_MIX_R50_75);
	CHECK_EQ(region_after_step(34000, 500), SYNCTCP_MIX_R75_100);
}

TEST(region_boundary_belongs_to_the_upper_region)
{
	/* final averages exactly 10, 20, 30 ms of 40 ms; and just below */
	CHECK_EQ(region_after_step(8500, 500), SYNCTCP_MIX_R25_50);
	CHECK_EQ(region_after_step(8499, 500), SYNCTCP_MIX_R0_25);
	CHECK_EQ(region_after_step(18500, 500), SYNCTCP_MIX_R50_75);
	CHECK_EQ(region_after_step(28500, 500), SYNCTCP_MIX_R75_100);
	CHECK_EQ(region_after_step(28499, 500), SYNCTCP_MIX_R50_75);
}

TEST(region_75_100_when_average_nears_a_growing_max)
{
	struct rig r;
	u32 trace[9];

	/* the step raises max qdelay to its last sample: avg < max */
	rig_init(&r, 0, true);
	rig_trace(&r, trace, step_trace(trace, 36000, 500));
	CHECK_EQ(r.q.max_qdelay_us, 41000);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R75_100);
}

/*
 * Before a loss, with max qdelay 8 ms: a rise from 2 ms whose last two
 * samples are @a then @b.  The average is ~2.4 ms (30% of max: 25-50%).
 */
static u8 preloss_region(u32 a, u32 b, bool seen_loss, u32 max_q_us)
{
	const u32 trace[] = { 2000, 2000, 2000, 2000, 2000, 2000, 3000, a, b };
	struct rig r;

	rig_init(&r, max_q_us, seen_loss);
	CHECK_EQ(rig_trace(&r, trace, 9), 1);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
	return r.m.region;
}

TEST(preloss_small_max_region_is_change_of_last_two_qdelays)
{
	/* |b - a| as a share of max(a, b) */
	CHECK_EQ(preloss_region(5000, 6000, false, 8000), SYNCTCP_MIX_R0_25);
	CHECK_EQ(preloss_region(4000, 6000, false, 8000), SYNCTCP_MIX_R25_50);
	CHECK_EQ(preloss_region(2500, 6000, false, 8000), SYNCTCP_MIX_R50_75);
	CHECK_EQ(preloss_region(1000, 6000, false, 8000), SYNCTCP_MIX_R75_100);
	/* the denominator is the larger sample, also when qdelay falls */
	CHECK_EQ(preloss_region(6000, 5000, false, 8000), SYNCTCP_MIX_R0_25);
	CHECK_EQ(preloss_region(6000, 0, false, 8000), SYNCTCP_MIX_R75_100);
}

TEST(preloss_change_of_exactly_25pct_is_region_25_50)
{
	CHECK_EQ(preloss_region(3000, 4000, false, 8000), SYNCTCP_MIX_R25_50);
	CHECK_EQ(preloss_region(4000, 3000, false, 8000), SYNCTCP_MIX_R25_50);
	CHECK_EQ(preloss_region(3001, 4000, false, 8000), SYNCTCP_MIX_R0_25);
}

TEST(preloss_two_zero_qdelays_are_no_change)
{
	const u32 trace[] = { 4000, 4000, 4000, 4000, 4000, 4000, 0, 0, 0 };
	struct rig r;

	rig_init(&r, 4000, false);
	CHECK_EQ(rig_trace(&r, trace, 9), 1);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_DECREASING);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R0_25);
}

TEST(after_first_loss_region_is_average_over_max)
{
	/* the same trace as the pre-loss 0-25% case */
	CHECK_EQ(preloss_region(5000, 6000, true, 8000), SYNCTCP_MIX_R25_50);
}

TEST(preloss_max_of_10ms_or_more_gives_average_over_max)
{
	/* no loss, but max qdelay reached 10 ms: avg 2.486 ms is 0-25% */
	CHECK_EQ(preloss_region(1000, 6000, false, 10000), SYNCTCP_MIX_R0_25);
	/* just below 10 ms the change decides */
	CHECK_EQ(preloss_region(1000, 6000, false, 9999), SYNCTCP_MIX_R75_100);
}

TEST(preloss_floor_is_a_parameter)
{
	const u32 trace[] = { 2000, 2000, 2000, 2000, 2000, 2000, 3000, 1000, 6000 };
	struct rig r;

	rig_init(&r, 8000, false);
	r.preloss_max_us = 0;	/* max qdelay always trusted */
	rig_trace(&r, trace, 9);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R25_50);
}

TEST(restart_after_rto_bootstraps_weights_again)
{
	struct rig r;
	int i;

	rig_init(&r, 60000, true);
	for (i = 0; i < 20; i++)
		rig_sample(&r, 1000 * (u32)i);
	synctcp_syncmix_restart(&r.m);
	/* w = 1, 1, 3/4 again */
	rig_sample(&r, 8000);
	CHECK_EQ(synctcp_syncmix_avg_us(&r.m), 8000);
	rig_sample(&r, 16000);
	CHECK_EQ(synctcp_syncmix_avg_us(&r.m), 16000);
	rig_sample(&r, 0);
	CHECK_EQ(synctcp_syncmix_avg_us(&r.m), 4000);
}

TEST(restart_after_rto_needs_nine_new_averages)
{
	struct rig r;
	u32 i;

	rig_init(&r, 60000, true);
	for (i = 1; i <= 20; i++)
		rig_sample(&r, 1000 * i);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
	synctcp_syncmix_restart(&r.m);
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_NONE);
	for (i = 1; i <= 8; i++) {
		CHECK(!rig_sample(&r, 30000 - 1000 * i));
		CHECK_EQ(r.m.trend, SYNCTCP_MIX_NONE);
	}
	CHECK(rig_sample(&r, 21000));
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_DECREASING);
}

TEST(restart_after_rto_keeps_the_loss)
{
	const u32 trace[] = { 2000, 2000, 2000, 2000, 2000, 2000, 3000, 5000, 6000 };
	struct rig r;

	rig_init(&r, 8000, true);
	synctcp_syncmix_restart(&r.m);
	CHECK(r.q.loss_seen);
	/* average over max (36%), not the pre-loss change (17%) */
	CHECK_EQ(rig_trace(&r, trace, 9), 1);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R25_50);
}

TEST(no_overflow_with_huge_delays)
{
	struct rig r;
	u32 i;

	rig_init(&r, 0xFFFFFFF0u, true);
	for (i = 0; i < 30; i++)
		rig_sample(&r, 0xFFFFFF00u - 0x10000u * (30 - i));
	CHECK_EQ(r.m.trend, SYNCTCP_MIX_INCREASING);
	CHECK_EQ(r.m.region, SYNCTCP_MIX_R75_100);
	CHECK(synctcp_syncmix_avg_us(&r.m) <= r.q.max_qdelay_us);
}

static const struct harness_test tests[] = {
	T(weights_are_table_3_1_exactly),
	T(average_bootstraps_with_weights_1_1_3q_1h_1q_then_1e),
	T(average_is_not_started_from_zero),
	T(first_eight_averages_are_not_enough_samples),
	T(new_indication_every_three_samples),
	T(median_of_three),
	T(increasing_when_m0_below_m2),
	T(decreasing_when_m0_above_m2),
	T(equal_medians_without_earlier_trend_give_no_indication),
	T(equal_medians_keep_the_indication_in_force_and_are_not_new),
	T(region_is_average_as_quarter_of_max_qdelay),
	T(region_boundary_belongs_to_the_upper_region),
	T(region_75_100_when_average_nears_a_growing_max),
	T(preloss_small_max_region_is_change_of_last_two_qdelays),
	T(preloss_change_of_exactly_25pct_is_region_25_50),
	T(preloss_two_zero_qdelays_are_no_change),
	T(after_first_loss_region_is_average_over_max),
	T(preloss_max_of_10ms_or_more_gives_average_over_max),
	T(preloss_floor_is_a_parameter),
	T(restart_after_rto_bootstraps_weights_again),
	T(restart_after_rto_needs_nine_new_averages),
	T(restart_after_rto_keeps_the_loss),
	T(no_overflow_with_huge_delays),
};

HARNESS_MAIN("syncmix", tests)
