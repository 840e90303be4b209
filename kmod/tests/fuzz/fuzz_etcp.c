// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz E-TCP's core: arbitrary parameters (in their valid ranges), ACKs
 * with any numbers of packets acknowledged and lost, sequence numbers that
 * wrap, clamps, ECN signals, recovery episodes and undos.  Invariants: W
 * stays within [2, 2^24] packets once a loss was seen (and within
 * [1, 2^24] before), cwnd = W, the phase is valid, the pacing rate does
 * not overflow (UBSan) for any mss and srtt.
 */
#include "fuzz_input.h"
#include "etcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct etcp_params p;
	struct etcp e;
	u32 una, nxt;
	unsigned int i;

	p.b = ETCP_B_MIN + fuzz_u32(&in) % ETCP_B_MAX;
	p.p0_ppm = ETCP_P0_PPM_MIN + fuzz_u32(&in) % ETCP_P0_PPM_MAX;
	FUZZ_ASSERT(etcp_b_valid(p.b) && etcp_p0_ppm_valid(p.p0_ppm));
	etcp_start(&e, fuzz_u32(&in), fuzz_u8(&in) & 1);
	una = fuzz_u32(&in);
	nxt = una + fuzz_u16(&in);
	for (i = 0; i < 4096 && in.left; i++) {
		u8 op = fuzz_u8(&in);

		switch (op & 3) {
		case 0: {
			struct etcp_ack a = {
				.acked = op & 4 ? fuzz_u32(&in) : fuzz_u8(&in),
				.losses = op & 8 ? fuzz_u32(&in) : fuzz_u8(&in) & 7,
				.w_clamp = op & 16 ? fuzz_u32(&in) : ETCP_W_MAX,
				.may_grow = op & 32,
			};

			una += fuzz_u16(&in);
			nxt = una + fuzz_u16(&in);
			a.snd_una = una;
			a.snd_nxt = nxt;
			etcp_on_ack(&e, &p, &a);
			break;
		}
		case 1:
			etcp_episode_begin(&e);
			if (op & 4)
				etcp_congestion_signal(&e);
			break;
		case 2:
			etcp_undo(&e, op & 4 ? fuzz_u32(&in) : ETCP_W_MAX);
			break;
		default: {
			u32 mss = fuzz_u16(&in), srtt = fuzz_u32(&in);

			/* the 128-bit multiply-divide against the long way */
			FUZZ_ASSERT(etcp_pacing_rate(&e, mss, srtt) ==
				    (u64)(((__uint128_t)e.w * mss * 1000000) /
					  ((u64)(srtt ? srtt : 1) << ETCP_W_SHIFT)));
			break;
		}
		}
		FUZZ_ASSERT(e.phase <= ETCP_AVOID);
		FUZZ_ASSERT(e.w <= (u64)ETCP_W_MAX << ETCP_W_SHIFT);
		FUZZ_ASSERT(e.w >= ETCP_W_UNIT);
		FUZZ_ASSERT(etcp_cwnd(&e) >= 1 && etcp_cwnd(&e) <= ETCP_W_MAX);
	}
	return 0;
}
