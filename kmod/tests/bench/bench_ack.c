// SPDX-License-Identifier: GPL-2.0
/*
 * Per-ACK cost of each algorithm core against a Reno-equivalent loop.
 *
 * The cores are the files the modules compile (kmod/core/), included in
 * one translation unit and built with -O2, as the modules build them.  One ACK stream, generated before
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

/* one translation unit, as each module includes its cores (tcp_sync.c) */
#include "ott.c"
#include "pqlen.c"
#include "pcwnd.c"
#include "syncmix.c"
#include "mixreact.c"
#include "revcomp.c"
#include "etcp.c"

#define N_ACKS		1000000U
#define ACK_GAP_US	100U
#define MSS		1448U
#define BASE_OTT_US	25000U
#define FILL_ACKS	3000U
#define FULL_QUEUE_US	60000U

struct ack_ev {
	u32 now_us;		/* our clock */
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

/* The OTT sample of one ACK into the estimator (ott_glue.h, TS source). */
static enum synctcp_ott_result ott_sample(struct synctcp_tsclock *c,
					  struct synctcp_qdelay *q,
					  const struct ack_ev *a)
{
	enum synctcp_ott_result res;
	s64 ott;

	res = synctcp_ott_ts_sample(c, a->tsval, a->now_us, a->rtt_us, &ott);
	if (res == SYNCTCP_OTT_SKIP)
		return res;
	if (res == SYNCTCP_OTT_REBASED && synctcp_qdelay_valid(q))
		synctcp_qdelay_reset(q);
	if (synctcp_qdelay_sample_held(q, ott, a->now_us,
				       synctcp_qdelay_bound_us(a->srtt_us),
				       a->acked == 1 &&
				       res != SYNCTCP_OTT_REBASED) ==
	    SYNCTCP_OTT_SKIP)
		return SYNCTCP_OTT_SKIP;
	return res;
}

/* Variant best's synctcp_follow_reverse() (ott_glue.h) on this ACK. */
static void follow_reverse(struct synctcp_revcomp *rc,
			   const struct synctcp_qdelay *q,
			   const struct ack_ev *a, u32 *cwnd, bool restart)
{
	u32 rev = a->rtt_us - (u32)(q->min_ott_us + q->qdelay_us);
	s32 segs;

	if (restart) {
		synctcp_revcomp_restart(rc, rev);
		return;
	}
	segs = synctcp_revcomp_update(rc, rev, *cwnd, a->rtt_us, true);
	if (segs)
		*cwnd = (u32)max_t(s64, (s64)*cwnd + segs, 2);
}

__attribute__((noinline)) static void run_sync(void)
{
	struct synctcp_tsclock c;
	struct synctcp_qdelay q;
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_revcomp rc = { 0 };
	struct reno t = { .cwnd = 10, .ssthresh = 100, .clamp = ~0U };
	u32 i;

	synctcp_tsclock_init(&c);
	synctcp_qdelay_reset(&q);
	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];
		enum synctcp_ott_result res;
		struct synctcp_cwnd w;
		bool signal = false, first = !synctcp_qdelay_valid(&q);
		u32 keep = SYNCTCP_PCWND_KEEP_HALF;

		if (a->loss) {		/* ssthresh() and set_state(Recovery) */
			synctcp_qdelay_on_loss(&q);
			t.ssthresh = synctcp_pcwnd_ssthresh(&r, a->snd_una, t.cwnd);
			t.cwnd = t.ssthresh;
			synctcp_pcwnd_hold(&r, a->snd_una + t.cwnd * MSS);
		}
		res = ott_sample(&c, &q, a);
		if (res != SYNCTCP_OTT_SKIP) {
			signal = synctcp_pqlen_congested(&q, 50);
			follow_reverse(&rc, &q, a, &t.cwnd,
				       first || res == SYNCTCP_OTT_REBASED);
		}
		if (signal)
			keep = synctcp_pcwnd_keep(q.qdelay_us, a->srtt_us);
		w.cwnd = t.cwnd;
		w.ssthresh = t.ssthresh;
		switch (synctcp_pcwnd_react_by(&r, signal, a->snd_una,
					       a->snd_una + t.cwnd * MSS, &w,
					       keep)) {
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
	sink = t.cwnd + r.reductions;
}

__attribute__((noinline)) static void run_mixreact(void)
{
	struct synctcp_tsclock c;
	struct synctcp_qdelay q;
	struct synctcp_syncmix m;
	struct synctcp_mixreact r;
	struct synctcp_revcomp rc = { 0 };
	struct reno t = { .cwnd = 10, .ssthresh = 100, .clamp = ~0U };
	u32 i, hold_seq = 0;
	bool holding = false;

	synctcp_tsclock_init(&c);
	synctcp_qdelay_reset(&q);
	synctcp_syncmix_init(&m);
	synctcp_mixreact_reset(&r);
	for (i = 0; i < N_ACKS; i++) {
		const struct ack_ev *a = &stream[i];
		enum synctcp_ott_result res;
		struct synctcp_cwnd w;
		bool fresh = false, first = !synctcp_qdelay_valid(&q);

		if (a->loss) {		/* set_state(Recovery): Reno's cut */
			synctcp_qdelay_on_loss(&q);
			synctcp_mixreact_reset(&r);
			reno_loss(&t);
		}
		res = ott_sample(&c, &q, a);
		if (res != SYNCTCP_OTT_SKIP) {
			if (res == SYNCTCP_OTT_REBASED)
				synctcp_syncmix_restart(&m);
			fresh = synctcp_syncmix_update(&m, &q, 0) && q.loss_seen;
			follow_reverse(&rc, &q, a, &t.cwnd,
				       first || res == SYNCTCP_OTT_REBASED);
		}
		w.cwnd = t.cwnd;
		w.ssthresh = t.ssthresh;
		if (fresh) {		/* mixreact_cong_avoid(), variant best */
			u8 act = synctcp_mixreact_action_of(m.trend, m.region);
			u32 keep_min = 0;

			if (synctcp_mixreact_is_decrease(act)) {
				if (holding && before(a->snd_una, hold_seq))
					act = SYNCTCP_MIXREACT_KEEP;
				keep_min = synctcp_pcwnd_keep(q.qdelay_us,
							      a->srtt_us);
				hold_seq = a->snd_una + t.cwnd * MSS;
				holding = true;
			}
			synctcp_mixreact_apply(&r, act, &w, ~0U, keep_min);
		}
		if (synctcp_mixreact_follows_reno(&r)) {
			reno_cong_avoid(&t, a->acked);
			continue;
		}
		synctcp_mixreact_grow(&r, a->acked, &w, ~0U);
		t.cwnd = w.cwnd;
		t.ssthresh = w.ssthresh;
	}
	sink = t.cwnd + r.decreases;
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
