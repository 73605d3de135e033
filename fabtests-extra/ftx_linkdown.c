/* A link taken down mid-run: ranks on two hosts (FTX_HOSTS=2, rank r on
 * host r % 2) ping-pong with their partner on the other host and with their
 * neighbour on their own host; then rank 0 runs the -D command, which cuts
 * host 1 off (tests/netns/across.sh passes `ip -n mbx-sw link set port1
 * down`); -I rounds of -s bytes before the cut. Every rank must then get error completions for its operations on
 * its cross-host partner within -T seconds (a hang fails the test), a send
 * posted to that partner afterwards must fail at once, and its same-host
 * neighbour must still work. Each rank prints how long detection took. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

#define TAG_WARM 7
#define TAG_CUT 9
#define TAG_LOCAL 11

static int pingpong(struct ftx *t, int peer, uint64_t tag, int iters, size_t sz)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char *sbuf = malloc(sz), *rbuf = malloc(sz);
	int it, ret = 0;

	ftx_fill(sbuf, sz, (uint64_t)t->rank);
	for (it = 0; it < iters && !ret; it++) {
		memset(rbuf, 0, sz);
		if (t->rank < peer) {
			ret = ftx_tsend(t, sbuf, sz, peer, tag, NULL) ||
			      ftx_trecv(t, rbuf, sz, peer, tag, 0, NULL) ||
			      ftx_wait_rx(t, &e, NULL, &err) != 1;
		} else {
			ret = ftx_trecv(t, rbuf, sz, peer, tag, 0, NULL) ||
			      ftx_wait_rx(t, &e, NULL, &err) != 1 ||
			      ftx_tsend(t, sbuf, sz, peer, tag, NULL);
		}
		if (!ret && (e.len != sz || !ftx_check(rbuf, sz, (uint64_t)peer)))
			ret = 1;
	}
	if (!ret)
		ret = ftx_wait_sends(t) != 0;
	free(sbuf);
	free(rbuf);
	return ret;
}

static int run(struct ftx *t)
{
	const char *cmd = ftx_opt(t, 'D', NULL);
	double bound = atof(ftx_opt(t, 'T', "30"));
	int iters = atoi(ftx_opt(t, 'I', "200"));
	size_t wsize = strtoul(ftx_opt(t, 's', "4096"), NULL, 0);
	int cross = t->rank ^ 1, local = t->rank ^ 2;
	struct fi_cq_err_entry err;
	uint64_t tx_err0, posted;
	char rbuf[64], sbuf[64] = "after the cut";
	double t0, rx_s = -1, tx_s = -1;
	ssize_t r;

	if (t->size != 4)
		FTX_FAIL(t, "needs 4 ranks (2 per host)");
	if (!cmd)
		FTX_FAIL(t, "-D CMD (the command that takes the link down) is required");
	if (pingpong(t, cross, TAG_WARM, iters, wsize))
		FTX_FAIL(t, "warm-up with rank %d (other host)", cross);
	if (pingpong(t, local, TAG_LOCAL, iters, wsize))
		FTX_FAIL(t, "warm-up with rank %d (same host)", local);
	ftx_barrier(t);
	if (t->rank == 0 && system(cmd) != 0)
		FTX_FAIL(t, "link-down command failed: %s", cmd);
	ftx_barrier(t);

	/* The partner's message can never arrive, and ours can never be
	 * delivered: both must end as error completions, in bounded time. */
	t0 = ftx_now();
	tx_err0 = t->tx_err;
	posted = t->tx_posted;
	if (ftx_trecv(t, rbuf, sizeof(rbuf), cross, TAG_CUT, 0, NULL))
		FTX_FAIL(t, "post the receive");
	if (ftx_tsend(t, sbuf, sizeof(sbuf), cross, TAG_CUT, NULL))
		FTX_FAIL(t, "post the send");
	while (rx_s < 0 || tx_s < 0) {
		int pr = ftx_progress(t);

		if (pr < 0)
			FTX_FAIL(t, "cq read: %s", fi_strerror(-pr));
		if (tx_s < 0 && t->tx_done > posted)
			tx_s = ftx_now() - t0;
		if (rx_s < 0 && t->nstash)
			FTX_FAIL(t, "a receive from the cut-off rank %d completed without error",
				 cross);
		if (rx_s < 0 && pr == 1) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(t->rxcq, &err, 0) == 1) {
				if (err.err != FI_EHOSTUNREACH && err.err != FI_EIO)
					FTX_FAIL(t, "receive error %d (%s), expected a peer error",
						 err.err, fi_strerror(err.err));
				rx_s = ftx_now() - t0;
			}
		}
		if (ftx_now() - t0 > bound)
			FTX_FAIL(t, "no %s%s%s completion within %.0f s of the cut",
				 rx_s < 0 ? "receive" : "", rx_s < 0 && tx_s < 0 ? " or " : "",
				 tx_s < 0 ? "send" : "", bound);
	}
	printf("[rank %d] cut off from rank %d: receive failed after %.2f s, send %s after %.2f s\n",
	       t->rank, cross, rx_s, t->tx_err > tx_err0 ? "failed" : "completed", tx_s);

	/* Once the peer is known lost, new operations on it fail at once. */
	r = fi_tsend(t->ep, sbuf, sizeof(sbuf), NULL, t->peer[cross], TAG_CUT, NULL);
	if (r == 0) {
		t0 = ftx_now();
		posted = ++t->tx_posted;
		tx_err0 = t->tx_err;
		while (t->tx_done < posted && ftx_now() - t0 < 1)
			if (ftx_progress(t) < 0)
				break;
		if (t->tx_done < posted || t->tx_err == tx_err0)
			FTX_FAIL(t, "a send to the lost rank %d was accepted and did not fail",
				 cross);
	} else if (r == -FI_EAGAIN) {
		FTX_FAIL(t, "a send to the lost rank %d returned -FI_EAGAIN", cross);
	}
	r = fi_trecv(t->ep, rbuf, sizeof(rbuf), NULL, t->peer[cross], TAG_CUT, 0, NULL);
	if (r == 0) {
		t0 = ftx_now();
		while (ftx_now() - t0 < 1) {
			int pr = ftx_progress(t);

			if (pr == 1 && fi_cq_readerr(t->rxcq, &err, 0) == 1)
				break;
		}
		if (ftx_now() - t0 >= 1)
			FTX_FAIL(t, "a receive from the lost rank %d was accepted and did not fail",
				 cross);
	}

	/* The rest of the job is untouched. */
	t->tx_err = 0;
	if (pingpong(t, local, TAG_LOCAL, iters, 4096))
		FTX_FAIL(t, "rank %d (same host) after the cut", local);
	if (pingpong(t, local, TAG_LOCAL, 4, 1 << 20))
		FTX_FAIL(t, "1 MiB with rank %d (same host) after the cut", local);
	ftx_barrier(t);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_linkdown", 4, FI_DIRECTED_RECV, run };

	return ftx_main(argc, argv, &spec);
}
