/* Streaming bandwidth and message rate: rank 0 sends windows of -W tagged
 * messages, rank 1 receives them and answers each window with a zero-byte
 * ack. Rank 0 prints bytes, MB/s (1e6 bytes) and millions of messages/s per
 * size; the last window's data is verified. With -R 1 every message of a
 * window uses the same send and receive buffer, as the OSU benchmarks do
 * (cache-hot); by default each has its own (64 x 4 MiB = 256 MiB in flight,
 * memory-bound). */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

static int run(struct ftx *t)
{
	int win = atoi(ftx_opt(t, 'W', "64"));
	double secs = atof(ftx_opt(t, 'T', "0.3"));
	size_t list[64], n, max, i;
	char *sbuf, *rbuf;
	struct fi_cq_tagged_entry e;
	int peer = !t->rank, w;
	bool reuse = atoi(ftx_opt(t, 'R', "0")) != 0;
	size_t stride;

	if (t->size != 2)
		FTX_FAIL(t, "needs 2 ranks");
	n = ftx_sizes(t, "8,4096,65536,1048576,4194304", list, 64, &max);
	sbuf = malloc(max * (reuse ? 1 : (size_t)win) + 1);
	rbuf = malloc(max * (reuse ? 1 : (size_t)win) + 1);
	for (i = 0; i < n; i++) {
		size_t sz = list[i];
		long rounds = 0, target = -1;
		double t0 = 0, el = 0;
		char flag = 0;

		stride = reuse ? 0 : sz;
		for (w = 0; w < (reuse ? 1 : win); w++)
			ftx_fill(sbuf + (size_t)w * sz, sz, sz + (size_t)w);
		ftx_barrier(t);
		for (;;) {
			/* Rank 0 decides when to stop and tells rank 1 in the ack
			 * of the next window (tag 2 = last). */
			if (t->rank == 0) {
				uint64_t sent = t->tx_done;
				bool last = target >= 0 && rounds == target;

				if (rounds == 1)
					t0 = ftx_now();
				for (w = 0; w < win; w++)
					if (ftx_tsend(t, sbuf + (size_t)w * stride, sz, peer,
						      last ? 2 : 1, NULL))
						FTX_FAIL(t, "send");
				if (ftx_trecv(t, &flag, 0, peer, 9, 0, NULL) ||
				    ftx_wait_rx(t, &e, NULL, NULL) != 1 ||
				    ftx_wait_tx(t, sent + (uint64_t)win))
					FTX_FAIL(t, "ack");
				if (last)
					break;
				rounds++;
				el = ftx_now() - t0;
				if (target < 0 && rounds > 1 && el >= secs)
					target = rounds;
			} else {
				bool last = false;

				for (w = 0; w < win; w++)
					if (ftx_trecv(t, rbuf + (size_t)w * stride, sz, peer, 0, 3, NULL))
						FTX_FAIL(t, "recv");
				for (w = 0; w < win; w++) {
					if (ftx_wait_rx(t, &e, NULL, NULL) != 1 || e.len != sz)
						FTX_FAIL(t, "window");
					last |= e.tag == 2;
				}
				if (ftx_tsend(t, &flag, 0, peer, 9, NULL))
					FTX_FAIL(t, "ack");
				if (last) {
					for (w = 0; w < win; w++)
						if (!ftx_check(rbuf + (size_t)w * stride, sz, sz + (reuse ? 0 : (size_t)w)))
							FTX_FAIL(t, "data corrupt at size %zu", sz);
					break;
				}
			}
		}
		if (t->rank == 0) {
			double msgs = (double)(rounds - 1) * win;

			printf("%-10zu %12.1f %10.3f\n", sz, msgs * (double)sz / el / 1e6,
			       msgs / el / 1e6);
		}
		if (ftx_wait_sends(t))
			FTX_FAIL(t, "send errors");
	}
	free(sbuf);
	free(rbuf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_bw", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
