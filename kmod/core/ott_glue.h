/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-ACK OTT sampling glue of the Sync-TCP modules (kernel only).
 *
 * Every module does the same first step on an ACK, before its own
 * detector and reaction:
 *
 *   init:       the sampler and the estimator       synctcp_ott_init()
 *   first ACK:  pick the connection's OTT source    synctcp_choose_source()
 *   every ACK:  OTT sample (option | TS | RTT)  ->  synctcp_ack_qdelay()
 *               -> queuing-delay estimator (core/ott.c)
 *
 * It reads struct tcp_sock, so it cannot live in the kernel-independent
 * core; the pieces it calls (core/ott.c) are the tested ones.  A module
 * includes this header and the core .c files, and exposes the OTT source
 * choice as its own "source" parameter:
 *
 *   static unsigned int source_mode __read_mostly = SYNCTCP_SOURCE_AUTO;
 *   module_param_cb(source, &synctcp_source_ops, &source_mode, 0644);
 */
#ifndef SYNCTCP_OTT_GLUE_H
#define SYNCTCP_OTT_GLUE_H

#ifndef __KERNEL__
#error "ott_glue.h is kernel-only; the unit tests use core/ott.h"
#endif

#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <net/tcp.h>

#include "ott.h"
#include "revcomp.h"
#include "pathcache.h"

/*
 * Which OTT sources a connection may use (module parameter "source").  The
 * one-way-timestamp option exists only in kernels with the tcp_option/
 * patches (TCP_OWTS_API); elsewhere "auto" starts at RFC 7323 timestamps.
 */
enum synctcp_source_mode {
	SYNCTCP_SOURCE_AUTO,	/* option, else timestamps, else RTT */
	SYNCTCP_SOURCE_RTT,	/* always RTT (for comparison runs) */
	SYNCTCP_SOURCE_TS,	/* timestamps even when the option is there */
};

static const char * const synctcp_source_names[] = {
	[SYNCTCP_SOURCE_AUTO] = "auto",
	[SYNCTCP_SOURCE_RTT] = "rtt",
	[SYNCTCP_SOURCE_TS] = "ts",
};

/*
 * The kernel_param_ops NAME_ops of a parameter that takes one of the
 * strings of NAME_names[] and holds its index, an unsigned int kp->arg
 * points to.
 */
#define SYNCTCP_NAMED_PARAM_OPS(name)					\
static int name##_set(const char *val, const struct kernel_param *kp)	\
{									\
	int i = sysfs_match_string(name##_names, val);			\
									\
	if (i < 0)							\
		return -EINVAL;						\
	WRITE_ONCE(*(unsigned int *)kp->arg, i);			\
	return 0;							\
}									\
									\
static int name##_get(char *buf, const struct kernel_param *kp)	\
{									\
	return sysfs_emit(buf, "%s\n",					\
			  name##_names[READ_ONCE(*(unsigned int *)kp->arg)]); \
}									\
									\
static const struct kernel_param_ops name##_ops = {			\
	.set = name##_set,						\
	.get = name##_get,						\
}

SYNCTCP_NAMED_PARAM_OPS(synctcp_source);

/*
 * Which version of the algorithm new connections run (module parameter
 * "variant"): "best", the default, is the one measured best here, each of
 * its departures from the dissertation listed in the module's header and
 * in docs; "paper" is the dissertation's algorithm as written, for runs
 * that reproduce it.
 */
enum synctcp_variant {
	SYNCTCP_VARIANT_BEST,
	SYNCTCP_VARIANT_PAPER,
};

static const char * const synctcp_variant_names[] = {
	[SYNCTCP_VARIANT_BEST] = "best",
	[SYNCTCP_VARIANT_PAPER] = "paper",
};

SYNCTCP_NAMED_PARAM_OPS(synctcp_variant);

/*
 * Pacing (variant "best"): Linux's internal pacing at 120% of cwnd / srtt
 * (200% in slow start), as BBR requests it, without the fq qdisc.  A flow
 * whose ACKs were bunched by a queue on the reverse path otherwise sends
 * each bunch as a burst, which queues behind itself at the bottleneck:
 * each of its packets then measures a queuing delay that the average
 * queue does not have, and the detector cuts on it (docs/reverse-path.md).
 */
static inline void synctcp_request_pacing(struct sock *sk)
{
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

/* The exact forward OTT this ACK echoes, if the option is in use. */
static inline bool synctcp_owts_ott(const struct tcp_sock *tp, s64 *ott_us)
{
#ifdef TCP_OWTS_API
	s32 ott;

	if (tcp_owts_ok(tp) && tcp_owts_fwd_ott(tp, &ott)) {
		*ott_us = ott;
		return true;
	}
#endif
	return false;
}

/*
 * The connection's OTT source, picked on its first ACK.  The option is
 * taken only when that ACK echoes an OTT: a peer that negotiates it and
 * then does not send it gets timestamps instead.
 */
static inline u8 synctcp_choose_source(const struct tcp_sock *tp,
				       unsigned int mode)
{
	s64 ott_us;

	if (mode == SYNCTCP_SOURCE_RTT)
		return SYNCTCP_SRC_RTT;
	if (mode == SYNCTCP_SOURCE_AUTO && synctcp_owts_ott(tp, &ott_us))
		return SYNCTCP_SRC_OPTION;
	if (tp->rx_opt.tstamp_ok)
		return SYNCTCP_SRC_TS;
	return SYNCTCP_SRC_RTT;
}

/*
 * A fresh sampler and estimator.  On a connection that has just been
 * established (nothing but the SYN of ours acknowledged yet) the segment
 * being processed is the handshake's SYN-ACK or ACK: its TSval and arrival time
 * start the estimation of the peer's clock rate, so that the first data
 * ACK, a round trip later, can already give a sample.  Later (a switch of
 * algorithm on a running connection) the last TSval may be old: no seed.
 */
static inline void synctcp_ott_init(const struct tcp_sock *tp,
				    struct synctcp_tsclock *clock,
				    struct synctcp_qdelay *q)
{
	synctcp_tsclock_init(clock);
	synctcp_qdelay_reset(q);
	if (tp->rx_opt.tstamp_ok && tp->rx_opt.saw_tstamp &&
	    tp->bytes_acked <= 1 && !tp->data_segs_out)
		synctcp_tsclock_seed(clock, tp->rx_opt.rcv_tsval,
				     (u32)tp->tcp_mstamp);
}

/*
 * One OTT sample from this ACK, if it yields one.
 *
 * The option echoes the OTT of the last segment the peer received, which
 * is as fresh on a duplicate ACK as on any other: every ACK with it counts.
 *
 * With timestamps the ACK's TSval (when the peer sent it) is set against
 * the time we sent the newest segment it acknowledges, cumulatively or by
 * SACK: now minus the ACK's RTT sample.  An ACK without an RTT sample (a
 * duplicate that SACKs nothing new) gives none.  The TSecr is not used: it
 * echoes the oldest segment the ACK covers (RFC 7323, section 4.3), so it
 * would count the peer's wait for the next segment as forward delay, and
 * on a SACK-only ACK the time since the hole.
 *
 * Return: SKIP when there is none; REBASED when the sampler moved to a
 * new base (the estimator must be reset before *ott_us is used).
 */
static inline enum synctcp_ott_result
synctcp_ack_ott(const struct tcp_sock *tp, struct synctcp_tsclock *clock,
		u8 source, const struct ack_sample *sample, s64 *ott_us)
{
	switch (source) {
	case SYNCTCP_SRC_OPTION:
		return synctcp_owts_ott(tp, ott_us) ? SYNCTCP_OTT_OK :
						      SYNCTCP_OTT_SKIP;
	case SYNCTCP_SRC_TS:
		if (!tp->rx_opt.saw_tstamp || sample->rtt_us < 0)
			return SYNCTCP_OTT_SKIP;
		return synctcp_ott_ts_sample(clock, tp->rx_opt.rcv_tsval,
					     (u32)tp->tcp_mstamp,
					     (u32)sample->rtt_us, ott_us);
	case SYNCTCP_SRC_RTT:
		if (sample->rtt_us <= 0)
			return SYNCTCP_OTT_SKIP;
		*ott_us = sample->rtt_us;
		return SYNCTCP_OTT_OK;
	default:
		return SYNCTCP_OTT_SKIP;
	}
}

/**
 * synctcp_ack_qdelay - feed this ACK's OTT sample to the estimator
 * @tp: the connection
 * @sample: the ACK's sample, as pkts_acked() gets it
 * @mode: enum synctcp_source_mode for a connection without a source yet
 * @clock: the connection's RFC 7323 OTT sampler
 * @q: the connection's queuing-delay estimator
 * @source: the connection's enum synctcp_ott_source (NONE until chosen)
 *
 * The sample goes through synctcp_qdelay_sample(): one farther from the
 * minimum than twice srtt (plus 100 ms) is dropped, and the minimum ages
 * out, so that no single sample, forged or broken, steers the flow for
 * ever.  An ACK of a single segment may have waited for the peer's
 * delayed-ACK timer: it may not raise the maximum
 * (synctcp_qdelay_sample_held()).
 *
 * Return: SKIP when @q did not change; OK when it took a new sample;
 * REBASED when it was reset and took the first sample of a new base, so
 * that any history measured against the old base must be dropped too.
 */
static inline enum synctcp_ott_result
synctcp_ack_qdelay(const struct tcp_sock *tp, const struct ack_sample *sample,
		   unsigned int mode, struct synctcp_tsclock *clock,
		   struct synctcp_qdelay *q, u8 *source)
{
	enum synctcp_ott_result res, qres;
	s64 ott_us;
	bool held;

	if (*source == SYNCTCP_SRC_NONE)
		*source = synctcp_choose_source(tp, mode);
	res = synctcp_ack_ott(tp, clock, *source, sample, &ott_us);
	if (res == SYNCTCP_OTT_SKIP)
		return res;
	/* (an estimator without samples keeps what it inherited) */
	if (res == SYNCTCP_OTT_REBASED && synctcp_qdelay_valid(q))
		synctcp_qdelay_reset(q);
	/* After a reset the sample is always taken: res stays REBASED. */
	held = *source != SYNCTCP_SRC_OPTION && sample->pkts_acked == 1;
	qres = synctcp_qdelay_sample_held(q, ott_us, tp->tcp_mstamp,
					  synctcp_qdelay_bound_us(tp->srtt_us >> 3),
					  held && res != SYNCTCP_OTT_REBASED);
	return qres == SYNCTCP_OTT_OK ? res : qres;
}

/**
 * synctcp_follow_reverse - cwnd follows the delay of the ACK path
 * @sk: the connection
 * @r: its reverse-path compensation state (core/revcomp.h)
 * @q: its estimator, which has just taken this ACK's OTT sample
 * @rtt_us: this ACK's RTT sample (> 0)
 * @restart: the sample is the first one, or on a new base
 *
 * The ACK's way back is its RTT sample minus its OTT sample; when that
 * changes, cwnd changes so that cwnd / RTT does not (variant "best"), and
 * only while Linux lets the module move cwnd (TCP_CA_Open).
 */
static inline void synctcp_follow_reverse(struct sock *sk,
					  struct synctcp_revcomp *r,
					  const struct synctcp_qdelay *q,
					  s32 rtt_us, bool restart)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 rev = (u32)rtt_us - (u32)(q->min_ott_us + q->qdelay_us);
	u32 cwnd = tcp_snd_cwnd(tp);
	s32 segs;

	if (restart) {
		synctcp_revcomp_restart(r, rev);
		return;
	}
	segs = synctcp_revcomp_update(r, rev, cwnd, rtt_us,
				      inet_csk(sk)->icsk_ca_state ==
				      TCP_CA_Open);
	if (segs)
		tcp_snd_cwnd_set(tp, clamp_t(s64, (s64)cwnd + segs, 2,
					     tp->snd_cwnd_clamp));
}

/*
 * Variant "best" at init: pacing, and the full-queue delay an earlier
 * connection to the destination learnt (pathcache.h).
 */
static inline void synctcp_best_init(struct sock *sk, struct synctcp_qdelay *q)
{
	synctcp_request_pacing(sk);
	synctcp_qdelay_inherit(q, synctcp_path_lookup(sk));
}

/* Variant "best" on a loss: keep the full-queue delay for the next ones. */
static inline void synctcp_best_on_loss(const struct sock *sk,
					const struct synctcp_qdelay *q)
{
	if (q->loss_seen && synctcp_qdelay_valid(q))
		synctcp_path_store(sk, q->max_qdelay_us);
}

#endif /* SYNCTCP_OTT_GLUE_H */
