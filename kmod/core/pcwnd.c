// SPDX-License-Identifier: GPL-2.0
/* SyncPcwnd congestion reaction; see pcwnd.h. */
#include "pcwnd.h"

/**
 * synctcp_pcwnd_hold - start a round trip in which cwnd is not cut again
 * @r: reaction state
 * @snd_nxt: the first sequence number not yet sent
 *
 * Called after our own reduction and when loss recovery starts, so that a
 * loss and a delay signal of the same episode cost one reduction, not two.
 */
void synctcp_pcwnd_hold(struct synctcp_pcwnd *r, u32 snd_nxt)
{
	r->hold_seq = snd_nxt;
	r->holding = true;
}

/* Has a round trip passed since the last reduction? */
static bool synctcp_pcwnd_may_reduce(struct synctcp_pcwnd *r, u32 snd_una)
{
	if (r->holding && before(snd_una, r->hold_seq))
		return false;
	r->holding = false;
	return true;
}

/**
 * synctcp_pcwnd_react - apply SyncPcwnd to one ACK's congestion signal
 * @r: reaction state
 * @congested: this ACK's congestion signal (from the detector)
 * @snd_una: first unacknowledged sequence number, after this ACK
 * @snd_nxt: first unsent sequence number
 * @w: window; on a reduction cwnd and ssthresh become max(cwnd/2, 2),
 *     but a reduction never raises a cwnd that is already below 2
 *
 * Return: the action taken; on SYNCTCP_PCWND_GROW the caller grows cwnd as
 * Reno does.  A signal inside the held round trip neither cuts nor grows.
 */
enum synctcp_pcwnd_action
synctcp_pcwnd_react(struct synctcp_pcwnd *r, bool congested,
		    u32 snd_una, u32 snd_nxt, struct synctcp_cwnd *w)
{
	if (!congested)
		return SYNCTCP_PCWND_GROW;
	r->signals++;
	if (!synctcp_pcwnd_may_reduce(r, snd_una))
		return SYNCTCP_PCWND_HOLD;
	w->cwnd = max_t(u32, w->cwnd >> 1,
			min_t(u32, w->cwnd, SYNCTCP_MIN_CWND));
	w->ssthresh = w->cwnd;
	r->reductions++;
	synctcp_pcwnd_hold(r, snd_nxt);
	return SYNCTCP_PCWND_HALVED;
}
