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
 * OTT source (enum synctcp_ott_source, chosen per connection):
 *  - RFC 7323 timestamps (only the sender needs this module): the ACK's
 *    TSval against the time we sent the newest segment it acknowledges
 *    (now - its RTT sample) is that segment's forward OTT plus a constant
 *    offset, which cancels in OTT - min OTT.  The peer's clock rate is
 *    estimated (core/ott.c), provisionally from the handshake and the first
 *    ACKs.  Resolution is the peer's TS clock (1 ms, or 1 us from a Linux
 *    >= 6.7 peer with tcp_usec_ts); an ACK of a lone segment may have
 *    waited for the delayed-ACK timer and may not raise the maximum.
 *  - Without timestamps: the per-ACK RTT sample, qdelay = RTT - min RTT.
 *    Reverse-path queues then count as forward congestion.
 *  - The one-way-timestamp option (tcp_option/, a kernel patch): each ACK
 *    echoes the exact forward OTT of the last segment the peer received,
 *    in microseconds of the hosts' synchronized clocks.  Used when both
 *    ends negotiated it and the kernel has the patch (TCP_OWTS_API); the
 *    "source" parameter can force ts or rtt for comparison runs.
 *
 * Notable differences from the dissertation (docs/sync-tcp.md says why):
 *  - A halving also sets ssthresh to the new cwnd, as an ECN response does,
 *    so that growth resumes in congestion avoidance, not slow start.
 *  - Loss recovery starts the same "once per RTT" hold as a halving, and
 *    a loss detected within the round trip of a halving keeps cwnd
 *    (ssthresh = cwnd, not Reno's cwnd / 2), so a loss and the delay
 *    signal of one episode cost one reduction, in either order.
 *  - The detection threshold is a module parameter (default 50%).
 *  - The minimum OTT is that of the last 30 to 60 s (two 30 s windows), not
 *    of the whole connection, and a sample farther from it than 2 srtt +
 *    100 ms is dropped (64 such in a row restart the estimator: a clock
 *    step).  The dissertation trusts every sample for ever; here one
 *    forged or broken sample could otherwise steer the flow for good.
 *  - With RFC 7323 timestamps, a TSval that jumps (or wraps after a long
 *    idle) against our clock by more than 2 s restarts the OTT base.
 *  - Variant "best" (module parameter variant; "paper" is the dissertation's
 *    algorithm; docs/sync-tcp.md and docs/reverse-path.md have the figures):
 *    pacing at 120% of cwnd / srtt; a cut keeps cwnd * (1 - qdelay / srtt),
 *    between 1/2 and 15/16, not 1/2; cwnd follows the delay of the ACK path
 *    (core/revcomp.h); a new connection starts from the full-queue delay an
 *    earlier one to the destination learnt (core/pathcache.h).  Under a
 *    queue on the ACK path sync kept 0.71 of its goodput, now 0.97-1.00.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>

#include "core/ott.h"
#include "core/ott_glue.h"
#include "core/pqlen.h"
#include "core/pcwnd.h"
#include "core/revcomp.h"
#include "core/synctcp_info.h"

/* The algorithm core is kernel-independent C, shared with the unit tests. */
#include "core/ott.c"
#include "core/pqlen.c"
#include "core/pcwnd.c"
#include "core/revcomp.c"

/* Detection threshold, in percent of the maximum queuing delay (1..100). */
static unsigned int thresh_pct __read_mostly = SYNCTCP_PQLEN_DEFAULT_PCT;

/* OTT source of new connections (enum synctcp_source_mode). */
static unsigned int source_mode __read_mostly = SYNCTCP_SOURCE_AUTO;

/* Algorithm version of new connections (enum synctcp_variant). */
static unsigned int variant __read_mostly = SYNCTCP_VARIANT_BEST;

static int sync_thresh_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 100);
}

static const struct kernel_param_ops sync_thresh_ops = {
	.set = sync_thresh_set,
	.get = param_get_uint,
};

module_param_cb(thresh_pct, &sync_thresh_ops, &thresh_pct, 0644);
MODULE_PARM_DESC(thresh_pct,
		 "congestion when queuing delay > this % of the max seen (1-100, default 50)");

module_param_cb(source, &synctcp_source_ops, &source_mode, 0644);
MODULE_PARM_DESC(source,
		 "OTT source of new connections: auto (one-way-timestamp option, else RFC 7323 timestamps, else RTT), ts or rtt");

module_param_cb(variant, &synctcp_variant_ops, &variant, 0644);
MODULE_PARM_DESC(variant,
		 "algorithm of new connections: best (default; docs/sync-tcp.md) or paper (the dissertation's)");

/* Per-connection state; must fit in ICSK_CA_PRIV_SIZE. */
struct sync {
	struct synctcp_tsclock clock;	/* RFC 7323 OTT sampler */
	struct synctcp_qdelay q;	/* min/max OTT, queuing delay */
	struct synctcp_pcwnd react;	/* SyncPcwnd */
	struct synctcp_revcomp rev;	/* reverse-path compensation */
	u8 source;			/* enum synctcp_ott_source */
	u8 variant;			/* enum synctcp_variant */
	bool congested;			/* verdict of the last sample */
	bool signal;			/* this ACK's sample signalled congestion */
};

static void sync_init(struct sock *sk)
{
	struct sync *ca = inet_csk_ca(sk);

	memset(ca, 0, sizeof(*ca));
	synctcp_ott_init(tcp_sk(sk), &ca->clock, &ca->q);
	ca->variant = READ_ONCE(variant);
	if (ca->variant == SYNCTCP_VARIANT_BEST)
		synctcp_best_init(sk, &ca->q);
}

/* SyncPQlen: queuing delay of this ACK against the largest seen. */
static void sync_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct sync *ca = inet_csk_ca(sk);
	bool first = !synctcp_qdelay_valid(&ca->q);
	enum synctcp_ott_result res;

	ca->signal = false;
	res = synctcp_ack_qdelay(tcp_sk(sk), sample, READ_ONCE(source_mode),
				 &ca->clock, &ca->q, &ca->source);
	if (res == SYNCTCP_OTT_SKIP)
		return;
	ca->congested = synctcp_pqlen_congested(&ca->q, READ_ONCE(thresh_pct));
	ca->signal = ca->congested;
	if (ca->variant == SYNCTCP_VARIANT_BEST && sample->rtt_us > 0 &&
	    ca->source != SYNCTCP_SRC_RTT)
		synctcp_follow_reverse(sk, &ca->rev, &ca->q, sample->rtt_us,
				       first || res == SYNCTCP_OTT_REBASED);
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
	u32 keep = SYNCTCP_PCWND_KEEP_HALF;

	if (ca->signal && ca->variant == SYNCTCP_VARIANT_BEST)
		keep = synctcp_pcwnd_keep(ca->q.qdelay_us, tp->srtt_us >> 3);
	switch (synctcp_pcwnd_react_by(&ca->react, ca->signal, tp->snd_una,
				       tp->snd_nxt, &w, keep)) {
	case SYNCTCP_PCWND_HALVED:
		tcp_snd_cwnd_set(tp, min(w.cwnd, tp->snd_cwnd_clamp));
		tp->snd_ssthresh = w.ssthresh;
		break;
	case SYNCTCP_PCWND_GROW:
		tcp_reno_cong_avoid(sk, ack, acked);
		break;
	case SYNCTCP_PCWND_HOLD:
		break;
	}
	ca->signal = false;
}

/*
 * Reno's cwnd / 2 on a loss, unless our own halving of this round trip
 * already answered the episode the loss belongs to: then once is enough.
 */
static u32 sync_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sync *ca = inet_csk_ca(sk);

	return synctcp_pcwnd_ssthresh(&ca->react, tp->snd_una,
				      tcp_snd_cwnd(tp));
}

/*
 * Loss recovery (fast retransmit or RTO) enables the detector, once the
 * estimator has samples that measured the queue up to the loss; the next
 * connections to the destination start from the maximum (variant "best",
 * core/pathcache.h).
 */
static void sync_set_state(struct sock *sk, u8 new_state)
{
	struct sync *ca = inet_csk_ca(sk);

	if (new_state != TCP_CA_Recovery && new_state != TCP_CA_Loss)
		return;
	synctcp_qdelay_on_loss(&ca->q);
	if (ca->variant == SYNCTCP_VARIANT_BEST)
		synctcp_best_on_loss(sk, &ca->q);
	synctcp_pcwnd_hold(&ca->react, tcp_sk(sk)->snd_nxt);
}

/*
 * Runs without the socket lock (inet_diag, getsockopt(TCP_CC_INFO): RCU
 * only), perhaps while the next algorithm's init() writes over the area:
 * it reads scalars of icsk_ca_priv once each and follows no pointer.
 */
static size_t sync_get_info(struct sock *sk, u32 ext, int *attr,
			    union tcp_cc_info *info)
{
	const struct sync *ca = inet_csk_ca(sk);
	struct synctcp_sync_info *si = (void *)info;
	s64 min_ott, max_ott;
	u8 source;

	BUILD_BUG_ON(sizeof(*si) > sizeof(*info));
	if (!(ext & (1 << (INET_DIAG_INFO - 1)) ||
	      ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;

	memset(si, 0, sizeof(*si));
	source = READ_ONCE(ca->source);
	si->hdr.sti_module = SYNCTCP_MOD_SYNC;
	si->hdr.sti_source = source;
	si->hdr.sti_flags = (READ_ONCE(ca->q.loss_seen) ? SYNCTCP_F_LOSS_SEEN : 0) |
			    (READ_ONCE(ca->congested) ? SYNCTCP_F_CONGESTED : 0) |
			    (synctcp_tsclock_rate_known(&ca->clock) ?
			     SYNCTCP_F_RATE_KNOWN : 0);
	if (source == SYNCTCP_SRC_TS)
		si->hdr.sti_peer_clock =
			synctcp_clock_code(READ_ONCE(ca->clock.peer_hz));
	min_ott = READ_ONCE(ca->q.min_ott_us);
	max_ott = READ_ONCE(ca->q.max_ott_us);
	if (min_ott <= max_ott)
		si->min_ott_us = (s32)clamp_t(s64, min_ott, S32_MIN, S32_MAX);
	si->qdelay_us = READ_ONCE(ca->q.qdelay_us);
	si->max_qdelay_us = READ_ONCE(ca->q.max_qdelay_us);
	si->signals = (u16)READ_ONCE(ca->react.signals);
	si->reductions = (u16)READ_ONCE(ca->react.reductions);
	*attr = SYNCTCP_DIAG_ATTR;
	return sizeof(*si);
}

static struct tcp_congestion_ops tcp_sync __read_mostly = {
	.init		= sync_init,
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
	BUILD_BUG_ON(sizeof(struct sync) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&tcp_sync);
}

static void __exit sync_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_sync);
}

module_init(sync_register);
module_exit(sync_unregister);

MODULE_AUTHOR("synctcp developers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sync-TCP(Pcwnd): OTT-based early congestion detection (Weigle 2003)");
MODULE_VERSION("0.1.0");
