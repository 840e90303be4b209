// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz each Sync-TCP module's whole per-ACK path (core/sync_cc.c and
 * core/mixreact_cc.c over core/flow.c) with arbitrary ACK sequences: any
 * TSval, RTT, clock and sequence steps, any srtt, min RTT and flight, the
 * flow limited by cwnd or not, loss recovery, RTOs, idles, either variant
 * and OTT source.  The caller's side is modelled as the kernel does it:
 * Reno's growth only when cwnd-limited, Reno's halving on a loss.
 *
 * Invariants (issue 28), on every ACK:
 *  - cwnd never grows on an ACK that carries no evidence of more capacity:
 *    not when the flow was not cwnd-limited, not outside TCP_CA_Open;
 *  - a rise leaves cwnd at most max(cwnd before, 2 x the flight the path
 *    carried in the last round): over a connection, cwnd <= max(its first
 *    cwnd, 2 x the largest flight it carried), or 2 more than Reno's own
 *    growth of one segment per ACK allows;
 *  - cwnd stays within [1, clamp] once there; a cut never raises it;
 *  - an epoch's drain in competing mode (core/mode.h, the wall clock read
 *    as the glue reads it) holds cwnd at 2 or below, and gives back no
 *    more than the window it took;
 *  - qdelay <= max qdelay; nothing divides by zero or overflows (UBSan).
 */
#include "fuzz_input.h"
#include "mixreact_cc.h"
#include "sync_cc.h"

#define MSS	1448U
/* CLOCK_REALTIME at local time 0 (ns): the glue reads it in competing mode */
#define WALL0_NS	(1796000000ULL * 1000000000ULL)

struct conn {
	struct synctcp_sync s;
	struct synctcp_mix m;
	struct synctcp_ack a;
	u32 cwnd, ssthresh, clamp;
	u32 max_flight_seen;	/* the largest flight the path carried */
	u32 reno_allow;		/* growth Reno's caller may have made */
	bool mix;
};

/* Reno's growth as tcp_reno_cong_avoid() makes it: only when cwnd-limited. */
static void reno_grow(struct conn *c, u32 acked)
{
	if (!c->a.cwnd_limited || !acked)
		return;
	if (c->cwnd < c->ssthresh)
		c->cwnd += acked;
	else if (c->cwnd)
		c->cwnd += 1;
	c->reno_allow += acked;
	if (c->cwnd > c->clamp)
		c->cwnd = c->clamp;
}

/* The hooks an ACK runs: pkts_acked, then cong_avoid. */
static void conn_ack(struct conn *c, unsigned int mode)
{
	struct synctcp_mode *md = c->mix ? &c->m.flow.mode : &c->s.flow.mode;
	u32 before = c->cwnd, after, taken;
	struct synctcp_cwnd w;

	c->a.cwnd = c->cwnd;
	c->a.clamp = c->clamp;
	if (c->a.max_flight > c->max_flight_seen)
		c->max_flight_seen = c->a.max_flight;
	c->a.wall_ns = md->competing || md->candidate ? WALL0_NS + c->a.now_us * 1000 : 0;
	after = c->mix ? synctcp_mix_on_ack(&c->m, &c->a, mode, 10000) :
			 synctcp_sync_on_ack(&c->s, &c->a, mode, 50);
	if (after > before) {
		FUZZ_ASSERT(c->a.cwnd_limited && c->a.ca_open);
		FUZZ_ASSERT(after <= 2 * (u64)c->a.max_flight);
		FUZZ_ASSERT(after <= c->clamp);
	}
	FUZZ_ASSERT(after >= 1 || before == 0);
	taken = md->saved ? md->drain_cwnd : after;
	c->cwnd = synctcp_mode_cwnd(md, c->a.now_us, after);
	if (md->draining)
		FUZZ_ASSERT(c->cwnd <= SYNCTCP_MODE_DRAIN_CWND);
	if (c->cwnd > after)
		FUZZ_ASSERT(c->cwnd <= taken);
	if (!c->a.ca_open || md->draining)
		return;		/* cong_avoid is not called in recovery, and
				 * holds cwnd in a drain
				 */
	w.cwnd = c->cwnd;
	w.ssthresh = c->ssthresh;
	before = c->cwnd;
	if (c->mix) {
		if (synctcp_mix_cong_avoid(&c->m, c->a.snd_una, c->a.snd_nxt,
					   c->a.srtt_us, c->a.pkts_acked,
					   c->a.cwnd_limited, c->clamp, &w)) {
			reno_grow(c, c->a.pkts_acked);
			return;
		}
		if (w.cwnd > before) {
			FUZZ_ASSERT(c->a.cwnd_limited);
			c->reno_allow += w.cwnd - before;
		}
		c->cwnd = w.cwnd;
		c->ssthresh = w.ssthresh;
		return;
	}
	switch (synctcp_sync_react(&c->s, c->a.snd_una, c->a.snd_nxt,
				   c->a.srtt_us, &w)) {
	case SYNCTCP_PCWND_HALVED:
		FUZZ_ASSERT(w.cwnd <= before);
		c->cwnd = w.cwnd;
		c->ssthresh = w.ssthresh;
		break;
	case SYNCTCP_PCWND_GROW:
		reno_grow(c, c->a.pkts_acked);
		break;
	case SYNCTCP_PCWND_HOLD:
		FUZZ_ASSERT(w.cwnd == before);
		break;
	}
}

/* Loss recovery begins (ssthresh(), set_state(Recovery or Loss)). */
static void conn_loss(struct conn *c, bool rto)
{
	if (c->mix) {
		synctcp_mix_on_loss(&c->m, rto);
		c->ssthresh = max_t(u32, c->cwnd >> 1, 2);
	} else {
		c->ssthresh = synctcp_sync_ssthresh(&c->s, c->a.snd_una, c->cwnd);
		synctcp_sync_on_loss(&c->s, c->a.snd_nxt);
	}
	FUZZ_ASSERT(c->ssthresh >= 2);
	c->cwnd = rto ? 1 : min_t(u32, c->cwnd, c->ssthresh);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	static struct conn c;
	u8 setup = fuzz_u8(&in);
	u8 variant = setup & 1 ? SYNCTCP_VARIANT_PAPER : SYNCTCP_VARIANT_BEST;
	unsigned int mode = (setup >> 1) % 3, i;
	u32 first_cwnd;

	memset(&c, 0, sizeof(c));
	c.mix = setup & 8;
	if (c.mix)
		synctcp_mix_init(&c.m, variant);
	else
		synctcp_sync_init(&c.s, variant);
	/* the compete parameter (core/mode.h) */
	(c.mix ? &c.m.flow : &c.s.flow)->mode.compete = !!(setup & 128);
	if (setup & 16) {
		struct synctcp_flow *f = c.mix ? &c.m.flow : &c.s.flow;

		synctcp_flow_seed(f, fuzz_u32(&in), fuzz_u32(&in));
		if (setup & 32)
			synctcp_qdelay_inherit(&f->q, fuzz_u32(&in));
	}
	c.cwnd = 1 + fuzz_u16(&in) % 2000;
	c.ssthresh = 2 + fuzz_u16(&in);
	c.clamp = setup & 64 ? 1 + fuzz_u32(&in) % (1U << 30) : 1U << 30;
	c.cwnd = min_t(u32, c.cwnd, c.clamp);
	first_cwnd = c.cwnd;
	c.a = (struct synctcp_ack){
		.now_us = fuzz_u32(&in), .tsval = fuzz_u32(&in),
		.snd_una = fuzz_u32(&in), .rtt_us = 1 + fuzz_u16(&in),
		.ts_ok = !!(setup & 128), .has_tsval = !!(setup & 128),
	};
	for (i = 0; i < 4096 && in.left; i++) {
		u8 op = fuzz_u8(&in), f = fuzz_u8(&in);
		struct synctcp_qdelay *q = c.mix ? &c.m.flow.q : &c.s.flow.q;

		switch (op & 7) {
		case 0: case 1: case 2: case 3: case 4:
			/* an ACK: small steps mostly, any step sometimes */
			c.a.now_us += op & 8 ? fuzz_u32(&in) : fuzz_u16(&in);
			c.a.tsval += op & 16 ? fuzz_u32(&in) : fuzz_u8(&in);
			if (op & 32)
				c.a.rtt_us = (s32)fuzz_u32(&in);
			else
				c.a.rtt_us = (s32)(fuzz_u16(&in) * 16U);
			c.a.snd_una += op & 64 ? fuzz_u32(&in) :
				       (f & 3) * MSS;
			c.a.pkts_acked = f & 3;
			c.a.snd_nxt = c.a.snd_una + fuzz_u16(&in) * MSS;
			c.a.srtt_us = op & 128 ? fuzz_u32(&in) : fuzz_u16(&in) * 8U;
			c.a.min_rtt_us = f & 4 ? fuzz_u32(&in) : fuzz_u16(&in);
			c.a.max_flight = f & 8 ? fuzz_u32(&in) : c.cwnd;
			c.a.cwnd_limited = !!(f & 16);
			c.a.ca_open = !(f & 32);
			c.a.has_owts = !!(f & 64);
			c.a.owts_ott_us = (s32)fuzz_u32(&in);
			c.a.has_tsval = c.a.ts_ok && !(f & 128);
			conn_ack(&c, mode);
			break;
		case 5:
			conn_loss(&c, op & 8);
			break;
		case 6:		/* an idle after which cwnd restarts */
			c.a.now_us += (u64)fuzz_u32(&in) << (op >> 5);
			if (c.mix)
				synctcp_mix_restart(&c.m);
			break;
		default:	/* cwnd set from outside: undo, a route's clamp */
			c.cwnd = min_t(u32, 1 + fuzz_u16(&in), c.clamp);
			first_cwnd = max_t(u32, first_cwnd, c.cwnd);
			break;
		}
		if (c.a.max_flight > c.max_flight_seen)
			c.max_flight_seen = c.a.max_flight;
		FUZZ_ASSERT(c.cwnd <= c.clamp);
		FUZZ_ASSERT((u64)c.cwnd <= (u64)max_t(u32, first_cwnd,
						      2 * (u64)c.max_flight_seen > U32_MAX ?
						      U32_MAX : 2 * c.max_flight_seen) +
			    c.reno_allow + 2);
		if (synctcp_qdelay_valid(q))
			FUZZ_ASSERT(q->qdelay_us <= q->max_qdelay_us);
	}
	return 0;
}
