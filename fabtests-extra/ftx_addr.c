/* Addressing the way libfabric programs do it, as a client and a server
 * started separately (like libfabric's fabtests):
 *
 *   server: ftx_addr -p PROV [-s SRC] [-P PORT] [-F str|in|in6]
 *   client: ftx_addr -p PROV [-s SRC] [-P PORT] [-F ...] SERVER
 *
 * The server opens two endpoints bound at SRC:PORT and SRC:PORT+1 through
 * fi_getinfo(FI_SOURCE), sharing one AV and one CQ. The client gets the
 * server from fi_getinfo(SERVER, PORT) (dest_addr), opens one endpoint with
 * separate send and receive CQs, inserts dest_addr and, for the second
 * server endpoint, uses fi_av_insertsvc. It sends its own fi_getname (in
 * the chosen format) to both; each server endpoint inserts it and answers.
 * Then AV removal: the client sends -N messages to the second endpoint,
 * removes it while they may still be in flight, checks that a send to the
 * removed fi_addr_t and fi_av_lookup of it fail at once (unless -R), inserts the same
 * address again and sends -N more; the server checks it got every sequence
 * number exactly once. Exit status 0 on success. */
#include <string.h>
#include <unistd.h>

#include "ftx_cs.h"

enum { MSG_NAME = 1, MSG_REPLY, MSG_SEQ, MSG_BYE };
#define NAME_MAX_LEN 128

struct msg {
	uint32_t kind;
	uint32_t ep;		/* reply: which server endpoint */
	uint64_t seq;
	uint32_t namelen;
	char name[NAME_MAX_LEN];
};

static const char *prov = "matchbox", *src, *port = "9233", *dst;
static uint32_t fmt = FI_ADDR_STR;
static int nseq = 64;
static bool probe_removed = true;	/* -R: no send to, or lookup of, a removed address */

static const char *port_plus(int k)
{
	static char buf[2][16];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%d", atoi(port) + k);
	return buf[which];
}

static struct fi_info *hints_new(void)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG;
	h->addr_format = fmt;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	h->fabric_attr->prov_name = strdup(prov);
	return h;
}

/* One completion from `cq` within 10 s; returns its context (NULL for a
 * failed one, with *err set). */
static void *wait_cq(struct fid_cq *cq, int *err)
{
	struct fi_cq_msg_entry e;
	double end = ftx_now() + 10;

	*err = 0;
	while (ftx_now() < end) {
		ssize_t n = fi_cq_read(cq, &e, 1);

		if (n == 1)
			return e.op_context;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry ee = { 0 };

			fi_cq_readerr(cq, &ee, 0);
			*err = ee.err ? ee.err : FI_EOTHER;
			return ee.op_context;
		}
		if (n != -FI_EAGAIN)
			FAIL("fi_cq_read: %s", fi_strerror((int)-n));
	}
	FAIL("no completion within 10 s");
}

static void post_send(struct fid_ep *ep, struct fid_cq *poll, struct msg *m, fi_addr_t to)
{
	ssize_t ret;
	double end = ftx_now() + 10;

	while ((ret = fi_send(ep, m, sizeof(*m), NULL, to, m)) == -FI_EAGAIN && ftx_now() < end) {
		struct fi_cq_msg_entry e;

		(void)fi_cq_read(poll, &e, 0);
	}
	if (ret)
		FAIL("fi_send: %s", fi_strerror((int)-ret));
}

static void server(void)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep[2];
	struct fi_info *info[2];
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct msg *rx = calloc(4, sizeof(*rx)), tx[2];
	char *seen = calloc((size_t)nseq * 2, 1);
	fi_addr_t client[2] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL };
	int done = 0, got = 0, err, k;

	ftx_role = "server";
	for (k = 0; k < 2; k++) {
		struct fi_info *h = hints_new();

		info[k] = ftx_cs_getinfo(h, src, port_plus(k), NULL);
		fi_freeinfo(h);
		if (!info[k]->src_addr)
			FAIL("fi_getinfo(FI_SOURCE) left src_addr unset");
		if (info[k]->addr_format != fmt)
			FAIL("addr_format %u, asked for %u", info[k]->addr_format, fmt);
	}
	CHK(fi_fabric(info[0]->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info[0], &dom, NULL));
	CHK(fi_av_open(dom, &av_attr, &av, NULL));
	CHK(fi_cq_open(dom, &cq_attr, &cq, NULL));
	for (k = 0; k < 2; k++) {
		CHK(fi_endpoint(dom, info[k], &ep[k], NULL));
		CHK(fi_ep_bind(ep[k], &av->fid, 0));
		CHK(fi_ep_bind(ep[k], &cq->fid, FI_TRANSMIT | FI_RECV));
		CHK(fi_enable(ep[k]));
		CHK(fi_recv(ep[k], &rx[2 * k], sizeof(*rx), NULL, FI_ADDR_UNSPEC, &rx[2 * k]));
		CHK(fi_recv(ep[k], &rx[2 * k + 1], sizeof(*rx), NULL, FI_ADDR_UNSPEC,
			    &rx[2 * k + 1]));
	}
	printf("server: listening at %s:%s and :%s\n", src ? src : "*", port, port_plus(1));
	fflush(stdout);
	while (done < 1) {
		struct msg *m;

		/* The first message may take long: the client starts later. */
		for (;;) {
			struct fi_cq_msg_entry e;
			ssize_t n = fi_cq_read(cq, &e, 1);

			if (n == 1) {
				m = e.op_context;
				break;
			}
			if (n != -FI_EAGAIN)
				FAIL("fi_cq_read: %zd", n);
			if (got == 0)
				usleep(100);
		}
		(void)err;
		if (m >= tx && m < tx + 2)
			continue;	/* a send of ours completed */
		k = (int)((m - rx) / 2);
		switch (m->kind) {
		case MSG_NAME:
			if (fi_av_insert(av, m->name, 1, &client[k], 0, NULL) != 1)
				FAIL("inserting the client's name (format %u)", fmt);
			tx[k] = (struct msg){ .kind = MSG_REPLY, .ep = (uint32_t)k };
			post_send(ep[k], cq, &tx[k], client[k]);
			got++;
			break;
		case MSG_SEQ:
			if (m->seq >= (uint64_t)nseq * 2 || seen[m->seq])
				FAIL("sequence %llu %s", (unsigned long long)m->seq,
				     m->seq >= (uint64_t)nseq * 2 ? "out of range" : "delivered twice");
			seen[m->seq] = 1;
			break;
		case MSG_BYE:
			for (int i = 0; i < nseq * 2; i++)
				if (!seen[i])
					FAIL("sequence %d lost", i);
			done = 1;
			tx[0] = (struct msg){ .kind = MSG_BYE };
			post_send(ep[0], cq, &tx[0], client[0]);
			/* Its completion, before the endpoints go. */
			for (;;) {
				void *c = wait_cq(cq, &err);

				if (c == &tx[0])
					break;
			}
			continue;
		default:
			FAIL("unknown message kind %u", m->kind);
		}
		CHK(fi_recv(ep[k], m, sizeof(*m), NULL, FI_ADDR_UNSPEC, m));
	}
	for (k = 0; k < 2; k++) {
		fi_close(&ep[k]->fid);
		fi_freeinfo(info[k]);
	}
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	free(rx);
	free(seen);
	printf("server: 2 endpoints, %d sequence numbers each once: ok\n", nseq * 2);
}

static void client(void)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *txcq, *rxcq;
	struct fid_ep *ep;
	struct fi_info *h = hints_new(), *info;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct msg name = { .kind = MSG_NAME }, rx[2], *seq = calloc((size_t)nseq * 2, sizeof(*seq));
	fi_addr_t srv[2];
	size_t len = sizeof(name.name);
	char buf[NAME_MAX_LEN];
	int err, k, i, replies = 0;
	void *c;

	ftx_role = "client";
	info = ftx_cs_getinfo(h, src, port, dst);
	if (!info->dest_addr || !info->src_addr)
		FAIL("fi_getinfo(node, service) left dest_addr or src_addr unset");
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info, &dom, NULL));
	CHK(fi_av_open(dom, &av_attr, &av, NULL));
	CHK(fi_cq_open(dom, &cq_attr, &txcq, NULL));
	CHK(fi_cq_open(dom, &cq_attr, &rxcq, NULL));
	CHK(fi_endpoint(dom, info, &ep, NULL));
	CHK(fi_ep_bind(ep, &av->fid, 0));
	CHK(fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT));
	CHK(fi_ep_bind(ep, &rxcq->fid, FI_RECV));
	CHK(fi_enable(ep));
	for (k = 0; k < 2; k++)
		CHK(fi_recv(ep, &rx[k], sizeof(rx[k]), NULL, FI_ADDR_UNSPEC, &rx[k]));
	if (fi_av_insert(av, info->dest_addr, 1, &srv[0], 0, NULL) != 1)
		FAIL("fi_av_insert(dest_addr)");
	if (fi_av_insertsvc(av, dst, port_plus(1), &srv[1], 0, NULL) != 1)
		FAIL("fi_av_insertsvc(%s, %s)", dst, port_plus(1));
	CHK(fi_getname(&ep->fid, name.name, &len));
	name.namelen = (uint32_t)len;
	for (k = 0; k < 2; k++) {
		post_send(ep, txcq, &name, srv[k]);
		c = wait_cq(txcq, &err);
		if (err || c != &name)
			FAIL("name to server endpoint %d: %s", k, fi_strerror(err));
	}
	while (replies < 2) {
		c = wait_cq(rxcq, &err);
		if (err || (c != &rx[0] && c != &rx[1]))
			FAIL("reply: %s", fi_strerror(err));
		if (((struct msg *)c)->kind != MSG_REPLY)
			FAIL("reply of kind %u", ((struct msg *)c)->kind);
		CHK(fi_recv(ep, c, sizeof(rx[0]), NULL, FI_ADDR_UNSPEC, c));
		replies++;
	}
	printf("client: both server endpoints reached and answered (format %u)\n", fmt);

	/* Removal with messages possibly in flight, then the same address
	 * again: every message arrives exactly once. */
	for (i = 0; i < nseq; i++) {
		seq[i] = (struct msg){ .kind = MSG_SEQ, .seq = (uint64_t)i };
		post_send(ep, txcq, &seq[i], srv[1]);
	}
	CHK(fi_av_remove(av, &srv[1], 1, 0));
	{
		struct msg probe = { .kind = MSG_SEQ, .seq = 1u << 30 };
		ssize_t r = probe_removed ? fi_send(ep, &probe, sizeof(probe), NULL, srv[1], &probe)
					  : -FI_EADDRNOTAVAIL;

		if (r == 0) {
			/* A provider may fail it through the CQ instead; it must not
			 * be delivered (the server would fail on its number). */
			for (;;) {
				c = wait_cq(txcq, &err);
				if (c == &probe)
					break;
			}
			if (!err)
				FAIL("a send to a removed address completed without error");
		}
		len = sizeof(buf);
		if (probe_removed && fi_av_lookup(av, srv[1], buf, &len) == 0)
			FAIL("fi_av_lookup of a removed address succeeded");
	}
	for (i = 0; i < nseq; i++) {
		c = wait_cq(txcq, &err);
		if (err)
			FAIL("a send in flight at removal failed: %s", fi_strerror(err));
	}
	if (fi_av_insertsvc(av, dst, port_plus(1), &srv[1], 0, NULL) != 1)
		FAIL("inserting the removed address again");
	for (i = nseq; i < 2 * nseq; i++) {
		seq[i] = (struct msg){ .kind = MSG_SEQ, .seq = (uint64_t)i };
		post_send(ep, txcq, &seq[i], srv[1]);
	}
	for (i = nseq; i < 2 * nseq; i++) {
		c = wait_cq(txcq, &err);
		if (err)
			FAIL("send after re-insert: %s", fi_strerror(err));
	}
	/* Everything to endpoint 1 was taken before BYE goes to endpoint 0:
	 * the server checks the numbers when BYE arrives. */
	usleep(200000);
	name.kind = MSG_BYE;
	post_send(ep, txcq, &name, srv[0]);
	(void)wait_cq(txcq, &err);
	for (;;) {
		c = wait_cq(rxcq, &err);
		if (!err && ((struct msg *)c)->kind == MSG_BYE)
			break;
	}
	fi_close(&ep->fid);
	fi_close(&txcq->fid);
	fi_close(&rxcq->fid);
	fi_close(&av->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(h);
	free(seq);
	printf("client: removal and re-insert with %d messages in flight: ok\n", nseq);
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "p:s:P:F:N:R")) != -1) {
		switch (op) {
		case 'p':
			prov = optarg;
			break;
		case 's':
			src = optarg;
			break;
		case 'P':
			port = optarg;
			break;
		case 'N':
			nseq = atoi(optarg);
			break;
		case 'R':
			probe_removed = false;
			break;
		case 'F':
			fmt = !strcmp(optarg, "in") ? FI_SOCKADDR_IN :
			      !strcmp(optarg, "in6") ? FI_SOCKADDR_IN6 : FI_ADDR_STR;
			break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-s SRC] [-P PORT] [-F str|in|in6] "
				"[-N MSGS] [-R] [SERVER]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		dst = argv[optind];
	if (dst)
		client();
	else
		server();
	return 0;
}
