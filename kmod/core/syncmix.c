// SPDX-License-Identifier: GPL-2.0
/* SyncMix congestion detection; see syncmix.h. */
#include "syncmix.h"

/*
 * Table 3.1: weight of the n-th qdelay sample since (re)start, in eighths.
 * The first two samples replace the average outright, so it is bootstrapped
 * from the path's state rather than from 0 (the flow may start into a queue).
 */
static const u8 synctcp_mix_weights[] = { 8, 8, 6, 4, 2, 1 };

void synctcp_syncmix_init(struct synctcp_syncmix *m)
{
	*m = (struct synctcp_syncmix){ .until_trend = SYNCTCP_MIX_WINDOW };
}

/**
 * synctcp_syncmix_restart - start the average and the trend afresh
 * @m: detector state
 *
 * Used after a retransmission timeout and an OTT rebase: the average and
 * the window of averages are out of date.  The statistics are kept.
 */
void synctcp_syncmix_restart(struct synctcp_syncmix *m)
{
	u32 flat_trends = m->flat_trends;

	synctcp_syncmix_init(m);
	m->flat_trends = flat_trends;
}

/**
 * synctcp_syncmix_weight_eighths - Table 3.1, in eighths
 * @sample_no: 1 for the first sample since (re)start
 *
 * Return: 8, 8, 6, 4, 2, then 1 (w = 1, 1, 3/4, 1/2, 1/4, 1/8).
 */
u32 synctcp_syncmix_weight_eighths(u32 sample_no)
{
	if (sample_no == 0)
		sample_no = 1;
	if (sample_no > ARRAY_SIZE(synctcp_mix_weights))
		sample_no = ARRAY_SIZE(synctcp_mix_weights);
	return synctcp_mix_weights[sample_no - 1];
}

/* The average queuing delay, rounded to whole microseconds. */
u32 synctcp_syncmix_avg_us(const struct synctcp_syncmix *m)
{
	u64 us = (m->avg_fp + (1U << (SYNCTCP_MIX_AVG_SHIFT - 1))) >>
		 SYNCTCP_MIX_AVG_SHIFT;

	return us > U32_MAX ? U32_MAX : (u32)us;
}

/* avg = (1 - w) * avg + w * qdelay, with w from Table 3.1. */
static void synctcp_syncmix_average(struct synctcp_syncmix *m, u32 qdelay_us)
{
	u64 k, q_fp = (u64)qdelay_us << SYNCTCP_MIX_AVG_SHIFT;

	if (m->n_samples < ARRAY_SIZE(synctcp_mix_weights))
		m->n_samples++;
	k = synctcp_syncmix_weight_eighths(m->n_samples);
	m->avg_fp = (m->avg_fp * ((1U << SYNCTCP_MIX_WEIGHT_SHIFT) - k) +
		     q_fp * k) >> SYNCTCP_MIX_WEIGHT_SHIFT;
}

/* Append an average to the window, dropping the oldest when it is full. */
static void synctcp_syncmix_push(struct synctcp_syncmix *m, u32 avg_us)
{
	if (m->n_avg < SYNCTCP_MIX_WINDOW) {
		m->window[m->n_avg++] = avg_us;
		return;
	}
	m->window[m->oldest] = avg_us;
	m->oldest = (m->oldest + 1) % SYNCTCP_MIX_WINDOW;
}

/* The median of three values. */
u32 synctcp_median3(u32 a, u32 b, u32 c)
{
	u32 lo = min_t(u32, a, b), hi = max_t(u32, a, b);

	return max_t(u32, lo, min_t(u32, hi, c));
}

/* Median of group @g (0 = oldest three averages, 2 = newest three). */
static u32 synctcp_syncmix_group_median(const struct synctcp_syncmix *m,
					u32 g)
{
	u32 i = m->oldest + g * SYNCTCP_MIX_GROUP;

	return synctcp_median3(m->window[i % SYNCTCP_MIX_WINDOW],
			       m->window[(i + 1) % SYNCTCP_MIX_WINDOW],
			       m->window[(i + 2) % SYNCTCP_MIX_WINDOW]);
}

/*
 * Trend of a full window: increasing if m0 < m2, decreasing if m0 > m2.
 * m1 does not enter the decision.  Equal medians give SYNCTCP_MIX_NONE.
 */
static enum synctcp_mix_trend
synctcp_syncmix_trend_of_window(const struct synctcp_syncmix *m)
{
	u32 m0 = synctcp_syncmix_group_median(m, 0);
	u32 m2 = synctcp_syncmix_group_median(m, 2);

	if (m0 < m2)
		return SYNCTCP_MIX_INCREASING;
	if (m0 > m2)
		return SYNCTCP_MIX_DECREASING;
	return SYNCTCP_MIX_NONE;
}

/*
 * The quarter of @whole that @part lies in; a boundary counts upwards:
 * floor(4 part / whole) capped at 3, found by comparing 4 part with
 * whole, 2 whole and 3 whole (no division on the ACK path).
 */
static enum synctcp_mix_region synctcp_mix_quarter(u32 part, u32 whole)
{
	u64 p4 = (u64)part * 4, w = whole;

	if (!whole || p4 < w)
		return SYNCTCP_MIX_R0_25;
	if (p4 < 2 * w)
		return SYNCTCP_MIX_R25_50;
	if (p4 < 3 * w)
		return SYNCTCP_MIX_R50_75;
	return SYNCTCP_MIX_R75_100;
}

/*
 * Is max qdelay a measure of the path's queue?  Only after a loss, or once
 * it reaches @preloss_max_us (the dissertation's 10 ms): smaller maxima
 * would make the four regions too narrow to mean anything.
 */
static bool synctcp_syncmix_max_is_trusted(const struct synctcp_qdelay *q,
					   u32 preloss_max_us)
{
	return q->loss_seen || q->max_qdelay_us >= preloss_max_us;
}

/* Pre-loss region: |q1 - q0| as a share of max(q0, q1). */
static enum synctcp_mix_region
synctcp_syncmix_region_of_change(const struct synctcp_syncmix *m)
{
	u32 a = m->qdelay_prev_us, b = m->qdelay_last_us;

	return synctcp_mix_quarter(a > b ? a - b : b - a, max_t(u32, a, b));
}

static enum synctcp_mix_region
synctcp_syncmix_region(const struct synctcp_syncmix *m,
		       const struct synctcp_qdelay *q, u32 preloss_max_us)
{
	if (!synctcp_syncmix_max_is_trusted(q, preloss_max_us))
		return synctcp_syncmix_region_of_change(m);
	return synctcp_mix_quarter(synctcp_syncmix_avg_us(m), q->max_qdelay_us);
}

/**
 * synctcp_syncmix_update - SyncMix for one queuing-delay sample
 * @m: detector state
 * @q: queuing-delay estimator, updated with this sample
 * @preloss_max_us: before a loss, max qdelay below this is not trusted
 *                  (SYNCTCP_MIX_PRELOSS_MAX_US in the dissertation)
 *
 * The indication in force is m->trend and m->region; m->trend is
 * SYNCTCP_MIX_NONE while fewer than nine averages have been gathered.
 *
 * Return: true iff this sample produced a new indication (every third
 * sample once the window is full, unless the medians were equal).
 */
bool synctcp_syncmix_update(struct synctcp_syncmix *m,
			    const struct synctcp_qdelay *q, u32 preloss_max_us)
{
	enum synctcp_mix_trend trend;

	m->qdelay_prev_us = m->qdelay_last_us;
	m->qdelay_last_us = q->qdelay_us;
	synctcp_syncmix_average(m, q->qdelay_us);
	synctcp_syncmix_push(m, synctcp_syncmix_avg_us(m));

	if (--m->until_trend)
		return false;	/* not enough samples, or mid-group */
	m->until_trend = SYNCTCP_MIX_GROUP;

	trend = synctcp_syncmix_trend_of_window(m);
	m->last_flat = trend == SYNCTCP_MIX_NONE;
	if (m->last_flat) {
		m->flat_trends++;
		return false;	/* no new indication: the old one stays */
	}
	m->trend = trend;
	m->region = synctcp_syncmix_region(m, q, preloss_max_us);
	return true;
}
