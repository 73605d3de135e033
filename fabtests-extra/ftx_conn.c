/* Connection storm and connection counts. Every rank sends -M small
 * messages to every other rank at once (no rank has posted a receive when
 * the first ones arrive), then receives everyone's and checks every byte.
 * With matchbox across hosts (FTX_HOSTS=H) it then reads the endpoint's net
 * counters (FI_MATCHBOX_OPT_NET_STATS) and checks them against the
 * connection mode in FI_MATCHBOX_CONN_MODE:
 *   static, ondemand: one connection per other-host peer, no datagrams;
 *   adaptive: fewer messages per peer than the provider's threshold (the
 *             counters report it: FI_MATCHBOX_CONN_THRESHOLD, by default 16
 *             over verbs and none over tcp/udp) stay on datagrams, no
 *             connection; that many or more make one connection per peer;
 *   partial:  connections to exactly the other-host peers at rank distance
 *             2^k, datagrams to the rest (below the threshold);
 * and in every mode made + accepted - closed == open (one connection per
 * pair, never two). With FI_MATCHBOX_CONN_MAX=K below the peers that earn
 * a connection in adaptive mode, each rank ends with at most 2K (K it
 * asked for, K it accepted), the rest stay on datagrams, and the budget is
 * seen to have said no. With -W MS (FI_MATCHBOX_CONN_IDLE_MS=MS) it then idles
 * until every connection has been closed, storms again and checks that the
 * connections came back and the data is intact. */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_ext_matchbox.h>

static int hosts(void)
{
	const char *h = getenv("FTX_HOSTS");

	return h && atoi(h) > 0 ? atoi(h) : 1;
}

static bool pow2(int v)
{
	return v > 0 && !(v & (v - 1));
}

/* Other-host peers this rank should be connected to after the storm;
 * `thr` is the message count that makes a peer busy (0: none does). */
static int expected_conns(struct ftx *t, const char *mode, int msgs, uint64_t thr)
{
	int h = hosts(), i, n = 0;
	bool busy = thr && (uint64_t)msgs >= thr;

	for (i = 0; i < t->size; i++) {
		int d = (i - t->rank + t->size) % t->size;

		if (i == t->rank || i % h == t->rank % h)
			continue;
		if (!strcmp(mode, "static") || !strcmp(mode, "ondemand") ||
		    (!strcmp(mode, "adaptive") && busy) ||
		    (!strcmp(mode, "partial") && (busy || pow2(d) || pow2(t->size - d))))
			n++;
	}
	return n;
}

static int storm(struct ftx *t, int msgs, uint64_t round)
{
	size_t sz = 64 + 8 * (size_t)t->rank;
	int total = msgs * (t->size - 1), i, j, k = 0;
	char *rbuf = calloc((size_t)total, 1024), *sbuf = malloc((size_t)total * sz);
	struct fi_cq_tagged_entry e;
	fi_addr_t src;

	for (j = 0; j < msgs; j++)
		for (i = 0; i < t->size; i++) {
			if (i == t->rank)
				continue;
			ftx_fill(sbuf + (size_t)k * sz, sz, round << 32 | (uint64_t)t->rank << 16 |
				 (uint64_t)j);
			if (ftx_tsend(t, sbuf + (size_t)k * sz, sz, i, round << 32 | (uint64_t)j,
				      NULL))
				FTX_FAIL(t, "send to %d", i);
			k++;
		}
	for (i = 0, k = 0; i < t->size; i++) {
		if (i == t->rank)
			continue;
		for (j = 0; j < msgs; j++, k++)
			if (ftx_trecv(t, rbuf + (size_t)k * 1024, 1024, i, round << 32 | (uint64_t)j,
				      0, NULL))
				FTX_FAIL(t, "post recv");
	}
	for (k = 0; k < total; k++) {
		int from;

		if (ftx_wait_rx(t, &e, &src, NULL) != 1)
			FTX_FAIL(t, "receive %d of %d", k, total);
		for (from = 0; from < t->size && t->peer[from] != src; from++)
			;
		if (from == t->size || e.len != 64 + 8 * (size_t)from ||
		    !ftx_check(e.buf, e.len, round << 32 | (uint64_t)from << 16 | (e.tag & 0xffff)))
			FTX_FAIL(t, "message %d (from %d, %zu bytes) is wrong", k, from, e.len);
	}
	if (ftx_wait_sends(t))
		FTX_FAIL(t, "sends did not complete");
	free(rbuf);
	free(sbuf);
	return 0;
}

static int net_stats(struct ftx *t, struct fi_matchbox_net_stats *s)
{
	size_t len = sizeof(*s);

	return fi_getopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, s, &len);
}

/* What holds in every mode: one connection per pair (every connection
 * counted once, made or accepted) and no frame rejected. */
static int consistent(struct ftx *t, const struct fi_matchbox_net_stats *s)
{
	if (s->conns_made + s->conns_accepted - s->conns_closed != s->conns_open)
		FTX_FAIL(t, "made %llu + accepted %llu - closed %llu != open %llu",
			 (unsigned long long)s->conns_made, (unsigned long long)s->conns_accepted,
			 (unsigned long long)s->conns_closed, (unsigned long long)s->conns_open);
	if (s->bad_frames)
		FTX_FAIL(t, "%llu bad frames", (unsigned long long)s->bad_frames);
	return 0;
}

/* Adaptive mode with a connection budget smaller than the peers that
 * earn a connection: which pairs win depends on timing, so only the bound
 * is checked, and that the budget refused some. */
static int check_budget(struct ftx *t, int cap)
{
	struct fi_matchbox_net_stats s;
	double end = ftx_now() + 1;

	do {
		ftx_progress(t);
		usleep(1000);
	} while (ftx_now() < end);
	if (net_stats(t, &s))
		FTX_FAIL(t, "FI_MATCHBOX_OPT_NET_STATS");
	if (t->verbose || getenv("FTX_CONN_VERBOSE"))
		printf("[rank %d] budget %d: %llu open, made %llu, accepted %llu, over budget %llu, "
		       "%llu datagram frames\n", t->rank, cap, (unsigned long long)s.conns_open,
		       (unsigned long long)s.conns_made, (unsigned long long)s.conns_accepted,
		       (unsigned long long)s.conns_over_budget, (unsigned long long)s.dgram_msgs);
	if (s.conns_open > 2 * (uint64_t)cap)
		FTX_FAIL(t, "%llu connections open, budget %d", (unsigned long long)s.conns_open, cap);
	if (!s.conns_over_budget)
		FTX_FAIL(t, "the budget never refused a connection");
	if (!s.dgram_msgs)
		FTX_FAIL(t, "no frame went by datagram");
	return consistent(t, &s);
}

static int check_counts(struct ftx *t, const char *mode, int msgs)
{
	struct fi_matchbox_net_stats s;
	const char *cap = getenv("FI_MATCHBOX_CONN_MAX");
	double end = ftx_now() + 5;
	bool dgram_expected;
	int want;

	if (net_stats(t, &s))
		FTX_FAIL(t, "FI_MATCHBOX_OPT_NET_STATS");
	want = expected_conns(t, mode, msgs, s.busy_threshold);
	dgram_expected = strcmp(mode, "static") && strcmp(mode, "ondemand") &&
			 want < t->size - 1 - (t->size / hosts() - 1);
	if (!strcmp(mode, "adaptive") && cap && atoi(cap) > 0 && want > atoi(cap))
		return check_budget(t, atoi(cap));
	/* Adaptive connections are made while traffic goes on by datagram, so
	 * the storm can end with a handshake still under way: let those finish
	 * (every rank is here, making progress), then count. */
	do {
		if (net_stats(t, &s))
			FTX_FAIL(t, "FI_MATCHBOX_OPT_NET_STATS");
		if (s.conns_open >= (uint64_t)want)
			break;
		ftx_progress(t);
		usleep(1000);
	} while (ftx_now() < end);
	if (t->verbose || getenv("FTX_CONN_VERBOSE"))
		printf("[rank %d] %s, threshold %llu: %llu open (want %d), made %llu, accepted %llu, "
		       "refused %llu, closed %llu, %llu datagram and %llu connection frames\n",
		       t->rank, mode, (unsigned long long)s.busy_threshold,
		       (unsigned long long)s.conns_open, want, (unsigned long long)s.conns_made,
		       (unsigned long long)s.conns_accepted, (unsigned long long)s.conns_refused,
		       (unsigned long long)s.conns_closed, (unsigned long long)s.dgram_msgs,
		       (unsigned long long)s.conn_msgs);
	if (s.conns_open != (uint64_t)want)
		FTX_FAIL(t, "%s: %llu connections open, want %d", mode,
			 (unsigned long long)s.conns_open, want);
	if (s.conns_closed)
		FTX_FAIL(t, "%llu connections closed without idling", (unsigned long long)s.conns_closed);
	if (!dgram_expected && s.dgram_msgs && (!strcmp(mode, "static") || !strcmp(mode, "ondemand")))
		FTX_FAIL(t, "%s: %llu frames went by datagram", mode,
			 (unsigned long long)s.dgram_msgs);
	if (dgram_expected && !s.dgram_msgs)
		FTX_FAIL(t, "%s: no frame went by datagram", mode);
	return consistent(t, &s);
}

static int run(struct ftx *t)
{
	int msgs = atoi(ftx_opt(t, 'M', "4"));
	int idle_ms = atoi(ftx_opt(t, 'W', "0"));
	const char *mode = getenv("FI_MATCHBOX_CONN_MODE");
	bool counts = !strcmp(t->prov, "matchbox") && hosts() > 1;
	struct fi_matchbox_net_stats s;
	double end;

	if (!mode)
		mode = "adaptive";
	if (storm(t, msgs, 1))
		return 1;
	ftx_barrier(t);
	if (!idle_ms)
		return counts ? check_counts(t, mode, msgs) : 0;
	/* An idle test with nothing to close would pass without testing. */
	if (counts && (net_stats(t, &s) || !expected_conns(t, mode, msgs, s.busy_threshold)))
		FTX_FAIL(t, "-W: %s with threshold %llu makes no connection to idle", mode,
			 (unsigned long long)s.busy_threshold);
	/* Idle until the handshake has closed every connection. */
	end = ftx_now() + 20;
	do {
		ftx_progress(t);
		usleep(1000);
		if (counts && net_stats(t, &s))
			FTX_FAIL(t, "FI_MATCHBOX_OPT_NET_STATS");
	} while (counts && s.conns_open && ftx_now() < end);
	if (counts && s.conns_open)
		FTX_FAIL(t, "%llu connections still open after idling",
			 (unsigned long long)s.conns_open);
	ftx_barrier(t);
	if (storm(t, msgs, 2))
		return 1;
	ftx_barrier(t);
	if (counts) {
		if (net_stats(t, &s))
			FTX_FAIL(t, "FI_MATCHBOX_OPT_NET_STATS");
		if (expected_conns(t, mode, msgs, s.busy_threshold) && !s.conns_closed)
			FTX_FAIL(t, "no connection was closed for idleness");
		if (t->verbose || getenv("FTX_CONN_VERBOSE"))
			printf("[rank %d] after idling and a second storm: %llu closed, %llu made, "
			       "%llu accepted\n", t->rank, (unsigned long long)s.conns_closed,
			       (unsigned long long)s.conns_made, (unsigned long long)s.conns_accepted);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { .name = "ftx_conn", .ranks = 4, .run = run };

	return ftx_main(argc, argv, &spec);
}
