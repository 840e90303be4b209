/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SyncPQlen (Weigle 2003, section 3.5.1): congestion is signalled when the
 * current queuing delay exceeds a percentage (50%) of the largest queuing
 * delay seen, but only once the flow has lost a segment, so that the
 * maximum reflects a full queue.
 *
 * The loss must be one the estimator saw: a loss before the first OTT
 * sample (with RFC 7323 timestamps the first second passes before the
 * peer's clock rate is confirmed) or before a rebase of the OTT says
 * nothing about the maximum measured afterwards, which may then be that
 * of a nearly empty queue.  Such a loss does not count.
 */
#ifndef SYNCTCP_PQLEN_H
#define SYNCTCP_PQLEN_H

#include "ott.h"

/* The dissertation's threshold, in percent of the maximum queuing delay. */
#define SYNCTCP_PQLEN_DEFAULT_PCT	50U

struct synctcp_pqlen {
	bool seen_loss;		/* a segment has been lost: decisions enabled */
};

/* A segment was lost: enable decisions if @q has measured the episode. */
static inline void synctcp_pqlen_on_loss(struct synctcp_pqlen *d,
					 const struct synctcp_qdelay *q)
{
	if (synctcp_qdelay_valid(q))
		d->seen_loss = true;
}

/* The OTT moved to a new base: its max qdelay starts over, so must we. */
static inline void synctcp_pqlen_rebase(struct synctcp_pqlen *d)
{
	d->seen_loss = false;
}

bool synctcp_pqlen_congested(const struct synctcp_pqlen *d,
			     const struct synctcp_qdelay *q, u32 thresh_pct);

#endif /* SYNCTCP_PQLEN_H */
