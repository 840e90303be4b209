// SPDX-License-Identifier: GPL-2.0
/* The Sync-TCP modules' shared per-ACK pipeline; see flow.h. */
#include "flow.h"

/**
 * synctcp_flow_init - a connection without samples
 * @f: its state
 * @variant: enum synctcp_variant it runs
 */
void synctcp_flow_init(struct synctcp_flow *f, u8 variant)
{
	*f = (struct synctcp_flow){ .variant = variant };
	synctcp_tsclock_init(&f->clock);
	synctcp_qdelay_init(&f->q, variant == SYNCTCP_VARIANT_PAPER);
	synctcp_revcomp_init(&f->rev);
	synctcp_mode_init(&f->mode, false);
}

/* The handshake's TSval starts the estimation of the peer's clock rate. */
void synctcp_flow_seed(struct synctcp_flow *f, u32 tsval, u64 now_us)
{
	synctcp_tsclock_seed(&f->clock, tsval, now_us);
}

/**
 * synctcp_flow_choose_source - the connection's OTT source, on its first ACK
 * @a: the ACK
 * @mode: enum synctcp_source_mode
 *
 * The option is taken only when that ACK echoes an OTT: a peer that
 * negotiates it and then does not send it gets timestamps instead.
 *
 * Return: enum synctcp_ott_source.
 */
u8 synctcp_flow_choose_source(const struct synctcp_ack *a, unsigned int mode)
{
	if (mode == SYNCTCP_SOURCE_RTT)
		return SYNCTCP_SRC_RTT;
	if (mode == SYNCTCP_SOURCE_AUTO && a->has_owts)
		return SYNCTCP_SRC_OPTION;
	if (a->ts_ok)
		return SYNCTCP_SRC_TS;
	return SYNCTCP_SRC_RTT;
}

/* One tick of the connection's OTT source, in us. */
u32 synctcp_flow_tick_us(const struct synctcp_flow *f)
{
	return f->source == SYNCTCP_SRC_TS ? synctcp_tsclock_tick_us(&f->clock) : 1;
}

/*
 * This ACK's OTT sample from the connection's source.
 *
 * With timestamps the ACK's TSval (when the peer sent it) is set against
 * the time we sent the newest segment it acknowledges, cumulatively or by
 * SACK: now minus the ACK's RTT sample.  An ACK without an RTT sample (a
 * duplicate that SACKs nothing new) gives none.  The TSecr is not used: it
 * echoes the oldest segment the ACK covers (RFC 7323, section 4.3), so it
 * would count the peer's wait for the next segment as forward delay.  The
 * option echoes the OTT of the last segment the peer received, as fresh
 * on a duplicate ACK as on any other.
 */
static enum synctcp_ott_result synctcp_flow_ott(struct synctcp_flow *f,
						const struct synctcp_ack *a,
						s64 *ott_us)
{
	switch (f->source) {
	case SYNCTCP_SRC_OPTION:
		if (!a->has_owts)
			return SYNCTCP_OTT_SKIP;
		*ott_us = a->owts_ott_us;
		return SYNCTCP_OTT_OK;
	case SYNCTCP_SRC_TS:
		if (!a->has_tsval || a->rtt_us < 0)
			return SYNCTCP_OTT_SKIP;
		return synctcp_ott_ts_sample(&f->clock, a->tsval, a->now_us,
					     (u32)a->rtt_us, ott_us);
	case SYNCTCP_SRC_RTT:
		if (a->rtt_us <= 0)
			return SYNCTCP_OTT_SKIP;
		*ott_us = a->rtt_us;
		return SYNCTCP_OTT_OK;
	default:
		return SYNCTCP_OTT_SKIP;
	}
}

/*
 * The peer's TS clock fits no known rate: its OTT would drift, so the
 * connection takes RTT samples from here on, on a new base, and withdraws
 * its reverse compensation.
 */
static enum synctcp_ott_result synctcp_flow_unfit(struct synctcp_flow *f,
						  const struct synctcp_ack *a,
						  s64 *ott_us)
{
	f->source = SYNCTCP_SRC_RTT;
	f->flags |= SYNCTCP_FLOW_TS_UNFIT;
	synctcp_revcomp_restart(&f->rev);
	*ott_us = max_t(s32, a->rtt_us, 1);
	return SYNCTCP_OTT_REBASED;
}

/**
 * synctcp_flow_sample - feed this ACK's OTT sample to the estimator
 * @f: the connection
 * @a: the ACK
 * @mode: enum synctcp_source_mode for a connection without a source yet
 *
 * The sample goes through synctcp_qdelay_sample_held(): one farther from
 * the minimum than twice srtt (plus 100 ms) is dropped.  An ACK of a
 * single segment may have waited for the peer's delayed-ACK timer: it may
 * not raise the maximum, and (variant "best") it only bounds the queuing
 * delay from above.
 *
 * Return: SKIP when the estimator did not change; OK when it took a new
 * sample; REBASED when it was reset and took the first sample of a new
 * base, so that any history measured against the old base must be
 * dropped too.
 */
enum synctcp_ott_result synctcp_flow_sample(struct synctcp_flow *f,
					    const struct synctcp_ack *a,
					    unsigned int mode)
{
	enum synctcp_ott_result res, qres;
	s64 ott_us;
	bool held;

	if (f->source == SYNCTCP_SRC_NONE)
		f->source = synctcp_flow_choose_source(a, mode);
	res = synctcp_flow_ott(f, a, &ott_us);
	if (res == SYNCTCP_OTT_UNFIT)
		res = synctcp_flow_unfit(f, a, &ott_us);
	if (res == SYNCTCP_OTT_SKIP)
		return res;
	/* (an estimator without samples keeps what it inherited) */
	if (res == SYNCTCP_OTT_REBASED && synctcp_qdelay_valid(&f->q))
		synctcp_qdelay_reset(&f->q);
	f->ott_us = ott_us;
	/* After a reset the sample is always taken: res stays REBASED. */
	held = f->source != SYNCTCP_SRC_OPTION && a->pkts_acked == 1;
	qres = synctcp_qdelay_sample_held(&f->q, ott_us, a->now_us,
					  synctcp_qdelay_bound_us(a->srtt_us),
					  held && res != SYNCTCP_OTT_REBASED);
	/* a flow that cannot grow cannot make the loss its detector waits for */
	if (!a->cwnd_limited)
		synctcp_qdelay_trust_held(&f->q);
	return qres == SYNCTCP_OTT_OK ? res : qres;
}

/**
 * synctcp_flow_follow_reverse - cwnd follows the delay of the ACK path
 * @f: the connection, whose estimator synctcp_flow_sample() has just fed
 * @a: the ACK
 * @res: what synctcp_flow_sample() returned for it
 *
 * Variant "best" only (core/revcomp.h).  The ACK's way back is its RTT
 * sample minus its OTT sample.  An RTT-sourced connection has no way to
 * tell the two paths apart: whatever compensation it had is withdrawn.
 * With the option, an ACK of a single segment may have been held by the
 * peer: the hold is in its RTT and not in its OTT, so it is no sample.
 *
 * Return: the new cwnd (@a->cwnd when it does not change).
 */
u32 synctcp_flow_follow_reverse(struct synctcp_flow *f,
				const struct synctcp_ack *a,
				enum synctcp_ott_result res)
{
	struct synctcp_revcomp_in in;

	if (!synctcp_flow_best(f))
		return a->cwnd;
	if (f->source == SYNCTCP_SRC_RTT && !f->rev.applied_us)
		return a->cwnd;
	if (f->source != SYNCTCP_SRC_RTT &&
	    (res == SYNCTCP_OTT_SKIP || a->rtt_us <= 0))
		return a->cwnd;
	in = (struct synctcp_revcomp_in){
		.now_us = a->now_us,
		.rtt_us = a->rtt_us > 0 ? (u32)a->rtt_us : 0,
		.srtt_us = a->srtt_us,
		.min_rtt_us = a->min_rtt_us,
		.tick_us = synctcp_flow_tick_us(f),
		.snd_una = a->snd_una,
		.snd_nxt = a->snd_nxt,
		.cwnd = a->cwnd,
		.max_flight = a->max_flight,
		.clamp = a->clamp,
		.cwnd_limited = a->cwnd_limited,
		.apply = a->ca_open,
	};
	if (f->source == SYNCTCP_SRC_RTT)
		return synctcp_revcomp_withdraw(&f->rev, &in);
	if (res == SYNCTCP_OTT_REBASED)
		synctcp_revcomp_restart(&f->rev);
	if (f->source == SYNCTCP_SRC_OPTION && a->pkts_acked == 1)
		return a->cwnd;
	/*
	 * The sample as measured, not the estimate: a hold of the peer's is
	 * in both the TSval and the RTT of its ACK and cancels in RTT - OTT,
	 * which the prompt estimator's bound of a held ACK does not.
	 */
	in.ott_us = f->ott_us;
	return synctcp_revcomp_update(&f->rev, &in);
}
