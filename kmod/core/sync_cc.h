/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sync-TCP(Pcwnd) per connection: the shared pipeline (flow.h), SyncPQlen
 * (pqlen.h) and SyncPcwnd (pcwnd.h), as tcp_sync runs them on each ACK.
 * Kernel-independent, so that the tests, the fuzzers and the per-ACK bench
 * run the module's own decisions.
 *
 *   pkts_acked:  synctcp_sync_on_ack()    sample, verdict, reverse follow
 *   cong_avoid:  synctcp_sync_react()     cut at most once per RTT, or grow
 *   ssthresh:    synctcp_sync_ssthresh()  Reno's halving (see below)
 *   loss:        synctcp_sync_on_loss()   the detector trusts its maximum
 *   increase:    synctcp_sync_ai_window() Reno's, tapered near the
 *                                         threshold (variant "best")
 *
 * Variant "paper" is the dissertation's: halve on a signal, Reno on a
 * loss.  Variant "best" keeps the queue below its own threshold: the
 * increase tapers towards it, a cut drains the queue to half of it
 * (synctcp_pcwnd_keep() of the excess), a loss recovery and a delay cut of
 * the same round trip cost one reduction, in either order; next to
 * loss-based flows it competes as Reno, and it probes the base now and
 * then (mode.h).  Its detector and its cuts read the standing queue, the
 * smallest queuing delay of the last quarter to half round trip (Copa's
 * standing RTT): a burst that ACK compression sends into the queue and
 * that drains within the round trip is no congestion, and a cut sized by
 * its peak empties the link (reverse-path-full, docs/reverse-path.md).
 */
#ifndef SYNCTCP_SYNC_CC_H
#define SYNCTCP_SYNC_CC_H

#include "flow.h"
#include "pcwnd.h"

/*
 * Variant "best"'s threshold, percent of the maximum queuing delay: the
 * queue it keeps below.  The dissertation's 50% kept weigle-ftp's queue at
 * Reno's once the growth tapers to it (61 against 51 packets; 25%: 24,
 * docs/sync-tcp.md).
 */
#define SYNCTCP_SYNC_BEST_PCT	25U

struct synctcp_sync {
	struct synctcp_flow flow;	/* OTT, queuing delay, reverse follow */
	struct synctcp_pcwnd react;	/* SyncPcwnd */
	u32 floor_us;			/* a cut drains the queue to this */
	u32 stand_cur_us;		/* smallest queuing delay of this ... */
	u32 stand_prev_us;		/* ... and of the last quarter srtt */
	u64 stand_start_us;		/* local time this quarter began */
	bool congested;			/* verdict of the last sample */
	bool signal;			/* this ACK's sample signalled */
	bool probe;			/* a base probe is due (mode.h) */
};

/* Variant "best"'s standing queue: the smaller of the two buckets. */
static inline u32 synctcp_sync_standing_us(const struct synctcp_sync *s)
{
	return min_t(u32, s->stand_cur_us, s->stand_prev_us);
}

void synctcp_sync_init(struct synctcp_sync *s, u8 variant);
u32 synctcp_sync_on_ack(struct synctcp_sync *s, const struct synctcp_ack *a,
			unsigned int mode, u32 thresh_pct);
enum synctcp_pcwnd_action synctcp_sync_react(struct synctcp_sync *s,
					     u32 snd_una, u32 snd_nxt,
					     u32 srtt_us,
					     struct synctcp_cwnd *w);
u32 synctcp_sync_ssthresh(struct synctcp_sync *s, u32 snd_una, u32 cwnd);
void synctcp_sync_on_loss(struct synctcp_sync *s, u32 snd_nxt);
u32 synctcp_sync_ai_window(const struct synctcp_sync *s, u32 cwnd,
			   u32 thresh_pct);

#endif /* SYNCTCP_SYNC_CC_H */
