/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-ACK OTT sampling glue of the Sync-TCP modules (kernel only).
 *
 * Every module does the same first step on an ACK, before its own
 * detector and reaction:
 *
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

/* kp->arg points to the module's unsigned int source mode. */
static int synctcp_source_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(synctcp_source_names, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, i);
	return 0;
}

static int synctcp_source_get(char *buf, const struct kernel_param *kp)
{
	unsigned int mode = READ_ONCE(*(unsigned int *)kp->arg);

	return sysfs_emit(buf, "%s\n", synctcp_source_names[mode]);
}

static const struct kernel_param_ops synctcp_source_ops = {
	.set = synctcp_source_set,
	.get = synctcp_source_get,
};

/*
 * Our own TSval clock tick, in microseconds.  Microsecond TSvals came
 * (Linux 6.7) with tp->tcp_usec_ts and TCPI_OPT_USEC_TS: testing the
 * feature rather than the version also covers backports.
 */
static inline u16 synctcp_own_tick_us(const struct tcp_sock *tp)
{
#ifdef TCPI_OPT_USEC_TS
	if (tp->tcp_usec_ts)
		return 1;
#endif
	return USEC_PER_MSEC;
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
 * One OTT sample from this ACK, if it yields one.
 *
 * The option echoes the OTT of the last segment the peer received, which
 * is as fresh on a duplicate ACK as on any other: every ACK with it counts.
 *
 * With timestamps only ACKs that advance snd_una count: an ACK that only
 * SACKs data beyond a hole echoes the TSval of the last in-order segment
 * (RFC 7323, section 4.3), so its TSecr is older than the data it reports
 * and the OTT would be inflated by up to a round trip.  @advanced says
 * whether this ACK moved snd_una.
 *
 * Return: SKIP when there is none; REBASED when the sampler moved to a
 * new base (the estimator must be reset before *ott_us is used).
 */
static inline enum synctcp_ott_result
synctcp_ack_ott(const struct tcp_sock *tp, struct synctcp_tsclock *clock,
		u8 source, bool advanced, const struct ack_sample *sample,
		s64 *ott_us)
{
	switch (source) {
	case SYNCTCP_SRC_OPTION:
		return synctcp_owts_ott(tp, ott_us) ? SYNCTCP_OTT_OK :
						      SYNCTCP_OTT_SKIP;
	case SYNCTCP_SRC_TS:
		if (!tp->rx_opt.saw_tstamp || !advanced)
			return SYNCTCP_OTT_SKIP;
		return synctcp_ott_ts_sample(clock, tp->rx_opt.rcv_tsval,
					     tp->rx_opt.rcv_tsecr,
					     (u32)tp->tcp_mstamp, ott_us);
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
 * @prior_una: snd_una after the previous ACK (set to snd_una in init)
 *
 * The sample goes through synctcp_qdelay_sample(): one farther from the
 * minimum than twice srtt (plus 100 ms) is dropped, and the minimum ages
 * out, so that no single sample, forged or broken, steers the flow for
 * ever.
 *
 * Return: SKIP when @q did not change; OK when it took a new sample;
 * REBASED when it was reset and took the first sample of a new base, so
 * that any history measured against the old base must be dropped too.
 */
static inline enum synctcp_ott_result
synctcp_ack_qdelay(const struct tcp_sock *tp, const struct ack_sample *sample,
		   unsigned int mode, struct synctcp_tsclock *clock,
		   struct synctcp_qdelay *q, u8 *source, u32 *prior_una)
{
	bool advanced = after(tp->snd_una, *prior_una);
	enum synctcp_ott_result res, qres;
	s64 ott_us;

	*prior_una = tp->snd_una;
	if (*source == SYNCTCP_SRC_NONE)
		*source = synctcp_choose_source(tp, mode);
	res = synctcp_ack_ott(tp, clock, *source, advanced, sample, &ott_us);
	if (res == SYNCTCP_OTT_SKIP)
		return res;
	if (res == SYNCTCP_OTT_REBASED)
		synctcp_qdelay_reset(q);
	/* After a reset the sample is always taken: res stays REBASED. */
	qres = synctcp_qdelay_sample(q, ott_us, tp->tcp_mstamp,
				     synctcp_qdelay_bound_us(tp->srtt_us >> 3));
	return qres == SYNCTCP_OTT_OK ? res : qres;
}

#endif /* SYNCTCP_OTT_GLUE_H */
