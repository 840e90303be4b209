// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz Sync-TCP(Pcwnd): SyncPQlen's verdict on arbitrary estimator states
 * and SyncPcwnd's reaction to arbitrary ACK/loss sequences in a sequence
 * space that wraps.  Invariants: a halving never raises cwnd and leaves
 * at least min(cwnd, 2); ssthresh >= 2; at most one halving until snd_una
 * passes the snd_nxt of the last one; counters only grow.
 */
#include "fuzz_input.h"
#include "ott.h"
#include "pqlen.h"
#include "pcwnd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct synctcp_pcwnd r = { 0 };
	struct synctcp_qdelay q;
	struct synctcp_cwnd w;
	u32 una = fuzz_u32(&in), nxt, hold_seq = 0;
	bool holding = false;	/* the model of the once-per-RTT hold */
	unsigned int i;

	nxt = una + fuzz_u16(&in);
	w.cwnd = fuzz_u32(&in);
	w.ssthresh = fuzz_u32(&in);
	synctcp_qdelay_init(&q, false);
	for (i = 0; i < 4096 && in.left; i++) {
		u8 op = fuzz_u8(&in);
		u32 before_cwnd = w.cwnd, signals = r.signals;
		bool congested;

		switch (op & 3) {
		case 0:		/* an ACK */
			una += op & 4 ? fuzz_u32(&in) : fuzz_u16(&in);
			nxt = una + fuzz_u16(&in);
			synctcp_qdelay_update(&q, (s32)fuzz_u32(&in));
			congested = synctcp_pqlen_congested(&q,
							    1 + fuzz_u8(&in) % 100);
			if (holding && !before(una, hold_seq))
				holding = false;
			switch (synctcp_pcwnd_react(&r, congested, una, nxt,
						    &w)) {
			case SYNCTCP_PCWND_HALVED:
				FUZZ_ASSERT(congested && !holding);
				FUZZ_ASSERT(w.cwnd <= before_cwnd);
				FUZZ_ASSERT(w.cwnd >= SYNCTCP_MIN_CWND ||
					    w.cwnd == before_cwnd);
				FUZZ_ASSERT(w.ssthresh == w.cwnd);
				holding = true;
				hold_seq = nxt;
				break;
			case SYNCTCP_PCWND_HOLD:
				FUZZ_ASSERT(congested && holding);
				FUZZ_ASSERT(w.cwnd == before_cwnd);
				break;
			case SYNCTCP_PCWND_GROW:
				FUZZ_ASSERT(!congested);
				w.cwnd += op >> 4;	/* the caller's growth */
				break;
			}
			FUZZ_ASSERT(r.signals - signals == (u32)congested);
			FUZZ_ASSERT(r.holding == holding);
			break;
		case 1: {	/* a loss: ssthresh, then recovery's hold */
			u32 ss = synctcp_pcwnd_ssthresh(&r, una, w.cwnd);

			FUZZ_ASSERT(ss >= SYNCTCP_MIN_CWND);
			FUZZ_ASSERT(ss <= w.cwnd || ss == SYNCTCP_MIN_CWND);
			if (holding && !before(una, hold_seq))
				holding = false;
			synctcp_qdelay_on_loss(&q);
			synctcp_pcwnd_hold(&r, nxt);
			holding = true;
			hold_seq = nxt;
			w.cwnd = ss;
			break;
		}
		case 2:		/* cwnd set from outside (undo, clamp) */
			w.cwnd = fuzz_u32(&in);
			break;
		default:
			synctcp_qdelay_reset(&q);
			break;
		}
	}
	return 0;
}
