// SPDX-License-Identifier: GPL-2.0
/*
 * Sync-TCP(MixReact) = SyncMix detection + SyncMixReact reaction
 * (Weigle 2003, sections 3.5.5 and 3.6.2, Figure 3.16).  Each table cell
 * is reached by a queuing-delay trace through the real estimator and
 * detector, as the module drives them.
 */
#include "harness.h"
#include "ott.h"
#include "syncmix.h"
#include "mixreact.h"

/* The OTT of an empty queue; samples are this plus their queuing delay. */
#define BASE_OTT_US	20000
/* Max qdelay of the test path (after a loss): regions every 10 ms. */
#define MAX_Q_US	40000
#define NO_CLAMP	0xFFFFFFFFu

struct flow {
	struct synctcp_qdelay q;
	struct synctcp_syncmix m;
	struct synctcp_mixreact r;
	struct synctcp_cwnd w;
	u32 clamp;
};

static void flow_init(struct flow *f, u32 cwnd)
{
	synctcp_qdelay_init(&f->q, false);
	synctcp_qdelay_update(&f->q, BASE_OTT_US);
	synctcp_qdelay_update(&f->q, BASE_OTT_US + MAX_Q_US);
	synctcp_syncmix_init(&f->m);
	synctcp_qdelay_on_loss(&f->q);
	synctcp_mixreact_reset(&f->r);
	f->r.increases = 0;
	f->r.decreases = 0;
	f->w.cwnd = cwnd;
	f->w.ssthresh = 0x7FFFFFFF;
	f->clamp = NO_CLAMP;
}

/*
 * One ACK of @acked segments carrying a @qdelay_us sample, in the order of
 * tcp_mixreact: sample -> SyncMix -> on a new indication, decide -> grow.
 * Return: true if the ACK brought a decision.
 */
static bool flow_ack(struct flow *f, u32 qdelay_us, u32 acked)
{
	bool fresh;

	synctcp_qdelay_update(&f->q, BASE_OTT_US + (s64)qdelay_us);
	fresh = synctcp_syncmix_update(&f->m, &f->q, SYNCTCP_MIX_PRELOSS_MAX_US);
	if (fresh)
		synctcp_mixreact_decide(&f->r, f->m.trend, f->m.region, &f->w,
					f->clamp);
	if (!synctcp_mixreact_follows_reno(&f->r))
		synctcp_mixreact_grow(&f->r, acked, &f->w, f->clamp);
	return fresh;
}

/* An ACK without an OTT sample (the decision in force continues). */
static void flow_ack_no_sample(struct flow *f, u32 acked)
{
	if (!synctcp_mixreact_follows_reno(&f->r))
		synctcp_mixreact_grow(&f->r, acked, &f->w, f->clamp);
}

/*
 * Six samples at @level, then three that move the average by @d each
 * (sample = avg + 8 d): nine averages ending at level + 3 d, with
 * m0 = level and m2 = level + 2 d.  The ACKs acknowledge nothing new, so
 * that only the decision on the last one changes cwnd.
 */
static bool flow_step(struct flow *f, u32 level, int d)
{
	int i;

	for (i = 0; i < 6; i++)
		CHECK(!flow_ack(f, level, 0));
	CHECK(!flow_ack(f, (u32)((int)level + 8 * d), 0));
	CHECK(!flow_ack(f, (u32)((int)level + 9 * d), 0));
	return flow_ack(f, (u32)((int)level + 10 * d), 0);
}

/* One RTT of ACKs at the decision in force: @segments ACKs of one segment. */
static void flow_rtt(struct flow *f, u32 segments)
{
	u32 i;

	for (i = 0; i < segments; i++)
		flow_ack_no_sample(f, 1);
}

/* Trends: rising (+0.5 ms per sample) or falling averages.  Levels place
 * the final average mid-region: 5.5, 15.5, 25.5, 35.5 ms (rising) and
 * 4.5, 14.5, 24.5, 34.5 ms (falling) of a 40 ms max.
 */
#define UP	500
#define DOWN	(-500)

TEST(increasing_0_25_adds_one_segment_per_rtt)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 4000, UP));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_1);
	CHECK_EQ(f.w.cwnd, 40);
	flow_rtt(&f, 39);
	CHECK_EQ(f.w.cwnd, 40);
	flow_rtt(&f, 1);
	CHECK_EQ(f.w.cwnd, 41);
	flow_rtt(&f, 41);
	CHECK_EQ(f.w.cwnd, 42);
	CHECK_EQ(f.r.increases, 1);
	CHECK_EQ(f.r.decreases, 0);
}

TEST(increasing_25_50_cuts_cwnd_to_90pct_at_once)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 14000, UP));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_MUL_90);
	CHECK_EQ(f.w.cwnd, 36);
	CHECK_EQ(f.w.ssthresh, 36);
	flow_rtt(&f, 40);	/* no growth until the next decision */
	CHECK_EQ(f.w.cwnd, 36);
	CHECK_EQ(f.r.decreases, 1);
	CHECK_EQ(f.r.increases, 0);
}

TEST(increasing_50_75_cuts_cwnd_to_75pct_at_once)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 24000, UP));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_MUL_75);
	CHECK_EQ(f.w.cwnd, 30);
	CHECK_EQ(f.w.ssthresh, 30);
	flow_rtt(&f, 40);
	CHECK_EQ(f.w.cwnd, 30);
	CHECK_EQ(f.r.decreases, 1);
}

TEST(increasing_75_100_halves_cwnd_at_once)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 34000, UP));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_MUL_50);
	CHECK_EQ(f.w.cwnd, 20);
	CHECK_EQ(f.w.ssthresh, 20);
	flow_rtt(&f, 40);
	CHECK_EQ(f.w.cwnd, 20);
	CHECK_EQ(f.r.decreases, 1);
}

TEST(decreasing_0_25_adds_50pct_of_cwnd_over_one_rtt)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 6000, DOWN));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_50PCT);
	CHECK_EQ(f.w.cwnd, 40);		/* spread, not at once */
	flow_rtt(&f, 20);
	CHECK_EQ(f.w.cwnd, 50);		/* half the RTT, half the increase */
	flow_rtt(&f, 20);
	CHECK_EQ(f.w.cwnd, 60);
	CHECK_EQ(f.r.increases, 1);
	CHECK_EQ(f.r.decreases, 0);
}

TEST(decreasing_25_50_adds_25pct_of_cwnd_over_one_rtt)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 16000, DOWN));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_25PCT);
	CHECK_EQ(f.w.cwnd, 40);
	flow_rtt(&f, 40);
	CHECK_EQ(f.w.cwnd, 50);
}

TEST(decreasing_50_75_adds_10pct_of_cwnd_over_one_rtt)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 26000, DOWN));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_10PCT);
	flow_rtt(&f, 39);
	CHECK_EQ(f.w.cwnd, 43);
	flow_rtt(&f, 1);
	CHECK_EQ(f.w.cwnd, 44);
}

TEST(decreasing_75_100_leaves_cwnd_unchanged)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 36000, DOWN));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_KEEP);
	CHECK_EQ(f.w.cwnd, 40);
	flow_rtt(&f, 80);
	CHECK_EQ(f.w.cwnd, 40);
	CHECK_EQ(f.r.increases, 0);
	CHECK_EQ(f.r.decreases, 0);
}

TEST(table_maps_all_eight_indications)
{
	static const u8 inc[4] = {
		SYNCTCP_MIXREACT_ADD_1, SYNCTCP_MIXREACT_MUL_90,
		SYNCTCP_MIXREACT_MUL_75, SYNCTCP_MIXREACT_MUL_50,
	};
	static const u8 dec[4] = {
		SYNCTCP_MIXREACT_ADD_50PCT, SYNCTCP_MIXREACT_ADD_25PCT,
		SYNCTCP_MIXREACT_ADD_10PCT, SYNCTCP_MIXREACT_KEEP,
	};
	u8 region;

	for (region = 0; region < 4; region++) {
		CHECK_EQ(synctcp_mixreact_action_of(SYNCTCP_MIX_INCREASING, region),
			 inc[region]);
		CHECK_EQ(synctcp_mixreact_action_of(SYNCTCP_MIX_DECREASING, region),
			 dec[region]);
		CHECK_EQ(synctcp_mixreact_action_of(SYNCTCP_MIX_NONE, region),
			 SYNCTCP_MIXREACT_RENO);
	}
}

/* Run @segments of one RTT under a held decision of (@trend, @region). */
static u32 cwnd_after_rtt(u8 trend, u8 region, u32 cwnd, u32 segments,
			  u32 per_ack)
{
	struct synctcp_mixreact r = { 0 };
	struct synctcp_cwnd w = { .cwnd = cwnd, .ssthresh = cwnd };
	u32 i;

	synctcp_mixreact_reset(&r);
	synctcp_mixreact_decide(&r, trend, region, &w, NO_CLAMP);
	for (i = 0; i < segments; i += per_ack)
		synctcp_mixreact_grow(&r, per_ack, &w, NO_CLAMP);
	return w.cwnd;
}

TEST(increase_over_one_rtt_sums_to_table_amount_for_any_ack_size)
{
	static const u32 per_ack[] = { 1, 2, 5, 100 };
	const u8 inc = SYNCTCP_MIX_INCREASING, dec = SYNCTCP_MIX_DECREASING;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(per_ack); i++) {
		u32 n = per_ack[i];

		CHECK_EQ(cwnd_after_rtt(dec, SYNCTCP_MIX_R0_25, 100, 100, n), 150);
		CHECK_EQ(cwnd_after_rtt(dec, SYNCTCP_MIX_R25_50, 100, 100, n), 125);
		CHECK_EQ(cwnd_after_rtt(dec, SYNCTCP_MIX_R50_75, 100, 100, n), 110);
		CHECK_EQ(cwnd_after_rtt(inc, SYNCTCP_MIX_R0_25, 100, 100, n), 101);
	}
}

TEST(increase_over_one_rtt_is_exact_for_large_windows)
{
	CHECK_EQ(cwnd_after_rtt(SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R50_75, 1000, 1000, 1), 1100);
	CHECK_EQ(cwnd_after_rtt(SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R50_75, 1000, 999, 1), 1099);
	CHECK_EQ(cwnd_after_rtt(SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R0_25, 1000, 999, 1), 1000);
	CHECK_EQ(cwnd_after_rtt(SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R0_25, 1000, 1000, 1), 1001);
	CHECK_EQ(cwnd_after_rtt(SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R0_25, 7, 7, 1), 10);
}

/*
 * Reno's step, 1 / cwnd per segment, is divided out only when cwnd
 * changed: the growth must be the division's on every ACK however cwnd
 * moves between ACKs (cuts, the caller's own changes, back and forth).
 */
TEST(reno_step_equals_the_division_whatever_cwnd_does)
{
	struct synctcp_mixreact r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 10, .ssthresh = 10 };
	u32 credit = 0, seed = 12345, i;

	synctcp_mixreact_reset(&r);
	synctcp_mixreact_apply(&r, SYNCTCP_MIXREACT_ADD_1, &w, NO_CLAMP, 0);
	for (i = 0; i < 100000; i++) {
		u32 acked, step;
		u64 c;

		seed = seed * 1103515245U + 12345U;
		if (!(seed >> 28))		/* now and then a new cwnd */
			w.cwnd = (seed >> 8) % 3000;
		acked = 1 + (seed >> 4) % 4;
		step = (SYNCTCP_MIXREACT_CREDIT_ONE + max_t(u32, w.cwnd, 1) - 1) /
		       max_t(u32, w.cwnd, 1);
		c = credit + (u64)acked * step;
		credit = (u32)(c & (SYNCTCP_MIXREACT_CREDIT_ONE - 1));
		c = (u64)w.cwnd + (c >> SYNCTCP_MIXREACT_CREDIT_SHIFT);
		synctcp_mixreact_grow(&r, acked, &w, NO_CLAMP);
		CHECK_EQ(w.cwnd, c);
		CHECK_EQ(r.credit, credit);
		if (w.cwnd != c)
			break;
	}
}

TEST(repeated_decisions_every_three_acks_still_add_50pct_per_rtt)
{
	struct flow f;
	u32 avg, i;
	int fresh = 0;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 8000, -100));
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_50PCT);
	/* one RTT of 40 ACKs, each a sample 0.1 ms lower in average */
	for (i = 0; i < 40; i++) {
		avg = synctcp_syncmix_avg_us(&f.m);
		fresh += flow_ack(&f, avg - 800, 1);
		CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_50PCT);
	}
	CHECK_EQ(fresh, 13);
	CHECK_EQ(f.w.cwnd, 60);
}

TEST(no_indication_means_reno_growth)
{
	struct flow f;
	int i;

	flow_init(&f, 40);
	CHECK(synctcp_mixreact_follows_reno(&f.r));
	for (i = 0; i < 8; i++)
		flow_ack(&f, 1000 * (u32)i, 1);
	CHECK(synctcp_mixreact_follows_reno(&f.r));
	CHECK_EQ(f.w.cwnd, 40);	/* the core leaves growth to Reno */
}

TEST(reset_after_loss_returns_to_reno_growth)
{
	struct flow f;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 6000, DOWN));
	flow_rtt(&f, 1);
	synctcp_mixreact_reset(&f.r);
	CHECK(synctcp_mixreact_follows_reno(&f.r));
	CHECK_EQ(f.r.credit, 0);
	CHECK_EQ(f.r.increases, 1);	/* statistics survive */
}

TEST(equal_medians_do_not_reapply_a_decrease)
{
	struct flow f;
	u32 avg, cwnd;
	int i;

	flow_init(&f, 64);
	CHECK(flow_step(&f, 34000, UP));
	CHECK_EQ(f.w.cwnd, 32);
	avg = synctcp_syncmix_avg_us(&f.m);
	/* while the rise is in the window, decisions keep coming (x 0.5) */
	for (i = 0; i < 6; i++)
		flow_ack(&f, avg, 1);
	CHECK_EQ(f.r.decreases, 3);
	CHECK_EQ(f.w.cwnd, 8);
	/* then the medians are equal: nothing new, nothing re-applied */
	cwnd = f.w.cwnd;
	for (i = 0; i < 60; i++)
		CHECK(!flow_ack(&f, avg, 1));
	CHECK_EQ(f.w.cwnd, cwnd);
	CHECK_EQ(f.r.decreases, 3);
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_MUL_50);
}

TEST(equal_medians_keep_an_increase_in_force)
{
	struct flow f;
	u32 avg;
	int i;

	flow_init(&f, 40);
	CHECK(flow_step(&f, 6000, DOWN));
	avg = synctcp_syncmix_avg_us(&f.m);
	for (i = 0; i < 40; i++)
		flow_ack(&f, avg, 1);
	CHECK(f.m.last_flat);
	CHECK_EQ(f.r.action, SYNCTCP_MIXREACT_ADD_50PCT);
	CHECK_EQ(f.w.cwnd, 60);
}

TEST(cwnd_never_below_2)
{
	struct synctcp_mixreact r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 3, .ssthresh = 100 };
	int i;

	synctcp_mixreact_reset(&r);
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, &w, NO_CLAMP);
	CHECK_EQ(w.cwnd, 2);
	CHECK_EQ(w.ssthresh, 2);
	for (i = 0; i < 4; i++) {
		synctcp_mixreact_decide(&r, SYNCTCP_MIX_INCREASING,
					(u8)(SYNCTCP_MIX_R25_50 + i % 3), &w, NO_CLAMP);
		CHECK_EQ(w.cwnd, 2);
	}
	w.cwnd = 1;	/* after an RTO: a decrease never raises cwnd */
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R75_100, &w, NO_CLAMP);
	CHECK_EQ(w.cwnd, 1);
	CHECK_EQ(w.ssthresh, 2);
}

TEST(cwnd_never_below_2_through_the_detector)
{
	struct flow f;
	u32 avg;
	int i;

	flow_init(&f, 5);
	CHECK(flow_step(&f, 34000, UP));
	avg = synctcp_syncmix_avg_us(&f.m);
	for (i = 0; i < 6; i++)
		flow_ack(&f, avg, 1);
	CHECK_EQ(f.r.decreases, 3);
	CHECK_EQ(f.w.cwnd, 2);
}

TEST(cwnd_never_above_clamp)
{
	struct synctcp_mixreact r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 40, .ssthresh = 40 };
	u32 i;

	synctcp_mixreact_reset(&r);
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R0_25, &w, 45);
	for (i = 0; i < 40; i++) {
		synctcp_mixreact_grow(&r, 1, &w, 45);
		CHECK(w.cwnd <= 45);
	}
	CHECK_EQ(w.cwnd, 45);
	CHECK_EQ(r.credit, 0);
	/* a decrease of a window above a lowered clamp lands on the clamp */
	w.cwnd = 40;
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R25_50, &w, 30);
	CHECK_EQ(w.cwnd, 30);
	/* a stretch ACK cannot overshoot it either */
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R0_25, &w, 31);
	synctcp_mixreact_grow(&r, 0xFFFFFFFFu, &w, 31);
	CHECK_EQ(w.cwnd, 31);
}

TEST(no_overflow_with_huge_windows)
{
	struct synctcp_mixreact r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 0xFFFFFFF0u, .ssthresh = 2 };

	synctcp_mixreact_reset(&r);
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_DECREASING, SYNCTCP_MIX_R0_25, &w, NO_CLAMP);
	synctcp_mixreact_grow(&r, 0xFFFFFFFFu, &w, NO_CLAMP);
	CHECK_EQ(w.cwnd, NO_CLAMP);
	synctcp_mixreact_decide(&r, SYNCTCP_MIX_INCREASING, SYNCTCP_MIX_R25_50, &w, NO_CLAMP);
	CHECK_EQ(w.cwnd, 0xE6666665u);	/* floor(0.9 x (2^32 - 1)) */
}

/* Variant "best": a decrease keeps at least keep_min / 1024 of cwnd. */
TEST(apply_decrease_keeps_at_least_keep_min)
{
	struct synctcp_mixreact r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 100, .ssthresh = 1000 };

	synctcp_mixreact_reset(&r);
	/* x 0.5 with a floor of 3/4 */
	synctcp_mixreact_apply(&r, SYNCTCP_MIXREACT_MUL_50, &w, NO_CLAMP, 768);
	CHECK_EQ(w.cwnd, 75);
	CHECK_EQ(w.ssthresh, 75);
	CHECK_EQ(r.decreases, 1);
	/* x 0.9 is above a floor of 1/2: the table's beta */
	synctcp_mixreact_apply(&r, SYNCTCP_MIXREACT_MUL_90, &w, NO_CLAMP, 512);
	CHECK_EQ(w.cwnd, 67);
	/* no floor: the dissertation's */
	synctcp_mixreact_apply(&r, SYNCTCP_MIXREACT_MUL_50, &w, NO_CLAMP, 0);
	CHECK_EQ(w.cwnd, 33);
	/* an increase sets the rate in force, cwnd waits for the ACKs */
	synctcp_mixreact_apply(&r, SYNCTCP_MIXREACT_ADD_1, &w, NO_CLAMP, 768);
	CHECK_EQ(w.cwnd, 33);
	CHECK_EQ(r.action, SYNCTCP_MIXREACT_ADD_1);
	/* an action out of range is Reno's */
	synctcp_mixreact_apply(&r, 200, &w, NO_CLAMP, 0);
	CHECK(synctcp_mixreact_follows_reno(&r));
}

static const struct harness_test tests[] = {
	T(reno_step_equals_the_division_whatever_cwnd_does),
	T(apply_decrease_keeps_at_least_keep_min),
	T(increasing_0_25_adds_one_segment_per_rtt),
	T(increasing_25_50_cuts_cwnd_to_90pct_at_once),
	T(increasing_50_75_cuts_cwnd_to_75pct_at_once),
	T(increasing_75_100_halves_cwnd_at_once),
	T(decreasing_0_25_adds_50pct_of_cwnd_over_one_rtt),
	T(decreasing_25_50_adds_25pct_of_cwnd_over_one_rtt),
	T(decreasing_50_75_adds_10pct_of_cwnd_over_one_rtt),
	T(decreasing_75_100_leaves_cwnd_unchanged),
	T(table_maps_all_eight_indications),
	T(increase_over_one_rtt_sums_to_table_amount_for_any_ack_size),
	T(increase_over_one_rtt_is_exact_for_large_windows),
	T(repeated_decisions_every_three_acks_still_add_50pct_per_rtt),
	T(no_indication_means_reno_growth),
	T(reset_after_loss_returns_to_reno_growth),
	T(equal_medians_do_not_reapply_a_decrease),
	T(equal_medians_keep_an_increase_in_force),
	T(cwnd_never_below_2),
	T(cwnd_never_below_2_through_the_detector),
	T(cwnd_never_above_clamp),
	T(no_overflow_with_huge_windows),
};

HARNESS_MAIN("mixreact", tests)
