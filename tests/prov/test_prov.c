/* Provider-level tests through the public libfabric API: fi_getinfo's hint
 * checks, and every data entry point refusing bad input with the right
 * negative error and no side effect. Layered fixtures as in libfabric's cxi
 * tests: getinfo -> fabric -> domain -> av/cq -> enabled endpoint (whose own
 * address is in its AV, so it can send to itself). */
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>

#include "rdma/fi_ext_matchbox.h"

static struct fi_info *hints_new(void)
{
	struct fi_info *h = fi_allocinfo();

	h->fabric_attr->prov_name = strdup("matchbox");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV | FI_MULTI_RECV | FI_SOURCE;
	return h;
}

static int getinfo_with(void (*tweak)(struct fi_info *))
{
	struct fi_info *h = hints_new(), *fi = NULL;
	int ret;

	tweak(h);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi);
	fi_freeinfo(h);
	fi_freeinfo(fi);
	return ret;
}

static void want_rma(struct fi_info *h) { h->caps |= FI_RMA | FI_RMA_EVENT; }
static void want_collective(struct fi_info *h) { h->caps |= FI_COLLECTIVE; }
static void want_msg_ep(struct fi_info *h) { h->ep_attr->type = FI_EP_MSG; }
static void want_auto(struct fi_info *h) { h->domain_attr->data_progress = FI_PROGRESS_AUTO; }
static void want_big_inject(struct fi_info *h) { h->tx_attr->inject_size = 1 << 20; }
static void want_big_tx(struct fi_info *h) { h->tx_attr->size = 1 << 30; }
static void want_ib_addr(struct fi_info *h) { h->addr_format = FI_SOCKADDR_IB; }
static void want_strict_order(struct fi_info *h) { h->tx_attr->comp_order = FI_ORDER_STRICT; }
static void want_raw_order(struct fi_info *h) { h->tx_attr->msg_order = FI_ORDER_RAW; }
static void want_iov(struct fi_info *h) { h->rx_attr->iov_limit = 1000; }
static void want_cqdata(struct fi_info *h) { h->domain_attr->cq_data_size = 16; }
static void want_domain(struct fi_info *h) { h->domain_attr->name = strdup("mlx5_0"); }
static void want_nothing(struct fi_info *h) { (void)h; }
static void want_threadsafe(struct fi_info *h) { h->domain_attr->threading = FI_THREAD_SAFE; }

Test(getinfo, honours_and_refuses_hints, .timeout = 30)
{
	cr_assert_eq(getinfo_with(want_nothing), 0);
	cr_assert_eq(getinfo_with(want_threadsafe), 0);
	cr_assert_eq(getinfo_with(want_rma), 0);
	cr_assert_eq(getinfo_with(want_collective), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_msg_ep), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_auto), 0);
	cr_assert_eq(getinfo_with(want_big_inject), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_big_tx), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_ib_addr), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_strict_order), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_raw_order), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_iov), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_cqdata), -FI_ENODATA);
	cr_assert_eq(getinfo_with(want_domain), -FI_ENODATA);
}

Test(getinfo, attributes_and_old_api, .timeout = 30)
{
	struct fi_info *h = hints_new(), *fi = NULL;

	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi), 0);
	cr_assert_str_eq(fi->fabric_attr->prov_name, "matchbox");
	cr_assert_eq(fi->ep_attr->type, FI_EP_RDM);
	cr_assert_eq(fi->addr_format, FI_ADDR_STR);
	cr_assert(fi->caps & FI_DIRECTED_RECV);
	cr_assert_eq(fi->domain_attr->cq_data_size, 8);
	cr_assert(fi->tx_attr->inject_size > 0);
	cr_assert_eq(fi->mode, 0);
	fi_freeinfo(fi);
	fi = NULL;
	/* An application written against API 1.4 (fi_pingpong's) still
	 * finds the provider, with an old-style mr_mode. */
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, h, &fi), 0);
	cr_assert(fi->domain_attr->mr_mode == FI_MR_SCALABLE ||
		  fi->domain_attr->mr_mode == FI_MR_BASIC);
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

/* Programs that open a second endpoint copy the first answer into their
 * hints (fabtests' multi_ep): the provider must accept its own answer, and
 * still refuse more than it offers. */
Test(getinfo, own_answer_as_hints, .timeout = 30)
{
	struct fi_info *h = hints_new(), *fi = NULL, *again = NULL, *dup;

	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi), 0);
	dup = fi_dupinfo(fi);
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, dup, &again), 0);
	cr_assert_eq(again->domain_attr->ep_cnt, fi->domain_attr->ep_cnt);
	fi_freeinfo(again);
	again = NULL;
	dup->domain_attr->ep_cnt = fi->domain_attr->ep_cnt + 1;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, dup, &again), -FI_ENODATA);
	dup->domain_attr->ep_cnt = fi->domain_attr->ep_cnt;
	dup->domain_attr->max_ep_tx_ctx = 2;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, dup, &again), -FI_ENODATA);
	fi_freeinfo(dup);
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

static struct fi_info *fi;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static fi_addr_t self;
static char name[64];

static void setup(void)
{
	struct fi_info *h = hints_new();
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	size_t len = sizeof(name);

	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi), 0);
	fi_freeinfo(h);
	cr_assert_eq(fi_fabric(fi->fabric_attr, &fabric, NULL), 0);
	cr_assert_eq(fi_domain(fabric, fi, &domain, NULL), 0);
	cr_assert_eq(fi_av_open(domain, &aa, &av, NULL), 0);
	cr_assert_eq(fi_cq_open(domain, &ca, &cq, NULL), 0);
	cr_assert_eq(fi_endpoint(domain, fi, &ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(ep, &av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(ep), 0);
	cr_assert_eq(fi_getname(&ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(av, name, 1, &self, 0, NULL), 1);
}

static void teardown(void)
{
	cr_assert_eq(fi_close(&ep->fid), 0);
	cr_assert_eq(fi_close(&cq->fid), 0);
	cr_assert_eq(fi_close(&av->fid), 0);
	cr_assert_eq(fi_close(&domain->fid), 0);
	cr_assert_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(fi);
}

TestSuite(ep, .init = setup, .fini = teardown, .timeout = 30);

static void no_completion(void)
{
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_cq_read(cq, &e, 1), -FI_EAGAIN, "a refused call left a completion");
}

Test(ep, send_to_self_roundtrip)
{
	char out[100] = "hello", in[100] = "";
	struct fi_cq_tagged_entry e[2];
	fi_addr_t src = 0;
	int got = 0;

	cr_assert_eq(fi_trecv(ep, in, sizeof(in), NULL, self, 42, 0, in), 0);
	cr_assert_eq(fi_tsenddata(ep, out, 6, NULL, 0xabc, self, 42, out), 0);
	while (got < 2) {
		ssize_t n = fi_cq_readfrom(cq, &e[got], 1, &src);

		if (n == 1)
			got++;
		else
			cr_assert_eq(n, -FI_EAGAIN);
	}
	for (int i = 0; i < 2; i++) {
		if (e[i].op_context == in) {
			cr_assert_eq(e[i].len, 6);
			cr_assert_eq(e[i].tag, 42);
			cr_assert_eq(e[i].data, 0xabc);
			cr_assert(e[i].flags & FI_REMOTE_CQ_DATA);
		}
	}
	cr_assert_str_eq(in, "hello");
}

/* Minor page faults over two laps of the endpoint's ring to itself (8,192
 * eight-byte injects, each received before the next: 64-byte frames in a
 * 256 KiB ring), once the first message has connected. */
static long ring_lap_faults(void)
{
	char out[8] = "1234567", in[8];
	struct fi_cq_tagged_entry e;
	struct rusage before, after;
	ssize_t n;

	for (int i = -1; i < 8192; i++) {
		if (i == 0)
			getrusage(RUSAGE_SELF, &before);
		cr_assert_eq(fi_trecv(ep, in, sizeof(in), NULL, self, 7, 0, in), 0);
		cr_assert_eq(fi_tinject(ep, out, sizeof(out), self, 7), 0);
		while ((n = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
			;
		cr_assert_eq(n, 1);
		cr_assert_eq(e.op_context, in);
	}
	getrusage(RUSAGE_SELF, &after);
	return after.ru_minflt - before.ru_minflt;
}

/* The sender populates a ring's pages when it connects and the receiver maps
 * them (FI_MATCHBOX_SHM_PREFAULT), so the first lap costs no page faults: a
 * fault every 64 frames in each process had made the first 4,096 round trips
 * twice as slow as the rest. */
Test(ep, ring_first_lap_takes_no_page_faults)
{
	long faults = ring_lap_faults();

	cr_assert_lt(faults, 40, "%ld page faults over two laps of a populated ring", faults);
}

/* What the test above guards against: with it off, the lap faults. */
static void setup_no_prefault(void)
{
	setenv("FI_MATCHBOX_SHM_PREFAULT", "0", 1);
	setup();
}

Test(ep_lazy_ring, first_lap_faults_without_prefault, .init = setup_no_prefault,
     .fini = teardown, .timeout = 30)
{
	long faults = ring_lap_faults();

	cr_assert_geq(faults, 100, "only %ld page faults over a ring's first lap", faults);
}

Test(ep, bad_arguments_change_nothing)
{
	char buf[64];
	struct iovec big = { buf, (1ULL << 40) + 1 };
	struct iovec null_iov = { NULL, 10 };
	struct fi_msg_tagged msg = { .msg_iov = &null_iov, .iov_count = 1, .addr = self };

	cr_assert_eq(fi_tsend(ep, NULL, 10, NULL, self, 1, NULL), -FI_EINVAL);
	cr_assert_eq(fi_trecv(ep, NULL, 10, NULL, self, 1, 0, NULL), -FI_EINVAL);
	cr_assert_eq(fi_tsend(ep, buf, 8, NULL, 12345, 1, NULL), -FI_EADDRNOTAVAIL);
	cr_assert_eq(fi_send(ep, buf, 8, NULL, 12345, NULL), -FI_EADDRNOTAVAIL);
	cr_assert_eq(fi_trecv(ep, buf, 8, NULL, 999, 1, 0, NULL), -FI_EADDRNOTAVAIL);
	cr_assert_eq(fi_tinject(ep, buf, fi->tx_attr->inject_size + 1, self, 1), -FI_EMSGSIZE);
	cr_assert_eq(fi_inject(ep, buf, fi->tx_attr->inject_size + 1, self), -FI_EMSGSIZE);
	cr_assert_eq(fi_tsendv(ep, &big, NULL, 1, self, 1, NULL), -FI_EMSGSIZE);
	cr_assert_eq(fi_tsendv(ep, &big, NULL, 100, self, 1, NULL), -FI_EINVAL);
	cr_assert_eq(fi_trecvmsg(ep, &msg, 0), -FI_EINVAL);
	msg.msg_iov = NULL;
	msg.iov_count = 0;
	cr_assert_eq(fi_tsendmsg(ep, &msg, 1ULL << 62), -FI_EBADFLAGS);
	cr_assert_eq(fi_trecvmsg(ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
	cr_assert_eq(fi_trecvmsg(ep, NULL, 0), -FI_EINVAL);
	cr_assert_eq(fi_tsendmsg(ep, NULL, 0), -FI_EINVAL);
	cr_assert_eq(fi_recvmsg(ep, NULL, 0), -FI_EINVAL);
	cr_assert_eq(fi_cancel(&ep->fid, buf), -FI_ENOENT);
	no_completion();
	/* Nothing refused was posted: a tag-1 message goes to the receive
	 * posted now, not to one of the refused ones. */
	{
		struct fi_cq_tagged_entry e;
		int got = 0, mine = 0;

		cr_assert_eq(fi_tsend(ep, "x", 1, NULL, self, 1, NULL), 0);
		cr_assert_eq(fi_trecv(ep, buf, sizeof(buf), NULL, self, 1, 0, buf), 0);
		while (got < 2) {
			ssize_t n = fi_cq_read(cq, &e, 1);

			cr_assert(n == 1 || n == -FI_EAGAIN, "read %zd", n);
			if (n == 1) {
				got++;
				mine += e.op_context == buf;
			}
		}
		cr_assert_eq(mine, 1);
	}
}

Test(ep, names_and_av_errors)
{
	char out[64];
	size_t len = 4;
	fi_addr_t a;

	cr_assert_eq(fi_getname(&ep->fid, out, &len), -FI_ETOOSMALL);
	cr_assert_eq(len, strlen(name) + 1);
	cr_assert_eq(fi_av_insert(av, "mbx://not-an-address", 1, &a, 0, NULL), 0);
	cr_assert_eq(a, FI_ADDR_NOTAVAIL);
	cr_assert_eq(fi_av_insert(av, "mbx://00000001:00000000:00000000:00000000:00000000",
				  1, &a, 0, NULL), 0, "pid 0 is not an address");
	cr_assert_eq(fi_av_insert(av, name, 1, &a, 1ULL << 40, NULL), -FI_EBADFLAGS);
	len = sizeof(out);
	cr_assert_eq(fi_av_lookup(av, self, out, &len), 0);
	cr_assert_str_eq(out, name);
	cr_assert_eq(fi_av_lookup(av, 777, out, &len), -FI_EINVAL);
	cr_assert_eq(fi_setname(&ep->fid, name, strlen(name) + 1), -FI_EOPBADSTATE);
}

Test(ep, unoffered_operations_answer)
{
	char buf[8];
	size_t count;

	/* Opened without FI_RMA: the call is refused, not attempted. */
	cr_assert_eq(fi_read(ep, buf, 8, NULL, self, 0, 0, NULL), -FI_EOPNOTSUPP);
	cr_assert_eq(fi_atomic(ep, buf, 1, NULL, self, 0, 0, FI_UINT64, FI_SUM, NULL), -FI_EOPNOTSUPP);
	cr_assert_eq(fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count), -FI_EOPNOTSUPP);
	cr_assert_eq(fi_barrier(ep, 0, NULL), -FI_ENOSYS);
	no_completion();
}

Test(ep, options)
{
	size_t v = 0, len = sizeof(v);
	struct fi_matchbox_stats st;

	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, &len), 0);
	v = 1234;
	cr_assert_eq(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, sizeof(v)), 0);
	v = 0;
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, &len), 0);
	cr_assert_eq(v, 1234);
	cr_assert_eq(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, 1), -FI_EINVAL);
	cr_assert_eq(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, 9999, &v, sizeof(v)), -FI_ENOPROTOOPT);
	len = sizeof(st);
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS, &st, &len), 0);
	len = 3;
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS, &st, &len),
		     -FI_ETOOSMALL);
}

/* The endpoint counters grew the RMA fields: a caller built with the older
 * struct gets the fields it knows and nothing written past them. */
Test(ep, stats_serve_the_older_struct_size)
{
	size_t old = offsetof(struct fi_matchbox_stats, rma_cma), len;
	struct fi_matchbox_stats st;

	memset(&st, 0xa5, sizeof(st));
	len = old;
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS, &st, &len), 0);
	cr_assert_eq(len, old);
	cr_assert_eq(st.rma_cma, 0xa5a5a5a5a5a5a5a5ULL);
	len = sizeof(st);
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS, &st, &len), 0);
	cr_assert_eq(len, sizeof(st));
	cr_assert_eq(st.rma_cma, 0);
	len = old - 1;
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS, &st, &len),
		     -FI_ETOOSMALL);
}

/* The net counters grew a field (busy_threshold): a caller built with the
 * older struct gets the fields it knows and nothing written past them. */
Test(ep, net_stats_serve_the_older_struct_size)
{
	size_t old = offsetof(struct fi_matchbox_net_stats, busy_threshold), len;
	struct fi_matchbox_net_stats ns;

	len = sizeof(ns);
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &ns, &len), 0);
	cr_assert_eq(len, sizeof(ns));
	memset(&ns, 0xa5, sizeof(ns));
	len = old;
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &ns, &len), 0);
	cr_assert_eq(len, old);
	cr_assert_eq(ns.busy_threshold, 0xa5a5a5a5a5a5a5a5ULL);
	len = old - 1;
	cr_assert_eq(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &ns, &len),
		     -FI_ETOOSMALL);
}

Test(ep, sread_blocks_and_times_out)
{
	struct fi_cq_tagged_entry e;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	cr_assert_eq(fi_cq_sread(cq, &e, 1, NULL, 200), -FI_EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert_geq((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000, 190);
}

Test(ep, cancel_reports_ecanceled)
{
	char buf[8];
	struct fi_context ctx;
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_trecv(ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, 5, 0, &ctx), 0);
	cr_assert_eq(fi_cancel(&ep->fid, &ctx), 0);
	cr_assert_eq(fi_cq_read(cq, &e, 1), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	cr_assert_eq(err.err, FI_ECANCELED);
	cr_assert_eq(err.op_context, &ctx);
}

/* fi_poll: the CQ is reported while it holds a completion, a counter once
 * per change; members cannot be closed while in the set. */
Test(ep, poll_set)
{
	struct fi_poll_attr pa = { 0 };
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_poll *ps;
	struct fid_cntr *cntr;
	struct fi_cq_tagged_entry e;
	char out[8] = "x", in[8], marker;
	void *ctx[4];
	int n, tries = 0;

	cr_assert_eq(fi_poll_open(domain, &pa, &ps), 0);
	cr_assert_eq(fi_cntr_open(domain, &ca, &cntr, &marker), 0);
	cr_assert_eq(fi_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(ps, &cq->fid, 0), -FI_EALREADY);
	cr_assert_eq(fi_poll_add(ps, &av->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(ps, &cntr->fid, 0), 0);
	cr_assert_eq(fi_poll(ps, ctx, 4), 0);
	cr_assert_eq(fi_trecv(ep, in, sizeof(in), NULL, self, 7, 0, in), 0);
	cr_assert_eq(fi_tsend(ep, out, 2, NULL, self, 7, out), 0);
	while ((n = fi_poll(ps, ctx, 4)) == 0 && tries++ < 100000)
		;
	cr_assert_eq(n, 1);
	cr_assert_eq(ctx[0], NULL, "the CQ's own context (NULL here)");
	cr_assert_eq(fi_close(&cq->fid), -FI_EBUSY);
	while (fi_cq_read(cq, &e, 1) != -FI_EAGAIN)
		;
	cr_assert_eq(fi_poll(ps, ctx, 4), 0, "a drained CQ is not reported");
	cr_assert_eq(fi_cntr_add(cntr, 1), 0);
	cr_assert_eq(fi_poll(ps, ctx, 4), 1);
	cr_assert_eq(ctx[0], &marker);
	cr_assert_eq(fi_poll(ps, ctx, 4), 0, "a counter is reported once per change");
	cr_assert_eq(fi_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(fi_poll_del(ps, &cq->fid, 0), -FI_ENOENT);
	cr_assert_eq(fi_close(&ps->fid), 0);
	cr_assert_eq(fi_close(&cntr->fid), 0);
}

/* FI_GETWAIT on a FI_WAIT_UNSPEC CQ: a descriptor that fi_trywait lets the
 * caller sleep on, readable once a send to ourselves arrives. */
Test(ep, trywait_and_descriptor)
{
	struct fid_fabric *fab = fabric;
	struct fid *fids[1] = { &cq->fid };
	struct fi_cq_tagged_entry e;
	char out[8] = "x", in[8];
	struct pollfd p = { .events = POLLIN };
	int fd = -1;

	cr_assert_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	cr_assert(fd >= 0);
	cr_assert_eq(fi_trywait(fab, fids, 1), 0, "nothing to do: sleeping is safe");
	p.fd = fd;
	cr_assert_eq(poll(&p, 1, 0), 0, "not readable with nothing there");
	cr_assert_eq(fi_trecv(ep, in, sizeof(in), NULL, self, 9, 0, in), 0);
	cr_assert_eq(fi_tsend(ep, out, 2, NULL, self, 9, out), 0);
	cr_assert_eq(fi_trywait(fab, fids, 1), -FI_EAGAIN, "completions to read first");
	while (fi_cq_read(cq, &e, 1) != -FI_EAGAIN)
		;
	cr_assert_eq(fi_trywait(fab, fids, 1), 0);
	cr_assert_eq(fi_trywait(fab, NULL, 1), -FI_EINVAL);
}

/* EQs wait the way CQs do: FI_WAIT_FD gives a descriptor readable exactly
 * while events are queued; in a wait set, fi_wait returns for an event
 * written from another thread, and fi_trywait refuses while one waits. */
static void *write_later(void *arg)
{
	struct fid_eq *eq = arg;
	uint64_t v = 42;

	usleep(50000);
	fi_eq_write(eq, FI_NOTIFY, &v, sizeof(v), 0);
	return NULL;
}

Test(ep, eq_descriptor_and_wait_set)
{
	struct fi_eq_attr fa = { .size = 8, .wait_obj = FI_WAIT_FD };
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_FD };
	struct fid_eq *eq, *seq;
	struct fid_wait *ws;
	struct fid *fids[1];
	struct pollfd p = { .events = POLLIN };
	uint64_t v = 7, got = 0;
	uint32_t event;
	pthread_t t;
	int fd = -1;

	cr_assert_eq(fi_eq_open(fabric, &fa, &eq, NULL), 0);
	cr_assert_eq(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
	p.fd = fd;
	fids[0] = &eq->fid;
	cr_assert_eq(poll(&p, 1, 0), 0, "readable with nothing queued");
	cr_assert_eq(fi_trywait(fabric, fids, 1), 0);
	cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &v, sizeof(v), 0), sizeof(v));
	cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &v, sizeof(v), 0), sizeof(v));
	cr_assert_eq(poll(&p, 1, 0), 1);
	cr_assert_eq(fi_trywait(fabric, fids, 1), -FI_EAGAIN, "events to read first");
	cr_assert_eq(fi_eq_read(eq, &event, &got, sizeof(got), 0), sizeof(got));
	cr_assert_eq(poll(&p, 1, 0), 1, "one event still queued");
	cr_assert_eq(fi_eq_read(eq, &event, &got, sizeof(got), 0), sizeof(got));
	cr_assert_eq(poll(&p, 1, 0), 0, "drained");
	cr_assert_eq(fi_close(&eq->fid), 0);

	cr_assert_eq(fi_wait_open(fabric, &wa, &ws), 0);
	fa.wait_obj = FI_WAIT_SET;
	cr_assert_eq(fi_eq_open(fabric, &fa, &seq, NULL), -FI_EINVAL, "no wait set named");
	fa.wait_set = ws;
	cr_assert_eq(fi_eq_open(fabric, &fa, &seq, NULL), 0);
	cr_assert_eq(fi_control(&seq->fid, FI_GETWAIT, &fd), -FI_ENODATA, "ask the set");
	cr_assert_eq(fi_wait(ws, 0), -FI_ETIMEDOUT);
	cr_assert_eq(pthread_create(&t, NULL, write_later, seq), 0);
	cr_assert_eq(fi_wait(ws, 5000), 0);
	pthread_join(t, NULL);
	cr_assert_eq(fi_eq_read(seq, &event, &got, sizeof(got), 0), sizeof(got));
	cr_assert_eq(event, FI_NOTIFY);
	cr_assert_eq(got, 42);
	cr_assert_eq(fi_close(&ws->fid), -FI_EBUSY, "the EQ is still in it");
	cr_assert_eq(fi_close(&seq->fid), 0);
	cr_assert_eq(fi_close(&ws->fid), 0);
}
