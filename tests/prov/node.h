/* A matchbox endpoint for the provider tests that run several in one
 * process or across fork(): tagged, directed receives, one CQ, and a
 * counter of sends when asked for. */
#ifndef TESTS_PROV_NODE_H
#define TESTS_PROV_NODE_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

struct node {
	struct fi_info *fi;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_cntr *cntr;	/* counts sends; opened when asked for */
	char name[64];
};

static inline void open_node_cntr(struct node *n, bool cntr)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	size_t len = sizeof(n->name);

	h->fabric_attr->prov_name = strdup("matchbox");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED | FI_DIRECTED_RECV;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &n->fi), 0);
	fi_freeinfo(h);
	cr_assert_eq(fi_fabric(n->fi->fabric_attr, &n->fabric, NULL), 0);
	cr_assert_eq(fi_domain(n->fabric, n->fi, &n->domain, NULL), 0);
	cr_assert_eq(fi_av_open(n->domain, &aa, &n->av, NULL), 0);
	cr_assert_eq(fi_cq_open(n->domain, &ca, &n->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(n->domain, n->fi, &n->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(n->ep, &n->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	n->cntr = NULL;
	if (cntr) {
		struct fi_cntr_attr cattr = { .events = FI_CNTR_EVENTS_COMP };

		cr_assert_eq(fi_cntr_open(n->domain, &cattr, &n->cntr, NULL), 0);
		cr_assert_eq(fi_ep_bind(n->ep, &n->cntr->fid, FI_SEND), 0);
	}
	cr_assert_eq(fi_enable(n->ep), 0);
	cr_assert_eq(fi_getname(&n->ep->fid, n->name, &len), 0);
}

static inline void open_node(struct node *n)
{
	open_node_cntr(n, false);
}

static inline void close_node(struct node *n)
{
	fi_close(&n->ep->fid);
	if (n->cntr)
		fi_close(&n->cntr->fid);
	fi_close(&n->cq->fid);
	fi_close(&n->av->fid);
	fi_close(&n->domain->fid);
	fi_close(&n->fabric->fid);
	fi_freeinfo(n->fi);
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
