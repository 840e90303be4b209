// SPDX-License-Identifier: GPL-2.0
/*
 * qsampler: sample one qdisc's backlog and counters at a fixed rate.
 *
 * The testbed's bottleneck queue must be sampled at >= 100 Hz.  A Python
 * loop manages ~20 Hz inside an emulated (TCG) VM, so this is a small C
 * program: one RTM_GETQDISC dump of one interface per sample, the qdisc
 * whose parent is PARENT picked out, one CSV row written:
 *
 *   t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes,marks
 *
 * t is CLOCK_MONOTONIC in seconds; the counters are the qdisc's cumulative
 * ones (gnet_stats) and its ECN marks from the kind's xstats (red, pie,
 * fq_codel, dualpi2, cake: the sum over its tins; 0 for kinds that cannot
 * mark).  A dualpi2 qdisc has its two queues' own figures too, in six more
 * columns (tc_dualpi2_xstats):
 *
 *   ...,marks,l_delay_us,c_delay_us,l_enq_pkts,c_enq_pkts,step_marks,prob
 *
 * the sojourn time of the head packet of its L and of its C queue, the
 * packets each queue took in (cumulative), the L queue's step marks
 * (cumulative) and the PI2 probability (scaled to 2^32).  The header is
 * written with the first sample, when the kind is known.  Samples are taken on an
 * absolute schedule (no drift) from one timerfd; a late sample is taken at
 * once, not twice.
 *
 *   qsampler [-n NETNS] -i DEV -p PARENT -o FILE [[-n NETNS] -i DEV -p PARENT -o FILE]...
 *            [-r HZ] [-d MAX_SECONDS]
 *
 * Each -o closes one target (the -n, -i, -p before it): one process
 * samples up to MAX_TARGETS qdiscs, in as many namespaces, on one clock
 * (one netlink socket per target, created in its namespace).  Under
 * User-Mode Linux every process wake-up and system call costs wall time,
 * so a sample is one timerfd read, one clock read, and one send and
 * (usually) one receive per target; rows are written through a 64 KiB
 * buffer.
 *
 * PARENT is tc's "major:minor" in hex, or "root".  It prints "ready" once
 * the first sample of every target succeeded and stops on SIGINT/SIGTERM
 * or after MAX_SECONDS.  Exit status: 0 ok, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define RECV_BUF (64 * 1024)
#define OUT_BUF (64 * 1024)
#define MAX_TARGETS 16

struct target {
	const char *ns, *dev, *out, *parent_s;
	uint32_t parent;
	int fd, ifindex, dump, header;
	FILE *fp;
	char *buf;
};

/* tc_dualpi2_xstats (uapi pkt_sched.h, Linux 6.17+), the fields read */
struct dualpi2 {
	uint32_t prob, delay_c, delay_l, packets_in_c, packets_in_l, maxq, ecn_mark, step_marks;
};

struct sample {
	uint32_t qlen, backlog, drops, packets, marks;
	uint64_t bytes;
	int found, is_dualpi2;
	struct dualpi2 dq;
};

/* CAKE's statistics (uapi pkt_sched.h): nested in TCA_STATS_APP */
#define CAKE_STATS_TIN_STATS		10	/* TCA_CAKE_STATS_TIN_STATS */
#define CAKE_TIN_ECN_MARKED_PACKETS	8	/* TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse_parent(const char *s, uint32_t *out)
{
	unsigned int maj, min;
	char tail;

	if (!strcmp(s, "root")) {
		*out = TC_H_ROOT;
		return 0;
	}
	if (sscanf(s, "%x:%x%c", &maj, &min, &tail) != 2 || maj > 0xffff || min > 0xffff)
		return -1;
	*out = (maj << 16) | min;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ECN marks from the kind-specific xstats (layouts of uapi pkt_sched.h) */
static uint32_t xstats_marks(const char *kind, const unsigned char *x, size_t len)
{
	size_t off;
	uint32_t v;

	if (!strcmp(kind, "red"))
		off = 12;	/* tc_red_xstats.marked */
	else if (!strcmp(kind, "fq_codel"))
		off = 12;	/* type, then qd_stats.maxpacket, drop_overlimit, ecn_mark */
	else if (!strcmp(kind, "pie"))
		off = 36;	/* tc_pie_xstats.ecn_mark */
	else
		return 0;
	if (len < off + 4)
		return 0;
	memcpy(&v, x + off, 4);
	return v;
}

/* The ECN marks of a CAKE qdisc: the sum over its tins' counters */
static uint32_t cake_marks(struct rtattr *app)
{
	int len = RTA_PAYLOAD(app), tlen, flen;
	struct rtattr *a, *tin, *f;
	uint32_t sum = 0, v;

	for (a = RTA_DATA(app); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if ((a->rta_type & NLA_TYPE_MASK) != CAKE_STATS_TIN_STATS)
			continue;
		tlen = RTA_PAYLOAD(a);
		for (tin = RTA_DATA(a); RTA_OK(tin, tlen); tin = RTA_NEXT(tin, tlen)) {
			flen = RTA_PAYLOAD(tin);
			for (f = RTA_DATA(tin); RTA_OK(f, flen); f = RTA_NEXT(f, flen)) {
				if ((f->rta_type & NLA_TYPE_MASK) != CAKE_TIN_ECN_MARKED_PACKETS ||
				    RTA_PAYLOAD(f) < 4)
					continue;
				memcpy(&v, RTA_DATA(f), 4);
				sum += v;
			}
		}
	}
	return sum;
}

static void parse_stats2(struct rtattr *nest, struct sample *s, const char *kind)
{
	int len = RTA_PAYLOAD(nest);
	struct rtattr *a;

	for (a = RTA_DATA(nest); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if ((a->rta_type & NLA_TYPE_MASK) == TCA_STATS_APP && !strcmp(kind, "cake")) {
			s->marks = cake_marks(a);
		} else if (a->rta_type == TCA_STATS_BASIC &&
		    RTA_PAYLOAD(a) >= sizeof(struct gnet_stats_basic)) {
			struct gnet_stats_basic b;

			memcpy(&b, RTA_DATA(a), sizeof(b));
			s->bytes = b.bytes;
			s->packets = b.packets;
		} else if (a->rta_type == TCA_STATS_QUEUE &&
			   RTA_PAYLOAD(a) >= sizeof(struct gnet_stats_queue)) {
			struct gnet_stats_queue q;

			memcpy(&q, RTA_DATA(a), sizeof(q));
			s->qlen = q.qlen;
			s->backlog = q.backlog;
			s->drops = q.drops;
		}
	}
}

static void parse_qdisc(struct nlmsghdr *h, int ifindex, uint32_t parent, struct sample *s)
{
	struct tcmsg *tcm = NLMSG_DATA(h);
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*tcm));
	const unsigned char *xstats = NULL;
	size_t xlen = 0;
	char kind[32] = "";
	struct rtattr *a;

	if (len < 0 || tcm->tcm_ifindex != ifindex || tcm->tcm_parent != parent)
		return;
	/* TCA_KIND comes before the statistics (tc_fill_qdisc) */
	for (a = TCA_RTA(tcm); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == TCA_KIND)
			snprintf(kind, sizeof(kind), "%.*s", (int)RTA_PAYLOAD(a),
				 (const char *)RTA_DATA(a));
		else if (a->rta_type == TCA_STATS2)
			parse_stats2(a, s, kind);
		else if (a->rta_type == TCA_XSTATS) {
			xstats = RTA_DATA(a);
			xlen = RTA_PAYLOAD(a);
		}
	}
	if (xstats && !strcmp(kind, "dualpi2")) {
		s->is_dualpi2 = 1;
		memcpy(&s->dq, xstats, xlen < sizeof(s->dq) ? xlen : sizeof(s->dq));
		s->marks = s->dq.ecn_mark;
	} else if (xstats && strcmp(kind, "cake")) {
		s->marks = xstats_marks(kind, xstats, xlen);
	}
	s->found = 1;
}

/* An RTM_GETQDISC request for IFINDEX (and PARENT, 0 for all) with FLAGS. */
static int ask_qdisc(int fd, int ifindex, uint32_t parent, uint32_t seq, uint16_t flags)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tcm;
	} req = {
		.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		.nh.nlmsg_type = RTM_GETQDISC,
		.nh.nlmsg_flags = NLM_F_REQUEST | flags,
		.nh.nlmsg_seq = seq,
		.tcm.tcm_family = AF_UNSPEC,
		.tcm.tcm_ifindex = ifindex,
		.tcm.tcm_parent = parent,
	};

	return send(fd, &req, req.nh.nlmsg_len, 0) < 0 ? -1 : 0;
}

/* One dump of DEV's qdiscs; 0 if the wanted qdisc was found. */
static int sample_once(int fd, int ifindex, uint32_t parent, uint32_t seq, struct sample *s)
{
	static char buf[RECV_BUF];
	int done = 0;

	memset(s, 0, sizeof(*s));
	if (ask_qdisc(fd, ifindex, 0, seq, NLM_F_DUMP) < 0)
		return -1;
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == RTM_NEWQDISC)
				parse_qdisc(h, ifindex, parent, s);
		}
	}
	return s->found ? 0 : -1;
}

/*
 * The one qdisc whose parent is PARENT, by RTM_GETQDISC without NLM_F_DUMP:
 * the kernel answers with that qdisc alone (NLM_F_ECHO: to us), one
 * receive instead of a dump of the device's qdiscs and its NLMSG_DONE.
 * 0: sampled; -1: a failure; -2: this kernel does not answer so (the
 * caller dumps instead).
 */
static int sample_get(int fd, int ifindex, uint32_t parent, uint32_t seq, struct sample *s)
{
	static char buf[RECV_BUF];
	struct nlmsghdr *h;
	ssize_t n;

	memset(s, 0, sizeof(*s));
	if (ask_qdisc(fd, ifindex, parent, seq, NLM_F_ECHO) < 0)
		return -1;
	for (int tries = 0; tries < 16; tries++) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;	/* a late answer to an earlier request */
			if (h->nlmsg_type == RTM_NEWQDISC)
				parse_qdisc(h, ifindex, parent, s);
			/* the answer, or an error: either way the last message */
			return s->found ? 0 : -2;
		}
	}
	return -2;
}

static int enter_netns(const char *name)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = setns(fd, CLONE_NEWNET);
	close(fd);
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: qsampler [-n NETNS] -i DEV -p PARENT -o FILE [[-n NETNS] -i DEV -p PARENT "
		"-o FILE]... [-r HZ] [-d MAX_SECONDS]\n");
	exit(2);
}

static int open_target(struct target *tg, int self_ns)
{
	if (tg->ns && enter_netns(tg->ns)) {
		fprintf(stderr, "qsampler: cannot enter netns %s: %s\n", tg->ns, strerror(errno));
		return -1;
	}
	tg->ifindex = if_nametoindex(tg->dev);
	if (!tg->ifindex) {
		fprintf(stderr, "qsampler: no device %s%s%s\n", tg->dev, tg->ns ? " in " : "",
			tg->ns ? tg->ns : "");
		return -1;
	}
	tg->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (tg->fd < 0) {
		perror("qsampler: netlink socket");
		return -1;
	}
	if (self_ns >= 0 && setns(self_ns, CLONE_NEWNET)) {
		perror("qsampler: back to the own netns");
		return -1;
	}
	tg->fp = fopen(tg->out, "w");
	tg->buf = malloc(OUT_BUF);
	if (!tg->fp || !tg->buf) {
		fprintf(stderr, "qsampler: cannot write %s: %s\n", tg->out, strerror(errno));
		return -1;
	}
	setvbuf(tg->fp, tg->buf, _IOFBF, OUT_BUF);
	return 0;
}

/* One row (the header first, with the first sample: it depends on the kind) */
static void write_row(struct target *tg, double t, const struct sample *s)
{
	if (!tg->header) {
		fprintf(tg->fp, "t,qlen_pkts,backlog_bytes,drops,sent_pkts,sent_bytes,marks%s\n",
			s->is_dualpi2 ? ",l_delay_us,c_delay_us,l_enq_pkts,c_enq_pkts,step_marks,prob" :
			"");
		tg->header = 1 + s->is_dualpi2;
	}
	fprintf(tg->fp, "%.6f,%u,%u,%u,%u,%llu,%u", t, s->qlen, s->backlog, s->drops,
		s->packets, (unsigned long long)s->bytes, s->marks);
	if (tg->header == 2)
		fprintf(tg->fp, ",%u,%u,%u,%u,%u,%u", s->dq.delay_l, s->dq.delay_c,
			s->dq.packets_in_l, s->dq.packets_in_c, s->dq.step_marks, s->dq.prob);
	fputc('\n', tg->fp);
}

int main(int argc, char **argv)
{
	struct target tgs[MAX_TARGETS], cur = { 0 };
	double hz = 100, max_s = 3600, t0, t;
	struct itimerspec its = { 0 };
	struct timespec start;
	struct sample s;
	uint32_t seq = 1;
	uint64_t ticks;
	long period_ns;
	int opt, i, n = 0, ready = 0, tfd, self_ns, err = 0;

	while ((opt = getopt(argc, argv, "n:i:p:o:r:d:")) != -1) {
		switch (opt) {
		case 'n': cur.ns = optarg; break;
		case 'i': cur.dev = optarg; break;
		case 'p': cur.parent_s = optarg; break;
		case 'o':
			cur.out = optarg;
			if (!cur.dev || !cur.parent_s || n == MAX_TARGETS)
				usage();
			tgs[n++] = cur;
			memset(&cur, 0, sizeof(cur));
			break;
		case 'r': hz = atof(optarg); break;
		case 'd': max_s = atof(optarg); break;
		default: usage();
		}
	}
	if (!n || cur.ns || cur.dev || cur.parent_s || optind != argc)
		usage();
	for (i = 0; i < n; i++) {
		if (parse_parent(tgs[i].parent_s, &tgs[i].parent)) {
			fprintf(stderr, "qsampler: bad parent %s (want MAJOR:MINOR in hex, or root)\n",
				tgs[i].parent_s);
			return 2;
		}
	}
	if (!(hz >= 1 && hz <= 10000) || !(max_s > 0 && max_s <= 86400)) {
		fprintf(stderr, "qsampler: -r must be 1..10000 Hz and -d 0..86400 s\n");
		return 2;
	}
	self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	for (i = 0; i < n; i++)
		if (open_target(&tgs[i], self_ns))
			return 1;
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (tfd < 0) {
		perror("qsampler: timerfd");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	period_ns = (long)(1e9 / hz);
	clock_gettime(CLOCK_MONOTONIC, &start);
	its.it_value = start;
	its.it_interval.tv_sec = period_ns / 1000000000L;
	its.it_interval.tv_nsec = period_ns % 1000000000L;
	/* the first expiry is at once: absolute start time */
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
		perror("qsampler: timerfd_settime");
		return 1;
	}
	t0 = start.tv_sec + start.tv_nsec / 1e9;
	while (!stop) {
		/* blocks until the next tick; several missed ticks are one sample */
		if (read(tfd, &ticks, sizeof(ticks)) < 0) {
			if (errno == EINTR)
				continue;
			perror("qsampler: timerfd read");
			err = 1;
			break;
		}
		t = now_s();
		if (t - t0 > max_s)
			break;
		for (i = 0; i < n; i++) {
			struct target *tg = &tgs[i];

			int r = -2;

			if (!tg->dump) {
				r = sample_get(tg->fd, tg->ifindex, tg->parent, seq++, &s);
				if (r == -2)
					tg->dump = 1;	/* from now on: dump */
			}
			if (r && sample_once(tg->fd, tg->ifindex, tg->parent, seq++, &s)) {
				fprintf(stderr, "qsampler: no qdisc with parent %s on %s\n",
					tg->parent_s, tg->dev);
				stop = 1;
				err = 1;
				break;
			}
			write_row(tg, t, &s);
		}
		if (!ready && !err) {
			printf("ready\n");
			fflush(stdout);
			ready = 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (fclose(tgs[i].fp)) {
			perror("qsampler: write");
			err = 1;
		}
		free(tgs[i].buf);
	}
	return err;
}
