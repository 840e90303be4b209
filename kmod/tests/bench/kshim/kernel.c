// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel functions the compiled files call out of line, each out of
 * line here too (its own translation unit): the registry of
 * tcp_register_congestion_control(), and what a connection's hooks call
 * at most at start, on a loss or once a round (PLB, the per-namespace
 * table, random numbers).  None of them is on every ACK's path except
 * where noted.
 */
#include "bench.h"

unsigned long jiffies;

/* kernel/time/time.c, for HZ = 250 (per ACK: cubic's bictcp_update()) */
unsigned long __usecs_to_jiffies(const unsigned int u)
{
	return (u + (USEC_PER_SEC / HZ) - 1) / (USEC_PER_SEC / HZ);
}

s64 ktime_get_seconds(void)
{
	return 1000;
}

/* CLOCK_REALTIME: read only in competing mode (glue.c's synctcp_ack_wall()) */
u64 ktime_get_real_ns(void)
{
	return 1796000000ULL * 1000000000ULL;
}

/* a xorshift in place of the kernel's ChaCha batch (BBR: once a gain cycle) */
u32 get_random_u32(void)
{
	static u32 x = 2463534242U;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* drivers/char/random.c */
u32 __get_random_u32_below(u32 ceil)
{
	u32 rand = get_random_u32();
	u64 mult;

	if (unlikely(!ceil))
		return rand;
	mult = (u64)ceil * rand;
	if (unlikely((u32)mult < ceil)) {
		u32 bound = -ceil % ceil;

		while (unlikely((u32)mult < bound))
			mult = (u64)ceil * get_random_u32();
	}
	return mult >> 32;
}

/* FNV-1a in place of jhash (glue/pathcache.c: at start and on a loss) */
u32 jhash(const void *key, u32 length, u32 initval)
{
	const u8 *p = key;
	u32 h = 2166136261U ^ initval;

	while (length--)
		h = (h ^ *p++) * 16777619U;
	return h;
}

void *kzalloc(size_t size, gfp_t flags)
{
	return calloc(1, size);
}

void kfree(const void *p)
{
	free((void *)p);
}

int param_set_uint_minmax(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max)
{
	return -EINVAL;
}

int param_get_uint(char *buffer, const struct kernel_param *kp)
{
	return 0;
}

int sysfs_emit(char *buf, const char *fmt, ...)
{
	return 0;
}

int __sysfs_match_string(const char * const *array, size_t n, const char *s)
{
	return -EINVAL;
}

/* the ACK DCTCP sends when the CE state changes (net/ipv4/tcp_output.c) */
void __tcp_send_ack(struct sock *sk, u32 rcv_nxt, u16 flags)
{
}

/* net/ipv4/tcp_plb.c with PLB disabled (the default): the first test */
void tcp_plb_update_state(const struct sock *sk, struct tcp_plb_state *plb,
			  const int cong_ratio)
{
	if (!READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_plb_enabled))
		return;
}

void tcp_plb_check_rehash(struct sock *sk, struct tcp_plb_state *plb)
{
	if (!READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_plb_enabled))
		return;
}

void tcp_plb_update_state_upon_rto(struct sock *sk, struct tcp_plb_state *plb)
{
	if (!READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_plb_enabled))
		return;
}

/* one network namespace; net_generic() is an array lookup in the kernel */
struct net bench_net = {
	.ipv4.sysctl_tcp_pacing_ss_ratio = 200,
	.ipv4.sysctl_tcp_pacing_ca_ratio = 120,
};
static void *bench_net_generic[4];

int register_pernet_subsys(struct pernet_operations *ops)
{
	static unsigned int next_id;
	void *data;

	if (next_id == ARRAY_SIZE(bench_net_generic))
		return -EINVAL;
	data = calloc(1, ops->size);
	if (!data)
		return -EINVAL;
	*ops->id = next_id;
	bench_net_generic[next_id++] = data;
	return ops->init ? ops->init(&bench_net) : 0;
}

void unregister_pernet_subsys(struct pernet_operations *ops)
{
}

void *net_generic(const struct net *net, unsigned int id)
{
	return bench_net_generic[id];
}

/* net/ipv4/tcp_cong.c's list, as a table */
struct tcp_congestion_ops *bench_ca[16];
unsigned int bench_n_ca;

int tcp_register_congestion_control(struct tcp_congestion_ops *type)
{
	if (bench_n_ca == ARRAY_SIZE(bench_ca) || !type->ssthresh ||
	    (!type->cong_avoid && !type->cong_control))
		return -EINVAL;
	bench_ca[bench_n_ca++] = type;
	return 0;
}

void tcp_unregister_congestion_control(struct tcp_congestion_ops *type)
{
}

int kstrtouint(const char *s, unsigned int base, unsigned int *res)
{
	return -EINVAL;
}
