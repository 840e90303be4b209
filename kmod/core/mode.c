// SPDX-License-Identifier: GPL-2.0
/* Variant "best"'s modes and base probe; see mode.h. */
#include "mode.h"

/*
 * @compete: competing mode may be entered.  Off by default: among twenty
 * flows of variant best on weigle-ftp-full, flows that entered it at
 * start-up (the others were still in slow start) kept the queue high as
 * Reno does, which made others enter it (docs/coexistence.md).
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

/*
 * Competing mode: is the loss being checked over, and did the queue fall
 * as low as a flow alone leaves it?
 */
static enum synctcp_mode_event synctcp_mode_check(struct synctcp_mode *m,
						  const struct synctcp_qdelay *q,
						  u32 t)
{
	if (!m->checking)
		return SYNCTCP_MODE_NONE;
	if ((s32)(t - m->check_from) >= 0)
		m->check_min_us = min_t(u32, m->check_min_us, q->qdelay_us);
	if ((s32)(t - m->check_until) < 0)
		return SYNCTCP_MODE_NONE;
	m->checking = 0;
	if ((u64)m->check_min_us > (u64)m->expect_us + q->max_qdelay_us / 8) {
		m->alone = 0;
		return SYNCTCP_MODE_NONE;
	}
	if (++m->alone < m->need)
		return SYNCTCP_MODE_NONE;
	m->competing = 0;
	m->high = 0;
	m->alone = 0;
	m->last_dip = t;
	m->left_at = t;
	m->left = 1;
	return SYNCTCP_MODE_LEAVE;
}

/**
 * synctcp_mode_sample - one queuing-delay sample into the mode
 * @m: the mode
 * @q: the estimator, which has just taken the sample
 * @now_us: local clock (us)
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
					    u64 now_us, u32 srtt_us,
					    u32 thresh_pct)
{
	u32 t = (u32)(now_us >> 10);
	u64 thresh, high;
	bool back;

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
	if (m->competing)
		return synctcp_mode_check(m, q, t);
	high = max_t(u64, thresh, q->max_qdelay_us / 2);
	if (!m->compete || !q->max_qdelay_us || q->qdelay_us < high) {
		m->high = 0;
	} else if (!m->high) {
		m->high = 1;
		m->high_since = t;
	} else if (t - m->high_since >=
		   synctcp_mode_span(SYNCTCP_MODE_HIGH_MIN_US,
				     SYNCTCP_MODE_HIGH_RTTS, srtt_us)) {
		back = m->left && t - m->left_at <
		       synctcp_mode_span(SYNCTCP_MODE_BACK_MIN_US,
					 SYNCTCP_MODE_BACK_RTTS, srtt_us);
		m->need = back ? min_t(u8, m->need * 2, SYNCTCP_MODE_NEED_MAX) :
			SYNCTCP_MODE_NEED_MIN;
		m->competing = 1;
		m->high = 0;
		m->checking = 0;
		m->alone = 0;
		m->entries++;
		return SYNCTCP_MODE_ENTER;
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
 * synctcp_mode_loss - loss recovery (or an RTO) began
 * @m: the mode
 * @q: the estimator
 * @now_us: local clock (us)
 * @srtt_us: smoothed RTT (us), 0 when unknown
 * @min_rtt_us: the connection's base round trip (us), 0 when unknown
 *
 * In competing mode the flow halves as Reno; the smallest queuing delay
 * from half a round trip to three round trips later tells whether it is
 * alone (synctcp_mode_check()).
 */
void synctcp_mode_loss(struct synctcp_mode *m, const struct synctcp_qdelay *q,
		       u64 now_us, u32 srtt_us, u32 min_rtt_us)
{
	u32 t = (u32)(now_us >> 10);
	u32 full = q->max_qdelay_us;

	if (!m->competing)
		return;
	m->checking = 1;
	m->check_from = t + (srtt_us >> 11);
	m->check_until = t + (u32)(((u64)srtt_us * 3) >> 10) + 1;
	m->check_min_us = U32_MAX;
	m->expect_us = full > min_rtt_us ? (full - min_rtt_us) / 2 : 0;
}
