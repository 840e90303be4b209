/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel side of the Sync-TCP modules' shared pipeline (core/flow.h):
 * what the cores need from a socket and an ACK, and the module parameters
 * both modules take.  Declarations only; glue.c has the code.
 */
#ifndef SYNCTCP_GLUE_H
#define SYNCTCP_GLUE_H

#include <linux/moduleparam.h>
#include <net/tcp.h>

#include "../core/flow.h"
#include "../core/synctcp_info.h"

/* "source" (auto, rtt, ts) and "variant" (best, paper) parameters. */
extern const struct kernel_param_ops synctcp_source_ops;
extern const struct kernel_param_ops synctcp_variant_ops;

u32 synctcp_min_rtt_us(const struct tcp_sock *tp);
void synctcp_ack_fill(const struct sock *sk, const struct ack_sample *sample,
		      struct synctcp_ack *a);
void synctcp_follow_set(struct sock *sk, const struct synctcp_ack *a,
			u32 cwnd);
void synctcp_flow_start(struct sock *sk, struct synctcp_flow *f);
void synctcp_flow_loss(const struct sock *sk, const struct synctcp_flow *f);
void synctcp_info_hdr_fill(struct synctcp_info_hdr *h, u8 module,
			   const struct synctcp_flow *f, bool congested);

/**
 * synctcp_ack_wall - the wall clock for competing mode's drains (core/mode.h)
 * @f: the connection's pipeline
 * @a: the ACK, filled by synctcp_ack_fill()
 *
 * CLOCK_REALTIME, the clock Sync-TCP's hosts share, read only in competing
 * mode and by its candidates (inline: on every other ACK a test of two bits).
 */
static inline void synctcp_ack_wall(const struct synctcp_flow *f,
				    struct synctcp_ack *a)
{
	if (f->mode.competing || f->mode.candidate)
		a->wall_ns = ktime_get_real_ns();
}

#endif /* SYNCTCP_GLUE_H */
