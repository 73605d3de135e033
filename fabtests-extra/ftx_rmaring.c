/* Every rank reads from and writes to the next one at once, in bursts far
 * larger than a transmit queue (any provider, the ftx harness, default 3
 * ranks):
 *
 *   ftx_rmaring -p PROV [-n RANKS] [-N OPS] [-W WORDS]
 *
 * Each rank registers WORDS (default 4096) 8-byte words and tells the
 * previous rank where they are. Then every rank posts OPS (default 20000)
 * 8-byte fi_reads of the next rank's words, retrying on -FI_EAGAIN, and
 * checks each word it got; then as many fi_writes of its own pattern into
 * the next rank's words, and each rank checks what its previous rank
 * wrote. A target answers a read from its own transmit resources, which its
 * own reads also use: a provider that lets those fill with reads can leave
 * every rank of the cycle waiting for an answer none can send (matchbox did,
 * between hosts and with frames on one node; the harness's time limit ends
 * such a run). Exit 0 when every word is right. */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_rma.h>

#include "ftx.h"

#define TAG_KEY 21

struct remote {
	uint64_t addr, key;
};

static uint64_t word(int rank, uint64_t i, int round)
{
	return ((uint64_t)rank << 40) ^ (i * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)round;
}

/* Posts `ops` operations of 8 bytes each to the next rank, every one
 * into (or from) its own slot of `local`, and waits for them all. */
static int burst(struct ftx *t, bool write, uint64_t *local, size_t words, size_t ops,
		 const struct remote *r, int next)
{
	for (size_t k = 0; k < ops; k++) {
		size_t i = k % words;
		uint64_t raddr = r->addr + i * sizeof(uint64_t);
		ssize_t ret;

		do {
			ret = write ? fi_write(t->ep, &local[i], 8, NULL, t->peer[next], raddr,
					       r->key, NULL)
				    : fi_read(t->ep, &local[i], 8, NULL, t->peer[next], raddr,
					      r->key, NULL);
			if (ret == -FI_EAGAIN && ftx_progress(t) < 0)
				FTX_FAIL(t, "progress");
		} while (ret == -FI_EAGAIN);
		if (ret)
			FTX_FAIL(t, "%s %zu: %s", write ? "fi_write" : "fi_read", k,
				 fi_strerror((int)-ret));
		t->tx_posted++;
	}
	if (ftx_wait_tx(t, t->tx_posted) || t->tx_err)
		FTX_FAIL(t, "%s burst: %llu errors", write ? "write" : "read",
			 (unsigned long long)t->tx_err);
	return 0;
}

static int run(struct ftx *t)
{
	size_t ops = (size_t)atol(ftx_opt(t, 'N', "20000"));
	size_t words = (size_t)atol(ftx_opt(t, 'W', "4096"));
	int next = (t->rank + 1) % t->size, prev = (t->rank + t->size - 1) % t->size;
	uint64_t mode = (uint64_t)t->fi->domain_attr->mr_mode;
	uint64_t *mine, *got;
	struct fi_cq_tagged_entry e;
	struct fid_mr *mr;
	struct remote r, me;
	size_t i, bad = 0;

	if (t->size < 2 || !words || ops < words)
		FTX_FAIL(t, "needs 2 ranks or more and -N at least -W");
	mine = calloc(words, sizeof(*mine));
	got = calloc(words, sizeof(*got));
	if (!mine || !got)
		FTX_FAIL(t, "out of memory");
	for (i = 0; i < words; i++)
		mine[i] = word(t->rank, i, 0);
	if (fi_mr_reg(t->domain, mine, words * sizeof(*mine), FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
		      0x500 + (uint64_t)t->rank, 0, &mr, NULL))
		FTX_FAIL(t, "fi_mr_reg");
	me.key = fi_mr_key(mr);
	me.addr = (mode == FI_MR_BASIC || (mode & FI_MR_VIRT_ADDR)) ? (uint64_t)(uintptr_t)mine : 0;
	if (ftx_trecv(t, &r, sizeof(r), next, TAG_KEY, 0, NULL) ||
	    ftx_tsend(t, &me, sizeof(me), prev, TAG_KEY, NULL) || ftx_wait_rx(t, &e, NULL, NULL) != 1 ||
	    ftx_wait_sends(t))
		FTX_FAIL(t, "key exchange");
	ftx_barrier(t);

	if (burst(t, false, got, words, ops, &r, next))
		return 1;
	for (i = 0; i < words; i++)
		bad += got[i] != word(next, i, 0);
	if (bad)
		FTX_FAIL(t, "%zu of %zu words read from rank %d are wrong", bad, words, next);
	/* Every rank has read its neighbour's first pattern before anyone
	 * writes the second. */
	ftx_barrier(t);

	for (i = 0; i < words; i++)
		got[i] = word(t->rank, i, 1);
	if (burst(t, true, got, words, ops, &r, next))
		return 1;
	ftx_barrier(t);
	for (i = 0; i < words; i++)
		bad += mine[i] != word(prev, i, 1);
	if (bad)
		FTX_FAIL(t, "%zu of %zu words written by rank %d are wrong", bad, words, prev);
	ftx_barrier(t);
	fi_close(&mr->fid);
	free(mine);
	free(got);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_rmaring", 3, FI_RMA, run };

	return ftx_main(argc, argv, &spec);
}
