// SPDX-License-Identifier: GPL-2.0
/*
 * Per-ACK cost of congestion-control modules through their
 * tcp_congestion_ops hooks: the kernel's own net/ipv4/tcp_cubic.c,
 * tcp_bbr.c, tcp_vegas.c, tcp_dctcp.c and Reno (tcp_cong.c), and our
 * kmod/tcp_sync_main.c, tcp_mixreact_main.c, tcp_etcp_main.c with what
 * kmod/Kbuild links into each, all compiled as they are with -O2 against
 * kshim/shim.h (the Makefile gets the kernel's files from the
 * linux-source tarball).  Each module registers its ops from its own
 * module init function; each of ours is one object whose symbols are
 * local but for that function, as a module's are.
 *
 * One loop drives every algorithm over the ACK stream of ack_stream.h,
 * doing per ACK what tcp_ack() does around the hooks, with the stack's
 * own work reduced to a few stores:
 *   the socket: tcp_mstamp, jiffies, snd_una, delivered (and delivered_ce
 *     on an ECE ACK), srtt, rtt_min (the kernel's minmax), the TSval;
 *     snd_nxt = snd_una + cwnd segments, all of them in flight, cwnd-limited;
 *     the rate sample (tcp_rate_gen()): the packets ACKed in the last srtt
 *     over srtt, so that the delivery rate is the stream's, 20 packets/ms;
 *   pkts_acked() (tcp_clean_rtx_queue()), in_ack_event() (with CA_ACK_ECE
 *     on an ECE ACK), then the loss or CWR state machine, then
 *     cong_control() with a rate sample, or else, out of a cwnd reduction,
 *     cong_avoid() and then the kernel's tcp_update_pacing_rate()
 *     (tcp_cong_control());
 *   a loss: tcp_enter_recovery(): ssthresh(), set_state(Recovery), cwnd =
 *     ssthresh at once (no PRR); an ECE ACK in Open, for the ECN flow
 *     (dctcp) only: tcp_enter_cwr(), the same with CWR; the reduction ends
 *     when snd_una passes the snd_nxt of its start: cwnd = ssthresh,
 *     cwnd_event(CA_EVENT_COMPLETE_CWR), set_state(Open).
 * The receiver marks ECE on ACKs while the queue is above 45 ms.  Row
 * "stack" is the same loop over ops whose cong_control() does nothing: the
 * loop's own cost, which report.py subtracts for the net columns.
 *
 *   bench_kernel               ns/ACK of each row: best, median, worst of 5
 *   bench_kernel --only NAME   NAME's loop once (valgrind: report.py), and
 *                              the cwnd reductions and cwnd it ended with
 *   bench_kernel --list        the row names
 */
#include <time.h>

#include "ack_stream.h"
#include "kshim/bench.h"

#define ECE_QUEUE_US	45000U

static u32 stack_ssthresh(struct sock *sk)
{
	return max(tcp_snd_cwnd(tcp_sk(sk)) >> 1U, 2U);
}

static void stack_cong_control(struct sock *sk, u32 ack, int flag,
			       const struct rate_sample *rs)
{
}

/*
 * The loop alone: a cong_control() that does nothing, so that neither a
 * hook nor the stack's pacing update (which cong_avoid() modules get and
 * cong_control() ones do themselves) is in it.
 */
static struct tcp_congestion_ops stack_ops = {
	.ssthresh = stack_ssthresh,
	.cong_control = stack_cong_control,
	.name = "stack",
};

static struct tcp_sock bench_tp;
/* tcp_rate_gen()'s sample, filled on every ACK as the kernel fills it */
static struct rate_sample bench_rs;
static u32 end_cwnd, end_ssthresh, reductions;

static void set_ca_state(struct sock *sk, u8 state)
{
	struct inet_connection_sock *icsk = inet_csk(sk);

	if (icsk->icsk_ca_ops->set_state)
		icsk->icsk_ca_ops->set_state(sk, state);
	icsk->icsk_ca_state = state;
}

/* tcp_init_cwnd_reduction() and the state, without PRR */
static void enter_reduction(struct sock *sk, u8 state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	reductions++;
	tp->prior_ssthresh = tcp_current_ssthresh(sk);
	tp->high_seq = tp->snd_nxt;
	tp->snd_cwnd_cnt = 0;
	tp->prior_cwnd = tcp_snd_cwnd(tp);
	tp->snd_ssthresh = inet_csk(sk)->icsk_ca_ops->ssthresh(sk);
	set_ca_state(sk, state);
	tcp_snd_cwnd_set(tp, max(tp->snd_ssthresh, 2U));
}

/* tcp_end_cwnd_reduction() and tcp_try_to_open() */
static void end_reduction(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	const struct tcp_congestion_ops *ops = inet_csk(sk)->icsk_ca_ops;

	tcp_snd_cwnd_set(tp, max(tp->snd_ssthresh, 2U));
	if (ops->cwnd_event)
		ops->cwnd_event(sk, CA_EVENT_COMPLETE_CWR);
	set_ca_state(sk, TCP_CA_Open);
}

/* A connection established, as tcp_init_congestion_control() starts one. */
static struct sock *sock_start(const struct tcp_congestion_ops *ops)
{
	struct tcp_sock *tp = &bench_tp;
	struct sock *sk = (struct sock *)tp;
	const struct ack_ev *a = &stream[0];

	memset(tp, 0, sizeof(*tp));
	sk->sk_family = AF_INET;
	sk->sk_state = TCP_ESTABLISHED;
	sk->sk_daddr = 0x0100000a;
	sk->sk_pacing_shift = 10;
	sk->sk_max_pacing_rate = ~0UL;
	sk->sk_gso_max_size = GSO_LEGACY_MAX_SIZE;
	sk->sk_gso_max_segs = 64;
	sk->sk_net = &bench_net;
	tp->mss_cache = MSS;
	tp->snd_cwnd = 10;
	tp->snd_ssthresh = 100;
	tp->snd_cwnd_clamp = ~0U;
	tp->snd_wnd = 1U << 30;
	tp->snd_una = a->snd_una - a->acked * MSS;
	tp->snd_nxt = tp->snd_una + tp->snd_cwnd * MSS;
	tp->rcv_nxt = 1;
	tp->packets_out = tp->snd_cwnd;
	tp->max_packets_out = tp->snd_cwnd;
	tp->is_cwnd_limited = 1;
	tp->tcp_mstamp = a->now_us - ACK_GAP_US;
	tp->tcp_clock_cache = tp->tcp_mstamp * NSEC_PER_USEC;
	tp->srtt_us = a->srtt_us << 3;
	tp->rx_opt.tstamp_ok = 1;
	tp->rx_opt.saw_tstamp = 1;
	tp->rx_opt.rcv_tsval = a->tsval;
	tp->bytes_acked = 1;
	minmax_reset(&tp->rtt_min, tcp_jiffies32, ~0U);
	if (ops->flags & TCP_CONG_NEEDS_ECN)
		tp->ecn_flags = TCP_ECN_MODE_RFC3168;
	jiffies = tp->tcp_mstamp / (USEC_PER_SEC / HZ);
	inet_csk(sk)->icsk_ca_ops = ops;
	tp->prior_ssthresh = 0;
	if (ops->init)
		ops->init(sk);
	inet_csk(sk)->icsk_ca_initialized = 1;
	return sk;
}

static void ack_one(struct sock *sk, const struct ack_ev *a, bool ecn)
{
	struct tcp_sock *tp = tcp_sk(sk);
	/* dctcp may have swapped its ops at init (no ECN) */
	const struct tcp_congestion_ops *ops = inet_csk(sk)->icsk_ca_ops;
	bool ece = ecn && a->srtt_us - 2 * BASE_OTT_US > ECE_QUEUE_US;
	u32 in_flight = tcp_packets_in_flight(tp);
	u32 round = 2 * (a->srtt_us / ACK_GAP_US);

	tp->tcp_mstamp = a->now_us;
	tp->tcp_clock_cache = a->now_us * NSEC_PER_USEC;
	jiffies = a->now_us / (USEC_PER_SEC / HZ);
	tp->rx_opt.rcv_tsval = a->tsval;
	tp->snd_una = a->snd_una;
	tp->bytes_acked += a->acked * MSS;
	tp->delivered += a->acked;
	if (ece)
		tp->delivered_ce += a->acked;
	tp->delivered_mstamp = a->now_us;
	tp->lost += a->loss;
	tp->srtt_us = a->srtt_us << 3;
	minmax_running_min(&tp->rtt_min, 300 * HZ, tcp_jiffies32, a->rtt_us);

	bench_rs = (struct rate_sample){
		.prior_mstamp = a->now_us - a->srtt_us,
		.prior_delivered = tp->delivered - round,
		.prior_delivered_ce = tp->delivered_ce,
		.delivered = round,
		.interval_us = a->srtt_us,
		.snd_interval_us = a->srtt_us,
		.rcv_interval_us = a->srtt_us,
		.rtt_us = a->rtt_us,
		.losses = a->loss,
		.acked_sacked = a->acked,
		.prior_in_flight = in_flight,
		.last_end_seq = a->snd_una,
	};
	if (ops->pkts_acked) {
		struct ack_sample sample = {
			.pkts_acked = a->acked, .rtt_us = a->rtt_us,
			.in_flight = in_flight,
		};

		ops->pkts_acked(sk, &sample);
	}
	if (ops->in_ack_event)
		ops->in_ack_event(sk, ece ? CA_ACK_SLOWPATH | CA_ACK_ECE : 0);

	if (inet_csk(sk)->icsk_ca_state != TCP_CA_Open &&
	    !before(tp->snd_una, tp->high_seq))
		end_reduction(sk);
	if (a->loss && inet_csk(sk)->icsk_ca_state < TCP_CA_Recovery)
		enter_reduction(sk, TCP_CA_Recovery);
	else if (ece && inet_csk(sk)->icsk_ca_state == TCP_CA_Open)
		enter_reduction(sk, TCP_CA_CWR);

	if (ops->cong_control)
		ops->cong_control(sk, a->snd_una, 0, &bench_rs);
	else if (!tcp_in_cwnd_reduction(sk))
		ops->cong_avoid(sk, a->snd_una, a->acked);
	if (!ops->cong_control)
		tcp_update_pacing_rate(sk);
	tp->snd_nxt = tp->snd_una + tcp_snd_cwnd(tp) * MSS;
	tp->packets_out = tcp_snd_cwnd(tp);
	tp->max_packets_out = tcp_snd_cwnd(tp);
}

static __attribute__((noinline)) void run_ops(const struct tcp_congestion_ops *ops)
{
	struct sock *sk = sock_start(ops);
	bool ecn = ops->flags & TCP_CONG_NEEDS_ECN;
	u32 i;

	reductions = 0;
	for (i = 0; i < N_ACKS; i++)
		ack_one(sk, &stream[i], ecn);
	end_cwnd = tcp_snd_cwnd(tcp_sk(sk));
	end_ssthresh = tcp_sk(sk)->snd_ssthresh;
	sink = end_cwnd + sk->sk_pacing_rate;
	if (inet_csk(sk)->icsk_ca_ops->release)
		inet_csk(sk)->icsk_ca_ops->release(sk);
}

static const struct tcp_congestion_ops *ca_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < bench_n_ca; i++)
		if (!strcmp(bench_ca[i]->name, name))
			return bench_ca[i];
	fprintf(stderr, "bench_kernel: %s did not register\n", name);
	exit(1);
}

/* one function per row, for callgrind's --toggle-collect=run_NAME */
#define ROW(n) \
	static __attribute__((noinline)) void run_##n(void) \
	{ run_ops(ca_find(#n)); }
ROW(stack)
ROW(reno)
ROW(cubic)
ROW(bbr)
ROW(vegas)
ROW(dctcp)
ROW(sync)
ROW(mixreact)
ROW(etcp)

struct row {
	const char *name;
	void (*run)(void);
};

static const struct row rows[] = {
	{ "stack", run_stack }, { "reno", run_reno }, { "cubic", run_cubic },
	{ "bbr", run_bbr }, { "vegas", run_vegas }, { "dctcp", run_dctcp },
	{ "sync", run_sync }, { "mixreact", run_mixreact }, { "etcp", run_etcp },
};

static void modules_init(void)
{
	int (* const inits[])(void) = {
		bench_modinit_cubictcp_register, bench_modinit_bbr_register,
		bench_modinit_tcp_vegas_register, bench_modinit_dctcp_register,
		bench_modinit_sync_register, bench_modinit_mixreact_register,
		bench_modinit_etcp_register,
	};
	size_t i;

	/* built in: tcp_cong.c's tcp_reno, and the loop alone */
	if (tcp_register_congestion_control(&tcp_reno) ||
	    tcp_register_congestion_control(&stack_ops)) {
		fprintf(stderr, "bench_kernel: cannot register reno\n");
		exit(1);
	}
	for (i = 0; i < ARRAY_SIZE(inits); i++) {
		if (inits[i]()) {
			fprintf(stderr, "bench_kernel: module init %zu failed\n", i);
			exit(1);
		}
	}
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < ARRAY_SIZE(rows); i++)
			printf("%s\n", rows[i].name);
		return 0;
	}
	modules_init();
	make_stream();
	if (argc == 3 && !strcmp(argv[1], "--only")) {
		for (i = 0; i < ARRAY_SIZE(rows); i++) {
			if (!strcmp(argv[2], rows[i].name)) {
				rows[i].run();
				printf("%s: %u ACKs, %u cwnd reductions, cwnd %u ssthresh %u at the end\n",
				       rows[i].name, N_ACKS, reductions, end_cwnd,
				       end_ssthresh);
				return 0;
			}
		}
		fprintf(stderr, "bench_kernel: no row %s (--list)\n", argv[2]);
		return 2;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: bench_kernel [--list | --only NAME]\n");
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		double t[5];
		int k;

		for (k = 0; k < 5; k++) {
			double t0 = seconds();

			rows[i].run();
			t[k] = (seconds() - t0) * 1e9 / N_ACKS;
		}
		qsort(t, 5, sizeof(t[0]), cmp_double);
		printf("%s %.2f %.2f %.2f\n", rows[i].name, t[0], t[2], t[4]);
	}
	return 0;
}
