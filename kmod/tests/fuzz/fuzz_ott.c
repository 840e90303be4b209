// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the RFC 7323 OTT sampler and the queuing-delay estimator with
 * arbitrary ACK sequences: TSval, RTT and local-clock steps of any size
 * (reordering, jumps, wraps, idles), option OTTs of any value, losses,
 * resets, inherited maxima, ACKs the peer may have held, both estimators.
 * Invariants: qdelay <= max qdelay, both derived from min <= max, and max
 * qdelay never decreases between resets but at a path change (the base
 * moved up), and then to the full queue of the last loss, which it never
 * falls below; a REBASED sample is 0; the peer rate is never 0 and always
 * a known one; UNFIT comes once, and no sample after it.
 */
#include "fuzz_input.h"
#include "ott.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct synctcp_tsclock c;
	struct synctcp_qdelay q;
	u32 tsval, rtt, max_qdelay = 0;
	u64 now, now64 = 0;
	unsigned int i;
	bool unfit = false;

	synctcp_tsclock_init(&c);
	if (fuzz_u8(&in) & 1)
		synctcp_tsclock_seed(&c, fuzz_u32(&in), fuzz_u32(&in));
	synctcp_qdelay_init(&q, fuzz_u8(&in) & 1);
	tsval = fuzz_u32(&in);
	rtt = fuzz_u32(&in);
	now = fuzz_u32(&in);
	for (i = 0; i < 4096 && in.left; i++) {
		u8 op = fuzz_u8(&in);
		enum synctcp_ott_result r;
		s64 ott = 0, min_ott;
		u32 bound;

		switch (op & 7) {
		case 0: case 1: case 2: case 3: {
			/* an ACK: small forward steps mostly, any step sometimes */
			u32 dv = op & 8 ? fuzz_u32(&in) : fuzz_u8(&in);
			u32 de = op & 16 ? fuzz_u32(&in) : fuzz_u16(&in);
			u32 dn = op & 32 ? fuzz_u32(&in) : fuzz_u16(&in);

			tsval += op & 64 ? -dv : dv;
			rtt = op & 128 ? rtt + de : de;
			now += dn;
			now64 += dn;
			r = synctcp_ott_ts_sample(&c, tsval, now, rtt, &ott);
			FUZZ_ASSERT(synctcp_known_clock_hz(c.peer_hz));
			FUZZ_ASSERT(!unfit || r == SYNCTCP_OTT_SKIP);
			if (r == SYNCTCP_OTT_UNFIT) {
				FUZZ_ASSERT(c.unfit);
				unfit = true;
				continue;
			}
			if (r == SYNCTCP_OTT_REBASED) {
				FUZZ_ASSERT(ott == 0);
				synctcp_qdelay_reset(&q);
				max_qdelay = 0;
			}
			if (r == SYNCTCP_OTT_SKIP)
				continue;
			break;
		}
		case 4:
			/* an option sample: any s32 OTT */
			ott = (s32)fuzz_u32(&in);
			now64 += fuzz_u16(&in);
			break;
		case 5:
			synctcp_qdelay_on_loss(&q);
			continue;
		case 6:
			/* a reset, or a new connection's inherited maximum */
			synctcp_qdelay_reset(&q);
			max_qdelay = 0;
			if (op & 8)
				synctcp_qdelay_inherit(&q, fuzz_u32(&in));
			continue;
		default:
			/* an idle: up to 2^32 us */
			now64 += fuzz_u32(&in);
			continue;
		}
		min_ott = synctcp_qdelay_valid(&q) ? q.min_ott_us : S64_MAX;
		bound = synctcp_qdelay_bound_us(fuzz_u8(&in) & 1 ?
						fuzz_u32(&in) : 0);
		r = synctcp_qdelay_sample_held(&q, ott, now64, bound,
					       fuzz_u8(&in) & 1);
		FUZZ_ASSERT(r == SYNCTCP_OTT_SKIP || synctcp_qdelay_valid(&q));
		if (r == SYNCTCP_OTT_REBASED)
			max_qdelay = 0;
		/* only a path change lowers it, to the full queue at the loss */
		FUZZ_ASSERT(q.max_qdelay_us >= max_qdelay ||
			    (q.loss_seen && q.min_ott_us > min_ott));
		FUZZ_ASSERT(!q.loss_seen || q.loss_max_us <= q.max_qdelay_us);
		max_qdelay = q.max_qdelay_us;
		if (synctcp_qdelay_valid(&q)) {
			FUZZ_ASSERT(q.qdelay_us <= q.max_qdelay_us);
			FUZZ_ASSERT(q.min_ott_us <= q.max_ott_us);
		}
		FUZZ_ASSERT(q.rejects < SYNCTCP_QDELAY_MAX_REJECTS);
	}
	return 0;
}
