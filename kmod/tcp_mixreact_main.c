// SPDX-License-Identifier: GPL-2.0
/*
 * Sync-TCP(MixReact): congestion control from the trend of the averaged
 * one-way queuing delay, after M. C. Weigle, "Investigating the Use of
 * Synchronized Clocks in TCP Congestion Control", PhD dissertation,
 * UNC Chapel Hill, 2003, sections 3.5.5 (SyncMix) and 3.6.2 (SyncMixReact).
 *
 * Sync-TCP(MixReact) in a nutshell:
 *
 *   qdelay = OTT - min OTT;  max qdelay = max OTT - min OTT    every ACK
 *   avg    = (1 - w) avg + w qdelay,  w = 1, 1, 3/4, 1/2, 1/4, 1/8 ...
 *   trend  = medians m0 < m2 (increasing) or m0 > m2 (decreasing) of the
 *            oldest and newest three of the last nine averages
 *   region = avg / max qdelay in quarters (before the first loss and while
 *            max qdelay < 10 ms: |qdelay change| / larger qdelay)
 *   every three samples, (trend, region) picks AIMD's alpha or beta:
 *
 *              0-25%        25-50%       50-75%       75-100%
 *   increasing +1 seg/RTT   cwnd x 0.9   cwnd x 0.75  cwnd x 0.5
 *   decreasing +50%/RTT     +25%/RTT     +10%/RTT     no change
 *
 * Decreases are made at once, increases are spread over the ACKs of an
 * RTT.  Until nine averages exist the flow is Reno (slow start); losses,
 * RTOs and ECN are handled as Reno handles them.  The averages restart
 * after every RTO.
 *
 * The OTT source and its pipeline are tcp_sync's (core/flow.c): RFC 7323
 * timestamps (the ACK's TSval against the send time of the newest segment
 * it acknowledges: forward OTT plus a constant offset, with the peer clock
 * rate estimated and required to fit a known rate), else the per-ACK RTT.
 * The per-ACK decisions are kernel-independent cores shared with the
 * user-space tests, fuzzers and bench: core/mixreact_cc.c (this
 * algorithm), over core/syncmix.c (the detector) and core/mixreact.c (the
 * reaction).  This file is the glue: the socket's state in, cwnd out.
 *
 * The state (about 190 bytes) does not fit in ICSK_CA_PRIV_SIZE, so init
 * allocates it, as tcp_cdg does; when that fails the connection is plain
 * Reno and the failure is counted in the alloc_failures parameter.
 *
 * Notable differences from the dissertation (docs/mixreact.md says why):
 *  - Equal medians (m0 == m2) give no new indication: the one in force
 *    stays and nothing is re-applied.  The text leaves this open.
 *  - The pre-loss "percentage difference between the last two queuing
 *    delays" is taken relative to the larger of the two.
 *  - A restart (RTO, idle restart, OTT rebase) empties the window of nine
 *    averages as well as the bootstrap; the text restarts only the weights
 *    and only after an RTO.
 *  - A decrease also sets ssthresh to the new cwnd (as ECN does); cwnd
 *    never goes below 2 segments.
 *  - The three-ACK cadence counts ACKs that yield an OTT sample; a
 *    decision on an ACK on which Linux does not let the module move cwnd
 *    (loss recovery, CWR, duplicate ACKs) is dropped, and after loss
 *    recovery or CWR cwnd grows as Reno's until the next decision.
 *  - The 10 ms pre-loss floor is a module parameter.
 *  - A sample farther from the minimum OTT than 2 srtt + 100 ms is
 *    dropped (64 such in a row restart the estimator: a clock step).  The
 *    dissertation trusts every sample for ever; here one forged or broken
 *    sample could otherwise steer the flow for good.
 *  - With RFC 7323 timestamps, a TSval that jumps (or wraps after a long
 *    idle) against our clock by more than 2 s restarts the OTT base.
 *  - Variant "paper" keeps what the measurement needs on Linux, as
 *    tcp_sync's header lists (newest-segment OTT, held ACKs may not raise
 *    the maximum, implausible samples dropped, the peer's clock rate must
 *    fit a known one); its minimum OTT is of the whole connection.
 *  - Variant "best" (module parameter variant; "paper" is the dissertation's
 *    algorithm; docs/mixreact.md has the figures): Reno until the first
 *    loss (no pre-loss percentage rule), or, while the receiver's window
 *    or the application holds the flow, until its maximum reaches 10 ms
 *    (a held flow may never lose); a decrease at most once per RTT,
 *    keeping at least cwnd * (1 - qdelay / srtt), and a decrease that the
 *    hold blocks keeps cwnd (it does not continue an increase); while the
 *    queue drains, +25% per RTT below a quarter of the maximum, +1 segment
 *    at 25-50%, no growth at 50-75%, the +1 tapered as the queue nears
 *    25% of the maximum as tcp_sync's; the prompt estimator, the two modes
 *    and the base probe, pacing, cwnd following the ACK path's delay
 *    (bounded: see tcp_sync), and the destination's learnt full-queue
 *    delay for a new connection, as tcp_sync.
 */
#include <linux/atomic.h>
#include <linux/inet_diag.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "core/mixreact_cc.h"
#include "glue/glue.h"
#include "glue/pathcache.h"

/* Before the first loss, max qdelay below this (ms) gives no regions. */
static unsigned int preloss_max_ms __read_mostly =
	SYNCTCP_MIX_PRELOSS_MAX_US / USEC_PER_MSEC;

/* OTT source of new connections (enum synctcp_source_mode). */
static unsigned int source_mode __read_mostly = SYNCTCP_SOURCE_AUTO;

/* Algorithm version of new connections (enum synctcp_variant). */
static unsigned int variant __read_mostly = SYNCTCP_VARIANT_BEST;

/* Variant best's competing mode may be entered (core/mode.h). */
static bool compete __read_mostly;

/* Connections that run as Reno because their state could not be allocated. */
static atomic_t mixreact_alloc_failures = ATOMIC_INIT(0);

static int mixreact_preloss_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 1000);
}

static const struct kernel_param_ops mixreact_preloss_ops = {
	.set = mixreact_preloss_set,
	.get = param_get_uint,
};

static int mixreact_failures_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int mixreact_failures_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&mixreact_alloc_failures));
}

static const struct kernel_param_ops mixreact_failures_ops = {
	.set = mixreact_failures_set,
	.get = mixreact_failures_get,
};

module_param_cb(preloss_max_ms, &mixreact_preloss_ops, &preloss_max_ms, 0644);
MODULE_PARM_DESC(preloss_max_ms,
		 "before the first loss, max queuing delay below this gives regions from the qdelay change (0-1000 ms, default 10)");

module_param_cb(source, &synctcp_source_ops, &source_mode, 0644);
MODULE_PARM_DESC(source,
		 "OTT source of new connections: auto (one-way-timestamp option, else RFC 7323 timestamps, else RTT), ts or rtt");

module_param_cb(variant, &synctcp_variant_ops, &variant, 0644);
MODULE_PARM_DESC(variant,
		 "algorithm of new connections: best (default; docs/mixreact.md) or paper (the dissertation's)");

module_param(compete, bool, 0644);
MODULE_PARM_DESC(compete,
		 "new connections of variant best may enter competing mode next to loss-based flows (default N; docs/coexistence.md)");

module_param_cb(alloc_failures, &mixreact_failures_ops, NULL, 0444);
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
struct mixreact {
	struct synctcp_mix *st;		/* NULL: behave as Reno */
	struct synctcp_mixreact_info diag; /* what get_info() reports */
};

/*
 * The header of the telemetry: the OTT source, the clock and the flags,
 * which may change on an ACK without a sample.
 */
static void mixreact_publish_hdr(struct mixreact *ca)
{
	const struct synctcp_mix *st = ca->st;
	struct synctcp_info_hdr h = { .sti_module = SYNCTCP_MOD_MIXREACT };

	synctcp_info_hdr_fill(&h, SYNCTCP_MOD_MIXREACT, &st->flow,
			      synctcp_mixreact_is_decrease(st->react.action));
	WRITE_ONCE(ca->diag.hdr, h);
}

/*
 * Copy the telemetry of the state into the private area, for get_info().
 * Called, under the socket lock, after every change of what it reports.
 */
static void mixreact_publish(struct mixreact *ca)
{
	const struct synctcp_mix *st = ca->st;
	struct synctcp_mixreact_info *d = &ca->diag;
	struct synctcp_info_hdr h = { .sti_module = SYNCTCP_MOD_MIXREACT };

	if (!st) {
		h.sti_flags = SYNCTCP_F_NO_STATE;
		WRITE_ONCE(d->hdr, h);
		WRITE_ONCE(d->mix_flags, SYNCTCP_MIXF_NO_STATE);
		return;
	}
	mixreact_publish_hdr(ca);
	WRITE_ONCE(d->qdelay_avg_us, synctcp_syncmix_avg_us(&st->detect));
	WRITE_ONCE(d->max_qdelay_us, st->flow.q.max_qdelay_us);
	WRITE_ONCE(d->trend, st->detect.trend);
	WRITE_ONCE(d->region, st->detect.region);
	WRITE_ONCE(d->action, st->react.action);
	WRITE_ONCE(d->mix_flags, st->detect.last_flat ? SYNCTCP_MIXF_FLAT : 0);
	WRITE_ONCE(d->increases, (u16)st->react.increases);
	WRITE_ONCE(d->decreases, (u16)st->react.decreases);
}

static void mixreact_init(struct sock *sk)
{
	struct mixreact *ca = inet_csk_ca(sk);
	struct synctcp_mix *st;

	st = kzalloc(sizeof(*st), GFP_NOWAIT | __GFP_NOWARN);
	ca->st = st;
	if (st) {
		synctcp_mix_init(st, READ_ONCE(variant));
		st->flow.mode.compete = READ_ONCE(compete);
		synctcp_flow_start(sk, &st->flow);
	} else {
		atomic_inc(&mixreact_alloc_failures);
	}
	mixreact_publish(ca);
}

static void mixreact_release(struct sock *sk)
{
	struct mixreact *ca = inet_csk_ca(sk);

	kfree(ca->st);
	ca->st = NULL;
}

/* SyncMix: this ACK's queuing delay into the average and its trend. */
static void mixreact_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct mixreact *ca = inet_csk_ca(sk);
	struct synctcp_ack a;
	u32 cwnd;

	if (!ca->st)
		return;
	synctcp_ack_fill(sk, sample, &a);
	synctcp_ack_wall(&ca->st->flow, &a);
	cwnd = synctcp_mix_on_ack(ca->st, &a, READ_ONCE(source_mode),
				  READ_ONCE(preloss_max_ms) * USEC_PER_MSEC);
	cwnd = synctcp_mode_cwnd(&ca->st->flow.mode, a.now_us, cwnd);
	synctcp_follow_set(sk, &a, cwnd);
	/*
	 * Without a sample only the header can change (the source, the
	 * clock rate): the rest moves with samples and decisions.
	 */
	if (ca->st->sampled)
		mixreact_publish(ca);
	else
		mixreact_publish_hdr(ca);
}

/* SyncMixReact: act on a new indication, else continue the one in force. */
static void mixreact_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct mixreact *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct synctcp_cwnd w = {
		.cwnd = tcp_snd_cwnd(tp),
		.ssthresh = tp->snd_ssthresh,
	};
	u32 decisions;
	u8 action;

	if (!ca->st) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->st->flow.mode.draining)	/* an epoch's drain (core/mode.h) */
		return;
	decisions = ca->st->react.increases + ca->st->react.decreases;
	action = ca->st->react.action;
	if (synctcp_mix_cong_avoid(ca->st, tp->snd_una, tp->snd_nxt,
				   tp->srtt_us >> 3, acked,
				   tcp_is_cwnd_limited(sk), tp->snd_cwnd_clamp,
				   &w)) {
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		tcp_snd_cwnd_set(tp, w.cwnd);
		tp->snd_ssthresh = w.ssthresh;
	}
	/* a new decision (an indication, a base probe's halving) */
	if (ca->st->react.increases + ca->st->react.decreases != decisions ||
	    ca->st->react.action != action)
		mixreact_publish(ca);
}

/*
 * Reno's reductions (loss recovery, RTO, ECN's CWR) end the decision in
 * force; a loss makes max qdelay trusted; an RTO restarts the average.
 */
static void mixreact_set_state(struct sock *sk, u8 new_state)
{
	struct mixreact *ca = inet_csk_ca(sk);

	if (!ca->st)
		return;
	switch (new_state) {
	case TCP_CA_Loss:
	case TCP_CA_Recovery:
		synctcp_mix_on_loss(ca->st, new_state == TCP_CA_Loss);
		synctcp_flow_loss(sk, &ca->st->flow);
		break;
	case TCP_CA_CWR:
		synctcp_mix_on_cwr(ca->st);
		break;
	default:
		return;
	}
	mixreact_publish(ca);
}

/* After an idle period the average is as out of date as after an RTO. */
static void mixreact_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct mixreact *ca = inet_csk_ca(sk);

	if (!ca->st || ev != CA_EVENT_CWND_RESTART)
		return;
	synctcp_mix_restart(ca->st);
	mixreact_publish(ca);
}

/*
 * Runs without the socket lock (see struct mixreact): reads only the
 * scalars of the private area, never the state behind ca->st.
 */
static size_t mixreact_get_info(struct sock *sk, u32 ext, int *attr,
				union tcp_cc_info *info)
{
	const struct mixreact *ca = inet_csk_ca(sk);
	const struct synctcp_mixreact_info *d = &ca->diag;
	struct synctcp_mixreact_info *mi = (void *)info;

	BUILD_BUG_ON(sizeof(*mi) > sizeof(*info));
	if (!(ext & (1 << (INET_DIAG_INFO - 1)) ||
	      ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;

	memset(mi, 0, sizeof(*mi));
	mi->hdr = READ_ONCE(d->hdr);
	mi->hdr.sti_module = SYNCTCP_MOD_MIXREACT;
	mi->qdelay_avg_us = READ_ONCE(d->qdelay_avg_us);
	mi->max_qdelay_us = READ_ONCE(d->max_qdelay_us);
	mi->trend = READ_ONCE(d->trend);
	mi->region = READ_ONCE(d->region);
	mi->action = READ_ONCE(d->action);
	mi->mix_flags = READ_ONCE(d->mix_flags);
	mi->increases = READ_ONCE(d->increases);
	mi->decreases = READ_ONCE(d->decreases);
	*attr = SYNCTCP_DIAG_ATTR;
	return sizeof(*mi);
}

static struct tcp_congestion_ops tcp_mixreact __read_mostly = {
	.init		= mixreact_init,
	.release	= mixreact_release,
	.ssthresh	= tcp_reno_ssthresh,
	.cong_avoid	= mixreact_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.set_state	= mixreact_set_state,
	.cwnd_event	= mixreact_cwnd_event,
	.pkts_acked	= mixreact_pkts_acked,
	.get_info	= mixreact_get_info,
	.owner		= THIS_MODULE,
	.name		= "mixreact",
};

static int __init mixreact_register(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct mixreact) > ICSK_CA_PRIV_SIZE);
	err = synctcp_pathcache_register();
	if (err)
		return err;
	err = tcp_register_congestion_control(&tcp_mixreact);
	if (err)
		synctcp_pathcache_unregister();
	return err;
}

static void __exit mixreact_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_mixreact);
	synctcp_pathcache_unregister();
}

module_init(mixreact_register);
module_exit(mixreact_unregister);

MODULE_AUTHOR("synctcp developers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sync-TCP(MixReact): trend of the averaged one-way queuing delay (Weigle 2003)");
MODULE_VERSION("0.2.0");
