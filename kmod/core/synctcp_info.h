/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Per-socket telemetry of the synctcp modules, as exported by their
 * get_info() through inet_diag (and getsockopt(TCP_CC_INFO)).
 *
 * The kernel copies get_info() output out of a union tcp_cc_info, so a
 * record is at most 20 bytes.  Every record starts with the same 4-byte
 * header; tools/synctcp/diag.py decodes them (keep the two in step: the
 * unit tests compare this layout with the decoder's).
 */
#ifndef SYNCTCP_INFO_H
#define SYNCTCP_INFO_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef int32_t __s32;
#endif

/*
 * inet_diag attribute type of a synctcp record.  Not an upstream number:
 * chosen far above the kernel's INET_DIAG_* range so that `ss` ignores it.
 */
#define SYNCTCP_DIAG_ATTR	0x3A5C

enum synctcp_module_id {
	SYNCTCP_MOD_SYNC = 1,
	SYNCTCP_MOD_MIXREACT = 2,
	SYNCTCP_MOD_ETCP = 3,
};

/* sti_flags */
#define SYNCTCP_F_LOSS_SEEN	0x01	/* a loss enabled the detector */
#define SYNCTCP_F_CONGESTED	0x02	/* the last sample signalled congestion */
#define SYNCTCP_F_RATE_KNOWN	0x04	/* peer TS clock rate confirmed */
#define SYNCTCP_F_TS_UNFIT	0x08	/* the peer's TS clock fits no known
					 * rate: RTT-sourced since
					 */
#define SYNCTCP_F_NO_STATE	0x10	/* state allocation failed: plain Reno */
#define SYNCTCP_F_COMPETING	0x20	/* variant best's competing mode */

/* sti_peer_clock: the peer's RFC 7323 clock, 0 when not in use */
enum synctcp_clock_code {
	SYNCTCP_CLOCK_NONE = 0,
	SYNCTCP_CLOCK_2HZ = 1,
	SYNCTCP_CLOCK_10HZ = 2,
	SYNCTCP_CLOCK_100HZ = 3,
	SYNCTCP_CLOCK_250HZ = 4,
	SYNCTCP_CLOCK_1KHZ = 5,
	SYNCTCP_CLOCK_1MHZ = 6,
	SYNCTCP_CLOCK_300HZ = 7,
	SYNCTCP_CLOCK_OTHER = 255,
};

struct synctcp_info_hdr {
	__u8 sti_module;	/* enum synctcp_module_id */
	__u8 sti_source;	/* enum synctcp_ott_source */
	__u8 sti_flags;		/* SYNCTCP_F_* */
	__u8 sti_peer_clock;	/* SYNCTCP_CLOCK_*: peer TS clock rate */
};

/* tcp_sync: Sync-TCP(Pcwnd) */
struct synctcp_sync_info {
	struct synctcp_info_hdr hdr;
	__s32 min_ott_us;	/* min OTT; with RFC 7323 TS plus a clock offset */
	__u32 qdelay_us;	/* current queuing delay */
	__u32 max_qdelay_us;	/* largest queuing delay seen */
	__u16 signals;		/* ACKs that signalled congestion, mod 2^16 */
	__u16 reductions;	/* cwnd halvings by the detector, mod 2^16 */
};

/* tcp_mixreact: Sync-TCP(MixReact) */
struct synctcp_mixreact_info {
	struct synctcp_info_hdr hdr;
	__u32 qdelay_avg_us;	/* SyncMix average queuing delay */
	__u32 max_qdelay_us;	/* largest queuing delay seen */
	__u8 trend;		/* enum synctcp_mix_trend (core/syncmix.h) */
	__u8 region;		/* enum synctcp_mix_region: 0 = 0-25% .. 3 */
	__u8 action;		/* enum synctcp_mixreact_action (core/mixreact.h) */
	__u8 mix_flags;		/* SYNCTCP_MIXF_* */
	__u16 increases;	/* decisions that raised cwnd, mod 2^16 */
	__u16 decreases;	/* decisions that cut cwnd, mod 2^16 */
};

/* synctcp_mixreact_info.mix_flags */
#define SYNCTCP_MIXF_FLAT	0x01	/* last trend had m0 == m2: indication held */
#define SYNCTCP_MIXF_NO_STATE	0x02	/* state allocation failed: plain Reno */

/* tcp_etcp: E-TCP (Gu, Towsley, Hollot, Zhang) */
struct synctcp_etcp_info {
	struct synctcp_info_hdr hdr;	/* sti_source 0: E-TCP uses no OTT */
	__u32 w_x256;		/* window W, 1/256 packets */
	__u32 losses;		/* lost packets counted, mod 2^32 */
	__u16 ecn_events;	/* CWR entries counted as one loss, mod 2^16 */
	__u16 undos;		/* loss episodes undone as spurious, mod 2^16 */
	__u8 phase;		/* enum etcp_phase: 0 slow start, 1 hold, 2 E-TCP */
	__u8 pad[3];
};

#endif /* SYNCTCP_INFO_H */
