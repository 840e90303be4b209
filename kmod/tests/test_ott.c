// SPDX-License-Identifier: GPL-2.0
/*
 * OTT from RFC 7323 timestamps and the min/max queuing-delay estimator
 * (Weigle 2003, sections 3.3-3.5.1).
 */
#include "harness.h"
#include "ott.h"
#include "synctcp_info.h"

/*
 * A synthetic path: the peer's TS clock at @peer_hz with an arbitrary
 * offset, a fixed forward OTT plus a queuing delay, a 5 ms reverse OTT.
 * (@own_off offsets our microsecond clock.)
 */
struct path {
	struct synctcp_tsclock c;
	struct synctcp_qdelay q;
	u32 peer_hz;
	u32 own_off;	/* our TSval offset (ticks) */
	u32 peer_off;	/* peer TSval offset (ticks) */
	u32 ott_us;	/* base forward OTT */
	u32 now_us;	/* local clock, may wrap */
	int samples;
};

static void path_init(struct path *p, u32 peer_hz, u32 own_off, u32 peer_off)
{
	*p = (struct path){ .peer_hz = peer_hz, .own_off = own_off,
			    .peer_off = peer_off, .ott_us = 20000 };
	synctcp_tsclock_init(&p->c);
	synctcp_qdelay_init(&p->q, false);
}

/* Send at local time t (us); the ACK leaves the peer at t + ott + q. */
static enum synctcp_ott_result path_ack(struct path *p, u64 t_us, u32 q_us)
{
	u64 arrive = t_us + p->ott_us + q_us;
	u32 tsval = p->peer_off + (u32)(arrive * p->peer_hz / 1000000);
	enum synctcp_ott_result r;
	s64 ott;

	p->now_us = p->own_off + (u32)(arrive + 5000);	/* reverse OTT 5 ms */
	r = synctcp_ott_ts_sample(&p->c, tsval, p->now_us,
				  (u32)(arrive + 5000 - t_us), &ott);
	if (r == SYNCTCP_OTT_REBASED)
		synctcp_qdelay_reset(&p->q);
	if (r != SYNCTCP_OTT_SKIP) {
		synctcp_qdelay_update(&p->q, ott);
		p->samples++;
	}
	return r;
}

/*
 * A FIFO queue that fills and drains at 1/10 of the line rate: a triangle
 * 0..30 ms with a 600 ms period (arrivals at the peer stay in order).
 */
static u32 triangle_q_us(u64 t_us)
{
	u32 phase = (u32)(t_us % 600000);

	return phase < 300000 ? phase / 10 : (600000 - phase) / 10;
}

/* 3 s of ACKs every 2 ms over the triangle queue, then measure. */
static void check_clock_rate(u32 peer_hz, u32 own_off, u32 peer_off)
{
	struct path p;
	u64 t;

	path_init(&p, peer_hz, own_off, peer_off);
	for (t = 0; t < 3000000; t += 2000)
		path_ack(&p, t, triangle_q_us(t));
	CHECK_EQ(p.c.peer_hz, peer_hz);
	CHECK(p.c.rate_confirmed);
	CHECK(p.samples > 500);
	/* max queue 30 ms, +- one tick of each clock */
	CHECK_NEAR(p.q.max_qdelay_us, 30000, 1000 + 1000000 / peer_hz + 1000);
	/* an empty queue again reads ~0 */
	path_ack(&p, t, 0);
	CHECK_NEAR(p.q.qdelay_us, 0, 1000 + 1000000 / peer_hz + 1000);
	path_ack(&p, t + 2000, 15000);
	CHECK_NEAR(p.q.qdelay_us, 15000, 1000 + 1000000 / peer_hz + 1000);
}

TEST(peer_clock_1khz_is_estimated_and_qdelay_exact)
{
	check_clock_rate(1000, 12345, 999999);
}

TEST(peer_clock_250hz_is_estimated_and_qdelay_exact)
{
	check_clock_rate(250, 7, 4000000000u);
}

TEST(peer_clock_1mhz_is_estimated_and_qdelay_exact)
{
	check_clock_rate(1000000, 0, 123456789);
}

/*
 * Item 3 of issue 17: samples flow from the first ACKs, once they span
 * 10 ms and 16 peer ticks, on a provisional rate.  Before, nothing came
 * for a second.  ACKs every 2 ms from t = 0, no handshake seed.
 */
static u64 first_sample_us(u32 peer_hz)
{
	struct path p;
	u64 t;

	path_init(&p, peer_hz, 1, 1);
	for (t = 0; t < 900000; t += 2000)
		if (path_ack(&p, t, 0) != SYNCTCP_OTT_SKIP)
			break;
	CHECK(p.c.rate_provisional);
	CHECK(!p.c.rate_confirmed);
	CHECK_EQ(p.c.peer_hz, peer_hz);
	return t;
}

TEST(first_sample_within_tens_of_ms_on_a_provisional_rate)
{
	CHECK_EQ(first_sample_us(1000), 16000);		/* 16 ticks */
	CHECK_EQ(first_sample_us(1000000), 10000);	/* 10 ms */
	/* a legacy rate (250 Hz: 16 ticks in 64 ms) waits for its window:
	 * no_legacy_rate_is_taken_provisionally */
}

/*
 * With the handshake's TSval as the seed, the first data ACK a round trip
 * later already gives a sample, and the rest follow on the same base.
 */
TEST(seeded_clock_samples_from_the_first_data_ack)
{
	struct path p;
	u64 t;

	path_init(&p, 1000, 3, 77);
	/* the handshake's ACK left the peer at t = 0 and arrived at 5 ms */
	synctcp_tsclock_seed(&p.c, p.peer_off, p.own_off + 5000);
	CHECK_EQ(path_ack(&p, 50000, 0), SYNCTCP_OTT_REBASED);
	CHECK_EQ(p.samples, 1);
	for (t = 52000; t < 300000; t += 2000)
		CHECK_EQ(path_ack(&p, t, (u32)(t - 50000) / 10), SYNCTCP_OTT_OK);
	CHECK_NEAR(p.q.qdelay_us, 24800, 1000);
}

/* An early estimate between known rates is no provisional rate. */
TEST(early_estimate_off_a_known_rate_waits_for_the_window)
{
	struct synctcp_tsclock c;
	s64 ott;
	u32 i;

	synctcp_tsclock_init(&c);
	/* 1.2 kHz: within 1/4 of 1 kHz, not within 1/8 */
	for (i = 0; i < 900; i++)
		CHECK_EQ(synctcp_ott_ts_sample(&c, i * 6 / 5, i * 1000, 5000,
					       &ott), SYNCTCP_OTT_SKIP);
	CHECK(!synctcp_tsclock_rate_known(&c));
}

/*
 * A provisional rate that the first window contradicts gives no more
 * samples; the window stretches until its estimate fits a known rate
 * within 1/16, and the connection switches to it on a new base: nothing
 * measured on the wrong rate survives.
 */
TEST(window_contradicting_a_provisional_rate_rebases_on_the_fitting_one)
{
	struct synctcp_tsclock c;
	u32 t, tsval = 0, rebased = 0, samples_after_1s = 0, switched = 0;
	enum synctcp_ott_result r;
	s64 ott;

	synctcp_tsclock_init(&c);
	for (t = 0; t <= 8000; t++) {
		/* 1 kHz for 50 ms, then 100 Hz */
		tsval = t < 50 ? t : 50 + (t - 50) / 10;
		r = synctcp_ott_ts_sample(&c, tsval, t * 1000, 5000, &ott);
		if (r == SYNCTCP_OTT_REBASED && ++rebased == 2)
			switched = t;
		else if (r == SYNCTCP_OTT_OK && t > 1000 && rebased < 2)
			samples_after_1s++;
		if (t == 40)
			CHECK(c.rate_provisional && c.peer_hz == 1000);
	}
	CHECK_EQ(samples_after_1s, 0);	/* (50 + 95) Hz fits nothing */
	CHECK_EQ(rebased, 2);	/* the provisional rate, then the window's */
	CHECK(c.rate_confirmed);
	CHECK(!c.rate_provisional);
	CHECK(!c.unfit);
	CHECK_EQ(c.peer_hz, 100);
	/* from 6.3 s the window's estimate, 107 Hz, is within 1/16 of 100 */
	CHECK(switched > 6000 && switched < 6500);
}

/*
 * A provisional rate, if wrong, is the window's to correct: the jump check
 * (2 s of disagreement) must not restart the window first.
 */
TEST(wrong_provisional_rate_is_corrected_not_taken_for_a_jump)
{
	struct synctcp_tsclock c;
	u32 t, rebased = 0;
	s64 ott;

	synctcp_tsclock_init(&c);
	synctcp_tsclock_set_hz(&c, 250);	/* as if taken provisionally */
	c.rate_provisional = 1;
	c.started = 1;
	c.est_start_us = 1000000;
	c.est_tsval = 1000;
	c.last_tsval = 1000;
	c.last_sent_us = 1000000 - 5000;
	for (t = 1000; t <= 3000; t++) {	/* the peer ticks at 1 kHz */
		if (synctcp_ott_ts_sample(&c, t, (u64)t * 1000, 5000, &ott) ==
		    SYNCTCP_OTT_REBASED)
			rebased++;
	}
	CHECK_EQ(c.peer_hz, 1000);
	CHECK(c.rate_confirmed);
	CHECK_EQ(rebased, 1);
}

/*
 * A TSval moved by 2^30 ticks before the rate is confirmed (TCP_REPAIR,
 * kernel test test_both_ts_clocks_wrap): more than any known clock ticks,
 * so a jump, and the rate is found in the window after it.  A 1 MHz peer
 * under a provisional 1 kHz is no jump.
 */
TEST(a_jump_before_the_rate_is_confirmed_restarts_the_window)
{
	struct synctcp_tsclock c, fast;
	u32 t, jumps = 0;
	s64 ott;

	synctcp_tsclock_init(&c);
	synctcp_ott_ts_sample(&c, 5000, 1000000, 5000, &ott);
	CHECK(!c.rate_confirmed);
	CHECK_EQ(synctcp_ott_ts_sample(&c, 5000 + (1U << 30), 1300000, 5000,
				       &ott), SYNCTCP_OTT_REBASED);
	for (t = 1; t <= 1500; t++)	/* 1 kHz from there */
		synctcp_ott_ts_sample(&c, 5000 + (1U << 30) + t,
				      1300000 + (u64)t * 1000, 5000, &ott);
	CHECK(c.rate_confirmed);
	CHECK_EQ(c.peer_hz, 1000);

	synctcp_tsclock_init(&fast);
	synctcp_tsclock_set_hz(&fast, 1000); /* provisional, the peer is 1 MHz */
	fast.rate_provisional = 1;
	fast.started = 1;
	fast.est_start_us = 1000000;
	fast.est_tsval = 1000000;
	fast.last_tsval = 1000000;
	fast.last_sent_us = 1000000 - 5000;
	for (t = 1; t <= 1500; t++)
		if (synctcp_ott_ts_sample(&fast, 1000000 + t * 1000,
					  1000000 + (u64)t * 1000, 5000,
					  &ott) == SYNCTCP_OTT_REBASED &&
		    !fast.rate_confirmed)
			jumps++;
	CHECK_EQ(jumps, 0);
	CHECK_EQ(fast.peer_hz, 1000000);
}

/* Legacy rates wait for the window: only 1 kHz and 1 MHz are provisional. */
TEST(no_legacy_rate_is_taken_provisionally)
{
	struct synctcp_tsclock c;
	u32 t;
	s64 ott;

	synctcp_tsclock_init(&c);
	for (t = 0; t < 900; t++) {	/* 250 Hz for 0.9 s: no window yet */
		synctcp_ott_ts_sample(&c, t / 4, (u64)t * 1000, 5000, &ott);
		CHECK(!synctcp_tsclock_rate_known(&c));
	}
	for (; t <= 1200; t++)
		synctcp_ott_ts_sample(&c, t / 4, (u64)t * 1000, 5000, &ott);
	CHECK_EQ(c.peer_hz, 250);
	CHECK(c.rate_confirmed);
}

/* A clock that fits no known rate, even over 8 s, makes the peer unfit. */
TEST(clock_fitting_no_known_rate_is_unfit_once)
{
	struct synctcp_tsclock c;
	u32 t, unfit = 0, samples = 0;
	enum synctcp_ott_result r;
	s64 ott;

	synctcp_tsclock_init(&c);
	for (t = 0; t <= 20000; t += 10) {
		r = synctcp_ott_ts_sample(&c, t * 8 / 10, t * 1000, 5000, &ott);
		if (r == SYNCTCP_OTT_UNFIT)
			unfit++;
		else if (r != SYNCTCP_OTT_SKIP)
			samples++;
	}
	CHECK_EQ(unfit, 1);
	CHECK_EQ(samples, 0);
	CHECK(c.unfit);
}

TEST(min_max_tracking_across_u32_timestamp_wraparound)
{
	struct path p;
	u64 t;

	/* both TS clocks and the local clock wrap within the run */
	path_init(&p, 1000, 0xFFFFFFFFu - 1500, 0xFFFFFFFFu - 2500);
	for (t = 0; t < 4000000; t += 2000)
		path_ack(&p, t, 10000 + (t < 3000000 ? triangle_q_us(t) * 2 / 3 : 0));
	CHECK_EQ(p.c.peer_hz, 1000);
	CHECK_NEAR(p.q.max_qdelay_us, 20000, 2000);
	CHECK_NEAR(p.q.qdelay_us, 0, 2000);
	CHECK(p.samples > 1000);
}

TEST(local_clock_wraparound_keeps_rate)
{
	struct synctcp_tsclock c;
	u32 now = 0xFFFFFFFFu - 700000, tsval = 5;
	s64 ott;
	int i;

	synctcp_tsclock_init(&c);
	for (i = 0; i < 2000; i++, now += 1000, tsval++)
		synctcp_ott_ts_sample(&c, tsval, now, 5000, &ott);
	CHECK_EQ(c.peer_hz, 1000);
	CHECK(c.rate_confirmed);
	CHECK_EQ(ott, 0);
}

TEST(zero_tsval_is_a_valid_sample)
{
	struct synctcp_tsclock c;
	u32 now = 0, tsval = 0xFFFFFFFFu - 1200;
	enum synctcp_ott_result r = SYNCTCP_OTT_SKIP;
	s64 ott = -1;
	int i;

	synctcp_tsclock_init(&c);
	for (i = 0; i < 1300; i++, now += 1000, tsval++)
		r = synctcp_ott_ts_sample(&c, tsval, now, 5000, &ott);
	CHECK_EQ(c.last_tsval, 98);	/* passed through 0 */
	CHECK_EQ(r, SYNCTCP_OTT_OK);
	CHECK_EQ(ott, 0);
}

/*
 * The OTT is that of the newest segment the ACK acknowledges (its send time
 * is now - the RTT sample), not of the oldest one the TSecr echoes: a
 * delayed ACK of two segments sent 20 ms apart reads the second's OTT.
 */
TEST(ott_is_of_the_newest_segment_acknowledged)
{
	struct path p;
	u64 t;
	s64 ott;

	path_init(&p, 1000, 0, 0);
	for (t = 0; t < 1200000; t += 2000)
		path_ack(&p, t, 0);
	/*
	 * Segments sent at t and t + 20 ms, both with a 20 ms forward OTT;
	 * the ACK leaves the peer when the second arrives, t + 40 ms, and
	 * reaches us at t + 45 ms: its RTT sample is 25 ms (the second's).
	 * Its TSecr would be t's: 20 ms more.
	 */
	CHECK_EQ(synctcp_ott_ts_sample(&p.c, (u32)((t + 40000) / 1000),
				       (u32)(t + 45000), 25000, &ott),
		 SYNCTCP_OTT_OK);
	CHECK_EQ(p.q.min_ott_us, p.q.max_ott_us);	/* every sample alike */
	CHECK_NEAR(ott, p.q.min_ott_us, 1000);
}

/* A clock confirmed at 1 kHz, at t = 1.1 s, last TSval 1100, TSecr 1100. */
static void confirmed_clock(struct synctcp_tsclock *c)
{
	u32 i;
	s64 ott;

	synctcp_tsclock_init(c);
	for (i = 0; i <= 1100; i += 10)
		synctcp_ott_ts_sample(c, i, i * 1000, 1000, &ott);
	CHECK(c->rate_confirmed);
}

TEST(repeated_tsval_gives_a_sample_of_the_same_peer_time)
{
	struct synctcp_tsclock c;
	s64 a, b;

	confirmed_clock(&c);
	/* sent at 1191 ms and 1196 ms */
	CHECK_EQ(synctcp_ott_ts_sample(&c, 1200, 1200000, 9000, &a), SYNCTCP_OTT_OK);
	CHECK_EQ(synctcp_ott_ts_sample(&c, 1200, 1200500, 4500, &b), SYNCTCP_OTT_OK);
	CHECK_EQ(a - b, 5000);	/* later send, same arrival: 5 ms less OTT */
}

TEST(backwards_tsval_is_ignored)
{
	struct synctcp_tsclock c;
	s64 ott = 12345, before_ott;

	confirmed_clock(&c);
	before_ott = c.ott_us;
	CHECK_EQ(synctcp_ott_ts_sample(&c, 1099, 1200000, 1000, &ott), SYNCTCP_OTT_SKIP);
	CHECK_EQ(synctcp_ott_ts_sample(&c, 1050, 1201000, 1000, &ott), SYNCTCP_OTT_SKIP);
	CHECK_EQ(ott, 12345);
	CHECK_EQ(c.ott_us, before_ott);
	CHECK_EQ(c.last_tsval, 1100);
}

TEST(rate_change_needs_two_windows_and_rebases)
{
	struct synctcp_tsclock c;
	u32 t, rebased = 0;
	s64 ott;

	confirmed_clock(&c);
	/*
	 * The peer ticks at 250 Hz from t = 1.1 s: the window ending at 2 s
	 * mixes both rates, the next two see 250 Hz and switch.
	 */
	for (t = 1110; t < 4100; t += 10) {
		u32 tsval = 1100 + (t - 1100) / 4;

		if (synctcp_ott_ts_sample(&c, tsval, t * 1000, 1000, &ott) ==
		    SYNCTCP_OTT_REBASED)
			rebased++;
		if (t < 4000)
			CHECK_EQ(c.peer_hz, 1000);
	}
	CHECK_EQ(rebased, 1);
	CHECK_EQ(c.peer_hz, 250);
}

/*
 * Item 5 of issue 15: after an idle longer than 2^31 ticks of a 1 MHz peer
 * clock (35.8 min) every later TSval looked older than the last one: about
 * 190k ACKs gave no sample and the detector was off for ~32 minutes.  The
 * sampler must resynchronize on the first ACKs after the idle.
 */
static void check_resumes_after_idle(u32 peer_hz, u64 idle_us)
{
	struct path p;
	u64 t, t1;
	int before;

	path_init(&p, peer_hz, 77, 3000000000u);
	for (t = 0; t < 3000000; t += 2000)
		path_ack(&p, t, triangle_q_us(t));
	CHECK(p.c.rate_confirmed);
	t1 = t + idle_us;
	before = p.samples;
	/* 3 s of ACKs after the idle, over the same triangle queue */
	for (t = t1; t < t1 + 3000000; t += 2000)
		path_ack(&p, t, triangle_q_us(t - t1));
	CHECK(p.samples - before > 1000);
	CHECK_EQ(p.c.peer_hz, peer_hz);
	CHECK_NEAR(p.q.max_qdelay_us, 30000, 3000);
	path_ack(&p, t, 0);
	CHECK_NEAR(p.q.qdelay_us, 0, 3000);
}

TEST(sampler_resumes_after_40_min_idle_of_a_1mhz_peer)
{
	check_resumes_after_idle(1000000, 40ULL * 60 * 1000000);
}

TEST(sampler_resumes_after_80_min_idle_of_a_1khz_peer)
{
	check_resumes_after_idle(1000, 80ULL * 60 * 1000000);
}

/*
 * A forward jump of the peer's TSval (a clock step, a reboot of a TS
 * offset) made every later OTT look like a full queue: max qdelay stuck
 * at the jump.  It must restart the OTT base instead.
 */
static void check_tsval_jump(u32 peer_hz, s64 jump_ticks)
{
	struct path p;
	u64 t;
	int rebased = 0;

	path_init(&p, peer_hz, 5, 100);
	for (t = 0; t < 3000000; t += 2000)
		path_ack(&p, t, triangle_q_us(t));
	p.peer_off += (u32)jump_ticks;
	for (; t < 6000000; t += 2000)
		rebased += path_ack(&p, t, triangle_q_us(t)) == SYNCTCP_OTT_REBASED;
	CHECK(rebased >= 1);
	CHECK_EQ(p.c.peer_hz, peer_hz);
	CHECK_NEAR(p.q.max_qdelay_us, 30000, 3000);
}

TEST(forward_tsval_jump_restarts_the_base)
{
	check_tsval_jump(1000, 10000);			/* +10 s */
	check_tsval_jump(1000000, 3000000000LL);	/* +50 min, past 2^31 */
}

TEST(backward_tsval_jump_restarts_the_base)
{
	check_tsval_jump(1000, -10000);
	check_tsval_jump(1000000, -100000000LL);
}

/* Within 1/16 of a known rate: 250 and 300 Hz apart, 800 Hz no 1 kHz. */
TEST(snap_to_known_rates)
{
	CHECK_EQ(synctcp_snap_clock_hz(1050), 1000);
	CHECK_EQ(synctcp_snap_clock_hz(940), 1000);
	CHECK_EQ(synctcp_snap_clock_hz(1180), 1180);	/* unknown: raw */
	CHECK_EQ(synctcp_snap_clock_hz(800), 800);
	CHECK_EQ(synctcp_snap_clock_hz(260), 250);
	CHECK_EQ(synctcp_snap_clock_hz(290), 300);
	CHECK_EQ(synctcp_snap_clock_hz(275), 275);	/* between 250 and 300 */
	CHECK_EQ(synctcp_snap_clock_hz(970000), 1000000);
	CHECK_EQ(synctcp_snap_clock_hz(500), 500);
	CHECK_EQ(synctcp_clock_code(1000), SYNCTCP_CLOCK_1KHZ);
	CHECK_EQ(synctcp_clock_code(250), SYNCTCP_CLOCK_250HZ);
	CHECK_EQ(synctcp_clock_code(300), SYNCTCP_CLOCK_300HZ);
	CHECK_EQ(synctcp_clock_code(500), SYNCTCP_CLOCK_OTHER);
	CHECK(synctcp_known_clock_hz(2) && synctcp_known_clock_hz(1000000));
	CHECK(!synctcp_known_clock_hz(0) && !synctcp_known_clock_hz(800));
}

TEST(qdelay_is_ott_minus_min_and_max_is_max_minus_min)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_update(&q, 50000);
	CHECK_EQ(q.qdelay_us, 0);
	synctcp_qdelay_update(&q, 80000);
	CHECK_EQ(q.qdelay_us, 30000);
	CHECK_EQ(q.max_qdelay_us, 30000);
	synctcp_qdelay_update(&q, 40000);	/* new minimum */
	CHECK_EQ(q.qdelay_us, 0);
	CHECK_EQ(q.max_qdelay_us, 40000);	/* max OTT - new min OTT */
	synctcp_qdelay_update(&q, 60000);
	CHECK_EQ(q.qdelay_us, 20000);
	CHECK_EQ(q.max_qdelay_us, 40000);	/* never decreases */
}

TEST(negative_offset_otts_are_handled)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_update(&q, -3000000000LL);
	synctcp_qdelay_update(&q, -2999990000LL);
	CHECK_EQ(q.qdelay_us, 10000);
	CHECK_EQ(q.max_qdelay_us, 10000);
}

/* Only a loss after the first sample counts; a reset (rebase) forgets it. */
TEST(loss_counts_only_once_sampled_and_reset_forgets_it)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_on_loss(&q);
	CHECK(!q.loss_seen);
	synctcp_qdelay_update(&q, 50000);
	CHECK(!q.loss_seen);
	synctcp_qdelay_on_loss(&q);
	CHECK(q.loss_seen);
	synctcp_qdelay_update(&q, 90000);
	CHECK(q.loss_seen);
	synctcp_qdelay_reset(&q);
	CHECK(!q.loss_seen);
}

/*
 * Variant best: a loss before the first sample counts once the maximum
 * reaches 10 ms (the paper's estimator never counts it); a reset forgets it.
 */
TEST(an_early_loss_counts_once_the_maximum_reaches_ten_ms)
{
	struct synctcp_qdelay q, paper;
	u64 t;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_init(&paper, true);
	synctcp_qdelay_on_loss(&q);
	synctcp_qdelay_on_loss(&paper);
	CHECK(q.early_loss && !q.loss_seen);
	/* prompt samples, a queue of 0 to 9 ms: not yet */
	for (t = 0; t < 100; t++) {
		s64 ott = 20000 + (s64)(t % 10) * 1000;

		synctcp_qdelay_sample_held(&q, ott, t * 10000, 0, false);
		synctcp_qdelay_sample_held(&paper, ott, t * 10000, 0, false);
	}
	CHECK_EQ(q.max_qdelay_us, 8000);	/* two in a row agree on 8 */
	CHECK(!q.loss_seen);
	/* 12 ms twice in a row: the maximum is 12 ms, the loss counts */
	synctcp_qdelay_sample_held(&q, 32000, 1000000, 0, false);
	synctcp_qdelay_sample_held(&q, 32000, 1010000, 0, false);
	synctcp_qdelay_sample_held(&paper, 32000, 1000000, 0, false);
	CHECK_EQ(q.max_qdelay_us, 12000);
	CHECK(q.loss_seen);
	CHECK_EQ(q.loss_max_us, 12000);
	CHECK(!paper.loss_seen);
	synctcp_qdelay_reset(&q);
	CHECK(!q.early_loss && !q.loss_seen);
}

/*
 * Variant best: a flow that cannot grow (not cwnd-limited) trusts a
 * maximum of 10 ms without a loss, provisionally: held by the receiver's
 * window it may never lose.  One that can grow waits for its loss; the
 * paper's estimator always does.
 */
TEST(a_maximum_of_ten_ms_is_trusted_without_a_loss_by_a_flow_that_cannot_grow)
{
	struct synctcp_qdelay q, paper;
	u64 t;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_init(&paper, true);
	for (t = 0; t < 100; t++) {
		s64 ott = 20000 + (s64)(t % 10) * 1000;

		synctcp_qdelay_sample_held(&q, ott, t * 10000, 0, false);
		synctcp_qdelay_sample_held(&paper, ott, t * 10000, 0, false);
	}
	CHECK_EQ(q.max_qdelay_us, 8000);
	synctcp_qdelay_trust_held(&q);		/* below 10 ms: not yet */
	CHECK(!q.loss_seen && !q.early_loss);
	synctcp_qdelay_sample_held(&q, 31000, 1000000, 0, false);
	synctcp_qdelay_sample_held(&q, 31000, 1010000, 0, false);
	synctcp_qdelay_sample_held(&paper, 31000, 1000000, 0, false);
	CHECK_EQ(q.max_qdelay_us, 11000);
	CHECK(!q.loss_seen);			/* it could still grow */
	synctcp_qdelay_trust_held(&q);
	synctcp_qdelay_trust_held(&paper);
	CHECK(q.loss_seen && q.provisional);
	CHECK_EQ(q.loss_max_us, 11000);
	CHECK(!paper.loss_seen);
	/* a loss at that maximum makes it final */
	synctcp_qdelay_on_loss(&q);
	CHECK(q.loss_seen && !q.provisional);
}

/* An estimator whose maximum of 12 ms an early loss made trusted. */
static void early_loss_max_12ms(struct synctcp_qdelay *q, bool all_time_min)
{
	synctcp_qdelay_init(q, all_time_min);
	synctcp_qdelay_on_loss(q);
	synctcp_qdelay_sample_held(q, 20000, 0, 0, false);
	synctcp_qdelay_sample_held(q, 32000, 10000, 0, false);
	synctcp_qdelay_sample_held(q, 32000, 20000, 0, false);
}

/* Feed a starving flow's signal, one sample every 10 ms, from @t0_us. */
/* A sample every 10 ms: signal @b on every other one (from the first), @a else. */
static void starve_alt(struct synctcp_qdelay *q, u32 a_us, u32 b_us, u32 cwnd,
		       u64 t0_us, u64 len_us, u32 srtt_us)
{
	u64 t;

	for (t = 0; t < len_us; t += 10000)
		synctcp_qdelay_starving(q, t % 20000 ? a_us : b_us, 25, cwnd,
					t0_us + t, srtt_us);
}

static void starve_for(struct synctcp_qdelay *q, u32 signal_us, u32 cwnd,
		       u64 t0_us, u64 len_us)
{
	starve_alt(q, signal_us, signal_us, cwnd, t0_us, len_us, 50000);
}

/*
 * Variant best: a maximum trusted from an early loss is provisional.  A
 * flow at a cwnd of at most 4 for 16 round trips without a loss, whose
 * mean signal was above its threshold, raises it to the maximum whose
 * threshold is the stretch's largest signal, by half at most; not from
 * fewer round trips, not at a larger cwnd, not when the mean is below.
 */
TEST(a_starving_flow_raises_a_provisional_maximum_to_the_queue_it_sees)
{
	struct synctcp_qdelay q;

	early_loss_max_12ms(&q, false);
	CHECK(q.loss_seen && q.provisional);
	CHECK_EQ(q.max_qdelay_us, 12000);
	/* a 10 ms queue, threshold 3 ms: 15 round trips of 50 ms, nothing */
	starve_for(&q, 10000, 2, 1000000, 750000);
	CHECK_EQ(q.max_qdelay_us, 12000);
	/* the 16th: raised by half, and a new stretch begins */
	starve_for(&q, 10000, 2, 1750000, 60000);
	CHECK_EQ(q.max_qdelay_us, 18000);
	CHECK_EQ(q.loss_max_us, 18000);
	CHECK_EQ(q.max_ott_us - q.min_ott_us, 18000);
	/* 27, then 40 ms (not 40.5): the threshold is the 10 ms queue */
	starve_for(&q, 10000, 2, 2000000, 10000000);
	CHECK_EQ(q.max_qdelay_us, 40000);
	/* at a cwnd of 5 the flow is not starving */
	starve_for(&q, 20000, 5, 20000000, 10000000);
	CHECK_EQ(q.max_qdelay_us, 40000);
	/* a cwnd of 5 ends the stretch */
	starve_for(&q, 20000, 2, 40000000, 700000);
	synctcp_qdelay_starving(&q, 20000, 25, 5, 40700000, 50000);
	starve_for(&q, 20000, 2, 40710000, 700000);
	CHECK_EQ(q.max_qdelay_us, 40000);
	/* a queue of 5 and 12 ms in turn: the mean is below the threshold */
	synctcp_qdelay_starving(&q, 20000, 25, 5, 44990000, 50000);
	starve_alt(&q, 12000, 5000, 2, 45000000, 10000000, 50000);
	CHECK_EQ(q.max_qdelay_us, 40000);
	/* no srtt, no stretch */
	synctcp_qdelay_starving(&q, 20000, 25, 5, 49990000, 50000);
	starve_alt(&q, 40000, 40000, 2, 50000000, 10000000, 0);
	CHECK_EQ(q.max_qdelay_us, 40000);
	/*
	 * 12 and 20 ms in turn: 60 (80 would be more than half), then 80,
	 * the threshold at the largest signal; no further: the mean is below
	 */
	synctcp_qdelay_starving(&q, 20000, 25, 5, 59990000, 50000);
	starve_alt(&q, 20000, 12000, 2, 60000000, 10000000, 50000);
	CHECK_EQ(q.max_qdelay_us, 80000);
}

/* One sample of 200 ms in a stretch of 10 ms ones moves the maximum by half. */
TEST(a_lone_large_signal_raises_a_provisional_maximum_by_half_at_most)
{
	struct synctcp_qdelay q;

	early_loss_max_12ms(&q, false);
	synctcp_qdelay_starving(&q, 200000, 25, 2, 1000000, 50000);
	starve_for(&q, 10000, 2, 1010000, 800000);
	CHECK_EQ(q.max_qdelay_us, 18000);
}

/*
 * A loss the estimator measured at a maximum of 10 ms or more makes the
 * maximum final; a loss also ends the stretch.  A maximum trusted from such
 * a loss, or the paper's estimator's, is never raised; one trusted from a
 * loss measured at less is provisional.
 */
TEST(a_measured_loss_makes_the_maximum_final)
{
	struct synctcp_qdelay q, paper;

	early_loss_max_12ms(&q, false);
	starve_for(&q, 10000, 2, 1000000, 700000);
	synctcp_qdelay_on_loss(&q);
	CHECK(!q.starving && !q.provisional && q.loss_seen);
	starve_for(&q, 10000, 2, 1710000, 10000000);
	CHECK_EQ(q.max_qdelay_us, 12000);
	CHECK_EQ(q.loss_max_us, 12000);

	/* measured from the start */
	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_sample_held(&q, 20000, 0, 0, false);
	synctcp_qdelay_sample_held(&q, 32000, 10000, 0, false);
	synctcp_qdelay_sample_held(&q, 32000, 20000, 0, false);
	synctcp_qdelay_on_loss(&q);
	CHECK(q.loss_seen && !q.provisional);
	starve_for(&q, 10000, 2, 1000000, 10000000);
	CHECK_EQ(q.max_qdelay_us, 12000);

	/* a loss at a maximum of 9 ms: provisional, raised by half */
	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_sample_held(&q, 20000, 0, 0, false);
	synctcp_qdelay_sample_held(&q, 29000, 10000, 0, false);
	synctcp_qdelay_sample_held(&q, 29000, 20000, 0, false);
	synctcp_qdelay_on_loss(&q);
	CHECK(q.loss_seen && q.provisional);
	CHECK_EQ(q.max_qdelay_us, 9000);
	starve_for(&q, 10000, 2, 1000000, 810000);
	CHECK_EQ(q.max_qdelay_us, 13500);
	/* a loss at 13.5 ms: final */
	synctcp_qdelay_on_loss(&q);
	CHECK(!q.provisional);
	starve_for(&q, 10000, 2, 2000000, 10000000);
	CHECK_EQ(q.max_qdelay_us, 13500);

	/* the paper's estimator never counts the early loss */
	early_loss_max_12ms(&paper, true);
	CHECK(!paper.loss_seen && !paper.provisional);
	starve_for(&paper, 10000, 2, 1000000, 10000000);
	CHECK_EQ(paper.max_qdelay_us, 12000);

	/* a reset forgets it all */
	early_loss_max_12ms(&q, false);
	synctcp_qdelay_reset(&q);
	CHECK(!q.provisional && !q.starving);
}

/*
 * Item 2 of issue 15: nothing from the peer is trusted for ever.  The
 * samples of a 20 ms path with a 0-30 ms triangle queue, one every 2 ms
 * from @t0_us, taken with the bound of a 50 ms srtt (200 ms).
 */
static void feed_path(struct synctcp_qdelay *q, u64 t0_us, u64 len_us,
		      s64 base_us)
{
	u64 t;

	for (t = t0_us; t < t0_us + len_us; t += 2000)
		synctcp_qdelay_sample(q, base_us + triangle_q_us(t), t,
				      synctcp_qdelay_bound_us(50000));
}

TEST(forged_far_ott_is_rejected_and_steers_nothing)
{
	struct synctcp_qdelay q, raw;
	u32 max_before;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 1200000, 20000);
	synctcp_qdelay_on_loss(&q);
	max_before = q.max_qdelay_us;
	/* what two samples in a row agreed on: the peak's neighbour */
	CHECK_EQ(max_before, 30000 - 200);
	CHECK_EQ(synctcp_qdelay_bound_us(50000), 200000);
	/* one option echoing -119 s: inside the +-120 s sanity bound */
	CHECK_EQ(synctcp_qdelay_sample(&q, -119000000LL, 1200000,
				       synctcp_qdelay_bound_us(50000)),
		 SYNCTCP_OTT_SKIP);
	CHECK_EQ(q.min_ott_us, 20000);
	CHECK_EQ(q.max_qdelay_us, max_before);
	CHECK_EQ(synctcp_qdelay_sample(&q, 25000, 1202000,
				       synctcp_qdelay_bound_us(50000)),
		 SYNCTCP_OTT_OK);
	CHECK_EQ(q.qdelay_us, 5000);
	/* and +119 s would have made max qdelay meaningless */
	CHECK_EQ(synctcp_qdelay_sample(&q, 119000000LL, 1204000,
				       synctcp_qdelay_bound_us(50000)),
		 SYNCTCP_OTT_SKIP);
	CHECK_EQ(q.max_qdelay_us, max_before);

	/* what the unfiltered estimator made of it: every sample a full queue */
	synctcp_qdelay_init(&raw, false);
	synctcp_qdelay_update(&raw, 20000);
	synctcp_qdelay_update(&raw, -119000000LL);
	synctcp_qdelay_update(&raw, 20000);
	CHECK(raw.qdelay_us > 119000000U);
}

/*
 * A forged OTT far below the path's (within the bound): the dissertation's
 * estimator keeps it for ever; the prompt one moves its base back up
 * once a whole window of prompt OTTs was above it by more than any
 * queue (within two windows of 30 s).
 */
TEST(forged_low_ott_within_the_bound_is_forgotten_by_the_prompt_estimator)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 1000000, 20000);
	synctcp_qdelay_on_loss(&q);	/* a full queue was 30 ms */
	CHECK_EQ(synctcp_qdelay_sample(&q, 20000 - 150000, 1000000,
				       synctcp_qdelay_bound_us(50000)),
		 SYNCTCP_OTT_OK);
	CHECK_EQ(q.min_ott_us, -130000);
	feed_path(&q, 1002000, 2ULL * 31 * 1000000, 20000);
	CHECK_EQ(q.min_ott_us, 20000);
	synctcp_qdelay_sample(&q, 20000, 70000000,
			      synctcp_qdelay_bound_us(50000));
	CHECK_EQ(q.qdelay_us, 0);
	/* the dissertation's keeps it */
	synctcp_qdelay_init(&q, true);
	feed_path(&q, 0, 1000000, 20000);
	synctcp_qdelay_sample(&q, 20000 - 150000, 1000000,
			      synctcp_qdelay_bound_us(50000));
	feed_path(&q, 1002000, 2ULL * 31 * 1000000, 20000);
	CHECK_EQ(q.min_ott_us, -130000);
}

/*
 * The prompt estimator (variant "best"): an ACK of one segment the peer
 * held for its delayed-ACK timer carries the hold (on weigle-ftp 40-200 ms
 * over the queue).  Such samples only bound the queue from above: with
 * every other ACK held the estimate stays the queue, the maximum too.
 */
TEST(held_samples_bound_the_queue_from_above)
{
	struct synctcp_qdelay q;
	u64 t;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_sample_held(&q, 20000, 0, 0, false);
	for (t = 2000; t < 5000000; t += 2000) {
		bool held = t / 2000 % 2;
		/* a 30 ms queue; the held ACKs 40 to 190 ms late */
		s64 ott = 20000 + 30000 + (held ? 40000 + (t % 150000) : 0);

		CHECK_EQ(synctcp_qdelay_sample_held(&q, ott, t,
						    synctcp_qdelay_bound_us(100000),
						    held), SYNCTCP_OTT_OK);
		if (t > 6000)	/* two prompt samples agreed on the queue */
			CHECK_EQ(q.qdelay_us, 30000);
	}
	CHECK_EQ(q.max_qdelay_us, 30000);
	/* a held sample below the estimate lowers it: the queue drained */
	synctcp_qdelay_sample_held(&q, 30000, 5000000, 0, true);
	CHECK_EQ(q.qdelay_us, 10000);
	CHECK_EQ(q.max_qdelay_us, 30000);
}

/*
 * One prompt ACK in a thousand came up to 80 ms late on weigle-ftp
 * (a receive window that would not advance): the maximum rises only to
 * what two prompt samples in a row agree on.  The late one still signals,
 * as a full queue.
 */
TEST(a_lone_late_prompt_sample_does_not_set_the_maximum)
{
	struct synctcp_qdelay q;
	u64 t;

	synctcp_qdelay_init(&q, false);
	for (t = 0; t < 1000000; t += 2000)
		synctcp_qdelay_sample(&q, 20000 + (t < 500000 ? 0 : 60000), t, 0);
	CHECK_EQ(q.max_qdelay_us, 60000);
	synctcp_qdelay_sample(&q, 20000 + 160000, t, 0);
	CHECK_EQ(q.max_qdelay_us, 60000);
	CHECK_EQ(q.qdelay_us, 60000);
	synctcp_qdelay_sample(&q, 20000 + 50000, t + 2000, 0);
	CHECK_EQ(q.qdelay_us, 50000);
	/* two in a row: a larger queue */
	synctcp_qdelay_sample(&q, 20000 + 90000, t + 4000, 0);
	synctcp_qdelay_sample(&q, 20000 + 92000, t + 6000, 0);
	CHECK_EQ(q.max_qdelay_us, 90000);
	CHECK_EQ(q.qdelay_us, 90000);
	/* the dissertation's takes the first */
	synctcp_qdelay_init(&q, true);
	synctcp_qdelay_sample(&q, 20000, 0, 0);
	synctcp_qdelay_sample(&q, 20000 + 160000, 2000, 0);
	CHECK_EQ(q.max_qdelay_us, 160000);
}

/*
 * A queue that never drains does not age the base upwards: the queuing
 * delay stays what it is (a base that aged out hid the standing queue,
 * which then crept up).
 */
TEST(standing_queue_that_never_drains_is_not_taken_for_the_path)
{
	struct synctcp_qdelay q;
	u64 t;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 1000000, 20000);	/* the queue drains */
	for (t = 1000000; t < 200000000; t += 2000)	/* 10-40 ms, for 200 s */
		synctcp_qdelay_sample(&q, 30000 + (t / 1000 % 30000), t,
				      synctcp_qdelay_bound_us(100000));
	CHECK_EQ(q.min_ott_us, 20000);
	CHECK(q.qdelay_us >= 10000);
}

TEST(lasting_shift_is_relearned_after_max_rejects)
{
	struct synctcp_qdelay q;
	u32 i;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 1000000, 20000);
	/* the hosts' clocks step by -10 s: every sample is far off */
	for (i = 1; i < SYNCTCP_QDELAY_MAX_REJECTS; i++)
		CHECK_EQ(synctcp_qdelay_sample(&q, -10000000 + 20000,
					       1000000 + i * 2000,
					       synctcp_qdelay_bound_us(50000)),
			 SYNCTCP_OTT_SKIP);
	CHECK_EQ(synctcp_qdelay_sample(&q, -10000000 + 20000, 1200000,
				       synctcp_qdelay_bound_us(50000)),
		 SYNCTCP_OTT_REBASED);
	CHECK_EQ(q.min_ott_us, -10000000 + 20000);
	CHECK(!q.loss_seen);
	feed_path(&q, 1202000, 1000000, -10000000 + 20000);
	CHECK_EQ(q.max_qdelay_us, 30000 - 200);	/* the peak's neighbour */
}

TEST(interleaved_genuine_samples_keep_a_forger_from_the_restart)
{
	struct synctcp_qdelay q;
	u32 i;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 1000000, 20000);
	for (i = 0; i < 10 * SYNCTCP_QDELAY_MAX_REJECTS; i++) {
		u64 t = 1000000 + i * 2000;
		s64 ott = i % 2 ? 20000 + 1000 : -119000000LL;

		CHECK(synctcp_qdelay_sample(&q, ott, t,
					    synctcp_qdelay_bound_us(50000)) !=
		      SYNCTCP_OTT_REBASED);
	}
	CHECK_EQ(q.min_ott_us, 20000);
}

/*
 * A route change to a path 40 ms longer (more than any queue the
 * connection saw): the prompt estimator's base follows within two
 * windows of 30 s.
 */
TEST(min_ott_follows_a_longer_path_within_two_windows)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 10000000, 20000);
	synctcp_qdelay_on_loss(&q);	/* a full queue was 30 ms */
	feed_path(&q, 10000000, 2ULL * 31 * 1000000, 60000);
	CHECK_EQ(q.min_ott_us, 60000);
	CHECK(q.max_qdelay_us <= 31000);
	CHECK_EQ(synctcp_qdelay_bound_us(0), 0);	/* no srtt: no bound */
}

/*
 * fuzz_ott: a lower OTT at the end of a path-change window lowered the
 * base, and the test then compared the window's earlier minimum with the
 * new base and "moved" the base back up, to a value the sample undercut:
 * the maximum fell with no path change.  The window's minimum includes the
 * sample that ends it.
 */
TEST(a_new_base_at_the_end_of_a_window_is_kept)
{
	struct synctcp_qdelay q;
	u32 max_before;

	synctcp_qdelay_init(&q, false);
	feed_path(&q, 0, 10000000, 60000);
	synctcp_qdelay_on_loss(&q);
	max_before = q.max_qdelay_us;
	/* the window ends with a sample 40 ms below the base */
	synctcp_qdelay_sample(&q, 20000, 31000000,
			      synctcp_qdelay_bound_us(50000));
	CHECK_EQ(q.min_ott_us, 20000);
	CHECK(q.max_qdelay_us >= max_before);
	CHECK_EQ(q.qdelay_us, 0);
}

/*
 * Item 4 of issue 17: an ACK of a lone segment that waited for the peer's
 * delayed-ACK timer (40 ms) read as a queue 40 ms longer than the full
 * one: max qdelay 135-140 ms on a 96 ms queue.  Such a sample may not
 * raise the maximum; an ACK of two segments, sent at once, may.
 */
TEST(held_ack_does_not_raise_the_max)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, true);
	CHECK_EQ(synctcp_qdelay_sample_held(&q, 20000, 0, 0, true), SYNCTCP_OTT_OK);
	CHECK_EQ(synctcp_qdelay_sample_held(&q, 116000, 1000, 0, false), SYNCTCP_OTT_OK);
	CHECK_EQ(q.max_qdelay_us, 96000);
	/* the full queue plus a 40 ms hold */
	CHECK_EQ(synctcp_qdelay_sample_held(&q, 156000, 2000, 0, true), SYNCTCP_OTT_SKIP);
	CHECK_EQ(q.max_qdelay_us, 96000);
	/* below the max a held sample counts as any other */
	CHECK_EQ(synctcp_qdelay_sample_held(&q, 60000, 3000, 0, true), SYNCTCP_OTT_OK);
	CHECK_EQ(q.qdelay_us, 40000);
	CHECK_EQ(synctcp_qdelay_sample_held(&q, 10000, 4000, 0, true), SYNCTCP_OTT_OK);
	CHECK_EQ(q.min_ott_us, 10000);
	/* an immediate ACK raises it */
	CHECK_EQ(synctcp_qdelay_sample_held(&q, 120000, 5000, 0, false), SYNCTCP_OTT_OK);
	CHECK_EQ(q.max_qdelay_us, 110000);
}

/*
 * Item 3 of issue 17: a short connection starts from the full-queue delay
 * an earlier one on the path learnt, measured from its own first sample.
 */
TEST(inherited_max_is_trusted_from_the_first_sample)
{
	struct synctcp_qdelay q;

	synctcp_qdelay_init(&q, false);
	synctcp_qdelay_inherit(&q, 60000);
	CHECK(q.loss_seen);
	CHECK(!synctcp_qdelay_valid(&q));
	CHECK_EQ(synctcp_qdelay_sample(&q, 5000, 0, 0), SYNCTCP_OTT_OK);
	CHECK_EQ(q.max_qdelay_us, 60000);
	CHECK_EQ(q.qdelay_us, 0);
	CHECK_EQ(synctcp_qdelay_sample(&q, 45000, 1000, 0), SYNCTCP_OTT_OK);
	CHECK_EQ(q.qdelay_us, 40000);
	CHECK_EQ(q.max_qdelay_us, 60000);
	/* a lower minimum later: the maximum is measured from it */
	CHECK_EQ(synctcp_qdelay_sample(&q, 2000, 2000, 0), SYNCTCP_OTT_OK);
	CHECK_EQ(q.max_qdelay_us, 63000);
	/* once sampling, nothing more is inherited */
	synctcp_qdelay_inherit(&q, 1000);
	CHECK_EQ(q.max_qdelay_us, 63000);
	synctcp_qdelay_reset(&q);
	CHECK(!q.loss_seen);
	CHECK_EQ(q.max_qdelay_us, 0);
}

/*
 * The ACK path turns peer ticks into microseconds with a multiplication
 * where 10^6 / hz is exact: the result and the remainder carried forward
 * must be those of the division, for every known rate (300 Hz keeps the
 * division) and for a remainder left by 300 Hz before a switch.
 */
TEST(tick_conversion_is_the_exact_division_at_every_known_rate)
{
	static const u32 rates[] = { 1000, 1000000, 250, 100, 300, 10, 2, 1 };
	static const u32 ticks[] = { 0, 1, 2, 3, 7, 299, 301, 1000, 4096,
				     65535, 1U << 20, 0x7fffffffU, 0xffffffffU };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		struct synctcp_tsclock c;
		u32 rem = 0;

		synctcp_tsclock_init(&c);
		synctcp_tsclock_set_hz(&c, rates[i]);
		CHECK_EQ(c.tick_us, rates[i] >= 1000000 ? 1 : 1000000 / rates[i]);
		CHECK_EQ(c.tick_exact, 1000000 % rates[i] == 0);
		for (j = 0; j < ARRAY_SIZE(ticks); j++) {
			u64 num = (u64)ticks[j] * 1000000 + rem;

			CHECK_EQ(synctcp_tsclock_ticks_to_us(&c, ticks[j]),
				 num / rates[i]);
			rem = (u32)(num % rates[i]);
			CHECK_EQ(c.peer_rem, rem);
		}
	}
	{
		struct synctcp_tsclock c;

		synctcp_tsclock_init(&c);
		synctcp_tsclock_set_hz(&c, 300);
		synctcp_tsclock_ticks_to_us(&c, 1);	/* leaves 100 */
		CHECK_EQ(c.peer_rem, 100);
		synctcp_tsclock_set_hz(&c, 2);		/* exact, remainder kept */
		CHECK_EQ(synctcp_tsclock_ticks_to_us(&c, 3), (3000000 + 100) / 2);
		CHECK_EQ(c.peer_rem, 0);
		CHECK_EQ(synctcp_tsclock_ticks_to_us(&c, 3), 1500000);
	}
}

static const struct harness_test tests[] = {
	T(tick_conversion_is_the_exact_division_at_every_known_rate),
	T(peer_clock_1khz_is_estimated_and_qdelay_exact),
	T(peer_clock_250hz_is_estimated_and_qdelay_exact),
	T(peer_clock_1mhz_is_estimated_and_qdelay_exact),
	T(first_sample_within_tens_of_ms_on_a_provisional_rate),
	T(seeded_clock_samples_from_the_first_data_ack),
	T(early_estimate_off_a_known_rate_waits_for_the_window),
	T(window_contradicting_a_provisional_rate_rebases_on_the_fitting_one),
	T(clock_fitting_no_known_rate_is_unfit_once),
	T(wrong_provisional_rate_is_corrected_not_taken_for_a_jump),
	T(a_jump_before_the_rate_is_confirmed_restarts_the_window),
	T(no_legacy_rate_is_taken_provisionally),
	T(min_max_tracking_across_u32_timestamp_wraparound),
	T(local_clock_wraparound_keeps_rate),
	T(zero_tsval_is_a_valid_sample),
	T(ott_is_of_the_newest_segment_acknowledged),
	T(repeated_tsval_gives_a_sample_of_the_same_peer_time),
	T(backwards_tsval_is_ignored),
	T(rate_change_needs_two_windows_and_rebases),
	T(sampler_resumes_after_40_min_idle_of_a_1mhz_peer),
	T(sampler_resumes_after_80_min_idle_of_a_1khz_peer),
	T(forward_tsval_jump_restarts_the_base),
	T(backward_tsval_jump_restarts_the_base),
	T(snap_to_known_rates),
	T(qdelay_is_ott_minus_min_and_max_is_max_minus_min),
	T(loss_counts_only_once_sampled_and_reset_forgets_it),
	T(an_early_loss_counts_once_the_maximum_reaches_ten_ms),
	T(a_maximum_of_ten_ms_is_trusted_without_a_loss_by_a_flow_that_cannot_grow),
	T(a_starving_flow_raises_a_provisional_maximum_to_the_queue_it_sees),
	T(a_lone_large_signal_raises_a_provisional_maximum_by_half_at_most),
	T(a_measured_loss_makes_the_maximum_final),
	T(negative_offset_otts_are_handled),
	T(forged_far_ott_is_rejected_and_steers_nothing),
	T(forged_low_ott_within_the_bound_is_forgotten_by_the_prompt_estimator),
	T(held_samples_bound_the_queue_from_above),
	T(a_lone_late_prompt_sample_does_not_set_the_maximum),
	T(standing_queue_that_never_drains_is_not_taken_for_the_path),
	T(lasting_shift_is_relearned_after_max_rejects),
	T(interleaved_genuine_samples_keep_a_forger_from_the_restart),
	T(min_ott_follows_a_longer_path_within_two_windows),
	T(a_new_base_at_the_end_of_a_window_is_kept),
	T(held_ack_does_not_raise_the_max),
	T(inherited_max_is_trusted_from_the_first_sample),
};

HARNESS_MAIN("ott", tests)
