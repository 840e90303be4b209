// SPDX-License-Identifier: GPL-2.0
/* Reverse-path compensation; see revcomp.h. */
#include "revcomp.h"

/**
 * synctcp_revcomp_restart - a new base for the reverse delay
 * @r: compensation state
 * @rev_us: this sample's reverse delay (+ offset)
 *
 * Called on the first OTT sample and whenever the OTT base moves.
 */
void synctcp_revcomp_restart(struct synctcp_revcomp *r, u32 rev_us)
{
	r->last_rev_us = rev_us;
	r->credit_us = 0;
}

/**
 * synctcp_revcomp_update - the change of cwnd for one reverse-delay sample
 * @r: compensation state
 * @rev_us: this ACK's reverse delay (+ offset): RTT sample - OTT sample
 * @cwnd: cwnd now (segments)
 * @rtt_us: this ACK's RTT sample (us), with the change in it
 * @apply: may cwnd change now (not in loss recovery or CWR)?  If not, the
 *	   change is kept for later
 *
 * cwnd / R is kept: a change d of the reverse delay on a round trip that
 * was R - d makes cwnd * R / (R - d).  Taking R as the round trip after
 * the change makes a rise and the fall that undoes it cancel exactly, so
 * that jitter does not drift cwnd.  The credit is bounded by half a round
 * trip either way: a change larger than that is not one to follow.
 *
 * Return: segments to add to cwnd (negative: to take away).
 */
s32 synctcp_revcomp_update(struct synctcp_revcomp *r, u32 rev_us, u32 cwnd,
			   u32 rtt_us, bool apply)
{
	s64 credit = (s64)r->credit_us + (s32)(rev_us - r->last_rev_us);
	s64 half, segs, before;

	r->last_rev_us = rev_us;
	if (!rtt_us || !cwnd) {
		r->credit_us = 0;
		return 0;
	}
	half = min_t(u32, rtt_us, S32_MAX) / 2;
	credit = clamp_t(s64, credit, -half, half);
	r->credit_us = (s32)credit;
	if (!apply)
		return 0;
	before = (s64)rtt_us - credit;		/* > 0: |credit| <= rtt / 2 */
	/* most ACKs move the delay by less than a segment: no division */
	if ((credit < 0 ? -credit : credit) * cwnd < before)
		return 0;
	segs = div64_s64(credit * cwnd, before);
	/* the part of the credit those segments stand for: segs * before / cwnd */
	r->credit_us -= (s32)div_s64(segs * before, (s32)cwnd);
	return (s32)segs;
}
