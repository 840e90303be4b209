/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SyncMix (Weigle 2003, section 3.5.5): the trend of the *averaged*
 * queuing delay, plus the region the average lies in.
 *
 *   avg    = (1 - w) * avg + w * qdelay     w = 1, 1, 3/4, 1/2, 1/4, then 1/8
 *                                           (Table 3.1; restarts after an RTO)
 *   window = the last nine averages, in three groups of three, oldest first
 *   m0, m2 = medians of the oldest and of the newest group
 *   trend  = increasing if m0 < m2, decreasing if m0 > m2,
 *            recomputed every three samples (three new averages)
 *   region = avg as a share of max qdelay: 0-25, 25-50, 50-75, 75-100%;
 *            before the first loss, while max qdelay < 10 ms, instead the
 *            change between the last two qdelay samples, |q1 - q0|, as a
 *            share of the larger of the two
 *
 * Decisions the dissertation leaves open (docs/mixreact.md gives reasons):
 *  - m0 == m2 gives no new indication: the previous one stays in force and
 *    nothing is re-applied; with no previous one there is still none.
 *  - The denominator of the pre-loss "percentage difference" is the larger
 *    of the two qdelay samples (0 when both are 0).
 *  - A region boundary belongs to the upper region (exactly 25% is 25-50%).
 *  - A restart (RTO) also empties the nine-average window: its averages
 *    are the out-of-date ones the restart is there to forget.
 *
 * Integer arithmetic only: the average keeps SYNCTCP_MIX_AVG_SHIFT
 * fractional bits of a microsecond, the window holds whole microseconds.
 */
#ifndef SYNCTCP_SYNCMIX_H
#define SYNCTCP_SYNCMIX_H

#include "ott.h"

/* Averages in the trend window, and averages per group (and per trend). */
#define SYNCTCP_MIX_WINDOW	9U
#define SYNCTCP_MIX_GROUP	3U
/* Fractional bits of the average queuing delay (1/256 us). */
#define SYNCTCP_MIX_AVG_SHIFT	8U
/* Table 3.1 weights are in eighths: w = k / 8. */
#define SYNCTCP_MIX_WEIGHT_SHIFT 3U
/* Before the first loss, max qdelay below this (us) is not trusted. */
#define SYNCTCP_MIX_PRELOSS_MAX_US	10000U

/* Trend of the average queuing delay (exported in telemetry). */
enum synctcp_mix_trend {
	SYNCTCP_MIX_NONE = 0,		/* no indication: not enough samples
					 * (or every trend so far was flat)
					 */
	SYNCTCP_MIX_INCREASING = 1,	/* m0 < m2 */
	SYNCTCP_MIX_DECREASING = 2,	/* m0 > m2 */
};

/* Where the average lies, in quarters of the max queuing delay. */
enum synctcp_mix_region {
	SYNCTCP_MIX_R0_25 = 0,
	SYNCTCP_MIX_R25_50 = 1,
	SYNCTCP_MIX_R50_75 = 2,
	SYNCTCP_MIX_R75_100 = 3,
};

struct synctcp_syncmix {
	u64 avg_fp;		/* average qdelay, us << SYNCTCP_MIX_AVG_SHIFT */
	u32 window[SYNCTCP_MIX_WINDOW];	/* last nine averages (us), a ring */
	u32 qdelay_prev_us;	/* the qdelay sample before the last one */
	u32 qdelay_last_us;	/* the last qdelay sample */
	u32 flat_trends;	/* trend computations with m0 == m2 */
	u8 oldest;		/* ring index of the oldest average */
	u8 n_avg;		/* averages in the window (up to 9) */
	u8 n_samples;		/* samples since (re)start, saturating at 6 */
	u8 until_trend;		/* new averages until the next trend (1..9) */
	u8 trend;		/* enum synctcp_mix_trend in force */
	u8 region;		/* enum synctcp_mix_region of that indication */
	bool last_flat;		/* the last trend computation had m0 == m2 */
};

void synctcp_syncmix_init(struct synctcp_syncmix *m);
void synctcp_syncmix_restart(struct synctcp_syncmix *m);

u32 synctcp_syncmix_weight_eighths(u32 sample_no);
u32 synctcp_syncmix_avg_us(const struct synctcp_syncmix *m);
u32 synctcp_median3(u32 a, u32 b, u32 c);
bool synctcp_syncmix_update(struct synctcp_syncmix *m,
			    const struct synctcp_qdelay *q, u32 preloss_max_us);

#endif /* SYNCTCP_SYNCMIX_H */
