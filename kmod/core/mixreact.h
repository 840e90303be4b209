/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SyncMixReact (Weigle 2003, section 3.6.2): AIMD whose alpha (increase per
 * RTT) and beta (multiplicative decrease) follow the SyncMix indication.
 *
 *   trend       region    action                         alpha / beta
 *   increasing  0-25%     +1 segment per RTT (Reno CA)   alpha = 1
 *   increasing  25-50%    cwnd x 0.9 now                 beta = 0.9
 *   increasing  50-75%    cwnd x 0.75 now                beta = 0.75
 *   increasing  75-100%   cwnd x 0.5 now                 beta = 0.5
 *   decreasing  0-25%     +50% of cwnd over one RTT      alpha = cwnd / 2
 *   decreasing  25-50%    +25% of cwnd over one RTT      alpha = cwnd / 4
 *   decreasing  50-75%    +10% of cwnd over one RTT      alpha = cwnd / 10
 *   decreasing  75-100%   no change                      beta = 1
 *
 * A decision is taken when SyncMix has a new indication (every three
 * samples).  Decreases are made at once; an increase is a rate that stays
 * in force until the next decision and is spread over the ACKs: every
 * acknowledged segment adds alpha / cwnd segments, accumulated in fixed
 * point, so one RTT of ACKs (one window of segments) adds alpha.  For the
 * proportional cells alpha / cwnd is simply 1/2, 1/4 or 1/10.
 *
 * Without an indication (not enough samples, or after a loss until the
 * next decision) the caller grows cwnd as Reno does.  A decrease never
 * takes cwnd below SYNCTCP_MIN_CWND (nor raises a smaller one), sets
 * ssthresh to the new cwnd as an ECN response does, and nothing exceeds
 * the caller's clamp.
 */
#ifndef SYNCTCP_MIXREACT_H
#define SYNCTCP_MIXREACT_H

#include "synctcp_compat.h"
#include "pcwnd.h"	/* struct synctcp_cwnd, SYNCTCP_MIN_CWND */
#include "syncmix.h"

/*
 * Fixed point of the fractional cwnd growth: one segment is 2^20, so that
 * +1 segment per RTT is exact for windows up to 1024 segments.
 */
#define SYNCTCP_MIXREACT_CREDIT_SHIFT	20U
#define SYNCTCP_MIXREACT_CREDIT_ONE	0x100000U	/* 1 << CREDIT_SHIFT */

/* The reaction in force (exported in telemetry as the last action). */
enum synctcp_mixreact_action {
	SYNCTCP_MIXREACT_RENO = 0,	/* no indication: Reno's growth */
	SYNCTCP_MIXREACT_ADD_1 = 1,	/* increasing, 0-25%: +1 per RTT */
	SYNCTCP_MIXREACT_MUL_90 = 2,	/* increasing, 25-50%: x 0.9 */
	SYNCTCP_MIXREACT_MUL_75 = 3,	/* increasing, 50-75%: x 0.75 */
	SYNCTCP_MIXREACT_MUL_50 = 4,	/* increasing, 75-100%: x 0.5 */
	SYNCTCP_MIXREACT_ADD_50PCT = 5,	/* decreasing, 0-25%: +50% per RTT */
	SYNCTCP_MIXREACT_ADD_25PCT = 6,	/* decreasing, 25-50%: +25% per RTT */
	SYNCTCP_MIXREACT_ADD_10PCT = 7,	/* decreasing, 50-75%: +10% per RTT */
	SYNCTCP_MIXREACT_KEEP = 8,	/* decreasing, 75-100%: no change */
};

struct synctcp_mixreact {
	u32 credit;		/* growth not yet in cwnd, segments << 20 */
	u32 increases;		/* decisions that raise cwnd (ADD_*) */
	u32 decreases;		/* decisions that cut cwnd (MUL_*) */
	u32 step_cwnd;		/* the cwnd step_1 is for (0: none yet) */
	u32 step_1;		/* 1 / step_cwnd, segments << 20, rounded up */
	u8 action;		/* enum synctcp_mixreact_action in force */
};

enum synctcp_mixreact_action synctcp_mixreact_action_of(u8 trend, u8 region);
bool synctcp_mixreact_is_increase(u8 action);
bool synctcp_mixreact_is_decrease(u8 action);

void synctcp_mixreact_reset(struct synctcp_mixreact *r);
void synctcp_mixreact_apply(struct synctcp_mixreact *r, u8 a,
			    struct synctcp_cwnd *w, u32 clamp, u32 keep_min);
enum synctcp_mixreact_action
synctcp_mixreact_decide(struct synctcp_mixreact *r, u8 trend, u8 region,
			struct synctcp_cwnd *w, u32 clamp);
void synctcp_mixreact_grow(struct synctcp_mixreact *r, u32 acked,
			   struct synctcp_cwnd *w, u32 clamp);
void synctcp_mixreact_grow_by(struct synctcp_mixreact *r, u32 acked,
			      struct synctcp_cwnd *w, u32 clamp, u32 scale);

/* Is there no decision in force, so that cwnd grows as Reno's? */
static inline bool synctcp_mixreact_follows_reno(const struct synctcp_mixreact *r)
{
	return r->action == SYNCTCP_MIXREACT_RENO;
}

#endif /* SYNCTCP_MIXREACT_H */
