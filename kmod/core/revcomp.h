/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reverse-path compensation (variant "best"; not in the dissertation;
 * docs/reverse-path.md).
 *
 * A window-based flow sends cwnd per round trip, so its rate is cwnd / RTT.
 * A queue on the ACK path lengthens the round trip and slows the flow by
 * as much, although the forward path is no more congested; when that
 * queue drains, the same cwnd suddenly sends faster than the forward link
 * and fills its queue.  One-way delays tell the two paths apart: an ACK's
 * RTT sample minus its forward OTT sample is the delay of the ACK's own
 * way back, plus the clocks' offset, which cancels against its minimum.
 *
 * The compensation scales cwnd by (B + r) / B, where B is the forward
 * round trip (srtt less the reverse queue) and r the ACK path's queuing
 * delay, so that cwnd / RTT stays what the forward congestion control set:
 *
 *   r        = rev - min rev (min of the last 30 to 60 s), and at most
 *              RTT - min RTT: the ACK path cannot hold more queue than the
 *              round trip shows
 *   applied  = the r that cwnd is scaled for now, by the factor F
 *   per ACK, if |r - applied| >= one tick of the OTT source:
 *              F' = (B + r) / B;  cwnd = cwnd * F' / F;  applied = r
 *
 * It is applied against that reference, not step by step: cwnd / F is
 * what the forward path's congestion control set, whatever r and B did in
 * between, so a delay that rises and falls back leaves cwnd where it was
 * (to the fraction of a segment, which is carried), and timestamp rounding
 * cannot ratchet it (issue 28:
 * step-wise scaling multiplied cwnd by rtt^2 / (rtt^2 - d^2) per jitter
 * cycle, to 2 * 10^9 segments).  And it is bounded:
 *
 *  - a rise needs the flow to be cwnd-limited and TCP_CA_Open, and
 *    leaves cwnd at most twice the largest flight of the last round trip;
 *  - the total factor is at most SYNCTCP_REVCOMP_MAX_FACTOR;
 *  - r never exceeds what the RTT itself shows (RTT - min RTT): a peer
 *    whose TSvals drift cannot fake a reverse queue the round trip does
 *    not have;
 *  - a restart (new OTT base, another OTT source) withdraws it first.
 */
#ifndef SYNCTCP_REVCOMP_H
#define SYNCTCP_REVCOMP_H

#include "synctcp_compat.h"

/* The largest factor the compensation may scale cwnd by. */
#define SYNCTCP_REVCOMP_MAX_FACTOR	4U
/* A fall never takes cwnd below this (segments), nor raises a smaller one. */
#define SYNCTCP_REVCOMP_MIN_CWND	2U
/* Changes of the reverse queue smaller than this (us) are not followed. */
#define SYNCTCP_REVCOMP_DEADBAND_US	1000U
/* One window of the windowed minimum reverse delay, us >> 10 (~30 s). */
#define SYNCTCP_REVCOMP_MIN_WIN		(30U * 1000U * 1000U / 1024U)
/* A reverse delay this far (us) from the reference restarts it. */
#define SYNCTCP_REVCOMP_MAX_REL_US	((s64)1 << 30)
/* Fixed point of the carried fraction of a segment, and of the factor. */
#define SYNCTCP_REVCOMP_FRAC_SHIFT	16U
#define SYNCTCP_REVCOMP_FACTOR_SHIFT	32U
#define SYNCTCP_REVCOMP_ONE		((u64)1 << SYNCTCP_REVCOMP_FACTOR_SHIFT)

/* What one ACK tells the compensation. */
struct synctcp_revcomp_in {
	s64 ott_us;		/* this ACK's forward OTT sample (+ offset) */
	u64 now_us;		/* local clock */
	u32 rtt_us;		/* its RTT sample (> 0) */
	u32 srtt_us;		/* smoothed RTT (0: unknown) */
	u32 min_rtt_us;		/* smallest RTT sample (0: unknown) */
	u32 tick_us;		/* resolution of the OTT source */
	u32 snd_una;		/* first unacknowledged sequence number */
	u32 snd_nxt;		/* first sequence number not yet sent */
	u32 cwnd;		/* segments */
	u32 max_flight;		/* most segments in flight in the last round */
	u32 clamp;		/* largest cwnd allowed */
	bool cwnd_limited;	/* cwnd limited the flow in the last round */
	bool apply;		/* cwnd may change now (TCP_CA_Open) */
};

struct synctcp_revcomp {
	s64 ref_us;		/* reverse delay (+ offset) of the first sample */
	s32 min_us;		/* smallest reverse delay, relative to ref_us */
	s32 win_min_us;		/* smallest in the current window */
	u32 win_start;		/* local time the window began, us >> 10 */
	u32 applied_us;		/* the reverse queue cwnd is scaled for */
	u64 factor;		/* the factor that is, SYNCTCP_REVCOMP_ONE = 1 */
	s32 frac;		/* cwnd's distance from the scaled window,
				 * 1/65536 segments (|frac| <= 1/2 segment)
				 */
	u8 started:1,		/* ref_us and the minimum are set */
	   withdraw:1;		/* scale back to no queue, then restart */
};

/**
 * synctcp_revcomp_ssthresh - ssthresh after the compensation moved cwnd
 * @before: cwnd before
 * @after: cwnd after
 * @ssthresh: ssthresh now
 *
 * A fall that takes cwnd below ssthresh in congestion avoidance would be
 * undone on the same ACK: tcp_slow_start() grows cwnd back to ssthresh
 * (after a delay cut ssthresh is the cut window).  ssthresh follows such
 * a fall; in slow start (cwnd below ssthresh before) and on a rise it
 * stays.
 *
 * Return: the new ssthresh.
 */
static inline u32 synctcp_revcomp_ssthresh(u32 before, u32 after, u32 ssthresh)
{
	if (after < before && ssthresh <= before && ssthresh > after)
		return after;
	return ssthresh;
}

void synctcp_revcomp_init(struct synctcp_revcomp *r);
void synctcp_revcomp_restart(struct synctcp_revcomp *r);
u32 synctcp_revcomp_update(struct synctcp_revcomp *r,
			   const struct synctcp_revcomp_in *in);
u32 synctcp_revcomp_withdraw(struct synctcp_revcomp *r,
			     const struct synctcp_revcomp_in *in);

#endif /* SYNCTCP_REVCOMP_H */
