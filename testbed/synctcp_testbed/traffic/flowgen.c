// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen: every bulk TCP flow and every CBR UDP flow of a testbed case,
 * both ends, in one process.
 *
 * Under User-Mode Linux the wall cost of a run is per user process and per
 * system call, not per flow (docs/platform.md), so one process with one
 * epoll loop replaces the pair of iperf3 processes per flow.  It enters
 * each network namespace with setns(2) only to create sockets (a socket
 * stays in the namespace it was created in), then runs everything from
 * wherever it is.
 *
 *   flowgen -c CONFIG -o RESULT.json [-i INTERVAL_S] [-l LIMIT_S] [-w RCVLOWAT]
 *           [-W WINDOW] [--ready-file FILE] [--go-file FIFO] [--side both|send|recv]
 *
 * -w sets SO_RCVLOWAT on the TCP receivers (default 0: woken by every
 * arrival, as iperf3 is): fewer wake-ups at high rates, while the kernel
 * still wakes the reader when the receive window is about to close.
 *
 * -W clamps the window every TCP receiver advertises to WINDOW bytes (the
 * scenario's window_segs: the senders' maximum window).  Neither a route's
 * window nor one TCP_WINDOW_CLAMP does it on Linux >= 6.7: the kernel
 * resets the clamp to its receive buffer's window when it learns the
 * segments' size to truesize ratio (tcp_measure_rcv_mss()) and as
 * autotuning grows the buffer (docs/platform.md).  So the listener gets a
 * fixed receive buffer (SO_RCVBUF 2 x WINDOW, which also stops the
 * autotuning) and the clamp, and the connection the clamp again after its
 * first read and at every interval boundary.
 *
 * --side splits the flows between two hosts (synctcp-testbed run --hosts):
 * "send" runs only the senders of the config's flows, "recv" only their
 * receivers, each host its own process with its own go; the runner merges
 * the two results (the receiver's intervals, the sender's retransmissions).
 * A namespace "-" is the process's own: no setns.  The result has
 * "go_realtime" (CLOCK_REALTIME at go) beside "go_monotonic", and a
 * receiver-only CBR flow takes the count of packets sent from the end marker.
 *
 * CONFIG has one directive per line ('#' starts a comment):
 *
 *   flow ID bulk SRC_NS DST_NS SRC_ADDR DST_ADDR PORT CPORT CC START_S SECONDS
 *   flow ID cbr  SRC_NS DST_NS SRC_ADDR DST_ADDR PORT CPORT - START_S SECONDS RATE_BPS PKT_BYTES
 *
 * Sequence: every receiver (TCP listener, bound UDP socket) and every
 * sender socket is created first, each sender's congestion control set
 * with TCP_CONGESTION and bound to SRC_ADDR:CPORT; then "ready" goes to
 * stdout (and a line is appended to --ready-file), and flowgen waits for
 * go: a line on stdin, or, with --go-file, a writer opening and closing
 * that FIFO.  The go time (CLOCK_MONOTONIC) is time 0; each flow starts
 * at START_S and its sender stops after SECONDS (TCP: shutdown, the
 * receiver reads to EOF; UDP: a final marker packet, or DRAIN_S later).
 *
 * The receiver counts bytes per interval of INTERVAL_S (default 1 s) on
 * one grid from the go time, so the intervals of all flows share a clock:
 * [k*I, (k+1)*I), a flow's first interval begins at its start and its
 * last ends when its receiver saw the end.  At each grid point a bulk
 * flow's sender, while it sends, also records its tcpi_total_retrans
 * ("retrans": [[t, total], ...]), so that retransmissions can be counted
 * over the same interval as the bytes.  All times in the result are
 * seconds relative to go; "go_monotonic" is the go time itself.
 *
 * Exit status: 0 every flow ran; 1 a flow failed (its "error" says why;
 * the result is still written) or the run was stopped; 2 usage, config,
 * or a congestion control the kernel refused (one line on stderr naming
 * the flow and algorithm; flowgen never runs a substitute).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_FLOWS	4096
#define MAX_NS		1024
#define NAME_LEN	64
#define CC_LEN		16		/* TCP_CA_NAME_MAX */
#define IO_BUF		(256 * 1024)
#define DRAIN_S		3.0		/* UDP receiver waits this long for the end marker */
#define MAX_EVENTS	256
#define MAX_CBR_BURST	1000		/* packets one timer wake may send for a flow */
#define CBR_MAGIC	0x53594e43u	/* "SYNC" */
#define CBR_END		UINT64_MAX	/* sequence number of the end marker */
#define MAX_INTERVALS	(1 << 20)	/* per flow */

enum kind { BULK, CBR };
enum role { R_LISTEN, R_RECV, R_SEND, R_TIMER, R_SIGNAL };

struct ival {
	double start, end;
	uint64_t bytes;
};

/* the sender's tcpi_total_retrans at an interval boundary */
struct rsample {
	double t;
	uint32_t total;
};

struct flow;

/* what an epoll event points at */
struct endp {
	enum role role;
	struct flow *f;
};

struct flow {
	char id[NAME_LEN], src_ns[NAME_LEN], dst_ns[NAME_LEN], cc[CC_LEN], cc_used[CC_LEN];
	char src_addr[INET_ADDRSTRLEN], dst_addr[INET_ADDRSTRLEN];
	enum kind kind;
	int port, cport;
	double start_s, seconds, rate_bps;
	int pkt_bytes;

	int lfd, rfd, sfd;			/* listener, receiver, sender */
	struct endp e_listen, e_recv, e_send;

	/* times relative to go, < 0: not yet */
	double t_started, t_connected, t_stopped, t_recv_end;
	int sending, send_done, recv_done, started;

	uint64_t sent_bytes, recv_bytes, ival_bytes;
	double ival_start;
	struct ival *ivals;
	size_t nivals, cap;
	struct rsample *rs;
	size_t nrs, rcap;

	/* cbr */
	uint64_t seq_next, pkts_recv, ooo, max_seq_seen;
	double next_pkt;

	/* tcp_info of the sender when it stopped and when it closed */
	int have_info;
	struct tcp_info info;

	int clamped;			/* -W applied after the first read */

	char error[256];
};

static struct flow *flows;
static int nflows;
static double interval_s = 1.0, limit_s = 3600.0;
static int rcvlowat;		/* -w: SO_RCVLOWAT of TCP receivers, 0: off */
static int window;		/* -W: the TCP receivers' window clamp (bytes), 0: off */
static struct timespec go_ts;
static int epfd, tfd;
static char io_buf[IO_BUF];
static int failed;
/* --side: which ends of the flows this process runs */
static int side_send = 1, side_recv = 1;
static struct timespec go_real;

static void die2(const char *fmt, ...)
{
	va_list ap;

	fputs("flowgen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double go_mono(void)
{
	return go_ts.tv_sec + go_ts.tv_nsec / 1e9;
}

static double now_rel(void)
{
	return mono() - go_mono();
}

static void flow_error(struct flow *f, const char *what, int err)
{
	if (!f->error[0])
		snprintf(f->error, sizeof(f->error), "%s: %s", what, strerror(err));
	failed = 1;
}

/* ---------------------------------------------------------------- config */

static int copy_field(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return -1;
	strcpy(dst, src);
	return 0;
}

static int parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

static int valid_addr(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1;
}

static void parse_flow(char **w, int n, const char *path, int line)
{
	struct flow *f;
	double port, cport, rate, pkt;

	if (nflows >= MAX_FLOWS)
		die2("%s:%d: more than %d flows", path, line, MAX_FLOWS);
	f = &flows[nflows];
	memset(f, 0, sizeof(*f));
	if (n < 12)
		die2("%s:%d: a flow needs 11 fields after 'flow' (cbr: 13)", path, line);
	if (copy_field(f->id, sizeof(f->id), w[1]) ||
	    copy_field(f->src_ns, sizeof(f->src_ns), w[3]) ||
	    copy_field(f->dst_ns, sizeof(f->dst_ns), w[4]) ||
	    copy_field(f->src_addr, sizeof(f->src_addr), w[5]) ||
	    copy_field(f->dst_addr, sizeof(f->dst_addr), w[6]))
		die2("%s:%d: a name or address is too long", path, line);
	if (!valid_addr(f->src_addr) || !valid_addr(f->dst_addr))
		die2("%s:%d: addresses must be IPv4 (%s, %s)", path, line, w[5], w[6]);
	if (!strcmp(w[2], "bulk"))
		f->kind = BULK;
	else if (!strcmp(w[2], "cbr"))
		f->kind = CBR;
	else
		die2("%s:%d: kind %s is neither bulk nor cbr", path, line, w[2]);
	if (parse_num(w[7], 1, 65535, &port) || parse_num(w[8], 1, 65535, &cport) ||
	    port != (int)port || cport != (int)cport)
		die2("%s:%d: ports must be integers 1..65535", path, line);
	f->port = (int)port;
	f->cport = (int)cport;
	if (f->kind == BULK) {
		if (n != 12)
			die2("%s:%d: a bulk flow has 11 fields after 'flow'", path, line);
		if (copy_field(f->cc, sizeof(f->cc), w[9]) || !f->cc[0] || !strcmp(f->cc, "-"))
			die2("%s:%d: flow %s: bad congestion control %s", path, line, f->id, w[9]);
	} else if (n != 14) {
		die2("%s:%d: a cbr flow has 13 fields after 'flow'", path, line);
	}
	if (parse_num(w[10], 0, 86400, &f->start_s) || parse_num(w[11], 0.001, 86400, &f->seconds))
		die2("%s:%d: START_S must be 0..86400 and SECONDS 0.001..86400", path, line);
	if (f->kind == CBR) {
		/* PKT_BYTES: UDP payload, at least the 24-byte header (magic, seq, count) */
		if (parse_num(w[12], 1000, 1e10, &rate) || parse_num(w[13], 24, 65000, &pkt) ||
		    pkt != (int)pkt)
			die2("%s:%d: cbr RATE_BPS must be 1000..1e10 and PKT_BYTES 24..65000",
			     path, line);
		f->rate_bps = rate;
		f->pkt_bytes = (int)pkt;
	}
	for (int i = 0; i < nflows; i++) {
		if (!strcmp(flows[i].id, f->id))
			die2("%s:%d: flow id %s twice", path, line, f->id);
		if (!strcmp(flows[i].dst_ns, f->dst_ns) && flows[i].port == f->port &&
		    flows[i].kind == f->kind)
			die2("%s:%d: flows %s and %s share port %d in %s", path, line,
			     flows[i].id, f->id, f->port, f->dst_ns);
	}
	f->lfd = f->rfd = f->sfd = -1;
	f->t_started = f->t_connected = f->t_stopped = f->t_recv_end = -1;
	nflows++;
}

static void read_config(const char *path)
{
	char line[1024], *w[16], *save, *tok;
	int lineno = 0, n;
	FILE *fp = fopen(path, "r");

	if (!fp)
		die2("cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (lineno > 100000)
			die2("%s: more than 100000 lines", path);
		if (!strchr(line, '\n') && !feof(fp))
			die2("%s:%d: line too long", path, lineno);
		*strchrnul(line, '#') = 0;
		n = 0;
		for (tok = strtok_r(line, " \t\r\n", &save); tok && n < 16;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			w[n++] = tok;
		if (!n)
			continue;
		if (!strcmp(w[0], "flow"))
			parse_flow(w, n, path, lineno);
		else
			die2("%s:%d: unknown directive %s", path, lineno, w[0]);
	}
	fclose(fp);
	if (!nflows)
		die2("%s: no flows", path);
}

/* ---------------------------------------------------------------- setup */

static struct {
	char name[NAME_LEN];
	int fd;
} ns_cache[MAX_NS];
static int n_ns;

/* the namespace sockets are created in now; "-" is the one flowgen started in */
static char cur_ns[NAME_LEN] = "-";
static int home_ns = -1;

/*
 * A named namespace is entered with setns every time, as before --side
 * existed: a run in namespaces makes exactly the system calls it made then
 * (each one moves simulated time, docs/platform.md).  "-" is the namespace
 * flowgen started in: no setns while still there (a host's own needs no
 * privilege), and home_ns, opened before any setns when a config mixes "-"
 * with named ones, to go back to.
 */
static void enter_ns(const char *name)
{
	char path[PATH_MAX];
	int i, fd = -1;

	if (!strcmp(name, "-")) {
		if (!strcmp(cur_ns, "-"))
			return;
		if (home_ns < 0)
			die2("no way back to flowgen's own namespace");
		if (setns(home_ns, CLONE_NEWNET))
			die2("cannot return to flowgen's namespace: %s", strerror(errno));
		strcpy(cur_ns, "-");
		return;
	}
	for (i = 0; i < n_ns; i++)
		if (!strcmp(ns_cache[i].name, name))
			fd = ns_cache[i].fd;
	if (fd < 0) {
		if (n_ns >= MAX_NS)
			die2("more than %d namespaces", MAX_NS);
		snprintf(path, sizeof(path), "/run/netns/%s", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die2("cannot open namespace %s: %s", path, strerror(errno));
		strcpy(ns_cache[n_ns].name, name);
		ns_cache[n_ns++].fd = fd;
	}
	if (setns(fd, CLONE_NEWNET))
		die2("cannot enter namespace %s: %s", name, strerror(errno));
	strcpy(cur_ns, name);
}

static struct sockaddr_in sin_of(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, addr, &sa.sin_addr);
	return sa;
}

static void ep_add(int fd, uint32_t events, struct endp *e)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		die2("epoll_ctl: %s", strerror(errno));
}

static void ep_mod(int fd, uint32_t events, struct endp *e)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
}

static void ep_del_close(int *fd)
{
	if (*fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, *fd, NULL);
		close(*fd);
		*fd = -1;
	}
}

static void setup_receiver(struct flow *f)
{
	struct sockaddr_in sa = sin_of(f->dst_addr, f->port);
	int one = 1, fd;

	enter_ns(f->dst_ns);
	fd = socket(AF_INET, (f->kind == BULK ? SOCK_STREAM : SOCK_DGRAM) |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die2("flow %s: socket in %s: %s", f->id, f->dst_ns, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die2("flow %s: bind %s:%d in %s: %s", f->id, f->dst_addr, f->port, f->dst_ns,
		     strerror(errno));
	f->e_listen = (struct endp){ R_LISTEN, f };
	f->e_recv = (struct endp){ R_RECV, f };
	if (f->kind == BULK) {
		int rcvbuf = 2 * window;

		if (window &&
		    (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
		     setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &window, sizeof(window))))
			die2("flow %s: window %d bytes: %s", f->id, window, strerror(errno));
		if (listen(fd, 4))
			die2("flow %s: listen: %s", f->id, strerror(errno));
		f->lfd = fd;
		ep_add(fd, EPOLLIN, &f->e_listen);
	} else {
		f->rfd = fd;
		ep_add(fd, EPOLLIN, &f->e_recv);
	}
}

static void setup_sender(struct flow *f)
{
	struct sockaddr_in sa = sin_of(f->src_addr, f->cport);
	socklen_t len = sizeof(f->cc_used);
	int one = 1, fd;

	enter_ns(f->src_ns);
	fd = socket(AF_INET, (f->kind == BULK ? SOCK_STREAM : SOCK_DGRAM) |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die2("flow %s: socket in %s: %s", f->id, f->src_ns, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (f->kind == BULK) {
		if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, f->cc, strlen(f->cc)))
			die2("flow %s: congestion control %s refused by the kernel: %s",
			     f->id, f->cc, strerror(errno));
		if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, f->cc_used, &len))
			die2("flow %s: reading back the congestion control: %s", f->id,
			     strerror(errno));
		f->cc_used[CC_LEN - 1] = 0;
		if (strcmp(f->cc_used, f->cc))
			die2("flow %s: congestion control %s refused by the kernel: it set %s",
			     f->id, f->cc, f->cc_used);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die2("flow %s: bind %s:%d in %s: %s", f->id, f->src_addr, f->cport, f->src_ns,
		     strerror(errno));
	f->sfd = fd;
	f->e_send = (struct endp){ R_SEND, f };
}

/* ----------------------------------------------------------- intervals */

/* -W: the receiver's window clamp, again (the kernel may have reset it) */
static void clamp_window(struct flow *f)
{
	if (window && f->kind == BULK && f->rfd >= 0)
		setsockopt(f->rfd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &window, sizeof(window));
}

static void push_ival(struct flow *f, double end)
{
	if (end <= f->ival_start && !f->ival_bytes)
		return;
	if (f->nivals == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct ival *p;

		if (cap > MAX_INTERVALS) {
			flow_error(f, "intervals", E2BIG);
			return;
		}
		p = realloc(f->ivals, cap * sizeof(*p));
		if (!p) {
			flow_error(f, "intervals", ENOMEM);
			return;
		}
		f->ivals = p;
		f->cap = cap;
	}
	f->ivals[f->nivals++] = (struct ival){ f->ival_start, end, f->ival_bytes };
	f->ival_start = end;
	f->ival_bytes = 0;
}

static void read_tcp_info(struct flow *f);

/* at boundary ``at``: the sender's retransmissions so far (bulk, while it sends) */
static void push_retrans(struct flow *f, double at)
{
	if (f->kind != BULK || f->sfd < 0 || !f->sending)
		return;
	read_tcp_info(f);
	if (!f->have_info)
		return;
	if (f->nrs == f->rcap) {
		size_t cap = f->rcap ? 2 * f->rcap : 64;
		struct rsample *p;

		if (cap > MAX_INTERVALS) {
			flow_error(f, "retransmission samples", E2BIG);
			return;
		}
		p = realloc(f->rs, cap * sizeof(*p));
		if (!p) {
			flow_error(f, "retransmission samples", ENOMEM);
			return;
		}
		f->rs = p;
		f->rcap = cap;
	}
	f->rs[f->nrs++] = (struct rsample){ at, f->info.tcpi_total_retrans };
}

static void count_recv(struct flow *f, uint64_t n)
{
	f->recv_bytes += n;
	f->ival_bytes += n;
}

/* --------------------------------------------------------------- flows */

static void read_tcp_info(struct flow *f)
{
	socklen_t len = sizeof(f->info);
	socklen_t cl = sizeof(f->cc_used);

	if (f->sfd < 0 || f->kind != BULK)
		return;
	if (!getsockopt(f->sfd, IPPROTO_TCP, TCP_INFO, &f->info, &len))
		f->have_info = 1;
	if (!getsockopt(f->sfd, IPPROTO_TCP, TCP_CONGESTION, f->cc_used, &cl))
		f->cc_used[CC_LEN - 1] = 0;
}

static void start_flow(struct flow *f, double now)
{
	struct sockaddr_in sa = sin_of(f->dst_addr, f->port);

	f->started = 1;
	f->t_started = now;
	if (f->kind == BULK) {
		if (connect(f->sfd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
			flow_error(f, "connect", errno);
			f->send_done = f->recv_done = 1;
			ep_del_close(&f->sfd);
			ep_del_close(&f->lfd);
			return;
		}
		f->sending = 1;
		ep_add(f->sfd, EPOLLOUT, &f->e_send);
	} else {
		if (connect(f->sfd, (struct sockaddr *)&sa, sizeof(sa))) {
			flow_error(f, "connect", errno);
			f->send_done = f->recv_done = 1;
			return;
		}
		f->t_connected = now;
		f->sending = 1;
		f->next_pkt = now;
		/* the receiver's clock for this flow starts with the flow */
		f->ival_start = now;
		ep_add(f->sfd, EPOLLIN, &f->e_send);	/* ICMP errors */
	}
}

static void stop_sending(struct flow *f, double now)
{
	uint64_t hdr[3];

	if (!f->sending)
		return;
	f->sending = 0;
	f->t_stopped = now;
	if (f->kind == BULK) {
		read_tcp_info(f);
		if (f->sfd >= 0) {
			shutdown(f->sfd, SHUT_WR);
			/* wait for the receiver's FIN */
			ep_mod(f->sfd, EPOLLIN | EPOLLRDHUP, &f->e_send);
		}
	} else {
		hdr[0] = CBR_MAGIC;
		hdr[1] = CBR_END;
		hdr[2] = f->seq_next;
		memcpy(io_buf, hdr, sizeof(hdr));
		send(f->sfd, io_buf, f->pkt_bytes, MSG_DONTWAIT);
		f->send_done = 1;
	}
}

static void recv_finished(struct flow *f, double now)
{
	if (f->recv_done)
		return;
	f->recv_done = 1;
	f->t_recv_end = now;
	push_ival(f, now);
	ep_del_close(&f->rfd);
	ep_del_close(&f->lfd);
}

static void on_listen(struct flow *f, double now)
{
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	int fd = accept4(f->lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (f->rfd >= 0 || ntohs(peer.sin_port) != f->cport) {
		close(fd);	/* not this flow's connection */
		return;
	}
	f->rfd = fd;
	f->ival_start = now;
	/* fewer wake-ups: the kernel still wakes us when the window closes */
	if (rcvlowat)
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &rcvlowat, sizeof(rcvlowat));
	ep_add(fd, EPOLLIN | EPOLLRDHUP, &f->e_recv);
	ep_del_close(&f->lfd);
}

static void on_recv(struct flow *f, double now)
{
	ssize_t n;

	if (f->kind == BULK) {
		n = read(f->rfd, io_buf, sizeof(io_buf));
		if (n > 0) {
			count_recv(f, n);
			if (window && !f->clamped) {
				f->clamped = 1;
				clamp_window(f);
			}
		} else if (n == 0) {
			recv_finished(f, now);
		} else if (errno != EAGAIN && errno != EINTR) {
			flow_error(f, "receive", errno);
			recv_finished(f, now);
		}
		return;
	}
	for (int i = 0; i < 64; i++) {
		uint64_t hdr[3];

		n = recv(f->rfd, io_buf, sizeof(io_buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNREFUSED)
				flow_error(f, "receive", errno);
			return;
		}
		if (n < (ssize_t)sizeof(hdr))
			continue;
		memcpy(hdr, io_buf, sizeof(hdr));
		if (hdr[0] != CBR_MAGIC)
			continue;
		if (hdr[1] == CBR_END) {
			if (!side_send)		/* the sender's count, from its end marker */
				f->seq_next = hdr[2];
			recv_finished(f, now);
			return;
		}
		count_recv(f, n);
		if (f->pkts_recv && hdr[1] < f->max_seq_seen)
			f->ooo++;
		if (hdr[1] > f->max_seq_seen)
			f->max_seq_seen = hdr[1];
		f->pkts_recv++;
	}
}

static void on_send(struct flow *f, uint32_t events, double now)
{
	ssize_t n;
	int err = 0;
	socklen_t len = sizeof(err);

	if (f->kind == CBR) {
		/* an ICMP error queued on the connected UDP socket */
		if (getsockopt(f->sfd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err &&
		    err != ECONNREFUSED)
			flow_error(f, "send", err);
		recv(f->sfd, io_buf, sizeof(io_buf), MSG_DONTWAIT);
		return;
	}
	if (f->t_connected < 0 && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		getsockopt(f->sfd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			flow_error(f, "connect", err);
			f->sending = 0;
			f->send_done = f->recv_done = 1;
			ep_del_close(&f->sfd);
			ep_del_close(&f->lfd);
			return;
		}
		f->t_connected = now;
	}
	if (f->sending) {
		n = write(f->sfd, io_buf, sizeof(io_buf));
		if (n > 0) {
			f->sent_bytes += n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			flow_error(f, "send", errno);
			f->sending = 0;
			read_tcp_info(f);
			f->send_done = 1;
			ep_del_close(&f->sfd);
		}
		return;
	}
	/* stopped: the receiver closed too, or the connection broke */
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
		n = read(f->sfd, io_buf, sizeof(io_buf));
		if (n > 0)
			return;
		read_tcp_info(f);
		f->send_done = 1;
		ep_del_close(&f->sfd);
	}
}

static void cbr_send_due(struct flow *f, double now)
{
	double gap = f->pkt_bytes * 8.0 / f->rate_bps;
	uint64_t hdr[3];

	for (int i = 0; i < MAX_CBR_BURST && f->sending && f->next_pkt <= now + 1e-9; i++) {
		hdr[0] = CBR_MAGIC;
		hdr[1] = f->seq_next;
		hdr[2] = 0;
		memcpy(io_buf, hdr, sizeof(hdr));
		if (send(f->sfd, io_buf, f->pkt_bytes, MSG_DONTWAIT) == f->pkt_bytes)
			f->sent_bytes += f->pkt_bytes;
		/* a full socket buffer is a loss the receiver counts, like a drop */
		f->seq_next++;
		f->next_pkt = f->t_started + f->seq_next * gap;
	}
	if (f->next_pkt <= now + 1e-9)		/* hopelessly late: do not burst */
		f->next_pkt = now + gap;
}

/* ---------------------------------------------------------- scheduling */

static double next_ival;	/* the next interval boundary, relative to go */

/* Due starts, stops and CBR packets at ``now``; the time of the next event. */
static double run_due(double now)
{
	double next = next_ival < limit_s ? next_ival : limit_s;
	int i;

	for (i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];
		double end = f->start_s + f->seconds;

		if (!f->started) {
			if (now + 1e-9 >= f->start_s)
				start_flow(f, now);
			else if (f->start_s < next)
				next = f->start_s;
		}
		if (!f->started)
			continue;
		if (f->sending && now + 1e-9 >= end)
			stop_sending(f, now);
		if (f->sending) {
			if (end < next)
				next = end;
			if (f->kind == CBR) {
				cbr_send_due(f, now);
				if (f->next_pkt < next)
					next = f->next_pkt;
			}
		}
		if (f->kind == CBR && !f->recv_done && f->send_done) {
			if (now + 1e-9 >= f->t_stopped + DRAIN_S)
				recv_finished(f, now);
			else if (f->t_stopped + DRAIN_S < next)
				next = f->t_stopped + DRAIN_S;
		}
	}
	return next;
}

/* at an interval boundary: drain what has arrived, close the interval */
static void close_intervals(double at)
{
	for (int i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		push_retrans(f, at);
		if (f->rfd < 0 || f->recv_done)
			continue;
		for (int k = 0; k < 1024 && f->rfd >= 0 && !f->recv_done; k++) {
			uint64_t before = f->recv_bytes;

			on_recv(f, at);
			if (f->recv_bytes == before)
				break;
		}
		if (f->rfd >= 0 && !f->recv_done) {
			push_ival(f, at);
			clamp_window(f);
		}
	}
}

static void arm(double rel)
{
	struct itimerspec its = { 0 };
	double abs_s = go_mono() + rel;

	its.it_value.tv_sec = (time_t)abs_s;
	its.it_value.tv_nsec = (long)((abs_s - (double)its.it_value.tv_sec) * 1e9);
	if (its.it_value.tv_nsec >= 1000000000L)
		its.it_value.tv_nsec = 999999999L;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static int all_done(void)
{
	for (int i = 0; i < nflows; i++)
		if (!flows[i].started || !flows[i].send_done || !flows[i].recv_done)
			return 0;
	return 1;
}

/* ----------------------------------------------------------------- go */

/* The go FIFO, opened before "ready" so that a writer cannot come and go unseen. */
static int open_go(const char *go_file)
{
	int fd;

	if (!go_file)
		return 0;
	fd = open(go_file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die2("cannot open %s: %s", go_file, strerror(errno));
	return fd;
}

/*
 * Block until go: a line on stdin, or the FIFO's writer opening and
 * closing it (the start barrier of the runner's other clients).
 */
static void wait_go(int fd, int fifo)
{
	char buf[256];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double deadline = mono() + limit_s;

	for (int i = 0; i < 1000000; i++) {
		int left = (int)((deadline - mono()) * 1000);
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p.revents & POLLIN) {
			n = read(fd, buf, sizeof(buf));
			if (n > 0 && !fifo && memchr(buf, '\n', n))
				return;
			if (n > 0)
				continue;
			if (n == 0 && fifo)
				goto go;
			if (n == 0) {
				fprintf(stderr, "flowgen: stdin closed before go\n");
				exit(1);
			}
		}
		if (fifo && (p.revents & POLLHUP))
			goto go;
	}
	fprintf(stderr, "flowgen: no go within %g s\n", limit_s);
	exit(1);
go:
	close(fd);
}

/* -------------------------------------------------------------- output */

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(fp, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(fp, "\\u%04x", *s);
		else
			fputc(*s, fp);
	}
	fputc('"', fp);
}

static void json_time(FILE *fp, const char *key, double t)
{
	if (t < 0)
		fprintf(fp, ", \"%s\": null", key);
	else
		fprintf(fp, ", \"%s\": %.6f", key, t);
}

static int write_result(const char *path, const char *stopped)
{
	char tmp[PATH_MAX];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fp = fopen(tmp, "w");
	if (!fp) {
		fprintf(stderr, "flowgen: cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(fp, "{\"flowgen\": 1, \"interval_s\": %g, \"go_monotonic\": %.6f, "
		"\"go_realtime\": %.6f, \"side\": \"%s\", \"times\": \"seconds from go\", "
		"\"stopped\": ", interval_s, go_mono(), go_real.tv_sec + go_real.tv_nsec / 1e9,
		side_send && side_recv ? "both" : side_send ? "send" : "recv");
	if (stopped)
		json_str(fp, stopped);
	else
		fputs("null", fp);
	fputs(", \"flows\": [", fp);
	for (int i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		fprintf(fp, "%s\n {\"id\": ", i ? "," : "");
		json_str(fp, f->id);
		fprintf(fp, ", \"kind\": \"%s\", \"port\": %d, \"cport\": %d",
			f->kind == BULK ? "bulk" : "cbr", f->port, f->cport);
		if (f->kind == BULK) {
			fputs(", \"cc_requested\": ", fp);
			json_str(fp, f->cc);
			fputs(", \"cc\": ", fp);
			json_str(fp, f->cc_used);
		}
		fprintf(fp, ", \"start_s\": %.6f, \"seconds\": %.6f", f->start_s, f->seconds);
		json_time(fp, "started", f->t_started);
		json_time(fp, "connected", f->t_connected);
		json_time(fp, "stopped", f->t_stopped);
		json_time(fp, "recv_end", f->t_recv_end);
		fprintf(fp, ", \"bytes_sent\": %llu, \"bytes_received\": %llu",
			(unsigned long long)f->sent_bytes, (unsigned long long)f->recv_bytes);
		if (f->kind == BULK) {
			if (f->have_info)
				fprintf(fp, ", \"retransmits\": %u, \"tcp_info\": {\"total_retrans\": %u, "
					"\"snd_cwnd\": %u, \"snd_ssthresh\": %u, \"rtt_us\": %u, "
					"\"min_rtt_us\": %u, \"bytes_acked\": %llu, \"segs_out\": %u, "
					"\"lost\": %u, \"reordering\": %u}",
					f->info.tcpi_total_retrans, f->info.tcpi_total_retrans,
					f->info.tcpi_snd_cwnd, f->info.tcpi_snd_ssthresh,
					f->info.tcpi_rtt, f->info.tcpi_min_rtt,
					(unsigned long long)f->info.tcpi_bytes_acked,
					f->info.tcpi_segs_out, f->info.tcpi_lost,
					f->info.tcpi_reordering);
			else
				fputs(", \"retransmits\": null, \"tcp_info\": null", fp);
		} else {
			uint64_t sent = f->seq_next, got = f->pkts_recv;
			double lost = sent ? 100.0 * (sent > got ? sent - got : 0) / sent : 0.0;

			fprintf(fp, ", \"rate_bps\": %.0f, \"pkt_bytes\": %d, \"packets_sent\": %llu, "
				"\"packets_received\": %llu, \"out_of_order\": %llu, "
				"\"lost_pct\": %.4f", f->rate_bps, f->pkt_bytes,
				(unsigned long long)sent, (unsigned long long)got,
				(unsigned long long)f->ooo, lost);
		}
		fputs(", \"error\": ", fp);
		if (f->error[0])
			json_str(fp, f->error);
		else
			fputs("null", fp);
		fputs(", \"intervals\": [", fp);
		for (size_t k = 0; k < f->nivals; k++)
			fprintf(fp, "%s[%.6f, %.6f, %llu]", k ? ", " : "", f->ivals[k].start,
				f->ivals[k].end, (unsigned long long)f->ivals[k].bytes);
		fputs("]", fp);
		if (f->kind == BULK) {
			fputs(", \"retrans\": [", fp);
			for (size_t k = 0; k < f->nrs; k++)
				fprintf(fp, "%s[%.6f, %u]", k ? ", " : "", f->rs[k].t, f->rs[k].total);
			fputs("]", fp);
		}
		fputs("}", fp);
	}
	fputs("\n]}\n", fp);
	if (fclose(fp)) {
		fprintf(stderr, "flowgen: writing %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	if (rename(tmp, path)) {
		fprintf(stderr, "flowgen: rename to %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr, "usage: flowgen -c CONFIG -o RESULT.json [-i INTERVAL_S] [-l LIMIT_S] "
		"[-w RCVLOWAT] [-W WINDOW] [--ready-file FILE] [--go-file FIFO] [--side both|send|recv]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *config = NULL, *out = NULL, *ready_file = NULL, *go_file = NULL;
	const char *stopped = NULL;
	struct epoll_event evs[MAX_EVENTS];
	struct endp e_timer = { R_TIMER, NULL }, e_sig = { R_SIGNAL, NULL };
	struct rlimit rl;
	sigset_t mask;
	int sfd, gofd, i;
	double next;
	long wakes = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "-c"))
			config = v;
		else if (!strcmp(a, "-o"))
			out = v;
		else if (!strcmp(a, "-i")) {
			if (parse_num(v, 0.01, 3600, &interval_s))
				die2("-i must be 0.01..3600 s");
		} else if (!strcmp(a, "-l")) {
			if (parse_num(v, 1, 86400, &limit_s))
				die2("-l must be 1..86400 s");
		} else if (!strcmp(a, "-w")) {
			double w;

			if (parse_num(v, 0, 64 << 20, &w))
				die2("-w must be 0..%d bytes", 64 << 20);
			rcvlowat = (int)w;
		} else if (!strcmp(a, "-W")) {
			double w;

			if (parse_num(v, 0, 1 << 30, &w))
				die2("-W must be 0..%d bytes", 1 << 30);
			window = (int)w;
		} else if (!strcmp(a, "--ready-file"))
			ready_file = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--side")) {
			side_send = !strcmp(v, "both") || !strcmp(v, "send");
			side_recv = !strcmp(v, "both") || !strcmp(v, "recv");
			if (!side_send && !side_recv)
				die2("--side must be both, send or recv");
		}
		else
			usage();
		i++;
	}
	if (!config || !out)
		usage();
	flows = calloc(MAX_FLOWS, sizeof(*flows));
	if (!flows)
		die2("out of memory");
	read_config(config);
	for (i = 0; i < nflows; i++)
		if (flows[i].start_s + flows[i].seconds + DRAIN_S > limit_s)
			die2("flow %s ends after the limit of %g s (-l)", flows[i].id, limit_s);

	/* three sockets per flow, and some */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)(3 * nflows + 64)) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)(3 * nflows + 64) ? rl.rlim_max :
			      (rlim_t)(3 * nflows + 64);
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (epfd < 0 || tfd < 0 || sfd < 0)
		die2("epoll/timerfd/signalfd: %s", strerror(errno));
	ep_add(tfd, EPOLLIN, &e_timer);
	ep_add(sfd, EPOLLIN, &e_sig);
	signal(SIGPIPE, SIG_IGN);

	/* a config that mixes "-" with named namespaces: the way back, first */
	for (i = 0; i < nflows; i++)
		if (home_ns < 0 && (!strcmp(flows[i].src_ns, "-") || !strcmp(flows[i].dst_ns, "-"))) {
			home_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
			if (home_ns < 0)
				die2("cannot open /proc/self/ns/net: %s", strerror(errno));
		}
	/* all receivers first, then the senders (--side: only this host's ends) */
	for (i = 0; i < nflows && side_recv; i++)
		setup_receiver(&flows[i]);
	for (i = 0; i < nflows && side_send; i++)
		setup_sender(&flows[i]);
	for (i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		if (!side_send) {
			/* the other host sends: this end only receives, until EOF
			 * (UDP: the end marker, or DRAIN_S after the planned stop) */
			f->started = 1;
			f->send_done = 1;
			if (f->kind == CBR) {
				f->ival_start = f->start_s;
				f->t_stopped = f->start_s + f->seconds;
			}
		}
		if (!side_recv)
			f->recv_done = 1;
	}

	gofd = open_go(go_file);
	printf("ready\n");
	fflush(stdout);
	if (ready_file) {
		int fd = open(ready_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0 || write(fd, "\n", 1) != 1)
			die2("cannot append to %s: %s", ready_file, strerror(errno));
		close(fd);
	}
	wait_go(gofd, go_file != NULL);
	clock_gettime(CLOCK_MONOTONIC, &go_ts);
	/* a host's side only (run --hosts): a clock read more moves simulated time */
	if (!side_send || !side_recv)
		clock_gettime(CLOCK_REALTIME, &go_real);

	next_ival = interval_s;
	next = run_due(0);
	arm(next);
	for (;;) {
		int n = epoll_wait(epfd, evs, MAX_EVENTS, -1);
		double now;

		if (n < 0 && errno != EINTR) {
			stopped = "epoll_wait failed";
			break;
		}
		if (++wakes > 2000000000L) {
			stopped = "too many wake-ups";
			break;
		}
		now = now_rel();
		/* interval boundaries first: the timer fires at one */
		for (int k = 0; k < 1000 && now + 1e-9 >= next_ival; k++) {
			close_intervals(next_ival);
			next_ival += interval_s;
		}
		for (i = 0; i < n; i++) {
			struct endp *e = evs[i].data.ptr;
			uint64_t ticks;
			struct signalfd_siginfo si;

			switch (e->role) {
			case R_TIMER:
				if (read(tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					stopped = "timerfd failed";
				break;
			case R_SIGNAL:
				if (read(sfd, &si, sizeof(si)) == sizeof(si))
					stopped = si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
				break;
			case R_LISTEN:
				if (e->f->lfd >= 0)
					on_listen(e->f, now);
				break;
			case R_RECV:
				if (e->f->rfd >= 0)
					on_recv(e->f, now);
				break;
			case R_SEND:
				if (e->f->sfd >= 0)
					on_send(e->f, evs[i].events, now);
				break;
			}
		}
		if (stopped)
			break;
		if (now + 1e-9 >= next) {
			next = run_due(now);
			arm(next);
		}
		if (all_done())
			break;
		if (now >= limit_s) {
			stopped = "hard time limit (-l)";
			break;
		}
	}
	if (stopped) {
		for (i = 0; i < nflows; i++) {
			struct flow *f = &flows[i];

			if (f->sending)
				stop_sending(f, now_rel());
			if (f->started && !f->recv_done)
				recv_finished(f, now_rel());
			if (f->kind == BULK && !f->have_info)
				read_tcp_info(f);
		}
		failed = 1;
	}
	if (write_result(out, stopped))
		return 1;
	if (stopped)
		fprintf(stderr, "flowgen: stopped: %s\n", stopped);
	for (i = 0; i < nflows; i++)
		if (flows[i].error[0])
			fprintf(stderr, "flowgen: flow %s: %s\n", flows[i].id, flows[i].error);
	return failed ? 1 : 0;
}
