// SPDX-License-Identifier: GPL-2.0
/*
 * OTT sampling from RFC 7323 timestamps and the queuing-delay estimator.
 *
 * An ACK's TSval is the peer's clock when it sent the ACK.  Our own clock
 * knows when we sent the newest segment the ACK acknowledges: now minus
 * the ACK's RTT sample, which Linux takes from that segment (the last one
 * cumulatively acknowledged, or the last one SACKed).  peer_clock(TSval) -
 * sent is therefore the forward OTT of that segment plus the (constant)
 * offset between the two clocks, plus the time the peer held the ACK after
 * the segment arrived: nothing for an ACK that the segment triggered (every
 * second segment, an out-of-order one, quick ACKs), the delayed-ACK timer
 * for a lone segment.  The TSecr, the TSval of the oldest segment the ACK
 * covers, would add the time from that segment's arrival to the ACK's
 * (docs/ott.md works out the error budget).
 *
 * The peer's clock rate is not negotiated.  Like tcp_lp, we estimate it
 * against our local microsecond clock and snap the estimate to a known
 * rate (2 Hz, 10 Hz, 100 Hz, 250 Hz, 1 kHz, 1 MHz) when it is within a
 * quarter of one.  The first ACKs give a provisional rate, from the
 * handshake's TSval when the module saw it, so that samples flow within a
 * round trip; windows of one second confirm it.  A wrong rate makes the
 * OTT drift: a window that contradicts the provisional rate switches to
 * its own at once and restarts the OTT base (the estimator is reset with
 * it), and a later change of a confirmed rate, seen in two windows in a
 * row, does the same.
 */
#include "ott.h"
#include "synctcp_info.h"

/*
 * TSval clock rates seen in the wild, in ticks per second, with their
 * telemetry codes (enum synctcp_clock_code): 1 kHz is Linux's since 4.13
 * (earlier kernels ticked at HZ: 100, 250, 300 or 1000), 1 MHz Linux's
 * tcp_usec_ts (>= 6.7); RFC 7323 allows 1 Hz to 1 kHz.
 */
static const struct {
	u32 hz;
	u8 code;
} synctcp_known_clocks[] = {
	{ 1000, SYNCTCP_CLOCK_1KHZ },
	{ 1000000, SYNCTCP_CLOCK_1MHZ },
	{ 250, SYNCTCP_CLOCK_250HZ },
	{ 100, SYNCTCP_CLOCK_100HZ },
	{ 300, SYNCTCP_CLOCK_300HZ },
	{ 10, SYNCTCP_CLOCK_10HZ },
	{ 2, SYNCTCP_CLOCK_2HZ },
};

/* Is @a within 1 / 2^@shift of the known rate @k? */
static bool synctcp_near_rate(u32 a, u32 k, unsigned int shift)
{
	u32 diff = a > k ? a - k : k - a;

	return diff <= (k >> shift);
}

/**
 * synctcp_snap_clock_hz - round a rate estimate to a known TS clock rate
 * @est_hz: estimated ticks per second
 *
 * Return: the known rate within 1/16 of @est_hz, else @est_hz itself.
 */
u32 synctcp_snap_clock_hz(u32 est_hz)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(synctcp_known_clocks); i++)
		if (synctcp_near_rate(est_hz, synctcp_known_clocks[i].hz,
				      SYNCTCP_TS_SNAP_SHIFT))
			return synctcp_known_clocks[i].hz;
	return est_hz;
}

/* The telemetry code of a peer clock rate (enum synctcp_clock_code). */
u8 synctcp_clock_code(u32 hz)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(synctcp_known_clocks); i++)
		if (synctcp_known_clocks[i].hz == hz)
			return synctcp_known_clocks[i].code;
	return hz ? SYNCTCP_CLOCK_OTHER : SYNCTCP_CLOCK_NONE;
}

bool synctcp_known_clock_hz(u32 hz)
{
	return synctcp_clock_code(hz) != SYNCTCP_CLOCK_OTHER &&
	       synctcp_clock_code(hz) != SYNCTCP_CLOCK_NONE;
}

/**
 * synctcp_tsclock_set_hz - put a peer clock rate in use
 * @c: clock
 * @hz: ticks per second (non-zero)
 *
 * Its tick in us is kept with it, so that the ACK path turns ticks into
 * microseconds with a multiplication: 10^6 / hz is exact for every known
 * rate but 300 Hz, which keeps the division.  So is its telemetry code.
 */
void synctcp_tsclock_set_hz(struct synctcp_tsclock *c, u32 hz)
{
	c->peer_hz = hz;
	c->tick_us = hz >= USEC_PER_SEC ? 1 : (u32)(USEC_PER_SEC / hz);
	c->tick_exact = (u64)c->tick_us * hz == USEC_PER_SEC;
	c->clock_code = synctcp_clock_code(hz);
}

void synctcp_tsclock_init(struct synctcp_tsclock *c)
{
	*c = (struct synctcp_tsclock){ 0 };
	synctcp_tsclock_set_hz(c, SYNCTCP_TS_DEFAULT_HZ);
}

/**
 * synctcp_tsclock_seed - start the rate estimation at the handshake
 * @c: a clock that has taken no sample yet
 * @tsval: the peer's TSval of the segment just received (SYN-ACK or ACK)
 * @now_us: our local clock (us) when it was received
 *
 * The first data ACK then already spans a round trip of the peer's
 * clock, enough for a provisional rate, unless it comes more than
 * SYNCTCP_TS_SEED_MAX_AGE_US later.
 */
void synctcp_tsclock_seed(struct synctcp_tsclock *c, u32 tsval, u64 now_us)
{
	if (c->started)
		return;
	c->est_tsval = tsval;
	c->est_start_us = now_us;
	c->seeded = 1;
}

/*
 * floor(ticks 10^6 / peer_hz): a multiplication with an exact tick (every
 * known rate but 300 Hz), no division on the ACK path.
 */
static u64 synctcp_tsclock_span_us(const struct synctcp_tsclock *c, u32 ticks)
{
	if (c->tick_exact)
		return (u64)ticks * c->tick_us;
	return div_u64((u64)ticks * USEC_PER_SEC, c->peer_hz);
}

/**
 * synctcp_tsclock_ticks_to_us - peer clock ticks to microseconds
 * @c: clock
 * @ticks: ticks of the rate in use
 *
 * floor((ticks 10^6 + rem) / peer_hz), carrying the remainder rem
 * forward.  Without a remainder (one is left only by 300 Hz) that is
 * synctcp_tsclock_span_us().
 *
 * Return: the microseconds.
 */
u64 synctcp_tsclock_ticks_to_us(struct synctcp_tsclock *c, u32 ticks)
{
	if (c->tick_exact && !c->peer_rem)
		return synctcp_tsclock_span_us(c, ticks);
	return div_u64_rem((u64)ticks * USEC_PER_SEC + c->peer_rem,
			   c->peer_hz, &c->peer_rem);
}

/* The peer's ticks per second since the estimation window began. */
static u64 synctcp_tsclock_rate(const struct synctcp_tsclock *c, u32 tsval,
				u64 now_us)
{
	return div64_u64((u64)(tsval - c->est_tsval) * USEC_PER_SEC,
			 now_us - c->est_start_us);
}

/* Start a new estimation window at this ACK. */
static void synctcp_tsclock_new_window(struct synctcp_tsclock *c, u32 tsval,
				       u64 now_us)
{
	c->est_tsval = tsval;
	c->est_start_us = now_us;
}

/*
 * Close an estimation window when it is long enough: a second and
 * SYNCTCP_TS_EST_MIN_TICKS ticks.  An estimate that fits no known rate stretches the window
 * up to SYNCTCP_TS_EST_LONG_US (a provisional rate it contradicts gives no
 * samples meanwhile); still unfit then, the peer is unfit (before a
 * confirmed rate at once, after it in two windows in a row).
 *
 * Return: REBASED if the peer rate changed and the OTT must be rebased,
 * UNFIT if the peer's clock fits no known rate, else OK.
 */
static enum synctcp_ott_result
synctcp_tsclock_estimate(struct synctcp_tsclock *c, u32 tsval, u64 now_us)
{
	u64 elapsed = now_us - c->est_start_us, est;
	u32 ticks = tsval - c->est_tsval, hz;

	if (elapsed < SYNCTCP_TS_EST_WINDOW_US ||
	    (ticks < SYNCTCP_TS_EST_MIN_TICKS && elapsed < SYNCTCP_TS_EST_MAX_US))
		return SYNCTCP_OTT_OK;
	est = synctcp_tsclock_rate(c, tsval, now_us);
	hz = synctcp_snap_clock_hz((u32)min_t(u64, U32_MAX, est));
	if (!hz) {		/* the peer's clock stood still: learn nothing */
		synctcp_tsclock_new_window(c, tsval, now_us);
		return SYNCTCP_OTT_OK;
	}
	if (!synctcp_known_clock_hz(hz)) {
		/* a provisional rate the window contradicts gives no samples */
		c->rate_provisional = 0;
		if (elapsed < SYNCTCP_TS_EST_LONG_US)
			return SYNCTCP_OTT_OK;	/* stretch the window */
		synctcp_tsclock_new_window(c, tsval, now_us);
		if (c->rate_confirmed && !c->pending_unfit) {
			c->pending_unfit = 1;
			return SYNCTCP_OTT_OK;
		}
		c->unfit = 1;
		return SYNCTCP_OTT_UNFIT;
	}
	synctcp_tsclock_new_window(c, tsval, now_us);
	c->pending_unfit = 0;
	if (hz == c->peer_hz) {
		c->rate_confirmed = 1;
		c->rate_provisional = 0;
		c->pending_hz = 0;
		return SYNCTCP_OTT_OK;
	}
	if (c->rate_confirmed && c->pending_hz != hz) {
		c->pending_hz = hz;	/* wait for a second window */
		return SYNCTCP_OTT_OK;
	}
	synctcp_tsclock_set_hz(c, hz);
	c->peer_rem = 0;
	c->pending_hz = 0;
	c->rate_confirmed = 1;
	c->rate_provisional = 0;
	return SYNCTCP_OTT_REBASED;
}

/*
 * A provisional rate from the first ACKs: once the window spans
 * SYNCTCP_TS_EARLY_US and SYNCTCP_TS_EARLY_TICKS, an estimate within 1/8
 * of 1 kHz or 1 MHz, the rates of today's stacks, is taken.  So few ticks
 * are as wrong as the ACK path's delay changed since the handshake: the
 * first data ACK of a flow that met the reverse flows' queue read 16 ticks
 * in 68 ms, 236 Hz, which would pass for 250 Hz.  A legacy rate waits for
 * the window.  Return: true when it was.
 */
static bool synctcp_tsclock_early(struct synctcp_tsclock *c, u32 tsval,
				  u64 now_us)
{
	u64 elapsed = now_us - c->est_start_us;
	size_t i;
	u64 est;

	if (elapsed < SYNCTCP_TS_EARLY_US || elapsed >= SYNCTCP_TS_EST_WINDOW_US ||
	    tsval - c->est_tsval < SYNCTCP_TS_EARLY_TICKS)
		return false;
	est = synctcp_tsclock_rate(c, tsval, now_us);
	if (est > U32_MAX)
		return false;
	for (i = 0; i < SYNCTCP_TS_EARLY_CLOCKS; i++) {
		u32 hz = synctcp_known_clocks[i].hz;

		if (synctcp_near_rate((u32)est, hz, SYNCTCP_TS_EARLY_SHIFT)) {
			synctcp_tsclock_set_hz(c, hz);
			c->rate_provisional = 1;
			return true;
		}
	}
	return false;
}

/*
 * Start a new OTT base at this ACK, keeping the peer's clock rate: after a
 * long idle (a 1 MHz TSval wraps its sign in 35.8 minutes) or a jump of a
 * TS clock, the differences to the last sample mean nothing.
 */
static void synctcp_tsclock_resync(struct synctcp_tsclock *c, u32 tsval,
				   u64 now_us, u64 sent_us)
{
	c->last_tsval = tsval;
	c->last_sent_us = sent_us;
	synctcp_tsclock_new_window(c, tsval, now_us);
	c->peer_rem = 0;
	c->pending_hz = 0;
	c->pending_unfit = 0;
	c->ott_us = 0;
}

/*
 * Do the clocks disagree?  Since the start of the estimation window, the
 * peer's clock advanced by about as much as ours (the difference is the
 * change of the reverse OTT and of the ACK delay): a difference beyond
 * SYNCTCP_TS_RESYNC_US either way is a jump, or a wrap of the u32 peer
 * clock that the local one did not share.  Only once the peer's rate is
 * known.
 */
static bool synctcp_tsclock_jumped(const struct synctcp_tsclock *c,
				   u32 tsval, u64 now_us)
{
	u64 elapsed = now_us - c->est_start_us;
	s32 ticks = (s32)(tsval - c->est_tsval);
	u64 peer_us;

	if (ticks < 0)
		return elapsed >= SYNCTCP_TS_RESYNC_US;
	/*
	 * Before the rate is confirmed only what no known clock can do is a
	 * jump: more ticks than a 1 MHz clock gives (a provisional 1 kHz of a
	 * 1 MHz peer is no jump).  A TSval moved by 2^30 before the first
	 * window ended was not seen, and its window found no rate for 10 s.
	 */
	if (!c->rate_confirmed)
		return (u64)ticks > elapsed + SYNCTCP_TS_RESYNC_US;
	peer_us = synctcp_tsclock_span_us(c, (u32)ticks);
	return peer_us > elapsed + SYNCTCP_TS_RESYNC_US ||
	       peer_us + SYNCTCP_TS_RESYNC_US < elapsed;
}

/* The first ACK: the base starts here, and perhaps a provisional rate. */
static enum synctcp_ott_result
synctcp_tsclock_first(struct synctcp_tsclock *c, u32 tsval, u64 now_us,
		      u64 sent_us, s64 *ott_us)
{
	u32 est_tsval = c->est_tsval;
	u64 est_start_us = c->est_start_us;
	bool seeded = c->seeded &&
		      now_us - est_start_us <= SYNCTCP_TS_SEED_MAX_AGE_US;

	c->started = 1;
	synctcp_tsclock_resync(c, tsval, now_us, sent_us);
	if (!seeded)
		return SYNCTCP_OTT_SKIP;
	/* the window the handshake started may already be enough */
	c->est_tsval = est_tsval;
	c->est_start_us = est_start_us;
	if (!synctcp_tsclock_early(c, tsval, now_us))
		return SYNCTCP_OTT_SKIP;
	*ott_us = 0;
	return SYNCTCP_OTT_REBASED;
}

/**
 * synctcp_ott_ts_sample - forward OTT (+ offset) from one ACK's timestamps
 * @c: per-connection timestamp clock state
 * @tsval: the ACK's TSval (peer clock)
 * @now_us: our local clock (us) when the ACK arrived
 * @rtt_us: the ACK's RTT sample (us): now_us minus the time we sent the
 *	    newest segment it acknowledges
 * @ott_us: the sample, on a base that only changes with a REBASED result
 *
 * A backwards (reordered) TSval gives no sample; a repeated TSval is a
 * valid sample (the peer clock did not tick).  Once the peer's rate is
 * known, a TSval whose advance disagrees with our clock's by more than
 * SYNCTCP_TS_RESYNC_US (a long idle, a clock jump) restarts the OTT base
 * at this ACK: REBASED.  So does the first provisional rate, and a window
 * that corrects one.  A peer whose clock fits no known rate gives UNFIT,
 * once, and no samples after: its OTT would drift.
 */
enum synctcp_ott_result synctcp_ott_ts_sample(struct synctcp_tsclock *c,
					      u32 tsval, u64 now_us,
					      u32 rtt_us, s64 *ott_us)
{
	u64 sent_us = now_us - rtt_us;
	enum synctcp_ott_result res;
	s64 dsent;
	s32 dval;

	if (c->unfit)
		return SYNCTCP_OTT_SKIP;
	if (!c->started)
		return synctcp_tsclock_first(c, tsval, now_us, sent_us, ott_us);
	if (synctcp_tsclock_jumped(c, tsval, now_us)) {
		synctcp_tsclock_resync(c, tsval, now_us, sent_us);
		*ott_us = 0;
		return SYNCTCP_OTT_REBASED;
	}
	dval = (s32)(tsval - c->last_tsval);
	if (dval < 0)
		return SYNCTCP_OTT_SKIP;
	/*
	 * This ACK's newest segment may be older than the last one's (an ACK
	 * after a SACK), by less than a round trip; by more, the differences
	 * mean nothing: resync.
	 */
	dsent = (s64)(sent_us - c->last_sent_us);
	if (dsent < -(s64)SYNCTCP_TS_RESYNC_US) {
		synctcp_tsclock_resync(c, tsval, now_us, sent_us);
		if (!synctcp_tsclock_rate_known(c))
			return SYNCTCP_OTT_SKIP;
		*ott_us = 0;
		return SYNCTCP_OTT_REBASED;
	}
	c->ott_us += (s64)synctcp_tsclock_ticks_to_us(c, (u32)dval) - dsent;
	c->last_tsval = tsval;
	c->last_sent_us = sent_us;

	res = synctcp_tsclock_estimate(c, tsval, now_us);
	if (res == SYNCTCP_OTT_UNFIT)
		return res;
	if (res == SYNCTCP_OTT_REBASED ||
	    (!synctcp_tsclock_rate_known(c) &&
	     synctcp_tsclock_early(c, tsval, now_us))) {
		c->ott_us = 0;
		c->peer_rem = 0;
		*ott_us = 0;
		return SYNCTCP_OTT_REBASED;
	}
	if (!synctcp_tsclock_rate_known(c))
		return SYNCTCP_OTT_SKIP;
	*ott_us = c->ott_us;
	return SYNCTCP_OTT_OK;
}

/* Forget every sample (a new base); the kind of minimum stays. */
void synctcp_qdelay_reset(struct synctcp_qdelay *q)
{
	*q = (struct synctcp_qdelay){
		.min_ott_us = S64_MAX,
		.max_ott_us = -S64_MAX,
		.all_time_min = q->all_time_min,
	};
}

/**
 * synctcp_qdelay_init - an estimator without samples
 * @q: estimator state
 * @all_time_min: keep the smallest OTT of the whole connection, as the
 *		  dissertation does (variant "paper"), instead of the last
 *		  one to two windows
 */
void synctcp_qdelay_init(struct synctcp_qdelay *q, bool all_time_min)
{
	q->all_time_min = all_time_min;
	synctcp_qdelay_reset(q);
}

/* Clamp a non-negative 64-bit delay to the u32 microseconds we export. */
static u32 synctcp_clamp_us(s64 us)
{
	if (us <= 0)
		return 0;
	return us > U32_MAX ? U32_MAX : (u32)us;
}

/**
 * synctcp_qdelay_update - SyncPQlen's bookkeeping for one OTT sample
 * @q: estimator state
 * @ott_us: the sample
 *
 * qdelay = OTT - min OTT; max qdelay = max OTT - min OTT, and it never
 * decreases (section 3.5.1: "the maximum ... stays constant and will never
 * decrease"), also when a windowed minimum ages out upwards.
 */
void synctcp_qdelay_update(struct synctcp_qdelay *q, s64 ott_us)
{
	u32 max_qdelay;

	if (ott_us < q->min_ott_us) {
		q->min_ott_us = ott_us;
		if (q->max_held)	/* a hold is no queue */
			q->max_ott_us = ott_us;
	}
	if (ott_us > q->max_ott_us) {
		q->max_ott_us = ott_us;
		q->max_held = false;
	}
	q->qdelay_us = synctcp_clamp_us(ott_us - q->min_ott_us);
	max_qdelay = synctcp_clamp_us(q->max_ott_us - q->min_ott_us);
	if (max_qdelay > q->max_qdelay_us)
		q->max_qdelay_us = max_qdelay;
}

/**
 * synctcp_qdelay_bound_us - largest plausible |OTT - min OTT|
 * @srtt_us: the connection's smoothed RTT (us), 0 when unknown
 *
 * A forward queuing delay is part of the round trip, so it cannot be much
 * larger than srtt; twice srtt plus 100 ms leaves room for srtt's lag.
 *
 * Return: the bound (us), 0 (no bound) while srtt is unknown.
 */
u32 synctcp_qdelay_bound_us(u32 srtt_us)
{
	if (!srtt_us)
		return 0;
	return (u32)min_t(u64, U32_MAX,
			  2ULL * srtt_us + SYNCTCP_QDELAY_BOUND_SLACK_US);
}

static bool synctcp_qdelay_plausible(const struct synctcp_qdelay *q,
				     s64 ott_us, u32 bound_us)
{
	if (!bound_us || !synctcp_qdelay_valid(q))
		return true;
	return ott_us >= q->min_ott_us - (s64)bound_us &&
	       ott_us <= q->min_ott_us + (s64)bound_us;
}

/* Drop an implausible sample; restart after too many in a row. */
static enum synctcp_ott_result
synctcp_qdelay_check(struct synctcp_qdelay *q, s64 ott_us, u32 bound_us)
{
	if (!synctcp_qdelay_plausible(q, ott_us, bound_us)) {
		if (++q->rejects < SYNCTCP_QDELAY_MAX_REJECTS)
			return SYNCTCP_OTT_SKIP;
		synctcp_qdelay_reset(q);
		q->rejects = 0;
		return SYNCTCP_OTT_REBASED;
	}
	q->rejects = 0;
	return SYNCTCP_OTT_OK;
}

/* The first sample of an estimator: its base, and an inherited maximum. */
static void synctcp_qdelay_first(struct synctcp_qdelay *q, s64 ott_us,
				 u32 now, bool held)
{
	u32 inherited = q->max_qdelay_us;

	q->win_min_us = S64_MAX;
	q->win_start = now;
	q->prompt_ott_us = ott_us;
	synctcp_qdelay_update(q, ott_us);
	/*
	 * A held first sample is the minimum for now, but the maximum a lower
	 * minimum would measure against it is the hold, not a queue.
	 */
	q->max_held = held;
	if (inherited) {	/* synctcp_qdelay_inherit() */
		q->max_held = false;
		q->max_ott_us = ott_us + inherited;
		q->max_qdelay_us = inherited;
		q->loss_max_us = inherited;
	}
}

/**
 * synctcp_qdelay_sample - one OTT sample into the estimator, if plausible
 * @q: estimator state
 * @ott_us: the sample
 * @now_us: local clock (us)
 * @bound_us: largest plausible |OTT - min OTT| (synctcp_qdelay_bound_us()),
 *	      0 for none
 *
 * The dissertation's estimator: every sample against the smallest OTT.
 * A sample farther than @bound_us from the minimum is dropped: one forged
 * or broken sample (an OTT of -119 s made every later one look like a
 * full queue) cannot move the minimum or the maximum.  After
 * SYNCTCP_QDELAY_MAX_REJECTS in a row the shift is taken as real (a clock
 * step) and the estimator restarts at the sample.
 *
 * Return: SKIP when the sample was dropped; OK when it was taken; REBASED
 * when the estimator restarted at it (history measured against the old
 * minimum must be dropped too).
 */
enum synctcp_ott_result synctcp_qdelay_sample(struct synctcp_qdelay *q,
					      s64 ott_us, u64 now_us,
					      u32 bound_us)
{
	return synctcp_qdelay_sample_held(q, ott_us, now_us, bound_us, false);
}

/*
 * A longer path: a whole window of prompt OTTs above the base by more than
 * a full queue (the maximum at the last loss) and then some.  The base
 * moves up to them.  So does a base that a forged or broken sample set far
 * too low.  A queue that never drains does not: it is never larger than a
 * full one.  A window without a prompt sample decides nothing.
 */
static void synctcp_qdelay_path_check(struct synctcp_qdelay *q, s64 prompt,
				      u32 now)
{
	u32 full;

	q->win_min_us = min_t(s64, q->win_min_us, prompt);
	if (now - q->win_start < SYNCTCP_MIN_OTT_WIN)
		return;
	full = q->loss_seen ? q->loss_max_us : q->max_qdelay_us;
	if (q->win_min_us != S64_MAX &&
	    q->win_min_us > q->min_ott_us + full + SYNCTCP_QDELAY_PATH_MIN_US) {
		/* the maximum is again that of a full queue on this path */
		q->min_ott_us = q->win_min_us;
		q->max_qdelay_us = full;
		q->max_ott_us = q->min_ott_us + full;
		q->prompt_ott_us = q->min_ott_us;
	}
	q->win_min_us = S64_MAX;
	q->win_start = now;
}

/* Variant "best": see struct synctcp_qdelay. */
static void synctcp_qdelay_prompt(struct synctcp_qdelay *q, s64 ott_us,
				  u32 now, bool held)
{
	u32 qdelay, agreed;

	if (ott_us < q->min_ott_us) {
		/*
		 * the maximum agreed on, measured against the lower base (none
		 * yet: the first sample was one sample, or a held one)
		 */
		q->min_ott_us = ott_us;
		if (q->max_held || !q->max_qdelay_us)
			q->max_ott_us = ott_us;
		q->max_qdelay_us = max_t(u32, q->max_qdelay_us,
					 synctcp_clamp_us(q->max_ott_us - ott_us));
	}
	qdelay = synctcp_clamp_us(ott_us - q->min_ott_us);
	if (held) {
		/* an upper bound: the queue is at most this */
		q->qdelay_us = min_t(u32, q->qdelay_us, qdelay);
		return;
	}
	synctcp_qdelay_path_check(q, ott_us, now);
	qdelay = synctcp_clamp_us(ott_us - q->min_ott_us);
	agreed = min_t(u32, qdelay,
		       synctcp_clamp_us(q->prompt_ott_us - q->min_ott_us));
	q->prompt_ott_us = ott_us;
	if (agreed > q->max_qdelay_us) {
		q->max_qdelay_us = agreed;
		q->max_ott_us = q->min_ott_us + agreed;
		q->max_held = false;
	}
	/* one prompt sample above the maximum signals as a full queue */
	q->qdelay_us = min_t(u32, qdelay, q->max_qdelay_us);
}

/**
 * synctcp_qdelay_sample_held - one OTT sample, which the peer may have held
 * @q: estimator state
 * @ott_us: the sample
 * @now_us: local clock (us)
 * @bound_us: as synctcp_qdelay_sample()'s
 * @held: the ACK acknowledged a single segment: the peer may have sent it
 *	  when its delayed-ACK timer fired, 40 to 200 ms after the segment
 *	  arrived, and its OTT carries that hold
 *
 * The dissertation's estimator (variant "paper") takes a held sample as
 * any other unless it would raise the maximum, which must be the delay of
 * a full queue: then it is dropped.  The prompt estimator (variant
 * "best") takes it as an upper bound only (struct synctcp_qdelay).
 *
 * Return: as synctcp_qdelay_sample()'s.
 */
enum synctcp_ott_result synctcp_qdelay_sample_held(struct synctcp_qdelay *q,
						   s64 ott_us, u64 now_us,
						   u32 bound_us, bool held)
{
	enum synctcp_ott_result res = synctcp_qdelay_check(q, ott_us, bound_us);
	u32 now = (u32)(now_us >> 10);

	if (res == SYNCTCP_OTT_SKIP)
		return res;
	if (!synctcp_qdelay_valid(q)) {
		synctcp_qdelay_first(q, ott_us, now, held);
		return res;
	}
	if (!q->all_time_min) {
		synctcp_qdelay_prompt(q, ott_us, now, held);
		if (q->early_loss)
			synctcp_qdelay_trust_held(q);
		return res;
	}
	if (held && ott_us > q->max_ott_us)
		return SYNCTCP_OTT_SKIP;
	synctcp_qdelay_update(q, ott_us);
	return res;
}

/**
 * synctcp_qdelay_starving - raise a provisional maximum of a starving flow
 * @q: estimator state (variant "best")
 * @signal_us: the queuing delay the flow's detector compares to its
 *	       threshold on this sample
 * @thresh_pct: the detector's threshold, percent of the maximum
 * @cwnd: cwnd now (segments)
 * @now_us: local clock (us)
 * @srtt_us: smoothed RTT (us), 0 when unknown
 *
 * Called on each sample the estimator took.  See SYNCTCP_QDELAY_STARVE_CWND:
 * a stretch of SYNCTCP_QDELAY_STARVE_RTTS round trips at a cwnd of at most
 * SYNCTCP_QDELAY_STARVE_CWND, without a loss, whose mean signal was above
 * the threshold, says that the queue is someone else's and the provisional
 * maximum too small.  It raises it to 100 / @thresh_pct times the stretch's
 * largest signal, by half at most.  A larger cwnd or a loss ends the
 * stretch.
 */
void synctcp_qdelay_starving(struct synctcp_qdelay *q, u32 signal_us,
			     u32 thresh_pct, u32 cwnd, u64 now_us,
			     u32 srtt_us)
{
	u64 raised;

	if (!q->provisional || !srtt_us || !thresh_pct ||
	    cwnd > SYNCTCP_QDELAY_STARVE_CWND) {
		q->starving = false;
		return;
	}
	if (!q->starving || now_us < q->starve_start_us) {
		q->starving = true;
		q->starve_start_us = now_us;
		q->starve_sum_us = 0;
		q->starve_n = 0;
		q->starve_peak_us = 0;
	}
	if (q->starve_n < U32_MAX) {
		q->starve_sum_us += signal_us;
		q->starve_n++;
	}
	q->starve_peak_us = max_t(u32, q->starve_peak_us, signal_us);
	if (now_us - q->starve_start_us <
	    (u64)srtt_us * SYNCTCP_QDELAY_STARVE_RTTS)
		return;
	q->starving = false;
	if (div_u64(q->starve_sum_us, q->starve_n) * 100 <=
	    (u64)q->max_qdelay_us * thresh_pct)
		return;
	raised = div_u64((u64)q->starve_peak_us * 100, thresh_pct);
	raised = min_t(u64, raised, (u64)q->max_qdelay_us * 3 / 2);
	raised = min_t(u64, raised, U32_MAX);
	if (raised <= q->max_qdelay_us)
		return;
	q->max_qdelay_us = (u32)raised;
	q->max_ott_us = q->min_ott_us + q->max_qdelay_us;
	q->loss_max_us = q->max_qdelay_us;
}

/**
 * synctcp_qdelay_inherit - start from a full-queue delay learnt before
 * @q: an estimator that has taken no sample yet
 * @max_qdelay_us: the largest queuing delay an earlier connection on the
 *		   same path measured up to its loss (0: none)
 *
 * A connection of a few round trips ends before its own first loss, so
 * SyncPQlen would never trust its maximum: it starts with the earlier
 * connection's, measured from its own first sample as minimum, and the
 * detector is on from there (variant "best").  The first sample may see
 * a standing queue, which makes the minimum too high: the error is on the
 * side of fewer signals.  Own samples raise the maximum as usual; a reset
 * (rebase) forgets it with the rest.
 */
void synctcp_qdelay_inherit(struct synctcp_qdelay *q, u32 max_qdelay_us)
{
	if (synctcp_qdelay_valid(q) || !max_qdelay_us)
		return;
	q->max_qdelay_us = max_qdelay_us;
	q->loss_seen = true;
}

