/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The synthetic ACK stream both benches feed every algorithm (bench_ack.c:
 * the cores' loops, bench_kernel.c: the congestion-control modules' hooks):
 * a flow in congestion avoidance, an ACK every 100 us acknowledging two
 * segments, a 1 kHz peer TS clock, a forward queue that fills from 0 to
 * 60 ms over 3000 ACKs and then drops one packet.  Generated before any
 * timing.  Include after the u32/u64 types.
 */
#ifndef BENCH_ACK_STREAM_H
#define BENCH_ACK_STREAM_H

#include <stdio.h>
#include <stdlib.h>

#define N_ACKS		1000000U
#define ACK_GAP_US	100U
#define MSS		1448U
#define BASE_OTT_US	25000U
#define FILL_ACKS	3000U
#define FULL_QUEUE_US	60000U

struct ack_ev {
	u64 now_us;		/* our clock */
	u32 tsval;		/* peer's TS clock, 1 kHz */
	u32 rtt_us;		/* now_us minus when the newest segment left */
	u32 snd_una;
	u32 srtt_us;
	u8 acked;		/* segments */
	u8 loss;		/* a segment was lost before this ACK */
};

static struct ack_ev *stream;
static volatile u64 sink;

static void make_stream(void)
{
	u32 i, una = 1;

	stream = calloc(N_ACKS, sizeof(*stream));
	if (!stream) {
		perror("bench_ack: calloc");
		exit(1);
	}
	for (i = 0; i < N_ACKS; i++) {
		u32 now = 1000000 + i * ACK_GAP_US;
		u32 q = (u32)((u64)(i % FILL_ACKS) * FULL_QUEUE_US / FILL_ACKS);
		u32 sent = now - 2 * BASE_OTT_US - q;

		una += 2 * MSS;
		stream[i] = (struct ack_ev){
			.now_us = now,
			/* the peer's clock: 1 kHz, 7 s ahead of ours */
			.tsval = (sent + BASE_OTT_US + q) / 1000 + 7000,
			.rtt_us = now - sent,
			.snd_una = una,
			.srtt_us = 2 * BASE_OTT_US + q,
			.acked = 2,
			.loss = i % FILL_ACKS == FILL_ACKS - 1,
		};
	}
}

#endif /* BENCH_ACK_STREAM_H */
