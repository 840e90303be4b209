/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types, fields and helpers that net/ipv4/tcp_{cubic,bbr,
 * vegas,dctcp}.c, Reno's functions of net/ipv4/tcp_cong.c, lib/win_minmax.c
 * and our modules (kmod/tcp_*_main.c, kmod/glue/) use, for bench_kernel.c:
 * each of those files is compiled as it is with -include shim.h, and the
 * headers it #includes are empty files (the Makefile makes them).
 *
 * Reno's functions and tcp_update_pacing_rate() are the kernel's text too,
 * cut out of tcp_cong.c and tcp_input.c by the Makefile.
 *
 * Helpers the kernel has inline are inline here, with the kernel's code
 * for x86-64 (do_div, div64_*, mul_u64_u64_div_u64, the jiffies
 * conversions of HZ = 250, the UML build's); helpers it has out of line
 * are out of line here (bench_kernel.c), so that a call costs a call.
 * The structures have the fields these files read and write, not the
 * kernel's layout: a field's offset does not change an instruction count.
 */
#ifndef BENCH_KSHIM_H
#define BENCH_KSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __KERNEL__ 1

typedef uint8_t u8, __u8;
typedef uint16_t u16, __u16;
typedef uint32_t u32, __u32;
typedef uint64_t u64, __u64;
typedef int8_t s8, __s8;
typedef int16_t s16, __s16;
typedef int32_t s32, __s32;
typedef int64_t s64, __s64;
typedef u32 __be32;
typedef unsigned int gfp_t;

#define HZ		250
#define MSEC_PER_SEC	1000UL
#define USEC_PER_MSEC	1000UL
#define USEC_PER_SEC	1000000UL
#define NSEC_PER_USEC	1000UL
#define NSEC_PER_MSEC	1000000UL
#define NSEC_PER_SEC	1000000000UL
#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define S32_MAX		((s32)(U32_MAX >> 1))
#define S32_MIN		((s32)(-S32_MAX - 1))
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))
#define BITS_PER_BYTE	8
#define BITS_PER_TYPE(t) (sizeof(t) * BITS_PER_BYTE)
#define BIT(n)		(1UL << (n))
#define GFP_NOWAIT	0
#define GFP_KERNEL	0
#define __GFP_NOWARN	0
#define EPERM		1
#define EINVAL		22
#define AF_INET		2
#define AF_INET6	10

#define __init
#define __exit
#define __net_init
#define __read_mostly
#define __bpf_kfunc
#undef __always_inline
#define __always_inline	inline __attribute__((always_inline))
#define ____cacheline_aligned_in_smp __attribute__((aligned(64)))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define IS_ENABLED(x)	0
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define sizeof_field(t, m) sizeof(((t *)0)->m)
#define BUILD_BUG_ON(c)	_Static_assert(!(c), #c)
#define WARN_ON_ONCE(c)	((void)(c))
#define WARN_ON(c)	((void)(c))
#define WARN_ONCE(c, ...) ((void)(c))
#define pr_debug(...)	do { } while (0)
#define READ_ONCE(x)	(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define cmpxchg(p, o, n) ({ typeof(*(p)) __o = (o); \
	__atomic_compare_exchange_n(p, &__o, n, false, __ATOMIC_SEQ_CST, \
				    __ATOMIC_SEQ_CST); __o; })

#define min(a, b)	({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)	({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b)	({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b)	({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define min_not_zero(x, y) ({ typeof(x) __x = (x); typeof(y) __y = (y); \
	__x == 0 ? __y : ((__y == 0) ? __x : min(__x, __y)); })
/* include/linux/math.h */
#define __abs_choose_expr(x, type, other) __builtin_choose_expr(	\
	__builtin_types_compatible_p(typeof(x), signed type) ||		\
	__builtin_types_compatible_p(typeof(x), unsigned type),		\
	({ signed type __x = (x); __x < 0 ? -__x : __x; }), other)
#undef abs
#define abs(x) __abs_choose_expr(x, long long, __abs_choose_expr(x, long,	\
	__abs_choose_expr(x, int, __abs_choose_expr(x, short, ((void)0)))))

/* arch/x86/include/asm/div64.h, include/linux/math64.h (64-bit) */
#define do_div(n, base) ({ u32 __base = (base); u32 __rem; \
	__rem = ((u64)(n)) % __base; (n) = ((u64)(n)) / __base; __rem; })
static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline s64 div_s64(s64 a, s32 b) { return a / b; }
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline s64 div64_s64(s64 a, s64 b) { return a / b; }
static inline u64 div64_ul(u64 a, unsigned long b) { return a / b; }
static inline long div64_long(long a, long b) { return a / b; }
static inline u64 div_u64_rem(u64 a, u32 b, u32 *r) { *r = a % b; return a / b; }
static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	u64 q;

	asm ("mulq %2; divq %3" : "=a" (q) : "a" (a), "rm" (b), "rm" (c) : "rdx");
	return q;
}
static inline int fls64(u64 x) { return x ? 64 - __builtin_clzll(x) : 0; }

/* jiffies: HZ = 250; the harness sets jiffies from its clock */
extern unsigned long jiffies;
#define tcp_jiffies32	((u32)jiffies)
#define MAX_JIFFY_OFFSET ((long)(~0UL >> 1) - 1)
static __always_inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	return (m + (MSEC_PER_SEC / HZ) - 1) / (MSEC_PER_SEC / HZ);
}
unsigned long __usecs_to_jiffies(const unsigned int u);	/* out of line */
static __always_inline unsigned long usecs_to_jiffies(const unsigned int u)
{
	if (__builtin_constant_p(u))
		return (u + (USEC_PER_SEC / HZ) - 1) / (USEC_PER_SEC / HZ);
	return __usecs_to_jiffies(u);
}
static inline bool time_before32(u32 a, u32 b) { return (s32)(a - b) < 0; }
s64 ktime_get_seconds(void);
u64 ktime_get_real_ns(void);

u32 get_random_u32(void);
u32 __get_random_u32_below(u32 ceil);
static inline u32 get_random_u32_below(u32 ceil) { return __get_random_u32_below(ceil); }
#define net_get_random_once(buf, n) do { } while (0)
u32 jhash(const void *key, u32 length, u32 initval);

/* atomics, locks, memory */
typedef struct { int counter; } atomic_t;
#define ATOMIC_INIT(i)	{ (i) }
#define atomic_read(v)	READ_ONCE((v)->counter)
#define atomic_inc(v)	__atomic_fetch_add(&(v)->counter, 1, __ATOMIC_SEQ_CST)
typedef struct { int locked; } spinlock_t;
#define spin_lock_init(l)	((l)->locked = 0)
#define spin_lock_bh(l)		((void)__atomic_exchange_n(&(l)->locked, 1, __ATOMIC_ACQUIRE))
#define spin_unlock_bh(l)	__atomic_store_n(&(l)->locked, 0, __ATOMIC_RELEASE)
void *kzalloc(size_t size, gfp_t flags);
void kfree(const void *p);

/* modules, parameters, BTF: nothing at run time */
struct module;
#define THIS_MODULE	((struct module *)0)
#define EXPORT_SYMBOL(s)
#define EXPORT_SYMBOL_GPL(s)
#define MODULE_AUTHOR(s)
#define MODULE_LICENSE(s)
#define MODULE_DESCRIPTION(s)
#define MODULE_VERSION(s)
#define MODULE_PARM_DESC(n, s)
#define MODULE_ALIAS(s)
#define module_param(n, t, p)
#define module_param_cb(n, ops, arg, p) \
	static __attribute__((unused)) const void *__bench_param_##n = (ops);
#define module_init(fn) int bench_modinit_##fn(void); \
	int bench_modinit_##fn(void) { return fn(); }
#define module_exit(fn) void bench_modexit_##fn(void); \
	void bench_modexit_##fn(void) { fn(); }
struct kernel_param {
	void *arg;
};
struct kernel_param_ops {
	int (*set)(const char *val, const struct kernel_param *kp);
	int (*get)(char *buf, const struct kernel_param *kp);
};
int param_set_uint_minmax(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max);
int param_get_uint(char *buffer, const struct kernel_param *kp);
int kstrtouint(const char *s, unsigned int base, unsigned int *res);
int sysfs_emit(char *buf, const char *fmt, ...);
int __sysfs_match_string(const char * const *array, size_t n, const char *s);
#define BTF_KFUNCS_START(n)	static __attribute__((unused)) int n;
#define BTF_KFUNCS_END(n)
#define BTF_ID_FLAGS(...)
struct btf_kfunc_id_set {
	struct module *owner;
	int *set;
};
#define BPF_PROG_TYPE_STRUCT_OPS 0
#define register_btf_kfunc_id_set(t, s) ((void)(s), 0)
#define LINUX_VERSION_CODE	KERNEL_VERSION(7, 2, 0)
#define KERNEL_VERSION(a, b, c)	(((a) << 16) + ((b) << 8) + (c))
#define NET_INC_STATS(net, f)		((void)(net))
#define NET_ADD_STATS(net, f, v)	((void)(net))

#include <linux/win_minmax.h>	/* the kernel's (build/ksrc/include) */

/* sockets */
enum { TCP_ESTABLISHED = 1, TCP_CLOSE = 7, TCP_LISTEN = 10 };
enum sk_pacing { SK_PACING_NONE = 0, SK_PACING_NEEDED = 1, SK_PACING_FQ = 2 };

struct net {
	struct {
		u8 sysctl_tcp_plb_enabled;
		int sysctl_tcp_pacing_ss_ratio;
		int sysctl_tcp_pacing_ca_ratio;
	} ipv4;
};

struct in6_addr {
	u8 s6_addr[16];
};

struct sock {
	u16 sk_family;
	u8 sk_state;
	u8 sk_pacing_shift;
	u32 sk_pacing_status;
	__be32 sk_daddr;
	struct in6_addr sk_v6_daddr;
	unsigned long sk_pacing_rate;
	unsigned long sk_max_pacing_rate;
	u32 sk_gso_max_size;
	u16 sk_gso_max_segs;
	struct net *sk_net;
};

static inline struct net *sock_net(const struct sock *sk)
{
	return sk->sk_net;
}

struct tcp_congestion_ops;

struct inet_connection_sock {
	struct sock icsk_inet;
	const struct tcp_congestion_ops *icsk_ca_ops;
	u8 icsk_ca_state:5, icsk_ca_initialized:1, icsk_ca_setsockopt:1,
	   icsk_ca_dst_locked:1;
	struct {
		u8 pending;
	} icsk_ack;
	u64 icsk_ca_priv[104 / sizeof(u64)];
};
#define ICSK_CA_PRIV_SIZE sizeof_field(struct inet_connection_sock, icsk_ca_priv)
enum { ICSK_ACK_TIMER = 2, ICSK_ACK_NOW = 16 };

struct tcp_options_received {
	u32 rcv_tsval;
	u16 saw_tstamp:1, tstamp_ok:1, sack_ok:3;
};

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	u32 snd_una, snd_nxt, rcv_nxt, snd_wnd;
	u32 snd_cwnd, snd_cwnd_cnt, snd_cwnd_clamp, snd_ssthresh;
	u32 prior_cwnd, prior_ssthresh, high_seq;
	u32 srtt_us, mss_cache, lsndtime, max_packets_out;
	u32 packets_out, sacked_out, lost_out, retrans_out;
	u32 delivered, delivered_ce, lost, app_limited, data_segs_out;
	u64 bytes_acked;
	u64 tcp_mstamp, delivered_mstamp, tcp_clock_cache, tcp_wstamp_ns;
	u8 ecn_flags;
	u8 is_cwnd_limited:1;
	struct minmax rtt_min;
	struct tcp_options_received rx_opt;
};

static inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

/* include/net/tcp.h, as it has them */
#define TCP_INIT_CWND		10
#define GSO_LEGACY_MAX_SIZE	65536u
#define MAX_TCP_HEADER		320	/* L1_CACHE_ALIGN(128 + MAX_HEADER), x86-64 */
#define TCP_INFINITE_SSTHRESH	0x7fffffff
#define TCP_ECN_MODE_RFC3168	BIT(0)
#define TCP_ECN_QUEUE_CWR	BIT(1)
#define TCP_ECN_DEMAND_CWR	BIT(2)
#define TCP_ECN_MODE_ACCECN	BIT(3)
#define TCP_ECN_MODE_ANY	(TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN)
#define TCP_CA_NAME_MAX		16
#define TCP_CONG_NON_RESTRICTED	BIT(0)
#define TCP_CONG_NEEDS_ECN	BIT(1)
#define TCP_PLB_SCALE		8
#define INET_ECN_dontxmit(sk)	do { } while (0)

enum tcp_ca_state {
	TCP_CA_Open = 0, TCP_CA_Disorder = 1, TCP_CA_CWR = 2,
	TCP_CA_Recovery = 3, TCP_CA_Loss = 4
};
#define TCPF_CA_CWR		(1 << TCP_CA_CWR)
#define TCPF_CA_Recovery	(1 << TCP_CA_Recovery)

enum tcp_ca_event {
	CA_EVENT_TX_START, CA_EVENT_CWND_RESTART, CA_EVENT_COMPLETE_CWR,
	CA_EVENT_LOSS, CA_EVENT_ECN_NO_CE, CA_EVENT_ECN_IS_CE,
};
enum tcp_ca_ack_event_flags {
	CA_ACK_SLOWPATH = (1 << 0), CA_ACK_WIN_UPDATE = (1 << 1),
	CA_ACK_ECE = (1 << 2),
};

static inline bool before(u32 seq1, u32 seq2)
{
	return (s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1)	before(seq1, seq2)

struct ack_sample {
	u32 pkts_acked;
	s32 rtt_us;
	u32 in_flight;
};

struct rate_sample {
	u64 prior_mstamp;
	u32 prior_delivered;
	u32 prior_delivered_ce;
	s32 delivered;
	s32 delivered_ce;
	long interval_us;
	u32 snd_interval_us;
	u32 rcv_interval_us;
	long rtt_us;
	int losses;
	u32 acked_sacked;
	u32 prior_in_flight;
	u32 last_end_seq;
	bool is_app_limited;
	bool is_retrans;
	bool is_ack_delayed;
};

enum { INET_DIAG_NONE, INET_DIAG_MEMINFO, INET_DIAG_INFO, INET_DIAG_VEGASINFO,
	INET_DIAG_DCTCPINFO = 8, INET_DIAG_BBRINFO = 16 };
struct tcpvegas_info {
	u32 tcpv_enabled, tcpv_rttcnt, tcpv_rtt, tcpv_minrtt;
};
struct tcp_dctcp_info {
	u16 dctcp_enabled, dctcp_ce_state;
	u32 dctcp_alpha, dctcp_ab_ecn, dctcp_ab_tot;
};
struct tcp_bbr_info {
	u32 bbr_bw_lo, bbr_bw_hi, bbr_min_rtt, bbr_pacing_gain, bbr_cwnd_gain;
};
union tcp_cc_info {
	struct tcpvegas_info vegas;
	struct tcp_dctcp_info dctcp;
	struct tcp_bbr_info bbr;
};

struct list_head {
	struct list_head *next, *prev;
};

struct tcp_congestion_ops {
	void (*cong_avoid)(struct sock *sk, u32 ack, u32 acked);
	void (*cong_control)(struct sock *sk, u32 ack, int flag,
			     const struct rate_sample *rs);
	u32 (*ssthresh)(struct sock *sk);
	void (*set_state)(struct sock *sk, u8 new_state);
	void (*cwnd_event)(struct sock *sk, enum tcp_ca_event ev);
	void (*cwnd_event_tx_start)(struct sock *sk);
	void (*in_ack_event)(struct sock *sk, u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	u32 (*min_tso_segs)(struct sock *sk);
	u32 (*undo_cwnd)(struct sock *sk);
	u32 (*sndbuf_expand)(struct sock *sk);
	size_t (*get_info)(struct sock *sk, u32 ext, int *attr,
			   union tcp_cc_info *info);
	char name[TCP_CA_NAME_MAX];
	struct module *owner;
	struct list_head list;
	u32 key;
	u32 flags;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
} ____cacheline_aligned_in_smp;

int tcp_register_congestion_control(struct tcp_congestion_ops *type);
void tcp_unregister_congestion_control(struct tcp_congestion_ops *type);
u32 tcp_slow_start(struct tcp_sock *tp, u32 acked);
void tcp_cong_avoid_ai(struct tcp_sock *tp, u32 w, u32 acked);
u32 tcp_reno_ssthresh(struct sock *sk);
u32 tcp_reno_undo_cwnd(struct sock *sk);
void tcp_reno_cong_avoid(struct sock *sk, u32 ack, u32 acked);
extern struct tcp_congestion_ops tcp_reno;
void tcp_update_pacing_rate(struct sock *sk);
void __tcp_send_ack(struct sock *sk, u32 rcv_nxt, u16 flags);

static inline bool tcp_ecn_mode_any(const struct tcp_sock *tp)
{
	return tp->ecn_flags & TCP_ECN_MODE_ANY;
}

static inline unsigned int tcp_left_out(const struct tcp_sock *tp)
{
	return tp->sacked_out + tp->lost_out;
}

static inline unsigned int tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - tcp_left_out(tp) + tp->retrans_out;
}

static inline u32 tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}

static inline void tcp_snd_cwnd_set(struct tcp_sock *tp, u32 val)
{
	WARN_ON_ONCE((int)val <= 0);
	WRITE_ONCE(tp->snd_cwnd, val);
}

static inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tcp_snd_cwnd(tp) < tp->snd_ssthresh;
}

static inline bool tcp_in_cwnd_reduction(const struct sock *sk)
{
	return (TCPF_CA_CWR | TCPF_CA_Recovery) &
	       (1 << inet_csk(sk)->icsk_ca_state);
}

static inline u32 tcp_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tcp_in_cwnd_reduction(sk))
		return tp->snd_ssthresh;
	return max(tp->snd_ssthresh,
		   ((tcp_snd_cwnd(tp) >> 1) + (tcp_snd_cwnd(tp) >> 2)));
}

static inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return true;
	if (tcp_in_slow_start(tp))
		return tcp_snd_cwnd(tp) < 2 * tp->max_packets_out;
	return false;
}

static inline u32 tcp_min_rtt(const struct tcp_sock *tp)
{
	return minmax_get(&tp->rtt_min);
}

static inline u32 tcp_stamp_us_delta(u64 t1, u64 t0)
{
	return max_t(s64, t1 - t0, 0);
}

/* PLB (net/ipv4/tcp_plb.c, out of line; disabled by default) */
struct tcp_plb_state {
	u8 consec_cong_rounds:5, unused:3;
	u32 pause_until;
};

static inline void tcp_plb_init(const struct sock *sk, struct tcp_plb_state *plb)
{
	plb->consec_cong_rounds = 0;
	plb->pause_until = 0;
}
void tcp_plb_update_state(const struct sock *sk, struct tcp_plb_state *plb,
			  const int cong_ratio);
void tcp_plb_check_rehash(struct sock *sk, struct tcp_plb_state *plb);
void tcp_plb_update_state_upon_rto(struct sock *sk, struct tcp_plb_state *plb);

/* network namespaces (glue/pathcache.c) */
struct pernet_operations {
	int (*init)(struct net *net);
	unsigned int *id;
	size_t size;
};
int register_pernet_subsys(struct pernet_operations *ops);
void unregister_pernet_subsys(struct pernet_operations *ops);
void *net_generic(const struct net *net, unsigned int id);

#endif /* BENCH_KSHIM_H */
