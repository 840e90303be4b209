/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sync-TCP(MixReact) per connection: the shared pipeline (flow.h), SyncMix
 * (syncmix.h) and SyncMixReact (mixreact.h), as tcp_mixreact runs them on
 * each ACK.  Kernel-independent, so that the tests, the fuzzers and the
 * per-ACK bench run the module's own decisions.
 *
 *   pkts_acked:  synctcp_mix_on_ack()      sample, indication, reverse follow
 *   cong_avoid:  synctcp_mix_cong_avoid()  act on a new indication, or
 *                                          continue the one in force
 *   set_state:   synctcp_mix_on_loss(), synctcp_mix_on_cwr()
 *   cwnd_event:  synctcp_mix_restart()     after an idle
 *
 * Variant "best" differs from the dissertation's MixReact ("paper") as
 * tcp_mixreact's header lists: Reno until the first loss, a decrease at
 * most once per round trip and never deeper than the forward queue's
 * share of it (a decrease the hold blocks keeps cwnd, it does not continue
 * an increase), softer increases while the queue drains and increases that
 * taper as it nears a quarter of the maximum, cwnd that follows the ACK
 * path's delay, Reno next to loss-based flows and base probes (mode.h).
 */
#ifndef SYNCTCP_MIXREACT_CC_H
#define SYNCTCP_MIXREACT_CC_H

#include "flow.h"
#include "mixreact.h"
#include "pcwnd.h"
#include "syncmix.h"

struct synctcp_mix {
	struct synctcp_flow flow;	/* OTT, queuing delay, reverse follow */
	struct synctcp_syncmix detect;	/* SyncMix */
	struct synctcp_mixreact react;	/* SyncMixReact */
	struct synctcp_pcwnd hold;	/* once per RTT, as SyncPcwnd's */
	bool fresh;			/* this ACK brought a new indication */
	bool sampled;			/* this ACK gave an OTT sample */
	bool probe;			/* a base probe is due (mode.h) */
};

void synctcp_mix_init(struct synctcp_mix *m, u8 variant);
u32 synctcp_mix_on_ack(struct synctcp_mix *m, const struct synctcp_ack *a,
		       unsigned int mode, u32 preloss_max_us);
bool synctcp_mix_cong_avoid(struct synctcp_mix *m, u32 snd_una, u32 snd_nxt,
			    u32 srtt_us, u32 acked, bool cwnd_limited,
			    u32 clamp, struct synctcp_cwnd *w);
u8 synctcp_mix_best_action(u8 a);
void synctcp_mix_on_loss(struct synctcp_mix *m, bool rto);
void synctcp_mix_on_cwr(struct synctcp_mix *m);
void synctcp_mix_restart(struct synctcp_mix *m);

#endif /* SYNCTCP_MIXREACT_CC_H */
