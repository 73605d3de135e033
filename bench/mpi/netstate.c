/*
 * A raw libfabric ping-pong between two ranks on two hosts, in blocks, with
 * one disturbance before a chosen block: the experiment behind
 * bench/net_state.sh. MPI only bootstraps (the ranks swap endpoint names);
 * the timed loop is the provider's own tagged calls, as in fi_pingpong, so
 * no library above the provider runs in it. Before block P the two ranks
 * exchange one message of another size on another tag (kind "pp": rank 0
 * sends, rank 1 answers; "both": both send at once), or nothing ("none").
 * Prints each block's mean one-way time in microseconds, then the medians
 * of the blocks before and after P. With NETSTATE_MPI set the loop and the
 * trade are MPI_Send/MPI_Recv of whatever MPI it is built with (to put Open
 * MPI's OB1 through the same). The provider is matchbox unless
 * NETSTATE_PROV names another; with NETSTATE_MARK set, rank 1 prints the
 * disturbance's CLOCK_REALTIME time to stderr.
 *
 * Messages up to the provider's inject size are injected, larger ones sent
 * and their completion awaited before the next send.
 *
 * usage: netstate BYTES ITERS BLOCKS P none|pp|both [OTHER_BYTES]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_PP = 7, TAG_OTHER = 9, WARMUP = 200, NAME_MAX_LEN = 256, MAX_BYTES = 1 << 16 };

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fid_cq *cq;
static fi_addr_t peer;
static size_t inject_max;

/* An operation's context: the completion handler marks it done. */
struct op {
	struct fi_context2 ctx;
	int done;
};

static struct op send_op; /* sends beyond inject, one at a time */

static void fail(const char *what, long ret)
{
	fprintf(stderr, "netstate: %s: %s\n", what, fi_strerror((int)(ret < 0 ? -ret : ret)));
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void poll_cq(void)
{
	struct fi_cq_tagged_entry e[4];
	ssize_t n = fi_cq_read(cq, e, 4);

	if (n == -FI_EAGAIN)
		return;
	if (n < 0)
		fail("fi_cq_read", (long)n);
	for (ssize_t i = 0; i < n; i++)
		((struct op *)e[i].op_context)->done = 1;
}

static void wait_op(struct op *o)
{
	while (!o->done)
		poll_cq();
}

/* Small messages go by inject, as fi_pingpong sends them; larger ones
 * (libfabric's tcp injects at most 128 bytes) by a send whose completion
 * is waited for before the next. A provider may need progress before it
 * takes either (tcp while it connects). */
static void send_now(const void *buf, size_t len, uint64_t tag)
{
	ssize_t ret;

	if (len <= inject_max) {
		while ((ret = fi_tinject(ep, buf, len, peer, tag)) == -FI_EAGAIN)
			poll_cq();
	} else {
		wait_op(&send_op);
		send_op.done = 0;
		while ((ret = fi_tsend(ep, buf, len, NULL, peer, tag, &send_op.ctx)) == -FI_EAGAIN)
			poll_cq();
	}
	if (ret)
		fail("send", (long)ret);
}

static void post_recv(void *buf, size_t len, uint64_t tag, struct op *o)
{
	ssize_t ret;

	o->done = 0;
	if ((ret = fi_trecv(ep, buf, len, NULL, peer, tag, 0, &o->ctx)))
		fail("fi_trecv", (long)ret);
}

static int use_mpi; /* NETSTATE_MPI: the loop is MPI_Send/MPI_Recv instead */

/* One round trip on `tag`: rank 0 sends first. */
static void round_trip(int rank, char *sbuf, char *rbuf, size_t len, uint64_t tag)
{
	struct op r;

	if (use_mpi) {
		int n = (int)len, peer_rank = 1 - rank;

		if (rank == 0) {
			MPI_Send(sbuf, n, MPI_BYTE, peer_rank, (int)tag, MPI_COMM_WORLD);
			MPI_Recv(rbuf, n, MPI_BYTE, peer_rank, (int)tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, n, MPI_BYTE, peer_rank, (int)tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, n, MPI_BYTE, peer_rank, (int)tag, MPI_COMM_WORLD);
		}
		return;
	}
	if (rank == 0) {
		send_now(sbuf, len, tag);
		post_recv(rbuf, len, tag, &r);
		wait_op(&r);
	} else {
		post_recv(rbuf, len, tag, &r);
		wait_op(&r);
		send_now(sbuf, len, tag);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Opens the endpoint, learns the peer and the provider's inject size. */
static void open_endpoint(void)
{
	const char *prov = getenv("NETSTATE_PROV");
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	int ret;

	if (!hints)
		fail("fi_allocinfo", FI_ENOMEM);
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov ? prov : "matchbox");
	if ((ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info)))
		fail("fi_getinfo", ret);
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_endpoint(domain, info, &ep, NULL)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av, NULL)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) || (ret = fi_enable(ep)))
		fail("endpoint set-up", ret);
	inject_max = info->tx_attr->inject_size;
	fi_freeinfo(hints);
	fi_freeinfo(info);

	char name[NAME_MAX_LEN] = {0}, names[2 * NAME_MAX_LEN];
	size_t len = sizeof(name);
	int rank;

	if ((ret = fi_getname(&ep->fid, name, &len)))
		fail("fi_getname", ret);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Allgather(name, NAME_MAX_LEN, MPI_BYTE, names, NAME_MAX_LEN, MPI_BYTE, MPI_COMM_WORLD);
	if (fi_av_insert(av, names + NAME_MAX_LEN * (1 - rank), 1, &peer, 0, NULL) != 1)
		fail("fi_av_insert", FI_EINVAL);
}

int main(int argc, char **argv)
{
	static char sbuf[MAX_BYTES], rbuf[MAX_BYTES];
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 6 || size != 2) {
		if (rank == 0)
			fprintf(stderr, "usage (2 ranks): netstate BYTES ITERS BLOCKS P none|pp|both "
					"[OTHER_BYTES]\n");
		MPI_Finalize();
		return 2;
	}
	size_t bytes = strtoul(argv[1], NULL, 0), other = argc > 6 ? strtoul(argv[6], NULL, 0) : 8;
	int iters = atoi(argv[2]), blocks = atoi(argv[3]), p = atoi(argv[4]);
	const char *kind = argv[5];

	if (bytes > MAX_BYTES || other > MAX_BYTES || iters < 1 || blocks < 2 || blocks > 1000 ||
	    p < 1 || p >= blocks ||
	    (strcmp(kind, "none") && strcmp(kind, "pp") && strcmp(kind, "both"))) {
		if (rank == 0)
			fprintf(stderr, "netstate: bad arguments\n");
		MPI_Finalize();
		return 2;
	}
	use_mpi = getenv("NETSTATE_MPI") != NULL;
	if (!use_mpi)
		open_endpoint();
	send_op.done = 1;

	double *t = calloc((size_t)blocks, sizeof(*t));

	if (!t)
		fail("calloc", FI_ENOMEM);
	for (int i = 0; i < WARMUP; i++)
		round_trip(rank, sbuf, rbuf, bytes, TAG_PP);
	for (int k = 0; k < blocks; k++) {
		if (k == p && rank == 1 && getenv("NETSTATE_MARK")) {
			struct timespec ts;

			/* For a profile taken on CLOCK_REALTIME (net_state.sh PERF=1). */
			clock_gettime(CLOCK_REALTIME, &ts);
			fprintf(stderr, "netstate: disturbance at %ld.%06ld\n", (long)ts.tv_sec,
				ts.tv_nsec / 1000);
		}
		if (k == p && !strcmp(kind, "pp")) {
			round_trip(rank, sbuf, rbuf, other, TAG_OTHER);
		} else if (k == p && !strcmp(kind, "both") && use_mpi) {
			MPI_Sendrecv(sbuf, (int)other, MPI_BYTE, 1 - rank, TAG_OTHER, rbuf, (int)other,
				     MPI_BYTE, 1 - rank, TAG_OTHER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (k == p && !strcmp(kind, "both")) {
			struct op r;

			post_recv(rbuf, other, TAG_OTHER, &r);
			send_now(sbuf, other, TAG_OTHER);
			wait_op(&r);
		}
		double t0 = now_us();

		for (int i = 0; i < iters; i++)
			round_trip(rank, sbuf, rbuf, bytes, TAG_PP);
		t[k] = (now_us() - t0) / iters / 2;
	}
	if (rank == 0) {
		for (int k = 0; k < blocks; k++)
			printf("%.2f ", t[k]);
		double before = median(t, p), after = median(t + p, blocks - p);

		printf("| before %.2f after %.2f\n", before, after);
	}
	free(t);
	if (!use_mpi) {
		wait_op(&send_op);
		MPI_Barrier(MPI_COMM_WORLD);
		fi_close(&ep->fid);
		fi_close(&av->fid);
		fi_close(&cq->fid);
		fi_close(&domain->fid);
		fi_close(&fabric->fid);
	}
	MPI_Finalize();
	return 0;
}
