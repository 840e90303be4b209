// SPDX-License-Identifier: GPL-2.0
/*
 * Per-ACK cost of each algorithm core against a Reno-equivalent loop.
 *
 * The cores are the files the modules link (kmod/core/), each its own
 * translation unit built with -O2, as the modules build them, and the
 * loops call what the modules' hooks call (core/sync_cc.c,
 * core/mixreact_cc.c), so the path measured is the module's.  One ACK
 * stream, generated before
 * any timing, feeds every algorithm: a flow in congestion avoidance, an
 * ACK every 100 us acknowledging two segments, a 1 kHz peer TS clock, a
 * forward queue that fills from 0 to 60 ms over 3000 ACKs and then drops
 * one packet.  Each algorithm does per ACK what its module does in
 * pkts_acked + cong_avoid (or cong_control), variant best (the sampler,
 * the drain-share cut, the reverse-path compensation), and on the loss
 * what ssthresh/set_state do; "stream" reads the stream and does nothing else,
 * and is subtracted from every other row.  Reno is tcp_reno_cong_avoid()
 * (slow start, then tcp_cong_avoid_ai()), copied from net/ipv4/tcp_cong.c.
 *
 *   bench_ack                 ns/ACK of every loop (best of 5 runs)
 *   bench_ack --only NAME     run NAME's loop once (for valgrind's
 *                             instruction count: see run.sh)
 *   bench_ack --list          the loop names
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcp.h"
#include "mixreact_cc.h"
#include "sync_cc.h"

#include "ack_stream.h"

/* ---- Reno: tcp_reno_cong_avoid() of net/ipv4/tcp_cong.c -------------- */

struct reno {
	u32 cwnd, ssthresh, cnt, clamp;
};

static u32 reno_slow_start(struct reno *t, u32 acked)
{
	u32 cwnd = t->cwnd + acked < t->ssthresh ? t->cwnd + acked : t->ssthresh;

	acked -= cwnd - t->cwnd;
	t->cwnd = cwnd < t->clamp ? cwnd : t->clamp;
	return acked;
}

static void reno_ai(struct reno *t, u32 w, u32 acked)
{
	if (t->cnt >= w) {
		t->cnt = 0;
		t->cwnd++;
	}
	t->cnt += acked;
	if (t->cnt >= w) {
		u32 delta = t->cnt / w;

		t->cnt -= delta * w;
		t->cwnd += delta;
	}
	t->cwnd = t->cwnd < t->clamp ? t->cwnd : t->clamp;
}

static void reno_cong_avoid(struct reno *t, u32 acked)
{
	if (t->cwnd < t->ssthresh) {
		acked = reno_slow_start(t, acked);
		if (!acked)
			return;
	}
	reno_ai(t, t->cwnd, acked);
}

static void reno_loss(struct reno *t)
{
	t->ssthresh = t->cwnd / 2 > 2 ? t->cwnd / 2 : 2;
	t->cwnd = t->ssthresh;
}

/* ---- the loops ------------------------------------------------------ */

__attribute__((noinline)) static void run_stream(void)
{
	u64 s = 0;
	u32 i;

	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];

		s += a->now_us + a->tsval + a->rtt_us + a->snd_una + a->srtt_us +
		     a->acked + a->loss;
	}
	sink = s;
}

__attribute__((noinline)) static void run_reno(void)
{
	struct reno t = { .cwnd = 10, .ssthresh = 100, .clamp = ~0U };
	u32 i;

	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];

		if (a->loss)
			reno_loss(&t);
		reno_cong_avoid(&t, a->acked);
	}
	sink = t.cwnd;
}

/* The ACK as the modules' glue hands it to the cores (synctcp_ack_fill()). */
static void fill_ack(struct synctcp_ack *x, const struct ack_ev *a,
		     const struct reno *t)
{
	*x = (struct synctcp_ack){
		.now_us = a->now_us, .rtt_us = (s32)a->rtt_us,
		.pkts_acked = a->acked, .srtt_us = a->srtt_us,
		.min_rtt_us = 2 * BASE_OTT_US, .tsval = a->tsval,
		.snd_una = a->snd_una, .snd_nxt = a->snd_una + t->cwnd * MSS,
		.cwnd = t->cwnd, .max_flight = t->cwnd, .clamp = t->clamp,
		.ts_ok = 1, .has_tsval = 1, .cwnd_limited = 1, .ca_open = 1,
	};
}

/* tcp_sync, variant best: pkts_acked, cong_avoid, ssthresh + set_state. */
__attribute__((noinline)) static void run_sync(void)
{
	struct synctcp_sync s;
	struct reno t = { .cwnd = 10, .ssthresh = 100, .clamp = ~0U };
	struct synctcp_ack x;
	u32 i;

	synctcp_sync_init(&s, SYNCTCP_VARIANT_BEST);
	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];
		struct synctcp_cwnd w;

		if (a->loss) {
			t.ssthresh = synctcp_sync_ssthresh(&s, a->snd_una, t.cwnd);
			synctcp_sync_on_loss(&s, a->snd_una + t.cwnd * MSS);
			t.cwnd = t.ssthresh;
		}
		fill_ack(&x, a, &t);
		t.cwnd = synctcp_sync_on_ack(&s, &x, SYNCTCP_SOURCE_AUTO, 50);
		w.cwnd = t.cwnd;
		w.ssthresh = t.ssthresh;
		switch (synctcp_sync_react(&s, a->snd_una, x.snd_nxt, a->srtt_us,
					   &w)) {
		case SYNCTCP_PCWND_HALVED:
			t.cwnd = w.cwnd;
			t.ssthresh = w.ssthresh;
			break;
		case SYNCTCP_PCWND_GROW:
			reno_cong_avoid(&t, a->acked);
			break;
		case SYNCTCP_PCWND_HOLD:
			break;
		}
	}
	sink = t.cwnd + s.react.reductions;
}

/* tcp_mixreact, variant best: pkts_acked, cong_avoid, set_state. */
__attribute__((noinline)) static void run_mixreact(void)
{
	struct synctcp_mix m;
	struct reno t = { .cwnd = 10, .ssthresh = 100, .clamp = ~0U };
	struct synctcp_ack x;
	u32 i;

	synctcp_mix_init(&m, SYNCTCP_VARIANT_BEST);
	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];
		struct synctcp_cwnd w;

		if (a->loss) {		/* set_state(Recovery): Reno's cut */
			synctcp_mix_on_loss(&m, false);
			reno_loss(&t);
		}
		fill_ack(&x, a, &t);
		t.cwnd = synctcp_mix_on_ack(&m, &x, SYNCTCP_SOURCE_AUTO, 0);
		w.cwnd = t.cwnd;
		w.ssthresh = t.ssthresh;
		if (synctcp_mix_cong_avoid(&m, a->snd_una, x.snd_nxt, a->srtt_us,
					   a->acked, true, t.clamp, &w)) {
			reno_cong_avoid(&t, a->acked);
			continue;
		}
		t.cwnd = w.cwnd;
		t.ssthresh = w.ssthresh;
	}
	sink = t.cwnd + m.react.decreases;
}

__attribute__((noinline)) static void run_etcp(void)
{
	const struct etcp_params p = { .b = 25, .p0_ppm = 10000 };
	struct etcp e;
	u64 rate = 0;
	u32 i;

	etcp_start(&e, 10, true);
	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];
		struct etcp_ack ack = {
			.acked = a->acked,
			.losses = a->loss,
			.snd_una = a->snd_una,
			.snd_nxt = a->snd_una + etcp_cwnd(&e) * MSS,
			.w_clamp = ~0U,
			.may_grow = true,
		};

		etcp_on_ack(&e, &p, &ack);
		rate += etcp_pacing_rate(&e, MSS, a->srtt_us);
	}
	sink = rate + etcp_cwnd(&e);
}

struct loop {
	const char *name;
	void (*run)(void);
};

static const struct loop loops[] = {
	{ "stream", run_stream },
	{ "reno", run_reno },
	{ "sync", run_sync },
	{ "mixreact", run_mixreact },
	{ "etcp", run_etcp },
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < ARRAY_SIZE(loops); i++)
			printf("%s\n", loops[i].name);
		return 0;
	}
	make_stream();
	if (argc == 3 && !strcmp(argv[1], "--only")) {
		for (i = 0; i < ARRAY_SIZE(loops); i++) {
			if (!strcmp(argv[2], loops[i].name)) {
				loops[i].run();
				printf("%s: %u ACKs\n", loops[i].name, N_ACKS);
				return 0;
			}
		}
		fprintf(stderr, "bench_ack: no loop %s (--list)\n", argv[2]);
		return 2;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: bench_ack [--list | --only NAME]\n");
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(loops); i++) {
		double best = 1e9;
		int k;

		for (k = 0; k < 5; k++) {
			double t0 = seconds(), t;

			loops[i].run();
			t = seconds() - t0;
			best = t < best ? t : best;
		}
		printf("%s %.2f\n", loops[i].name, best * 1e9 / N_ACKS);
	}
	return 0;
}
