// SPDX-License-Identifier: GPL-2.0
/* Variant "best"'s modes and base probe; see mode.h. */
#include "mode.h"

/*
 * @compete: competing mode may be entered.  Off by default: when a
 * standing queue and a loss decided, flows of variant best entered it
 * among twenty of their own kind on weigle-ftp-full and never left; the
 * epoch drains that decide now are measured on a few presets only
 * (docs/coexistence.md).
 */
void synctcp_mode_init(struct synctcp_mode *m, bool compete)
{
	*m = (struct synctcp_mode){ .compete = compete, .need = SYNCTCP_MODE_NEED_MIN };
}

/* @floor_us, or @rtts round trips when that is longer, in us >> 10. */
static u32 synctcp_mode_span(u32 floor_us, u32 rtts, u32 srtt_us)
{
	return (u32)(max_t(u64, floor_us, (u64)rtts * srtt_us) >> 10);
}

/* Half a window, as Reno halves, but not below the drain's (nor above @w). */
static u32 synctcp_mode_half(u32 w)
{
	return max_t(u32, w >> 1, min_t(u32, w, SYNCTCP_MODE_DRAIN_CWND));
}

/* Competing mode from now; a quick return doubles the dips needed to leave. */
static enum synctcp_mode_event synctcp_mode_enter(struct synctcp_mode *m,
						  u32 t, u32 srtt_us)
{
	bool back = m->left && t - m->left_at <
		    synctcp_mode_span(SYNCTCP_MODE_BACK_MIN_US,
				      SYNCTCP_MODE_BACK_RTTS, srtt_us);

	m->need = back ? min_t(u8, m->need * 2, SYNCTCP_MODE_NEED_MAX) :
		SYNCTCP_MODE_NEED_MIN;
	m->competing = 1;
	m->alone = 0;
	m->entries++;
	return SYNCTCP_MODE_ENTER;
}

/*
 * Competing mode, and a candidate for it: the wall clock's epochs (mode.h).
 * At each one (every 2^k-th when the drain would take more than its share
 * of the time) the flow drains for @hold.  A candidate without a dip in its drain enters
 * competing mode; with one it stays out.  In competing mode a dip counts
 * towards leaving.
 */
static enum synctcp_mode_event synctcp_mode_drain(struct synctcp_mode *m,
						  const struct synctcp_qdelay *q,
						  u32 t, u64 wall_ns,
						  u32 srtt_us, u64 thresh)
{
	u32 hold = synctcp_mode_span(SYNCTCP_MODE_DRAIN_MIN_US,
				     SYNCTCP_MODE_DRAIN_RTTS, srtt_us);
	u32 epoch, every = 1;
	bool next;

	if (m->draining) {
		if ((u64)q->qdelay_us * 4 <= thresh)
			m->dipped = 1;
		if ((s32)(t - m->drain_until) < 0)
			return SYNCTCP_MODE_NONE;
		m->draining = 0;
		m->restore = 1;
		if (m->candidate) {
			m->candidate = 0;
			if (!m->dipped)
				return synctcp_mode_enter(m, t, srtt_us);
			m->last_dip = t;
			return SYNCTCP_MODE_NONE;
		}
		if (!m->dipped) {
			m->alone = 0;
			return SYNCTCP_MODE_NONE;
		}
		if (++m->alone < m->need)
			return SYNCTCP_MODE_NONE;
		m->competing = 0;
		m->alone = 0;
		m->halve = 1;
		m->probed = 1;	/* the dip showed the base */
		m->last_dip = t;
		m->left_at = t;
		m->left = 1;
		return SYNCTCP_MODE_LEAVE;
	}
	if (!wall_ns || (wall_ns < m->epoch_end_ns &&
			 wall_ns + SYNCTCP_MODE_EPOCH_NS >= m->epoch_end_ns))
		return SYNCTCP_MODE_NONE;		/* within the epoch */
	/* into the next one; else the first reading, a clock step or a gap */
	next = m->epoch_end_ns && wall_ns - m->epoch_end_ns < SYNCTCP_MODE_EPOCH_NS;
	epoch = (u32)div64_u64(wall_ns, SYNCTCP_MODE_EPOCH_NS);
	m->epoch_end_ns = ((u64)epoch + 1) * SYNCTCP_MODE_EPOCH_NS;
	if (!next)
		return SYNCTCP_MODE_NONE;
	while (every < SYNCTCP_MODE_EPOCHS_MAX &&
	       (u64)hold * 1024 * 1000 * SYNCTCP_MODE_DRAIN_SHARE >
	       (u64)every * SYNCTCP_MODE_EPOCH_NS)
		every <<= 1;
	if (epoch & (every - 1))
		return SYNCTCP_MODE_NONE;
	m->draining = 1;
	m->dipped = 0;
	m->drain_until = t + hold;
	m->drain_hold = hold;
	m->drains++;
	return SYNCTCP_MODE_DRAIN;
}

/**
 * synctcp_mode_sample - one queuing-delay sample into the mode
 * @m: the mode
 * @q: the estimator, which has just taken the sample
 * @now_us: local clock (us)
 * @wall_ns: CLOCK_REALTIME (ns), the clock the hosts share; 0 when not
 *	     read (only competing mode and its candidates need it)
 * @srtt_us: smoothed RTT (us), 0 when unknown
 * @thresh_pct: the flow's threshold T, percent of the maximum
 *
 * Nothing happens until a loss has shown what a full queue is (the
 * detector is off until then).
 *
 * Return: what the flow must do now (enum synctcp_mode_event).
 */
enum synctcp_mode_event synctcp_mode_sample(struct synctcp_mode *m,
					    const struct synctcp_qdelay *q,
					    u64 now_us, u64 wall_ns,
					    u32 srtt_us, u32 thresh_pct)
{
	u32 t = (u32)(now_us >> 10);
	u64 thresh, high;

	if (!synctcp_qdelay_valid(q) || !q->loss_seen) {
		m->high = 0;
		m->last_dip = t;
		m->on_since = t;
		m->started = 1;
		return SYNCTCP_MODE_NONE;
	}
	if (!m->started) {
		m->last_dip = t;
		m->on_since = t;
		m->started = 1;
	}
	thresh = div_u64((u64)q->max_qdelay_us * thresh_pct, 100);
	if ((u64)q->qdelay_us * 4 <= thresh)
		m->last_dip = t;
	if (m->competing || m->candidate)
		return synctcp_mode_drain(m, q, t, wall_ns, srtt_us, thresh);
	high = max_t(u64, thresh, q->max_qdelay_us / 2);
	if (!m->compete || !q->max_qdelay_us || q->qdelay_us < high) {
		m->high = 0;
	} else if (!m->high) {
		m->high = 1;
		m->high_since = t;
	} else if (t - m->high_since >=
		   synctcp_mode_span(SYNCTCP_MODE_HIGH_MIN_US,
				     SYNCTCP_MODE_HIGH_RTTS, srtt_us)) {
		m->candidate = 1;	/* the next epoch's drain decides */
		m->high = 0;
		m->epoch_end_ns = 0;
		return SYNCTCP_MODE_NONE;
	}
	if (!m->probed && t - m->on_since >=
	    synctcp_mode_span(SYNCTCP_MODE_FIRST_MIN_US,
			      SYNCTCP_MODE_PROBE_RTTS, srtt_us)) {
		m->probed = 1;
		m->last_dip = t;
		m->probes++;
		return SYNCTCP_MODE_PROBE;
	}
	if (t - m->last_dip >= synctcp_mode_span(SYNCTCP_MODE_PROBE_MIN_US,
						 SYNCTCP_MODE_PROBE_RTTS,
						 srtt_us)) {
		m->last_dip = t;
		m->probes++;
		return SYNCTCP_MODE_PROBE;
	}
	return SYNCTCP_MODE_NONE;
}

/**
 * synctcp_mode_drain_cwnd - the window during an epoch's drain and after it
 * @m: the mode
 * @now_us: local clock (us)
 * @cwnd: the window the algorithm set
 *
 * During a drain, at most SYNCTCP_MODE_DRAIN_CWND (the window before it is
 * kept); after it, that window again, or half of it when the drain ended
 * competing mode.  A drain that no sample ends within twice its length
 * ends without a verdict.
 *
 * Return: the window to use.
 */
u32 synctcp_mode_drain_cwnd(struct synctcp_mode *m, u64 now_us, u32 cwnd)
{
	u32 t = (u32)(now_us >> 10), back;

	if (m->draining) {
		if (!m->saved) {
			m->drain_cwnd = cwnd;
			m->saved = 1;
		}
		if ((s32)(t - m->drain_until - m->drain_hold) < 0)
			return min_t(u32, cwnd, SYNCTCP_MODE_DRAIN_CWND);
		m->draining = 0;
		m->restore = 1;
	}
	if (!m->restore)
		return cwnd;
	back = m->saved ? m->drain_cwnd : cwnd;
	if (m->halve)
		back = synctcp_mode_half(back);
	m->restore = 0;
	m->saved = 0;
	m->halve = 0;
	return max_t(u32, cwnd, back);
}

/**
 * synctcp_mode_loss - loss recovery (or an RTO) began
 * @m: the mode
 *
 * A loss during an epoch's drain, or before the window it took is given
 * back, halves what is given back, as Reno halves: the kernel's own cut
 * would otherwise be undone (the first round trip of a drain still
 * carries the window before it).
 */
void synctcp_mode_loss(struct synctcp_mode *m)
{
	if (m->saved)
		m->drain_cwnd = synctcp_mode_half(m->drain_cwnd);
}
