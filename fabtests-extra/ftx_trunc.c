/* Truncation: a message longer than its receive completes the receive with
 * FI_ETRUNC, len = what fit, olen = what did not, the fitting prefix intact;
 * the send completes normally. Tried eagerly (1000 into 100 bytes) and as a
 * large message (1 MiB into 64 KiB), posted before and after arrival. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const size_t send_len[] = { 1000, 1048576, 1000, 1048576 };
static const size_t recv_len[] = { 100, 65536, 100, 65536 };

static int run(struct ftx *t)
{
	char *buf = malloc(1048576);
	int i;

	for (i = 0; i < 4; i++) {
		bool late = i >= 2;	/* receive posted after the message arrived */

		ftx_barrier(t);
		if (t->rank == 0) {
			ftx_fill(buf, send_len[i], (uint64_t)i);
			if (ftx_tsend(t, buf, send_len[i], 1, 5, NULL) || ftx_wait_sends(t))
				FTX_FAIL(t, "send %d", i);
		} else {
			struct fi_cq_tagged_entry e;
			struct fi_cq_err_entry err;

			if (late)
				usleep(100000);
			memset(buf, 0, recv_len[i] + 16);
			if (ftx_trecv(t, buf, recv_len[i], 0, 5, 0, NULL))
				FTX_FAIL(t, "recv");
			memset(&err, 0, sizeof(err));
			if (ftx_wait_rx(t, &e, NULL, &err) != 0)
				FTX_FAIL(t, "case %d: expected an error completion", i);
			/* libfabric 1.17's shm reports -FI_ETRUNC; the sign is
			 * not what this test is about. */
			if (err.err != FI_ETRUNC && err.err != -FI_ETRUNC)
				FTX_FAIL(t, "case %d: err %d, want FI_ETRUNC", i, err.err);
			if (err.len != recv_len[i] || err.olen != send_len[i] - recv_len[i])
				FTX_FAIL(t, "case %d: len %zu olen %zu (err %d, flags 0x%llx, tag %llu, buf %p)", i, err.len, err.olen, err.err, (unsigned long long)err.flags, (unsigned long long)err.tag, err.buf);
			if (!ftx_check(buf, recv_len[i], (uint64_t)i) || buf[recv_len[i]] != 0)
				FTX_FAIL(t, "case %d: prefix wrong or overrun", i);
		}
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_trunc", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
