/*
 * A ping-pong over one libfabric connection (FI_EP_MSG, the `tcp` core
 * provider by default), in either of two ways a message library could move
 * its messages over it:
 *   send   fi_send into a receive posted ahead, found by reading the CQ:
 *          how matchbox's connections carry frames today. libfabric 1.17's
 *          tcp writes a wake-up signal to itself for every completion it
 *          reports and reads it back on the next poll.
 *   write  fi_write into a ring of slots the peer registered, each slot's
 *          last 8 bytes a sequence number the receiver polls in memory
 *          while it reads the CQ only to drive the provider. A write
 *          without CQ data completes nothing at its target, so no signal
 *          there; at its source only every 16th write asks for a completion
 *          (they complete in order), which frees the slots before it.
 * TCP delivers a write's bytes in order and the provider's receive has
 * returned before the receiver looks, so a slot whose number has arrived
 * is whole. bench/net_floor.sh sets both beside the socket, matchbox and
 * the MPI libraries on the same hosts.
 *
 * usage: ringpp [-m send|write] [-S bytes] [-I iterations] [-p port]
 *               [-P provider] [host]
 * Without a host it waits for one connection; with one it connects and,
 * after 10% warm-up iterations, prints "bytes one-way-microseconds".
 */
#define _POSIX_C_SOURCE 200809L
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SLOTS = 64, SIGNAL_EVERY = 16 };
#define CTX_SEND ((void *)1)
#define CTX_WRITE ((void *)2)
#define CTX_SETUP ((void *)3)

struct pp {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *smr, *rmr;
	char *sbuf, *rbuf;	/* SLOTS slots each */
	size_t len, slot;
	uint64_t rkey, raddr;	/* the peer's ring */
	uint64_t out, in;	/* messages written, messages arrived */
	uint64_t asked, done;	/* write completions asked for, read */
	int posted;		/* receives posted (send mode) */
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "ringpp: %s: %s\n", what, fi_strerror(ret < 0 ? -ret : ret));
	exit(1);
}

/* One CQ read; returns how many receives completed (their contexts are
 * slot numbers from 16 on). */
static int reap(struct pp *p)
{
	struct fi_cq_entry e[8];
	ssize_t n = fi_cq_read(p->cq, e, 8);
	int recvs = 0;

	if (n == -FI_EAGAIN)
		return 0;
	if (n < 0) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(p->cq, &err, 0);
		die("completion", err.err);
	}
	for (ssize_t i = 0; i < n; i++) {
		if (e[i].op_context == CTX_WRITE) {
			p->done++;
		} else if ((uintptr_t)e[i].op_context >= 16) {
			size_t s = (uintptr_t)e[i].op_context - 16;
			int ret = (int)fi_recv(p->ep, p->rbuf + s * p->slot, p->len, NULL, 0,
					       e[i].op_context);

			if (ret)
				die("fi_recv", ret);
			recvs++;
		}
	}
	return recvs;
}

static void send_one(struct pp *p)
{
	struct iovec iov = { p->sbuf, p->len };
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1, .context = CTX_SEND };
	int ret;

	while ((ret = (int)fi_sendmsg(p->ep, &m, FI_COMPLETION)) == -FI_EAGAIN)
		reap(p);
	if (ret)
		die("fi_sendmsg", ret);
}

static void recv_one(struct pp *p)
{
	while (!reap(p))
		;
}

static void write_one(struct pp *p)
{
	size_t s = (size_t)(p->out % SLOTS);
	char *src = p->sbuf + s * p->slot;
	uint64_t seq = ++p->out, flags = seq % SIGNAL_EVERY ? 0 : FI_COMPLETION;
	struct iovec iov = { src, p->len + 8 };
	void *desc = fi_mr_desc(p->smr);
	struct fi_rma_iov rma = { p->raddr + s * p->slot, p->len + 8, p->rkey };
	struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
				.rma_iov = &rma, .rma_iov_count = 1, .context = CTX_WRITE };
	int ret;

	/* A slot's source is rewritten only once the completion asked after
	 * it has come back: at most SLOTS - SIGNAL_EVERY writes unconfirmed. */
	while (p->asked - p->done >= SLOTS / SIGNAL_EVERY - 1)
		reap(p);
	memcpy(src + p->len, &seq, sizeof(seq));
	while ((ret = (int)fi_writemsg(p->ep, &m, flags)) == -FI_EAGAIN)
		reap(p);
	if (ret)
		die("fi_writemsg", ret);
	p->asked += flags != 0;
}

/* A ping-pong has one message in flight, so the sender never laps a slot
 * the receiver has yet to read. */
static void poll_one(struct pp *p)
{
	const volatile uint64_t *seq =
		(const volatile uint64_t *)(p->rbuf + (p->in % SLOTS) * p->slot + p->len);

	while (*seq != p->in + 1)
		reap(p);
	p->in++;
}

/* Connects (client) or accepts one connection (server); registers both
 * rings and trades the receiving ring's key and address. */
static void setup(struct pp *p, const char *prov, const char *host, const char *port)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT, .size = 1024 };
	struct fi_eq_cm_entry cm;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_pep *pep;
	struct fid_eq *eq;
	uint64_t mine[2], theirs[2];
	uint32_t event;
	size_t bytes = SLOTS * p->slot;
	int ret;

	if (!hints)
		die("fi_allocinfo", FI_ENOMEM);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA | FI_WRITE | FI_REMOTE_WRITE;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 17), host, port, host ? 0 : FI_SOURCE, hints, &info);
	if (ret)
		die("fi_getinfo", ret);
	if ((ret = fi_fabric(info->fabric_attr, &fab, NULL)) ||
	    (ret = fi_eq_open(fab, &eq_attr, &eq, NULL)))
		die("fabric", ret);
	if (!host) {
		if ((ret = fi_passive_ep(fab, info, &pep, NULL)) ||
		    (ret = fi_pep_bind(pep, &eq->fid, 0)) || (ret = fi_listen(pep)))
			die("listen", ret);
		if (fi_eq_sread(eq, &event, &cm, sizeof(cm), -1, 0) < 0 || event != FI_CONNREQ)
			die("connection request", FI_ECONNABORTED);
		fi_freeinfo(info);
		info = cm.info;
	}
	if ((ret = fi_domain(fab, info, &dom, NULL)) ||
	    (ret = fi_cq_open(dom, &cq_attr, &p->cq, NULL)) ||
	    (ret = fi_endpoint(dom, info, &p->ep, NULL)) ||
	    (ret = fi_ep_bind(p->ep, &eq->fid, 0)) ||
	    (ret = fi_ep_bind(p->ep, &p->cq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) ||
	    (ret = fi_ep_bind(p->ep, &p->cq->fid, FI_RECV)) || (ret = fi_enable(p->ep)))
		die("endpoint", ret);
	p->sbuf = aligned_alloc(4096, bytes);
	p->rbuf = aligned_alloc(4096, bytes);
	if (!p->sbuf || !p->rbuf)
		die("buffers", FI_ENOMEM);
	memset(p->sbuf, 'm', bytes);
	memset(p->rbuf, 0, bytes);
	/* Keys 1 and 2 where the provider does not choose them. */
	if ((ret = fi_mr_reg(dom, p->sbuf, bytes, FI_SEND | FI_WRITE, 0, 1, 0, &p->smr, NULL)) ||
	    (ret = fi_mr_reg(dom, p->rbuf, bytes, FI_RECV | FI_REMOTE_WRITE, 0, 2, 0, &p->rmr,
			     NULL)))
		die("fi_mr_reg", ret);
	ret = host ? fi_connect(p->ep, info->dest_addr, NULL, 0) : fi_accept(p->ep, NULL, 0);
	if (ret)
		die("connect", ret);
	if (fi_eq_sread(eq, &event, &cm, sizeof(cm), -1, 0) < 0 || event != FI_CONNECTED)
		die("connection", FI_ECONNREFUSED);
	mine[0] = fi_mr_key(p->rmr);
	mine[1] = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)p->rbuf : 0;
	if ((ret = (int)fi_recv(p->ep, theirs, sizeof(theirs), NULL, 0, CTX_SETUP)))
		die("fi_recv", ret);
	{
		struct iovec iov = { mine, sizeof(mine) };
		struct fi_msg m = { .msg_iov = &iov, .iov_count = 1, .context = CTX_SETUP };

		if ((ret = (int)fi_sendmsg(p->ep, &m, FI_COMPLETION)))
			die("fi_sendmsg", ret);
	}
	for (int left = 2; left > 0;) {
		struct fi_cq_entry e;
		ssize_t n = fi_cq_read(p->cq, &e, 1);

		if (n > 0)
			left--;
		else if (n != -FI_EAGAIN)
			die("setup completion", (int)n);
	}
	p->rkey = theirs[0];
	p->raddr = theirs[1];
	for (size_t s = 0; s < SLOTS; s++)
		if ((ret = (int)fi_recv(p->ep, p->rbuf + s * p->slot, p->len, NULL, 0,
					(void *)(uintptr_t)(16 + s))))
			die("fi_recv", ret);
	fi_freeinfo(hints);
}

int main(int argc, char **argv)
{
	const char *prov = "tcp", *port = "47593", *host = NULL;
	struct pp p = { .len = 4096 };
	int iters = 10000, write = 0, opt;
	double t0 = 0;

	while ((opt = getopt(argc, argv, "m:S:I:p:P:")) != -1) {
		switch (opt) {
		case 'm': write = !strcmp(optarg, "write"); break;
		case 'S': p.len = strtoul(optarg, NULL, 0); break;
		case 'I': iters = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'P': prov = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-m send|write] [-S bytes] [-I iterations] "
				"[-p port] [-P provider] [host]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (iters < 10)
		iters = 10;
	p.slot = (p.len + 8 + 63) & ~(size_t)63;
	setup(&p, prov, host, port);
	for (int i = -iters / 10; i < iters; i++) {
		if (!i)
			t0 = now_us();
		if (host) {
			write ? write_one(&p) : send_one(&p);
			write ? poll_one(&p) : recv_one(&p);
		} else {
			write ? poll_one(&p) : recv_one(&p);
			write ? write_one(&p) : send_one(&p);
		}
	}
	if (host)
		printf("%zu %.2f\n", p.len, (now_us() - t0) / (double)iters / 2);
	/* Linger so that the last message is read before the connection goes. */
	sleep(1);
	return 0;
}
