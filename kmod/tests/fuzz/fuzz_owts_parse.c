// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the one-way-timestamp option code of the kernel patch series: the
 * functions themselves are extracted from tcp_option/linux-6.1/ at build
 * time (extract_owts.py -> build/owts_gen.c), so this fuzzes the patch,
 * not a copy.  Around them, the option loop of Linux 6.1's
 * tcp_parse_options() (net/ipv4/tcp_input.c) with the patch's hunk for
 * truncated options, and the validation step of tcp_ack() that commits
 * the measured OTT (tcp_owts_store()).
 *
 * Each segment of the input: flags (established, negotiated, sysctl,
 * validated, receive timestamp), the clock, then up to 40 option bytes in
 * a buffer of exactly that size (ASan sees any read past the header).
 *
 * Invariants: a taken option has a sane OTT and echo; a segment never
 * both takes and rejects; an established connection that did not
 * negotiate the option never takes it; the OTT echoed changes only on a
 * validated segment that took a valid option; the counters add up.
 */
#include <stdbool.h>
#include <string.h>
#include "fuzz_input.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define USEC_PER_SEC		1000000L
#define NSEC_PER_USEC		1000L
#define TCPOPT_EOL		0
#define TCPOPT_NOP		1
#define TCPOPT_OWTS		253
#define TCPOPT_OWTS_MAGIC	0x5354
#define TCPOLEN_OWTS		12
#define READ_ONCE(x)		(x)

enum { LINUX_MIB_TCPOWTSIN, LINUX_MIB_TCPOWTSREJECTED, FUZZ_MIB_MAX };

struct net {
	unsigned long mib[FUZZ_MIB_MAX];
	struct { u8 sysctl_tcp_owts; } ipv4;
};

#define NET_INC_STATS(net, field)	(((struct net *)(net))->mib[field]++)

struct sk_buff {
	s64 tstamp;		/* ktime_t: CLOCK_REALTIME ns, or 0 */
};

struct tcp_options_received {
	s32 owts_ecr;
	s32 owts_seg_ott;
	s32 owts_rcv_ott;
	u8 saw_unknown:1, saw_owts:1, owts_bad:1, owts_ok:1, owts_rcv_ok:1;
};

struct tcp_sock {
	struct tcp_options_received rx_opt;
};

static u64 fuzz_real_ns;	/* ktime_get_real_ns() */

static u64 ktime_get_real_ns(void)
{
	return fuzz_real_ns;
}

static s64 ktime_to_ns(s64 kt)
{
	return kt;
}

static u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static u16 get_unaligned_be16(const void *p)
{
	const u8 *b = p;

	return (u16)(b[0] << 8 | b[1]);
}

static u32 get_unaligned_be32(const void *p)
{
	const u8 *b = p;

	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}

#include "owts_gen.c"

/* Linux 6.1's option loop, as patched; only the OWTS option is parsed. */
static void parse_options(const struct net *net, const struct sk_buff *skb,
			  struct tcp_options_received *opt_rx,
			  const unsigned char *ptr, int length, int estab)
{
	opt_rx->saw_unknown = 0;
	opt_rx->saw_owts = 0;
	opt_rx->owts_bad = 0;

	while (length > 0) {
		int opcode = *ptr++;
		int opsize;

		switch (opcode) {
		case TCPOPT_EOL:
			return;
		case TCPOPT_NOP:	/* Ref: RFC 793 section 3.1 */
			length--;
			continue;
		default:
			if (length < 2)
				return;
			opsize = *ptr++;
			if (opsize < 2) /* "silly options" */
				return;
			if (opsize > length) {
				/* don't parse partial options */
				if (tcp_is_owts_option(opcode, ptr, length))
					tcp_owts_reject(net, opt_rx);
				return;
			}
			switch (opcode) {
			case TCPOPT_OWTS:
				if (tcp_is_owts_option(opcode, ptr, opsize))
					tcp_parse_owts_option(net, skb, opt_rx,
							      ptr, opsize,
							      estab);
				else
					opt_rx->saw_unknown = 1;
				break;
			default:
				opt_rx->saw_unknown = 1;
			}
			ptr += opsize - 2;
			length -= opsize;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct tcp_sock tp;
	struct net net;
	unsigned int i;

	memset(&tp, 0, sizeof(tp));
	memset(&net, 0, sizeof(net));
	for (i = 0; i < 256 && in.left; i++) {
		u8 flags = fuzz_u8(&in);
		unsigned int len = fuzz_u8(&in) % 41, k;
		struct sk_buff skb = { 0 };
		unsigned long in0 = net.mib[LINUX_MIB_TCPOWTSIN];
		unsigned long rej0 = net.mib[LINUX_MIB_TCPOWTSREJECTED];
		struct tcp_options_received before;
		unsigned char *opts;
		int estab = flags & 1;

		tp.rx_opt.owts_ok = !!(flags & 2);
		net.ipv4.sysctl_tcp_owts = !!(flags & 4);
		fuzz_real_ns = (u64)fuzz_u32(&in) * 1000000 + fuzz_u32(&in);
		if (flags & 16)
			skb.tstamp = (s64)(fuzz_real_ns - fuzz_u16(&in) * 1000ULL);
		opts = malloc(len ? len : 1);
		if (!opts)
			return 0;
		for (k = 0; k < len; k++)
			opts[k] = fuzz_u8(&in);
		before = tp.rx_opt;
		parse_options(&net, &skb, &tp.rx_opt, opts, (int)len, estab);
		free(opts);

		FUZZ_ASSERT(!(tp.rx_opt.saw_owts && tp.rx_opt.owts_bad));
		if (tp.rx_opt.saw_owts) {
			FUZZ_ASSERT(tcp_owts_ott_sane(tp.rx_opt.owts_seg_ott));
			FUZZ_ASSERT(tp.rx_opt.owts_ecr == TCP_OWTS_NONE ||
				    tcp_owts_ott_sane(tp.rx_opt.owts_ecr));
			FUZZ_ASSERT(!estab || tp.rx_opt.owts_ok);
			FUZZ_ASSERT(estab || net.ipv4.sysctl_tcp_owts);
			FUZZ_ASSERT(net.mib[LINUX_MIB_TCPOWTSIN] == in0 + 1);
		}
		FUZZ_ASSERT(net.mib[LINUX_MIB_TCPOWTSIN] - in0 <= 1);
		FUZZ_ASSERT(net.mib[LINUX_MIB_TCPOWTSREJECTED] - rej0 <= 40);
		/* parsing alone never changes what we echo */
		FUZZ_ASSERT(tp.rx_opt.owts_rcv_ok == before.owts_rcv_ok &&
			    tp.rx_opt.owts_rcv_ott == before.owts_rcv_ott);
		if (flags & 8) {	/* passed PAWS and the sequence check */
			tcp_owts_store(&tp);
			if (tp.rx_opt.saw_owts)
				FUZZ_ASSERT(tp.rx_opt.owts_rcv_ok &&
					    tp.rx_opt.owts_rcv_ott ==
					    tp.rx_opt.owts_seg_ott);
		}
		if (tp.rx_opt.owts_rcv_ok)
			FUZZ_ASSERT(tcp_owts_ott_sane(tp.rx_opt.owts_rcv_ott));
	}
	return 0;
}
