/* Helpers for the fabtests-extra client/server programs, which are started
 * the way libfabric's fabtests are (a server, then a client that names it
 * on the command line): the server's fi_getinfo(FI_SOURCE) at SRC:PORT, the
 * client's fi_getinfo(SERVER, PORT) and its dest_addr, one endpoint each
 * with one CQ, and a hello exchange after which each side has the other's
 * fi_addr_t. Small control messages go over FI_MSG; every other completion
 * that turns up meanwhile is handed to a callback, so a program can watch
 * its RMA completions and remote CQ data while it talks. Nothing here is
 * specific to matchbox. */
#ifndef FTX_CS_H
#define FTX_CS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

extern const char *ftx_role;

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "%s FAIL line %d: ", ftx_role, __LINE__); \
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		exit(1);						\
	} while (0)
#define CHK(call)							\
	do {								\
		int rc_ = (int)(call);					\
		if (rc_)						\
			FAIL("%s: %s", #call, fi_strerror(-rc_));	\
	} while (0)

double ftx_now(void);

struct ftx_cs;
/* A completion that is not the one being waited for: ok entries have
 * err == 0, failed ones carry the error in e->err (and e->op_context). */
typedef void (*ftx_cs_other_fn)(struct ftx_cs *cs, const struct fi_cq_err_entry *e);

struct ftx_cs {
	bool server;
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
	ftx_cs_other_fn other;
	/* Optional: adjusts the CQ's attributes (a wait object, a wait set
	 * opened on cs->fab) before it is opened. */
	void (*cq_hook)(struct ftx_cs *cs, struct fi_cq_attr *attr);
	/* Optional, at close: objects of the program's own that hold the
	 * domain (counters, MRs), closed once the endpoint is; and those
	 * that hold the fabric (a wait set), once the domain is. */
	void (*after_ep)(struct ftx_cs *cs);
	void (*before_fabric)(struct ftx_cs *cs);
	void *user;
	char ctl_rx[2][256], ctl_tx[256];
	bool ctl_done[2];
	int ctl_next;
};

/* fi_getinfo the fabtests way: a server's (dst NULL) FI_SOURCE at
 * src:port; a client's dest_addr for dst:port, bound at src if given
 * (hints gains that source). FAILs if there is none. */
struct fi_info *ftx_cs_getinfo(struct fi_info *hints, const char *src, const char *port,
			       const char *dst);
/* Opens everything for `hints` (consumed) and exchanges hellos. dst == NULL
 * makes a server bound at src:port; otherwise a client of dst:port (bound
 * at src if given). `before_enable` (may be NULL) runs between the binds and
 * fi_enable, for a program's counters. */
void ftx_cs_open(struct ftx_cs *cs, struct fi_info *hints, const char *src, const char *port,
		 const char *dst, void (*before_enable)(struct ftx_cs *cs));
/* Closes everything, checking each close (a busy object is a bug). */
void ftx_cs_close(struct ftx_cs *cs);
/* One completion (within 10 s): 1 with *e filled, or FAIL. */
void ftx_cs_next(struct ftx_cs *cs, struct fi_cq_err_entry *e);
/* Waits for the completion of `ctx`, handing others to cs->other; returns
 * its error (0 for success) and, if `out` is given, the entry. */
int ftx_cs_wait(struct ftx_cs *cs, void *ctx, struct fi_cq_err_entry *out);
/* Control messages (at most 256 bytes), in order, blocking. */
void ftx_cs_send(struct ftx_cs *cs, const void *buf, size_t len);
void ftx_cs_recv(struct ftx_cs *cs, void *buf, size_t len);
/* Retries `call` while it answers -FI_EAGAIN, progressing the CQ. */
#define FTX_POST(cs, call)						\
	do {								\
		ssize_t r_;						\
		double end_ = ftx_now() + 10;				\
		while ((r_ = (call)) == -FI_EAGAIN && ftx_now() < end_)	\
			ftx_cs_poll(cs);				\
		if (r_)							\
			FAIL("%s: %s", #call, fi_strerror((int)-r_));	\
	} while (0)
/* Reads completions that are there now, handing them to cs->other. */
void ftx_cs_poll(struct ftx_cs *cs);

#endif
