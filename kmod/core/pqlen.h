/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SyncPQlen (Weigle 2003, section 3.5.1): congestion is signalled when the
 * current queuing delay exceeds a percentage (50%) of the largest queuing
 * delay seen, but only once the flow has lost a segment, so that the
 * maximum reflects a full queue (struct synctcp_qdelay's loss_seen).
 */
#ifndef SYNCTCP_PQLEN_H
#define SYNCTCP_PQLEN_H

#include "ott.h"

/* The dissertation's threshold, in percent of the maximum queuing delay. */
#define SYNCTCP_PQLEN_DEFAULT_PCT	50U

bool synctcp_pqlen_congested(const struct synctcp_qdelay *q, u32 thresh_pct);
bool synctcp_pqlen_over(const struct synctcp_qdelay *q, u32 qdelay_us,
			u32 thresh_pct);
u32 synctcp_pqlen_room(const struct synctcp_qdelay *q, u32 thresh_pct);

#endif /* SYNCTCP_PQLEN_H */
