// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel side of the Sync-TCP modules' shared pipeline: module parameter
 * ops, the ACK as the cores see it, pacing and the destination cache at
 * connection start, telemetry headers.
 */
#include <linux/sysfs.h>

#include "glue.h"
#include "pathcache.h"

static const char * const synctcp_source_names[] = {
	[SYNCTCP_SOURCE_AUTO] = "auto",
	[SYNCTCP_SOURCE_RTT] = "rtt",
	[SYNCTCP_SOURCE_TS] = "ts",
};

static const char * const synctcp_variant_names[] = {
	[SYNCTCP_VARIANT_BEST] = "best",
	[SYNCTCP_VARIANT_PAPER] = "paper",
};

/* Set an unsigned int parameter to the index of @val in @names. */
static int synctcp_named_set(const char *val, const struct kernel_param *kp,
			     const char * const *names, size_t n)
{
	int i = __sysfs_match_string(names, n, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, i);
	return 0;
}

static int synctcp_named_get(char *buf, const struct kernel_param *kp,
			     const char * const *names, size_t n)
{
	unsigned int i = READ_ONCE(*(unsigned int *)kp->arg);

	return sysfs_emit(buf, "%s\n", i < n ? names[i] : "?");
}

static int synctcp_source_set(const char *val, const struct kernel_param *kp)
{
	return synctcp_named_set(val, kp, synctcp_source_names,
				 ARRAY_SIZE(synctcp_source_names));
}

static int synctcp_source_get(char *buf, const struct kernel_param *kp)
{
	return synctcp_named_get(buf, kp, synctcp_source_names,
				 ARRAY_SIZE(synctcp_source_names));
}

static int synctcp_variant_set(const char *val, const struct kernel_param *kp)
{
	return synctcp_named_set(val, kp, synctcp_variant_names,
				 ARRAY_SIZE(synctcp_variant_names));
}

static int synctcp_variant_get(char *buf, const struct kernel_param *kp)
{
	return synctcp_named_get(buf, kp, synctcp_variant_names,
				 ARRAY_SIZE(synctcp_variant_names));
}

const struct kernel_param_ops synctcp_source_ops = {
	.set = synctcp_source_set,
	.get = synctcp_source_get,
};

const struct kernel_param_ops synctcp_variant_ops = {
	.set = synctcp_variant_set,
	.get = synctcp_variant_get,
};

/* The connection's base round trip (us), 0 while it has none. */
u32 synctcp_min_rtt_us(const struct tcp_sock *tp)
{
	u32 min_rtt = tcp_min_rtt(tp);

	return min_rtt == ~0U ? 0 : min_rtt;
}

/**
 * synctcp_ack_fill - this ACK as the cores see it (core/flow.h)
 * @sk: the connection, under its lock (pkts_acked())
 * @sample: the ACK's sample
 * @a: filled in
 */
void synctcp_ack_fill(const struct sock *sk, const struct ack_sample *sample,
		      struct synctcp_ack *a)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	*a = (struct synctcp_ack){
		.now_us = tp->tcp_mstamp,
		.rtt_us = sample->rtt_us,
		.pkts_acked = sample->pkts_acked,
		.srtt_us = tp->srtt_us >> 3,
		.min_rtt_us = synctcp_min_rtt_us(tp),
		.tsval = tp->rx_opt.rcv_tsval,
		.snd_una = tp->snd_una,
		.snd_nxt = tp->snd_nxt,
		.cwnd = tcp_snd_cwnd(tp),
		.max_flight = tp->max_packets_out,
		.clamp = tp->snd_cwnd_clamp,
		.ts_ok = tp->rx_opt.tstamp_ok,
		.has_tsval = tp->rx_opt.saw_tstamp,
		.cwnd_limited = tcp_is_cwnd_limited(sk),
		.ca_open = inet_csk(sk)->icsk_ca_state == TCP_CA_Open,
	};
#ifdef TCP_OWTS_API
	{
		s32 ott;

		if (tcp_owts_ok(tp) && tcp_owts_fwd_ott(tp, &ott)) {
			a->has_owts = 1;
			a->owts_ott_us = ott;
		}
	}
#endif
}

/**
 * synctcp_follow_set - apply the cwnd the cores returned for this ACK
 * @sk: the connection, under its lock (pkts_acked())
 * @a: the ACK as synctcp_ack_fill() filled it (its cwnd is the one before)
 * @cwnd: the cwnd after the reverse-path compensation (core/revcomp.h)
 *
 * ssthresh follows a fall (synctcp_revcomp_ssthresh()), or slow start
 * would undo it on this ACK.
 */
void synctcp_follow_set(struct sock *sk, const struct synctcp_ack *a,
			u32 cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (cwnd == a->cwnd)
		return;
	tcp_snd_cwnd_set(tp, cwnd);
	tp->snd_ssthresh = synctcp_revcomp_ssthresh(a->cwnd, cwnd,
						    tp->snd_ssthresh);
}

/*
 * Pacing (variant "best"): Linux's internal pacing at 120% of cwnd / srtt
 * (200% in slow start), as BBR requests it, without the fq qdisc.  A flow
 * whose ACKs were bunched by a queue on the reverse path otherwise sends
 * each bunch as a burst, which queues behind itself at the bottleneck:
 * each of its packets then measures a queuing delay that the average
 * queue does not have, and the detector cuts on it (docs/reverse-path.md).
 */
static void synctcp_request_pacing(struct sock *sk)
{
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

/**
 * synctcp_flow_start - a connection starts (the module's init())
 * @sk: the connection
 * @f: its pipeline state, just initialised (synctcp_flow_init())
 *
 * On a connection that has just been established (nothing but the SYN of
 * ours acknowledged yet) the segment being processed is the handshake's
 * SYN-ACK or ACK: its TSval and arrival time start the estimation of the
 * peer's clock rate, so that the first data ACK, a round trip later, can
 * already give a sample.  Later (a switch of algorithm on a running
 * connection) the last TSval may be old: no seed.  Variant "best" paces,
 * and starts from the full-queue delay an earlier connection to the
 * destination learnt (pathcache.h).
 */
void synctcp_flow_start(struct sock *sk, struct synctcp_flow *f)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->rx_opt.tstamp_ok && tp->rx_opt.saw_tstamp &&
	    tp->bytes_acked <= 1 && !tp->data_segs_out)
		synctcp_flow_seed(f, tp->rx_opt.rcv_tsval, tp->tcp_mstamp);
	if (!synctcp_flow_best(f))
		return;
	synctcp_request_pacing(sk);
	synctcp_qdelay_inherit(&f->q, synctcp_path_lookup(sk));
}

/* Loss recovery began: keep the full-queue delay for the next connections. */
void synctcp_flow_loss(const struct sock *sk, const struct synctcp_flow *f)
{
	if (synctcp_flow_best(f) && f->q.loss_seen &&
	    synctcp_qdelay_valid(&f->q))
		synctcp_path_store(sk, f->q.max_qdelay_us,
				   synctcp_flow_tick_us(f));
}

/* The telemetry header both Sync-TCP modules start their records with. */
void synctcp_info_hdr_fill(struct synctcp_info_hdr *h, u8 module,
			   const struct synctcp_flow *f, bool congested)
{
	h->sti_module = module;
	h->sti_source = f->source;
	h->sti_flags = (f->q.loss_seen ? SYNCTCP_F_LOSS_SEEN : 0) |
		       (congested ? SYNCTCP_F_CONGESTED : 0) |
		       (synctcp_tsclock_rate_known(&f->clock) ?
			SYNCTCP_F_RATE_KNOWN : 0) |
		       (f->flags & SYNCTCP_FLOW_TS_UNFIT ? SYNCTCP_F_TS_UNFIT : 0) |
		       (f->mode.competing ? SYNCTCP_F_COMPETING : 0);
	h->sti_peer_clock = f->source == SYNCTCP_SRC_TS ?
			    f->clock.clock_code : 0;
}
