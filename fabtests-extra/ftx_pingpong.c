/* Tagged ping-pong between two ranks: every size in -S (or 1 B..4 MiB),
 * -I iterations each; data is verified on the first and last round trip.
 * Rank 0 prints one line per size: bytes and half round-trip in us. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

static int run(struct ftx *t)
{
	int iters = atoi(ftx_opt(t, 'I', "1000"));
	size_t list[64], n, max, i;
	struct fi_cq_tagged_entry e;
	char *sbuf, *rbuf;
	int peer = !t->rank;

	if (t->size != 2)
		FTX_FAIL(t, "needs 2 ranks");
	n = ftx_sizes(t, "1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,"
		      "65536,131072,262144,524288,1048576,2097152,4194304", list, 64, &max);
	sbuf = malloc(max + 1);
	rbuf = malloc(max + 1);
	if (t->rank == 0 && t->verbose)
		printf("%-10s %12s\n", "bytes", "latency_us");
	for (i = 0; i < n; i++) {
		size_t sz = list[i];
		int warm = iters / 10 + 1, it;
		double t0 = 0;

		ftx_fill(sbuf, sz, sz);
		ftx_barrier(t);
		for (it = -warm; it < iters; it++) {
			bool check = it == -warm || it == iters - 1;

			if (it == 0)
				t0 = ftx_now();
			if (check)
				memset(rbuf, 0, sz);
			if (t->rank == 0) {
				if (ftx_trecv(t, rbuf, sz, peer, 7, 0, NULL) ||
				    ftx_tsend(t, sbuf, sz, peer, 7, NULL))
					FTX_FAIL(t, "post");
				if (ftx_wait_rx(t, &e, NULL, NULL) != 1)
					FTX_FAIL(t, "recv size %zu", sz);
			} else {
				if (ftx_trecv(t, rbuf, sz, peer, 7, 0, NULL))
					FTX_FAIL(t, "post");
				if (ftx_wait_rx(t, &e, NULL, NULL) != 1)
					FTX_FAIL(t, "recv size %zu", sz);
				if (ftx_tsend(t, sbuf, sz, peer, 7, NULL))
					FTX_FAIL(t, "send");
			}
			if (e.len != sz || e.tag != 7)
				FTX_FAIL(t, "completion len %zu tag %lu", e.len, (unsigned long)e.tag);
			if (check && !ftx_check(rbuf, sz, sz))
				FTX_FAIL(t, "data corrupt at size %zu", sz);
		}
		if (t->rank == 0)
			printf("%-10zu %12.3f\n", sz, (ftx_now() - t0) * 1e6 / iters / 2);
		if (ftx_wait_sends(t))
			FTX_FAIL(t, "send errors");
	}
	free(sbuf);
	free(rbuf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_pingpong", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
