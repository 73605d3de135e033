/*
 * A TCP ping-pong on a plain socket: the floor that the wires between two
 * hosts allow a message library, with nothing between the program and the
 * kernel but send() and recv(). One connection, TCP_NODELAY, non-blocking
 * receives polled in a loop (as a spinning MPI rank polls), so the time is
 * the kernel's and the wire's. bench/net_floor.sh sets it beside libfabric's
 * core providers, matchbox and the MPI libraries on the same hosts.
 *
 * usage: sockpp [-S bytes] [-I iterations] [-p port] [host]
 * Without a host it waits for one connection; with one it connects and,
 * after 10% warm-up iterations, prints "bytes one-way-microseconds".
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int xfer(int fd, char *buf, size_t len, int out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(fd, buf + done, len - done, MSG_NOSIGNAL)
				: recv(fd, buf + done, len - done, 0);

		if (n > 0)
			done += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return -1;
	}
	return 0;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	/* The server may not be listening yet: try for about five seconds. */
	for (int tries = 0; tries < 500; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || !connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		fd = -1;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	freeaddrinfo(ai);
	return fd;
}

static int accept_one(const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0), fd;

	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1))
		return -1;
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	return fd;
}

int main(int argc, char **argv)
{
	const char *port = "47990";
	size_t len = 4096;
	long iters = 10000, warm;
	int opt, one = 1, fd;
	char *buf;
	double t0 = 0;

	while ((opt = getopt(argc, argv, "S:I:p:")) != -1) {
		switch (opt) {
		case 'S': len = strtoul(optarg, NULL, 0); break;
		case 'I': iters = atol(optarg); break;
		case 'p': port = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-S bytes] [-I iterations] [-p port] [host]\n", argv[0]);
			return 2;
		}
	}
	if (!len || iters < 1 || !(buf = calloc(1, len)))
		return 2;
	fd = optind < argc ? connect_to(argv[optind], port) : accept_one(port);
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK)) {
		perror("sockpp: connection");
		return 1;
	}
	warm = iters / 10;
	for (long i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = now_us();
		if (optind < argc ? xfer(fd, buf, len, 1) || xfer(fd, buf, len, 0)
				  : xfer(fd, buf, len, 0) || xfer(fd, buf, len, 1)) {
			perror("sockpp: transfer");
			return 1;
		}
	}
	if (optind < argc)
		printf("%zu %.2f\n", len, (now_us() - t0) / (double)iters / 2);
	close(fd);
	free(buf);
	return 0;
}
