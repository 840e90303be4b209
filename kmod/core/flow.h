/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-ACK pipeline the Sync-TCP modules share, before their own
 * detector and reaction (Weigle 2003, sections 3.3-3.5):
 *
 *   ACK --> OTT sample (option | RFC 7323 TS | RTT) --> queuing-delay
 *           synctcp_flow_sample()                       estimator (ott.c)
 *       --> cwnd follows the ACK path's delay (variant "best", revcomp.c)
 *           synctcp_flow_follow_reverse()
 *
 * Kernel-independent: the module glue fills a struct synctcp_ack from the
 * socket and the ACK, and applies what comes back; the user-space tests,
 * fuzzers and the per-ACK bench drive exactly this code.
 */
#ifndef SYNCTCP_FLOW_H
#define SYNCTCP_FLOW_H

#include "synctcp_compat.h"
#include "ott.h"
#include "mode.h"
#include "revcomp.h"

/*
 * Which OTT sources a connection may use (module parameter "source").  The
 * one-way-timestamp option exists only in kernels with the tcp_option/
 * patches; elsewhere "auto" starts at RFC 7323 timestamps.
 */
enum synctcp_source_mode {
	SYNCTCP_SOURCE_AUTO,	/* option, else timestamps, else RTT */
	SYNCTCP_SOURCE_RTT,	/* always RTT (for comparison runs) */
	SYNCTCP_SOURCE_TS,	/* timestamps even when the option is there */
};

/*
 * Which version of the algorithm a connection runs (module parameter
 * "variant"): "best", the default, the one measured best here, each of its
 * departures from the dissertation listed in the module's header and in
 * docs; "paper" the dissertation's algorithm, for runs that reproduce it.
 */
enum synctcp_variant {
	SYNCTCP_VARIANT_BEST,
	SYNCTCP_VARIANT_PAPER,
};

/* What the kernel tells the cores about one ACK (filled by the glue). */
struct synctcp_ack {
	u64 now_us;		/* local clock (tcp_mstamp) */
	u64 wall_ns;		/* CLOCK_REALTIME (ns), 0: not read (mode.h) */
	s32 rtt_us;		/* the ACK's RTT sample (us), < 0: none */
	u32 pkts_acked;		/* segments it acknowledged, cumulatively or SACKed */
	u32 srtt_us;		/* smoothed RTT (us), 0: unknown */
	u32 min_rtt_us;		/* smallest RTT sample (us), 0: unknown */
	u32 tsval;		/* its RFC 7323 TSval, if has_tsval */
	s32 owts_ott_us;	/* the option's forward OTT (us), if has_owts */
	u32 snd_una;		/* first unacknowledged sequence number */
	u32 snd_nxt;		/* first sequence number not yet sent */
	u32 cwnd;		/* segments */
	u32 max_flight;		/* most segments in flight in the last round */
	u32 clamp;		/* largest cwnd allowed */
	u8 ts_ok:1,		/* timestamps were negotiated */
	   has_tsval:1,		/* the ACK carries a TSval */
	   has_owts:1,		/* the ACK echoes the option's OTT */
	   cwnd_limited:1,	/* cwnd limited the flow in the last round */
	   ca_open:1;		/* cwnd may change now (TCP_CA_Open) */
};

/* synctcp_flow.flags */
#define SYNCTCP_FLOW_TS_UNFIT	0x01	/* the peer's TS clock fits no known rate */

/* One connection's OTT sampling, estimator and reverse compensation. */
struct synctcp_flow {
	struct synctcp_tsclock clock;	/* RFC 7323 OTT sampler */
	struct synctcp_qdelay q;	/* min/max OTT, queuing delay */
	struct synctcp_revcomp rev;	/* reverse-path compensation */
	struct synctcp_mode mode;	/* low-queue or competing (best) */
	s64 ott_us;			/* this ACK's OTT sample, as measured */
	u8 source;			/* enum synctcp_ott_source */
	u8 variant;			/* enum synctcp_variant */
	u8 flags;			/* SYNCTCP_FLOW_* */
};

void synctcp_flow_init(struct synctcp_flow *f, u8 variant);
void synctcp_flow_seed(struct synctcp_flow *f, u32 tsval, u64 now_us);
u8 synctcp_flow_choose_source(const struct synctcp_ack *a, unsigned int mode);
enum synctcp_ott_result synctcp_flow_sample(struct synctcp_flow *f,
					    const struct synctcp_ack *a,
					    unsigned int mode);
u32 synctcp_flow_follow_reverse(struct synctcp_flow *f,
				const struct synctcp_ack *a,
				enum synctcp_ott_result res);
u32 synctcp_flow_tick_us(const struct synctcp_flow *f);

static inline bool synctcp_flow_best(const struct synctcp_flow *f)
{
	return f->variant == SYNCTCP_VARIANT_BEST;
}

#endif /* SYNCTCP_FLOW_H */
