/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reverse-path compensation (not in the dissertation; docs/reverse-path.md).
 *
 * A window-based flow sends cwnd per round trip, so its rate is cwnd / RTT.
 * A queue on the ACK path lengthens the round trip and slows the flow by
 * as much, although the forward path is no more congested; when that
 * queue drains, the same cwnd suddenly sends faster than the forward link
 * and fills its queue.  Reno's full buffer hides both; a flow that keeps
 * the forward queue short loses throughput to the first and cuts on the
 * second (issue 17: sync kept 0.69 of its goodput under reverse load).
 *
 * One-way delays tell the two paths apart: an ACK's RTT sample minus its
 * forward OTT is the delay of the ACK's own way back (plus the clock
 * offset, which cancels in differences).  When it changes by d, cwnd
 * changes by cwnd * d / (RTT - d), so that cwnd / RTT, the rate, stays as
 * the forward path's congestion control left it.  The fractions carry over
 * in microseconds of reverse delay.
 */
#ifndef SYNCTCP_REVCOMP_H
#define SYNCTCP_REVCOMP_H

#include "synctcp_compat.h"

struct synctcp_revcomp {
	u32 last_rev_us;	/* reverse delay + offset of the last sample */
	s32 credit_us;		/* its change not yet turned into segments */
};

void synctcp_revcomp_restart(struct synctcp_revcomp *r, u32 rev_us);
s32 synctcp_revcomp_update(struct synctcp_revcomp *r, u32 rev_us, u32 cwnd,
			   u32 rtt_us, bool apply);

#endif /* SYNCTCP_REVCOMP_H */
