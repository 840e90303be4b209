// SPDX-License-Identifier: GPL-2.0
/* SyncPQlen congestion detection; see pqlen.h. */
#include "pqlen.h"

/**
 * synctcp_pqlen_congested - does this ACK's queuing delay signal congestion?
 * @q: queuing-delay estimator, updated with this ACK's sample
 * @thresh_pct: threshold in percent of the maximum queuing delay (1..100)
 *
 * Return: true iff @q has seen a loss and qdelay > thresh_pct% of the
 * maximum queuing delay.  Exactly at the threshold is not congestion.
 */
bool synctcp_pqlen_congested(const struct synctcp_qdelay *q, u32 thresh_pct)
{
	return synctcp_pqlen_over(q, q->qdelay_us, thresh_pct);
}

/**
 * synctcp_pqlen_over - is this queuing delay over the threshold?
 * @q: queuing-delay estimator (its maximum and loss_seen)
 * @qdelay_us: the queuing delay to judge
 * @thresh_pct: threshold in percent of the maximum queuing delay (1..100)
 *
 * Return: as synctcp_pqlen_congested(), for @qdelay_us.
 */
bool synctcp_pqlen_over(const struct synctcp_qdelay *q, u32 qdelay_us,
			u32 thresh_pct)
{
	if (!q->loss_seen)
		return false;
	return (u64)qdelay_us * 100 > (u64)q->max_qdelay_us * thresh_pct;
}

/**
 * synctcp_pqlen_room - how far the queue is below the threshold
 * @q: queuing-delay estimator
 * @thresh_pct: threshold in percent of the maximum queuing delay (1..100)
 *
 * Return: (threshold - qdelay) / threshold in 1/1024: 1024 for an empty
 * queue or a detector that is not on yet (no loss seen), 0 at or above
 * the threshold.
 */
u32 synctcp_pqlen_room(const struct synctcp_qdelay *q, u32 thresh_pct)
{
	u64 thresh = (u64)q->max_qdelay_us * thresh_pct;	/* x 100 */
	u64 now = (u64)q->qdelay_us * 100;

	if (!q->loss_seen || !thresh)
		return 1024;
	if (now >= thresh)
		return 0;
	return (u32)div64_u64((thresh - now) << 10, thresh);
}
