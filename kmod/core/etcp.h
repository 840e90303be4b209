/* SPDX-License-Identifier: GPL-2.0 */
/*
 * E-TCP window law (Gu, Towsley, Hollot, Zhang, "Congestion Control for
 * Small Buffer High Speed Networks", section III):
 *
 *   per packet acknowledged:   W += 1 / b
 *   per packet lost:           W -= W / (b * (2 + p0 * W))
 *
 * whose equilibrium is W* = 2 / (p - p0) packets for a loss rate p > p0.
 * Before it, slow start (W += 1 per packet acknowledged); at the first
 * loss W is halved and held until everything outstanding at that moment
 * is acknowledged (section V-A).
 *
 * W is kept in fixed point, packets << ETCP_W_SHIFT, so that the steps of
 * 1/25 packet and the per-loss decrements of a few packets accumulate
 * exactly.  Integer arithmetic only; every loop is bounded by a constant.
 */
#ifndef SYNCTCP_ETCP_H
#define SYNCTCP_ETCP_H

#include "synctcp_compat.h"

/* Fixed-point scale of W: one packet is 1 << ETCP_W_SHIFT. */
#define ETCP_W_SHIFT		16
#define ETCP_W_UNIT		((u64)1 << ETCP_W_SHIFT)

/* Smallest window the per-loss rule and the halving leave (packets). */
#define ETCP_W_MIN		2U
/*
 * Largest window (packets): 2^24 packets, 24 GB of 1448-byte segments.
 * Keeps W << ETCP_W_SHIFT below 2^40, which the decrement's 64-bit
 * arithmetic needs (etcp_loss_decrement()).
 */
#define ETCP_W_MAX		16777216U

/* p0 is given in parts per million (ppm) of a packet loss probability. */
#define ETCP_PPM		1000000U

/* Paper's constants (section III-A), for a 20-packet bottleneck buffer. */
#define ETCP_B_DEFAULT		25U		/* gain b, ACKs per packet of growth */
#define ETCP_P0_PPM_DEFAULT	10000U		/* loss floor p0 = 0.01 */

/* Valid ranges of the parameters: b > 0 and 0 < p0 < 1. */
#define ETCP_B_MIN		1U
#define ETCP_B_MAX		1000000U
#define ETCP_P0_PPM_MIN		1U
#define ETCP_P0_PPM_MAX		(ETCP_PPM - 1)

/*
 * Pacing sends one GSO packet at a time: its segments leave back to back.
 * burst_segs caps a GSO packet at this many segments (0: no cap, Linux's
 * own sizing, about 1 ms of the pacing rate).  The paper paces packet by
 * packet; a 1 ms burst at 1 Gbit/s is 80 packets, four 20-packet buffers.
 */
#define ETCP_BURST_SEGS_DEFAULT	1U
#define ETCP_BURST_SEGS_MAX	64U

/*
 * Losses reported by one ACK that are applied one by one; beyond this
 * many the remaining ones are applied in batches, so that one ACK costs
 * at most this many steps (etcp_apply_losses()).
 */
#define ETCP_LOSS_STEPS		64U

/* Where the connection is in its life (section V-A). */
enum etcp_phase {
	ETCP_SLOW_START = 0,	/* W += 1 per packet acknowledged */
	ETCP_HOLD = 1,		/* W halved at the first loss, frozen */
	ETCP_AVOID = 2,		/* the E-TCP rules */
};

/* Module parameters, as one ACK reads them. */
struct etcp_params {
	u32 b;			/* gain: W grows 1 packet per b acknowledged */
	u32 p0_ppm;		/* loss floor p0, parts per million */
};

/* What one ACK reports (after TCP processed it). */
struct etcp_ack {
	u32 acked;		/* packets newly acknowledged (ACKed or SACKed) */
	u32 losses;		/* packets newly marked lost */
	u32 snd_una;		/* first unacknowledged sequence number */
	u32 snd_nxt;		/* first sequence number not yet sent */
	u32 w_clamp;		/* largest window allowed, packets */
	bool may_grow;		/* the sender is using its window */
};

struct etcp {
	u64 w;			/* window, packets << ETCP_W_SHIFT */
	u64 undo_dec;		/* cut by losses since the episode began, same */
	u32 inc_rem;		/* remainder of (acked << ETCP_W_SHIFT) / b */
	u32 inc_b;		/* the b of inc_recip (0: none yet) */
	u32 inc_recip;		/* ceil(2^32 / inc_b) */
	u32 hold_seq;		/* ETCP_HOLD until snd_una reaches this */
	u32 losses;		/* lost packets reported, mod 2^32 */
	u16 ecn_events;		/* congestion signals without loss, mod 2^16 */
	u16 undos;		/* episodes undone as spurious, mod 2^16 */
	u16 ecn_pending;	/* signals not yet applied */
	u8 phase;		/* enum etcp_phase */
	u8 undo_phase;		/* phase when the episode began */
};

bool etcp_b_valid(u32 b);
bool etcp_p0_ppm_valid(u32 p0_ppm);
bool etcp_burst_segs_valid(u32 segs);

/*
 * A connection's GSO limit under burst_segs: the route's own limit (as last
 * seen: the stack resets sk_gso_max_segs to it on a route change) capped by
 * burst_segs, so that raising burst_segs at run time reaches existing
 * connections and a reset is capped again.
 */
struct etcp_gso {
	u32 route_segs;		/* the route's limit, 0: not seen yet */
	u32 applied_segs;	/* the limit last applied */
};

u32 etcp_gso_limit(struct etcp_gso *g, u32 cur, u32 burst_segs);

void etcp_start(struct etcp *e, u32 cwnd, bool slow_start);
u64 etcp_loss_decrement(u64 w, const struct etcp_params *p);
u64 etcp_apply_losses(u64 w, u32 losses, const struct etcp_params *p);
void etcp_on_ack(struct etcp *e, const struct etcp_params *p,
		 const struct etcp_ack *a);
void etcp_congestion_signal(struct etcp *e);
void etcp_episode_begin(struct etcp *e);
void etcp_undo(struct etcp *e, u32 w_clamp);

/* The window in whole packets (at least 1). */
static inline u32 etcp_cwnd(const struct etcp *e)
{
	return max_t(u32, (u32)(e->w >> ETCP_W_SHIFT), 1);
}

u64 etcp_pacing_rate(const struct etcp *e, u32 mss, u32 srtt_us);

#endif /* SYNCTCP_ETCP_H */
