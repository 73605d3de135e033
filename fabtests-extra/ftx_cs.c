/* The client/server plumbing of ftx_cs.h: fi_getinfo the fabtests way, the
 * objects every program needs, hellos, control messages and a completion
 * loop that keeps control traffic apart from what a program is testing. */
#include "ftx_cs.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

const char *ftx_role = "?";

double ftx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void post_ctl_recv(struct ftx_cs *cs, int i)
{
	cs->ctl_done[i] = false;
	FTX_POST(cs, fi_recv(cs->ep, cs->ctl_rx[i], sizeof(cs->ctl_rx[i]), NULL, FI_ADDR_UNSPEC,
			     cs->ctl_rx[i]));
}

static void dispatch(struct ftx_cs *cs, const struct fi_cq_err_entry *e)
{
	for (int i = 0; i < 2; i++) {
		if (e->op_context == cs->ctl_rx[i]) {
			if (e->err)
				FAIL("control receive: %s", fi_strerror(e->err));
			cs->ctl_done[i] = true;
			return;
		}
	}
	if (!cs->other)
		FAIL("unexpected completion (context %p, flags 0x%llx, err %d)", e->op_context,
		     (unsigned long long)e->flags, e->err);
	cs->other(cs, e);
}

/* 1: *e holds an entry; 0: none yet. */
static int read_one(struct ftx_cs *cs, struct fi_cq_err_entry *e)
{
	struct fi_cq_data_entry d;
	ssize_t n = fi_cq_read(cs->cq, &d, 1);

	if (n == 1) {
		memset(e, 0, sizeof(*e));
		e->op_context = d.op_context;
		e->flags = d.flags;
		e->len = d.len;
		e->buf = d.buf;
		e->data = d.data;
		return 1;
	}
	if (n == -FI_EAVAIL) {
		memset(e, 0, sizeof(*e));
		if (fi_cq_readerr(cs->cq, e, 0) != 1)
			FAIL("fi_cq_readerr after -FI_EAVAIL");
		if (!e->err)
			e->err = FI_EOTHER;	/* an error entry must say it failed */
		return 1;
	}
	if (n != -FI_EAGAIN)
		FAIL("fi_cq_read: %s", fi_strerror((int)-n));
	return 0;
}

void ftx_cs_next(struct ftx_cs *cs, struct fi_cq_err_entry *e)
{
	double end = ftx_now() + 10;

	while (ftx_now() < end)
		if (read_one(cs, e))
			return;
	FAIL("no completion within 10 s");
}

void ftx_cs_poll(struct ftx_cs *cs)
{
	struct fi_cq_err_entry e;

	while (read_one(cs, &e))
		dispatch(cs, &e);
}

int ftx_cs_wait(struct ftx_cs *cs, void *ctx, struct fi_cq_err_entry *out)
{
	struct fi_cq_err_entry e;

	for (;;) {
		ftx_cs_next(cs, &e);
		if (e.op_context == ctx && ctx) {
			if (out)
				*out = e;
			return e.err;
		}
		dispatch(cs, &e);
	}
}

void ftx_cs_send(struct ftx_cs *cs, const void *buf, size_t len)
{
	int err;

	if (len > sizeof(cs->ctl_tx))
		FAIL("control message of %zu bytes", len);
	memcpy(cs->ctl_tx, buf, len);
	FTX_POST(cs, fi_send(cs->ep, cs->ctl_tx, len, NULL, cs->peer, cs->ctl_tx));
	err = ftx_cs_wait(cs, cs->ctl_tx, NULL);
	if (err)
		FAIL("control send: %s", fi_strerror(err));
}

/* The first message may take a while: the client starts after the server. */
static void recv_within(struct ftx_cs *cs, void *buf, size_t len, double secs)
{
	struct fi_cq_err_entry e;
	double end = ftx_now() + secs;
	int i = cs->ctl_next;

	while (!cs->ctl_done[i]) {
		if (ftx_now() > end)
			FAIL("no control message within %.0f s", secs);
		if (read_one(cs, &e))
			dispatch(cs, &e);
	}
	memcpy(buf, cs->ctl_rx[i], len);
	cs->ctl_next ^= 1;
	post_ctl_recv(cs, i);
}

void ftx_cs_recv(struct ftx_cs *cs, void *buf, size_t len)
{
	recv_within(cs, buf, len, 10);
}

struct fi_info *ftx_cs_getinfo(struct fi_info *hints, const char *src, const char *port,
			       const char *dst)
{
	struct fi_info *info;

	if (!dst) {
		CHK(fi_getinfo(FI_VERSION(1, 17), src, port, FI_SOURCE, hints, &info));
		return info;
	}
	if (src) {
		struct fi_info *s;

		/* As fabtests do: the source from fi_getinfo(FI_SOURCE). */
		CHK(fi_getinfo(FI_VERSION(1, 17), src, NULL, FI_SOURCE, hints, &s));
		hints->src_addr = malloc(s->src_addrlen);
		memcpy(hints->src_addr, s->src_addr, s->src_addrlen);
		hints->src_addrlen = s->src_addrlen;
		hints->addr_format = s->addr_format;
		fi_freeinfo(s);
	}
	CHK(fi_getinfo(FI_VERSION(1, 17), dst, port, 0, hints, &info));
	return info;
}

struct hello {
	uint32_t len;
	char name[200];
};

void ftx_cs_open(struct ftx_cs *cs, struct fi_info *hints, const char *src, const char *port,
		 const char *dst, void (*before_enable)(struct ftx_cs *cs))
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct hello h = { 0 };
	size_t len = sizeof(h.name);

	cs->server = dst == NULL;
	ftx_role = cs->server ? "server" : "client";
	cs->peer = FI_ADDR_NOTAVAIL;
	cs->ctl_next = 0;
	cs->info = ftx_cs_getinfo(hints, src, port, dst);
	fi_freeinfo(hints);
	CHK(fi_fabric(cs->info->fabric_attr, &cs->fab, NULL));
	CHK(fi_domain(cs->fab, cs->info, &cs->dom, NULL));
	CHK(fi_av_open(cs->dom, &av_attr, &cs->av, NULL));
	if (cs->cq_hook)
		cs->cq_hook(cs, &cq_attr);
	CHK(fi_cq_open(cs->dom, &cq_attr, &cs->cq, NULL));
	CHK(fi_endpoint(cs->dom, cs->info, &cs->ep, NULL));
	CHK(fi_ep_bind(cs->ep, &cs->av->fid, 0));
	CHK(fi_ep_bind(cs->ep, &cs->cq->fid, FI_TRANSMIT | FI_RECV));
	if (before_enable)
		before_enable(cs);
	CHK(fi_enable(cs->ep));
	post_ctl_recv(cs, 0);
	post_ctl_recv(cs, 1);
	if (cs->server) {
		recv_within(cs, &h, sizeof(h), 60);
		if (fi_av_insert(cs->av, h.name, 1, &cs->peer, 0, NULL) != 1)
			FAIL("inserting the client's address");
		ftx_cs_send(cs, &h, sizeof(h.len));
	} else {
		if (fi_av_insert(cs->av, cs->info->dest_addr, 1, &cs->peer, 0, NULL) != 1)
			FAIL("inserting dest_addr");
		CHK(fi_getname(&cs->ep->fid, h.name, &len));
		h.len = (uint32_t)len;
		ftx_cs_send(cs, &h, sizeof(h));
		ftx_cs_recv(cs, &h, sizeof(h.len));
	}
}

void ftx_cs_close(struct ftx_cs *cs)
{
	CHK(fi_close(&cs->ep->fid));
	if (cs->after_ep)
		cs->after_ep(cs);
	CHK(fi_close(&cs->cq->fid));
	CHK(fi_close(&cs->av->fid));
	CHK(fi_close(&cs->dom->fid));
	if (cs->before_fabric)
		cs->before_fabric(cs);
	CHK(fi_close(&cs->fab->fid));
	fi_freeinfo(cs->info);
}
