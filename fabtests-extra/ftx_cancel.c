/* Cancel: a posted receive that nothing matches is cancelled and completes
 * with FI_ECANCELED and its context; a receive posted after it, and traffic
 * after the cancel, still work. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

static int run(struct ftx *t)
{
	char buf[256], other[256];
	struct fi_context ctx, ctx2;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	if (t->rank == 1) {
		if (ftx_trecv(t, buf, sizeof(buf), 0, 1234, 0, &ctx) ||
		    ftx_trecv(t, other, sizeof(other), 0, 77, 0, &ctx2))
			FTX_FAIL(t, "post");
		if (fi_cancel(&t->ep->fid, &ctx))
			FTX_FAIL(t, "fi_cancel");
		memset(&err, 0, sizeof(err));
		if (ftx_wait_rx(t, &e, NULL, &err) != 0 || err.err != FI_ECANCELED ||
		    err.op_context != &ctx)
			FTX_FAIL(t, "want FI_ECANCELED for the cancelled receive (err %d)", err.err);
	}
	ftx_barrier(t);
	if (t->rank == 0) {
		ftx_fill(buf, 200, 77);
		if (ftx_tsend(t, buf, 200, 1, 77, NULL) || ftx_tsend(t, buf, 100, 1, 1234, NULL) ||
		    ftx_wait_tx(t, 2))
			FTX_FAIL(t, "send");
	} else {
		if (ftx_wait_rx(t, &e, NULL, &err) != 1 || e.op_context != &ctx2 || e.len != 200 ||
		    !ftx_check(other, 200, 77))
			FTX_FAIL(t, "receive after cancel");
		/* The cancelled receive must not take the tag-1234 message. */
		if (ftx_trecv(t, buf, sizeof(buf), 0, 1234, 0, &ctx) ||
		    ftx_wait_rx(t, &e, NULL, &err) != 1 || e.len != 100)
			FTX_FAIL(t, "tag 1234 message lost");
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_cancel", 2, FI_DIRECTED_RECV, run };

	return ftx_main(argc, argv, &spec);
}
