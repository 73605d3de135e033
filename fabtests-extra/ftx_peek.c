/* FI_PEEK, FI_CLAIM and FI_DISCARD on tagged receives. Rank 0 sends four
 * messages (tags 1..4, one large); rank 1 peeks for a tag never sent
 * (FI_ENOMSG), peeks at tag 1 (length, tag and data reported, message still
 * there), peeks-and-claims tag 2 and receives it by claim, peeks-and-
 * discards tag 3, claims-and-discards tag 4, then checks that tags 2..4 are
 * gone and tag 1 is still receivable. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

static size_t len_of(int tag)
{
	return tag == 4 ? 200000 : (size_t)(tag * 100);
}

static int peek(struct ftx *t, uint64_t tag, uint64_t flags, struct fi_context *ctx,
		struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err)
{
	struct fi_msg_tagged msg = {
		.msg_iov = NULL, .iov_count = 0, .addr = t->peer[0], .tag = tag,
		.ignore = 0, .context = ctx,
	};
	ssize_t r;

	while ((r = fi_trecvmsg(t->ep, &msg, flags)) == -FI_EAGAIN)
		ftx_progress(t);
	if (r)
		return (int)r;
	return ftx_wait_rx(t, e, NULL, err);
}

static int run(struct ftx *t)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx[4];
	char *buf = malloc(200000);
	int tag, r;

	memset(&e, 0, sizeof(e));

	if (t->rank == 0) {
		char *s = malloc(200000);

		ftx_barrier(t);
		for (tag = 1; tag <= 4; tag++) {
			ftx_fill(s, len_of(tag), (uint64_t)tag);
			if (ftx_tsend(t, s, len_of(tag), 1, (uint64_t)tag, NULL))
				FTX_FAIL(t, "send");
		}
		if (ftx_wait_sends(t))
			FTX_FAIL(t, "sends");
		free(s);
		free(buf);
		return 0;
	}
	ftx_barrier(t);
	/* Messages may still be in flight: peek until tag 1 shows up. */
	do {
		memset(&err, 0, sizeof(err));
		r = peek(t, 1, FI_PEEK, &ctx[0], &e, &err);
	} while (r == 0 && err.err == FI_ENOMSG);
	if (r != 1 || e.len != len_of(1) || e.tag != 1)
		FTX_FAIL(t, "peek tag 1: r=%d len %zu err %d", r, e.len, err.err);
	for (tag = 2; tag <= 4; tag++) {
		do {
			memset(&err, 0, sizeof(err));
			r = peek(t, (uint64_t)tag, FI_PEEK, &ctx[0], &e, &err);
		} while (r == 0 && err.err == FI_ENOMSG);
		if (r != 1)
			FTX_FAIL(t, "tag %d never arrived", tag);
	}
	r = peek(t, 99, FI_PEEK, &ctx[0], &e, &err);
	if (r != 0 || err.err != FI_ENOMSG)
		FTX_FAIL(t, "peek for an absent tag must fail with FI_ENOMSG (r=%d err=%d)", r, err.err);

	r = peek(t, 2, FI_PEEK | FI_CLAIM, &ctx[1], &e, &err);
	if (r != 1 || e.len != len_of(2))
		FTX_FAIL(t, "peek|claim tag 2");
	{
		struct iovec iov = { buf, 200000 };
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = t->peer[0], .tag = 2,
			.context = &ctx[1],
		};

		memset(buf, 0, 1000);
		if (fi_trecvmsg(t->ep, &msg, FI_CLAIM) || ftx_wait_rx(t, &e, NULL, &err) != 1)
			FTX_FAIL(t, "claim receive");
		if (e.len != len_of(2) || !ftx_check(buf, len_of(2), 2))
			FTX_FAIL(t, "claimed data");
	}
	r = peek(t, 3, FI_PEEK | FI_DISCARD, &ctx[2], &e, &err);
	if (r != 1)
		FTX_FAIL(t, "peek|discard tag 3");
	r = peek(t, 4, FI_PEEK | FI_CLAIM, &ctx[3], &e, &err);
	if (r != 1 || e.len != len_of(4))
		FTX_FAIL(t, "peek|claim tag 4");
	{
		struct fi_msg_tagged msg = { .addr = t->peer[0], .tag = 4, .context = &ctx[3] };

		if (fi_trecvmsg(t->ep, &msg, FI_CLAIM | FI_DISCARD) ||
		    ftx_wait_rx(t, &e, NULL, &err) != 1)
			FTX_FAIL(t, "claim|discard");
	}
	for (tag = 2; tag <= 4; tag++) {
		r = peek(t, (uint64_t)tag, FI_PEEK, &ctx[0], &e, &err);
		if (r != 0 || err.err != FI_ENOMSG)
			FTX_FAIL(t, "tag %d should be gone", tag);
	}
	memset(buf, 0, 1000);
	if (ftx_trecv(t, buf, 1000, 0, 1, 0, NULL) || ftx_wait_rx(t, &e, NULL, &err) != 1 ||
	    e.len != len_of(1) || !ftx_check(buf, len_of(1), 1))
		FTX_FAIL(t, "tag 1 after peeks");
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_peek", 2, FI_DIRECTED_RECV, run };

	return ftx_main(argc, argv, &spec);
}
