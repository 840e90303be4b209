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
 * modules' parameter compete, off by default): a flow is a candidate when
 * every queuing delay it measured for SYNCTCP_MODE_HIGH_MIN (at least
 * SYNCTCP_MODE_HIGH_RTTS round trips) was at least max(T, M / 2), which
 * flows in low-queue mode seldom sustain (but see mode.c).  A drain
 * decides, one that every candidate and competing flow of its kind makes
 * at the same moment: the wall clock's epochs, multiples of
 * SYNCTCP_MODE_EPOCH (Sync-TCP's hosts share a clock; every 2^k-th epoch
 * on a path whose drain would take more than 1/SYNCTCP_MODE_DRAIN_SHARE
 * of the time).  The flow holds cwnd at SYNCTCP_MODE_DRAIN_CWND for
 * SYNCTCP_MODE_DRAIN_MIN (at least SYNCTCP_MODE_DRAIN_RTTS round trips),
 * then takes its window back, as BBR's ProbeRTT does.  Among flows of its
 * own kind the queue empties and the flow sees a dip below T / 4; next to
 * loss-based flows it does not, unless they have just halved or fill less
 * than the link.  A candidate whose drain shows no dip enters competing
 * mode and reacts to losses only, as Reno; with a dip it stays out (on
 * weigle-ftp-full, flows that entered on the standing queue alone left on
 * a drain and entered again within seconds).  SYNCTCP_MODE_NEED_MIN
 * drains in a row with a dip take a competing flow back to low-queue
 * mode, with half its window.  A flow that is back
 * in competing mode within SYNCTCP_MODE_BACK_MIN (at least
 * SYNCTCP_MODE_BACK_RTTS round trips) of leaving it had left on dips its
 * neighbours happened to allow: it then needs twice as many in a row to
 * leave (up to SYNCTCP_MODE_NEED_MAX), and SYNCTCP_MODE_NEED_MIN again
 * after a stay of that long outside.
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
#define SYNCTCP_MODE_EPOCH_NS		(10ULL * 1000ULL * 1000ULL * 1000ULL)
#define SYNCTCP_MODE_EPOCHS_MAX		64U
#define SYNCTCP_MODE_DRAIN_MIN_US	(500U * 1000U)
#define SYNCTCP_MODE_DRAIN_RTTS		2U
#define SYNCTCP_MODE_DRAIN_SHARE	20U
#define SYNCTCP_MODE_DRAIN_CWND		2U

/* What synctcp_mode_sample() asks of the flow. */
enum synctcp_mode_event {
	SYNCTCP_MODE_NONE = 0,
	SYNCTCP_MODE_ENTER = 1,		/* competing from now */
	SYNCTCP_MODE_LEAVE = 2,		/* low-queue mode from now */
	SYNCTCP_MODE_PROBE = 3,		/* drain the flow's share of the queue */
	SYNCTCP_MODE_DRAIN = 4,		/* an epoch's drain (synctcp_mode_cwnd()) */
};

struct synctcp_mode {
	u32 high_since;		/* us >> 10 since when the queue stood high */
	u32 last_dip;		/* us >> 10 of the last dip below T / 4 */
	u32 on_since;		/* us >> 10 when the detector came on */
	u32 left_at;		/* us >> 10 when competing mode was last left */
	u32 drain_until;	/* us >> 10 when the drain ends */
	u32 drain_hold;		/* its length, us >> 10 */
	u32 drain_cwnd;		/* cwnd before it (halved by a loss since) */
	u64 epoch_end_ns;	/* wall clock: the current epoch's end, 0: none */
	u16 entries;		/* times competing mode was entered (wraps) */
	u16 probes;		/* base probes (wraps) */
	u16 drains;		/* epoch drains (wraps) */
	u8 need;		/* drains in a row with a dip, to leave */
	u8 alone;		/* such drains so far */
	u16 compete:1,		/* it may be entered */
	    competing:1,	/* competing mode */
	    candidate:1,	/* the next epoch's drain decides it */
	    high:1,		/* high_since is in force */
	    started:1,		/* last_dip has been set */
	    left:1,		/* left_at is in force */
	    probed:1,		/* the first probe is done */
	    draining:1,		/* an epoch's drain is on */
	    saved:1,		/* drain_cwnd is in force */
	    dipped:1,		/* the queue dipped in this drain */
	    restore:1,		/* the drain is over: cwnd back */
	    halve:1;		/* ... and half of it: competing mode left */
};

void synctcp_mode_init(struct synctcp_mode *m, bool compete);
enum synctcp_mode_event synctcp_mode_sample(struct synctcp_mode *m,
					    const struct synctcp_qdelay *q,
					    u64 now_us, u64 wall_ns,
					    u32 srtt_us, u32 thresh_pct);
void synctcp_mode_loss(struct synctcp_mode *m);
u32 synctcp_mode_drain_cwnd(struct synctcp_mode *m, u64 now_us, u32 cwnd);

/**
 * synctcp_mode_cwnd - the window an epoch's drain allows
 * @m: the mode
 * @now_us: local clock (us)
 * @cwnd: the window the algorithm set
 *
 * Return: @cwnd, but during a drain and after it synctcp_mode_drain_cwnd()'s.
 */
static inline u32 synctcp_mode_cwnd(struct synctcp_mode *m, u64 now_us,
				    u32 cwnd)
{
	if (!m->draining && !m->restore)
		return cwnd;
	return synctcp_mode_drain_cwnd(m, now_us, cwnd);
}

#endif /* SYNCTCP_MODE_H */
