/* Sleeping until a completion is ready, as an event-driven program does it,
 * client and server started separately (like libfabric's fabtests):
 *
 *   server: ftx_wait -p PROV [-s SRC] [-P PORT] [-W fd|set|yield] [-N MSGS]
 *   client: ftx_wait -p PROV [-s SRC] [-P PORT] [-W ...] [-N MSGS] SERVER
 *
 * The client sends MSGS messages 20 ms apart. The server sleeps for each:
 *  fd:    its CQ and a receive counter have FI_WAIT_FD; it takes both
 *         descriptors with fi_control(FI_GETWAIT) into one epoll set of its
 *         own and sleeps in epoll_wait after fi_trywait says it may;
 *  set:   CQ and counter belong to an FI_WAIT_FD wait set; it sleeps in
 *         fi_wait, and every other time in epoll on the set's descriptor;
 *  yield: the same with an FI_WAIT_YIELD wait set and fi_wait.
 * Each sleep must end with the message there (a sleep of 5 s is a failure:
 * a wake-up was lost), most must really have slept (the gaps are long),
 * and the counter must have counted every message. Exit 0 on success. */
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ftx_cs.h"

enum { MSG_PING = 1, MSG_DONE };

struct msg {
	uint32_t kind, seq, slept;
};

static const char *prov = "matchbox", *src, *port = "9701", *dst, *mode = "fd";
static int nmsg = 20;
static struct fid_wait *wset;
static struct fid_cntr *rxc;
static struct fi_info *hints;

static enum fi_wait_obj obj_of_mode(void)
{
	return !strcmp(mode, "fd") ? FI_WAIT_FD : FI_WAIT_SET;
}

static void cq_hook(struct ftx_cs *cs, struct fi_cq_attr *attr)
{
	if (strcmp(mode, "fd")) {
		struct fi_wait_attr wa = { .wait_obj = !strcmp(mode, "yield") ? FI_WAIT_YIELD :
								 FI_WAIT_FD };

		CHK(fi_wait_open(cs->fab, &wa, &wset));
		attr->wait_set = wset;
	}
	attr->wait_obj = obj_of_mode();
}

static void bind_cntr(struct ftx_cs *cs)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = obj_of_mode(),
				   .wait_set = wset };

	CHK(fi_cntr_open(cs->dom, &ca, &rxc, NULL));
	CHK(fi_ep_bind(cs->ep, &rxc->fid, FI_RECV));
}

static void close_cntr(struct ftx_cs *cs)
{
	(void)cs;
	CHK(fi_close(&rxc->fid));
}

static void close_set(struct ftx_cs *cs)
{
	(void)cs;
	if (wset)
		CHK(fi_close(&wset->fid));
}

/* Sleeps until the next control message may be there; 1 if it slept. */
static int sleep_once(struct ftx_cs *cs, int epfd, int k)
{
	struct fid *fids[2] = { &cs->cq->fid, &rxc->fid };
	struct epoll_event ev[4];
	int ret, n;

	if (wset && (!strcmp(mode, "yield") || k % 2 == 0)) {
		ret = fi_wait(wset, 5000);
		if (ret == -FI_ETIMEDOUT)
			FAIL("fi_wait: nothing within 5 s (a lost wake-up)");
		if (ret)
			FAIL("fi_wait: %s", fi_strerror(-ret));
		return 1;
	}
	ret = fi_trywait(cs->fab, wset ? (struct fid *[]){ &wset->fid } : fids, wset ? 1 : 2);
	if (ret == -FI_EAGAIN)
		return 0;	/* work to do first: read, then try again */
	if (ret)
		FAIL("fi_trywait: %s", fi_strerror(-ret));
	n = epoll_wait(epfd, ev, 4, 5000);
	if (n == 0)
		FAIL("epoll_wait: nothing within 5 s (a lost wake-up)");
	if (n < 0)
		FAIL("epoll_wait failed");
	return 1;
}

static void server(void)
{
	struct ftx_cs cs = { .cq_hook = cq_hook, .after_ep = close_cntr, .before_fabric = close_set };
	struct msg m, done = { .kind = MSG_DONE };
	int epfd = -1, fd, k = 0;

	ftx_cs_open(&cs, hints, src, port, NULL, bind_cntr);
	if (!strcmp(mode, "fd")) {
		struct epoll_event ev = { .events = EPOLLIN };

		epfd = epoll_create1(0);
		CHK(fi_control(&cs.cq->fid, FI_GETWAIT, &fd));
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
			FAIL("epoll_ctl(CQ descriptor %d)", fd);
		CHK(fi_control(&rxc->fid, FI_GETWAIT, &fd));
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
			FAIL("epoll_ctl(counter descriptor %d)", fd);
	} else if (!strcmp(mode, "set")) {
		struct epoll_event ev = { .events = EPOLLIN };

		epfd = epoll_create1(0);
		CHK(fi_control(&wset->fid, FI_GETWAIT, &fd));
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
			FAIL("epoll_ctl(wait set descriptor %d)", fd);
	}
	for (int i = 0; i < nmsg; i++) {
		double end = ftx_now() + 5;

		/* The hello's own completions are read; now nothing is due
		 * until the client's next message, 20 ms away. */
		while (!cs.ctl_done[cs.ctl_next]) {
			if (ftx_now() > end)
				FAIL("message %d: not there after 5 s of waking", i);
			done.slept += (uint32_t)sleep_once(&cs, epfd, k++);
			ftx_cs_poll(&cs);
		}
		ftx_cs_recv(&cs, &m, sizeof(m));
		if (m.kind != MSG_PING || m.seq != (uint32_t)i)
			FAIL("message %d is kind %u seq %u", i, m.kind, m.seq);
	}
	/* The hello and every ping were received. */
	if (fi_cntr_read(rxc) != (uint64_t)nmsg + 1)
		FAIL("receive counter %llu, want %d", (unsigned long long)fi_cntr_read(rxc), nmsg + 1);
	ftx_cs_send(&cs, &done, sizeof(done));
	ftx_cs_recv(&cs, &m, sizeof(m));	/* the client's goodbye */
	if (done.slept < (uint32_t)nmsg / 2)
		FAIL("slept only %u times for %d messages 20 ms apart", done.slept, nmsg);
	ftx_cs_close(&cs);
	if (epfd >= 0)
		close(epfd);
	printf("server (%s): %d messages, slept %u times, none lost: ok\n", mode, nmsg, done.slept);
}

static void client(void)
{
	struct ftx_cs cs = { .cq_hook = cq_hook, .after_ep = close_cntr, .before_fabric = close_set };
	struct msg m = { .kind = MSG_PING };

	ftx_cs_open(&cs, hints, src, port, dst, bind_cntr);
	for (int i = 0; i < nmsg; i++) {
		double until = ftx_now() + 0.02;

		/* Keep progressing while waiting, so acknowledgements flow. */
		while (ftx_now() < until)
			ftx_cs_poll(&cs);
		m.seq = (uint32_t)i;
		ftx_cs_send(&cs, &m, sizeof(m));
	}
	ftx_cs_recv(&cs, &m, sizeof(m));
	if (m.kind != MSG_DONE)
		FAIL("reply of kind %u", m.kind);
	ftx_cs_send(&cs, &m, sizeof(m));
	ftx_cs_close(&cs);
	printf("client: %d messages sent, the server slept %u times: ok\n", nmsg, m.slept);
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "p:s:P:W:N:")) != -1) {
		switch (op) {
		case 'p': prov = optarg; break;
		case 's': src = optarg; break;
		case 'P': port = optarg; break;
		case 'W': mode = optarg; break;
		case 'N': nmsg = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-s SRC] [-P PORT] [-W fd|set|yield] "
				"[-N MSGS] [SERVER]\n", argv[0]);
			return 2;
		}
	}
	if (strcmp(mode, "fd") && strcmp(mode, "set") && strcmp(mode, "yield"))
		FAIL("-W %s: fd, set or yield", mode);
	if (optind < argc)
		dst = argv[optind];
	{
		struct fi_info *h = fi_allocinfo();

		h->ep_attr->type = FI_EP_RDM;
		h->caps = FI_MSG;
		h->fabric_attr->prov_name = strdup(prov);
		hints = h;
	}
	if (dst)
		client();
	else
		server();
	return 0;
}
