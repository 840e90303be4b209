// SPDX-License-Identifier: GPL-2.0
/* Sync-TCP(MixReact) per connection; see mixreact_cc.h. */
#include "mixreact_cc.h"
#include "pqlen.h"

void synctcp_mix_init(struct synctcp_mix *m, u8 variant)
{
	*m = (struct synctcp_mix){ 0 };
	synctcp_flow_init(&m->flow, variant);
	synctcp_syncmix_init(&m->detect);
	synctcp_mixreact_reset(&m->react);
}

/* Variant "best"'s threshold, the first region's upper end (mode.h). */
#define SYNCTCP_MIX_BEST_PCT	25U

/*
 * Variant "best": no decision before the first loss; the mode decides
 * whether delay decisions count at all, and when to probe the base.  A
 * starving flow's provisional maximum is not raised here (ott.h): on
 * weigle-ftp, with the average as the signal, it doubled MixReact's queue
 * in seed 2 (0.46 -> 0.86 of Reno's) and lowered its fairness.
 */
static void synctcp_mix_best(struct synctcp_mix *m, const struct synctcp_ack *a)
{
	if (!m->flow.q.loss_seen)
		m->fresh = false;
	switch (synctcp_mode_sample(&m->flow.mode, &m->flow.q, a->now_us,
				    a->wall_ns, a->srtt_us, SYNCTCP_MIX_BEST_PCT)) {
	case SYNCTCP_MODE_PROBE:
		m->probe = true;
		break;
	case SYNCTCP_MODE_ENTER:	/* Reno from here */
		m->probe = false;
		synctcp_mixreact_reset(&m->react);
		break;
	default:
		break;
	}
	if (m->flow.mode.competing)
		m->fresh = false;
}

/**
 * synctcp_mix_on_ack - SyncMix: this ACK's queuing delay into the average
 * @m: the connection
 * @a: the ACK
 * @mode: enum synctcp_source_mode
 * @preloss_max_us: before the first loss, a maximum below this gives
 *		    regions from the change of qdelay (variant "paper")
 *
 * Variant "best" is Reno until the first loss has shown what a full queue
 * looks like (as tcp_sync): the pre-loss regions are the noise of the
 * timestamps' millisecond (docs/mixreact.md).
 *
 * Return: cwnd after the ACK path's delay is followed.
 */
u32 synctcp_mix_on_ack(struct synctcp_mix *m, const struct synctcp_ack *a,
		       unsigned int mode, u32 preloss_max_us)
{
	enum synctcp_ott_result res;

	m->fresh = false;
	res = synctcp_flow_sample(&m->flow, a, mode);
	m->sampled = res != SYNCTCP_OTT_SKIP;
	if (!m->sampled)
		return synctcp_flow_follow_reverse(&m->flow, a, res);
	if (res == SYNCTCP_OTT_REBASED)
		synctcp_syncmix_restart(&m->detect);
	m->fresh = synctcp_syncmix_update(&m->detect, &m->flow.q,
					  preloss_max_us);
	if (synctcp_flow_best(&m->flow))
		synctcp_mix_best(m, a);
	return synctcp_flow_follow_reverse(&m->flow, a, res);
}

/**
 * synctcp_mix_best_action - variant "best"'s softer increases
 * @a: the table's action (enum synctcp_mixreact_action)
 *
 * While the queue shrinks but is still a quarter to three quarters full,
 * grow as Reno does (+1 segment per RTT) or not at all, where the
 * dissertation adds 25% and 10% of cwnd per RTT: those refill the queue
 * the decrease just drained (docs/mixreact.md has the figures).
 *
 * Return: the action variant "best" takes.
 */
u8 synctcp_mix_best_action(u8 a)
{
	switch (a) {
	case SYNCTCP_MIXREACT_ADD_50PCT:
		return SYNCTCP_MIXREACT_ADD_25PCT;
	case SYNCTCP_MIXREACT_ADD_25PCT:
		return SYNCTCP_MIXREACT_ADD_1;
	case SYNCTCP_MIXREACT_ADD_10PCT:
		return SYNCTCP_MIXREACT_KEEP;
	default:
		return a;
	}
}

/*
 * Variant "best": a decrease at most once per round trip, and never deeper
 * than the forward queue's share of it.  A decrease the hold blocks keeps
 * cwnd as it is (KEEP): the indication says the queue grows, so the
 * increase in force must not go on.
 */
static u8 synctcp_mix_best_decrease(struct synctcp_mix *m, u8 a, bool may,
				    u32 snd_nxt, u32 srtt_us, u32 *keep_min)
{
	if (!may)
		return SYNCTCP_MIXREACT_KEEP;
	*keep_min = synctcp_pcwnd_keep(m->flow.q.qdelay_us, srtt_us);
	synctcp_pcwnd_hold(&m->hold, snd_nxt);
	return a;
}

/* The slowest increase as the queue nears the first region: 1/16. */
#define SYNCTCP_MIX_ROOM_MIN	64U

/*
 * Variant "best": an increase in force shrinks as the queue nears a
 * quarter of the maximum, where the table's first decrease begins, to a
 * sixteenth of its rate: twenty flows that each added a quarter of cwnd
 * per round trip filled weigle-ftp's queue in the round trip before their
 * decreases took hold (2.4% of the packets dropped).
 */
static u32 synctcp_mix_room(const struct synctcp_mix *m)
{
	return max_t(u32, synctcp_pqlen_room(&m->flow.q, SYNCTCP_MIX_BEST_PCT),
		     SYNCTCP_MIX_ROOM_MIN);
}

/**
 * synctcp_mix_cong_avoid - SyncMixReact: act on a new indication, else
 *	continue the one in force
 * @m: the connection
 * @snd_una: first unacknowledged sequence number
 * @snd_nxt: first unsent sequence number
 * @srtt_us: smoothed RTT (us), 0 when unknown
 * @acked: segments this ACK acknowledged
 * @cwnd_limited: cwnd limits the flow (growth is only made then)
 * @clamp: the largest cwnd allowed
 * @w: the window, changed in place
 *
 * Return: true when no decision is in force and the caller grows cwnd as
 * Reno does (then @w is unchanged).
 */
bool synctcp_mix_cong_avoid(struct synctcp_mix *m, u32 snd_una, u32 snd_nxt,
			    u32 srtt_us, u32 acked, bool cwnd_limited,
			    u32 clamp, struct synctcp_cwnd *w)
{
	bool best = synctcp_flow_best(&m->flow);
	/* asked on every ACK, so that the hold cannot outlive 2^31 bytes */
	bool may = best && synctcp_pcwnd_may_reduce(&m->hold, snd_una);

	if (m->probe && may) {
		/* a halving, once: below what the flow can see of the queue */
		m->probe = false;
		m->fresh = false;
		synctcp_pcwnd_hold(&m->hold, snd_nxt);
		synctcp_mixreact_apply(&m->react, SYNCTCP_MIXREACT_MUL_50, w,
				       clamp, SYNCTCP_PCWND_KEEP_HALF);
	}
	if (m->fresh) {
		u8 a = synctcp_mixreact_action_of(m->detect.trend,
						  m->detect.region);
		u32 keep_min = 0;

		m->fresh = false;
		if (best) {
			a = synctcp_mix_best_action(a);
			if (synctcp_mixreact_is_decrease(a))
				a = synctcp_mix_best_decrease(m, a, may, snd_nxt,
							      srtt_us,
							      &keep_min);
		}
		synctcp_mixreact_apply(&m->react, a, w, clamp, keep_min);
	}
	if (synctcp_mixreact_follows_reno(&m->react))
		return true;
	if (cwnd_limited)
		synctcp_mixreact_grow_by(&m->react, acked, w, clamp,
					 best ? synctcp_mix_room(m) : 1024);
	return false;
}

/*
 * Reno's reductions (loss recovery, RTO, ECN's CWR) end the decision in
 * force; a loss makes max qdelay trusted; an RTO restarts the average; an
 * epoch's drain gives back half the window it took (mode.h).
 */
void synctcp_mix_on_loss(struct synctcp_mix *m, bool rto)
{
	if (rto)
		synctcp_syncmix_restart(&m->detect);
	synctcp_qdelay_on_loss(&m->flow.q);
	synctcp_mix_on_cwr(m);
	if (synctcp_flow_best(&m->flow))
		synctcp_mode_loss(&m->flow.mode);
}

void synctcp_mix_on_cwr(struct synctcp_mix *m)
{
	synctcp_mixreact_reset(&m->react);
	m->fresh = false;
}

/* After an idle period the average is as out of date as after an RTO. */
void synctcp_mix_restart(struct synctcp_mix *m)
{
	synctcp_syncmix_restart(&m->detect);
	synctcp_mix_on_cwr(m);
}
