// SPDX-License-Identifier: GPL-2.0
/*
 * Sync-TCP(Pcwnd) = SyncPQlen detection + SyncPcwnd reaction
 * (Weigle 2003, sections 3.5.1 and 3.6.1).
 */
#include "harness.h"
#include "ott.h"
#include "pqlen.h"
#include "pcwnd.h"

/*
 * An estimator that has seen min OTT 10 ms and max OTT 10 + @max_q ms, then
 * a loss, then a sample of 10 + @now_q ms.
 */
static void qdelay_with_max(struct synctcp_qdelay *q, u32 max_q_us, u32 now_q_us)
{
	synctcp_qdelay_init(q, false);
	synctcp_qdelay_update(q, 10000);
	synctcp_qdelay_update(q, 10000 + (s64)max_q_us);
	synctcp_qdelay_on_loss(q);
	synctcp_qdelay_update(q, 10000 + (s64)now_q_us);
}

TEST(no_signal_before_first_loss)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_update(&q, 10000);
	synctcp_qdelay_update(&q, 70000);
	synctcp_qdelay_update(&q, 69000);
	CHECK(!synctcp_pqlen_congested(&q, 50));
	synctcp_qdelay_on_loss(&q);
	CHECK(synctcp_pqlen_congested(&q, 50));
}

/*
 * A loss before the estimator has any sample (the TS clock rate is not
 * confirmed yet) says nothing about the max qdelay measured later: it must
 * not enable decisions, or a max learnt on an emptied queue halves cwnd
 * at a few packets of queue (seen in tests/kernel/test_tcp_sync.py).
 */
TEST(loss_before_any_sample_does_not_enable_decisions)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_on_loss(&q);
	synctcp_qdelay_update(&q, 10000);
	synctcp_qdelay_update(&q, 14000);
	synctcp_qdelay_update(&q, 13000);
	CHECK(!synctcp_pqlen_congested(&q, 50));
	synctcp_qdelay_on_loss(&q);
	CHECK(synctcp_pqlen_congested(&q, 50));
}

/* A rebase (estimator reset) restarts max qdelay, so a loss must be seen again. */
TEST(rebase_forgets_the_loss)
{
	struct synctcp_qdelay q;

	qdelay_with_max(&q, 60000, 59000);
	CHECK(synctcp_pqlen_congested(&q, 50));
	synctcp_qdelay_reset(&q);
	synctcp_qdelay_update(&q, 0);
	synctcp_qdelay_update(&q, 4000);
	CHECK(!synctcp_pqlen_congested(&q, 50));
}

TEST(threshold_50pct_exactly_at_is_not_congestion)
{
	struct synctcp_qdelay q;

	qdelay_with_max(&q, 60000, 30000);
	CHECK_EQ(q.qdelay_us, 30000);
	CHECK(!synctcp_pqlen_congested(&q, 50));
}

TEST(threshold_50pct_just_below_is_not_congestion)
{
	struct synctcp_qdelay q;

	qdelay_with_max(&q, 60000, 29999);
	CHECK(!synctcp_pqlen_congested(&q, 50));
}

TEST(threshold_50pct_just_above_is_congestion)
{
	struct synctcp_qdelay q;

	qdelay_with_max(&q, 60000, 30001);
	CHECK(synctcp_pqlen_congested(&q, 50));
}

TEST(threshold_is_a_parameter)
{
	struct synctcp_qdelay q;

	qdelay_with_max(&q, 60000, 45000);
	CHECK(!synctcp_pqlen_congested(&q, 75));
	CHECK(synctcp_pqlen_congested(&q, 74));
	qdelay_with_max(&q, 60000, 60000);
	CHECK(!synctcp_pqlen_congested(&q, 100));
}

TEST(no_signal_without_samples_or_queue)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_on_loss(&q);
	CHECK(!synctcp_pqlen_congested(&q, 50));
	synctcp_qdelay_update(&q, 10000);	/* max qdelay 0 */
	synctcp_qdelay_on_loss(&q);
	CHECK(q.loss_seen);
	CHECK(!synctcp_pqlen_congested(&q, 50));
}

TEST(no_overflow_with_huge_delays)
{
	struct synctcp_qdelay q;

	qdelay_with_max(&q, 0xFFFFFFF0u, 0xF0000000u);
	CHECK(synctcp_pqlen_congested(&q, 50));
	CHECK(!synctcp_pqlen_congested(&q, 95));
}

TEST(signal_halves_cwnd_and_ssthresh)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 41, .ssthresh = 1000 };

	CHECK_EQ(synctcp_pcwnd_react(&r, true, 100, 200, &w), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 20);
	CHECK_EQ(w.ssthresh, 20);
	CHECK_EQ(r.reductions, 1);
	CHECK_EQ(r.signals, 1);
}

TEST(no_signal_means_reno_growth)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 41, .ssthresh = 1000 };

	CHECK_EQ(synctcp_pcwnd_react(&r, false, 100, 200, &w), SYNCTCP_PCWND_GROW);
	CHECK_EQ(w.cwnd, 41);
	CHECK_EQ(r.signals, 0);
}

TEST(halves_at_most_once_per_rtt)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 64, .ssthresh = 1000 };
	u32 una;

	/* halve at una=1000 with nxt=5000: one RTT is until una reaches 5000 */
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 1000, 5000, &w), SYNCTCP_PCWND_HALVED);
	for (una = 1100; una < 5000; una += 100)
		CHECK_EQ(synctcp_pcwnd_react(&r, true, una, 6000, &w), SYNCTCP_PCWND_HOLD);
	CHECK_EQ(w.cwnd, 32);
	CHECK_EQ(r.reductions, 1);
	/* everything sent before the halving is acked: the next RTT */
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 5000, 7000, &w), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 16);
	CHECK_EQ(r.reductions, 2);
	CHECK_EQ(r.signals, 41);
}

TEST(no_growth_during_held_rtt_with_signal_but_growth_without)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 64, .ssthresh = 1000 };

	synctcp_pcwnd_react(&r, true, 1000, 5000, &w);
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 2000, 5000, &w), SYNCTCP_PCWND_HOLD);
	CHECK_EQ(synctcp_pcwnd_react(&r, false, 2000, 5000, &w), SYNCTCP_PCWND_GROW);
}

TEST(loss_recovery_holds_the_next_halving_for_an_rtt)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 64, .ssthresh = 1000 };

	synctcp_pcwnd_hold(&r, 9000);
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 8999, 9500, &w), SYNCTCP_PCWND_HOLD);
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 9000, 9500, &w), SYNCTCP_PCWND_HALVED);
}

TEST(hold_works_across_sequence_wraparound)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 64, .ssthresh = 1000 };

	CHECK_EQ(synctcp_pcwnd_react(&r, true, 0xFFFFFF00u, 0x100, &w),
		 SYNCTCP_PCWND_HALVED);
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 0xFFFFFFF0u, 0x200, &w),
		 SYNCTCP_PCWND_HOLD);
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 0x100, 0x300, &w),
		 SYNCTCP_PCWND_HALVED);
}

/*
 * Item 3 of issue 15: the hold used to end only on a congested ACK.  After
 * 2^31 bytes acknowledged with no signal, before(snd_una, hold_seq) turned
 * true again and every later signal was HOLD (no cut, no growth) until a
 * loss.  The hold must end at the first ACK that reaches hold_seq.
 */
TEST(hold_ends_without_a_signal_and_does_not_revive_after_2g)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 40, .ssthresh = 100 };
	u32 una = 1000, nxt = 50000;
	u64 acked;

	CHECK_EQ(synctcp_pcwnd_react(&r, true, una, nxt, &w), SYNCTCP_PCWND_HALVED);
	/* 3 GB acknowledged without any signal, in 64 kB ACKs */
	for (acked = 0; acked < 3ULL << 30; acked += 65536) {
		una += 65536;
		CHECK_EQ(synctcp_pcwnd_react(&r, false, una, una + 50000, &w),
			 SYNCTCP_PCWND_GROW);
	}
	CHECK(!r.holding);
	w.cwnd = 40;
	CHECK_EQ(synctcp_pcwnd_react(&r, true, una, una + 50000, &w),
		 SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 20);
}

/*
 * Item 4 of issue 15: a delay halving, then a loss detected in the same
 * round trip, used to cost two halvings (the loss's ssthresh was Reno's
 * cwnd / 2 of the already halved cwnd).  Once per RTT: the loss keeps it.
 */
TEST(delay_halving_then_loss_in_same_rtt_halves_once)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 40, .ssthresh = 100 };

	CHECK_EQ(synctcp_pcwnd_react(&r, true, 1000, 60000, &w), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 20);
	/* the loss of a segment sent before the halving */
	CHECK_EQ(synctcp_pcwnd_ssthresh(&r, 20000, w.cwnd), 20);
	synctcp_pcwnd_hold(&r, 70000);		/* recovery starts */
	/* a second loss episode a round trip later is halved as Reno does */
	CHECK_EQ(synctcp_pcwnd_ssthresh(&r, 70000, 20), 10);
}

TEST(loss_after_the_held_rtt_halves_as_reno)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 40, .ssthresh = 100 };

	CHECK_EQ(synctcp_pcwnd_ssthresh(&r, 1000, 40), 20);	/* no cut yet */
	CHECK_EQ(synctcp_pcwnd_react(&r, true, 1000, 60000, &w), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(synctcp_pcwnd_ssthresh(&r, 60000, 24), 12);	/* RTT over */
	CHECK_EQ(synctcp_pcwnd_ssthresh(&r, 60000, 3), 2);
	/* a hold started by a loss does not spare the next loss */
	synctcp_pcwnd_hold(&r, 90000);
	CHECK_EQ(synctcp_pcwnd_ssthresh(&r, 80000, 30), 15);
}

TEST(cwnd_never_below_2)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 3, .ssthresh = 1000 };
	u32 seq = 0;
	int i;

	for (i = 0; i < 10; i++, seq += 10) {
		synctcp_pcwnd_react(&r, true, seq, seq + 10, &w);
		CHECK(w.cwnd >= 2);
		CHECK(w.ssthresh >= 2);
	}
	CHECK_EQ(w.cwnd, 2);
	w.cwnd = 1;	/* a reduction never raises cwnd either */
	synctcp_pcwnd_react(&r, true, seq, seq + 10, &w);
	CHECK_EQ(w.cwnd, 1);
}

/*
 * Variant "best" (issue 17): a cut keeps the share of cwnd that drains the
 * forward queue, cwnd * (1 - qdelay / srtt), between 1/2 and 15/16.
 */
TEST(keep_is_the_forward_queues_share_of_the_rtt)
{
	/* 40 ms of forward queue in a 160 ms round trip: keep 3/4 */
	CHECK_EQ(synctcp_pcwnd_keep(40000, 160000), 768);
	/* half the round trip or more, or no srtt: the dissertation's half */
	CHECK_EQ(synctcp_pcwnd_keep(50000, 100000), SYNCTCP_PCWND_KEEP_HALF);
	CHECK_EQ(synctcp_pcwnd_keep(90000, 100000), SYNCTCP_PCWND_KEEP_HALF);
	CHECK_EQ(synctcp_pcwnd_keep(1000, 0), SYNCTCP_PCWND_KEEP_HALF);
	/* a tiny queue still cuts 1/16 */
	CHECK_EQ(synctcp_pcwnd_keep(100, 100000), SYNCTCP_PCWND_KEEP_MAX);
	CHECK_EQ(synctcp_pcwnd_keep(0, 100000), SYNCTCP_PCWND_KEEP_MAX);
}

TEST(react_by_cuts_to_the_share_kept)
{
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_cwnd w = { .cwnd = 80, .ssthresh = 1000 };

	CHECK_EQ(synctcp_pcwnd_react_by(&r, true, 100, 200, &w, 768), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 60);
	CHECK_EQ(w.ssthresh, 60);
	/* once per RTT as the halving */
	CHECK_EQ(synctcp_pcwnd_react_by(&r, true, 150, 300, &w, 768), SYNCTCP_PCWND_HOLD);
	/* never below 2, never above 1024/1024 */
	w.cwnd = 2;
	CHECK_EQ(synctcp_pcwnd_react_by(&r, true, 200, 400, &w, 512), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 2);
	w.cwnd = 10;
	CHECK_EQ(synctcp_pcwnd_react_by(&r, true, 400, 500, &w, 5000), SYNCTCP_PCWND_HALVED);
	CHECK_EQ(w.cwnd, 10);
}

static const struct harness_test tests[] = {
	T(keep_is_the_forward_queues_share_of_the_rtt),
	T(react_by_cuts_to_the_share_kept),
	T(no_signal_before_first_loss),
	T(loss_before_any_sample_does_not_enable_decisions),
	T(rebase_forgets_the_loss),
	T(threshold_50pct_exactly_at_is_not_congestion),
	T(threshold_50pct_just_below_is_not_congestion),
	T(threshold_50pct_just_above_is_congestion),
	T(threshold_is_a_parameter),
	T(no_signal_without_samples_or_queue),
	T(no_overflow_with_huge_delays),
	T(signal_halves_cwnd_and_ssthresh),
	T(no_signal_means_reno_growth),
	T(halves_at_most_once_per_rtt),
	T(no_growth_during_held_rtt_with_signal_but_growth_without),
	T(loss_recovery_holds_the_next_halving_for_an_rtt),
	T(hold_works_across_sequence_wraparound),
	T(hold_ends_without_a_signal_and_does_not_revive_after_2g),
	T(delay_halving_then_loss_in_same_rtt_halves_once),
	T(loss_after_the_held_rtt_halves_as_reno),
	T(cwnd_never_below_2),
};

HARNESS_MAIN("pcwnd", tests)
