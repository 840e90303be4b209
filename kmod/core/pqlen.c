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
	if (!q->loss_seen)
		return false;
	return (u64)q->qdelay_us * 100 > (u64)q->max_qdelay_us * thresh_pct;
}
