/* RMA and atomic figures for any provider, two ranks (the ftx harness):
 * rank 1 registers a buffer and only progresses; rank 0 measures, per size
 * (-S, default 8 B to 4 MiB), fi_write and fi_read latency (post to local
 * completion, one at a time, -I iterations) and bandwidth (windows of 64
 * outstanding, for -T seconds), then 8-byte fi_fetch_atomic(FI_SUM)
 * latency and rate. Lines: "write|read SIZE LAT_US MB_S" and
 * "atomic 8 LAT_US MOPS". bench/rma.sh runs it against several providers
 * and prints ratios. A figure is measured, never assumed. */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "ftx.h"

#define WINDOW 64
#define TAG_KEY 11
#define TAG_DONE 12

struct remote {
	uint64_t addr, key;
};

/* Posts with retry, progressing meanwhile; counts what is outstanding. */
#define POST(t, call)							\
	do {								\
		ssize_t r_;						\
		while ((r_ = (call)) == -FI_EAGAIN)			\
			if (ftx_progress(t) < 0)			\
				FTX_FAIL(t, "progress");		\
		if (r_)							\
			FTX_FAIL(t, "%s: %s", #call, fi_strerror((int)-r_)); \
		(t)->tx_posted++;					\
	} while (0)

static int measure(struct ftx *t, bool write, size_t sz, void *buf, const struct remote *r,
		   int iters, double secs)
{
	double t0, lat, bw;
	uint64_t done = 0;
	int i;

	t0 = ftx_now();
	for (i = 0; i < iters; i++) {
		if (write)
			POST(t, fi_write(t->ep, buf, sz, NULL, t->peer[1], r->addr, r->key, NULL));
		else
			POST(t, fi_read(t->ep, buf, sz, NULL, t->peer[1], r->addr, r->key, NULL));
		if (ftx_wait_tx(t, t->tx_posted))
			FTX_FAIL(t, "%s of %zu", write ? "fi_write" : "fi_read", sz);
	}
	lat = (ftx_now() - t0) * 1e6 / iters;
	t0 = ftx_now();
	do {
		for (i = 0; i < WINDOW; i++) {
			if (write)
				POST(t, fi_write(t->ep, buf, sz, NULL, t->peer[1], r->addr, r->key,
						 NULL));
			else
				POST(t, fi_read(t->ep, buf, sz, NULL, t->peer[1], r->addr, r->key,
						NULL));
		}
		if (ftx_wait_tx(t, t->tx_posted))
			FTX_FAIL(t, "window of %zu", sz);
		done += WINDOW;
	} while (ftx_now() - t0 < secs);
	bw = (double)done * (double)sz / (ftx_now() - t0) / 1e6;
	printf("%-6s %-9zu %10.3f %10.1f\n", write ? "write" : "read", sz, lat, bw);
	return 0;
}

static int run(struct ftx *t)
{
	size_t sizes[32], max, n, k;
	int iters = atoi(ftx_opt(t, 'I', "500"));
	double secs = atof(ftx_opt(t, 'T', "0.3"));
	struct remote r;
	struct fid_mr *mr = NULL;
	char *buf;
	uint64_t one = 1, old = 0;

	n = ftx_sizes(t, "8,64,512,4096,65536,1048576,4194304", sizes, 32, &max);
	if (max < 8)
		max = 8;
	buf = aligned_alloc(4096, (max + 4095) & ~(size_t)4095);
	memset(buf, 1, max);
	if (t->rank == 1) {
		uint64_t mode = (uint64_t)t->fi->domain_attr->mr_mode;
		struct fi_cq_tagged_entry e;

		if (fi_mr_reg(t->domain, buf, max, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0x42, 0, &mr,
			      NULL))
			FTX_FAIL(t, "fi_mr_reg");
		r.key = fi_mr_key(mr);
		r.addr = (mode == FI_MR_BASIC || (mode & FI_MR_VIRT_ADDR)) ? (uint64_t)(uintptr_t)buf
									    : 0;
		if (ftx_trecv(t, &old, sizeof(old), 0, TAG_DONE, 0, NULL) ||
		    ftx_tsend(t, &r, sizeof(r), 0, TAG_KEY, NULL))
			FTX_FAIL(t, "key exchange");
		/* The target only progresses, as an MPI rank inside a fence would. */
		if (ftx_wait_rx(t, &e, NULL, NULL) != 1)
			FTX_FAIL(t, "end message");
	} else {
		struct fi_cq_tagged_entry e;
		double t0;
		int i;

		if (ftx_trecv(t, &r, sizeof(r), 1, TAG_KEY, 0, NULL) ||
		    ftx_wait_rx(t, &e, NULL, NULL) != 1)
			FTX_FAIL(t, "key exchange");
		printf("%-6s %-9s %10s %10s\n", "op", "bytes", "lat_us", "MB/s|Mops");
		for (k = 0; k < n; k++)
			if (measure(t, true, sizes[k], buf, &r, iters, secs))
				return 1;
		for (k = 0; k < n; k++)
			if (measure(t, false, sizes[k], buf, &r, iters, secs))
				return 1;
		t0 = ftx_now();
		for (i = 0; i < iters; i++) {
			POST(t, fi_fetch_atomic(t->ep, &one, 1, NULL, &old, NULL, t->peer[1], r.addr,
						r.key, FI_UINT64, FI_SUM, NULL));
			if (ftx_wait_tx(t, t->tx_posted))
				FTX_FAIL(t, "fi_fetch_atomic");
		}
		{
			double lat = (ftx_now() - t0) * 1e6 / iters;
			uint64_t ops = 0;

			t0 = ftx_now();
			do {
				for (i = 0; i < WINDOW; i++)
					POST(t, fi_atomic(t->ep, &one, 1, NULL, t->peer[1], r.addr,
							  r.key, FI_UINT64, FI_SUM, NULL));
				if (ftx_wait_tx(t, t->tx_posted))
					FTX_FAIL(t, "fi_atomic window");
				ops += WINDOW;
			} while (ftx_now() - t0 < secs);
			printf("%-6s %-9d %10.3f %10.3f\n", "atomic", 8, lat,
			       (double)ops / (ftx_now() - t0) / 1e6);
		}
		if (ftx_tsend(t, &old, sizeof(old), 1, TAG_DONE, NULL) || ftx_wait_sends(t))
			FTX_FAIL(t, "end message");
	}
	ftx_barrier(t);
	if (mr)
		fi_close(&mr->fid);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_rmabench", 2, FI_RMA | FI_ATOMIC, run };

	return ftx_main(argc, argv, &spec);
}
