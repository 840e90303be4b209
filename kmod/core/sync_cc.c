// SPDX-License-Identifier: GPL-2.0
/* Sync-TCP(Pcwnd) per connection; see sync_cc.h. */
#include "sync_cc.h"
#include "pqlen.h"

void synctcp_sync_init(struct synctcp_sync *s, u8 variant)
{
	*s = (struct synctcp_sync){ 0 };
	synctcp_flow_init(&s->flow, variant);
}

/**
 * synctcp_sync_on_ack - SyncPQlen on this ACK's queuing delay
 * @s: the connection
 * @a: the ACK
 * @mode: enum synctcp_source_mode
 * @thresh_pct: detection threshold, percent of the maximum queuing delay
 *
 * Return: cwnd after the ACK path's delay is followed (variant "best";
 * @a->cwnd otherwise).
 */
u32 synctcp_sync_on_ack(struct synctcp_sync *s, const struct synctcp_ack *a,
			unsigned int mode, u32 thresh_pct)
{
	enum synctcp_ott_result res;

	s->signal = false;
	res = synctcp_flow_sample(&s->flow, a, mode);
	if (res != SYNCTCP_OTT_SKIP) {
		s->congested = synctcp_pqlen_congested(&s->flow.q, thresh_pct);
		s->signal = s->congested;
	}
	return synctcp_flow_follow_reverse(&s->flow, a, res);
}

/**
 * synctcp_sync_react - SyncPcwnd on this ACK's signal
 * @s: the connection
 * @snd_una: first unacknowledged sequence number
 * @snd_nxt: first unsent sequence number
 * @srtt_us: smoothed RTT (us), 0 when unknown
 * @w: the window; on HALVED cwnd and ssthresh are the cut ones
 *
 * Return: HALVED (cut, at most once per RTT), HOLD (a signal within the
 * held round trip: leave cwnd) or GROW (no signal: the caller grows cwnd
 * as Reno does).
 */
enum synctcp_pcwnd_action synctcp_sync_react(struct synctcp_sync *s,
					     u32 snd_una, u32 snd_nxt,
					     u32 srtt_us,
					     struct synctcp_cwnd *w)
{
	u32 keep = SYNCTCP_PCWND_KEEP_HALF;
	enum synctcp_pcwnd_action act;

	if (s->signal && synctcp_flow_best(&s->flow))
		keep = synctcp_pcwnd_keep(s->flow.q.qdelay_us, srtt_us);
	act = synctcp_pcwnd_react_by(&s->react, s->signal, snd_una, snd_nxt,
				     w, keep);
	s->signal = false;
	return act;
}

/**
 * synctcp_sync_ssthresh - ssthresh on entering loss recovery
 * @s: the connection
 * @snd_una: first unacknowledged sequence number
 * @cwnd: cwnd now
 *
 * "Loss handling is Reno's" (variant "paper"): cwnd / 2.  Variant "best"
 * keeps cwnd when the loss comes within the round trip of its own delay
 * cut: the episode has been answered once.
 *
 * Return: ssthresh (segments, at least 2).
 */
u32 synctcp_sync_ssthresh(struct synctcp_sync *s, u32 snd_una, u32 cwnd)
{
	if (!synctcp_flow_best(&s->flow))
		return max_t(u32, cwnd >> 1, SYNCTCP_MIN_CWND);
	return synctcp_pcwnd_ssthresh(&s->react, snd_una, cwnd);
}

/**
 * synctcp_sync_on_loss - loss recovery (fast retransmit or RTO) began
 * @s: the connection
 * @snd_nxt: first unsent sequence number
 *
 * The loss makes the maximum queuing delay trusted (section 3.5.1).
 * Variant "best" also holds delay cuts for the round trip of the
 * recovery, so that the loss and the delay of one episode cost one cut.
 */
void synctcp_sync_on_loss(struct synctcp_sync *s, u32 snd_nxt)
{
	synctcp_qdelay_on_loss(&s->flow.q);
	if (synctcp_flow_best(&s->flow))
		synctcp_pcwnd_hold(&s->react, snd_nxt);
}
