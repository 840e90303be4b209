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

/**
 * synctcp_pcwnd_may_reduce - has a round trip passed since the last hold?
 * @r: reaction state
 * @snd_una: first unacknowledged sequence number
 *
 * Asked on every ACK, signal or not: a hold left in force while more than
 * 2^31 bytes are acknowledged would make before(snd_una, hold_seq) true
 * again.  Return: true when a reduction may be made.
 */
bool synctcp_pcwnd_may_reduce(struct synctcp_pcwnd *r, u32 snd_una)
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
 * synctcp_pcwnd_keep - the share of cwnd that drains the forward queue
 * @qdelay_us: the forward queuing delay that signalled
 * @srtt_us: the smoothed round trip (us), 0 when unknown
 *
 * cwnd / srtt is the flow's rate, so keeping cwnd * (srtt - qdelay) / srtt
 * leaves in flight what the path holds without this flow's share of the
 * forward queue: the queue drains and the link stays busy.  The rest of
 * the round trip is the base delay and the reverse path's queue, which a
 * cut cannot drain: halving there (the dissertation) empties the pipe
 * too, and a queue on the ACK path then costs throughput (issue 17).
 * Bounded to [1/2, 15/16].
 *
 * Return: the share to keep, in 1/1024.
 */
u32 synctcp_pcwnd_keep(u32 qdelay_us, u32 srtt_us)
{
	u32 cut;

	if (!srtt_us || qdelay_us >= srtt_us / 2)
		return SYNCTCP_PCWND_KEEP_HALF;
	cut = (u32)div_u64((u64)qdelay_us * SYNCTCP_PCWND_KEEP_ONE, srtt_us);
	return min_t(u32, SYNCTCP_PCWND_KEEP_ONE - cut, SYNCTCP_PCWND_KEEP_MAX);
}

/**
 * synctcp_pcwnd_react_by - apply SyncPcwnd to one ACK's congestion signal
 * @r: reaction state
 * @congested: this ACK's congestion signal (from the detector)
 * @snd_una: first unacknowledged sequence number, after this ACK
 * @snd_nxt: first unsent sequence number
 * @w: window; on a reduction cwnd and ssthresh become
 *     max(cwnd * keep / 1024, 2), rounded down (the dissertation's halving)
 *     or to the nearest segment (round_nearest: with windows of 2 to 5
 *     segments rounding down cut 4 * 0.6 to 2), never above cwnd; a
 *     reduction never raises a cwnd that is already below 2
 * @keep: the share of cwnd a reduction keeps, in 1/1024 (at most 1024)
 *
 * Return: the action taken; on SYNCTCP_PCWND_GROW the caller grows cwnd as
 * Reno does.  A signal inside the held round trip neither cuts nor grows.
 */
enum synctcp_pcwnd_action
synctcp_pcwnd_react_by(struct synctcp_pcwnd *r, bool congested,
		       u32 snd_una, u32 snd_nxt, struct synctcp_cwnd *w,
		       u32 keep)
{
	bool may_reduce = synctcp_pcwnd_may_reduce(r, snd_una);
	u32 kept;

	if (!congested)
		return SYNCTCP_PCWND_GROW;
	r->signals++;
	if (!may_reduce)
		return SYNCTCP_PCWND_HOLD;
	kept = (u32)(((u64)w->cwnd * min_t(u32, keep, SYNCTCP_PCWND_KEEP_ONE) +
		      (r->round_nearest ? SYNCTCP_PCWND_KEEP_HALF : 0)) >> 10);
	kept = min_t(u32, kept, w->cwnd);
	w->cwnd = max_t(u32, kept, min_t(u32, w->cwnd, SYNCTCP_MIN_CWND));
	w->ssthresh = w->cwnd;
	r->reductions++;
	synctcp_pcwnd_hold(r, snd_nxt);
	r->cut_holding = true;
	return SYNCTCP_PCWND_HALVED;
}
