// SPDX-License-Identifier: GPL-2.0
/* E-TCP window law in fixed point; see etcp.h. */
#include "etcp.h"

bool etcp_b_valid(u32 b)
{
	return b >= ETCP_B_MIN && b <= ETCP_B_MAX;
}

bool etcp_p0_ppm_valid(u32 p0_ppm)
{
	return p0_ppm >= ETCP_P0_PPM_MIN && p0_ppm <= ETCP_P0_PPM_MAX;
}

bool etcp_burst_segs_valid(u32 segs)
{
	return segs <= ETCP_BURST_SEGS_MAX;
}

/**
 * etcp_gso_limit - the segments a GSO packet of the connection may hold
 * @g: the connection's record of its limits
 * @cur: its limit now (sk_gso_max_segs)
 * @burst_segs: the cap, 0 for none
 *
 * A limit that is not the one applied last was set by the stack (the
 * route's, at first or after a route change): it is the route's from then
 * on.  The result is the route's limit capped by @burst_segs, whatever was
 * applied before, so a raised cap reaches the connection too.
 *
 * Return: the limit to apply.
 */
u32 etcp_gso_limit(struct etcp_gso *g, u32 cur, u32 burst_segs)
{
	if (!g->route_segs || cur != g->applied_segs)
		g->route_segs = cur;
	g->applied_segs = burst_segs && burst_segs < g->route_segs ?
			  burst_segs : g->route_segs;
	return g->applied_segs;
}

/**
 * etcp_start - a connection starts
 * @e: state
 * @cwnd: the window TCP starts with (packets)
 * @slow_start: start in slow start (a new connection), else in E-TCP
 *	(the algorithm was switched on a connection that has left it)
 */
void etcp_start(struct etcp *e, u32 cwnd, bool slow_start)
{
	*e = (struct etcp){ 0 };
	e->w = (u64)min_t(u32, max_t(u32, cwnd, 1), ETCP_W_MAX) << ETCP_W_SHIFT;
	e->phase = slow_start ? ETCP_SLOW_START : ETCP_AVOID;
	e->undo_phase = e->phase;
}

/**
 * etcp_loss_decrement - the cut one lost packet makes: W / (b (2 + p0 W))
 * @w: window, packets << ETCP_W_SHIFT, at most ETCP_W_MAX packets
 * @p: parameters (b and p0 in range)
 *
 * With p0 = p0_ppm / 10^6 the cut is, in units of the window,
 *
 *	floor(w * 10^6 * 2^SHIFT / (b * (2 * 10^6 * 2^SHIFT + p0_ppm * w)))
 *
 * computed exactly (the floor of the exact rational) with one 128-bit
 * multiply-divide and one division: w * 10^6 and the bracket are below
 * 2^60 for w <= 2^40, the quotient is below w * 2^SHIFT / 2, and
 * floor(floor(x / a) / b) = floor(x / (a b)).  For b = 25, p0 = 0.01
 * this is floor(4 w 2^SHIFT /
 * (w + 200 * 2^SHIFT)), i.e. 4W / (W + 200) packets.
 *
 * Return: the decrement, packets << ETCP_W_SHIFT.
 */
u64 etcp_loss_decrement(u64 w, const struct etcp_params *p)
{
	u64 den = 2ULL * ETCP_PPM * ETCP_W_UNIT + (u64)p->p0_ppm * w;

	return div_u64(mul_u64_u64_div_u64(w * ETCP_PPM, ETCP_W_UNIT, den), p->b);
}

/* Cut @w by @k lost packets at @w's own per-loss decrement, down to @w_min. */
static u64 etcp_cut(u64 w, u32 k, u64 w_min, const struct etcp_params *p)
{
	u64 dec = etcp_loss_decrement(w, p);
	u64 room = w - w_min;

	if (k > 1 && dec && k > div64_u64(room, dec))
		return w_min;
	dec *= k;
	return dec < room ? w - dec : w_min;
}

/**
 * etcp_apply_losses - apply the per-loss rule once per lost packet
 * @w: window, packets << ETCP_W_SHIFT
 * @losses: packets lost
 * @p: parameters
 *
 * Up to ETCP_LOSS_STEPS losses are applied one at a time, which is the
 * paper's rule exactly.  More losses in one go (an RTO, a burst) are
 * spread over ETCP_LOSS_STEPS steps of k = ceil(left / steps left) losses
 * each, every step cutting k times the decrement at its own start.  The
 * decrement grows with W and W only falls, so a step never cuts less than
 * k single steps would: the result is at most the per-packet result, and
 * the tests measure how much below it.  The window never goes below
 * ETCP_W_MIN packets through losses, nor is a smaller one raised.
 *
 * Return: the new window.
 */
u64 etcp_apply_losses(u64 w, u32 losses, const struct etcp_params *p)
{
	u64 w_min = min_t(u64, w, (u64)ETCP_W_MIN << ETCP_W_SHIFT);
	u32 steps = ETCP_LOSS_STEPS;

	while (losses && w > w_min) {
		u32 k = losses / steps + (losses % steps ? 1 : 0);

		w = etcp_cut(w, k, w_min, p);
		losses -= k;
		steps--;
	}
	return w;
}

/* Slow start: W += 1 per packet acknowledged. */
static void etcp_slow_start(struct etcp *e, u32 acked)
{
	e->w += (u64)acked << ETCP_W_SHIFT;
}

/*
 * E-TCP increase: W += 1/b per packet acknowledged.  The remainder of the
 * division is carried to the next ACK, so after N packets W has grown by
 * floor(N 2^SHIFT / b) units however the N were spread over ACKs.
 *
 * The division by b is a multiplication by m = ceil(2^32 / b), kept while
 * b stays: for x < 2^32, x m / 2^32 lies in [x / b, x / b + 1), so its
 * floor is the quotient or one more, which the remainder corrects.  b = 1
 * and an x of 2^32 or more (65536 packets in one ACK) divide.
 */
static void etcp_increase(struct etcp *e, u32 acked, u32 b)
{
	u64 x = ((u64)acked << ETCP_W_SHIFT) + e->inc_rem, q;

	if (b < 2 || x > U32_MAX) {
		e->w += div_u64_rem(x, b, &e->inc_rem);
		return;
	}
	if (e->inc_b != b) {
		e->inc_b = b;
		e->inc_recip = (u32)div_u64((1ULL << 32) + b - 1, b);
	}
	q = (x * e->inc_recip) >> 32;
	if (q * b > x)
		q--;
	e->inc_rem = (u32)(x - q * b);
	e->w += q;
}

/* Keep W within [1, min(@w_clamp, ETCP_W_MAX)] packets. */
static void etcp_clamp(struct etcp *e, u32 w_clamp)
{
	u64 max = (u64)min_t(u32, max_t(u32, w_clamp, 1), ETCP_W_MAX) <<
		  ETCP_W_SHIFT;

	if (e->w > max)
		e->w = max;
}

/*
 * End of slow start (section V-A): halve W and freeze it until all that
 * was sent before this moment is acknowledged, so that the burst of
 * slow-start losses is answered once.
 */
static void etcp_first_loss(struct etcp *e, u32 snd_nxt, bool undoable)
{
	u64 w_min = min_t(u64, e->w, (u64)ETCP_W_MIN << ETCP_W_SHIFT);
	u64 half = max_t(u64, e->w >> 1, w_min);

	if (undoable)
		e->undo_dec += e->w - half;
	else
		e->undo_phase = ETCP_HOLD;	/* not even by undoing losses */
	e->w = half;
	e->hold_seq = snd_nxt;
	e->phase = ETCP_HOLD;
}

/* Has everything outstanding at the first loss been acknowledged? */
static bool etcp_hold_over(const struct etcp *e, u32 snd_una)
{
	return !before(snd_una, e->hold_seq);
}

/**
 * etcp_on_ack - apply one ACK
 * @e: state
 * @p: parameters
 * @a: what the ACK reported
 *
 * Each packet acknowledged and each packet lost counts, however many one
 * ACK reports.  Congestion signals without loss (etcp_congestion_signal())
 * count as one lost packet each, here.
 */
void etcp_on_ack(struct etcp *e, const struct etcp_params *p,
		 const struct etcp_ack *a)
{
	u32 signals = e->ecn_pending;
	u64 before_loss;

	e->ecn_pending = 0;
	e->losses += a->losses;

	if (e->phase == ETCP_HOLD && etcp_hold_over(e, a->snd_una))
		e->phase = ETCP_AVOID;

	switch (e->phase) {
	case ETCP_SLOW_START:
		if (a->losses || signals) {
			etcp_first_loss(e, a->snd_nxt, a->losses != 0);
			break;
		}
		if (a->may_grow)
			etcp_slow_start(e, a->acked);
		break;
	case ETCP_HOLD:
		break;
	case ETCP_AVOID:
		if (a->may_grow)
			etcp_increase(e, a->acked, p->b);
		if (a->losses) {	/* most ACKs report none */
			before_loss = e->w;
			e->w = etcp_apply_losses(e->w, a->losses, p);
			e->undo_dec += before_loss - e->w;
		}
		if (signals)
			e->w = etcp_apply_losses(e->w, signals, p);
		break;
	}
	etcp_clamp(e, a->w_clamp);
}

/**
 * etcp_congestion_signal - congestion reported without a lost packet
 * @e: state
 *
 * Applied at the next ACK as one lost packet, and never undone.
 */
void etcp_congestion_signal(struct etcp *e)
{
	if (e->ecn_pending < (u16)~0U)
		e->ecn_pending++;
	e->ecn_events++;
}

/**
 * etcp_episode_begin - a loss-recovery episode begins (undo point)
 * @e: state
 */
void etcp_episode_begin(struct etcp *e)
{
	e->undo_dec = 0;
	e->undo_phase = e->phase;
}

/**
 * etcp_undo - the episode's losses were spurious: give back what they cut
 * @e: state
 * @w_clamp: largest window allowed, packets
 *
 * Growth since the episode began is kept.  If the episode ended slow
 * start, slow start resumes.
 */
void etcp_undo(struct etcp *e, u32 w_clamp)
{
	e->w += e->undo_dec;
	e->undo_dec = 0;
	if (e->undo_phase == ETCP_SLOW_START)
		e->phase = ETCP_SLOW_START;
	e->undos++;
	etcp_clamp(e, w_clamp);
}

/**
 * etcp_pacing_rate - W packets per smoothed RTT (section III-C)
 * @e: state
 * @mss: bytes per packet
 * @srtt_us: smoothed RTT, microseconds (0 is taken as 1)
 *
 * Computed exactly (the floor of W mss 10^6 / srtt_us) with one 128-bit
 * multiply-divide: W mss is below 2^57 (W at most 2^24 packets, mss below
 * 2^16) and the quotient below 2^60.
 *
 * Return: bytes per second.
 */
u64 etcp_pacing_rate(const struct etcp *e, u32 mss, u32 srtt_us)
{
	u32 rtt = max_t(u32, srtt_us, 1);

	return mul_u64_u64_div_u64(e->w * mss, USEC_PER_SEC,
				   (u64)rtt << ETCP_W_SHIFT);
}
