/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Variant "best"'s two modes and its base probe, shared by tcp_sync and
 * tcp_mixreact (docs/coexistence.md has the design and the figures).
 *
 * Low-queue mode (the default): the flow keeps the queue below its
 * threshold T (a share of the largest queuing delay, the full queue M).
 * Flows that do so leave the queue below T most of the time.  A flow that
 * shares the bottleneck with loss-based ones (CUBIC, Reno) cannot: they
 * fill the queue whatever it does, and a delay-based flow that keeps
 * yielding starves (0.03 of its fair share against one CUBIC flow).
 *
 * Competing mode (only where enabled: synctcp_mode_init()'s @compete, the
 * modules' parameter compete, off by default): entered when every queuing
 * delay the flow measured for SYNCTCP_MODE_HIGH_MIN (at least
 * SYNCTCP_MODE_HIGH_RTTS round trips) was at least max(T, M / 2), which
 * flows in low-queue mode seldom sustain (but see mode.c): the
 * flow then reacts to losses only, as Reno.  It leaves when a loss shows
 * it alone: after its own halving a flow alone leaves a queue of
 * max(0, (M - B) / 2) (B the base round trip; the window was B + M, half
 * of it is (B + M) / 2); loss-based neighbours keep theirs (CUBIC keeps
 * 70% of its window), so the smallest queuing delay of the round trips
 * after the loss stays above that.  If it is within M / 8 of it, the flow
 * is alone, or among its own, and SYNCTCP_MODE_NEED_MIN such losses in a
 * row take it back to low-queue mode (one was not enough: the smallest
 * delay of a recovery next to CUBIC on a 2-BDP buffer once looked alone,
 * and the flow yielded for 11.5 s before it competed again).  A flow that is back
 * in competing mode within SYNCTCP_MODE_BACK_MIN (at least
 * SYNCTCP_MODE_BACK_RTTS round trips) of leaving it had left
 * on a loss its neighbours happened to share: it then needs twice as many
 * such losses in a row to leave (up to SYNCTCP_MODE_NEED_MAX), and
 * SYNCTCP_MODE_NEED_MIN again after a stay of that long outside.
 *
 * Base probe (low-queue mode): a flow that arrives at a standing queue
 * takes that queue for its base, measures every queue that much short,
 * and takes more than its share; the flows that were there yield to it.
 * When the queue has not dipped below T / 4 for SYNCTCP_MODE_PROBE_MIN
 * (at least SYNCTCP_MODE_PROBE_RTTS round trips), the flow halves its
 * window once (as BBR's ProbeRTT, LEDBAT++'s slowdowns).  Flows that share
 * the queue see its dips together, so their probes come together, the
 * queue empties, and every flow sees the true base.  A latecomer's dips
 * are measured against the standing queue it took for its base, so it
 * also probes once SYNCTCP_MODE_FIRST_MIN (at least SYNCTCP_MODE_PROBE_RTTS
 * round trips) after its detector came on, dips or not: on latecomer (a
 * second MixReact flow 30 s after the first) the newcomer took a 28 ms
 * queue for its base and held the first flow at cwnd 2 for 90 s.  A probe
 * halves: draining only the share the flow measured leaves the queue it
 * cannot see.
 */
#ifndef SYNCTCP_MODE_H
#define SYNCTCP_MODE_H

#include "ott.h"

#define SYNCTCP_MODE_HIGH_MIN_US	(1000U * 1000U)
#define SYNCTCP_MODE_HIGH_RTTS		4U
#define SYNCTCP_MODE_PROBE_MIN_US	(10U * 1000U * 1000U)
#define SYNCTCP_MODE_PROBE_RTTS		8U
#define SYNCTCP_MODE_FIRST_MIN_US	(2U * 1000U * 1000U)
#define SYNCTCP_MODE_BACK_MIN_US	(30U * 1000U * 1000U)
#define SYNCTCP_MODE_BACK_RTTS		24U
#define SYNCTCP_MODE_NEED_MIN		2U
#define SYNCTCP_MODE_NEED_MAX		8U

/* What synctcp_mode_sample() asks of the flow. */
enum synctcp_mode_event {
	SYNCTCP_MODE_NONE = 0,
	SYNCTCP_MODE_ENTER = 1,		/* competing from now */
	SYNCTCP_MODE_LEAVE = 2,		/* low-queue mode from now */
	SYNCTCP_MODE_PROBE = 3,		/* drain the flow's share of the queue */
};

struct synctcp_mode {
	u32 high_since;		/* us >> 10 since when the queue stood high */
	u32 last_dip;		/* us >> 10 of the last dip below T / 4 */
	u32 on_since;		/* us >> 10 when the detector came on */
	u32 check_from;		/* the round trips after a loss, us >> 10 */
	u32 check_until;
	u32 check_min_us;	/* the smallest queuing delay in them */
	u32 expect_us;		/* what the flow alone leaves after halving */
	u32 left_at;		/* us >> 10 when competing mode was last left */
	u16 entries;		/* times competing mode was entered (wraps) */
	u16 probes;		/* base probes (wraps) */
	u8 need;		/* losses in a row that show it alone, to leave */
	u8 alone;		/* such losses so far */
	u8 compete:1,		/* it may be entered */
	   competing:1,		/* competing mode */
	   high:1,		/* high_since is in force */
	   checking:1,		/* a loss is being checked */
	   started:1,		/* last_dip has been set */
	   left:1,		/* left_at is in force */
	   probed:1;		/* the first probe is done */
};

void synctcp_mode_init(struct synctcp_mode *m, bool compete);
enum synctcp_mode_event synctcp_mode_sample(struct synctcp_mode *m,
					    const struct synctcp_qdelay *q,
					    u64 now_us, u32 srtt_us,
					    u32 thresh_pct);
void synctcp_mode_loss(struct synctcp_mode *m, const struct synctcp_qdelay *q,
		       u64 now_us, u32 srtt_us, u32 min_rtt_us);

#endif /* SYNCTCP_MODE_H */
