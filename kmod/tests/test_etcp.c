// SPDX-License-Identifier: GPL-2.0
/*
 * E-TCP (Gu, Towsley, Hollot, Zhang, "Congestion Control for Small Buffer
 * High Speed Networks"): the window law of section III, slow start and the
 * first-loss halving and hold of section V-A, in fixed point.
 *
 * Floating point appears here only to compute reference values and to
 * drive the loss simulation; the core under test has none.
 */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "etcp.h"

#define UNIT	ETCP_W_UNIT
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const struct etcp_params defaults = {
	.b = ETCP_B_DEFAULT,
	.p0_ppm = ETCP_P0_PPM_DEFAULT,
};

/* A connection past slow start, with a window of @pkts packets. */
static void avoiding(struct etcp *e, u32 pkts)
{
	etcp_start(e, pkts, false);
}

static void ack(struct etcp *e, const struct etcp_params *p, u32 acked,
		u32 losses, u32 snd_una, u32 snd_nxt)
{
	struct etcp_ack a = {
		.acked = acked,
		.losses = losses,
		.snd_una = snd_una,
		.snd_nxt = snd_nxt,
		.w_clamp = ~0U,
		.may_grow = true,
	};

	etcp_on_ack(e, p, &a);
}

/* The cut of one loss, exactly, with 128-bit arithmetic. */
static u64 ref_decrement(u64 w, const struct etcp_params *p)
{
	unsigned __int128 num = (unsigned __int128)w * ETCP_PPM * UNIT;
	unsigned __int128 den = (unsigned __int128)p->b *
		(2ULL * ETCP_PPM * UNIT + (unsigned __int128)p->p0_ppm * w);

	return (u64)(num / den);
}

/* The per-loss rule applied once per lost packet, one at a time. */
static u64 ref_losses(u64 w, u32 losses, const struct etcp_params *p)
{
	u64 w_min = w < (u64)ETCP_W_MIN * UNIT ? w : (u64)ETCP_W_MIN * UNIT;

	while (losses--) {
		u64 d = ref_decrement(w, p);

		w = w - w_min > d ? w - d : w_min;
	}
	return w;
}

TEST(decrement_per_loss_is_4W_over_W_plus_200)
{
	static const u64 pkts[] = { 1, 2, 3, 10, 50, 199, 200, 201, 1000,
				    12020, 100000, 1000000, ETCP_W_MAX };
	size_t i;
	u64 w;

	for (i = 0; i < ARRAY_SIZE(pkts); i++) {
		for (w = pkts[i] * UNIT - 3; w <= pkts[i] * UNIT + 3; w++) {
			if (w > (u64)ETCP_W_MAX * UNIT)
				break;
			/* 4W / (W + 200) packets, floored to 1/2^16 packet */
			CHECK_EQ(etcp_loss_decrement(w, &defaults),
				 4 * w * UNIT / (w + 200 * UNIT));
		}
	}
	/* the paper's figures: 2 packets at W = 200, 3.93 at W = 12020 */
	CHECK_EQ(etcp_loss_decrement(200 * UNIT, &defaults), 2 * UNIT);
	CHECK_NEAR((double)etcp_loss_decrement(12020 * UNIT, &defaults) / UNIT,
		   4.0 * 12020 / 12220, 1.0 / UNIT);
}

TEST(decrement_per_loss_is_W_over_b_2_plus_p0W_for_any_parameters)
{
	static const struct etcp_params ps[] = {
		{ 1, 1 }, { 1, 999999 }, { 7, 1234 }, { 25, 10000 },
		{ 15000, 10000 }, { 1000000, 1 }, { 1000000, 999999 },
		{ 3, 500000 },
	};
	static const u64 ws[] = { 2 * UNIT, 3 * UNIT + 12345, 200 * UNIT,
				  987654321ULL, 1000000 * UNIT,
				  (u64)ETCP_W_MAX * UNIT };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(ps); i++)
		for (j = 0; j < ARRAY_SIZE(ws); j++)
			CHECK_EQ(etcp_loss_decrement(ws[j], &ps[i]),
				 ref_decrement(ws[j], &ps[i]));
}

TEST(decrement_is_at_most_4_packets_and_2_percent_of_W)
{
	u64 w;

	for (w = 2 * UNIT; w <= (u64)ETCP_W_MAX * UNIT; w = w * 3 / 2) {
		u64 d = etcp_loss_decrement(w, &defaults);

		CHECK(d < 4 * UNIT);			/* 1 / (b p0) */
		CHECK(d <= w / (2 * ETCP_B_DEFAULT));	/* 1 / (2 b) */
	}
}

TEST(increase_is_1_over_b_per_packet_exactly_over_1e6_acks)
{
	struct etcp e;
	u64 start;
	u32 i, n = 0;

	avoiding(&e, 100);
	start = e.w;
	for (i = 0; i < 1000000; i++)
		ack(&e, &defaults, 1, 0, 0, 0);
	/* 10^6 / 25 = 40000 packets, to the last fixed-point unit */
	CHECK_EQ(e.w - start, 40000 * UNIT);

	/* b = 7 does not divide: growth is floor(N 2^16 / 7) however split */
	{
		const struct etcp_params p = { .b = 7, .p0_ppm = 10000 };

		avoiding(&e, 100);
		start = e.w;
		for (i = 0; n < 1000000; i++) {
			u32 acked = 1 + i % 3;

			ack(&e, &p, acked, 0, 0, 0);
			n += acked;
		}
		CHECK_EQ(e.w - start, (u64)n * UNIT / 7);
	}
}

/*
 * The division by b is a multiplication by a reciprocal kept while b
 * stays: the growth and the remainder carried must be the division's on
 * every ACK, with b changing (as the module parameter may), at b = 1 and
 * b = 10^6, and for ACKs of 65536 packets and more (which divide).
 */
TEST(increase_equals_the_division_whatever_b_and_acked)
{
	static const u32 bs[] = { 1, 2, 3, 7, 25, 1000, 65537, 999999, 1000000 };
	struct etcp e;
	u64 w;
	u32 rem = 0, seed = 777, i, b = 25;

	avoiding(&e, 100);
	w = e.w;
	for (i = 0; i < 200000; i++) {
		const struct etcp_params p = { .b = b, .p0_ppm = 10000 };
		u32 acked;
		u64 x;

		seed = seed * 1103515245U + 12345U;
		if (!(seed >> 27))
			b = bs[(seed >> 8) % ARRAY_SIZE(bs)];
		acked = (seed >> 12) % 1000 ? 1 + (seed >> 4) % 8 :
					      65535 + (seed >> 4) % 4;
		x = ((u64)acked << ETCP_W_SHIFT) + rem;
		ack(&e, &p, acked, 0, 0, 0);
		w = min_t(u64, w + x / p.b, (u64)ETCP_W_MAX << ETCP_W_SHIFT);
		rem = (u32)(x % p.b);
		CHECK_EQ(e.w, w);
		CHECK_EQ(e.inc_rem, rem);
		if (e.w != w)
			break;
	}
}

TEST(slow_start_grows_one_packet_per_packet_acked)
{
	struct etcp e;

	etcp_start(&e, 10, true);
	CHECK_EQ(e.phase, ETCP_SLOW_START);
	ack(&e, &defaults, 2, 0, 1000, 20000);
	ack(&e, &defaults, 1, 0, 2000, 21000);
	CHECK_EQ(etcp_cwnd(&e), 13);
	CHECK_EQ(e.w, 13 * UNIT);
}

TEST(first_loss_halves_and_holds_until_snd_nxt_at_loss_is_acked)
{
	struct etcp e;

	etcp_start(&e, 100, true);
	etcp_episode_begin(&e);
	ack(&e, &defaults, 1, 3, 5000, 90000);		/* first loss */
	CHECK_EQ(e.phase, ETCP_HOLD);
	CHECK_EQ(e.w, 50 * UNIT);
	CHECK_EQ(e.hold_seq, 90000);

	/* held: neither ACKs nor further slow-start losses move W */
	ack(&e, &defaults, 30, 0, 40000, 120000);
	ack(&e, &defaults, 2, 40, 60000, 130000);
	ack(&e, &defaults, 5, 0, 89999, 140000);
	CHECK_EQ(e.phase, ETCP_HOLD);
	CHECK_EQ(e.w, 50 * UNIT);
	CHECK_EQ(e.losses, 43);

	/* everything outstanding at the loss is acked: E-TCP from here */
	ack(&e, &defaults, 25, 0, 90000, 150000);
	CHECK_EQ(e.phase, ETCP_AVOID);
	CHECK_EQ(e.w, 51 * UNIT);
	ack(&e, &defaults, 0, 1, 90000, 150000);
	CHECK_EQ(e.w, 51 * UNIT - 4 * (51 * UNIT) * UNIT / (251 * UNIT));
}

TEST(hold_ends_across_sequence_wraparound)
{
	struct etcp e;

	etcp_start(&e, 64, true);
	ack(&e, &defaults, 1, 1, 0xFFFFF000u, 0x800);
	ack(&e, &defaults, 1, 0, 0xFFFFFFF0u, 0x900);
	CHECK_EQ(e.phase, ETCP_HOLD);
	ack(&e, &defaults, 1, 0, 0x800, 0x1000);
	CHECK_EQ(e.phase, ETCP_AVOID);
}

TEST(every_loss_counts_many_in_one_ack_up_to_64_exactly)
{
	static const u32 pkts[] = { 3, 20, 100, 300, 1000, 12020, 1000000 };
	struct etcp e;
	size_t i;
	u32 l;

	for (i = 0; i < ARRAY_SIZE(pkts); i++) {
		for (l = 0; l <= ETCP_LOSS_STEPS; l++) {
			u64 w = (u64)pkts[i] * UNIT;

			CHECK_EQ(etcp_apply_losses(w, l, &defaults),
				 ref_losses(w, l, &defaults));
		}
		/* through the ACK path too, including a lost retransmission */
		avoiding(&e, pkts[i]);
		ack(&e, &defaults, 0, 5, 0, 0);
		CHECK_EQ(e.w, ref_losses((u64)pkts[i] * UNIT, 5, &defaults));
	}
}

TEST(beyond_64_losses_in_one_ack_never_cut_less_than_per_packet)
{
	static const struct { u32 w, l; } c[] = {
		{ 100, 65 }, { 100, 100 }, { 300, 100 }, { 300, 300 },
		{ 1000, 100 }, { 1000, 1000 }, { 3000, 200 }, { 3000, 600 },
		{ 12020, 1000 }, { 12020, 12020 }, { 1000000, 1000 },
		{ 1000000, 100000 }, { 10, 100000 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		u64 w = (u64)c[i].w * UNIT;
		u64 got = etcp_apply_losses(w, c[i].l, &defaults);
		u64 want = ref_losses(w, c[i].l, &defaults);
		double dev = ((double)got - (double)want) / (double)want;

		printf("  W %7u, %6u losses in one ACK:", c[i].w, c[i].l);
		printf(" per-packet %.3f, batched %.3f packets (%+.3f%%)\n", (double)want / UNIT,
		       (double)got / UNIT, 100 * dev);
		CHECK(got <= want);
		/* within 1% unless the losses nearly empty the window */
		if (want >= 10 * UNIT)
			CHECK(dev > -0.01);
		CHECK(got >= (u64)ETCP_W_MIN * UNIT);
	}
}

TEST(window_never_below_2_packets_through_losses_nor_raised)
{
	struct etcp e;

	avoiding(&e, 5);
	ack(&e, &defaults, 0, 4000000000u, 0, 0);
	CHECK_EQ(e.w, 2 * UNIT);
	ack(&e, &defaults, 0, 1, 0, 0);
	CHECK_EQ(e.w, 2 * UNIT);
	CHECK_EQ(etcp_apply_losses(UNIT, 10, &defaults), UNIT);

	etcp_start(&e, 1, true);		/* cwnd 1 after SYN retransmissions */
	ack(&e, &defaults, 0, 1, 0, 10);
	CHECK_EQ(e.w, UNIT);
	CHECK_EQ(etcp_cwnd(&e), 1);
}

TEST(no_overflow_at_W_1e6_packets)
{
	struct etcp e;
	u64 w = 1000000 * UNIT;
	u64 r;
	int i;

	/* decrement: 4 * 10^6 / (10^6 + 200) packets */
	CHECK_NEAR((double)etcp_loss_decrement(w, &defaults) / UNIT,
		   4e6 / (1e6 + 200), 1.0 / UNIT);
	avoiding(&e, 1000000);
	for (i = 0; i < 1000; i++)
		ack(&e, &defaults, 1000, 0, 0, 0);
	CHECK_EQ(e.w, w + 1000000 * UNIT / 25);
	ack(&e, &defaults, 0, 1000, 0, 0);
	CHECK(e.w < w + 40000 * UNIT - 3900 * UNIT);
	CHECK(e.w > w + 40000 * UNIT - 4000 * UNIT);

	/* pacing: 10^6 packets of 1448 bytes per 100 ms = 14.48 GB/s */
	avoiding(&e, 1000000);
	CHECK_EQ(etcp_pacing_rate(&e, 1448, 100000), 14480000000ULL);

	/* the largest window, the largest p0, the smallest b and srtt */
	{
		const struct etcp_params p = { .b = 1, .p0_ppm = ETCP_P0_PPM_MAX };

		avoiding(&e, ETCP_W_MAX);
		CHECK_EQ(e.w, (u64)ETCP_W_MAX * UNIT);
		CHECK_EQ(etcp_loss_decrement(e.w, &p), ref_decrement(e.w, &p));
		r = etcp_pacing_rate(&e, 65535, 1);
		CHECK_EQ(r, (u64)ETCP_W_MAX * 65535 * 1000000);
		ack(&e, &defaults, 4000000000u, 0, 0, 0);
		CHECK_EQ(e.w, (u64)ETCP_W_MAX * UNIT);	/* clamped */
	}
}

TEST(window_clamped_to_snd_cwnd_clamp)
{
	struct etcp e;
	struct etcp_ack a = { .acked = 1000, .w_clamp = 300, .may_grow = true };

	etcp_start(&e, 10, true);
	etcp_on_ack(&e, &defaults, &a);
	CHECK_EQ(etcp_cwnd(&e), 300);
}

TEST(no_growth_while_the_window_is_not_used)
{
	struct etcp e;
	struct etcp_ack a = { .acked = 10, .w_clamp = ~0U, .may_grow = false };

	etcp_start(&e, 10, true);
	etcp_on_ack(&e, &defaults, &a);
	CHECK_EQ(e.w, 10 * UNIT);
	avoiding(&e, 10);
	a.losses = 1;
	etcp_on_ack(&e, &defaults, &a);		/* losses still count */
	CHECK_EQ(e.w, ref_losses(10 * UNIT, 1, &defaults));
}

TEST(ecn_signal_counts_as_one_loss_and_is_never_undone)
{
	struct etcp e;

	avoiding(&e, 1000);
	etcp_episode_begin(&e);
	etcp_congestion_signal(&e);
	CHECK_EQ(e.w, 1000 * UNIT);		/* applied at the next ACK */
	ack(&e, &defaults, 0, 0, 0, 0);
	CHECK_EQ(e.w, ref_losses(1000 * UNIT, 1, &defaults));
	CHECK_EQ(e.ecn_events, 1);
	CHECK_EQ(e.losses, 0);
	etcp_undo(&e, ~0U);
	CHECK_EQ(e.w, ref_losses(1000 * UNIT, 1, &defaults));

	/* in slow start a signal ends it like a loss, but not undoably */
	etcp_start(&e, 64, true);
	etcp_episode_begin(&e);
	etcp_congestion_signal(&e);
	ack(&e, &defaults, 1, 0, 0, 6400);
	CHECK_EQ(e.phase, ETCP_HOLD);
	CHECK_EQ(e.w, 32 * UNIT);
	etcp_undo(&e, ~0U);
	CHECK_EQ(e.w, 32 * UNIT);
}

TEST(undo_gives_back_the_episodes_cuts_and_keeps_its_growth)
{
	struct etcp e;
	u64 w;

	avoiding(&e, 1000);
	ack(&e, &defaults, 0, 7, 0, 0);		/* before the episode */
	w = e.w;
	etcp_episode_begin(&e);
	ack(&e, &defaults, 0, 10, 0, 0);
	ack(&e, &defaults, 50, 3, 0, 0);
	CHECK(e.w < w);
	etcp_undo(&e, ~0U);
	CHECK_EQ(e.w, w + 2 * UNIT);		/* 50 / 25 packets of growth */
	CHECK_EQ(e.undos, 1);
	etcp_undo(&e, ~0U);			/* twice gives nothing more */
	CHECK_EQ(e.w, w + 2 * UNIT);
}

TEST(undo_of_the_first_loss_resumes_slow_start)
{
	struct etcp e;

	etcp_start(&e, 80, true);
	etcp_episode_begin(&e);
	ack(&e, &defaults, 0, 2, 100, 8000);
	CHECK_EQ(e.phase, ETCP_HOLD);
	etcp_undo(&e, ~0U);
	CHECK_EQ(e.phase, ETCP_SLOW_START);
	CHECK_EQ(e.w, 80 * UNIT);
	ack(&e, &defaults, 4, 0, 200, 8100);
	CHECK_EQ(e.w, 84 * UNIT);
}

TEST(pacing_rate_is_W_mss_per_srtt)
{
	struct etcp e;

	avoiding(&e, 10);
	CHECK_EQ(etcp_pacing_rate(&e, 1448, 100000), 144800);
	e.w = 10 * UNIT + UNIT / 2;		/* 10.5 packets */
	CHECK_EQ(etcp_pacing_rate(&e, 1000, 3000), 3500000);
	CHECK_EQ(etcp_pacing_rate(&e, 1000, 0), 10500000000ULL);
}

TEST(parameters_need_b_positive_and_p0_between_0_and_1)
{
	CHECK(!etcp_b_valid(0));
	CHECK(etcp_b_valid(1));
	CHECK(etcp_b_valid(ETCP_B_DEFAULT));
	CHECK(etcp_b_valid(ETCP_B_MAX));
	CHECK(!etcp_b_valid(ETCP_B_MAX + 1));
	CHECK(!etcp_p0_ppm_valid(0));
	CHECK(etcp_p0_ppm_valid(1));
	CHECK(etcp_p0_ppm_valid(ETCP_P0_PPM_DEFAULT));
	CHECK(etcp_p0_ppm_valid(999999));
	CHECK(!etcp_p0_ppm_valid(1000000));
	CHECK(!etcp_p0_ppm_valid(~0U));
}

TEST(burst_segs_are_validated)
{
	CHECK(etcp_burst_segs_valid(0));
	CHECK(etcp_burst_segs_valid(ETCP_BURST_SEGS_DEFAULT));
	CHECK(etcp_burst_segs_valid(ETCP_BURST_SEGS_MAX));
	CHECK(!etcp_burst_segs_valid(ETCP_BURST_SEGS_MAX + 1));
	CHECK(!etcp_burst_segs_valid(~0U));
}

/* The cap never raises the route's own limit, and 0 is no cap. */
TEST(burst_cap_never_raises_the_routes_segments)
{
	struct etcp_gso g = { 0 };

	CHECK_EQ(etcp_gso_limit(&g, 65535, 1), 1);
	g = (struct etcp_gso){ 0 };
	CHECK_EQ(etcp_gso_limit(&g, 65535, 64), 64);
	g = (struct etcp_gso){ 0 };
	CHECK_EQ(etcp_gso_limit(&g, 65535, 0), 65535);
	g = (struct etcp_gso){ 0 };
	CHECK_EQ(etcp_gso_limit(&g, 16, 64), 16);
}

/*
 * Issue 28, 8: b0ac820 capped the connection's current limit, which it had
 * lowered itself: burst_segs raised at run time never reached a running
 * connection.  And a route change resets the limit: it is capped again.
 */
TEST(raised_cap_reaches_a_running_connection)
{
	struct etcp_gso g = { 0 };
	u32 cur;

	cur = etcp_gso_limit(&g, 65535, 1);
	CHECK_EQ(cur, 1);
	cur = etcp_gso_limit(&g, cur, 8);	/* burst_segs 1 -> 8 */
	CHECK_EQ(cur, 8);
	cur = etcp_gso_limit(&g, cur, 0);	/* 8 -> no cap: the route's */
	CHECK_EQ(cur, 65535);
	cur = etcp_gso_limit(&g, cur, 2);
	CHECK_EQ(cur, 2);
	/* a route change: the stack sets the new route's limit */
	cur = etcp_gso_limit(&g, 32, 2);
	CHECK_EQ(cur, 2);
	CHECK_EQ(g.route_segs, 32);
	cur = etcp_gso_limit(&g, cur, 0);
	CHECK_EQ(cur, 32);
}

/* splitmix64: a deterministic PRNG for the loss simulation. */
static u64 rng_next(u64 *s)
{
	u64 z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double rng_uniform(u64 *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * One flow through a Bernoulli-loss path, round by round: each round (one
 * RTT) sends cwnd packets, each lost with probability @pi, and the core
 * sees one ACK per packet delivered and one loss report per packet lost.
 * Returns the mean window over @rounds rounds after @warmup rounds.
 */
static double simulate(double pi, u32 warmup, u32 rounds, u64 seed)
{
	struct etcp e;
	double sum = 0;
	u32 r, i, n;

	avoiding(&e, 10);
	for (r = 0; r < warmup + rounds; r++) {
		n = etcp_cwnd(&e);
		for (i = 0; i < n; i++) {
			if (rng_uniform(&seed) < pi)
				ack(&e, &defaults, 0, 1, 0, 0);
			else
				ack(&e, &defaults, 1, 0, 0, 0);
		}
		if (r >= warmup)
			sum += (double)e.w / UNIT;
	}
	return sum / rounds;
}

/*
 * Section III: W* = 2 / (p - p0).  The paper balances i(W*) = p d(W*),
 * one increase per successful ACK against p decreases, so p is lost
 * packets per delivered packet: each packet sent is lost with
 * probability p / (1 + p).  (Read as losses per packet *sent*, the same
 * balance gives 2 (1 - p) / (p - p0 (1 - p)); printed for reference.)
 */
TEST(equilibrium_window_is_2_over_p_minus_p0_within_10pct)
{
	static const double ps[] = { 0.011, 0.015, 0.02, 0.05 };
	double p0 = ETCP_P0_PPM_DEFAULT / 1e6;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ps); i++) {
		double p = ps[i];
		double w_star = 2 / (p - p0);
		u32 rounds = (u32)(1e7 / w_star);
		double mean = simulate(p / (1 + p), 1000, rounds, 42 + i);
		double alt = 2 * (1 - p) / (p - p0 * (1 - p));
		double mean_alt = simulate(p, 1000, rounds, 4242 + i);

		printf("  p %.3f: W* %7.1f, mean W %7.1f (%+.1f%%) over %u rounds;"
		       " per packet sent: predicted %7.1f, mean %7.1f (%+.1f%%)\n",
		       p, w_star, mean, 100 * (mean / w_star - 1), rounds,
		       alt, mean_alt, 100 * (mean_alt / alt - 1));
		CHECK(fabs(mean / w_star - 1) < 0.10);
		CHECK(fabs(mean_alt / alt - 1) < 0.10);
	}
}


static const struct harness_test tests[] = {
	T(increase_equals_the_division_whatever_b_and_acked),
	T(decrement_per_loss_is_4W_over_W_plus_200),
	T(decrement_per_loss_is_W_over_b_2_plus_p0W_for_any_parameters),
	T(decrement_is_at_most_4_packets_and_2_percent_of_W),
	T(increase_is_1_over_b_per_packet_exactly_over_1e6_acks),
	T(slow_start_grows_one_packet_per_packet_acked),
	T(first_loss_halves_and_holds_until_snd_nxt_at_loss_is_acked),
	T(hold_ends_across_sequence_wraparound),
	T(every_loss_counts_many_in_one_ack_up_to_64_exactly),
	T(beyond_64_losses_in_one_ack_never_cut_less_than_per_packet),
	T(window_never_below_2_packets_through_losses_nor_raised),
	T(no_overflow_at_W_1e6_packets),
	T(window_clamped_to_snd_cwnd_clamp),
	T(no_growth_while_the_window_is_not_used),
	T(ecn_signal_counts_as_one_loss_and_is_never_undone),
	T(undo_gives_back_the_episodes_cuts_and_keeps_its_growth),
	T(undo_of_the_first_loss_resumes_slow_start),
	T(pacing_rate_is_W_mss_per_srtt),
	T(parameters_need_b_positive_and_p0_between_0_and_1),
	T(burst_segs_are_validated),
	T(burst_cap_never_raises_the_routes_segments),
	T(raised_cap_reaches_a_running_connection),
	T(equilibrium_window_is_2_over_p_minus_p0_within_10pct),
};

HARNESS_MAIN("etcp", tests)
