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
 *
 * Variant "paper" is the dissertation's: halve on a signal, Reno on a
 * loss.  Variant "best" cuts by the forward queue's share of the round
 * trip (synctcp_pcwnd_keep()), and a loss recovery and a delay cut of the
 * same round trip cost one reduction, in either order.
 */
#ifndef SYNCTCP_SYNC_CC_H
#define SYNCTCP_SYNC_CC_H

#include "flow.h"
#include "pcwnd.h"

struct synctcp_sync {
	struct synctcp_flow flow;	/* OTT, queuing delay, reverse follow */
	struct synctcp_pcwnd react;	/* SyncPcwnd */
	bool congested;			/* verdict of the last sample */
	bool signal;			/* this ACK's sample signalled */
};

void synctcp_sync_init(struct synctcp_sync *s, u8 variant);
u32 synctcp_sync_on_ack(struct synctcp_sync *s, const struct synctcp_ack *a,
			unsigned int mode, u32 thresh_pct);
enum synctcp_pcwnd_action synctcp_sync_react(struct synctcp_sync *s,
					     u32 snd_una, u32 snd_nxt,
					     u32 srtt_us,
					     struct synctcp_cwnd *w);
u32 synctcp_sync_ssthresh(struct synctcp_sync *s, u32 snd_una, u32 cwnd);
void synctcp_sync_on_loss(struct synctcp_sync *s, u32 snd_nxt);

#endif /* SYNCTCP_SYNC_CC_H */
