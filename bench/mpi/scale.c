/*
 * The scaling patterns of Shipman et al. (connection management and shared
 * receive queues in Open MPI), for bench/scale.sh: a pattern runs, then every
 * rank prints one line with what it cost that process: MPI_Init time, peak
 * resident memory (VmHWM), and the provider's connection counters read
 * through MPIX_Fabric_getopt. Nothing is reduced, so the figures are not
 * disturbed by the gathering of them. Before the pattern, each rank lets the
 * connections its mode makes at start come up (settle()).
 *
 *   scale hello               MPI_Init and MPI_Finalize only
 *   scale pairwise [iters]    ping-pong (1 KiB) with rank (r + N/2) % N
 *   scale halo [iters]        exchange (1 KiB) with the 4 neighbours on a
 *                             periodic 2-D grid (the NAS-like stencil case)
 *   scale alltoall [iters]    128 B between every pair of ranks (FT/IS-like)
 */
#include <mpi.h>
#include <rdma/fi_ext_matchbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static void pairwise(int rank, int size, int iters)
{
	int peer = (rank + size / 2) % size, i;
	char sbuf[1024] = { 0 }, rbuf[1024];

	if (peer == rank)
		return;
	for (i = 0; i < iters; i++) {
		if (rank < peer) {
			MPI_Send(sbuf, sizeof(sbuf), MPI_CHAR, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, sizeof(rbuf), MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, sizeof(rbuf), MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, sizeof(sbuf), MPI_CHAR, peer, 1, MPI_COMM_WORLD);
		}
	}
}

static void halo(int rank, int size, int iters)
{
	int px = 1, x, y, py, nb[4], i, k;
	static char sbuf[4][1024], rbuf[4][1024];
	MPI_Request rq[8];

	for (k = 1; k * k <= size; k++)
		if (size % k == 0)
			px = k;
	py = size / px;
	x = rank % px;
	y = rank / px;
	nb[0] = y * px + (x + 1) % px;
	nb[1] = y * px + (x + px - 1) % px;
	nb[2] = ((y + 1) % py) * px + x;
	nb[3] = ((y + py - 1) % py) * px + x;
	for (i = 0; i < iters; i++) {
		for (k = 0; k < 4; k++)
			MPI_Irecv(rbuf[k], sizeof(rbuf[k]), MPI_CHAR, nb[k], k ^ 1, MPI_COMM_WORLD,
				  &rq[k]);
		for (k = 0; k < 4; k++)
			MPI_Isend(sbuf[k], sizeof(sbuf[k]), MPI_CHAR, nb[k], k, MPI_COMM_WORLD,
				  &rq[4 + k]);
		MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
	}
}

/* Every rank exchanges 128 B with every other rank directly, as FT's and
 * IS's transposes do (MPI_Alltoall itself may route through few peers). */
static void alltoall(int rank, int size, int iters)
{
	char *s = calloc((size_t)size, 128), *r = malloc((size_t)size * 128);
	MPI_Request *rq = malloc(2 * (size_t)size * sizeof(*rq));
	int i, k, n;

	for (i = 0; i < iters; i++) {
		n = 0;
		for (k = 1; k < size; k++) {
			int from = (rank + size - k) % size;

			MPI_Irecv(r + (size_t)from * 128, 128, MPI_CHAR, from, 3, MPI_COMM_WORLD,
				  &rq[n++]);
		}
		for (k = 1; k < size; k++) {
			int to = (rank + k) % size;

			MPI_Isend(s + (size_t)to * 128, 128, MPI_CHAR, to, 3, MPI_COMM_WORLD,
				  &rq[n++]);
		}
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
	}
	free(rq);
	free(s);
	free(r);
}

static int net_stats(struct fi_matchbox_net_stats *ns)
{
	size_t len = sizeof(*ns);

	memset(ns, 0, sizeof(*ns));
#ifdef MPIX_FABRIC_GETOPT
	if (MPIX_Fabric_getopt(FI_MATCHBOX_OPT_NET_STATS, ns, &len) == MPI_SUCCESS)
		return 0;
	memset(ns, 0, sizeof(*ns));
#endif
	return -1;
}

/* Connections a mode makes "at start" are made by progress after the
 * addresses are known, so a rank that never calls MPI again would never see
 * them: progress (without messages) until the count has been still for half
 * a second, at most 20 s, and report how long that took. */
static double settle(void)
{
	struct fi_matchbox_net_stats ns;
	double t0 = now(), still = t0;
	uint64_t last = 0;
	int flag;

	if (net_stats(&ns))
		return 0;
	last = ns.conns_made + ns.conns_accepted;
	while (now() - still < 0.5 && now() - t0 < 20) {
		MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		net_stats(&ns);
		if (ns.conns_made + ns.conns_accepted != last) {
			last = ns.conns_made + ns.conns_accepted;
			still = now();
		}
	}
	return still - t0;
}

int main(int argc, char **argv)
{
	const char *pat = argc > 1 ? argv[1] : "hello";
	int iters = argc > 2 ? atoi(argv[2]) : 0, rank, size;
	struct fi_matchbox_net_stats ns;
	double t0 = now(), t_init, t_settle;

	MPI_Init(&argc, &argv);
	t_init = now() - t0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	t_settle = settle();
	if (!strcmp(pat, "pairwise"))
		pairwise(rank, size, iters ? iters : 100);
	else if (!strcmp(pat, "halo"))
		halo(rank, size, iters ? iters : 100);
	else if (!strcmp(pat, "alltoall"))
		alltoall(rank, size, iters ? iters : 20);
	else if (strcmp(pat, "hello")) {
		if (!rank)
			fprintf(stderr, "usage: scale hello|pairwise|halo|alltoall [iters]\n");
		MPI_Finalize();
		return 2;
	}
	net_stats(&ns);
	printf("scale %s %d rank %d init_s %.4f settle_s %.3f hwm_kb %ld conns_open %llu "
	       "conns_max %llu net_peers %llu dgram %llu conn_msgs %llu srq %llu\n",
	       pat, size, rank, t_init, t_settle, vm_hwm_kb(), (unsigned long long)ns.conns_open,
	       (unsigned long long)ns.conns_max, (unsigned long long)ns.peers,
	       (unsigned long long)ns.dgram_msgs, (unsigned long long)ns.conn_msgs,
	       (unsigned long long)ns.srq_posted);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
