/* A peer that dies must turn into error completions, never a hang: a child
 * process opens an endpoint and is killed while the parent has a large send
 * waiting for it (rendezvous) and a queue of small sends that its full ring
 * holds back. Every one of them must complete with an error within a few
 * seconds. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

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

static void open_node_cntr(struct node *n, bool cntr)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	size_t len = sizeof(n->name);

	h->fabric_attr->prov_name = strdup("matchbox");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED;
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

static void open_node(struct node *n)
{
	open_node_cntr(n, false);
}

static void close_node(struct node *n)
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A peer process with an endpoint that never makes progress, so that it
 * holds back what is sent to it, until kill_peer() ends it. */
struct silent_peer {
	pid_t pid;
	int go;
	char name[64];
};

static void spawn_silent_peer(struct silent_peer *sp)
{
	int up[2], go[2];
	char c;

	cr_assert_eq(pipe(up), 0);
	cr_assert_eq(pipe(go), 0);
	sp->pid = fork();
	if (sp->pid == 0) {
		struct node child;

		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlive a failed test */
		open_node(&child);
		if (write(up[1], child.name, sizeof(child.name)) != sizeof(child.name))
			_exit(1);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(up[0], sp->name, sizeof(sp->name)), (ssize_t)sizeof(sp->name));
	close(up[0]);
	close(up[1]);
	close(go[0]);
	sp->go = go[1];
}

static void kill_peer(struct silent_peer *sp)
{
	char c = 0;

	cr_assert_eq(write(sp->go, &c, 1), 1);
	kill(sp->pid, SIGKILL);
	waitpid(sp->pid, NULL, 0);
	close(sp->go);
}

Test(deadpeer, sends_to_a_killed_peer_fail, .timeout = 60)
{
	struct silent_peer sp;
	struct node me;
	fi_addr_t peer;
	char *big = malloc(1 << 20), small[512];
	int small_posted = 0, errors = 0, done = 0;
	double start;

	spawn_silent_peer(&sp);
	open_node(&me);
	cr_assert_eq(fi_av_insert(me.av, sp.name, 1, &peer, 0, NULL), 1);
	memset(big, 1, 1 << 20);
	cr_assert_eq(fi_tsend(me.ep, big, 1 << 20, NULL, peer, 1, big), 0);
	/* Fill the peer's ring and then the provider's send queue. */
	for (;;) {
		ssize_t r = fi_tsend(me.ep, small, sizeof(small), NULL, peer, 2, small);

		if (r == -FI_EAGAIN)
			break;
		cr_assert_eq(r, 0);
		small_posted++;
	}
	cr_assert_gt(small_posted, 100);
	/* Eager sends that reached the ring completed successfully; drain. */
	for (;;) {
		struct fi_cq_tagged_entry e;
		ssize_t r = fi_cq_read(me.cq, &e, 1);

		if (r != 1)
			break;
		done++;
	}
	kill_peer(&sp);
	start = now();
	while (done + errors < small_posted + 1 && now() - start < 10) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err = { 0 };
		ssize_t r = fi_cq_read(me.cq, &e, 1);

		if (r == 1) {
			done++;
		} else if (r == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(me.cq, &err, 0), 1);
			cr_assert_eq(err.err, FI_EHOSTUNREACH, "err %d", err.err);
			errors++;
		} else {
			cr_assert_eq(r, -FI_EAGAIN);
		}
	}
	cr_assert_eq(done + errors, small_posted + 1,
		     "only %d of %d sends completed after the peer died", done + errors,
		     small_posted + 1);
	cr_assert_geq(errors, 1, "the rendezvous send at least must fail");
	cr_assert_lt(now() - start, 5.0, "detection took %.1f s", now() - start);
	/* A new send to the dead peer fails at once. */
	cr_assert_eq(fi_tsend(me.ep, small, 8, NULL, peer, 3, NULL), -FI_EHOSTUNREACH);
	close_node(&me);
	free(big);
}

/* Injected sends carry no context and promise no completion: when the ones
 * a full ring held back fail with their peer, they count on the error
 * counter, and no CQ entry appears that the caller could not place. A send
 * posted with a context still gets its error entry. */
Test(deadpeer, failed_injects_count_without_cq_entries, .timeout = 60)
{
	int injected = 0, errors = 0;
	char small[64] = { 0 };
	struct silent_peer sp;
	struct node me;
	fi_addr_t peer;
	double start;

	spawn_silent_peer(&sp);
	open_node_cntr(&me, true);
	cr_assert_eq(fi_av_insert(me.av, sp.name, 1, &peer, 0, NULL), 1);
	/* Past the ring, injects wait in the provider's queue. */
	for (;;) {
		ssize_t r = fi_tinject(me.ep, small, sizeof(small), peer, 2);

		if (r == -FI_EAGAIN)
			break;
		cr_assert_eq(r, 0);
		cr_assert_lt(++injected, 1000000, "injects never pushed back");
	}
	cr_assert_gt(injected, 100);
	kill_peer(&sp);
	/* Until the failures are counted, then a little longer to see every
	 * entry they might have left. */
	start = now();
	for (double quiet = 0; now() - start < 10 && (!quiet || now() < quiet);) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err = { 0 };
		ssize_t r = fi_cq_read(me.cq, &e, 1);

		cr_assert_neq(r, 1, "an inject produced a completion");
		if (r == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(me.cq, &err, 0), 1);
			cr_assert_not_null(err.op_context, "an error entry without a context");
			errors++;
		}
		if (!quiet && fi_cntr_readerr(me.cntr) > 0)
			quiet = now() + 0.2;
	}
	cr_assert_gt(fi_cntr_readerr(me.cntr), 0, "the held-back injects never failed");
	cr_assert_eq(errors, 0);
	/* A send with a context still reports its failure. */
	cr_assert_eq(fi_tsend(me.ep, small, 8, NULL, peer, 3, small), -FI_EHOSTUNREACH);
	close_node(&me);
}
