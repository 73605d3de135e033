/*
 * The host engine: MPI matching done here, in libmpi, over a provider that
 * only moves bytes (FI_MSG, and FI_RMA where it has it), the way Open MPI's
 * OB1 drives its BTLs. Every message starts with a header frame into one of
 * the receive buffers this engine keeps posted. Small messages travel whole
 * in that frame and are copied out after the match (eager); larger ones send
 * a request-to-send, and after the match the receiver reads the data straight
 * into the user's buffer with fi_read and says so (FIN), or, where either side
 * has no RMA, asks for it (CTS) and the sender streams fragments into the
 * receive buffers. A message to another node a little past the eager limit
 * is pushed instead: a few frames back to back, no rendezvous (he_push).
 * Posted receives and unexpected messages live in the same
 * flat-cost queues as the provider's matcher (util/mbu_match.h), keyed by
 * (source rank, context id and tag). Ordering rests on the provider's
 * send-after-send order and on posting everything in issue order.
 */
#include "mbmpi.h"
#include "mbu_futex.h"
#include "mbu_match.h"
#include "mbu_pool.h"
#include "mbu_rcache.h"
#include "mbu_stripe.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/uio.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

enum { HE_EAGER = 1, HE_RTS, HE_CTS, HE_DATA, HE_FIN, HE_ACK, HE_SHORT, HE_TYPE_END };
#define HE_F_SYNC 1u  /* eager: acknowledge after the match */
#define HE_F_RDMA 2u  /* RTS: raddr/rkey name the data for fi_read */
#define HE_F_STRIPE 4u /* RTS: keys on other rails follow the header (off: which) */
#define HE_F_PUSH 8u   /* EAGER: more of it follows in DATA frames; DATA: that more */
#define HE_MAGIC 0x6d68u

/* On the wire. Everything in it is checked before it is used. */
struct he_hdr {
	uint8_t type, flags;
	uint16_t magic;
	uint32_t ctx;
	uint32_t src;      /* the sender's rank in the communicator's local group */
	int32_t tag;
	uint64_t len;      /* message bytes (EAGER, RTS); fragment bytes (DATA) */
	uint64_t sid;      /* the sender's id for this message (RTS, CTS, FIN, ACK) */
	uint64_t rid;      /* the receiver's id (CTS, DATA) */
	uint64_t raddr, rkey; /* pushed (HE_F_PUSH): rkey is the sender's world rank */
	uint64_t off;      /* DATA: where the fragment goes; striped RTS: rail bits */
};

/* Rails: up to HE_NET_MAX over the net provider, one per domain (NIC), and
 * one for the node. A striped RTS names the data on each other rail that
 * reaches the peer by one of these after its header, in rail order; the
 * header's off has bit i set for rail i's. */
enum { HE_NET_MAX = 4, HE_RAIL_MAX = HE_NET_MAX + 1 };
_Static_assert(HE_RAIL_MAX <= MBU_STRIPE_MAX, "every rail can take a share");
struct he_key {
	uint64_t raddr, rkey;
};

/* The header of a standard-mode eager message: a quarter of the full one,
 * so that a small message and its header share a cache line; its length
 * is the frame's. The receiver reads it as an HE_EAGER header. */
struct he_short {
	uint8_t type, flags;
	uint16_t magic;
	uint32_t ctx;
	uint32_t src;
	int32_t tag;
};
/* Bytes an inject (he_inject) carries after a short header at most. */
#define HE_SHORT_MAX 256

/* Engine operations: the shared fop (context, request, retry link, RMA
 * fields) and what a frame send needs besides. */
enum { HE_OP_FRAME = 100, HE_OP_RXBUF, HE_OP_READ };
struct he_rail;
struct he_op {
	struct mbmpi_fop f;
	struct he_rail *rl;	/* the endpoint it goes to; f.addr is that endpoint's */
	struct he_hdr hdr;	/* the first hlen bytes go */
	size_t hlen;
	const void *payload;
	size_t plen;
	struct he_rdv *rdv;   /* READ, and DATA frames: the transfer they belong to */
	void *bounce;         /* a packed fragment's buffer (he.frags), freed with it */
};

/* A rendezvous in progress on either side, named on the wire by its id. */
struct he_rdv {
	struct mbmpi_req *req;
	/* Sender: what the receiver reads, registered for it alone or from the
	 * registration cache, by rail number: the peer's rail and, striped, the
	 * others that reach it, whose keys travel in keys (the RTS's payload). */
	void *mr[HE_RAIL_MAX];
	struct mbu_rcache_entry *rce[HE_RAIL_MAX];
	struct he_key keys[HE_RAIL_MAX - 1];
	bool offered;         /* sender: the receiver reads (it will say FIN) */
	uint8_t remote;       /* the peer is on another node: which bandwidth */
	uint64_t id, peer_id;
	fi_addr_t addr;       /* the peer, as communicators name it */
	struct he_rail *rl;   /* the rail that reaches it: reads and registrations */
	size_t len, got;      /* receiver: message bytes, bytes arrived */
	int pending;          /* reads or fragments not yet finished */
	bool sender;
	/* A non-contiguous message (r->frag) packed or unpacked a fragment at
	 * a time: where in the typemap, and (sender) the next fragment. */
	struct mbmpi_dt_cursor cur;
	size_t next;
};

/* Fragments of a non-contiguous message in flight at once, each packed
 * into its own buffer just before it goes. */
enum { HE_FRAG_DEPTH = 16, HE_FRAG_MAX = 32768 };

struct he_posted {
	struct mbu_mentry e;
	struct mbmpi_req *req;
};

struct he_unexp;
/* A pushed message on its way in (HE_F_PUSH). Between nodes a rendezvous
 * costs three trips through both network stacks where an eager message
 * costs one, so a message a little past the one-trip limit goes as a few
 * frames back to back instead: an EAGER frame with the whole length and
 * the first push_chunk bytes, then DATA frames with the rest, in order.
 * The provider keeps one sender's frames in order, so each sender (by world
 * rank, which such frames carry) has at most one pushed message arriving;
 * it fills the receive it matched, or its unexpected entry until a receive
 * takes that, and the rest then goes straight into the receive. */
struct he_push {
	struct mbmpi_req *r;       /* the receive it fills, or */
	struct he_unexp *u;        /* the unexpected entry it fills */
	size_t len, got;           /* message bytes, bytes arrived */
	struct mbmpi_dt_cursor cur; /* into a non-contiguous receive (r->frag) */
};

/* A small payload waits inside its entry, so the unexpected path of a
 * small message allocates nothing (malloc, copy and free had cost about 150
 * instructions a message); one of up to HE_UNEXP_POOLED bytes waits in a
 * pooled buffer (at most HE_UNEXP_BUFS of them are kept), a larger one in
 * its own allocation. */
enum { HE_UNEXP_INLINE = 64, HE_UNEXP_POOLED = 1024, HE_UNEXP_BUFS = 1024 };
_Static_assert(HE_UNEXP_INLINE >= sizeof(struct he_key) * (HE_RAIL_MAX - 1),
	       "an unexpected RTS keeps its keys inline");
struct he_unexp {
	struct mbu_mentry e;
	struct he_hdr hdr;
	void *data;           /* eager payload, copied out of the receive buffer */
	bool pooled;          /* data is one of he.unexp_bufs */
	char inl[HE_UNEXP_INLINE];
};

static void he_unexp_data_free(struct he_unexp *u);

/* Sync sends waiting for their acknowledgement and rendezvous transfers are
 * found by id; the generation in the high half turns a stale or forged id
 * into a miss. */
struct he_slot {
	void *p;
	uint32_t gen;
	bool rdv;
};

/* One provider's endpoint and the receive buffers posted to it. */
/* The providers whose ways the engine knows by name: libfabric 1.17's
 * utility providers have faults this bed found (he_rail_info says which
 * and where), and each sends frames whole up to its own size. */
enum he_kind { HE_PROV_OTHER, HE_PROV_MATCHBOX, HE_PROV_SHM, HE_PROV_RXM, HE_PROV_RXD };

struct he_rail {
	struct mbmpi_fab x;
	const char *prov;
	enum he_kind kind;         /* of prov */
	const char *dom;           /* the domain (NIC) asked for, or NULL: the first */
	/* Rail 0's name for a rank -> this rail's (FI_ADDR_NOTAVAIL: it does
	 * not reach that rank); NULL on rail 0. */
	fi_addr_t *map;
	bool frames;               /* carries frames (else only striped reads) */
	size_t inject, max_msg;
	size_t frame;              /* the largest frame its peers send */
	bool iov2;                 /* the provider takes a two-piece send */
	bool rdv_read;             /* rendezvous data is read by the receiver */
	/* The senders' registrations for those reads, kept for the next send
	 * from the same buffer: the key stays the same, so a provider that
	 * moves reads by another route once it knows a key (matchbox between
	 * hosts: the core's own fi_read) can use it. */
	struct mbu_rcache rc;
	bool rc_on;
	bool multi;                /* receive buffers are FI_MULTI_RECV: frames packed */
	size_t bufsize;            /* bytes of one receive buffer */
	int nbufs;
	char *bufs;
	struct he_op *rxops;
	/* frames this rank sent and received on it (MATCHBOX_MPI_VERBOSE=2
	 * prints them at the end: which rail carried what) */
	unsigned long tx, rx;
	uint64_t read;             /* rendezvous bytes this rank read over it */
	/* Read bandwidth (bytes per ns, moving average) from ranks on this
	 * node [0] and on others [1], which sets each rail's share of the next
	 * striped read, and the meters that measure it. */
	double bw[2];
	struct mbu_meter meter[2];
};

/* Rail 0 reaches every rank and carries windows; with two providers named
 * (MATCHBOX_MPI_HOST_PROVIDERS=node,net) the node rail reaches the ranks on
 * this node, as Open MPI's BML gives each peer its BTL. A peer's frames
 * always take the same rail, so the provider's send-after-send order still
 * holds per peer. With MATCHBOX_MPI_HOST_NET_DOMAINS=d0,d1,... the net
 * provider is opened on each of those domains (NICs): rail i on di. Only
 * rail 0 carries frames to other nodes; the others carry shares of striped
 * reads, as Open MPI's OB1 spreads a large message over its BTLs. Net rails
 * come first, then the node rail: every rank of a job numbers them alike,
 * and a striped RTS names rails by number. */
enum { HE_NAME_MAX = 120 };

static struct {
	struct he_rail rail[HE_RAIL_MAX];
	int nrails, nnet;
	struct he_rail *node;      /* the node rail, or NULL */
	size_t nmap;               /* entries of each rail's map */
	size_t eager;
	/* Messages to a rank on another node go eager up to eager_net (never
	 * below eager, so it is also the largest frame any peer sends);
	 * remote[w] says whether world rank w is one. */
	size_t eager_net;
	uint8_t *remote;
	/* Pushed messages: the payload of each frame, the largest message
	 * pushed (0: none), and each sender's message arriving, by world rank
	 * (allocated with remote). */
	size_t push_chunk, push_max;
	struct he_push *push;
	int via_peers;             /* ranks reached by the node rail */
	/* Rendezvous reads of at least this many bytes go over every rail that
	 * reaches the peer (0: never), from a rank on this node [0] and on
	 * another [1]. */
	size_t stripe[2];
	unsigned long stripe_skipped;
	struct mbu_pool ops, rdvs, posted_pool, unexp_pool;
	struct mbu_pool unexp_bufs; /* unexpected payloads up to HE_UNEXP_POOLED */
	struct mbu_pool frags;     /* a fragment on any rail: HE_FRAG_MAX or eager_net bytes */
	struct mbu_posted posted;
	struct mbu_unexp unexp;
	struct he_slot *slots;
	uint32_t nslots, free_head;
	struct mbu_dlist retry;
	bool queues;
	unsigned long bad_frames;
} he;

static void he_unexp_data_free(struct he_unexp *u)
{
	if (u->pooled)
		mbu_pool_put(&he.unexp_bufs, u->data);
	else if (u->data != u->inl)
		free(u->data);
	u->data = NULL;
	u->pooled = false;
}

static uint64_t he_key_tag(uint32_t ctx, int tag)
{
	return ((uint64_t)ctx << 32) | (uint32_t)tag;
}

/* The rail that carries frames to the rank communicators call a, and (if
 * there is not NULL) that rail's name for it. */
static inline struct he_rail *he_route(fi_addr_t a, fi_addr_t *there)
{
	if (he.node && he.node->map && a < he.nmap && he.node->map[a] != FI_ADDR_NOTAVAIL) {
		a = he.node->map[a];
		if (there)
			*there = a;
		return he.node;
	}
	if (there)
		*there = a;
	return &he.rail[0];
}

static inline int he_rail_no(const struct he_rail *rl)
{
	return (int)(rl - he.rail);
}

/* rl's name for the rank rail 0 calls a, or FI_ADDR_NOTAVAIL. */
static fi_addr_t he_rail_addr(const struct he_rail *rl, fi_addr_t a)
{
	if (rl == &he.rail[0])
		return a;
	return rl->map && a < he.nmap ? rl->map[a] : FI_ADDR_NOTAVAIL;
}

/* ---- Registrations of large sends' data ---- */

static int he_rc_reg(void *arg, void *addr, size_t len, void **handle)
{
	struct he_rail *rl = arg;
	struct fid_mr *m;
	int ret;

	ret = fi_mr_reg(rl->x.domain, addr, len, FI_REMOTE_READ, 0, ++rl->x.next_key, 0, &m, NULL);
	if (ret)
		return ret;
	*handle = m;
	return 0;
}

static void he_rc_dereg(void *arg, void *handle)
{
	(void)arg;
	fi_close(&((struct fid_mr *)handle)->fid);
}

static const struct mbu_rcache_ops he_rc_ops = { he_rc_reg, he_rc_dereg };

/* The send's buffer, readable by the receiver under *key at *raddr over
 * rail i. */
static int he_rdv_reg(struct he_rdv *v, int i, void *buf, size_t len, uint64_t *key,
		      uint64_t *raddr)
{
	struct he_rail *rl = &he.rail[i];

	if (rl->rc_on && len && !mbu_rcache_get(&rl->rc, buf, len, &v->rce[i])) {
		*key = fi_mr_key(v->rce[i]->handle);
		*raddr = rl->x.virt_addr ? (uint64_t)(uintptr_t)buf
					 : (uint64_t)((uintptr_t)buf - v->rce[i]->start);
		return MPI_SUCCESS;
	}
	v->rce[i] = NULL;
	return mbmpi_fab_reg(&rl->x, buf, len, FI_REMOTE_READ, key, raddr, &v->mr[i]);
}

static void he_rdv_dereg(struct he_rdv *v)
{
	for (int i = 0; i < he.nrails; i++) {
		if (v->rce[i])
			mbu_rcache_put(&he.rail[i].rc, v->rce[i]);
		v->rce[i] = NULL;
		mbmpi_fab_dereg(v->mr[i]);
		v->mr[i] = NULL;
	}
}

/* ---- Ids ---- */

static uint64_t he_id_new(void *p, bool rdv)
{
	uint32_t i;

	if (he.free_head == UINT32_MAX) {
		uint32_t n = he.nslots ? he.nslots * 2 : 64;
		struct he_slot *s = realloc(he.slots, n * sizeof(*s));

		if (!s)
			return 0;
		/* A free slot's p holds the next free index. */
		for (i = he.nslots; i < n; i++) {
			s[i].gen = 1;
			s[i].rdv = false;
			s[i].p = (void *)(uintptr_t)(i + 1 < n ? i + 1 : UINT32_MAX);
		}
		he.slots = s;
		he.free_head = he.nslots;
		he.nslots = n;
	}
	i = he.free_head;
	he.free_head = (uint32_t)(uintptr_t)he.slots[i].p;
	he.slots[i].p = p;
	he.slots[i].rdv = rdv;
	return ((uint64_t)he.slots[i].gen << 32) | i;
}

static void *he_id_get(uint64_t id, bool rdv)
{
	uint32_t i = (uint32_t)id;

	if (i >= he.nslots || he.slots[i].gen != (uint32_t)(id >> 32) || he.slots[i].rdv != rdv)
		return NULL;
	return he.slots[i].p;
}

static void he_id_free(uint64_t id)
{
	uint32_t i = (uint32_t)id;

	he.slots[i].gen++;
	if (!he.slots[i].gen)
		he.slots[i].gen = 1;
	he.slots[i].rdv = false;
	he.slots[i].p = (void *)(uintptr_t)he.free_head;
	he.free_head = i;
}

/* ---- Posting ---- */

static int he_issue(struct he_op *o)
{
	struct mbmpi_fop *f = &o->f;
	struct he_rail *rl = o->rl;
	ssize_t ret;

	switch (f->type) {
	case HE_OP_FRAME:
		if (o->plen && rl->iov2) {
			struct iovec iov[2] = {{.iov_base = &o->hdr, .iov_len = o->hlen},
					       {.iov_base = (void *)o->payload, .iov_len = o->plen}};
			ret = fi_sendv(rl->x.ep, iov, NULL, 2, f->addr, &f->ctx);
		} else if (o->plen) {
			ret = fi_send(rl->x.ep, f->buf, o->hlen + o->plen, NULL, f->addr, &f->ctx);
		} else {
			ret = fi_send(rl->x.ep, &o->hdr, o->hlen, NULL, f->addr, &f->ctx);
		}
		break;
	case HE_OP_RXBUF:
		if (rl->multi) {
			struct iovec iov = {.iov_base = f->buf, .iov_len = rl->bufsize};
			struct fi_msg m = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
					   .context = &f->ctx};

			ret = fi_recvmsg(rl->x.ep, &m, FI_MULTI_RECV);
		} else {
			ret = fi_recv(rl->x.ep, f->buf, rl->frame, NULL, FI_ADDR_UNSPEC, &f->ctx);
		}
		break;
	case HE_OP_READ:
		ret = fi_read(rl->x.ep, f->buf, f->len, NULL, f->addr, f->data, f->key, &f->ctx);
		break;
	case MBMPI_FOP_RMA:
		ret = mbmpi_fab_rma_issue(&rl->x, f);
		break;
	default:
		return -FI_EINVAL;
	}
	return ret == -FI_EAGAIN ? 1 : (int)ret;
}

static void he_op_free(struct he_op *o)
{
	if (o->f.type == HE_OP_FRAME && o->plen && !o->rl->iov2)
		free(o->f.buf);
	if (o->bounce)
		mbu_pool_put(&he.frags, o->bounce);
	mbu_pool_put(&he.ops, o);
}

static struct he_op *he_op_new(int type, struct mbmpi_req *r, struct he_rail *rl)
{
	struct he_op *o = mbu_pool_get(&he.ops);

	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	mbu_dlist_init(&o->f.link);
	o->rl = rl;
	o->f.type = type;
	o->f.req = r;
	if (r)
		r->outstanding++;
	return o;
}

static void he_req_put(struct mbmpi_req *r)
{
	if (r && --r->outstanding == 0)
		mbmpi_req_finish(r);
}

static void he_op_done(struct he_op *o, int err);

/* In issue order: once one waits, the rest wait behind it. */
static int he_post(struct he_op *o)
{
	int ret;

	if (mbu_dlist_empty(&he.retry)) {
		ret = he_issue(o);
		if (ret == 0)
			return MPI_SUCCESS;
		if (ret < 0) {
			fprintf(stderr, "matchbox mpi: rank %d: host engine: posting failed: %s\n",
				mbmpi.world_rank, fi_strerror(-ret));
			he_op_done(o, -ret);
			return MPI_ERR_OTHER;
		}
	}
	mbu_dlist_insert_tail(&o->f.link, &he.retry);
	return MPI_SUCCESS;
}

/* A frame to the rank communicators call addr: the header, and the payload
 * sent from where it lies (or, for a provider without two-piece sends,
 * from a copy). A pooled payload is a fragment buffer (he.frags), given
 * back once the frame no longer needs it, whatever happens to the frame. */
static int he_frame_h(struct mbmpi_req *r, fi_addr_t addr, const void *h, size_t hlen,
		      const void *payload, size_t plen, struct he_rdv *rdv, bool pooled)
{
	struct he_rail *rl = he_route(addr, &addr);
	struct he_op *o;
	int err = MPI_ERR_NO_MEM;

	rl->tx++;
	/* Small and nothing queued: injected, done when the call returns. */
	if (hlen + plen <= rl->inject && mbu_dlist_empty(&he.retry)) {
		char buf[hlen + plen];
		ssize_t ret;

		memcpy(buf, h, hlen);
		if (plen)
			memcpy(buf + hlen, payload, plen);
		ret = fi_inject(rl->x.ep, buf, sizeof(buf), addr);
		if (ret != -FI_EAGAIN) {
			err = MPI_SUCCESS;
			if (ret) {
				fprintf(stderr, "matchbox mpi: rank %d: host engine: fi_inject: %s\n",
					mbmpi.world_rank, fi_strerror((int)-ret));
				err = MPI_ERR_OTHER;
			}
			goto out;	/* (a pooled payload is free again either way) */
		}
	}
	o = he_op_new(HE_OP_FRAME, r, rl);
	if (!o)
		goto out;
	memcpy(&o->hdr, h, hlen);
	o->hlen = hlen;
	o->payload = payload;
	o->plen = plen;
	o->rdv = rdv;
	o->bounce = pooled ? (void *)payload : NULL;
	o->f.addr = addr;
	if (plen && !rl->iov2) {
		o->f.buf = malloc(hlen + plen);
		if (!o->f.buf) {
			o->plen = 0;
			he_op_free(o);
			he_req_put(r);
			return MPI_ERR_NO_MEM;
		}
		memcpy(o->f.buf, h, hlen);
		memcpy((char *)o->f.buf + hlen, payload, plen);
	}
	if (rdv)
		rdv->pending++;
	return he_post(o);
out:
	if (pooled)
		mbu_pool_put(&he.frags, (void *)payload);
	return err;
}

static int he_frame(struct mbmpi_req *r, fi_addr_t addr, const struct he_hdr *h,
		    const void *payload, size_t plen, struct he_rdv *rdv)
{
	return he_frame_h(r, addr, h, sizeof(*h), payload, plen, rdv, false);
}

/* ---- Set-up ---- */

/* The largest payload of a standard-mode frame the provider carries
 * between nodes in one trip, as far as its name tells: matchbox sends
 * messages up to FI_MATCHBOX_NET_EAGER (64 KiB) whole, rxm those that fit
 * its buffers (FI_OFI_RXM_BUFFER_SIZE, 16 KiB, less its own header, for
 * which 128 bytes are left). Others: 0, the local limit. */
static size_t he_one_trip(enum he_kind kind)
{
	const char *v;
	size_t lim = 0;

	if (kind == HE_PROV_MATCHBOX) {
		lim = 65536;
		if ((v = getenv("FI_MATCHBOX_NET_EAGER")))
			lim = strtoull(v, NULL, 0);
	} else if (kind == HE_PROV_RXM) {
		lim = 16384;
		if ((v = getenv("FI_OFI_RXM_BUFFER_SIZE")))
			lim = strtoull(v, NULL, 0);
		lim = lim > 128 ? lim - 128 : 0;
	}
	return lim > sizeof(struct he_short) ? lim - sizeof(struct he_short) : 0;
}

/* "shm", "tcp;ofi_rxm", "matchbox;...": the core provider is named first,
 * a utility provider after it. */
static enum he_kind he_kind_of(const char *prov)
{
	if (!strncmp(prov, "matchbox", 8))
		return HE_PROV_MATCHBOX;
	if (strstr(prov, "ofi_rxm"))
		return HE_PROV_RXM;
	if (strstr(prov, "ofi_rxd"))
		return HE_PROV_RXD;
	if (!strncmp(prov, "shm", 3) && (!prov[3] || prov[3] == ';'))
		return HE_PROV_SHM;
	return HE_PROV_OTHER;
}

/* The entry of rl's fi_info list on the domain asked for, alone: a
 * provider may offer every domain whatever the hints name (libfabric 1.17's
 * tcp does). */
static int he_pick_domain(struct he_rail *rl)
{
	struct fi_info *i, *pick = NULL;

	for (i = rl->x.info; i && !pick; i = i->next)
		if (i->domain_attr && i->domain_attr->name && !strcmp(i->domain_attr->name, rl->dom))
			pick = fi_dupinfo(i);
	fi_freeinfo(rl->x.info);
	rl->x.info = pick;
	return pick ? 0 : -FI_ENODATA;
}

/* One rail's fi_info: the most its provider grants, in this order;
 * multi-receive buffers only matter for the eager frames, so they are
 * asked for last. */
static int he_rail_info(struct he_rail *rl)
{
	static const uint64_t want[] = {
		FI_MSG | FI_RMA | FI_ATOMIC | FI_MULTI_RECV, FI_MSG | FI_RMA | FI_ATOMIC,
		FI_MSG | FI_RMA | FI_MULTI_RECV, FI_MSG | FI_RMA, FI_MSG | FI_MULTI_RECV, FI_MSG,
	};
	/* RMA for the rendezvous reads and for windows, atomics for windows;
	 * a provider with neither still carries everything else. */
	struct fi_info *hints = mbmpi_fab_hints(rl->prov, FI_MSG | FI_RMA | FI_ATOMIC);

	rl->kind = he_kind_of(rl->prov);
	/* Default on, but not over libfabric 1.17's shm, whose multi-receive
	 * path measured slower than one frame per buffer (8-byte message rate
	 * 4.9 against 7.2 million/s; over matchbox 20 against 16), nor over
	 * its ofi_rxm, which between hosts now and then handed back a frame
	 * whose bytes were another frame's payload, and lost a fragment (4
	 * ranks on two namespace hosts, tests/mpi/t_mix, 2 jobs in 3), nor
	 * over its ofi_rxd, which handed back a frame outside the buffer it
	 * was received into, and the job hung for the lost message (3 ranks on
	 * one host, t_mix, every run); never with one frame per buffer. */
	bool multi_ok = mbmpi_env_long("MATCHBOX_MPI_HOST_MULTI_RECV",
				       rl->kind != HE_PROV_SHM && rl->kind != HE_PROV_RXM &&
				       rl->kind != HE_PROV_RXD) != 0;
	int ret = -FI_ENODATA;

	if (!hints)
		return MPI_ERR_NO_MEM;
	if (rl->dom && !(hints->domain_attr->name = strdup(rl->dom))) {
		fi_freeinfo(hints);
		return MPI_ERR_NO_MEM;
	}
	for (size_t i = 0; ret && i < sizeof(want) / sizeof(want[0]); i++) {
		if ((want[i] & FI_MULTI_RECV) && !multi_ok)
			continue;
		hints->caps = want[i];
		ret = mbmpi_fab_getinfo(hints, &rl->x.info);
		if (!ret && rl->dom)
			ret = he_pick_domain(rl);
		rl->x.rma = !ret && (want[i] & FI_RMA);
		rl->x.atomics = !ret && (want[i] & FI_ATOMIC);
		rl->multi = !ret && (want[i] & FI_MULTI_RECV);
	}
	fi_freeinfo(hints);
	if (ret) {
		fprintf(stderr, "matchbox mpi: host engine: no RDM provider '%s'%s%s with FI_MSG (%s); "
			"set MATCHBOX_MPI_HOST_PROVIDERS%s\n", rl->prov, rl->dom ? " on domain " : "",
			rl->dom ? rl->dom : "", fi_strerror(-ret),
			rl->dom ? " and MATCHBOX_MPI_HOST_NET_DOMAINS" : "");
		return MPI_ERR_OTHER;
	}
	/* =0: rendezvous by clear-to-send even with RMA, to test and compare.
	 * Off by default over libfabric 1.17's ofi_rxd: with reads, t_mix at 3
	 * ranks on one host hung or failed in 3 runs of 30 (reads that never
	 * completed, both ways between two ranks), with clear-to-send in none
	 * of 30. */
	rl->rdv_read = rl->x.rma && mbmpi_env_long("MATCHBOX_MPI_HOST_RDMA",
						   rl->kind != HE_PROV_RXD) != 0;
	rl->inject = rl->x.info->tx_attr->inject_size;
	rl->iov2 = rl->x.info->tx_attr->iov_limit >= 2;
	rl->max_msg = rl->x.info->ep_attr->max_msg_size;
	return MPI_SUCCESS;
}

/* Opens the rail's endpoint and posts its receive buffers, sized for
 * frames of up to rl->frame bytes. */
static int he_rail_open(struct he_rail *rl)
{
	int ret;

	rl->nbufs = (int)mbmpi_env_long("MATCHBOX_MPI_HOST_RXBUFS", 64);
	if (rl->nbufs < 4)
		rl->nbufs = 4;
	/* With multi-receive, the same memory in four buffers that frames fill
	 * end to end: a small message takes its own size, not a frame's, and
	 * a buffer is posted again only when it is used up. */
	rl->bufsize = rl->frame;
	if (rl->multi && rl->frames) {
		size_t small = sizeof(struct he_hdr) + he.eager;

		/* Room for a quarter of the frames of the local limit, and for
		 * at least four of the largest: a buffer goes back to the
		 * provider when a largest frame no longer fits. */
		rl->bufsize = (size_t)rl->nbufs / 4 * small;
		if (rl->bufsize < 4 * rl->frame)
			rl->bufsize = 4 * rl->frame;
		rl->nbufs = 4;
		rl->x.min_multi_recv = rl->frame;
	}
	if ((ret = mbmpi_fab_open(&rl->x, "host", FI_CQ_FORMAT_DATA)))
		return ret;
	/* =0: a registration per send, released at its FIN. Without a
	 * memory monitor the cache registers for one use anyway. */
	rl->rc_on = rl->rdv_read &&
		    !mbu_rcache_init(&rl->rc, &he_rc_ops, rl,
				     (size_t)mbmpi_env_long("MATCHBOX_MPI_HOST_MR_CACHE", 256),
				     (size_t)1 << 30);
	if (!rl->frames)
		return MPI_SUCCESS; /* only reads: no frame comes to it, so no buffers */
	rl->bufs = malloc((size_t)rl->nbufs * rl->bufsize);
	rl->rxops = calloc((size_t)rl->nbufs, sizeof(*rl->rxops));
	if (!rl->bufs || !rl->rxops)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < rl->nbufs; i++) {
		struct he_op *o = &rl->rxops[i];

		mbu_dlist_init(&o->f.link);
		o->rl = rl;
		o->f.type = HE_OP_RXBUF;
		o->f.buf = rl->bufs + (size_t)i * rl->bufsize;
		if ((ret = he_issue(o)) != 0) {
			fprintf(stderr, "matchbox mpi: host engine: cannot post receive buffers to %s: "
				"%s\n", rl->prov, fi_strerror(ret < 0 ? -ret : FI_EAGAIN));
			return MPI_ERR_OTHER;
		}
	}
	return MPI_SUCCESS;
}

/* MATCHBOX_MPI_HOST_PROVIDERS: one provider for every peer, or "node,net":
 * the first for ranks on this node, the second for the others (and for
 * windows, so it must reach every rank). MATCHBOX_MPI_HOST_NET_DOMAINS: the
 * net provider's domains (NICs) to open it on, a rail each. */
static int he_providers(void)
{
	static char names[2][64], doms[HE_NET_MAX][64];
	const char *v = mbmpi_env("MATCHBOX_MPI_HOST_PROVIDERS",
				  mbmpi_env("MATCHBOX_MPI_PROVIDER", "matchbox"));
	const char *d = mbmpi_env("MATCHBOX_MPI_HOST_NET_DOMAINS", "");
	const char *comma = strchr(v, ',');
	size_t n = comma ? (size_t)(comma - v) : strlen(v);

	if (!n || n >= sizeof(names[0]) ||
	    (comma && (!comma[1] || strchr(comma + 1, ',') || strlen(comma + 1) >= sizeof(names[0])))) {
		fprintf(stderr, "matchbox mpi: MATCHBOX_MPI_HOST_PROVIDERS=%s: expected a provider, "
			"or two as node,net (e.g. shm,tcp;ofi_rxm)\n", v);
		return MPI_ERR_ARG;
	}
	memcpy(names[1], v, n);
	names[1][n] = 0;
	strcpy(names[0], comma ? comma + 1 : names[1]);
	he.nnet = 0;
	for (const char *p = d, *e = d; *d && e; p = e + 1) {
		size_t l;

		e = strchr(p, ',');
		l = e ? (size_t)(e - p) : strlen(p);

		if (!l || l >= sizeof(doms[0]) || he.nnet == HE_NET_MAX) {
			fprintf(stderr, "matchbox mpi: MATCHBOX_MPI_HOST_NET_DOMAINS=%s: expected 1 to %d "
				"domain names, comma-separated (e.g. eth0,eth1 or mlx5_0,mlx5_1)\n", d,
				HE_NET_MAX);
			return MPI_ERR_ARG;
		}
		memcpy(doms[he.nnet], p, l);
		doms[he.nnet][l] = 0;
		he.rail[he.nnet].dom = doms[he.nnet];
		he.nnet++;
	}
	if (!he.nnet)
		he.nnet = 1;
	for (int i = 0; i < he.nnet; i++) {
		he.rail[i].prov = names[0];
		he.rail[i].frames = i == 0;
	}
	he.nrails = he.nnet;
	if (strcmp(names[0], names[1])) {
		he.node = &he.rail[he.nrails++];
		he.node->prov = names[1];
		he.node->frames = true;
	}
	return MPI_SUCCESS;
}

static int he_init(void)
{
	size_t max_msg;
	int ret;

	mbu_dlist_init(&he.retry);
	he.free_head = UINT32_MAX;
	if ((ret = he_providers()))
		return ret;
	for (int i = 0; i < he.nrails; i++)
		if ((ret = he_rail_info(&he.rail[i])))
			return ret;
	max_msg = he.rail[0].max_msg;
	if (he.node && he.node->max_msg < max_msg)
		max_msg = he.node->max_msg;
	he.eager = (size_t)mbmpi_env_long("MATCHBOX_MPI_HOST_EAGER", 8192);
	if (he.eager < 64)
		he.eager = 64;
	if (he.eager + sizeof(struct he_hdr) > max_msg)
		he.eager = max_msg > 2 * sizeof(struct he_hdr) ? max_msg - sizeof(struct he_hdr)
							       : sizeof(struct he_hdr);
	/* Between nodes every trip of a message is a pass through both
	 * network stacks, and a rendezvous makes three where an eager message
	 * makes one: across two namespace hosts a 16 KiB message took 35 us by
	 * rendezvous and 9 eager. So a message to another node goes eager while
	 * the provider still sends its frame in one trip: past that the
	 * provider's own rendezvous costs as much as ours, plus a copy (over
	 * tcp;ofi_rxm a 32 KiB frame took 42-53 us against our rendezvous's
	 * 34-43). The larger frames cost memory only where multi-receive
	 * buffers pack frames end to end, and over ofi_rxm, whose 16 KiB ones
	 * in buffers of their own take 1 MiB a rank; only there is this the
	 * default. Nodes are known only after the buffers are posted, so they
	 * have room for these frames even in a job on one node. Within a node
	 * the rendezvous is one copy and the 8 KiB limit stays. */
	bool wide = he.rail[0].multi || he.rail[0].kind == HE_PROV_RXM;

	he.eager_net = (size_t)mbmpi_env_long("MATCHBOX_MPI_HOST_EAGER_NET",
					      wide ? (long)he_one_trip(he.rail[0].kind) : 0);
	if (he.eager_net + sizeof(struct he_hdr) > he.rail[0].max_msg)
		he.eager_net = he.rail[0].max_msg > sizeof(struct he_hdr)
				       ? he.rail[0].max_msg - sizeof(struct he_hdr) : 0;
	if (he.eager_net < he.eager)
		he.eager_net = he.eager;
	/* A pushed frame has the full header: its payload is what leaves the
	 * frame the size of a short-header eager one, so it too goes in one
	 * trip. */
	he.push_chunk = he.eager_net + sizeof(struct he_short) - sizeof(struct he_hdr);
	{
		long frames = mbmpi_env_long("MATCHBOX_MPI_HOST_PUSH_FRAMES", 2);

		he.push_max = frames > 1 && frames <= 64 && he.eager_net > he.eager
				      ? (size_t)frames * he.push_chunk : 0;
	}
	/* The node rail carries only frames within the node. */
	he.rail[0].frame = sizeof(struct he_hdr) + he.eager_net;
	if (he.node)
		he.node->frame = sizeof(struct he_hdr) + he.eager;
	/* All rails start equal; striped reads measure them. */
	for (int i = 0; i < he.nrails; i++)
		he.rail[i].bw[0] = he.rail[i].bw[1] = 1.0;
	/* Striping within a node (the node rail and the net rail, both copies
	 * by the same cores) measured no gain, so it is off unless asked for;
	 * several NICs are named to be used, so between nodes it is on from
	 * 64 KiB, where a read's share still outweighs its round trip. */
	{
		long st = mbmpi_env_long("MATCHBOX_MPI_HOST_STRIPE", -1);

		he.stripe[0] = he.nrails > 1 && st > 0 ? (size_t)st : 0;
		he.stripe[1] = he.nnet < 2 || !st ? 0 : st > 0 ? (size_t)st : 65536;
	}
	mbmpi.max_msg = SIZE_MAX; /* large messages are this engine's business */
	mbmpi.inject_max = HE_SHORT_MAX; /* he_inject's limit */
	/* Non-contiguous data past every eager limit is packed and unpacked
	 * a fragment at a time (clear-to-send), not through a whole copy. */
	mbmpi.frag_min = mbmpi_env_long("MATCHBOX_MPI_HOST_FRAG", 1) ? he.eager_net + 1 : 0;
	mbmpi.frag_recv = true;

	if (mbu_pool_init(&he.ops, sizeof(struct he_op), 256, 0) ||
	    mbu_pool_init(&he.rdvs, sizeof(struct he_rdv), 64, 0) ||
	    mbu_pool_init(&he.posted_pool, sizeof(struct he_posted), 256, 0) ||
	    mbu_pool_init(&he.unexp_pool, sizeof(struct he_unexp), 256, 0) ||
	    mbu_pool_init(&he.unexp_bufs, HE_UNEXP_POOLED, 16, HE_UNEXP_BUFS) ||
	    mbu_pool_init(&he.frags, he.eager_net < HE_FRAG_MAX ? he.eager_net : HE_FRAG_MAX,
			  HE_FRAG_DEPTH, 0) ||
	    mbu_posted_init(&he.posted))
		return MPI_ERR_NO_MEM;
	if (mbu_unexp_init(&he.unexp)) {
		mbu_posted_fini(&he.posted);
		return MPI_ERR_NO_MEM;
	}
	he.queues = true;
	mbmpi.waiting = &he.unexp.count;
	for (int i = 0; i < he.nrails; i++)
		if ((ret = he_rail_open(&he.rail[i])))
			return ret;
	if (mbmpi.world_rank == 0 && mbmpi_env_long("MATCHBOX_MPI_VERBOSE", 0) > 0)
		for (int i = 0; i < he.nrails; i++) {
			struct he_rail *rl = &he.rail[i];

			if (!rl->frames) {
				fprintf(stderr, "matchbox mpi: host engine: %s on %s: shares of striped "
					"reads (from %zu bytes) only\n", rl->prov, rl->dom, he.stripe[1]);
				continue;
			}
			fprintf(stderr, "matchbox mpi: host engine: %s%s%s%s: eager frames of up to %zu "
				"bytes into %d %sbuffers of %zu bytes; eager up to %zu bytes within a "
				"node, %zu to other nodes; rendezvous by %s\n", rl->prov,
				rl->dom ? " on " : "", rl->dom ? rl->dom : "",
				he.nrails == 1 ? "" : rl == he.node ? " (ranks on the node)"
								: " (other nodes, windows)",
				rl->frame, rl->nbufs, rl->multi ? "multi-receive " : "", rl->bufsize,
				he.eager, he.eager_net, rl->rdv_read ? "fi_read" : "clear-to-send");
		}
	return MPI_SUCCESS;
}

static void he_fini(void)
{
	struct mbu_dlist *it;

	mbmpi.waiting = NULL;
	while ((it = mbu_dlist_pop(&he.retry))) {
		struct he_op *o = (struct he_op *)mbu_container_of(it, struct mbmpi_fop, link);

		if (o->f.type != HE_OP_RXBUF)
			he_op_free(o);
	}
	for (int i = 0; i < he.nrails; i++) {
		struct he_rail *rl = &he.rail[i];

		/* Registrations go before their domain; closing the endpoint
		 * first retires the posted buffers. */
		if (rl->rc_on)
			mbu_rcache_fini(&rl->rc);
		rl->rc_on = false;
		mbmpi_fab_close(&rl->x);
		free(rl->bufs);
		free(rl->rxops);
		free(rl->map);
	}
	if (he.bad_frames)
		fprintf(stderr, "matchbox mpi: rank %d: host engine: dropped %lu malformed or "
			"stray frames\n", mbmpi.world_rank, he.bad_frames);
	if (mbmpi_env_long("MATCHBOX_MPI_VERBOSE", 0) > 1)
		for (int i = 0; i < he.nrails; i++)
			fprintf(stderr, "matchbox mpi: rank %d: host engine: %s%s%s: %lu frames sent, "
				"%lu received, %llu bytes read (striped reads: %.3g GB/s within the "
				"node, %.3g from others)\n", mbmpi.world_rank, he.rail[i].prov,
				he.rail[i].dom ? " on " : "", he.rail[i].dom ? he.rail[i].dom : "",
				he.rail[i].tx, he.rail[i].rx, (unsigned long long)he.rail[i].read,
				he.rail[i].bw[0], he.rail[i].bw[1]);
	if (he.queues) {
		mbu_dlist_foreach(&he.unexp.all, it)
			he_unexp_data_free(mbu_container_of(mbu_unexp_entry_of_all(it),
							    struct he_unexp, e));
		mbu_posted_fini(&he.posted);
		mbu_unexp_fini(&he.unexp);
	}
	mbu_pool_fini(&he.ops);
	mbu_pool_fini(&he.rdvs);
	mbu_pool_fini(&he.posted_pool);
	mbu_pool_fini(&he.unexp_pool);
	mbu_pool_fini(&he.unexp_bufs);
	mbu_pool_fini(&he.frags);
	mbmpi.frag_min = 0;
	mbmpi.inject_max = 0;
	free(he.slots);
	free(he.push);
	memset(&he, 0, sizeof(he));
}

/* With several rails, every name in a fixed layout: the number of rails,
 * a length byte for each of HE_RAIL_MAX, then each name in its own
 * HE_NAME_MAX bytes (every rank's blob has one size). */
static size_t he_names_len(void)
{
	return 1 + HE_RAIL_MAX + (size_t)he.nrails * HE_NAME_MAX;
}

static int he_getname(void *addr, size_t *len)
{
	unsigned char *b = addr;
	size_t need = he_names_len();

	if (he.nrails == 1)
		return mbmpi_fab_getname(&he.rail[0].x, addr, len);
	if (*len < need) {
		*len = need;
		return -FI_ETOOSMALL;
	}
	memset(b, 0, need);
	b[0] = (unsigned char)he.nrails;
	for (int i = 0; i < he.nrails; i++) {
		size_t l = HE_NAME_MAX;
		int ret = mbmpi_fab_getname(&he.rail[i].x, b + 1 + HE_RAIL_MAX + (size_t)i * HE_NAME_MAX,
					    &l);

		if (ret || !l || l > HE_NAME_MAX) {
			fprintf(stderr, "matchbox mpi: host engine: %s's address does not fit in %d "
				"bytes\n", he.rail[i].prov, HE_NAME_MAX);
			return ret ? ret : -FI_ETOOSMALL;
		}
		b[1 + i] = (unsigned char)l;
	}
	*len = need;
	return 0;
}

static int he_insert(const void *addrs, size_t addrlen, int n, fi_addr_t *out)
{
	if (he.eager_net > he.eager && mbmpi.remote && n == mbmpi.world_size && !he.remote) {
		if (he.push_max && !(he.push = calloc((size_t)n, sizeof(*he.push))))
			return MPI_ERR_NO_MEM;
		he.remote = mbmpi.remote;
	}
	if (he.nrails == 1)
		return mbmpi_fab_insert(&he.rail[0].x, addrs, n, out);
	if (he.nmap)
		return MPI_ERR_INTERN;
	if (addrlen != he_names_len()) {
		fprintf(stderr, "matchbox mpi: host engine: ranks were started with different rails "
			"(MATCHBOX_MPI_HOST_PROVIDERS, MATCHBOX_MPI_HOST_NET_DOMAINS)\n");
		return MPI_ERR_OTHER;
	}
	for (int i = 1; i < he.nrails; i++) {
		if (!(he.rail[i].map = malloc((size_t)n * sizeof(fi_addr_t))))
			return MPI_ERR_NO_MEM;
		for (int w = 0; w < n; w++)
			he.rail[i].map[w] = FI_ADDR_NOTAVAIL;
	}
	he.nmap = (size_t)n;
	for (int w = 0; w < n; w++) {
		const unsigned char *b = (const unsigned char *)addrs + (size_t)w * addrlen;
		const unsigned char *name = b + 1 + HE_RAIL_MAX;

		/* Another rank's bytes: checked before an AV reads them. */
		for (int i = 0; i < he.nrails; i++)
			if (b[0] != he.nrails || !b[1 + i] || b[1 + i] > HE_NAME_MAX) {
				fprintf(stderr, "matchbox mpi: host engine: rank %d published a "
					"malformed address\n", w);
				return MPI_ERR_OTHER;
			}
		if (fi_av_insert(he.rail[0].x.av, name, 1, &out[w], 0, NULL) != 1)
			return MPI_ERR_OTHER;
		if (out[w] >= he.nmap)
			continue;
		for (int i = 1; i < he.nrails; i++) {
			struct he_rail *rl = &he.rail[i];
			fi_addr_t a;

			/* A pair of ranks uses one rail both ways: the node
			 * rail reaches a rank of the node, and only those. */
			if (rl == he.node && !mbmpi_same_node(w))
				continue;
			if (fi_av_insert(rl->x.av, name + (size_t)i * HE_NAME_MAX, 1, &a, 0, NULL) != 1)
				continue; /* not reached that way: frames and reads go by rail 0 */
			rl->map[out[w]] = a;
			if (rl == he.node)
				he.via_peers++;
		}
	}
	if (mbmpi.world_rank == 0 && mbmpi_env_long("MATCHBOX_MPI_VERBOSE", 0) > 0) {
		if (he.node)
			fprintf(stderr, "matchbox mpi: host engine: rank 0 reaches %d rank%s by %s (its "
				"node) and %d by %s\n", he.via_peers, he.via_peers == 1 ? "" : "s",
				he.node->prov, n - he.via_peers, he.rail[0].prov);
		if (he.nnet > 1)
			fprintf(stderr, "matchbox mpi: host engine: %d net rails (%s); reads striped "
				"from %zu bytes from other nodes, %s%zu within the node\n", he.nnet,
				mbmpi_env("MATCHBOX_MPI_HOST_NET_DOMAINS", ""), he.stripe[1],
				he.stripe[0] ? "from " : "never: ", he.stripe[0]);
	}
	return MPI_SUCCESS;
}

/* The largest message that goes to the peer eager: small ones decide on
 * the first comparison. */
static inline bool he_eager_to(const struct mbmpi_comm *c, int peer, size_t len)
{
	if (len <= he.eager)
		return true;
	if (len > he.eager_net || !he.remote)
		return false;
	return he.remote[mbmpi_world_of(c, peer)];
}

/* ---- Sending ---- */

/* Whether a message past the eager limit is pushed (struct he_push): a
 * contiguous one to a rank on another node, of at most push_max bytes. A
 * synchronous send keeps the rendezvous, whose match it waits for anyway. */
static inline bool he_push_to(const struct mbmpi_comm *c, const struct mbmpi_req *r)
{
	return r->clen <= he.push_max && he.push && !r->frag && r->mode != MBMPI_SYNC &&
	       he.remote[mbmpi_world_of(c, r->peer)];
}

static int he_send(struct mbmpi_req *r)
{
	struct mbmpi_comm *c = r->comm;
	fi_addr_t addr = c->addr[r->peer];
	struct he_hdr h = {.magic = HE_MAGIC, .ctx = r->ctx, .src = (uint32_t)c->rank,
			   .tag = r->tag, .len = r->clen};
	int ret;

	r->outstanding++; /* held until everything is posted */
	bool eager = he_eager_to(c, r->peer, r->clen);

	if (eager && r->mode != MBMPI_SYNC) {
		struct he_short sh = {.type = HE_SHORT, .magic = HE_MAGIC, .ctx = r->ctx,
				      .src = (uint32_t)c->rank, .tag = r->tag};

		if ((ret = he_frame_h(r, addr, &sh, sizeof(sh), r->cbuf, r->clen, NULL, false)))
			r->err = ret;
		goto out;
	}
	if (!eager && he_push_to(c, r)) {
		/* The frames go in order, from the user's buffer. */
		h.type = HE_EAGER;
		h.flags = HE_F_PUSH;
		h.rkey = (uint64_t)mbmpi.world_rank;
		ret = he_frame(r, addr, &h, r->cbuf, he.push_chunk, NULL);
		for (size_t off = he.push_chunk; !ret && off < r->clen; off += he.push_chunk) {
			struct he_hdr d = {.type = HE_DATA, .flags = HE_F_PUSH, .magic = HE_MAGIC,
					   .rkey = (uint64_t)mbmpi.world_rank, .off = off,
					   .len = r->clen - off < he.push_chunk ? r->clen - off
										 : he.push_chunk};

			ret = he_frame(r, addr, &d, (const char *)r->cbuf + off, d.len, NULL);
		}
		if (ret)
			r->err = ret;
	} else if (eager) {
		h.type = HE_EAGER;
		if (r->mode == MBMPI_SYNC) {
			h.flags = HE_F_SYNC;
			h.sid = he_id_new(r, false);
			if (!h.sid) {
				r->err = MPI_ERR_NO_MEM;
				goto out;
			}
			r->outstanding++; /* the acknowledgement */
		}
		if ((ret = he_frame(r, addr, &h, r->cbuf, r->clen, NULL))) {
			r->err = ret;
			if (h.sid) {
				he_id_free(h.sid);
				r->outstanding--;
			}
		}
	} else {
		struct he_rdv *v = mbu_pool_get(&he.rdvs);

		if (!v) {
			r->err = MPI_ERR_NO_MEM;
			goto out;
		}
		memset(v, 0, sizeof(*v));
		v->sender = true;
		v->req = r;
		v->addr = addr;
		v->rl = he_route(addr, NULL);
		v->len = r->clen;
		v->id = he_id_new(v, true);
		if (!v->id) {
			mbu_pool_put(&he.rdvs, v);
			r->err = MPI_ERR_NO_MEM;
			goto out;
		}
		h.type = HE_RTS;
		h.sid = v->id;
		v->remote = !mbmpi_same_node(mbmpi_world_of(c, r->peer));
		if (v->rl->rdv_read && !r->frag &&
		    !he_rdv_reg(v, he_rail_no(v->rl), r->cbuf, r->clen, &h.rkey, &h.raddr)) {
			size_t min = he.stripe[v->remote];

			h.flags |= HE_F_RDMA;
			v->offered = true;
			/* Every other rail that reaches the peer offers the data
			 * too; the receiver decides the shares. */
			for (int i = 0; min && r->clen >= min && i < he.nrails; i++) {
				struct he_key *k = &v->keys[__builtin_popcountll(h.off)];

				if (&he.rail[i] == v->rl || !he.rail[i].rdv_read ||
				    he_rail_addr(&he.rail[i], addr) == FI_ADDR_NOTAVAIL ||
				    he_rdv_reg(v, i, r->cbuf, r->clen, &k->rkey, &k->raddr))
					continue;
				h.off |= 1ull << i;
			}
			if (h.off)
				h.flags |= HE_F_STRIPE;
		}
		/* Done at FIN (the receiver read it), or when the last fragment
		 * the CTS asked for has gone. */
		r->outstanding++;
		if ((ret = he_frame(r, addr, &h, h.off ? v->keys : NULL,
				    (size_t)__builtin_popcountll(h.off) * sizeof(struct he_key), NULL))) {
			r->err = ret;
			r->outstanding--;
			he_id_free(v->id);
			he_rdv_dereg(v);
			mbu_pool_put(&he.rdvs, v);
		}
	}
out:
	he_req_put(r);
	return MPI_SUCCESS;
}

static int he_inject(struct mbmpi_comm *c, int peer, int tag, const void *buf, size_t len)
{
	struct he_short h = {.type = HE_SHORT, .magic = HE_MAGIC, .ctx = c->ctx,
			     .src = (uint32_t)c->rank, .tag = tag};
	char frame[sizeof(h) + HE_SHORT_MAX];
	fi_addr_t addr;
	struct he_rail *rl = he_route(c->addr[peer], &addr);
	ssize_t ret;

	if (len > HE_SHORT_MAX || sizeof(h) + len > rl->inject || !mbu_dlist_empty(&he.retry))
		return -1;
	memcpy(frame, &h, sizeof(h));
	if (len)
		memcpy(frame + sizeof(h), buf, len);
	ret = fi_inject(rl->x.ep, frame, sizeof(h) + len, addr);
	if (ret == -FI_EAGAIN)
		return -1;
	rl->tx++;
	return ret ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void he_rdv_free(struct he_rdv *v)
{
	he_id_free(v->id);
	he_rdv_dereg(v);
	mbu_pool_put(&he.rdvs, v);
}

/* The header of the fragment of v's message at off: at most most bytes. */
static struct he_hdr he_data_hdr(const struct he_rdv *v, size_t off, size_t most)
{
	return (struct he_hdr){.type = HE_DATA, .magic = HE_MAGIC, .rid = v->peer_id, .off = off,
			       .len = v->len - off < most ? v->len - off : most};
}

/* The next fragments a CTS asked for, up to HE_FRAG_DEPTH in flight; each
 * one's completion sends the next (he_op_done). A non-contiguous message's
 * are each packed into a buffer of their own; a contiguous one's go from
 * where they lie. Sent all at once, a contiguous message of 24 MiB into a
 * non-contiguous receive on one node had the receiving provider keep
 * 13-28 MiB of fragments the engine had no buffer for yet. */
static void he_frag_fill(struct he_rdv *v)
{
	struct mbmpi_req *r = v->req;
	/* At most 32 KiB, or what the peer's buffers on this rail take: 16 of
	 * 32 KiB moved 1.2-1.6x the bytes of 16 of 64 KiB, across two hosts
	 * (matchbox's 256 KiB staging ring to a peer holds three such frames)
	 * and on one node alike; 8 and 16 KiB cost more frames. */
	size_t most = v->rl->frame - sizeof(struct he_hdr);

	if (most > HE_FRAG_MAX)
		most = HE_FRAG_MAX;

	while (v->next < v->len && v->pending <= HE_FRAG_DEPTH && !r->err) {
		struct he_hdr d = he_data_hdr(v, v->next, most);
		void *b;

		if (!r->frag) {
			v->next += d.len;
			if (he_frame(NULL, v->addr, &d, (char *)r->cbuf + d.off, d.len, v)) {
				r->err = MPI_ERR_OTHER;
				break;
			}
			continue;
		}
		if (!(b = mbu_pool_get(&he.frags))) {
			r->err = MPI_ERR_NO_MEM;
			break;
		}
		mbmpi_dt_part(&v->cur, r->buf, (size_t)r->count, r->dt, d.off, b, d.len, true);
		v->next += d.len;
		if (he_frame_h(NULL, v->addr, &d, sizeof(d), b, d.len, v, true)) {
			r->err = MPI_ERR_OTHER;
			break;
		}
	}
}

/* CTS at the sender: the whole message in fragments, each into one of the
 * receiver's buffers. */
static void he_on_cts(const struct he_hdr *h)
{
	struct he_rdv *v = he_id_get(h->sid, true);
	struct mbmpi_req *r;

	if (!v || !v->sender || v->peer_id) {
		he.bad_frames++;
		return;
	}
	r = v->req;
	v->peer_id = h->rid;
	v->pending++; /* held while posting */
	he_frag_fill(v);
	if (--v->pending == 0) {
		he_rdv_free(v);
		he_req_put(r);
	}
}

/* ---- Receiving ---- */

static bool he_src_ok(struct mbmpi_req *r, const struct he_hdr *h)
{
	if (h->src < (uint32_t)r->comm->size)
		return true;
	fprintf(stderr, "matchbox mpi: host engine: dropped a message with a bad source %u\n",
		h->src);
	r->err = MPI_ERR_INTERN;
	return false;
}

static void he_fill_status(struct mbmpi_req *r, const struct he_hdr *h)
{
	r->status.MPI_SOURCE = (int)h->src;
	r->status.MPI_TAG = h->tag;
	r->status.mbmpi_bytes = h->len < r->clen ? h->len : r->clen;
	if (h->len > r->clen)
		r->err = MPI_ERR_TRUNCATE;
}

/* A control frame about a message (whose header is about) to its sender. */
static int he_ctl(struct mbmpi_comm *c, int type, const struct he_hdr *about, uint64_t rid)
{
	struct he_hdr h = {.type = (uint8_t)type, .magic = HE_MAGIC, .sid = about->sid,
			   .rid = rid};

	return he_frame(NULL, c->addr[about->src], &h, NULL, 0, NULL);
}

static void he_send_ctl(struct mbmpi_req *r, int type, const struct he_hdr *about, uint64_t rid)
{
	if (he_ctl(r->comm, type, about, rid))
		r->err = MPI_ERR_OTHER;
}

/* Reads len bytes of v's message at off over rl (whose name for the peer
 * is addr), in pieces the provider takes whole. */
static void he_read_part(struct he_rdv *v, struct he_rail *rl, fi_addr_t addr, size_t off,
			 size_t len, uint64_t raddr, uint64_t rkey)
{
	struct mbmpi_req *r = v->req;
	uint64_t now = mbu_now_ns();

	rl->read += len;
	for (size_t done = 0; done < len;) {
		struct he_op *o = he_op_new(HE_OP_READ, NULL, rl);

		if (!o) {
			r->err = MPI_ERR_NO_MEM;
			return;
		}
		o->rdv = v;
		o->f.buf = (char *)r->cbuf + off + done;
		o->f.len = len - done < rl->max_msg ? len - done : rl->max_msg;
		o->f.addr = addr;
		o->f.data = raddr + done;
		o->f.key = rkey;
		done += o->f.len;
		v->pending++;
		mbu_meter_post(&rl->meter[v->remote], now);
		he_post(o);
	}
}

/* A matched request-to-send: read the data, or ask for it. */
static void he_rdv_recv(struct mbmpi_req *r, const struct he_hdr *h, const void *data)
{
	struct he_rdv *v;
	fi_addr_t read_from;
	size_t want;

	he_fill_status(r, h);
	want = r->status.mbmpi_bytes;
	v = mbu_pool_get(&he.rdvs);
	if (!v || !(memset(v, 0, sizeof(*v)), v->id = he_id_new(v, true))) {
		if (v)
			mbu_pool_put(&he.rdvs, v);
		r->err = MPI_ERR_NO_MEM;
		he_req_put(r);
		return;
	}
	v->req = r;
	v->peer_id = h->sid;
	v->addr = r->comm->addr[h->src];
	v->len = h->len;
	v->rl = he_route(v->addr, &read_from);
	if ((h->flags & HE_F_RDMA) && v->rl->rdv_read && !r->frag) {
		struct he_rail *rls[HE_RAIL_MAX] = {v->rl};
		fi_addr_t at[HE_RAIL_MAX] = {read_from};
		struct he_key keys[HE_RAIL_MAX] = {{h->raddr, h->rkey}};
		size_t part[HE_RAIL_MAX] = {want}, off = 0;
		int n = 1;

		v->remote = !mbmpi_same_node(mbmpi_world_of(r->comm, (int)h->src));
		/* Striped: the other rails the sender offered that reach it
		 * here too (the header was checked: one key per bit). */
		if ((h->flags & HE_F_STRIPE) && he.stripe[v->remote] && want >= he.stripe[v->remote]) {
			int j = 0;

			for (int i = 0; i < HE_RAIL_MAX; i++) {
				if (!(h->off >> i & 1))
					continue;
				memcpy(&keys[n], (const char *)data + (size_t)j++ * sizeof(struct he_key),
				       sizeof(struct he_key));
				if (i >= he.nrails || &he.rail[i] == v->rl || !he.rail[i].rdv_read ||
				    (at[n] = he_rail_addr(&he.rail[i], v->addr)) == FI_ADDR_NOTAVAIL)
					continue;
				rls[n++] = &he.rail[i];
			}
			if (n > 1) {
				double bw[HE_RAIL_MAX];

				for (int i = 0; i < n; i++)
					bw[i] = rls[i]->bw[v->remote];
				mbu_stripe_shares(bw, n, want, &he.stripe_skipped, part);
			}
		}
		v->pending = 1; /* held while posting */
		/* A truncated receive still gets what fits, as an eager one does. */
		for (int i = 0; i < n && (!r->err || r->err == MPI_ERR_TRUNCATE); off += part[i++])
			if (part[i])
				he_read_part(v, rls[i], at[i], off, part[i], keys[i].raddr + off,
					     keys[i].rkey);
		if (--v->pending == 0) {
			/* nothing to read (or nothing could be posted) */
			struct he_hdr fin = {.sid = v->peer_id, .src = h->src};

			he_send_ctl(r, HE_FIN, &fin, 0);
			he_rdv_free(v);
			he_req_put(r);
		}
		return;
	}
	/* Every fragment comes, also those past a short buffer (dropped). */
	if (!v->len) {
		he_rdv_free(v);
		he_req_put(r);
		return;
	}
	{
		struct he_hdr about = {.sid = h->sid, .src = h->src};

		he_send_ctl(r, HE_CTS, &about, v->id);
	}
}

/* The next n bytes of a pushed message, into its receive (what fits) or its
 * unexpected entry; the receive completes with the last of them. */
static void he_push_add(struct he_push *p, const void *data, size_t n)
{
	struct mbmpi_req *r = p->r;

	if (p->u) {
		memcpy((char *)p->u->data + p->got, data, n);
	} else {
		size_t fit = p->got < r->clen ? r->clen - p->got : 0;

		fit = n < fit ? n : fit;
		if (fit && r->frag)
			mbmpi_dt_part(&p->cur, r->buf, (size_t)r->count, r->dt, p->got, (void *)data,
				      fit, false);
		else if (fit)
			memcpy((char *)r->cbuf + p->got, data, fit);
	}
	p->got += n;
	if (p->got == p->len) {
		/* A complete unexpected entry waits in its queue like any. */
		if (r)
			he_req_put(r);
		p->r = NULL;
		p->u = NULL;
	}
}

/* A pushed message (have of its bytes at data so far) met its receive. A
 * bad source fails the receive, which still takes the rest of the frames. */
static void he_push_into(struct mbmpi_req *r, const struct he_hdr *h, const void *data,
			 size_t have)
{
	struct he_push *p = &he.push[h->rkey];

	if (he_src_ok(r, h))
		he_fill_status(r, h);
	memset(p, 0, sizeof(*p));
	p->r = r;
	p->len = h->len;
	he_push_add(p, data, have);
}

/* A message met its receive. */
static void he_deliver(struct mbmpi_req *r, const struct he_hdr *h, const void *data)
{
	if (!he_src_ok(r, h)) {
		he_req_put(r);
		return;
	}
	if (h->type == HE_RTS) {
		he_rdv_recv(r, h, data);
		return;
	}
	he_fill_status(r, h);
	if (r->frag)
		mbmpi_unpack(data, r->status.mbmpi_bytes, r->buf, (size_t)r->count, r->dt);
	else if (r->status.mbmpi_bytes)
		memcpy(r->cbuf, data, r->status.mbmpi_bytes);
	if (h->flags & HE_F_SYNC)
		he_send_ctl(r, HE_ACK, h, 0);
	he_req_put(r);
}

/* A receive takes an unexpected message, which a pushed one may still be
 * filling: then what came so far is copied and the rest goes straight in. */
static void he_deliver_unexp(struct mbmpi_req *r, struct he_unexp *u)
{
	struct he_push *p = u->hdr.flags & HE_F_PUSH ? &he.push[u->hdr.rkey] : NULL;

	if (p && p->u == u) {
		size_t have = p->got;

		p->u = NULL;
		he_push_into(r, &u->hdr, u->data, have);
	} else {
		he_deliver(r, &u->hdr, u->data);
	}
	he_unexp_data_free(u);
	mbu_pool_put(&he.unexp_pool, u);
}

static int he_recv(struct mbmpi_req *r)
{
	struct he_posted *p;
	struct mbu_mentry *m;
	uint64_t src = r->peer == MPI_ANY_SOURCE ? MBU_SRC_ANY : (uint64_t)r->peer;
	uint64_t ignore = r->tag == MPI_ANY_TAG ? 0xffffffffull : 0;
	uint64_t tag = he_key_tag(r->ctx, r->tag == MPI_ANY_TAG ? 0 : r->tag);

	r->outstanding++;
	if (r->claimed) {
		struct he_unexp *u = r->claimed->res;

		mbmpi_fop_free(r->claimed);
		r->claimed = NULL;
		he_deliver_unexp(r, u);
		return MPI_SUCCESS;
	}
	m = mbu_unexp_match(&he.unexp, src, tag, ignore);
	if (m) {
		struct he_unexp *u = mbu_container_of(m, struct he_unexp, e);

		mbu_unexp_remove(&he.unexp, m);
		he_deliver_unexp(r, u);
		return MPI_SUCCESS;
	}
	p = mbu_pool_get(&he.posted_pool);
	if (!p || mbu_posted_insert(&he.posted, &p->e, src, tag, ignore)) {
		if (p)
			mbu_pool_put(&he.posted_pool, p);
		r->err = MPI_ERR_NO_MEM;
		he_req_put(r);
		return MPI_SUCCESS;
	}
	p->req = r;
	r->eng = p;
	return MPI_SUCCESS;
}

/* The engine's take: the oldest unexpected message this receive matches,
 * if it is eager and fits, copied out with no request. A rendezvous or a
 * message too long stays first in line for the ordinary receive. */
static int he_take(struct mbmpi_comm *c, uint32_t ctx, int src, int tag, void *buf, size_t len,
		   MPI_Status *st)
{
	struct mbu_mentry *m = mbu_unexp_match(
		&he.unexp, src == MPI_ANY_SOURCE ? MBU_SRC_ANY : (uint64_t)src,
		he_key_tag(ctx, tag == MPI_ANY_TAG ? 0 : tag), tag == MPI_ANY_TAG ? 0xffffffffull : 0);
	struct he_unexp *u;
	int err = MPI_SUCCESS;

	if (!m)
		return -1;
	u = mbu_container_of(m, struct he_unexp, e);
	if (u->hdr.type != HE_EAGER || u->hdr.len > len || (u->hdr.flags & HE_F_PUSH))
		return -1;
	mbu_unexp_remove(&he.unexp, m);
	if (u->hdr.src >= (uint32_t)c->size) {
		fprintf(stderr, "matchbox mpi: host engine: dropped a message with a bad source %u\n",
			u->hdr.src);
		err = MPI_ERR_INTERN;
		goto out;
	}
	if (u->hdr.len)
		memcpy(buf, u->data, u->hdr.len);
	st->MPI_SOURCE = (int)u->hdr.src;
	st->MPI_TAG = u->hdr.tag;
	st->mbmpi_cancelled = 0;
	st->mbmpi_bytes = u->hdr.len;
	if ((u->hdr.flags & HE_F_SYNC) && he_ctl(c, HE_ACK, &u->hdr, 0))
		err = MPI_ERR_OTHER;
out:
	he_unexp_data_free(u);
	mbu_pool_put(&he.unexp_pool, u);
	return err;
}

/* A frame that starts a message: matched, or kept as unexpected. data holds
 * have bytes of it (less than h->len for a pushed one). */
static void he_on_match_frame(const struct he_hdr *h, const void *data, size_t have)
{
	struct mbu_mentry *m = mbu_posted_match(&he.posted, h->src, he_key_tag(h->ctx, h->tag));
	struct he_unexp *u;

	if (m) {
		struct he_posted *p = mbu_container_of(m, struct he_posted, e);
		struct mbmpi_req *r = p->req;

		mbu_posted_remove(&he.posted, m);
		mbu_pool_put(&he.posted_pool, p);
		r->eng = NULL;
		if (h->flags & HE_F_PUSH)
			he_push_into(r, h, data, have);
		else
			he_deliver(r, h, data);
		return;
	}
	u = mbu_pool_get(&he.unexp_pool);
	if (u) {
		u->hdr = *h;
		u->data = NULL;
		u->pooled = false;
		if (h->type == HE_RTS && h->off) {
			/* its keys, checked to fit */
			memcpy(u->inl, data,
			       (size_t)__builtin_popcountll(h->off) * sizeof(struct he_key));
			u->data = u->inl;
		} else if (h->type == HE_EAGER && h->len) {
			u->pooled = h->len > HE_UNEXP_INLINE && h->len <= HE_UNEXP_POOLED &&
				    (u->data = mbu_pool_get(&he.unexp_bufs));
			if (!u->pooled)
				u->data = h->len <= HE_UNEXP_INLINE ? u->inl : malloc(h->len);
			if (!u->data) {
				mbu_pool_put(&he.unexp_pool, u);
				u = NULL;
			} else {
				memcpy(u->data, data, have);
			}
		}
	}
	if (!u || mbu_unexp_insert(&he.unexp, &u->e, h->src, he_key_tag(h->ctx, h->tag))) {
		/* Nowhere to keep it: say so rather than lose it quietly. */
		fprintf(stderr, "matchbox mpi: rank %d: host engine: out of memory for an "
			"unexpected message; it is lost\n", mbmpi.world_rank);
		if (u) {
			he_unexp_data_free(u);
			mbu_pool_put(&he.unexp_pool, u);
		}
		return;
	}
	if (h->flags & HE_F_PUSH) {
		struct he_push *p = &he.push[h->rkey];

		memset(p, 0, sizeof(*p));
		p->u = u;
		p->len = h->len;
		p->got = have;
	}
}

static void he_on_data(const struct he_hdr *h, const void *data)
{
	struct he_rdv *v = he_id_get(h->rid, true);
	struct mbmpi_req *r;

	if (!v || v->sender || h->off > v->len || h->len > v->len - h->off) {
		he.bad_frames++;
		return;
	}
	r = v->req;
	if (r->frag)
		mbmpi_dt_part(&v->cur, r->buf, (size_t)r->count, r->dt, h->off, (void *)data,
			      h->len, false);
	else if (h->off < r->clen)
		memcpy((char *)r->cbuf + h->off, data,
		       r->clen - h->off < h->len ? r->clen - h->off : h->len);
	v->got += h->len;
	if (v->got == v->len) {
		he_rdv_free(v);
		he_req_put(r);
	}
}

_Static_assert(offsetof(struct he_short, type) == 0 && offsetof(struct he_hdr, type) == 0,
	       "a frame's first byte is its type");

static void he_on_frame(const void *buf, size_t n)
{
	struct he_hdr h;

	/* Frames in a multi-receive buffer lie end to end, at any alignment:
	 * read the type byte, copy the header. */
	if (n >= sizeof(struct he_short) && *(const uint8_t *)buf == HE_SHORT) {
		struct he_short sh;

		memcpy(&sh, buf, sizeof(sh));
		if (sh.magic != HE_MAGIC || n - sizeof(sh) > he.eager_net) {
			he.bad_frames++;
			return;
		}
		h = (struct he_hdr){.type = HE_EAGER, .flags = sh.flags & ~HE_F_SYNC,
				    .magic = HE_MAGIC, .ctx = sh.ctx, .src = sh.src, .tag = sh.tag,
				    .len = n - sizeof(sh)};
		he_on_match_frame(&h, (const char *)buf + sizeof(sh), (size_t)h.len);
		return;
	}
	if (n < sizeof(h)) {
		he.bad_frames++;
		return;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != HE_MAGIC || !h.type || h.type >= HE_TYPE_END) {
		he.bad_frames++;
		return;
	}
	switch (h.type) {
	case HE_EAGER:
		if (h.flags & HE_F_PUSH) {
			/* The first frame of a pushed message: more than it holds,
			 * no more than is pushed, from a sender with none arriving. */
			size_t have = n - sizeof(h);

			if (!he.push || h.rkey >= (uint64_t)mbmpi.world_size ||
			    he.push[h.rkey].r || he.push[h.rkey].u || (h.flags & HE_F_SYNC) ||
			    !have || have > he.push_chunk || h.len <= have || h.len > he.push_max) {
				he.bad_frames++;
				return;
			}
			he_on_match_frame(&h, (const char *)buf + sizeof(h), have);
			return;
		}
		if (h.len > he.eager_net || n != sizeof(h) + h.len) {
			he.bad_frames++;
			return;
		}
		he_on_match_frame(&h, (const char *)buf + sizeof(h), (size_t)h.len);
		return;
	case HE_RTS: {
		/* A striped RTS: a key for each rail bit, and no other bytes. */
		size_t keys = (size_t)__builtin_popcountll(h.off);

		if (h.off >> HE_RAIL_MAX || !(h.flags & HE_F_STRIPE) != !h.off ||
		    n != sizeof(h) + keys * sizeof(struct he_key)) {
			he.bad_frames++;
			return;
		}
		he_on_match_frame(&h, keys ? (const char *)buf + sizeof(h) : NULL, 0);
		return;
	}
	case HE_CTS:
		he_on_cts(&h);
		return;
	case HE_DATA:
		if (h.len > he.eager_net || n != sizeof(h) + h.len) {
			he.bad_frames++;
			return;
		}
		if (h.flags & HE_F_PUSH) {
			/* The next bytes of the sender's pushed message, in order. */
			struct he_push *p = he.push && h.rkey < (uint64_t)mbmpi.world_size
						    ? &he.push[h.rkey] : NULL;

			if (!p || (!p->r && !p->u) || h.off != p->got || !h.len ||
			    h.len > p->len - p->got) {
				he.bad_frames++;
				return;
			}
			he_push_add(p, (const char *)buf + sizeof(h), (size_t)h.len);
			return;
		}
		he_on_data(&h, (const char *)buf + sizeof(h));
		return;
	case HE_FIN: {
		struct he_rdv *v = he_id_get(h.sid, true);
		struct mbmpi_req *r;

		if (!v || !v->sender || !v->offered) {
			he.bad_frames++;
			return;
		}
		r = v->req;
		he_rdv_free(v);
		he_req_put(r);
		return;
	}
	default: { /* HE_ACK */
		struct mbmpi_req *r = he_id_get(h.sid, false);

		if (!r) {
			he.bad_frames++;
			return;
		}
		he_id_free(h.sid);
		he_req_put(r);
		return;
	}
	}
}

/* ---- Completions ---- */

static void he_op_done(struct he_op *o, int err)
{
	struct mbmpi_req *r = o->f.req;
	struct he_rdv *v = o->rdv;

	if (err && r)
		r->err = err == FI_ECANCELED ? r->err : MPI_ERR_OTHER;
	if (o->f.type == HE_OP_READ) {
		struct mbmpi_req *rr = v->req;
		struct he_rail *rl = o->rl;

		if (err)
			rr->err = MPI_ERR_OTHER;
		/* Every read counts toward its rail's bandwidth (a failed one
		 * too: it ends the rail's busy time all the same). */
		mbu_meter_done(&rl->meter[v->remote], err ? 0 : o->f.len, mbu_now_ns(),
			       &rl->bw[v->remote]);
		he_op_free(o);
		if (--v->pending == 0) {
			struct he_hdr fin = {.sid = v->peer_id};
			int src = rr->status.MPI_SOURCE;

			fin.src = (uint32_t)src;
			he_send_ctl(rr, HE_FIN, &fin, 0);
			he_rdv_free(v);
			he_req_put(rr);
		}
		return;
	}
	he_op_free(o);
	if (v && !err) {
		v->pending++;
		he_frag_fill(v);
		v->pending--;
	}
	if (v && --v->pending == 0) {
		/* the last fragment a CTS asked for has gone */
		struct mbmpi_req *sr = v->req;

		if (err)
			sr->err = MPI_ERR_OTHER;
		he_rdv_free(v);
		he_req_put(sr);
	}
	he_req_put(r);
}

static int he_progress_rail(struct he_rail *rl);

static int he_progress(void)
{
	struct mbu_dlist *it;
	int done;

	while ((it = he.retry.next) != &he.retry) {
		struct he_op *o = (struct he_op *)mbu_container_of(it, struct mbmpi_fop, link);
		int ret = he_issue(o);

		if (ret == 1)
			break;
		mbu_dlist_remove(it);
		if (ret < 0)
			he_op_done(o, -ret);
	}
	done = he_progress_rail(&he.rail[0]);
	for (int i = 1; i < he.nrails; i++)
		done += he_progress_rail(&he.rail[i]);
	return done;
}

/* The provider reported a frame outside the multi-receive buffer it
 * landed in: its bytes cannot be trusted, and a message is lost, which the
 * job may wait for: said at once, not only at the end. */
static __attribute__((noinline)) void he_stray_frame(const struct he_rail *rl,
						     const struct fi_cq_data_entry *e)
{
	if (!he.bad_frames++)
		fprintf(stderr, "matchbox mpi: rank %d: host engine: %s reported a frame of %zu "
			"bytes outside its multi-receive buffer; it is dropped, and the job may "
			"wait for the message it carried (MATCHBOX_MPI_HOST_MULTI_RECV=0 takes one "
			"frame per buffer)\n", mbmpi.world_rank, rl->prov, e->len);
}

static int he_progress_rail(struct he_rail *rl)
{
	struct fi_cq_data_entry e[16];
	ssize_t n;
	int done = 0;

	n = fi_cq_read(rl->x.cq, e, 16);
	if (n > 0) {
		for (ssize_t i = 0; i < n; i++) {
			struct he_op *o = (struct he_op *)mbu_container_of(
				(struct fi_context2 *)e[i].op_context, struct mbmpi_fop, ctx);

			if (o->f.type == HE_OP_RXBUF) {
				/* A multi-receive buffer reports where each frame
				 * landed, and is posted again once the provider has
				 * released it (possibly with a last frame, possibly
				 * with none). */
				rl->rx += e[i].len != 0;
				if (!rl->multi)
					he_on_frame(o->f.buf, e[i].len);
				else if (e[i].len && e[i].buf >= (void *)o->f.buf &&
					 (char *)e[i].buf + e[i].len <= (char *)o->f.buf + rl->bufsize)
					he_on_frame(e[i].buf, e[i].len);
				else if (e[i].len)
					he_stray_frame(rl, &e[i]);
				if ((!rl->multi || (e[i].flags & FI_MULTI_RECV)) && he_issue(o) == 1)
					mbu_dlist_insert_tail(&o->f.link, &he.retry);
			} else {
				he_op_done(o, 0);
			}
		}
		done += (int)n;
	} else if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = {0};

		if (fi_cq_readerr(rl->x.cq, &err, 0) == 1 && err.op_context) {
			struct he_op *o = (struct he_op *)mbu_container_of(
				(struct fi_context2 *)err.op_context, struct mbmpi_fop, ctx);
			int code = err.err < 0 ? -err.err : err.err;

			if (o->f.type == HE_OP_RXBUF) {
				/* A multi-receive buffer still in the provider's
				 * hands must not be posted twice. */
				if (code != FI_ECANCELED && (!rl->multi || (err.flags & FI_MULTI_RECV)) &&
				    he_issue(o) == 1)
					mbu_dlist_insert_tail(&o->f.link, &he.retry);
			} else {
				fprintf(stderr, "matchbox mpi: rank %d: host engine: an operation "
					"failed: %s\n", mbmpi.world_rank, fi_strerror(code));
				he_op_done(o, code);
			}
			done++;
		}
	} else if (n < 0 && n != -FI_EAGAIN) {
		fprintf(stderr, "matchbox mpi: host engine: fi_cq_read: %s\n", fi_strerror((int)-n));
	}
	return done;
}

/* ---- Probe and cancel ---- */

static int he_probe(struct mbmpi_comm *c, int src, int tag, bool claim, int *flag,
		    MPI_Status *st, struct mbmpi_msg **msg)
{
	uint64_t s = src == MPI_ANY_SOURCE ? MBU_SRC_ANY : (uint64_t)src;
	uint64_t ignore = tag == MPI_ANY_TAG ? 0xffffffffull : 0;
	struct mbu_mentry *m;
	struct he_unexp *u;

	he_progress();
	m = mbu_unexp_match(&he.unexp, s, he_key_tag(c->ctx, tag == MPI_ANY_TAG ? 0 : tag), ignore);
	if (!m) {
		*flag = 0;
		return MPI_SUCCESS;
	}
	u = mbu_container_of(m, struct he_unexp, e);
	if (u->hdr.src >= (uint32_t)c->size) {
		*flag = 0;
		return MPI_ERR_OTHER;
	}
	*flag = 1;
	st->MPI_SOURCE = (int)u->hdr.src;
	st->MPI_TAG = u->hdr.tag;
	st->mbmpi_cancelled = 0;
	st->mbmpi_bytes = u->hdr.len;
	if (claim) {
		struct mbmpi_fop *f = mbmpi_fop_alloc();

		*msg = malloc(sizeof(**msg));
		if (!f || !*msg) {
			if (f)
				mbmpi_fop_free(f);
			free(*msg);
			*msg = NULL;
			return MPI_ERR_NO_MEM;
		}
		mbu_unexp_remove(&he.unexp, m);
		f->res = u;
		(*msg)->fop = f;
		(*msg)->comm = c;
		(*msg)->status = *st;
		(*msg)->early = NULL;
	}
	return MPI_SUCCESS;
}

static int he_cancel(struct mbmpi_req *r)
{
	struct he_posted *p = r->eng;

	if (r->kind != MBMPI_REQ_RECV || !p || r->complete)
		return MPI_SUCCESS;
	mbu_posted_remove(&he.posted, &p->e);
	mbu_pool_put(&he.posted_pool, p);
	r->eng = NULL;
	r->status.mbmpi_cancelled = 1;
	he_req_put(r);
	return MPI_SUCCESS;
}

/* ---- One-sided, on rail 0, which reaches every rank ---- */

static int he_rma_reg(void *buf, size_t len, uint64_t *key, uint64_t *raddr, void **mr)
{
	struct mbmpi_fab *x = &he.rail[0].x;

	if (!x->rma)
		return MPI_ERR_UNSUPPORTED_OPERATION;
	return mbmpi_fab_reg(x, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
			     key, raddr, mr);
}

static int he_rma(struct mbmpi_req *r, const struct mbmpi_rma *op)
{
	struct he_op *o;

	struct mbmpi_fab *x = &he.rail[0].x;

	if (!x->rma || (op->kind != MBMPI_RMA_PUT && op->kind != MBMPI_RMA_GET && !x->atomics))
		return MPI_ERR_UNSUPPORTED_OPERATION;
	if (!(o = he_op_new(MBMPI_FOP_RMA, r, &he.rail[0])))
		return MPI_ERR_NO_MEM;
	mbmpi_fab_rma_fill(&o->f, op);
	return he_post(o);
}

static int he_getopt(int name, void *val, size_t *len)
{
	return mbmpi_fab_getopt(&he.rail[0].x, name, val, len);
}

static size_t he_atomic_max(int kind, int fdt, int fop)
{
	return mbmpi_fab_atomic_max(&he.rail[0].x, kind, fdt, fop);
}

const struct mbmpi_engine mbmpi_host_engine = {
	.name = "host",
	.init = he_init,
	.getname = he_getname,
	.insert = he_insert,
	.send = he_send,
	.recv = he_recv,
	.probe = he_probe,
	.cancel = he_cancel,
	.inject = he_inject,
	.take = he_take,
	.progress = he_progress,
	.getopt = he_getopt,
	.fini = he_fini,
	.rma_reg = he_rma_reg,
	.rma_dereg = mbmpi_fab_dereg,
	.rma = he_rma,
	.atomic_max = he_atomic_max,
};
