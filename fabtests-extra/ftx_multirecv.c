/* FI_MULTI_RECV: rank 1 keeps two 64 KiB multi-receive buffers posted
 * (FI_OPT_MIN_MULTI_RECV 4 KiB) and rank 0 sends -N untagged messages of
 * 1..3000 bytes. Every completion must point inside a posted buffer and
 * carry the right data; FI_MULTI_RECV marks a buffer's last completion, after
 * which it is reposted. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

#define BUFSZ 65536

static int post_multi(struct ftx *t, char *buf, void *ctx)
{
	struct iovec iov = { buf, BUFSZ };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
			      .context = ctx };
	ssize_t r;

	while ((r = fi_recvmsg(t->ep, &msg, FI_MULTI_RECV)) == -FI_EAGAIN)
		ftx_progress(t);
	return (int)r;
}

static int run(struct ftx *t)
{
	int n = atoi(ftx_opt(t, 'N', "2000")), i, released = 0;
	char *s = malloc(4096);

	if (t->rank == 0) {
		for (i = 0; i < n; i++) {
			size_t len = 1 + (size_t)(i * 37) % 3000;
			ssize_t r;

			memcpy(s, &i, sizeof(i));
			ftx_fill(s + sizeof(i), len - (len > sizeof(i) ? sizeof(i) : len),
				 (uint64_t)i);
			while ((r = fi_send(t->ep, s, len < sizeof(i) ? sizeof(i) : len, NULL,
					    t->peer[1], NULL)) == -FI_EAGAIN)
				ftx_progress(t);
			if (r)
				FTX_FAIL(t, "send");
			t->tx_posted++;
			/* The buffer is reused: the send must be complete first. */
			if (ftx_wait_sends(t))
				FTX_FAIL(t, "send completion");
		}
	} else {
		size_t min = 4096;
		char *bufs[2] = { malloc(BUFSZ), malloc(BUFSZ) };

		if (fi_setopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)))
			FTX_FAIL(t, "setopt");
		if (post_multi(t, bufs[0], bufs[0]) || post_multi(t, bufs[1], bufs[1]))
			FTX_FAIL(t, "post");
		for (i = 0; i < n;) {
			struct fi_cq_tagged_entry e;
			size_t len = 1 + (size_t)(i * 37) % 3000;
			char *b;
			int k;

			if (len < sizeof(int))
				len = sizeof(int);
			if (ftx_wait_rx(t, &e, NULL, NULL) != 1)
				FTX_FAIL(t, "completion %d", i);
			b = e.op_context;
			if (b != bufs[0] && b != bufs[1])
				FTX_FAIL(t, "context is not a posted buffer");
			/* A provider may report the release of a buffer as a
			 * completion of its own, without data. */
			if (!e.len && (e.flags & FI_MULTI_RECV)) {
				int r;

				released++;
				if ((r = post_multi(t, b, b)))
					FTX_FAIL(t, "repost: %s", fi_strerror(-r));
				continue;
			}
			if ((char *)e.buf < b || (char *)e.buf + e.len > b + BUFSZ)
				FTX_FAIL(t, "data outside the buffer (buf %p len %zu, buffer %p, flags 0x%llx)", e.buf, e.len, (void *)b, (unsigned long long)e.flags);
			memcpy(&k, e.buf, sizeof(k));
			if (k != i || e.len != len)
				FTX_FAIL(t, "message %d: got #%d len %zu", i, k, e.len);
			if (!ftx_check((char *)e.buf + sizeof(k), len - sizeof(k), (uint64_t)i))
				FTX_FAIL(t, "message %d corrupt", i);
			if (e.flags & FI_MULTI_RECV) {
				released++;
				if (post_multi(t, b, b))
					FTX_FAIL(t, "repost");
			}
			i++;
		}
		if (released < n * 1000 / BUFSZ / 2)
			FTX_FAIL(t, "buffers released only %d times", released);
		free(bufs[0]);
		free(bufs[1]);
	}
	free(s);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_multirecv", 2, FI_MULTI_RECV, run };

	return ftx_main(argc, argv, &spec);
}
