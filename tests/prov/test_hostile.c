/* Bytes from the wire are checked before anything trusts them. This test
 * speaks the net wire's connection protocol itself, over libfabric's tcp,
 * to an endpoint in the same process: a connection request of junk, then a
 * well-formed one from an endpoint that does not exist, and on the
 * connection that gets, frames no peer would send (another peer's id, a
 * wrong magic, a length that lies, a batch of garbage, credits it never
 * had). Each must be refused and counted in bad_frames, none may reach the
 * matcher or the CQ, and the endpoint must go on working. The same holds
 * for frames the forger writes into the connection ring the endpoint
 * offers it: a garbage batch, a wrong magic, a kind of frame that has no
 * business there, and a frame whose trailer is not yet due. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_matchbox.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "mbx_netwire.h"
#include "node.h"

/* A connection of libfabric's tcp, as a peer's net wire opens one. */
struct forger {
	struct fi_info *fi;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_ep *ep;
};

/* The victim's address, from its name: "mbx://" and the seven fields of
 * struct mbx_addr, 8 hex digits each. */
static struct mbx_addr addr_of(const struct node *n)
{
	struct mbx_addr a;

	cr_assert_eq(sscanf(n->name + 6, "%8x%8x%8x%8x%8x%8x%8x", &a.host, &a.uid,
			    (unsigned *)&a.pid, &a.ep, &a.job, &a.ip, &a.ports), 7, "name %s", n->name);
	return a;
}

static uint64_t bad_frames(struct node *n)
{
	struct fi_matchbox_net_stats st;
	size_t len = sizeof(st);

	cr_assert_eq(fi_getopt(&n->ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &st, &len),
		     0);
	return st.bad_frames;
}

/* The victim's progress: nothing it reads may be a completion. */
static void pump(struct node *v)
{
	struct fi_cq_tagged_entry e;

	cr_assert_eq(fi_cq_read(v->cq, &e, 1), -FI_EAGAIN, "a forged frame reached the CQ");
}

/* Opens a tcp endpoint toward the victim's connection port and sends the
 * request with `param`; returns the event the forger got (FI_CONNECTED, or
 * 0 for a rejection), with the acceptance's data in `acc`. */
static uint32_t forge_connect_buf(struct forger *f, struct node *v, const void *param,
				  size_t len, struct cm_accept *acc, void *rbuf, size_t rlen)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_MSG };
	char host[INET_ADDRSTRLEN], port[8];
	struct mbx_addr va = addr_of(v);
	struct in_addr ia = { htonl(va.ip) };
	struct {
		struct fi_eq_cm_entry e;
		uint8_t data[64];
	} ev;
	uint32_t event = 0;
	double end;

	inet_ntop(AF_INET, &ia, host, sizeof(host));
	snprintf(port, sizeof(port), "%u", va.ports & 0xffff);
	h->fabric_attr->prov_name = strdup("tcp");
	h->ep_attr->type = FI_EP_MSG;
	h->caps = rbuf ? FI_MSG | FI_RMA | FI_WRITE : FI_MSG;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), host, port, 0, h, &f->fi), 0);
	fi_freeinfo(h);
	cr_assert_eq(fi_fabric(f->fi->fabric_attr, &f->fabric, NULL), 0);
	cr_assert_eq(fi_domain(f->fabric, f->fi, &f->domain, NULL), 0);
	cr_assert_eq(fi_eq_open(f->fabric, &ea, &f->eq, NULL), 0);
	cr_assert_eq(fi_cq_open(f->domain, &ca, &f->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(f->domain, f->fi, &f->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(f->ep, &f->eq->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(f->ep), 0);
	if (rbuf)
		cr_assert_eq(fi_recv(f->ep, rbuf, rlen, NULL, 0, rbuf), 0);
	cr_assert_eq(fi_connect(f->ep, f->fi->dest_addr, param, len), 0);
	for (end = now() + 10; now() < end;) {
		ssize_t r;

		pump(v);
		r = fi_eq_read(f->eq, &event, &ev, sizeof(ev), 0);
		if (r >= (ssize_t)sizeof(ev.e)) {
			if (event == FI_CONNECTED && acc && r >= (ssize_t)(sizeof(ev.e) + sizeof(*acc)))
				memcpy(acc, ev.e.data, sizeof(*acc));
			return event;
		}
		if (r == -FI_EAVAIL) {
			struct fi_eq_err_entry err = { 0 };

			fi_eq_readerr(f->eq, &err, 0);
			return 0;
		}
	}
	cr_assert_fail("no answer to the connection request");
	return 0;
}

static uint32_t forge_connect(struct forger *f, struct node *v, const void *param, size_t len,
			      struct cm_accept *acc)
{
	return forge_connect_buf(f, v, param, len, acc, NULL, 0);
}

static void forge_close(struct forger *f)
{
	fi_close(&f->ep->fid);
	fi_close(&f->cq->fid);
	fi_close(&f->eq->fid);
	fi_close(&f->domain->fid);
	fi_close(&f->fabric->fid);
	fi_freeinfo(f->fi);
}

/* The forger's next completion, the victim's progress meanwhile. */
static void forge_wait(struct forger *f, struct node *v, const char *what)
{
	struct fi_cq_msg_entry e;
	double end = now() + 5;
	ssize_t r;

	while ((r = fi_cq_read(f->cq, &e, 1)) == -FI_EAGAIN && now() < end)
		pump(v);
	cr_assert_eq(r, 1, "%s", what);
}

static void forge_send(struct forger *f, struct node *v, const void *buf, size_t len)
{
	cr_assert_eq(fi_send(f->ep, buf, len, NULL, 0, NULL), 0);
	forge_wait(f, v, "the forged frame was not sent");
}

/* The victim's progress for a while, and its count of refused frames. */
static uint64_t settle(struct node *v, double secs)
{
	for (double end = now() + secs; now() < end;)
		pump(v);
	return bad_frames(v);
}

/* A well-formed request from an endpoint of the same job on another
 * host, which does not exist (its ports answer nothing). */
static void ghost_request(struct cm_param *prm, const struct mbx_addr *va)
{
	memset(prm, 0, sizeof(*prm));
	prm->magic = NET_MAGIC;
	prm->dst_ep = va->ep;
	prm->dst_pid = va->pid;
	prm->src = *va;
	prm->src.host ^= 0x5a5a5a5au;
	prm->src.pid = va->pid + 1;
	prm->src.ep = 77;
	prm->src.ports = 9u << 16 | 9u;
	prm->id = 12345;
	prm->cls = CL_HI;
	put24(prm->buf[CL_HI], net_buf_hi(65536));
	put24(prm->buf[CL_LO], net_buf_lo(65536));
}

/* The victim endpoint, and the forger's well-formed request to it; the
 * test is skipped where there is no net wire. */
static void victim(struct node *v, struct cm_param *prm)
{
	struct mbx_addr va;

	open_node(v);
	va = addr_of(v);
	if (!va.ip)
		cr_skip_test("no IPv4 interface: no net wire");
	ghost_request(prm, &va);
}

static void credit_frame(struct nhdr *h, uint32_t peer)
{
	memset(h, 0, CHDR);
	h->magic = NET_MAGIC;
	h->version = NET_VERSION;
	h->type = NT_CREDIT;
	h->chan = CH_CONN;
	h->len = CHDR;
	h->peer = peer;
}

Test(hostile, junk_request_is_refused)
{
	struct node v;
	struct mbx_addr va;
	struct forger f;
	static const char junk[] = "not a matchbox request";
	uint64_t before;

	open_node(&v);
	va = addr_of(&v);
	if (!va.ip)
		cr_skip_test("no IPv4 interface: no net wire");
	before = bad_frames(&v);
	cr_assert_eq(forge_connect(&f, &v, junk, sizeof(junk), NULL), 0,
		     "a junk request was accepted");
	cr_assert_eq(settle(&v, 0.1), before + 1);
	forge_close(&f);
	close_node(&v);
}

Test(hostile, forged_frames_are_refused)
{
	struct node v, w;
	struct forger f;
	struct cm_param prm;
	struct cm_accept acc = { 0, 0 };
	uint64_t before, tag = 7, got = 0, sent = 0x6d6278;
	struct {
		struct nhdr h;
		uint8_t body[64];
	} fr;
	struct fi_cq_tagged_entry e;
	fi_addr_t to;

	victim(&v, &prm);
	before = bad_frames(&v);
	cr_assert_eq(forge_connect(&f, &v, &prm, sizeof(prm), &acc), FI_CONNECTED);
	cr_assert_eq(acc.magic, NET_MAGIC);
	cr_assert_neq(acc.id, 0u);
	cr_assert_eq(settle(&v, 0.1), before, "the well-formed request counted as bad");

	/* Another peer's id: never given, or given to someone else. */
	credit_frame(&fr.h, acc.id + 1);
	forge_send(&f, &v, &fr, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 1);
	/* Not ours at all. */
	credit_frame(&fr.h, acc.id);
	fr.h.magic = ~NET_MAGIC;
	forge_send(&f, &v, &fr, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 2);
	/* A length that is not what came. */
	credit_frame(&fr.h, acc.id);
	fr.h.len = CHDR + 8;
	forge_send(&f, &v, &fr, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 3);
	/* DATA whose batch of wire frames is garbage. */
	credit_frame(&fr.h, acc.id);
	fr.h.type = NT_DATA;
	fr.h.len = CHDR + sizeof(fr.body);
	memset(fr.body, 0xff, sizeof(fr.body));
	forge_send(&f, &v, &fr, CHDR + sizeof(fr.body));
	cr_assert_eq(settle(&v, 0.1), before + 4);
	/* Credits it was never owed. */
	credit_frame(&fr.h, acc.id);
	fr.h.credits = 0xffffffffu;
	forge_send(&f, &v, &fr, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 5);
	/* And a frame that is right passes without a count. */
	credit_frame(&fr.h, acc.id);
	forge_send(&f, &v, &fr, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 5);

	/* The endpoint goes on working: a message from a real peer arrives. */
	open_node(&w);
	cr_assert_eq(fi_av_insert(w.av, v.name, 1, &to, 0, NULL), 1);
	cr_assert_eq(fi_trecv(v.ep, &got, sizeof(got), NULL, FI_ADDR_UNSPEC, tag, 0, NULL), 0);
	cr_assert_eq(fi_tinject(w.ep, &sent, sizeof(sent), to, tag), 0);
	for (double end = now() + 5; now() < end;) {
		struct fi_cq_tagged_entry we;
		ssize_t r = fi_cq_read(v.cq, &e, 1);

		(void)fi_cq_read(w.cq, &we, 1);	/* the sender's progress */
		if (r == 1)
			break;
		cr_assert_eq(r, -FI_EAGAIN);
	}
	cr_assert_eq(got, sent);
	close_node(&w);
	forge_close(&f);
	close_node(&v);
}

/* One forged frame written into the victim's ring at `off`, tagged as its
 * frame number `seq`: the header `h` of `len` bytes, then the trailer.
 * Returns where the next frame goes. */
static uint64_t ring_forge(struct forger *f, struct node *v, const struct ring_tell *t,
			   uint64_t off, uint64_t seq, const struct nhdr *h, uint32_t len)
{
	static unsigned char buf[512];
	uint64_t at = RING_ALIGN(len);

	cr_assert_leq(at + RING_TRAILER, sizeof(buf));
	memset(buf, 0, sizeof(buf));
	memcpy(buf, h, len);
	*(uint64_t *)(buf + at) = t->nonce ^ seq;
	cr_assert_eq(fi_write(f->ep, buf, at + RING_TRAILER, NULL, 0, t->base + off, t->key, NULL),
		     0);
	forge_wait(f, v, "the forged ring frame was not written");
	return off + at + RING_TRAILER;
}

Test(hostile, forged_ring_frames_are_refused)
{
	struct node v;
	struct forger f;
	struct cm_param prm;
	struct cm_accept acc = { 0, 0 };
	struct fi_matchbox_net_stats st;
	size_t sl = sizeof(st);
	struct {
		struct nhdr h;
		uint8_t body[64];
	} fr;
	_Alignas(8) unsigned char told[256];
	const struct nhdr *th = (const struct nhdr *)told;
	struct ring_tell t;
	uint64_t before, off;

	victim(&v, &prm);
	before = bad_frames(&v);
	cr_assert_eq(forge_connect_buf(&f, &v, &prm, sizeof(prm), &acc, told, sizeof(told)),
		     FI_CONNECTED);
	/* The connection's first frame from the victim offers its ring. */
	forge_wait(&f, &v, "no frame from the victim");
	cr_assert_eq(th->magic, NET_MAGIC);
	cr_assert_eq(th->type, NT_RING);
	cr_assert_eq(th->len, CHDR + sizeof(t));
	memcpy(&t, told + CHDR, sizeof(t));
	cr_assert_geq(t.size, 65536u);
	cr_assert_eq(fi_getopt(&v.ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &st, &sl), 0);
	cr_assert_eq(st.rings_open, 1u);

	/* DATA whose batch of wire frames is garbage, properly tagged. */
	credit_frame(&fr.h, acc.id);
	fr.h.type = NT_DATA;
	fr.h.len = CHDR + sizeof(fr.body);
	memset(fr.body, 0xff, sizeof(fr.body));
	off = ring_forge(&f, &v, &t, 0, 0, &fr.h, fr.h.len);
	cr_assert_eq(settle(&v, 0.1), before + 1);
	/* Not ours at all. */
	credit_frame(&fr.h, acc.id);
	fr.h.magic = ~NET_MAGIC;
	off = ring_forge(&f, &v, &t, off, 1, &fr.h, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 2);
	/* Frames other than DATA come by send only. */
	credit_frame(&fr.h, acc.id);
	fr.h.credits = 1;
	off = ring_forge(&f, &v, &t, off, 2, &fr.h, CHDR);
	cr_assert_eq(settle(&v, 0.1), before + 3);
	/* A trailer that is not the next frame's: not taken, nothing counted,
	 * whatever the frame says. */
	credit_frame(&fr.h, acc.id);
	fr.h.type = NT_DATA;
	fr.h.len = CHDR + sizeof(fr.body);
	ring_forge(&f, &v, &t, off, 7, &fr.h, fr.h.len);
	cr_assert_eq(settle(&v, 0.1), before + 3);
	/* An offer of a ring by send whose length lies. */
	credit_frame(&fr.h, acc.id);
	fr.h.type = NT_RING;
	fr.h.len = CHDR + 8;
	forge_send(&f, &v, &fr, CHDR + 8);
	cr_assert_eq(settle(&v, 0.1), before + 4);
	forge_close(&f);
	close_node(&v);
}
