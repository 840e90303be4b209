// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz Sync-TCP(MixReact): SyncMix's averages and trends over arbitrary
 * queuing-delay samples, restarts and losses, and SyncMixReact's decisions
 * and growth over arbitrary cwnd, clamp and ACK sizes, in the order the
 * module calls them.  Invariants: trend and region in range; a decision
 * never leaves cwnd above the clamp or a cut below min(cwnd, 2); ssthresh
 * >= 2 after a cut; growth never lowers cwnd nor passes the clamp.
 */
#include "fuzz_input.h"
#include "ott.h"
#include "syncmix.h"
#include "mixreact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct synctcp_syncmix m;
	struct synctcp_mixreact r;
	struct synctcp_qdelay q;
	struct synctcp_cwnd w;
	u32 clamp, preloss;
	u64 now = 0;
	unsigned int i;

	synctcp_qdelay_init(&q, false);
	synctcp_syncmix_init(&m);
	synctcp_mixreact_reset(&r);
	w.cwnd = fuzz_u32(&in);
	w.ssthresh = fuzz_u32(&in);
	clamp = fuzz_u32(&in) | 2;
	preloss = fuzz_u16(&in) * 16U;
	for (i = 0; i < 4096 && in.left; i++) {
		u8 op = fuzz_u8(&in);
		u32 before = w.cwnd;
		bool fresh;

		switch (op & 3) {
		case 0:		/* pkts_acked then cong_avoid */
			now += fuzz_u16(&in);
			if (synctcp_qdelay_sample(&q, (s32)fuzz_u32(&in), now,
						  op & 4 ? 0 : fuzz_u32(&in)) ==
			    SYNCTCP_OTT_SKIP)
				break;
			fresh = synctcp_syncmix_update(&m, &q, preloss);
			FUZZ_ASSERT(m.trend <= 2 && m.region <= 3);
			FUZZ_ASSERT(m.n_avg <= SYNCTCP_MIX_WINDOW);
			if (fresh) {
				synctcp_mixreact_decide(&r, m.trend, m.region,
							&w, clamp);
				FUZZ_ASSERT(r.action <= SYNCTCP_MIXREACT_KEEP);
				if (synctcp_mixreact_is_decrease(r.action)) {
					FUZZ_ASSERT(w.cwnd <= clamp);
					FUZZ_ASSERT(w.cwnd >= SYNCTCP_MIN_CWND ||
						    w.cwnd >= before ||
						    w.cwnd == clamp);
					FUZZ_ASSERT(w.ssthresh >=
						    SYNCTCP_MIN_CWND);
				}
			}
			if (!synctcp_mixreact_follows_reno(&r)) {
				before = w.cwnd;
				synctcp_mixreact_grow(&r, fuzz_u16(&in), &w,
						      clamp);
				FUZZ_ASSERT(w.cwnd >= before || w.cwnd == clamp);
				FUZZ_ASSERT(w.cwnd <= clamp || w.cwnd == before);
			}
			break;
		case 1:		/* recovery / RTO */
			if (op & 4)
				synctcp_syncmix_restart(&m);
			synctcp_qdelay_on_loss(&q);
			synctcp_mixreact_reset(&r);
			break;
		case 2:		/* the stack changed cwnd or the clamp */
			w.cwnd = fuzz_u32(&in);
			if (op & 4)
				clamp = fuzz_u32(&in) | 2;
			break;
		default:	/* rebase */
			synctcp_qdelay_reset(&q);
			synctcp_syncmix_restart(&m);
			break;
		}
	}
	return 0;
}
