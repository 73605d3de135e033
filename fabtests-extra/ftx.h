/* Harness for the fabtests-extra programs: fork N ranks of one program,
 * open the same provider in each (-p NAME), exchange endpoint names through
 * the parent, and give every rank an fi_addr_t for every other. The parent
 * also relays barriers and ends the job (non-zero) if any rank fails, hangs
 * past the time limit, or dies. Nothing here is specific to matchbox. */
#ifndef FTX_H
#define FTX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

struct ftx {
	int rank, size;
	const char *prov;
	struct fi_info *fi;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_cq *txcq, *rxcq;
	fi_addr_t *peer;
	uint64_t tx_posted, tx_done, tx_err;
	struct fi_cq_tagged_entry *stash;
	fi_addr_t *stash_src;
	size_t nstash, stash_cap;
	int to_parent, from_parent;
	int argc;
	char **argv;
	bool verbose;
};

struct ftx_spec {
	const char *name;
	int ranks;			/* default rank count (-n overrides) */
	uint64_t caps;			/* beyond FI_TAGGED | FI_MSG */
	int (*run)(struct ftx *t);
};

int ftx_main(int argc, char **argv, const struct ftx_spec *spec);
void ftx_barrier(struct ftx *t);
/* Poll both CQs once; rx completions are kept for ftx_wait_rx. */
int ftx_progress(struct ftx *t);
/* Wait for one rx completion: 1 = ok (in *e), 0 = error entry (in *err),
 * negative = timeout or failure. */
int ftx_wait_rx(struct ftx *t, struct fi_cq_tagged_entry *e, fi_addr_t *src,
		struct fi_cq_err_entry *err);
int ftx_wait_tx(struct ftx *t, uint64_t count);
/* Wait until every send posted through ftx_tsend has completed. */
int ftx_wait_sends(struct ftx *t);
/* Post with retry on -FI_EAGAIN (progressing meanwhile). */
int ftx_tsend(struct ftx *t, const void *buf, size_t len, int to, uint64_t tag, void *ctx);
int ftx_trecv(struct ftx *t, void *buf, size_t len, int from, uint64_t tag, uint64_t ignore,
	      void *ctx);
double ftx_now(void);
void ftx_fill(void *buf, size_t len, uint64_t seed);
bool ftx_check(const void *buf, size_t len, uint64_t seed);
const char *ftx_opt(struct ftx *t, char flag, const char *def);
/* Parse -S (comma-separated sizes, default `def`) into list[cap]; returns
 * the count and sets *max to the largest. */
size_t ftx_sizes(struct ftx *t, const char *def, size_t *list, size_t cap, size_t *max);

#define FTX_FAIL(t, ...)						\
	do {								\
		fprintf(stderr, "[rank %d] FAIL %s:%d: ", (t)->rank, __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		return 1;						\
	} while (0)

#endif
