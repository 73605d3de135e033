/* Unexpected-message flood: rank 0 sends -N messages (small, medium and a
 * few large) with distinct tags before rank 1 has posted anything; rank 1
 * waits, then receives them in reverse tag order. Every message must arrive
 * intact: a provider may hold the sender back, but must not drop or crash. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t size_of(int i)
{
	static const size_t sizes[] = { 8, 100, 1000, 8000, 40000, 8, 300000 };

	return sizes[i % 7];
}

static int run(struct ftx *t)
{
	int n = atoi(ftx_opt(t, 'N', "5000")), i;
	struct fi_cq_tagged_entry e;
	char **bufs = calloc((size_t)n, sizeof(*bufs));

	if (t->size != 2)
		FTX_FAIL(t, "needs 2 ranks");
	for (i = 0; i < n; i++) {
		bufs[i] = malloc(size_of(i));
		if (t->rank == 0)
			ftx_fill(bufs[i], size_of(i), (uint64_t)i);
		else
			memset(bufs[i], 0, size_of(i));
	}
	if (t->rank == 0) {
		for (i = 0; i < n; i++)
			if (ftx_tsend(t, bufs[i], size_of(i), 1, (uint64_t)i, NULL))
				FTX_FAIL(t, "send %d", i);
		if (ftx_wait_sends(t))
			FTX_FAIL(t, "sends did not complete");
	} else {
		/* Receives go in reverse order within windows no larger than
		 * the provider's rx_size: a provider may hold senders back
		 * rather than buffer everything, and then a receive for the
		 * last message could wait behind thousands of posted ones. */
		int win = (int)(t->fi->rx_attr->size / 2);

		if (win < 1)
			win = 1;
		if (win > 256)
			win = 256;
		usleep(300000);
		for (i = 0; i < n; i++) {
			int k;

			if (i % win == 0) {
				int hi = i + win < n ? i + win : n;

				for (k = hi - 1; k >= i; k--)
					if (ftx_trecv(t, bufs[k], size_of(k), 0, (uint64_t)k, 0, bufs[k]))
						FTX_FAIL(t, "recv %d", k);
			}

			if (ftx_wait_rx(t, &e, NULL, NULL) != 1)
				FTX_FAIL(t, "completion %d", i);
			k = (int)e.tag;
			if (k < 0 || k >= n || e.op_context != bufs[k] || e.len != size_of(k))
				FTX_FAIL(t, "bad completion tag %d len %zu", k, e.len);
		}
		for (i = 0; i < n; i++)
			if (!ftx_check(bufs[i], size_of(i), (uint64_t)i))
				FTX_FAIL(t, "message %d corrupt", i);
	}
	for (i = 0; i < n; i++)
		free(bufs[i]);
	free(bufs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_unexp", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
