// SPDX-License-Identifier: GPL-2.0
/*
 * E-TCP: congestion control for small-buffer high-speed networks, after
 * Y. Gu, D. Towsley, C. V. Hollot, H. Zhang, "Congestion Control for Small
 * Buffer High Speed Networks", sections III (the controller) and V-A (start).
 *
 * A Reno-like flow can only grow its window by driving the loss rate p to
 * zero (W* = sqrt(2/p)), and a small fixed buffer gives low loss only at
 * low utilization.  E-TCP's window grows without bound while p stays above
 * a floor p0 that a small buffer sustains at high utilization (p0 = 0.01
 * is 88% utilization of an M/M/1/20 queue).
 *
 * E-TCP in a nutshell:
 *
 *   per packet acknowledged:  W += 1/b
 *   per packet lost:          W -= W / (b (2 + p0 W))    = 4W/(W + 200) for
 *                                                          b = 25, p0 = 0.01
 *   equilibrium:              W* = 2 / (p - p0) packets, for loss rate p > p0
 *   pacing rate:              W * mss / srtt
 *   cwnd:                     W
 *
 * Every lost packet counts, several per ACK and lost retransmissions too:
 * at equilibrium a flow sees p0 W + 2 losses per round trip.
 *
 *   SLOW_START --first loss: W = W/2--> HOLD --all sent before--> E-TCP
 *   (W += 1 per packet acked)          (W frozen)  the loss acked  (the rules)
 *
 * Parameters: b (default 25) and p0_ppm, p0 in parts per million (default
 * 10000, p0 = 0.01).  Stability needs b > the bottleneck buffer in packets
 * (Vinnicombe's condition, section III): the paper uses b = 25 for a
 * 20-packet buffer and b = 1.25 x the buffer for buffers of one BDP.
 * The target utilization is the one at which the bottleneck loses p0.
 *
 * Running on Linux (docs/etcp.md gives the reasons):
 *  - cong_control, as BBR: called on every ACK in every CA state, it owns
 *    cwnd and pacing, so the per-loss rule also governs during Recovery
 *    (no PRR), where a flow at >= 1% loss spends most of its time.
 *  - Losses are the growth of tp->lost since the last ACK: rs->losses
 *    plus packets a timer (RTO, RACK reordering timer) marked lost.
 *  - ssthresh() returns W: Linux's recovery entry does not halve.
 *  - An RTO is no signal of its own: each packet it marks lost counts once
 *    at the next ACK.  Linux sets cwnd to 1 at the timeout; the next ACK
 *    restores cwnd = W, paced.
 *  - ECN: each entry into CWR (ECE, or a local qdisc drop) counts as one
 *    lost packet.  Classic ECN echoes ECE until CWR, so this is at most one
 *    signal per round trip; counting ECE ACKs would count one mark ~W times.
 *  - undo_cwnd: when Linux finds a recovery episode spurious (DSACK,
 *    timestamps, F-RTO) the cuts of that episode are given back.
 *  - Pacing at W/srtt is requested through sk_pacing_status, so internal
 *    TCP pacing works without the fq qdisc.
 *  - Pacing spaces GSO packets, not segments: Linux sizes a GSO packet to
 *    about 1 ms of the pacing rate, whose segments leave back to back, 21
 *    of them at 250 Mbit/s, more than a 20-packet buffer holds.  burst_segs
 *    (default 1) caps the connection's GSO packets (sk_gso_max_segs), so
 *    packets are paced one by one as in the paper; 0 leaves Linux's sizing.
 *    The cap is the route's own limit capped by burst_segs, applied at
 *    init and on every ACK, so a changed burst_segs reaches running
 *    connections and a route change (which resets the limit) is capped
 *    again at the next ACK; GSO packets sent between the two are sized by
 *    Linux (docs/etcp.md: closing that window with sk_pacing_shift cost 2
 *    points of utilization through TCP Small Queues).  The route's limit is
 *    given back when the socket leaves E-TCP.
 *
 * Notable differences from the paper:
 *  - Loss detection is Linux's (SACK scoreboard, RACK-TLP, RTO), not the
 *    paper's per-transmission labels with a 32-packet bitmap in each ACK.
 *  - Deterministic pacing gaps, not exponential ones: section VI reports no
 *    effect on throughput; fairness among few flows may differ.
 *  - cwnd = W bounds the flight as well as the pacing rate (the paper's
 *    sender is purely timer-driven); with srtt the two bounds agree.
 *  - The hold ends when snd_una passes snd_nxt at the first loss, not at
 *    the first ACK for a packet sent after it (retransmissions included),
 *    so lost retransmissions in slow start lengthen it.
 *  - W does not grow while the application or the receive window limits
 *    the flow, so that an idle or rwnd-limited flow cannot inflate W.
 *  - More than ETCP_LOSS_STEPS losses in one ACK are applied in batches,
 *    which never cut less than the per-packet rule (core/etcp.c).
 *  - W stays within [2, 2^24] packets and snd_cwnd_clamp; undo (above)
 *    and ECN (above) are not in the paper.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/version.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>

#include "core/etcp.h"
#include "core/synctcp_info.h"

/* Gain b: W grows one packet per b packets acknowledged. */
static unsigned int etcp_b __read_mostly = ETCP_B_DEFAULT;
/* Loss floor p0, parts per million of a packet loss probability. */
static unsigned int etcp_p0_ppm __read_mostly = ETCP_P0_PPM_DEFAULT;
/* Segments pacing sends back to back at most (0: Linux's GSO sizing). */
static unsigned int etcp_burst_segs __read_mostly = ETCP_BURST_SEGS_DEFAULT;

static int etcp_set_param(const char *val, const struct kernel_param *kp,
			  bool (*valid)(u32))
{
	unsigned int v;
	int err = kstrtouint(val, 0, &v);

	if (err)
		return err;
	if (!valid(v))
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static int etcp_b_set(const char *val, const struct kernel_param *kp)
{
	return etcp_set_param(val, kp, etcp_b_valid);
}

static int etcp_p0_set(const char *val, const struct kernel_param *kp)
{
	return etcp_set_param(val, kp, etcp_p0_ppm_valid);
}

static int etcp_burst_set(const char *val, const struct kernel_param *kp)
{
	return etcp_set_param(val, kp, etcp_burst_segs_valid);
}

static const struct kernel_param_ops etcp_b_ops = {
	.set = etcp_b_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops etcp_p0_ops = {
	.set = etcp_p0_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops etcp_burst_ops = {
	.set = etcp_burst_set,
	.get = param_get_uint,
};

module_param_cb(b, &etcp_b_ops, &etcp_b, 0644);
MODULE_PARM_DESC(b,
		 "gain b: W += 1/b per packet acked; set above the bottleneck buffer in packets (1-1000000, default 25)");
module_param_cb(p0_ppm, &etcp_p0_ops, &etcp_p0_ppm, 0644);
MODULE_PARM_DESC(p0_ppm,
		 "loss floor p0 in parts per million, 0 < p0 < 1 (1-999999, default 10000 = 0.01)");
module_param_cb(burst_segs, &etcp_burst_ops, &etcp_burst_segs, 0644);
MODULE_PARM_DESC(burst_segs,
		 "segments paced out back to back at most; 0: Linux's GSO sizing, about 1 ms of the rate (0-64, default 1)");

/* Per-connection state; must fit in ICSK_CA_PRIV_SIZE. */
struct etcp_ca {
	struct etcp core;	/* W, phase, undo point, counters */
	struct etcp_gso gso;	/* the route's GSO limit and ours */
	u32 lost_seen;		/* tp->lost already counted */
};

static void etcp_params_now(struct etcp_params *p)
{
	p->b = READ_ONCE(etcp_b);
	p->p0_ppm = READ_ONCE(etcp_p0_ppm);
}

/* Pace at W packets per smoothed RTT (1 ms before any RTT sample). */
static void etcp_set_pacing_rate(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct etcp_ca *ca = inet_csk_ca(sk);
	u32 srtt_us = tp->srtt_us ? tp->srtt_us >> 3 : USEC_PER_MSEC;
	u64 rate = etcp_pacing_rate(&ca->core, tp->mss_cache, srtt_us);

	rate = min_t(u64, rate, READ_ONCE(sk->sk_max_pacing_rate));
	if (READ_ONCE(sk->sk_pacing_rate) != rate)
		WRITE_ONCE(sk->sk_pacing_rate, rate);
}

/* GSO packets of at most burst_segs segments: the route's limit, capped. */
static void etcp_cap_burst(struct sock *sk)
{
	struct etcp_ca *ca = inet_csk_ca(sk);
	u32 segs = etcp_gso_limit(&ca->gso, sk->sk_gso_max_segs,
				  READ_ONCE(etcp_burst_segs));

	if (segs != sk->sk_gso_max_segs)
		sk->sk_gso_max_segs = segs;
}

static void etcp_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct etcp_ca *ca = inet_csk_ca(sk);

	etcp_start(&ca->core, tcp_snd_cwnd(tp), tcp_in_slow_start(tp));
	ca->gso = (struct etcp_gso){ 0 };
	ca->lost_seen = tp->lost;
	etcp_set_pacing_rate(sk);
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
	etcp_cap_burst(sk);
}

/* The socket leaves E-TCP: its GSO packets take the route's limit again. */
static void etcp_release(struct sock *sk)
{
	struct etcp_ca *ca = inet_csk_ca(sk);

	if (ca->gso.route_segs && sk->sk_gso_max_segs == ca->gso.applied_segs)
		sk->sk_gso_max_segs = ca->gso.route_segs;
}

/*
 * Is the sender using its window?  Not when the receive window is
 * smaller than W, nor when the application ran out of data (the ACKed
 * packets were sent app-limited and cwnd was not the limit either).
 */
static bool etcp_window_used(const struct sock *sk,
			     const struct rate_sample *rs)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct etcp_ca *ca = inet_csk_ca(sk);

	if ((u64)etcp_cwnd(&ca->core) * tp->mss_cache > tp->snd_wnd)
		return false;
	return !rs->is_app_limited || tcp_is_cwnd_limited(sk);
}

/* Packets marked lost since the last ACK, by this ACK or by a timer. */
static u32 etcp_new_losses(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct etcp_ca *ca = inet_csk_ca(sk);
	u32 losses = tp->lost - ca->lost_seen;

	ca->lost_seen = tp->lost;
	return losses;
}

/* The E-TCP rules on every ACK, in every CA state. */
static void etcp_main(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct etcp_ca *ca = inet_csk_ca(sk);
	struct etcp_params p;
	struct etcp_ack a;
	u32 cwnd;

	/*
	 * The SYN-ACK's ACK runs cong_control before tcp_init_transfer() has
	 * set the initial window and called init(): nothing to do yet.
	 */
	if (!inet_csk(sk)->icsk_ca_initialized)
		return;
	a = (struct etcp_ack){
		.acked = rs->acked_sacked,
		.losses = etcp_new_losses(sk),
		.snd_una = tp->snd_una,
		.snd_nxt = tp->snd_nxt,
		.w_clamp = tp->snd_cwnd_clamp,
		.may_grow = etcp_window_used(sk, rs),
	};
	etcp_params_now(&p);
	etcp_on_ack(&ca->core, &p, &a);
	cwnd = etcp_cwnd(&ca->core);
	tcp_snd_cwnd_set(tp, cwnd);
	if (ca->core.phase != ETCP_SLOW_START)
		tp->snd_ssthresh = cwnd;
	etcp_set_pacing_rate(sk);
	etcp_cap_burst(sk);
}

#if KERNEL_VERSION(6, 10, 0) <= LINUX_VERSION_CODE
static void etcp_cong_control(struct sock *sk, u32 ack, int flag,
			      const struct rate_sample *rs)
{
	etcp_main(sk, rs);
}
#else
static void etcp_cong_control(struct sock *sk, const struct rate_sample *rs)
{
	etcp_main(sk, rs);
}
#endif

/* Entering Recovery does not halve W: losses are counted one by one. */
static u32 etcp_ssthresh(struct sock *sk)
{
	const struct etcp_ca *ca = inet_csk_ca(sk);

	return etcp_cwnd(&ca->core);
}

/*
 * Linux found the episode spurious.  Packets marked lost since the last
 * ACK belong to it: they are dropped, not counted.
 */
static u32 etcp_undo_cwnd(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct etcp_ca *ca = inet_csk_ca(sk);

	ca->lost_seen = tp->lost;
	etcp_undo(&ca->core, tp->snd_cwnd_clamp);
	return etcp_cwnd(&ca->core);
}

/*
 * Undo points follow Linux's: every entry into Recovery, and each RTO
 * that starts a new undo episode (CA_EVENT_LOSS).  CWR is ECN's (or a
 * local qdisc's) congestion signal.
 */
static void etcp_set_state(struct sock *sk, u8 new_state)
{
	struct etcp_ca *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Recovery &&
	    inet_csk(sk)->icsk_ca_state < TCP_CA_Recovery)
		etcp_episode_begin(&ca->core);
	else if (new_state == TCP_CA_CWR)
		etcp_congestion_signal(&ca->core);
}

static void etcp_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct etcp_ca *ca = inet_csk_ca(sk);

	if (ev == CA_EVENT_LOSS)
		etcp_episode_begin(&ca->core);
}

/*
 * Runs without the socket lock (inet_diag, getsockopt(TCP_CC_INFO): RCU
 * only): reads scalars of icsk_ca_priv once each and follows no pointer.
 */
static size_t etcp_get_info(struct sock *sk, u32 ext, int *attr,
			    union tcp_cc_info *info)
{
	const struct etcp_ca *ca = inet_csk_ca(sk);
	struct synctcp_etcp_info *ei = (void *)info;
	u8 phase;

	BUILD_BUG_ON(sizeof(*ei) > sizeof(*info));
	if (!(ext & (1 << (INET_DIAG_INFO - 1)) ||
	      ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;

	memset(ei, 0, sizeof(*ei));
	phase = READ_ONCE(ca->core.phase);
	ei->hdr.sti_module = SYNCTCP_MOD_ETCP;
	ei->hdr.sti_source = 0;
	ei->hdr.sti_flags = phase != ETCP_SLOW_START ? SYNCTCP_F_LOSS_SEEN : 0;
	ei->w_x256 = (u32)min_t(u64, READ_ONCE(ca->core.w) >> (ETCP_W_SHIFT - 8),
				U32_MAX);
	ei->losses = READ_ONCE(ca->core.losses);
	ei->ecn_events = READ_ONCE(ca->core.ecn_events);
	ei->undos = READ_ONCE(ca->core.undos);
	ei->phase = phase;
	*attr = SYNCTCP_DIAG_ATTR;
	return sizeof(*ei);
}

static struct tcp_congestion_ops tcp_etcp __read_mostly = {
	.init		= etcp_init,
	.release	= etcp_release,
	.ssthresh	= etcp_ssthresh,
	.cong_control	= etcp_cong_control,
	.undo_cwnd	= etcp_undo_cwnd,
	.set_state	= etcp_set_state,
	.cwnd_event	= etcp_cwnd_event,
	.get_info	= etcp_get_info,
	.owner		= THIS_MODULE,
	.name		= "etcp",
};

static int __init etcp_register(void)
{
	BUILD_BUG_ON(sizeof(struct etcp_ca) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&tcp_etcp);
}

static void __exit etcp_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_etcp);
}

module_init(etcp_register);
module_exit(etcp_unregister);

MODULE_AUTHOR("synctcp developers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("E-TCP: loss-floor congestion control for small buffers (Gu, Towsley, Hollot, Zhang)");
MODULE_VERSION("0.2.0");
