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
void synctcp_ack_wall(const struct synctcp_flow *f, struct synctcp_ack *a);
void synctcp_follow_set(struct sock *sk, const struct synctcp_ack *a,
			u32 cwnd);
void synctcp_flow_start(struct sock *sk, struct synctcp_flow *f);
void synctcp_flow_loss(const struct sock *sk, const struct synctcp_flow *f);
void synctcp_info_hdr_fill(struct synctcp_info_hdr *h, u8 module,
			   const struct synctcp_flow *f, bool congested);

#endif /* SYNCTCP_GLUE_H */
