// SPDX-License-Identifier: GPL-2.0
/*
 * cc_info_race COUNT CC_A CC_B: on one connected loopback socket, one
 * thread switches TCP_CONGESTION between CC_A and CC_B COUNT times while
 * another reads TCP_CC_INFO (get_info() under RCU, without the socket
 * lock) COUNT times, both as fast as they can.  A count, not a time:
 * under UML's simulated time a busy loop lets no time pass.  Issue 15: tcp_mixreact's get_info() followed a
 * pointer that release() frees and the next algorithm's init() overwrites
 * (tcp_etcp puts its window, W << 16, at the same offset): a crash of the
 * reader's kernel thread.  Prints the number of switches and reads.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd;
static unsigned long count;
static const char *cc[2];
static unsigned long switches, reads, errors;

static void *switcher(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < count; i++) {
		if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc[i & 1],
			       strlen(cc[i & 1])) < 0)
			errors++;
		switches++;
	}
	return NULL;
}

static void *reader(void *arg)
{
	unsigned char buf[64];

	(void)arg;
	while (reads < count) {
		socklen_t len = sizeof(buf);

		getsockopt(fd, IPPROTO_TCP, TCP_CC_INFO, buf, &len);
		reads++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	pthread_t t1, t2;
	int srv, peer;

	if (argc != 4)
		return 2;
	count = strtoul(argv[1], NULL, 10);
	cc[0] = argv[2];
	cc[1] = argv[3];
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(srv, (void *)&a, sizeof(a)) || listen(srv, 1) ||
	    getsockname(srv, (void *)&a, &alen))
		return 2;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (void *)&a, sizeof(a)))
		return 2;
	peer = accept(srv, NULL, NULL);
	if (peer < 0 || write(fd, "x", 1) != 1)
		return 2;
	pthread_create(&t1, NULL, switcher, NULL);
	pthread_create(&t2, NULL, reader, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("switches %lu reads %lu errors %lu\n", switches, reads, errors);
	close(peer);
	close(fd);
	close(srv);
	return errors ? 1 : 0;
}
