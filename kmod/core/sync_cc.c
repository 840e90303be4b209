// SPDX-License-Identifier: GPL-2.0
/* Sync-TCP(Pcwnd) per connection; see sync_cc.h. */
#include "sync_cc.h"
#include "pqlen.h"

void synctcp_sync_init(struct synctcp_sync *s, u8 variant)
{
	*s = (struct synctcp_sync){ 0 };
	synctcp_flow_init(&s->flow, variant);
	s->react.round_nearest = synctcp_flow_best(&s->flow);
}

/*
 * The standing queue: the smallest queuing delay of the last quarter to
 * half round trip, in two buckets of srtt / 4 (at least 1 ms).  A gap of
 * more than a bucket without samples leaves nothing of the one before.
 */
static void synctcp_sync_standing(struct synctcp_sync *s, u32 qdelay_us,
				  u64 now_us, u32 srtt_us)
{
	u64 len = max_t(u32, srtt_us / 4, 1000), age = now_us - s->stand_start_us;

	if (now_us < s->stand_start_us || age >= len) {
		s->stand_prev_us = now_us >= s->stand_start_us && age < 2 * len ?
				   s->stand_cur_us : qdelay_us;
		s->stand_cur_us = qdelay_us;
		s->stand_start_us = now_us;
	} else {
		s->stand_cur_us = min_t(u32, s->stand_cur_us, qdelay_us);
	}
}

/*
 * Variant "best": the standing queue signals; a cut drains the queue to
 * half the threshold; a starving flow raises a provisional maximum (ott.h);
 * the mode decides whether delay signals count at all, and when to probe
 * the base.
 */
static void synctcp_sync_best(struct synctcp_sync *s,
			      const struct synctcp_ack *a, u32 thresh_pct)
{
	synctcp_sync_standing(s, s->flow.q.qdelay_us, a->now_us, a->srtt_us);
	s->congested = synctcp_pqlen_over(&s->flow.q,
					  synctcp_sync_standing_us(s),
					  thresh_pct);
	s->signal = s->congested;
	synctcp_qdelay_starving(&s->flow.q, synctcp_sync_standing_us(s),
				thresh_pct, a->cwnd, a->now_us, a->srtt_us);
	s->floor_us = (u32)div_u64((u64)s->flow.q.max_qdelay_us * thresh_pct,
				   200);
	switch (synctcp_mode_sample(&s->flow.mode, &s->flow.q, a->now_us,
				    a->wall_ns, a->srtt_us, thresh_pct)) {
	case SYNCTCP_MODE_PROBE:
		s->probe = true;
		break;
	case SYNCTCP_MODE_ENTER:
		s->probe = false;
		break;
	default:
		break;
	}
	if (s->flow.mode.competing)
		s->signal = false;
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
		if (synctcp_flow_best(&s->flow)) {
			synctcp_sync_best(s, a, thresh_pct);
		} else {
			s->congested = synctcp_pqlen_congested(&s->flow.q,
							       thresh_pct);
			s->signal = s->congested;
		}
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
	u32 keep = SYNCTCP_PCWND_KEEP_HALF, q = synctcp_sync_standing_us(s);
	enum synctcp_pcwnd_action act;
	bool probe = s->probe && !s->flow.mode.competing;

	if (probe)	/* a halving: below what the flow can see of the queue */
		keep = SYNCTCP_PCWND_KEEP_HALF;
	else if (s->signal && synctcp_flow_best(&s->flow))
		keep = synctcp_pcwnd_keep(q - min_t(u32, q, s->floor_us),
					  srtt_us);
	act = synctcp_pcwnd_react_by(&s->react, s->signal || probe, snd_una,
				     snd_nxt, w, keep);
	if (act == SYNCTCP_PCWND_HALVED)
		s->probe = false;
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
 * recovery, so that the loss and the delay of one episode cost one cut,
 * and an epoch's drain gives back half the window it took (mode.h).
 */
void synctcp_sync_on_loss(struct synctcp_sync *s, u32 snd_nxt)
{
	synctcp_qdelay_on_loss(&s->flow.q);
	if (!synctcp_flow_best(&s->flow))
		return;
	synctcp_pcwnd_hold(&s->react, snd_nxt);
	synctcp_mode_loss(&s->flow.mode);
}

/* The slowest increase as the queue nears the threshold: 1/16 per RTT. */
#define SYNCTCP_SYNC_ROOM_MIN	64U

/**
 * synctcp_sync_ai_window - the window of the additive increase
 * @s: the connection
 * @cwnd: cwnd now (segments)
 * @thresh_pct: detection threshold, percent of the maximum queuing delay
 *
 * tcp_cong_avoid_ai() adds a segment per @w acknowledged: w = cwnd is
 * Reno's one per round trip.  Variant "best" tapers it as the queue nears
 * the threshold, to (threshold - qdelay) / threshold segments per round
 * trip (at least 1/16): twenty flows that each add one per round trip add
 * twenty to the queue in the round trip before their cuts take hold, and
 * on weigle-ftp they filled the 92-packet queue from the threshold's 36
 * within 200 ms, twice a second.  Reno's increase while the detector is
 * off (no loss yet) or the queue is empty.
 *
 * Return: w for tcp_cong_avoid_ai() (at least 1).
 */
u32 synctcp_sync_ai_window(const struct synctcp_sync *s, u32 cwnd,
			   u32 thresh_pct)
{
	u32 room;

	cwnd = max_t(u32, cwnd, 1);
	if (!synctcp_flow_best(&s->flow) || s->flow.mode.competing)
		return cwnd;
	room = max_t(u32, synctcp_pqlen_room(&s->flow.q, thresh_pct),
		     SYNCTCP_SYNC_ROOM_MIN);
	return (u32)min_t(u64, div_u64((u64)cwnd << 10, room), U32_MAX);
}
