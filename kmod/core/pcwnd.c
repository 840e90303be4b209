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
	r->cut_holding = false;
}

/*
 * Has a round trip passed since the last reduction?  Asked on every ACK,
 * signal or not: a hold left in force while more than 2^31 bytes are
 * acknowledged would make before(snd_una, hold_seq) true again.
 */
static bool synctcp_pcwnd_may_reduce(struct synctcp_pcwnd *r, u32 snd_una)
{
	if (r->holding && before(snd_una, r->hold_seq))
		return false;
	r->holding = false;
	return true;
}

/**
 * synctcp_pcwnd_ssthresh - ssthresh on entering loss recovery
 * @r: reaction state
 * @snd_una: first unacknowledged sequence number
 * @cwnd: cwnd now (segments)
 *
 * Reno halves cwnd on a loss.  A loss detected within the round trip of
 * our own delay halving belongs to the same congestion episode, which has
 * been answered: keep cwnd (at least 2), so that the episode costs one
 * halving, as "at most once per RTT" promises.
 *
 * Return: the new ssthresh (segments).
 */
u32 synctcp_pcwnd_ssthresh(struct synctcp_pcwnd *r, u32 snd_una, u32 cwnd)
{
	if (r->cut_holding && !synctcp_pcwnd_may_reduce(r, snd_una))
		return max_t(u32, cwnd, SYNCTCP_MIN_CWND);
	return max_t(u32, cwnd >> 1, SYNCTCP_MIN_CWND);
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
	bool may_reduce = synctcp_pcwnd_may_reduce(r, snd_una);

	if (!congested)
		return SYNCTCP_PCWND_GROW;
	r->signals++;
	if (!may_reduce)
		return SYNCTCP_PCWND_HOLD;
	w->cwnd = max_t(u32, w->cwnd >> 1,
			min_t(u32, w->cwnd, SYNCTCP_MIN_CWND));
	w->ssthresh = w->cwnd;
	r->reductions++;
	synctcp_pcwnd_hold(r, snd_nxt);
	r->cut_holding = true;
	return SYNCTCP_PCWND_HALVED;
}
