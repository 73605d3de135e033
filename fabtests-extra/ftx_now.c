/* matchbox's trecv_now (fi_ext_matchbox.h): a tagged receive that meets a
 * message already whole in the provider completes inside the call, with its
 * entry handed back and none written to the CQ; anything else is posted and
 * completes through the CQ as fi_trecv's would. Rank 0 sends; rank 1 checks
 * each case: a waiting small message (done in the call, nothing in the CQ),
 * a waiting large one (posted: its data still has to move), a waiting one
 * too long for the buffer (posted: the truncation error comes through the
 * CQ), one that has not arrived (posted), and bad arguments.
 * Then trecv_take, which completes a receive only when it can at once and
 * otherwise changes nothing: nothing matching, a rendezvous waiting ahead
 * of a small message with its tag, a refused tag bit, a buffer too short,
 * and the count that waiting points at. */
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

#define REFUSED (1ull << 40) /* a tag bit the taker refuses */

/* Takes one message with trecv_take and checks what it says. */
static int take_one(struct ftx *t, struct fi_matchbox_tagged_ops *ops, void *buf, size_t len,
		    uint64_t tag, uint64_t ignore, uint64_t refuse, ssize_t want, uint64_t want_tag)
{
	struct fi_cq_tagged_entry done;
	ssize_t ret;

	memset(&done, 0x5a, sizeof(done));
	ret = ops->trecv_take(t->ep, buf, len, t->peer[0], tag, ignore, refuse, &done);
	if (ret != want)
		FTX_FAIL(t, "take of tag %#llx into %zu bytes: %zd, not %zd", (unsigned long long)tag,
			 len, ret, want);
	if (ret == 1 && (done.op_context || done.len != len || done.buf != buf ||
			 done.tag != want_tag || done.flags != (FI_RECV | FI_TAGGED)))
		FTX_FAIL(t, "its entry: context %p len %zu tag %#llx flags %#llx", done.op_context,
			 done.len, (unsigned long long)done.tag, (unsigned long long)done.flags);
	return 0;
}

static int taker(struct ftx *t, struct fi_matchbox_tagged_ops *ops)
{
	static char small[SMALL], large[LARGE];
	const size_t *waiting = ops->waiting(t->ep);
	struct fi_cq_tagged_entry e;
	int ctx;

	if (!waiting || *waiting)
		FTX_FAIL(t, "waiting: %p, %zu messages before any was sent", (void *)waiting,
			 waiting ? *waiting : 0);
	if (ops->trecv_take(t->ep, small, SMALL, t->peer[0], 5, 0, 0, NULL) != -FI_EINVAL ||
	    ops->trecv_take(t->ep, NULL, SMALL, t->peer[0], 5, 0, 0, &e) != -FI_EINVAL)
		FTX_FAIL(t, "bad arguments were not refused with -FI_EINVAL");
	if (take_one(t, ops, small, SMALL, 5, 0, 0, 0, 0))
		return 1;
	ftx_barrier(t); /* rank 0 sends tags 5, 6 (large, then small), 7|REFUSED, 8 */
	settle(t);
	if (*waiting != 5)
		FTX_FAIL(t, "waiting: %zu, not 5", *waiting);
	if (take_one(t, ops, small, SMALL, 9, 0, 0, 0, 0) ||
	    take_one(t, ops, small, SMALL, 5, 0, 0, 1, 5) || !ftx_check(small, SMALL, 5))
		FTX_FAIL(t, "tag 5");
	/* The rendezvous is first in line for tag 6: left, and so is the small one behind it. */
	if (take_one(t, ops, small, SMALL, 6, 0, 0, 0, 0))
		return 1;
	if (ftx_trecv(t, large, LARGE, 0, 6, 0, &ctx) || ftx_wait_rx(t, &e, NULL, NULL) != 1 ||
	    e.op_context != &ctx || e.len != LARGE || !ftx_check(large, LARGE, 6))
		FTX_FAIL(t, "the large message of tag 6 after the take left it");
	if (take_one(t, ops, small, SMALL, 6, 0, 0, 1, 6) || !ftx_check(small, SMALL, 66))
		FTX_FAIL(t, "the small message of tag 6");
	if (take_one(t, ops, small, SMALL, 7, REFUSED, REFUSED, 0, 0) ||
	    take_one(t, ops, small, SMALL, 7, REFUSED, 0, 1, 7 | REFUSED) ||
	    !ftx_check(small, SMALL, 7))
		FTX_FAIL(t, "tag 7 with a refused bit");
	if (take_one(t, ops, small, TRUNC_BUF, 8, 0, 0, 0, 0) ||
	    take_one(t, ops, small, SMALL, 8, 0, 0, 1, 8) || !ftx_check(small, SMALL, 8))
		FTX_FAIL(t, "tag 8 after a buffer too short");
	if (*waiting)
		FTX_FAIL(t, "waiting: %zu after all were taken", *waiting);
	settle(t);
	if (t->nstash)
		FTX_FAIL(t, "%zu CQ entries left over after the takes", t->nstash);
	return 0;
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
	return taker(t, ops);
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
	    ops->size < sizeof(*ops) || !ops->trecv_now || !ops->trecv_take ||
	    !ops->waiting)
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
	ftx_barrier(t);
	{
		static char b5[SMALL], b6[LARGE], b66[SMALL], b7[SMALL], b8[SMALL];

		ftx_fill(b5, SMALL, 5);
		ftx_fill(b6, LARGE, 6);
		ftx_fill(b66, SMALL, 66);
		ftx_fill(b7, SMALL, 7);
		ftx_fill(b8, SMALL, 8);
		if (ftx_tsend(t, b5, SMALL, 1, 5, NULL) || ftx_tsend(t, b6, LARGE, 1, 6, NULL) ||
		    ftx_tsend(t, b66, SMALL, 1, 6, NULL) ||
		    ftx_tsend(t, b7, SMALL, 1, 7 | REFUSED, NULL) ||
		    ftx_tsend(t, b8, SMALL, 1, 8, NULL) || ftx_wait_sends(t))
			FTX_FAIL(t, "sends 5 to 8");
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_now", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
