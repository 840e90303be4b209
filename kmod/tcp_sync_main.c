// SPDX-License-Identifier: GPL-2.0
/*
 * Sync-TCP(Pcwnd): delay-based early congestion detection from one-way
 * transit times (OTT), after M. C. Weigle, "Investigating the Use of
 * Synchronized Clocks in TCP Congestion Control", PhD dissertation,
 * UNC Chapel Hill, 2003, sections 3.5.1 (SyncPQlen) and 3.6.1 (SyncPcwnd).
 *
 * Sync-TCP(Pcwnd) in a nutshell:
 *
 *   qdelay     = OTT - min OTT                    on every ACK
 *   max qdelay = max OTT - min OTT                never decreases
 *   congested  = a loss has been seen  &&  qdelay > 50% of max qdelay
 *   congested  -> cwnd = ssthresh = max(cwnd / 2, 2), at most once per RTT
 *   otherwise  -> Reno: slow start / +1 per RTT; loss handling is Reno's
 *
 * The first loss is what makes "max qdelay" the delay of a full queue, so
 * until then the flow is plain Reno.  Afterwards it backs off when the
 * queue it sees is more than half full, well before the queue overflows.
 * Only a loss the estimator measured counts: not one before the first OTT
 * sample or before a rebase.
 *
 * The per-ACK decisions are the kernel-independent cores, shared with the
 * user-space tests, fuzzers and bench: core/sync_cc.c (this algorithm)
 * over core/flow.c (OTT sample -> queuing-delay estimator -> reverse
 * compensation).  This file is the glue: the socket's state in, cwnd out.
 *
 * OTT source (enum synctcp_ott_source, chosen per connection):
 *  - RFC 7323 timestamps (only the sender needs this module): the ACK's
 *    TSval against the time we sent the newest segment it acknowledges
 *    (now - its RTT sample) is that segment's forward OTT plus a constant
 *    offset, which cancels in OTT - min OTT.  The peer's clock rate is
 *    estimated and must be one of the rates TS clocks run at (2, 10, 100,
 *    250, 300, 1000 Hz, 1 MHz) within 1/16; a peer whose clock fits none
 *    is RTT-sourced from then on (telemetry: ts_unfit).  Resolution is the
 *    peer's TS clock; an ACK of a lone segment may have waited for the
 *    delayed-ACK timer and may not raise the maximum.
 *  - Without timestamps: the per-ACK RTT sample, qdelay = RTT - min RTT.
 *    Reverse-path queues then count as forward congestion.
 *  - The one-way-timestamp option (tcp_option/, a kernel patch): each ACK
 *    echoes the exact forward OTT of the last segment the peer received.
 *    Used when both ends negotiated it and the kernel has the patch
 *    (TCP_OWTS_API); the "source" parameter can force ts or rtt.
 *
 * Variant "paper" (module parameter variant) is the dissertation's
 * algorithm: halving on a signal, Reno's halving on a loss, the all-time
 * minimum OTT, no pacing.  It keeps what the measurement needs on Linux,
 * for the reasons given: the OTT of the newest segment an ACK covers, and
 * an ACK of one segment may not raise the maximum (the peer's delayed-ACK
 * hold is in it; docs/ott.md); a sample farther from the minimum than
 * 2 srtt + 100 ms is dropped, 64 in a row restart the estimator, and a
 * TSval that jumps by more than 2 s against our clock restarts the base
 * (a forged or broken sample would otherwise steer the flow for good; no
 * honest run has dropped a sample: docs/reverse-path.md); the peer's clock
 * rate must fit a known one (above).
 *
 * Notable differences of variant "best", the default (docs/sync-tcp.md,
 * docs/coexistence.md and docs/reverse-path.md have the figures):
 *  - The threshold is 25% of the maximum (parameter best_thresh_pct), the
 *    additive increase tapers as the queue nears it ((T - qdelay) / T
 *    segments per RTT, at least 1/16), and a cut drains the queue to half
 *    the threshold: cwnd * (1 - (qdelay - T/2) / srtt), between 1/2 and
 *    15/16, rounded to the nearest segment, ssthresh set to it as an ECN
 *    response does.  Twenty flows that each add a segment per RTT refill a
 *    queue faster than halvings of 3-segment windows drain it: on
 *    weigle-ftp (20 flows each way) the paper's rule left the queue where
 *    Reno's is.  The signal and the cut read the standing queue, the
 *    smallest qdelay of the last quarter to half srtt: bursts that ACK
 *    compression sends into the queue drain within the round trip, and
 *    cuts on their peaks cost weigle-ftp 1.7 points of utilization.
 *  - The prompt estimator (core/ott.h): an ACK of one segment may have
 *    waited for the peer's delayed-ACK timer and only bounds the queuing
 *    delay from above; the maximum rises only to what two prompt samples
 *    in a row agree on; the base is the smallest OTT and rises only when a
 *    30 s window shows a longer path.
 *  - Loss recovery starts the same "once per RTT" hold as a cut, and a
 *    loss within the round trip of a cut keeps cwnd, so a loss and the
 *    delay signal of one episode cost one reduction, in either order.
 *  - Two modes and a base probe (core/mode.h): with compete=1, a flow
 *    whose queue stood at max(T, M/2) or more for a second (4 RTTs) drains
 *    at the next 10 s epoch of the wall clock, as every such flow of its
 *    kind does; if the queue did not empty, loss-based flows hold it, and
 *    the flow reacts to losses only, as Reno, until two such drains in a
 *    row see it empty; a flow whose queue has not dipped for 10 s
 *    (8 RTTs) drains its share once, so that latecomers see the true base.
 *  - Pacing at 120% of cwnd / srtt.
 *  - cwnd follows the delay of the ACK path (core/revcomp.h), measured on
 *    the raw OTT (a held ACK's hold is not a path delay): scaled by
 *    (B + r) / (B + r_applied) per ACK against a filtered reference,
 *    never raised unless cwnd-limited, at most twice the last round's
 *    flight per rise and 4x in all, r bounded by RTT - min RTT; a fall
 *    below ssthresh takes ssthresh with it, or slow start undoes it.
 *  - A new connection starts from the full-queue delay an earlier one to
 *    the same address learnt (glue/pathcache.c, per network namespace).
 *  - A flow that is not cwnd-limited (the receiver's window or the
 *    application holds it) trusts a maximum of 10 ms or more without a
 *    loss, provisionally (core/ott.h): held at a window of 46 segments
 *    while the others kept the queue low, such a flow never lost and never
 *    signalled, and took 4 to 8 times its share (weigle-ftp-full).
 *
 * The state (about 150 bytes) does not fit in ICSK_CA_PRIV_SIZE on every
 * kernel, so init allocates it, as tcp_cdg does; when that fails the
 * connection is plain Reno and the failure is counted in alloc_failures.
 */
#include <linux/atomic.h>
#include <linux/inet_diag.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "core/pqlen.h"
#include "core/sync_cc.h"
#include "glue/glue.h"
#include "glue/pathcache.h"

/* Detection threshold, in percent of the maximum queuing delay (1..100). */
static unsigned int thresh_pct __read_mostly = SYNCTCP_PQLEN_DEFAULT_PCT;

/* Variant "best"'s threshold (1..100). */
static unsigned int best_thresh_pct __read_mostly = SYNCTCP_SYNC_BEST_PCT;

/* OTT source of new connections (enum synctcp_source_mode). */
static unsigned int source_mode __read_mostly = SYNCTCP_SOURCE_AUTO;

/* Algorithm version of new connections (enum synctcp_variant). */
static unsigned int variant __read_mostly = SYNCTCP_VARIANT_BEST;

/* Variant best's competing mode may be entered (core/mode.h). */
static bool compete __read_mostly;

/* Connections that run as Reno because their state could not be allocated. */
static atomic_t sync_alloc_failures = ATOMIC_INIT(0);

static int sync_thresh_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 100);
}

static const struct kernel_param_ops sync_thresh_ops = {
	.set = sync_thresh_set,
	.get = param_get_uint,
};

static int sync_failures_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int sync_failures_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&sync_alloc_failures));
}

static const struct kernel_param_ops sync_failures_ops = {
	.set = sync_failures_set,
	.get = sync_failures_get,
};

module_param_cb(thresh_pct, &sync_thresh_ops, &thresh_pct, 0644);
MODULE_PARM_DESC(thresh_pct,
		 "variant paper: congestion when queuing delay > this % of the max seen (1-100, default 50)");
module_param_cb(best_thresh_pct, &sync_thresh_ops, &best_thresh_pct, 0644);
MODULE_PARM_DESC(best_thresh_pct,
		 "variant best: the queuing delay it keeps below, % of the max seen (1-100, default 25)");

module_param_cb(source, &synctcp_source_ops, &source_mode, 0644);
MODULE_PARM_DESC(source,
		 "OTT source of new connections: auto (one-way-timestamp option, else RFC 7323 timestamps, else RTT), ts or rtt");

module_param_cb(variant, &synctcp_variant_ops, &variant, 0644);
MODULE_PARM_DESC(variant,
		 "algorithm of new connections: best (default; docs/sync-tcp.md) or paper (the dissertation's)");

module_param(compete, bool, 0644);
MODULE_PARM_DESC(compete,
		 "new connections of variant best may enter competing mode next to loss-based flows (default N; docs/coexistence.md)");

module_param_cb(alloc_failures, &sync_failures_ops, NULL, 0444);
MODULE_PARM_DESC(alloc_failures,
		 "connections that ran as Reno because their state could not be allocated (read-only)");

/*
 * What lives in icsk_ca_priv.
 *
 * get_info() runs without the socket lock: inet_diag and
 * getsockopt(TCP_CC_INFO) hold only RCU, so it can run while release()
 * frees st and the next algorithm's init() writes over this area.  It must
 * therefore never follow st: what it reports is a copy of the telemetry,
 * kept here in scalars written with WRITE_ONCE() under the socket lock and
 * read with READ_ONCE(), as tcp_bbr and tcp_dctcp report from their
 * private area.  A racing reader gets stale or mixed figures, never a
 * freed or foreign pointer.
 */
struct sync {
	struct synctcp_sync *st;	/* NULL: behave as Reno */
	struct synctcp_sync_info diag;	/* what get_info() reports */
};

/* Copy the connection's telemetry for get_info(), under the socket lock. */
static void sync_publish(struct sync *ca)
{
	const struct synctcp_sync *st = ca->st;
	struct synctcp_sync_info *d = &ca->diag;
	struct synctcp_info_hdr h = { .sti_module = SYNCTCP_MOD_SYNC };
	const struct synctcp_qdelay *q;

	if (!st) {
		h.sti_flags = SYNCTCP_F_NO_STATE;
		WRITE_ONCE(d->hdr, h);
		return;
	}
	q = &st->flow.q;
	synctcp_info_hdr_fill(&h, SYNCTCP_MOD_SYNC, &st->flow, st->congested);
	WRITE_ONCE(d->hdr, h);
	WRITE_ONCE(d->min_ott_us, synctcp_qdelay_valid(q) ?
		   (s32)clamp_t(s64, q->min_ott_us, S32_MIN, S32_MAX) : 0);
	WRITE_ONCE(d->qdelay_us, q->qdelay_us);
	WRITE_ONCE(d->max_qdelay_us, q->max_qdelay_us);
	WRITE_ONCE(d->signals, st->react.signals);
	WRITE_ONCE(d->reductions, st->react.reductions);
}

static void sync_init(struct sock *sk)
{
	struct sync *ca = inet_csk_ca(sk);
	struct synctcp_sync *st;

	st = kzalloc(sizeof(*st), GFP_NOWAIT | __GFP_NOWARN);
	ca->st = st;
	if (st) {
		synctcp_sync_init(st, READ_ONCE(variant));
		st->flow.mode.compete = READ_ONCE(compete);
		synctcp_flow_start(sk, &st->flow);
	} else {
		atomic_inc(&sync_alloc_failures);
	}
	sync_publish(ca);
}

static void sync_release(struct sock *sk)
{
	struct sync *ca = inet_csk_ca(sk);

	kfree(ca->st);
	ca->st = NULL;
}

/* The threshold of the connection's variant, in percent. */
static u32 sync_thresh(const struct synctcp_sync *st)
{
	return synctcp_flow_best(&st->flow) ? READ_ONCE(best_thresh_pct) :
					       READ_ONCE(thresh_pct);
}

/* SyncPQlen: queuing delay of this ACK against the largest seen. */
static void sync_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct sync *ca = inet_csk_ca(sk);
	struct synctcp_ack a;
	u32 cwnd;

	if (!ca->st)
		return;
	synctcp_ack_fill(sk, sample, &a);
	synctcp_ack_wall(&ca->st->flow, &a);
	cwnd = synctcp_sync_on_ack(ca->st, &a, READ_ONCE(source_mode),
				   sync_thresh(ca->st));
	cwnd = synctcp_mode_cwnd(&ca->st->flow.mode, a.now_us, cwnd);
	synctcp_follow_set(sk, &a, cwnd);
	sync_publish(ca);
}

/*
 * SyncPcwnd: cut on a signal at most once per RTT, else grow as Reno.  The
 * dissertation halves; variant "best" keeps the share of cwnd that drains
 * the forward queue (synctcp_pcwnd_keep()).
 */
static void sync_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct sync *ca = inet_csk_ca(sk);
	struct synctcp_cwnd w = {
		.cwnd = tcp_snd_cwnd(tp),
		.ssthresh = tp->snd_ssthresh,
	};

	if (!ca->st) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->st->flow.mode.draining)	/* an epoch's drain (core/mode.h) */
		return;
	switch (synctcp_sync_react(ca->st, tp->snd_una, tp->snd_nxt,
				   tp->srtt_us >> 3, &w)) {
	case SYNCTCP_PCWND_HALVED:
		tcp_snd_cwnd_set(tp, min(w.cwnd, tp->snd_cwnd_clamp));
		tp->snd_ssthresh = w.ssthresh;
		sync_publish(ca);
		break;
	case SYNCTCP_PCWND_GROW:
		if (!tcp_is_cwnd_limited(sk))
			break;
		if (tcp_in_slow_start(tp)) {
			acked = tcp_slow_start(tp, acked);
			if (!acked)
				break;
		}
		tcp_cong_avoid_ai(tp, synctcp_sync_ai_window(ca->st, tcp_snd_cwnd(tp),
							     sync_thresh(ca->st)),
				  acked);
		break;
	case SYNCTCP_PCWND_HOLD:
		sync_publish(ca);
		break;
	}
}

/* Reno's cwnd / 2 on a loss (variant "best": see synctcp_sync_ssthresh()). */
static u32 sync_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sync *ca = inet_csk_ca(sk);

	if (!ca->st)
		return tcp_reno_ssthresh(sk);
	return synctcp_sync_ssthresh(ca->st, tp->snd_una, tcp_snd_cwnd(tp));
}

/*
 * Loss recovery (fast retransmit or RTO) enables the detector, once the
 * estimator has samples that measured the queue up to the loss; the next
 * connections to the destination start from the maximum (variant "best").
 */
static void sync_set_state(struct sock *sk, u8 new_state)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sync *ca = inet_csk_ca(sk);

	if (!ca->st ||
	    (new_state != TCP_CA_Recovery && new_state != TCP_CA_Loss))
		return;
	synctcp_sync_on_loss(ca->st, tp->snd_nxt);
	synctcp_flow_loss(sk, &ca->st->flow);
	sync_publish(ca);
}

/* Runs without the socket lock: reads the copy in struct sync only. */
static size_t sync_get_info(struct sock *sk, u32 ext, int *attr,
			    union tcp_cc_info *info)
{
	const struct sync *ca = inet_csk_ca(sk);
	const struct synctcp_sync_info *d = &ca->diag;
	struct synctcp_sync_info *si = (void *)info;

	BUILD_BUG_ON(sizeof(*si) > sizeof(*info));
	if (!(ext & (1 << (INET_DIAG_INFO - 1)) ||
	      ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;

	memset(si, 0, sizeof(*si));
	si->hdr = READ_ONCE(d->hdr);
	si->hdr.sti_module = SYNCTCP_MOD_SYNC;
	si->min_ott_us = READ_ONCE(d->min_ott_us);
	si->qdelay_us = READ_ONCE(d->qdelay_us);
	si->max_qdelay_us = READ_ONCE(d->max_qdelay_us);
	si->signals = READ_ONCE(d->signals);
	si->reductions = READ_ONCE(d->reductions);
	*attr = SYNCTCP_DIAG_ATTR;
	return sizeof(*si);
}

static struct tcp_congestion_ops tcp_sync __read_mostly = {
	.init		= sync_init,
	.release	= sync_release,
	.ssthresh	= sync_ssthresh,
	.cong_avoid	= sync_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.set_state	= sync_set_state,
	.pkts_acked	= sync_pkts_acked,
	.get_info	= sync_get_info,
	.owner		= THIS_MODULE,
	.name		= "sync",
};

static int __init sync_register(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct sync) > ICSK_CA_PRIV_SIZE);
	err = synctcp_pathcache_register();
	if (err)
		return err;
	err = tcp_register_congestion_control(&tcp_sync);
	if (err)
		synctcp_pathcache_unregister();
	return err;
}

static void __exit sync_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_sync);
	synctcp_pathcache_unregister();
}

module_init(sync_register);
module_exit(sync_unregister);

MODULE_AUTHOR("synctcp developers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sync-TCP(Pcwnd): OTT-based early congestion detection (Weigle 2003)");
MODULE_VERSION("0.2.0");
