/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OTT sampling and the queuing-delay estimator shared by the Sync-TCP
 * modules (Weigle 2003, sections 3.3-3.5).
 *
 * Data flow, per ACK:
 *
 *   OTT sample (option | RFC 7323 TS | RTT)  -->  queuing-delay estimator
 *      synctcp_ott_ts_sample()                     synctcp_qdelay_update()
 *
 * An OTT sample is a signed number of microseconds.  It may carry a
 * constant offset (unknown clock offset between the hosts, random
 * timestamp offsets): the estimator only ever uses differences to the
 * minimum, in which the offset cancels.
 */
#ifndef SYNCTCP_OTT_H
#define SYNCTCP_OTT_H

#include "synctcp_compat.h"

/* Where the OTT samples of a connection come from (exported in telemetry). */
enum synctcp_ott_source {
	SYNCTCP_SRC_NONE = 0,	/* no sample yet */
	SYNCTCP_SRC_RTT = 1,	/* no timestamps: per-ACK RTT, qdelay = RTT - min RTT */
	SYNCTCP_SRC_TS = 2,	/* RFC 7323: peer TSval vs. echoed TSecr, plus an offset */
	SYNCTCP_SRC_OPTION = 3,	/* one-way-timestamp option: exact forward OTT */
};

/* What synctcp_ott_ts_sample() made of one ACK's timestamps. */
enum synctcp_ott_result {
	SYNCTCP_OTT_SKIP = 0,	/* no usable sample (reordered ACK, no echo) */
	SYNCTCP_OTT_OK = 1,	/* *ott_us holds a new sample */
	SYNCTCP_OTT_REBASED = 2, /* new sample on a new base: reset the estimator */
	SYNCTCP_OTT_UNFIT = 3,	/* the peer's TS clock fits no known rate */
};

/* Linux's default TSval clock (RFC 7323 allows 1 ms to 1 s per tick). */
#define SYNCTCP_TS_DEFAULT_HZ		1000U
/* Length of one clock-rate estimation window (us), and its fewest ticks. */
#define SYNCTCP_TS_EST_WINDOW_US	(1000U * 1000U)
#define SYNCTCP_TS_EST_MIN_TICKS	32U
/*
 * A window whose estimate fits no known rate is stretched up to this long
 * (us) before the peer is declared unfit: the change of the reverse delay
 * over the window is the estimate's error, and 8 s make a swing of half a
 * second 1/16.
 */
#define SYNCTCP_TS_EST_LONG_US		(8U * 1000U * 1000U)
/* A window with fewer ticks than SYNCTCP_TS_EST_MIN_TICKS closes anyway. */
#define SYNCTCP_TS_EST_MAX_US		(64ULL * 1000U * 1000U)
/*
 * The handshake's TSval seeds the estimation only for a first data ACK
 * this soon after it (us): after a longer idle a fast peer clock may have
 * wrapped (2^32 ticks of 1 MHz are 71.6 minutes).
 */
#define SYNCTCP_TS_SEED_MAX_AGE_US	(60ULL * 1000U * 1000U)
/*
 * A provisional rate needs this much of our time and this many peer ticks
 * since the window began (the handshake, or the first ACK): the tick
 * quantization is then at most 1/16, and the estimate must be within 1/8
 * of a known rate.
 */
#define SYNCTCP_TS_EARLY_US		(10U * 1000U)
#define SYNCTCP_TS_EARLY_TICKS		16U
/*
 * A TSval whose advance differs from our clock's by more than this (us)
 * is a jump or a wrap, not the change of a reverse OTT: resync.
 */
#define SYNCTCP_TS_RESYNC_US		(2U * 1000U * 1000U)
/*
 * One window of the path-change test, in units of 1024 us (~30 s): a base
 * that every prompt OTT of a window exceeded by more than the largest
 * queuing delay (at least SYNCTCP_QDELAY_PATH_MIN_US) is a longer path,
 * not a queue.
 */
#define SYNCTCP_MIN_OTT_WIN		(30U * 1000U * 1000U / 1024U)
#define SYNCTCP_QDELAY_PATH_MIN_US	5000U
/* Implausible samples in a row that mean a lasting shift: restart. */
#define SYNCTCP_QDELAY_MAX_REJECTS	64U
/* Plausible |OTT - min OTT|: 2 srtt plus this slack (us). */
#define SYNCTCP_QDELAY_BOUND_SLACK_US	(100U * 1000U)
/*
 * A rate estimate snaps to a known clock when within 1/16 of it: close
 * enough to tell 250 Hz from 300 Hz (20% apart), and an 800 Hz clock from
 * 1 kHz.  A provisional rate from the first ACKs needs only 1/8.
 */
#define SYNCTCP_TS_SNAP_SHIFT		4
#define SYNCTCP_TS_EARLY_SHIFT		3
/* The first so many known rates (1 kHz, 1 MHz) may be taken provisionally. */
#define SYNCTCP_TS_EARLY_CLOCKS		2

/*
 * RFC 7323 timestamp clock.  An ACK's TSval is the peer's clock when it
 * sent the ACK; our own clock knows when we sent the newest segment the
 * ACK acknowledges (now - the ACK's RTT sample).  The forward OTT of that
 * segment, plus the time the peer held the ACK after it arrived, plus an
 * offset, is peer_clock(TSval) - sent.  The peer's clock is turned into
 * microseconds incrementally from tick deltas, so u32 wraparound is
 * harmless and no absolute tick count is ever scaled; our side is the
 * microsecond clock whatever unit our own TSvals have.
 *
 * The peer's rate is estimated against our clock: provisionally from the
 * first ACKs (SYNCTCP_TS_EARLY_US and SYNCTCP_TS_EARLY_TICKS), so that
 * samples flow within one round trip, and confirmed over windows of
 * SYNCTCP_TS_EST_WINDOW_US; a window that contradicts a provisional rate
 * switches at once (REBASED), one that contradicts a confirmed rate must
 * be seen twice.
 */
struct synctcp_tsclock {
	s64 ott_us;		/* running OTT + offset (us) */
	u64 last_sent_us;	/* when we sent the last sample's segment (us) */
	u64 est_start_us;	/* local time (us) at the start of the window */
	u32 last_tsval;		/* peer TSval of the last sample */
	u32 peer_rem;		/* remainder of the peer tick -> us division */
	u32 peer_hz;		/* peer TS clock rate in use (ticks/s) */
	u32 tick_us;		/* 10^6 / peer_hz rounded down, at least 1 */
	u8 clock_code;		/* synctcp_clock_code(peer_hz) */
	u32 est_tsval;		/* TSval at the start of the estimation window */
	u32 pending_hz;		/* rate seen by the last window, if unconfirmed */
	u8 started:1,		/* first sample taken */
	   seeded:1,		/* the window started at the handshake */
	   rate_provisional:1,	/* the first ACKs agreed with peer_hz */
	   rate_confirmed:1,	/* an estimation window agreed with peer_hz */
	   pending_unfit:1,	/* the last window fitted no known rate */
	   unfit:1,		/* the peer's clock fits no known rate */
	   tick_exact:1;	/* tick_us * peer_hz == 10^6 (all but 300 Hz) */
};

static inline bool synctcp_tsclock_rate_known(const struct synctcp_tsclock *c)
{
	return c->rate_confirmed || c->rate_provisional;
}

/*
 * Minimum/maximum OTT and the queuing delay derived from them.  Before the
 * first sample min > max (see synctcp_qdelay_valid()).
 *
 * Sync-TCP trusts max qdelay as the delay of a full queue once a segment
 * has been lost (section 3.5.1).  Only a loss the estimator measured
 * counts: one before its first sample (RFC 7323 timestamps give none for a
 * second, until the peer's clock rate is confirmed, and slow start usually
 * loses before then) says nothing about the maximum measured afterwards.
 * A reset (an OTT rebase) forgets the loss with the maximum.
 *
 * A sample farther from the minimum than the connection's round trip
 * allows is rejected, unless SYNCTCP_QDELAY_MAX_REJECTS of them in a row
 * show a lasting shift.  The maximum queuing delay never decreases
 * (section 3.5.1).
 *
 * Two estimators (synctcp_qdelay_sample_held()):
 *  - the dissertation's (variant "paper", all_time_min): every sample is
 *    a queuing delay against the smallest OTT of the connection, but one
 *    that may have been held may not raise the maximum;
 *  - the prompt one (variant "best"): an ACK of a single segment is sent
 *    when the peer's delayed-ACK timer fires, 40 to 200 ms after the
 *    segment arrived (or when its application reads), and its OTT is the
 *    queue plus that hold.  Such a sample is an upper bound of the queuing
 *    delay: it may lower the estimate, never raise it nor signal.  ACKs of
 *    two segments or more (and the option's OTTs) are sent at once: they
 *    set the estimate.  On weigle-ftp the held ones erred by 43 ms at the
 *    90th percentile, the prompt ones by 0.9 ms (captures at both ends,
 *    docs/sync-tcp.md); taken as they were, held samples cut cwnd to 2 and
 *    set maxima of 80 to 420 ms on an 87 ms queue.  The maximum rises only
 *    to what two prompt samples in a row agree on, so that a rare late
 *    prompt ACK (one in a thousand, up to 80 ms late) does not set the
 *    thresholds for good.  The base is the smallest OTT; it rises only when
 *    a whole window's prompt samples exceeded it by more than the queuing
 *    delay of a full queue (the maximum at the last loss) and
 *    SYNCTCP_QDELAY_PATH_MIN_US: a longer path, or a base a forged sample
 *    set too low; never because a queue did not drain (a base that ages out
 *    upwards under a standing queue hides that queue, and the queue creeps
 *    up).
 */
struct synctcp_qdelay {
	s64 min_ott_us;		/* the base: smallest OTT (us, with offset) */
	s64 max_ott_us;		/* largest OTT seen (us, with offset) */
	s64 win_min_us;		/* smallest prompt OTT of the current window */
	s64 prompt_ott_us;	/* the last prompt OTT (variant "best") */
	u32 qdelay_us;		/* current queuing delay: OTT - min OTT */
	u32 max_qdelay_us;	/* largest queuing delay: max OTT - min OTT */
	u32 loss_max_us;	/* max_qdelay_us at the last loss: a full queue */
	u32 win_start;		/* local time the window began, us >> 10 */
	u64 starve_start_us;	/* local time the starving stretch began */
	u64 starve_sum_us;	/* sum of the stretch's signals (us) ... */
	u32 starve_n;		/* ... and their number */
	u32 starve_peak_us;	/* the stretch's largest signal */
	u16 rejects;		/* implausible samples in a row */
	bool loss_seen;		/* a loss after the first sample: max is trusted */
	bool early_loss;	/* a loss before it (variant "best") */
	bool provisional;	/* max trusted before it was measured (below) */
	bool starving;		/* a starving stretch is on */
	bool max_held;		/* max_ott_us is a held first sample's only */
	bool all_time_min;	/* the dissertation's estimator (variant "paper") */
};

static inline bool synctcp_qdelay_valid(const struct synctcp_qdelay *q)
{
	return q->min_ott_us <= q->max_ott_us;
}

/*
 * Variant "best": a maximum of at least this long is trusted without a
 * loss measured after the first sample, provisionally (below): the
 * dissertation's own pre-loss floor of SyncMix (SYNCTCP_MIX_PRELOSS_MAX_US,
 * the same 10 ms).  For a loss before the first sample: learnt on the
 * queue the recovery had just emptied, a maximum of a few ms made flows
 * halve at a few packets for good (docs/sync-tcp.md, rule 4), and never
 * counted, the loss left a flow that never lost again Reno for good (on
 * weigle-ftp one such MixReact flow held 46 segments in flight and 55
 * packets of queue for 80 s).  And for a flow that cannot grow
 * (synctcp_qdelay_trust_held(): not cwnd-limited, held by the receiver's
 * window or the application): it cannot make the loss the detector waits
 * for.  Once weigle-ftp's window of 46 segments held (flowgen -W), a flow
 * that lost nothing in its start sat at that window while the others kept
 * the queue low and never turned its detector on: in 2 of 5 seeds of
 * weigle-ftp-full one to two sync flows did, 4 to 8 times their share,
 * and the queue stood at 33 to 40 packets against 22 in the other seeds.
 * Trusting every flow's maximum at 10 ms without a loss fixed that too,
 * but a flow in slow start then trusted the maximum of its own ramp: on
 * the demo's dumbbell three flows shared 18.97 Mbit/s as 5.24, 7.39 and
 * 6.38 instead of 6.69, 6.14 and 6.14.
 */
#define SYNCTCP_QDELAY_EARLY_MAX_US	10000U

/*
 * Variant "best": a maximum trusted without a loss (above), from an early
 * loss, or from a loss measured before the maximum reached
 * SYNCTCP_QDELAY_EARLY_MAX_US, is provisional.  The loss happened before
 * the estimator could measure the queue, usually in another flow's
 * slow-start overflow (on the dumbbell of
 * docs/peers.md the late flows lost at a maximum of 0 to 1.5 ms), and what
 * the flow measures afterwards is only the queue the others keep.  Too small,
 * it starves the flow for good once the others keep the queue below full:
 * every sample is above its threshold, it cuts once a round trip at a cwnd
 * of 2 or 3, and never loses again (docs/peers.md, "A fairness defect").
 * So while the maximum is provisional, a flow that starves -- cwnd at most
 * SYNCTCP_QDELAY_STARVE_CWND for SYNCTCP_QDELAY_STARVE_RTTS round trips,
 * without a loss, while its signal was on average above its threshold --
 * raises it to the maximum whose threshold is the stretch's largest signal,
 * by half at most.  The others hold the queue at or below their own
 * thresholds, so that puts the flow's threshold at the top of the queue's
 * band, near theirs.  The signal is the detector's own (tcp_sync's
 * standing queue): smoothed, so that no lone sample sets the peak, and the
 * raise needs the stretch's mean too.  MixReact does not use it: with
 * SyncMix's average as the signal it doubled MixReact's queue on
 * weigle-ftp (mixreact_cc.c).  Each raise is by half at most,
 * the next needs a stretch of its own, and the maximum never passes
 * 100 / threshold-percent times the largest signal the flow measured: a
 * receiver that forges delays moves it no farther than the delays it
 * forges, which cut until then.  A loss measured at a maximum of
 * SYNCTCP_QDELAY_EARLY_MAX_US or more makes the maximum final (section
 * 3.5.1).
 */
#define SYNCTCP_QDELAY_STARVE_CWND	4U
#define SYNCTCP_QDELAY_STARVE_RTTS	16U

/*
 * Variant "best": trust a maximum of SYNCTCP_QDELAY_EARLY_MAX_US or more
 * without a measured loss, provisionally (above): for a loss before the
 * first sample (synctcp_qdelay_sample_held()) and for a flow that is not
 * cwnd-limited (synctcp_flow_sample()).
 */
static inline void synctcp_qdelay_trust_held(struct synctcp_qdelay *q)
{
	if (q->all_time_min || q->loss_seen || !synctcp_qdelay_valid(q) ||
	    q->max_qdelay_us < SYNCTCP_QDELAY_EARLY_MAX_US)
		return;
	q->loss_seen = true;
	q->loss_max_us = q->max_qdelay_us;
	q->provisional = true;
}

/* A segment was lost (loss recovery or RTO started). */
static inline void synctcp_qdelay_on_loss(struct synctcp_qdelay *q)
{
	q->starving = false;
	if (synctcp_qdelay_valid(q)) {
		q->loss_seen = true;
		q->loss_max_us = q->max_qdelay_us;
		q->provisional = !q->all_time_min &&
				 q->max_qdelay_us < SYNCTCP_QDELAY_EARLY_MAX_US;
	} else {
		q->early_loss = true;
	}
}

void synctcp_tsclock_init(struct synctcp_tsclock *c);
void synctcp_tsclock_seed(struct synctcp_tsclock *c, u32 tsval, u64 now_us);
enum synctcp_ott_result synctcp_ott_ts_sample(struct synctcp_tsclock *c,
					      u32 tsval, u64 now_us,
					      u32 rtt_us, s64 *ott_us);

/* One tick of the peer's clock in use, in us (at least 1). */
static inline u32 synctcp_tsclock_tick_us(const struct synctcp_tsclock *c)
{
	return c->tick_us;
}

void synctcp_tsclock_set_hz(struct synctcp_tsclock *c, u32 hz);
u64 synctcp_tsclock_ticks_to_us(struct synctcp_tsclock *c, u32 ticks);
u32 synctcp_snap_clock_hz(u32 est_hz);
bool synctcp_known_clock_hz(u32 hz);
u8 synctcp_clock_code(u32 hz);

void synctcp_qdelay_reset(struct synctcp_qdelay *q);
void synctcp_qdelay_init(struct synctcp_qdelay *q, bool all_time_min);
void synctcp_qdelay_inherit(struct synctcp_qdelay *q, u32 max_qdelay_us);
void synctcp_qdelay_update(struct synctcp_qdelay *q, s64 ott_us);
u32 synctcp_qdelay_bound_us(u32 srtt_us);
enum synctcp_ott_result synctcp_qdelay_sample(struct synctcp_qdelay *q,
					      s64 ott_us, u64 now_us,
					      u32 bound_us);
enum synctcp_ott_result synctcp_qdelay_sample_held(struct synctcp_qdelay *q,
						   s64 ott_us, u64 now_us,
						   u32 bound_us, bool held);
void synctcp_qdelay_starving(struct synctcp_qdelay *q, u32 signal_us,
			     u32 thresh_pct, u32 cwnd, u64 now_us,
			     u32 srtt_us);

#endif /* SYNCTCP_OTT_H */
