// SPDX-License-Identifier: GPL-2.0
/* Reverse-path compensation; see revcomp.h. */
#include "revcomp.h"

void synctcp_revcomp_init(struct synctcp_revcomp *r)
{
	*r = (struct synctcp_revcomp){ .factor = SYNCTCP_REVCOMP_ONE };
}

/**
 * synctcp_revcomp_restart - the OTT base moved
 * @r: compensation state
 *
 * The reverse delays of the new base cannot be compared with the old
 * ones: the reference is learnt again, and the scaling made against the
 * old one is withdrawn first.
 */
void synctcp_revcomp_restart(struct synctcp_revcomp *r)
{
	r->started = 0;
	if (r->applied_us)
		r->withdraw = 1;
}

/*
 * Scale cwnd from the reverse queue it was scaled for to @target (us):
 * by the factor (B + target) / B over the one applied.
 * Return: the new cwnd; applied_us, factor and the carried fraction follow.
 */
static u32 synctcp_revcomp_scale(struct synctcp_revcomp *r,
				 const struct synctcp_revcomp_in *in,
				 u32 target)
{
	u32 applied = r->applied_us, cwnd = in->cwnd, min_cwnd;
	u64 base, w, scaled, cap, factor, next;
	bool rise;

	if (!in->apply || !in->srtt_us || !cwnd || target == applied)
		return cwnd;
	rise = target > applied;
	if (rise && (!in->cwnd_limited ||
		     target - applied < max_t(u32, in->tick_us,
					       SYNCTCP_REVCOMP_DEADBAND_US)))
		return cwnd;
	if (!rise && target &&
	    applied - target < max_t(u32, in->tick_us,
				     SYNCTCP_REVCOMP_DEADBAND_US))
		return cwnd;
	base = max_t(u64, in->srtt_us > target ? in->srtt_us - target : 0,
		     in->min_rtt_us);
	if (!base)
		return cwnd;
	/* (B + target) / B, to the nearest 2^-32 */
	factor = target ? min_t(u64, mul_u64_u64_div_u64(base + target,
							 SYNCTCP_REVCOMP_ONE,
							 base),
				SYNCTCP_REVCOMP_MAX_FACTOR * SYNCTCP_REVCOMP_ONE) :
			  SYNCTCP_REVCOMP_ONE;
	/* B moves too: a smaller reverse queue never raises the factor */
	factor = rise ? max_t(u64, factor, r->factor) :
			min_t(u64, factor, r->factor);
	if (factor == r->factor) {
		r->applied_us = target;
		if (!target)
			r->withdraw = 0;
		return cwnd;
	}

	w = ((u64)cwnd << SYNCTCP_REVCOMP_FRAC_SHIFT) + r->frac;
	if (!w)
		return cwnd;
	scaled = mul_u64_u64_div_u64(w, factor, r->factor);
	if (scaled > w) {
		/* no more than twice what the path carried in the last round */
		cap = (u64)max_t(u32, cwnd, 2 * min_t(u32, in->max_flight,
						      U32_MAX / 2))
		      << SYNCTCP_REVCOMP_FRAC_SHIFT;
		if (scaled > cap) {
			if (cap <= w)
				return cwnd;
			factor = mul_u64_u64_div_u64(r->factor, cap, w);
			scaled = cap;
			/* the reverse queue that factor stands for */
			target = (u32)min_t(u64, mul_u64_u64_div_u64(base, factor,
					    SYNCTCP_REVCOMP_ONE) - base, target);
		}
	}
	/* cwnd is the scaled window to the nearest segment */
	next = (scaled + (1U << (SYNCTCP_REVCOMP_FRAC_SHIFT - 1))) >>
	       SYNCTCP_REVCOMP_FRAC_SHIFT;
	min_cwnd = min_t(u32, cwnd, SYNCTCP_REVCOMP_MIN_CWND);
	next = clamp_t(u64, next, min_cwnd, max_t(u32, in->clamp, 1));
	if (!rise)		/* rounding never turns a fall into a rise */
		next = min_t(u64, next, cwnd);
	r->applied_us = target;
	r->factor = factor;
	r->frac = (s32)clamp_t(s64, (s64)scaled -
			       (s64)(next << SYNCTCP_REVCOMP_FRAC_SHIFT),
			       -(1 << (SYNCTCP_REVCOMP_FRAC_SHIFT - 1)),
			       (1 << (SYNCTCP_REVCOMP_FRAC_SHIFT - 1)) - 1);
	if (!target)
		r->withdraw = 0;
	return (u32)next;
}

/* A new reference at this sample (first one, or one out of range). */
static void synctcp_revcomp_reference(struct synctcp_revcomp *r,
				      const struct synctcp_revcomp_in *in,
				      s64 rev_us)
{
	r->ref_us = rev_us;
	r->min_us = 0;
	r->win_min_us = 0;
	r->win_start = (u32)(in->now_us >> 10);
	r->started = 1;
	if (r->applied_us)
		r->withdraw = 1;
}

/**
 * synctcp_revcomp_update - one ACK's reverse delay, and cwnd after it
 * @r: compensation state
 * @in: the ACK's samples and the connection's window
 *
 * The reverse queue is the ACK's reverse delay (RTT - OTT) over the
 * smallest of the last 30 to 60 s, at most what the RTT shows over its
 * minimum: the target that cwnd is scaled to (synctcp_revcomp_scale()),
 * against the reference, so a change and its undoing cancel exactly;
 * while a restart is pending the target is no queue.  (Once a round trip,
 * from the round's smallest value, lagged the queue's swings: on
 * reverse-path-10 sync kept 0.87 of its goodput, 1.00 per ACK.)
 *
 * Return: the new cwnd (@in->cwnd when it does not change).
 */
u32 synctcp_revcomp_update(struct synctcp_revcomp *r,
			   const struct synctcp_revcomp_in *in)
{
	s64 rev = (s64)in->rtt_us - in->ott_us;
	u32 now = (u32)(in->now_us >> 10);
	u32 rq, queue;
	s64 rel;

	rel = rev - r->ref_us;
	if (!r->started || rel > SYNCTCP_REVCOMP_MAX_REL_US ||
	    rel < -SYNCTCP_REVCOMP_MAX_REL_US) {
		synctcp_revcomp_reference(r, in, rev);
		return r->withdraw ? synctcp_revcomp_scale(r, in, 0) : in->cwnd;
	}
	if (now - r->win_start >= SYNCTCP_REVCOMP_MIN_WIN) {
		/* the minimum of the window before this one ages out */
		r->min_us = r->win_min_us;
		r->win_min_us = (s32)rel;
		r->win_start = now;
	} else if (rel < r->win_min_us) {
		r->win_min_us = (s32)rel;
	}
	if (rel < r->min_us)
		r->min_us = (s32)rel;
	rq = (u32)min_t(s64, rel - r->min_us, U32_MAX);
	queue = in->min_rtt_us && in->rtt_us > in->min_rtt_us ?
		in->rtt_us - in->min_rtt_us : 0;
	rq = min_t(u32, rq, queue);
	return synctcp_revcomp_scale(r, in, r->withdraw ? 0 : rq);
}

/**
 * synctcp_revcomp_withdraw - scale cwnd back to no reverse queue
 * @r: compensation state
 * @in: the connection's window (its OTT and RTT fields are not read)
 *
 * For a connection that no longer has OTT samples (its peer's clock
 * turned out unfit): the compensation it had is undone as soon as cwnd
 * may change.
 *
 * Return: the new cwnd.
 */
u32 synctcp_revcomp_withdraw(struct synctcp_revcomp *r,
			     const struct synctcp_revcomp_in *in)
{
	if (!r->applied_us) {
		r->withdraw = 0;
		return in->cwnd;
	}
	r->withdraw = 1;
	return synctcp_revcomp_scale(r, in, 0);
}
