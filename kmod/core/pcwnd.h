/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SyncPcwnd (Weigle 2003, section 3.6.1): on a congestion signal halve
 * cwnd, at most once per round-trip time, like a reaction to ECN.
 *
 * "Once per RTT" is kept the way Linux keeps it for ECN's CWR state: a
 * reduction (or a loss recovery episode) marks snd_nxt, and the next
 * reduction waits until everything sent before that mark is acknowledged.
 */
#ifndef SYNCTCP_PCWND_H
#define SYNCTCP_PCWND_H

#include "synctcp_compat.h"

/* The smallest cwnd a reduction leaves (segments). */
#define SYNCTCP_MIN_CWND	2U

/*
 * The share of cwnd a reduction keeps, in 1/1024: the dissertation's
 * halving, and the bounds of the reduction by the forward queue's share
 * of the round trip (synctcp_pcwnd_keep()).
 */
#define SYNCTCP_PCWND_KEEP_ONE	1024U
#define SYNCTCP_PCWND_KEEP_HALF	512U
#define SYNCTCP_PCWND_KEEP_MAX	960U	/* a cut takes at least 1/16 */

/* What SyncPcwnd decided for one ACK. */
enum synctcp_pcwnd_action {
	SYNCTCP_PCWND_GROW = 0,	/* no signal: grow as Reno does */
	SYNCTCP_PCWND_HOLD = 1,	/* signal within the held RTT: leave cwnd */
	SYNCTCP_PCWND_HALVED = 2, /* signal: cwnd and ssthresh halved */
};

struct synctcp_pcwnd {
	u32 hold_seq;		/* no reduction until snd_una reaches this */
	u16 signals;		/* ACKs that signalled congestion (wraps) */
	u16 reductions;		/* cwnd reductions made (wraps) */
	bool holding;		/* hold_seq is in force */
	bool cut_holding;	/* ... and was started by our own halving */
	bool round_nearest;	/* a cut rounds to the nearest segment */
};

struct synctcp_cwnd {
	u32 cwnd;		/* segments */
	u32 ssthresh;		/* segments */
};

void synctcp_pcwnd_hold(struct synctcp_pcwnd *r, u32 snd_nxt);
bool synctcp_pcwnd_may_reduce(struct synctcp_pcwnd *r, u32 snd_una);
u32 synctcp_pcwnd_ssthresh(struct synctcp_pcwnd *r, u32 snd_una, u32 cwnd);
enum synctcp_pcwnd_action
synctcp_pcwnd_react_by(struct synctcp_pcwnd *r, bool congested,
		       u32 snd_una, u32 snd_nxt, struct synctcp_cwnd *w,
		       u32 keep);
u32 synctcp_pcwnd_keep(u32 qdelay_us, u32 srtt_us);

/* SyncPcwnd as the dissertation has it: a signal halves cwnd. */
static inline enum synctcp_pcwnd_action
synctcp_pcwnd_react(struct synctcp_pcwnd *r, bool congested,
		    u32 snd_una, u32 snd_nxt, struct synctcp_cwnd *w)
{
	return synctcp_pcwnd_react_by(r, congested, snd_una, snd_nxt, w,
				      SYNCTCP_PCWND_KEEP_HALF);
}

#endif /* SYNCTCP_PCWND_H */
