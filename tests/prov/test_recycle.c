/* A receiving endpoint has FI_MATCHBOX_SHM_PEERS slots for senders; slots of
 * senders that close their endpoint, or whose process dies without closing
 * it, must become free again. With 2 slots, six senders in turn (closing
 * normally), then three sender processes killed without closing, must all
 * get their message through. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

static struct fi_info *fi;
static struct fid_fabric *fabric;
static struct fid_domain *domain;

struct end {
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char name[64];
};

static void open_end(struct end *e)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	size_t len = sizeof(e->name);

	cr_assert_eq(fi_av_open(domain, &aa, &e->av, NULL), 0);
	cr_assert_eq(fi_cq_open(domain, &ca, &e->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(domain, fi, &e->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(e->ep, &e->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(e->ep), 0);
	cr_assert_eq(fi_getname(&e->ep->fid, e->name, &len), 0);
}

static void close_end(struct end *e)
{
	cr_assert_eq(fi_close(&e->ep->fid), 0);
	cr_assert_eq(fi_close(&e->cq->fid), 0);
	cr_assert_eq(fi_close(&e->av->fid), 0);
}

static void open_domain(void)
{
	struct fi_info *h = fi_allocinfo();

	h->fabric_attr->prov_name = strdup("matchbox");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi), 0);
	fi_freeinfo(h);
	cr_assert_eq(fi_fabric(fi->fabric_attr, &fabric, NULL), 0);
	cr_assert_eq(fi_domain(fabric, fi, &domain, NULL), 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Receive one tagged message on `r`, progressing `s` too if given. */
static void expect(struct end *r, struct end *s, uint64_t tag)
{
	struct fi_cq_tagged_entry e;
	char buf[16];
	double end = now() + 10;
	ssize_t n;

	cr_assert_eq(fi_trecv(r->ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, tag, 0, buf), 0);
	while ((n = fi_cq_read(r->cq, &e, 1)) == -FI_EAGAIN) {
		if (s)
			fi_cq_read(s->cq, &e, 0);
		cr_assert_lt(now(), end, "message %lu never arrived", (unsigned long)tag);
	}
	cr_assert_eq(n, 1);
	cr_assert_eq(e.tag, tag);
}

Test(recycle, closed_and_dead_senders_free_their_slots, .timeout = 60)
{
	struct end r;
	int k;

	setenv("FI_MATCHBOX_SHM_PEERS", "2", 1);
	open_domain();
	open_end(&r);
	for (k = 0; k < 6; k++) {
		struct end s;
		fi_addr_t dst;
		ssize_t ret;
		double end = now() + 10;

		open_end(&s);
		cr_assert_eq(fi_av_insert(s.av, r.name, 1, &dst, 0, NULL), 1);
		/* The slot of the previous sender frees once r has seen it
		 * close; until then this sender may find none. */
		while ((ret = fi_tsend(s.ep, "hi", 3, NULL, dst, (uint64_t)k, NULL)) != 0) {
			struct fi_cq_tagged_entry e;

			cr_assert_eq(ret, -FI_ENOSPC, "send %d: %zd", k, ret);
			close_end(&s);
			fi_cq_read(r.cq, &e, 0);
			cr_assert_lt(now(), end, "sender %d never got a slot", k);
			open_end(&s);
			cr_assert_eq(fi_av_insert(s.av, r.name, 1, &dst, 0, NULL), 1);
		}
		expect(&r, &s, (uint64_t)k);
		close_end(&s);
	}
	for (k = 0; k < 3; k++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct end s;
			fi_addr_t dst;
			double end = now() + 10;

			open_end(&s);
			if (fi_av_insert(s.av, r.name, 1, &dst, 0, NULL) != 1)
				_exit(1);
			while (fi_tsend(s.ep, "hi", 3, NULL, dst, 100 + (uint64_t)k, NULL)) {
				/* No slot yet: this process's endpoint is fresh, so
				 * retry with a new one later. */
				if (now() > end)
					_exit(2);
				close_end(&s);
				usleep(20000);
				open_end(&s);
				if (fi_av_insert(s.av, r.name, 1, &dst, 0, NULL) != 1)
					_exit(1);
			}
			pause();	/* die without closing */
			_exit(0);
		}
		expect(&r, NULL, 100 + (uint64_t)k);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close_end(&r);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(fi);
}

/* A sender that writes and closes before the receiver ever progresses: its
 * slot is already CLOSED when the receiver first looks, and the message in
 * it must still be delivered (MPI_Finalize does exactly this). */
Test(recycle, message_from_a_sender_closed_before_discovery, .timeout = 60)
{
	struct end r, s;
	fi_addr_t dst;

	unsetenv("FI_MATCHBOX_SHM_PEERS");
	open_domain();
	open_end(&r);
	open_end(&s);
	cr_assert_eq(fi_av_insert(s.av, r.name, 1, &dst, 0, NULL), 1);
	cr_assert_eq(fi_tinject(s.ep, "hi", 3, dst, 77), 0);
	close_end(&s);
	expect(&r, NULL, 77);
	close_end(&r);
}
