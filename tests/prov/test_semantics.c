/* Completion semantics through the public API, on endpoints that send to
 * themselves: counters, selective completion, FI_DELIVERY_COMPLETE (a send
 * completes only once its receive has taken the data), FI_SOURCE, remote CQ
 * data on untagged messages, one address inserted twice, automatic
 * progress, clean-up of segments left by dead processes,
 * and FI_THREAD_SAFE endpoints driven by several threads at once. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

struct self {
	struct fi_info *fi;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cntr *txc, *rxc;
	struct fid_ep *ep;
	fi_addr_t me;
};

static void open_progress(struct self *s, uint64_t cq_flags, bool cntrs, enum fi_threading thr,
			  enum fi_progress progress)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr aa = { .type = FI_AV_MAP };
	struct fi_cntr_attr na = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };
	char name[64];
	size_t len = sizeof(name);

	memset(s, 0, sizeof(*s));
	h->fabric_attr->prov_name = strdup("matchbox");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED | FI_MSG | FI_SOURCE | FI_DIRECTED_RECV;
	h->domain_attr->threading = thr;
	h->domain_attr->data_progress = progress;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &s->fi), 0);
	cr_assert_eq(s->fi->domain_attr->data_progress,
		     progress == FI_PROGRESS_AUTO ? FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL);
	fi_freeinfo(h);
	cr_assert_eq(fi_fabric(s->fi->fabric_attr, &s->fabric, NULL), 0);
	cr_assert_eq(fi_domain(s->fabric, s->fi, &s->domain, NULL), 0);
	cr_assert_eq(fi_av_open(s->domain, &aa, &s->av, NULL), 0);
	cr_assert_eq(fi_cq_open(s->domain, &ca, &s->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(s->domain, s->fi, &s->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV | cq_flags), 0);
	if (cntrs) {
		cr_assert_eq(fi_cntr_open(s->domain, &na, &s->txc, NULL), 0);
		cr_assert_eq(fi_cntr_open(s->domain, &na, &s->rxc, NULL), 0);
		cr_assert_eq(fi_ep_bind(s->ep, &s->txc->fid, FI_SEND), 0);
		cr_assert_eq(fi_ep_bind(s->ep, &s->rxc->fid, FI_RECV), 0);
	}
	cr_assert_eq(fi_enable(s->ep), 0);
	cr_assert_eq(fi_getname(&s->ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(s->av, name, 1, &s->me, 0, NULL), 1);
}

static void open_self(struct self *s, uint64_t cq_flags, bool cntrs, enum fi_threading thr)
{
	open_progress(s, cq_flags, cntrs, thr, FI_PROGRESS_UNSPEC);
}

static void close_self(struct self *s)
{
	cr_assert_eq(fi_close(&s->ep->fid), 0);
	if (s->txc) {
		cr_assert_eq(fi_close(&s->txc->fid), 0);
		cr_assert_eq(fi_close(&s->rxc->fid), 0);
	}
	cr_assert_eq(fi_close(&s->cq->fid), 0);
	cr_assert_eq(fi_close(&s->av->fid), 0);
	cr_assert_eq(fi_close(&s->domain->fid), 0);
	cr_assert_eq(fi_close(&s->fabric->fid), 0);
	fi_freeinfo(s->fi);
}

/* Read completions for a while; returns how many arrived (into e[]). */
static int drain(struct self *s, struct fi_cq_tagged_entry *e, int max, fi_addr_t *src,
		 double secs)
{
	struct timespec a, b;
	int n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		ssize_t r = fi_cq_readfrom(s->cq, &e[n], 1, src ? &src[n] : NULL);

		if (r == 1 && ++n == max)
			return n;
		cr_assert(r == 1 || r == -FI_EAGAIN, "cq read %zd", r);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9 > secs)
			return n;
	}
}

Test(semantics, counters_count_and_wait, .timeout = 30)
{
	struct self s;
	char buf[4][32];

	open_self(&s, 0, true, FI_THREAD_DOMAIN);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(fi_trecv(s.ep, buf[i], 32, NULL, s.me, 9, 0, NULL), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(fi_tsend(s.ep, "x", 2, NULL, s.me, 9, NULL), 0);
	cr_assert_eq(fi_tinject(s.ep, "y", 2, s.me, 9), 0);
	cr_assert_eq(fi_cntr_wait(s.rxc, 4, 2000), 0);
	cr_assert_eq(fi_cntr_read(s.txc), 4, "injects count too");
	cr_assert_eq(fi_cntr_wait(s.rxc, 5, 100), -FI_ETIMEDOUT);
	cr_assert_eq(fi_cntr_readerr(s.rxc), 0);
	cr_assert_eq(fi_cntr_add(s.txc, 10), 0);
	cr_assert_eq(fi_cntr_read(s.txc), 14);
	cr_assert_eq(fi_cntr_set(s.txc, 1), 0);
	cr_assert_eq(fi_cntr_read(s.txc), 1);
	close_self(&s);
}

Test(semantics, selective_completion, .timeout = 30)
{
	struct self s;
	struct fi_cq_tagged_entry e[8];
	struct iovec iov = { "z", 2 };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .tag = 4, .context = &s };
	char buf[3][8];

	open_self(&s, FI_SELECTIVE_COMPLETION, true, FI_THREAD_DOMAIN);
	m.addr = s.me;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(fi_trecv(s.ep, buf[i], 8, NULL, s.me, 4, 0, buf[i]), 0);
	cr_assert_eq(fi_tsend(s.ep, "a", 2, NULL, s.me, 4, NULL), 0);	/* silent */
	cr_assert_eq(fi_tsendmsg(s.ep, &m, FI_COMPLETION), 0);		/* reported */
	cr_assert_eq(fi_tsendmsg(s.ep, &m, 0), 0);			/* silent */
	/* Receives posted with fi_trecv lack FI_COMPLETION: silent as well. */
	cr_assert_eq(drain(&s, e, 8, NULL, 0.3), 1);
	cr_assert_eq(e[0].op_context, &s);
	cr_assert(e[0].flags & FI_SEND);
	cr_assert_eq(fi_cntr_read(s.txc), 3, "counters see every operation");
	cr_assert_eq(fi_cntr_read(s.rxc), 3);
	close_self(&s);
}

Test(semantics, delivery_complete_waits_for_the_receive, .timeout = 30)
{
	struct self s;
	struct fi_cq_tagged_entry e[4];
	char buf[16];
	struct iovec iov = { "deliver", 8 };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .tag = 5, .context = &iov };

	open_self(&s, 0, false, FI_THREAD_DOMAIN);
	m.addr = s.me;
	cr_assert_eq(fi_tsendmsg(s.ep, &m, FI_DELIVERY_COMPLETE), 0);
	cr_assert_eq(drain(&s, e, 4, NULL, 0.2), 0, "completed before any receive was posted");
	cr_assert_eq(fi_trecv(s.ep, buf, sizeof(buf), NULL, s.me, 5, 0, buf), 0);
	cr_assert_eq(drain(&s, e, 2, NULL, 2.0), 2);
	cr_assert_str_eq(buf, "deliver");
	/* Without the flag the same send completes with nobody receiving. */
	cr_assert_eq(fi_tsendmsg(s.ep, &m, FI_COMPLETION), 0);
	cr_assert_eq(drain(&s, e, 1, NULL, 1.0), 1);
	cr_assert_eq(e[0].op_context, &iov);
	cr_assert_eq(fi_trecv(s.ep, buf, sizeof(buf), NULL, s.me, 5, 0, buf), 0);
	cr_assert_eq(drain(&s, e, 1, NULL, 1.0), 1);
	close_self(&s);
}

Test(semantics, source_address_and_cq_data, .timeout = 30)
{
	struct self s;
	struct fi_cq_tagged_entry e[2];
	fi_addr_t src[2] = { 0, 0 };
	char buf[16];

	open_self(&s, 0, false, FI_THREAD_DOMAIN);
	cr_assert_eq(fi_recv(s.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, buf), 0);
	cr_assert_eq(fi_senddata(s.ep, "data", 5, NULL, 0x5eed, s.me, NULL), 0);
	cr_assert_eq(drain(&s, e, 2, src, 2.0), 2);
	for (int i = 0; i < 2; i++) {
		if (e[i].op_context != buf)
			continue;
		cr_assert(e[i].flags & FI_RECV);
		cr_assert(e[i].flags & FI_MSG);
		cr_assert(e[i].flags & FI_REMOTE_CQ_DATA);
		cr_assert_eq(e[i].data, 0x5eed);
		cr_assert_eq(src[i], s.me, "FI_SOURCE must name the sender");
	}
	close_self(&s);
}

/* One peer inserted twice: Open MPI does this for the remote side of an
 * intercommunicator and then posts directed receives on the second fi_addr_t.
 * Both entries must receive what that peer sends, and removing the first must
 * leave the second working. */
Test(semantics, address_inserted_twice, .timeout = 30)
{
	struct fi_cq_tagged_entry e[2];
	fi_addr_t src[2], again, lookup;
	char name[64], buf[16];
	size_t len = sizeof(name);
	struct self s;
	int got = 0;

	open_self(&s, 0, false, FI_THREAD_DOMAIN);
	cr_assert_eq(fi_getname(&s.ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(s.av, name, 1, &again, 0, NULL), 1);
	cr_assert_neq(again, s.me);

	cr_assert_eq(fi_trecv(s.ep, buf, sizeof(buf), NULL, again, 7, 0, buf), 0);
	cr_assert_eq(fi_tsend(s.ep, "one", 4, NULL, s.me, 7, NULL), 0);
	cr_assert_eq(drain(&s, e, 2, src, 2.0), 2, "a directed receive on the copy must match");
	for (int i = 0; i < 2; i++)
		if (e[i].op_context == buf) {
			cr_assert_str_eq(buf, "one");
			cr_assert_eq(src[i], s.me, "reported under the first insert");
			got++;
		}
	cr_assert_eq(got, 1);

	cr_assert_eq(fi_av_remove(s.av, &s.me, 1, 0), 0);
	len = sizeof(name);
	cr_assert_eq(fi_av_lookup(s.av, again, name, &len), 0, "the copy outlives the original");
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(fi_trecv(s.ep, buf, sizeof(buf), NULL, again, 8, 0, buf), 0);
	cr_assert_eq(fi_tsend(s.ep, "two", 4, NULL, again, 8, NULL), 0);
	cr_assert_eq(drain(&s, e, 2, src, 2.0), 2);
	for (int i = 0; i < 2; i++)
		if (e[i].op_context == buf) {
			cr_assert_str_eq(buf, "two");
			cr_assert_eq(src[i], again, "the copy now names the peer");
		}
	lookup = s.me;
	cr_assert_neq(fi_tsend(s.ep, "x", 2, NULL, lookup, 8, NULL), 0, "the removed entry stays dead");
	s.me = again;
	close_self(&s);
}

/* Sends 4 MiB from a to b, whose receive is posted, and polls only a's CQ:
 * the send completes only if b's side moves without b's calls. */
static bool send_completes_unattended(struct self *a, struct self *b, char *src, char *dst,
				      size_t n, double secs)
{
	char name[64];
	size_t len = sizeof(name);
	struct fi_cq_tagged_entry e;
	fi_addr_t to;

	cr_assert_eq(fi_getname(&b->ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(a->av, name, 1, &to, 0, NULL), 1);
	cr_assert_eq(fi_trecv(b->ep, dst, n, NULL, FI_ADDR_UNSPEC, 5, 0, dst), 0);
	cr_assert_eq(fi_tsend(a->ep, src, n, NULL, to, 5, src), 0);
	return drain(a, &e, 1, NULL, secs) == 1 && e.op_context == src;
}

/* FI_PROGRESS_AUTO: the receiver of a large message makes no call at all,
 * and its progress thread still pulls the data, so the sender's send
 * completes. The same with manual progress does not (the control). */
Test(semantics, auto_progress_moves_data_without_calls, .timeout = 120)
{
	const size_t n = 4 << 20;
	char *src = malloc(n), *dst = calloc(1, n);
	struct fi_cq_tagged_entry e;
	struct self a, b;

	cr_assert(src && dst);
	for (size_t i = 0; i < n; i++)
		src[i] = (char)(i * 7 + 1);
	open_self(&a, 0, false, FI_THREAD_DOMAIN);
	open_progress(&b, 0, false, FI_THREAD_DOMAIN, FI_PROGRESS_MANUAL);
	cr_assert_not(send_completes_unattended(&a, &b, src, dst, n, 1.0),
		      "with manual progress the receiver's calls move the data");
	for (int got = 0, tries = 0; got < 2; tries++) {	/* now b calls, and it moves */
		cr_assert(tries < 100000, "the manual transfer never finished");
		got += fi_cq_read(a.cq, &e, 1) == 1;
		got += fi_cq_read(b.cq, &e, 1) == 1;
	}
	close_self(&b);

	memset(dst, 0, n);
	open_progress(&b, 0, false, FI_THREAD_DOMAIN, FI_PROGRESS_AUTO);
	cr_assert(send_completes_unattended(&a, &b, src, dst, n, 30.0),
		  "the progress thread must pull the data");
	/* The data is the receiver's once its completion is read, not when the
	 * send completes (the thread may still be copying the last piece). */
	cr_assert_eq(drain(&b, &e, 1, NULL, 10.0), 1);
	cr_assert_eq(e.op_context, dst);
	cr_assert_eq(e.len, n);
	cr_assert(memcmp(src, dst, n) == 0);
	close_self(&b);	/* while its thread may sleep on the doorbell */
	close_self(&a);
	free(src);
	free(dst);
}

Test(semantics, stale_segments_are_removed, .timeout = 30)
{
	char name[128];
	struct self s;
	pid_t dead;
	int fd;

	/* A pid that cannot be running: fork a child and reap it. */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(name, sizeof(name), "/mbx-%u-%d-0-0", (unsigned)geteuid(), (int)dead);
	fd = shm_open(name, O_CREAT | O_RDWR, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	open_self(&s, 0, false, FI_THREAD_DOMAIN);
	fd = shm_open(name, O_RDWR, 0);
	cr_assert_lt(fd, 0, "the dead process's segment is still there");
	close_self(&s);
}

struct thr_arg {
	struct self *s;
	int id;
	int bad;
};

static void *pingself(void *p)
{
	struct thr_arg *a = p;
	char out[64], in[64];

	for (int i = 0; i < 2000; i++) {
		struct fi_cq_tagged_entry e;
		ssize_t r;

		snprintf(out, sizeof(out), "t%d-%d", a->id, i);
		while ((r = fi_trecv(a->s->ep, in, sizeof(in), NULL, a->s->me,
				     (uint64_t)a->id, 0, in)) == -FI_EAGAIN)
			;
		while ((r = fi_tinject(a->s->ep, out, strlen(out) + 1, a->s->me,
				       (uint64_t)a->id)) == -FI_EAGAIN)
			fi_cq_read(a->s->cq, &e, 0);
		if (r) {
			a->bad++;
			return NULL;
		}
		/* Completions of both threads share the CQ: wait until our
		 * buffer holds our message. */
		for (int spin = 0; strcmp(in, out); spin++) {
			fi_cq_read(a->s->cq, &e, 0);
			if (spin > 50000000) {
				a->bad++;
				return NULL;
			}
		}
		memset(in, 0, sizeof(in));
	}
	return NULL;
}

Test(semantics, thread_safe_endpoint, .timeout = 60)
{
	struct self s;
	pthread_t t[4];
	struct thr_arg a[4];

	open_self(&s, FI_SELECTIVE_COMPLETION, false, FI_THREAD_SAFE);
	for (int i = 0; i < 4; i++) {
		a[i] = (struct thr_arg){ &s, i, 0 };
		pthread_create(&t[i], NULL, pingself, &a[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(a[i].bad, 0, "thread %d failed", i);
	}
	close_self(&s);
}
