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

/* What SyncPcwnd decided for one ACK. */
enum synctcp_pcwnd_action {
	SYNCTCP_PCWND_GROW = 0,	/* no signal: grow as Reno does */
	SYNCTCP_PCWND_HOLD = 1,	/* signal within the held RTT: leave cwnd */
	SYNCTCP_PCWND_HALVED = 2, /* signal: cwnd and ssthresh halved */
};

struct synctcp_pcwnd {
	u32 hold_seq;		/* no reduction until snd_una reaches this */
	u32 signals;		/* ACKs that signalled congestion */
	u32 reductions;		/* cwnd halvings made */
	bool holding;		/* hold_seq is in force */
	bool cut_holding;	/* ... and was started by our own halving */
};

struct synctcp_cwnd {
	u32 cwnd;		/* segments */
	u32 ssthresh;		/* segments */
};

void synctcp_pcwnd_hold(struct synctcp_pcwnd *r, u32 snd_nxt);
u32 synctcp_pcwnd_ssthresh(struct synctcp_pcwnd *r, u32 snd_una, u32 cwnd);
enum synctcp_pcwnd_action
synctcp_pcwnd_react(struct synctcp_pcwnd *r, bool congested,
		    u32 snd_una, u32 snd_nxt, struct synctcp_cwnd *w);

#endif /* SYNCTCP_PCWND_H */
