/* matchbox's trecv_now (fi_ext_matchbox.h): a tagged receive that meets a
 * message already whole in the provider completes inside the call, with its
 * entry handed back and none written to the CQ; anything else is posted and
 * completes through the CQ as fi_trecv's would. Rank 0 sends; rank 1 checks
 * each case: a waiting small message (done in the call, nothing in the CQ),
 * a waiting large one (posted: its data still has to move), a waiting one
 * too long for the buffer (posted: the truncation error comes through the
 * CQ), one that has not arrived (posted), and bad arguments. */
#include "ftx.h"

#include <rdma/fi_ext_matchbox.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SMALL = 64, LARGE = 300000, TRUNC_BUF = 16 };

/* Gives the provider time to take in what rank 0 sent: its progress moves
 * arrived messages into the unexpected queue. */
static void settle(struct ftx *t)
{
	double end = ftx_now() + 0.2;

	while (ftx_now() < end)
		ftx_progress(t);
}

static int receiver(struct ftx *t, struct fi_matchbox_tagged_ops *ops)
{
	static char small[SMALL], large[LARGE], trunc[TRUNC_BUF], later[SMALL];
	struct fi_cq_tagged_entry done, e;
	struct fi_cq_err_entry err;
	int ctx[4];
	ssize_t ret;

	memset(&done, 0, sizeof(done));
	ret = ops->trecv_now(t->ep, small, SMALL, NULL, t->peer[0], 1, 0, &ctx[0], NULL);
	if (ret != -FI_EINVAL)
		FTX_FAIL(t, "no place for the completion: %zd, not -FI_EINVAL", ret);
	settle(t);

	/* A small message that is waiting: complete in the call. */
	ret = ops->trecv_now(t->ep, small, SMALL, NULL, t->peer[0], 1, 0, &ctx[0], &done);
	if (ret != 1)
		FTX_FAIL(t, "a waiting small message: %zd, not 1 (done in the call)", ret);
	if (done.op_context != &ctx[0] || done.len != SMALL || done.tag != 1 ||
	    !(done.flags & FI_RECV) || !(done.flags & FI_TAGGED))
		FTX_FAIL(t, "its entry: context %p len %zu tag %llu flags %#llx", done.op_context,
			 done.len, (unsigned long long)done.tag, (unsigned long long)done.flags);
	if (!ftx_check(small, SMALL, 1))
		FTX_FAIL(t, "its data");

	/* A large one: the call cannot finish it. */
	ret = ops->trecv_now(t->ep, large, LARGE, NULL, t->peer[0], 2, 0, &ctx[1], &done);
	if (ret != 0)
		FTX_FAIL(t, "a waiting large message: %zd, not 0 (posted)", ret);
	if (ftx_wait_rx(t, &e, NULL, NULL) != 1 || e.op_context != &ctx[1] || e.len != LARGE ||
	    !ftx_check(large, LARGE, 2))
		FTX_FAIL(t, "the large message's completion or data");

	/* Too long for its buffer: the error goes through the CQ. */
	ret = ops->trecv_now(t->ep, trunc, TRUNC_BUF, NULL, t->peer[0], 3, 0, &ctx[2], &done);
	if (ret != 0)
		FTX_FAIL(t, "a truncated message: %zd, not 0 (posted)", ret);
	memset(&err, 0, sizeof(err));
	if (ftx_wait_rx(t, &e, NULL, &err) != 0 || err.op_context != &ctx[2] ||
	    err.err != FI_ETRUNC)
		FTX_FAIL(t, "the truncated message's error entry (err %d)", err.err);

	/* Nothing has arrived: posted, and completed when it comes. */
	ret = ops->trecv_now(t->ep, later, SMALL, NULL, t->peer[0], 4, 0, &ctx[3], &done);
	if (ret != 0)
		FTX_FAIL(t, "a message not yet sent: %zd, not 0 (posted)", ret);
	ftx_barrier(t);
	if (ftx_wait_rx(t, &e, NULL, NULL) != 1 || e.op_context != &ctx[3] || e.len != SMALL ||
	    !ftx_check(later, SMALL, 4))
		FTX_FAIL(t, "the later message's completion or data");
	/* Nothing more in the CQ: the first message wrote no entry. */
	settle(t);
	if (t->nstash)
		FTX_FAIL(t, "%zu CQ entries left over", t->nstash);
	return 0;
}

static int run(struct ftx *t)
{
	struct fi_matchbox_tagged_ops *ops = NULL;
	static char buf[LARGE];
	void *none = NULL;

	if (t->size != 2)
		FTX_FAIL(t, "needs 2 ranks");
	if (fi_open_ops(&t->ep->fid, "no_such_ops", 0, &none, NULL) != -FI_ENOSYS)
		FTX_FAIL(t, "an unknown name was not refused with -FI_ENOSYS");
	if (fi_open_ops(&t->ep->fid, FI_MATCHBOX_TAGGED_OPS, 0, (void **)&ops, NULL) || !ops ||
	    ops->size < sizeof(*ops) || !ops->trecv_now)
		FTX_FAIL(t, "fi_open_ops(%s)", FI_MATCHBOX_TAGGED_OPS);
	if (t->rank == 1)
		return receiver(t, ops);
	ftx_fill(buf, SMALL, 1);
	if (ftx_tsend(t, buf, SMALL, 1, 1, NULL) || ftx_wait_sends(t))
		FTX_FAIL(t, "send 1");
	ftx_fill(buf, LARGE, 2);
	if (ftx_tsend(t, buf, LARGE, 1, 2, NULL) || ftx_wait_sends(t))
		FTX_FAIL(t, "send 2");
	ftx_fill(buf, SMALL, 3);
	if (ftx_tsend(t, buf, SMALL, 1, 3, NULL) || ftx_wait_sends(t))
		FTX_FAIL(t, "send 3");
	ftx_barrier(t);
	ftx_fill(buf, SMALL, 4);
	if (ftx_tsend(t, buf, SMALL, 1, 4, NULL) || ftx_wait_sends(t))
		FTX_FAIL(t, "send 4");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_now", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
