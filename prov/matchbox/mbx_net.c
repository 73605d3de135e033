/* The net wire (see mbx_net.h): datagram channel, connections over a shared
 * receive context with credits, connection management, and the checks every
 * inbound frame passes before the matcher sees it.
 *
 * Ordering: a peer's frames leave its ring in order. While it is on the
 * datagram channel, mbu_rel releases them in order at the receiver. A peer
 * moves onto its connection only when no datagram is unacknowledged, and
 * the receiver hands over every datagram it holds before the first frame
 * that came by connection, so the switch never reorders. A connection is
 * closed for idleness only by a handshake in which both sides have nothing
 * in flight.
 *
 * Everything runs under the domain lock, from the provider's progress. */
#include "mbx.h"
#include "mbx_net.h"
#include "mbx_netwire.h"
#include "mbx_rail.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "mbu_batch.h"
#include "mbu_credit.h"
#include "mbu_futex.h"
#include "mbu_iov.h"
#include "mbu_offer.h"
#include "mbu_rcache.h"
#include "mbu_rel.h"
#include "mbu_route.h"
#include "mbu_slots.h"

#define DGRAM_POSTED	64u
/* libfabric's udp writes a receive completion without looking for room in
 * its CQ, and refuses a send only when the CQ is full: so sends whose
 * completions are still unread stop DGRAM_POSTED short of full. The CQ's
 * ring is touched as completions cycle through it, so it is sized to what
 * can be outstanding, not generously (at 4096 entries it was 192 KiB per
 * process once traffic had gone round). */
#define UCQ_SIZE	1024u
#define DGRAM_SENDS_MAX	(UCQ_SIZE - DGRAM_POSTED - 1u)
/* The connections' CQ: libfabric's tcp queues a completion that finds its
 * CQ full on an overflow list, so this is a size, not a limit. */
#define MCQ_SIZE	1024u
#define CQ_BATCH	32
#define TICK_NS		1000000ULL
#define PROBE_AFTER_NS	1000000000ULL
#define DEAD_CONN_NS	2000000000ULL
/* A channel with nothing under way is polled on every 16th progress call
 * only: each poll is a system call or two, and a spinning receiver that
 * polls three channels notices its connection's frames later than one that
 * polls one. A datagram or a connection handshake makes its channel hot
 * (polled on every call) for HOT_NS. Every COLD_NS too, whatever the count:
 * a call in which the core serves large reads lasts milliseconds (up to 8
 * measured, 1 MiB reads between namespace hosts), and 16 of them left a
 * datagram channel unread for 37-78 ms, past the retransmission timeout. */
#define COLD_POLLS	16u
#define COLD_NS		1000000ULL
#define HOT_NS		50000000ULL
/* A datagram is acknowledged on its own only if the progress call after
 * the one that received it has not carried the acknowledgement on a reply
 * (a ping-pong then sends one datagram per message, not two), or at once
 * after ACK_EVERY of them, a duplicate, a gap or a probe. */
#define ACK_EVERY	(MBU_REL_WINDOW / 4)

/* Buffers by size. Tiny ones carry control frames and small messages: a
 * datagram is held until acknowledged, so in an all-to-all every peer has
 * one in flight, 512 bytes where a datagram-sized buffer took 1.6 KiB. */
enum { POOL_TINY, POOL_SMALL, POOL_HI, POOL_BIG, POOL_N };
enum { NF_ACK = 1 };
/* A ring write in this many asks for a completion, so that a core that
 * needs one now and then to free its send queue (verbs) gets it. */
#define RING_SIGNAL	16u
#define RDONE_MAX	64u

/* A core that carries less connection data than our request would refuse
 * every fi_connect (verbs over XRC takes 39 bytes): say so once, when the
 * net wire opens. A core that cannot tell is trusted. */
static int cm_fits(struct fid_pep *pep, const char *prov)
{
	size_t room = 0, len = sizeof(room);

	if (fi_getopt(&pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &room, &len) ||
	    room >= sizeof(struct cm_param))
		return 0;
	MBX_WARN(FI_LOG_EP_CTRL, "%s carries %zu bytes of connection data, matchbox asks with %zu\n",
		 prov, room, sizeof(struct cm_param));
	return -FI_EMSGSIZE;
}

/* Messages after which a peer is busy and gets a connection, where that is
 * the faster channel for small messages (FI_MATCHBOX_CONN_THRESHOLD). */
#define BUSY_MSGS	16u
/* A peer whose budget was full is not asked again for this long. */
#define BUDGET_RETRY_NS	1000000000ULL

/* NB_RING: a frame copied out of a connection ring for the matcher to
 * take later; NB_RWR: a ring write that asked for a completion. */
enum nb_kind { NB_TX, NB_DRX, NB_SRX, NB_SRX_LO, NB_READ, NB_UOP, NB_RING, NB_RWR };

struct nbuf {
	struct fi_context2 ctx;
	struct mbu_dlist link;
	struct mbx_conn *conn;	/* tx on a connection */
	struct mbx_peer *peer;	/* tx of an eager frame: whose send ... */
	uint64_t txid;		/* ... completes when this frame has left */
	struct mbx_rx *rx;	/* NB_READ: the receive pulling (with peer, txid) */
	void *uctx;		/* NB_UOP: the caller's fi_write/fi_read, its context */
	uint64_t uflags;	/* ... and op flags */
	uint32_t len;
	uint32_t off;		/* rx of several frames: where the next untaken one starts */
	uint8_t kind;
	uint8_t pool;
	uint8_t rail;		/* NB_READ: 0 on the connection, k on extra rail k */
	uint8_t hlen;		/* net header bytes before the frames: HDR or CHDR */
	int refs;
	_Alignas(8) unsigned char d[];
};
#define TINY_MAX	(512u - (uint32_t)sizeof(struct nbuf))
/* Control frames (a header alone) go in tiny buffers, and small messages
 * should too. */
_Static_assert(TINY_MAX >= HDR + 64, "a tiny buffer holds a header and a small frame");

enum conn_state { C_CONNECTING, C_ACCEPTING, C_UP, C_DEAD };

/* A connection ring (doc/engines.md, session 46). libfabric's tcp writes
 * a wake-up byte to a descriptor for every completion it reports and reads
 * it back on the next poll, two system calls per message that a remote
 * write without CQ data escapes: written into a ring the receiver polls,
 * a 4 KiB message took 5.7 us one way where by send it took 6.6. Each side
 * of a high-class connection offers one (its NT_RING frame), and writes
 * its DATA frames into the peer's while there is room, with a completion
 * asked for on one write in RING_SIGNAL only. Frames that do not fit,
 * lone frames and every control frame still go by send; each frame says
 * how many went the other way before it (nhdr.xcount), and the receiver
 * takes both in that order. The memory is one registration: our ring, where the peer
 * writes; our shadow of the peer's ring, where our frames are built at the
 * positions they will take there (a position is reused only once the peer
 * has said it took what was there, so the shadow needs no completion);
 * and the word where the peer writes how far it has taken our frames. */
struct cring {
	struct mbu_dlist link;		/* net->rings while its connection is up */
	struct mbx_conn *c;
	struct fid_mr *mr;
	uint8_t *mem;			/* [ring: size][shadow: size][room word] */
	size_t maplen;
	uint64_t size, nonce;
	/* Receiving: the position and number of the next frame, the
	 * position last told to the peer. */
	uint64_t rx_pos, rx_seq, rx_told;
	bool told;			/* our NT_RING sent */
	bool peer;			/* the peer's NT_RING received */
	bool tx_on;			/* ... and we write into its ring */
	uint64_t tx_base, tx_key, tx_nonce;
	uint64_t tx_pos, tx_seq;
	uint32_t tx_sends, tx_unsig;
	uint32_t lone_max;		/* largest lone frame written (ring_lone_max) */
};

struct mbx_conn {
	struct mbu_dlist link;	/* net->conns */
	struct fid_ep *ep;
	struct mbx_npeer *np;	/* NULL once abandoned or dead */
	int state;
	bool out;
	bool busy;		/* counts against the connection budget */
	uint8_t cls;
	uint32_t their_id;	/* the peer's id of us, for our frames' `peer` */
	uint32_t inflight;	/* our sends and reads on it not yet completed */
	uint32_t uops;		/* of which pieces of the caller's RMA (mbx_net_rma) */
	uint64_t uop_bytes;	/* ... and their bytes */
	uint64_t read_bytes;	/* asked for by the fi_reads in flight on it */
	uint64_t dead_ns;
	struct cring *ring;	/* high class only, while rings are to be had */
};

/* One connection class toward a peer. Flow control: sending, `credits`
 * held and `peer_win` the window the peer last announced; receiving, `rx`
 * (mbu_credit.h). */
struct ncls {
	struct mbx_conn *conn, *out, *in;
	uint32_t credits, peer_win;
	struct mbu_credit_rx rx;
	uint64_t retry_ns;	/* no new attempt before (a failed one backs off) */
	uint32_t retries;
};

struct mbx_npeer {
	struct mbu_dlist link;		/* net->peers */
	struct mbx_peer *p;
	uint32_t id;			/* ours for it (net->ids), told when connecting */
	struct mbu_ring_shared sh;
	uint8_t *ring;
	struct mbu_ring_cons cons;
	fi_addr_t uaddr;
	struct mbu_rel_tx rtx;
	struct mbu_rel_rx rrx;
	struct mbu_dlist inq;		/* received frames the matcher has not taken */
	struct mbu_dlist early;		/* frames by send waiting for ring frames before them */
	/* High-class DATA frames by send since the connection came up (ring
	 * frames wait for their count), and the peer's NT_RING if it came
	 * before our own end of the connection was up. */
	uint32_t hi_sends_in;
	bool tell_held;
	struct ring_tell tell;
	struct ncls cl[CL_N];
	uint32_t msgs;
	uint64_t budget_retry_ns;	/* no busy-peer connection before */
	uint64_t trimmed;		/* ring position up to which pages were given back */
	bool want_conn;			/* never the datagram channel for data */
	bool rdv_conn;			/* the same, while a large message wants fi_read */
	/* Frames that fit a datagram may leave a peer's connection for the
	 * datagram channel once everything sent on it was taken by the
	 * peer's matcher: high-class DATA frames sent on connections, ever,
	 * and the peer's count of them consumed (monotonic, so a stale
	 * datagram cannot move it back); and the same counted the other way. */
	uint32_t conn_sent, conn_seen, conn_consumed;
	uint64_t conn_until_ns;		/* a frame needed the connection: stay on it */
	bool neighbour;			/* partial mode: connected at start */
	bool closing;			/* we asked to close its connections */
	bool core_hold;			/* we agreed to the peer's asking: no new core RMA */
	bool need_ack;
	bool ack_now;
	uint16_t unacked;
	uint32_t ack_poll;		/* the progress call that made need_ack */
	bool failed;
	uint64_t last_rx_ns, last_act_ns;
	struct mbu_dlist flush_link;	/* net->flushq while its ring waits for a flush */
	/* User RMA by the core: the regions the peer offered (remote
	 * addresses base to base + len under the matchbox key are the core's
	 * offsets from 0 under ckey), and our operations on its connection
	 * not completed yet. */
	struct mbu_offers offers;
	struct mbu_dlist uops;		/* our operations on the core, in order */
	bool core_mark;			/* a core write was posted: next frame by connection */
	uint32_t core_ops;
	/* Extra rails: the peer's (from its RAILS frame; nrails 0 until
	 * then), their entries in our rails' tables, our reads in flight on
	 * each (bytes; [0] unused, rail 0's are its connection's), and
	 * whether the peer has been told ours. */
	uint8_t nrails;
	bool rails_told;
	uint8_t rr_next;		/* round robin: the rail of the next message */
	uint32_t bind;			/* binding: 1 + the peers bound before it; 0: not yet */
	struct mbx_rail_name rail[MBX_RAILS_MAX - 1];
	fi_addr_t rail_fa[MBX_RAILS_MAX - 1];
	uint64_t rail_rd_bytes[MBX_RAILS_MAX];
};

struct mbx_net {
	struct mbx_ep *ep;
	uint64_t reads;		/* fi_reads issued for large messages (logged at close) */
	uint64_t core_reads, core_read_pieces;	/* RMA reads by the core, and their pieces */
	struct fi_info *uinfo, *minfo;
	struct fid_fabric *ufab, *mfab;
	struct fid_domain *udom, *mdom;
	struct fid_av *uav;
	struct fid_ep *uep;
	struct fid_cq *ucq, *mcq;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_ep *srx[CL_N];
	struct mbu_pool pool[POOL_N];
	size_t pool_size[POOL_N];	/* bytes of frame each buffer holds */
	uint32_t dposted, sposted[CL_N], nconns[CL_N];
	uint32_t dsends;		/* datagram sends whose completion is unread */
	uint32_t credits;		/* the largest window (FI_MATCHBOX_NET_CREDITS) */
	bool rma;			/* the connections can fi_read */
	bool small_dgram;		/* small frames prefer datagrams (not over verbs) */
	uint32_t busy_threshold;	/* messages that make a peer busy; 0: never */
	bool lo_used;			/* a low connection was ever started */
	uint32_t mr_key;		/* last memory key handed out */
	struct mbu_rcache rc;		/* registrations of large sends' data */
	struct mbu_dlist ckeys;		/* our regions registered with the core for peers */
	struct mbu_pool uop_pool;	/* struct uop */
	uint32_t committed[CL_N];	/* per class, sum of lent + owed: buffers promised */
	struct mbu_dlist peers, conns;
	struct mbu_slots ids;		/* peers by the ids we gave them */
	/* While a batch of completions is handled, frames written to peers'
	 * rings (acknowledgements, read data) wait in the rings, and the peers
	 * here are flushed after it: the frames then share connection sends. */
	bool holding;
	struct mbu_dlist flushq;
	uint64_t av_gen, last_tick, last_scan;
	uint64_t last_cold_ns;			/* when the cold channels were last read */
	bool dgram_queue;			/* the last read of datagrams found one */
	uint64_t dgram_hot_ns, eq_hot_ns;	/* polled on every call until */
	uint32_t polls;
	/* Extra rails (mbx_rail.h); NULL without. Their reads of ours in
	 * flight, and RTSes offered on them whose data the peers may still
	 * read: while either is non-zero their CQs are polled on every call
	 * (the core serves the peers' reads from its progress). */
	struct mbx_rails *rails;
	uint32_t rail_reads, rail_offers;
	uint32_t nbound;		/* binding: peers bound so far */
	uint64_t rails_hot_ns;		/* a rail's connection is being made */
	struct fi_matchbox_net_stats st;
	/* Connection rings: those polled, and eager sends written into a
	 * peer's ring, whose completion waits for the next read of the CQs
	 * (the caller that wrote the frame has not finished with its send). */
	struct mbu_dlist rings;
	bool ring_ok;
	/* The core is libfabric's tcp: it places a ring write's bytes inside
	 * our own calls (a frame may be checked where it lies), and TCP's
	 * delayed acknowledgements decide what a lone frame costs. */
	bool core_tcp;
	/* Bytes of one fi_read of a large message and of one piece of an RMA
	 * operation by the core (FI_MATCHBOX_NET_RMA_CHUNK, or chosen by the
	 * core and its congestion control at start: see there). */
	size_t rma_chunk, uop_chunk;
	size_t rma_alone;	/* a message read alone: its rest in one read up to this */
	size_t rts_head;		/* FI_MATCHBOX_NET_RTS_HEAD, or chosen with them */
	uint32_t nrdone;
	struct {
		struct mbx_peer *p;
		uint64_t id;
	} rdone[RDONE_MAX];
	/* Sleeping in descriptors (mbx_wait.c): the core CQs' and EQ's wait
	 * descriptors (-1 where the core has none), and a timer that wakes a
	 * sleeper now and then so that probes and timeouts still run. */
	int wfd[3];
	int timer_fd;
};

static inline struct nhdr *nb_hdr(struct nbuf *b)
{
	return (struct nhdr *)b->d;
}

static inline struct mbu_frame *nb_frame(struct nbuf *b)
{
	return (struct mbu_frame *)(b->d + b->hlen);
}

static inline uint32_t hdr_len(uint8_t chan)
{
	return chan == CH_DGRAM ? HDR : CHDR;
}

static int addr_cmp(const struct mbx_addr *a, const struct mbx_addr *b)
{
	uint64_t ka = mbx_addr_k0(a), kb = mbx_addr_k0(b);

	if (ka != kb)
		return ka < kb ? -1 : 1;
	ka = mbx_addr_k1(a);
	kb = mbx_addr_k1(b);
	return ka < kb ? -1 : ka > kb;
}

static void np_fail(struct mbx_ep *ep, struct mbx_npeer *np, const char *why);
static void uop_done(struct mbx_ep *ep, struct nbuf *b, int err);
static void ckeys_forget(struct mbx_net *n, struct mbx_npeer *np);
static void uops_detach(struct mbx_ep *ep, struct mbx_npeer *np);
static int conn_send(struct mbx_ep *ep, struct mbx_npeer *np, int cls, struct nbuf *b);
static void ring_learn(struct mbx_npeer *np, struct cring *r, const struct ring_tell *t);

/* ---- buffers ---- */

static struct nbuf *nb_get(struct mbx_net *n, uint8_t pool, uint8_t kind)
{
	struct nbuf *b = mbu_pool_get(&n->pool[pool]);

	if (!b)
		return NULL;
	memset(b, 0, sizeof(*b));
	mbu_dlist_init(&b->link);
	b->pool = pool;
	b->kind = kind;
	b->refs = 1;
	return b;
}

/* The smallest buffer a frame of `len` bytes (net header included) fits. */
static uint8_t pool_for(struct mbx_net *n, uint32_t len)
{
	uint8_t i = POOL_TINY;

	while (i < POOL_BIG && len > n->pool_size[i])
		i++;
	return i;
}

static void nb_put(struct mbx_net *n, struct nbuf *b)
{
	if (--b->refs > 0)
		return;
	mbu_pool_put(&n->pool[b->pool], b);
}

static uint32_t win_target(struct mbx_net *n, int cls);

static void fill_hdr_at(struct mbx_ep *ep, struct mbx_npeer *np, struct nhdr *h, uint8_t type,
			uint8_t chan, uint32_t len)
{
	memset(h, 0, hdr_len(chan));
	h->magic = NET_MAGIC;
	h->version = NET_VERSION;
	h->type = type;
	h->chan = chan;
	h->len = len;
	h->consumed = np->conn_consumed;
	if (chan == CH_DGRAM) {
		h->src = ep->addr;
		h->dst_ep = np->p->addr.ep;
		h->dst_pid = np->p->addr.pid;
	} else {
		/* Only ever called with the class's connection up. */
		h->peer = np->cl[chan - 1].conn->their_id;
		h->win = win_target(ep->net, chan - 1);
	}
}

static void fill_hdr(struct mbx_ep *ep, struct mbx_npeer *np, struct nbuf *b, uint8_t type,
		     uint8_t chan, uint32_t len)
{
	b->hlen = (uint8_t)hdr_len(chan);
	fill_hdr_at(ep, np, nb_hdr(b), type, chan, len);
	b->len = len;
}

/* ---- posting receive buffers ---- */

static void post_dgram(struct mbx_net *n)
{
	while (n->dposted < DGRAM_POSTED) {
		struct nbuf *b = nb_get(n, POOL_SMALL, NB_DRX);

		if (!b)
			return;
		if (fi_recv(n->uep, b->d, DGRAM_MAX, NULL, FI_ADDR_UNSPEC, &b->ctx)) {
			nb_put(n, b);
			return;
		}
		n->dposted++;
	}
}

/* The shared receive queues and the connections' windows: mbu_credit.h,
 * applied to each class on its own. */
static uint32_t win_min(struct mbx_net *n)
{
	return mbu_win_floor(n->credits);
}

static uint32_t win_target(struct mbx_net *n, int cls)
{
	return mbu_win_target(n->nconns[cls], (uint32_t)mbx_param.srq_k,
			      (uint32_t)mbx_param.srq_b, n->credits);
}

static uint32_t srq_target(struct mbx_net *n, int cls)
{
	/* The low queue's large buffers cost nothing until a low connection
	 * is about to need them. */
	if (cls == CL_LO && !n->lo_used)
		return 0;
	return mbu_srq_target(n->nconns[cls], (uint32_t)mbx_param.srq_k,
			      (uint32_t)mbx_param.srq_b, n->committed[cls]);
}

static void post_srq(struct mbx_net *n, int cls)
{
	uint8_t pool = cls == CL_HI ? POOL_HI : POOL_BIG;
	uint32_t want = srq_target(n, cls);

	while (n->sposted[cls] < want) {
		struct nbuf *b = nb_get(n, pool, cls == CL_HI ? NB_SRX : NB_SRX_LO);

		if (!b)
			return;
		if (fi_recv(n->srx[cls], b->d, n->pool_size[pool], NULL, FI_ADDR_UNSPEC,
			    &b->ctx)) {
			nb_put(n, b);
			return;
		}
		n->sposted[cls]++;
	}
	n->st.srq_posted = n->sposted[CL_HI];
	n->st.srq_lo_posted = n->sposted[CL_LO];
}

static void post_srqs(struct mbx_net *n)
{
	post_srq(n, CL_HI);
	post_srq(n, CL_LO);
}

/* The first low connection, ours or the peer's, brings the low queue. */
static void use_lo(struct mbx_net *n)
{
	if (n->lo_used)
		return;
	n->lo_used = true;
	post_srq(n, CL_LO);
}

/* The class whose shared receive queue a buffer came from, or -1. */
static int srx_cls(const struct nbuf *b)
{
	return b->kind == NB_SRX ? CL_HI : b->kind == NB_SRX_LO ? CL_LO : -1;
}

/* ---- peers ---- */

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Partial mode: the peers at AV-index distance 2^k either way are
 * connected at start (about 2·log2(N) of them). */
static bool av_neighbour(struct mbx_ep *ep, struct mbx_peer *p)
{
	fi_addr_t me, them;
	uint64_t cnt, d;

	if (!ep->av || !ep->av->count)
		return false;
	me = mbx_av_reverse(ep->av, &ep->addr);
	them = mbx_av_reverse(ep->av, &p->addr);
	if (me == FI_ADDR_NOTAVAIL || them == FI_ADDR_NOTAVAIL)
		return false;
	cnt = ep->av->count;
	d = (them + cnt - me) % cnt;
	return is_pow2(d) || is_pow2(cnt - d);
}

int mbx_net_peer_init(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np;
	struct sockaddr_in sin;
	int ret;

	if (p->net)
		return 0;
	if (!n) {
		MBX_WARN(FI_LOG_EP_DATA, "%s is on another host and this endpoint has no net "
			 "wire (FI_MATCHBOX_NET, FI_MATCHBOX_NET_IFACE)\n", p->name);
		return -FI_EHOSTUNREACH;
	}
	if (!p->addr.ip || !(p->addr.ports >> 16) || !(p->addr.ports & 0xffff)) {
		MBX_WARN(FI_LOG_EP_DATA, "%s is on another host and has no net address\n",
			 p->name);
		return -FI_EHOSTUNREACH;
	}
	np = calloc(1, sizeof(*np));
	if (!np)
		return -FI_ENOMEM;
	ret = mbu_slots_get(&n->ids, np, &np->id);
	if (ret) {
		free(np);
		return ret == -ENOSPC ? -FI_ENOSPC : -FI_ENOMEM;
	}
	/* Fresh anonymous pages read as zero (what the ring's stamps need)
	 * and cost nothing until written: a peer that is sent a few small
	 * messages costs a few pages, not the whole ring. */
	np->ring = mmap(NULL, mbx_param.net_ring_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (np->ring == MAP_FAILED) {
		mbu_slots_put(&n->ids, np->id);
		free(np);
		return -FI_ENOMEM;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(p->addr.ip);
	sin.sin_port = htons((uint16_t)(p->addr.ports >> 16));
	ret = fi_av_insert(n->uav, &sin, 1, &np->uaddr, 0, NULL);
	if (ret != 1) {
		MBX_WARN(FI_LOG_EP_DATA, "cannot add %s to the datagram AV\n", p->name);
		munmap(np->ring, mbx_param.net_ring_size);
		mbu_slots_put(&n->ids, np->id);
		free(np);
		return -FI_EHOSTUNREACH;
	}
	memset(&np->sh, 0, sizeof(np->sh));
	mbu_ring_prod_init(&p->prod, &np->sh, np->ring, mbx_param.net_ring_size);
	mbu_ring_cons_init(&np->cons, &np->sh, np->ring, mbx_param.net_ring_size);
	mbu_rel_tx_init(&np->rtx, mbx_param.net_rto_ms * 1000000ULL,
			(uint32_t)mbx_param.net_tries);
	mbu_rel_rx_init(&np->rrx);
	mbu_dlist_init(&np->inq);
	mbu_dlist_init(&np->early);
	mbu_dlist_init(&np->uops);
	mbu_dlist_init(&np->flush_link);
	np->p = p;
	np->last_rx_ns = np->last_act_ns = mbu_now_ns();
	switch (mbx_param.conn_mode) {
	case MBX_CONN_STATIC:
	case MBX_CONN_ONDEMAND:
		np->want_conn = true;
		break;
	case MBX_CONN_PARTIAL:
		np->neighbour = np->want_conn = av_neighbour(ep, p);
		break;
	default:
		break;
	}
	p->net = np;
	p->cma_ok = false;
	p->eager_limit = n->pool_size[POOL_HI] - HDR - sizeof(struct mbx_wire) - MBX_WIRE_OP_HDR_MAX;
	if (p->eager_limit > ep->eager_limit)
		p->eager_limit = ep->eager_limit;
	p->piece_limit = n->pool_size[POOL_BIG] - HDR - sizeof(struct mbx_wire);
	mbu_dlist_insert_tail(&np->link, &n->peers);
	n->st.peers++;
	ep->net_mask = 0;
	return 0;
}

/* Everything we wrote into the peer's ring, it said it took. */
static bool ring_home(const struct cring *r)
{
	return !r || !r->tx_on ||
	       __atomic_load_n((const uint64_t *)(r->mem + 2 * r->size), __ATOMIC_ACQUIRE) ==
	       r->tx_pos;
}

/* After its connection's endpoint: nothing writes into it any more. */
static void ring_free(struct cring *r)
{
	mbu_dlist_remove(&r->link);
	if (r->mr)
		fi_close(&r->mr->fid);
	munmap(r->mem, r->maplen);
	free(r);
}

static void conn_free(struct mbx_conn *c)
{
	mbu_dlist_remove(&c->link);
	if (c->ep)
		fi_close(&c->ep->fid);
	if (c->ring)
		ring_free(c->ring);
	free(c);
}

/* Closing the core endpoint flushes what is still queued on it into the CQ
 * as error completions whose buffers name this connection, so its memory
 * stays until the last of them has been read (conn_op_done()). */
static void conn_close(struct mbx_conn *c)
{
	if (c->ep) {
		fi_close(&c->ep->fid);
		c->ep = NULL;
	}
	if (!c->inflight)
		conn_free(c);
}

/* A send or read posted on b->conn completed, failed or was flushed. */
static void conn_op_done(struct nbuf *b)
{
	struct mbx_conn *c = b->conn;

	if (!c)
		return;
	b->conn = NULL;
	if (b->kind == NB_READ)
		c->read_bytes -= b->len;
	if (!--c->inflight && c->state == C_DEAD && !c->ep)
		conn_free(c);
}

/* Detach a connection from its peer; it is closed a little later, so that
 * completions already queued for it still find their buffers. */
static void conn_retire(struct mbx_net *n, struct mbx_conn *c, bool counted)
{
	struct mbx_npeer *np = c->np;

	if (np) {
		struct ncls *cl = &np->cl[c->cls];

		/* The caller's operations on it complete (flushed) with no
		 * peer to account them to; those not started fail. */
		if (c->cls == CL_HI && cl->conn == c) {
			uops_detach(n->ep, np);
			np->core_hold = false;
		}
		if (cl->conn == c) {
			cl->conn = NULL;
			if (c->cls == CL_HI) {
				np->hi_sends_in = 0;
				np->tell_held = false;
				while (!mbu_dlist_empty(&np->early))
					mbu_dlist_insert_tail(mbu_dlist_pop(&np->early), &np->inq);
			}
			mbu_credit_close(&cl->rx, &n->committed[c->cls]);
			/* Reads on it may never complete: ask by clear-to-send. */
			while (c->cls == CL_HI && !mbu_dlist_empty(&np->p->reading)) {
				struct mbx_rx *rx = mbu_container_of(np->p->reading.next,
								     struct mbx_rx, link);

				mbx_net_read_done(n->ep, np->p, rx, rx->msg_id, -FI_ECONNABORTED);
			}
		}
		if (cl->out == c)
			cl->out = NULL;
		if (cl->in == c)
			cl->in = NULL;
		np->closing = false;
	}
	if (counted && c->state == C_UP) {
		n->nconns[c->cls]--;
		if (c->cls == CL_HI) {
			n->st.conns_open = n->nconns[CL_HI];
			n->st.conns_closed++;
		} else {
			n->st.lo_conns_open = n->nconns[CL_LO];
		}
	}
	if (c->ring) {
		/* No longer polled; freed with the connection. */
		mbu_dlist_remove(&c->ring->link);
		mbu_dlist_init(&c->ring->link);
		if (n->st.rings_open)
			n->st.rings_open--;
	}
	c->np = NULL;
	c->state = C_DEAD;
	c->dead_ns = mbu_now_ns();
}

void mbx_net_peer_fini(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbx_npeer *np = p->net;
	struct mbx_net *n = ep->net;
	struct nbuf *b;

	if (!np)
		return;
	for (int k = 0; k < CL_N; k++) {
		if (np->cl[k].conn)
			conn_retire(n, np->cl[k].conn, true);
		if (np->cl[k].out)
			conn_retire(n, np->cl[k].out, false);
		if (np->cl[k].in)
			conn_retire(n, np->cl[k].in, false);
	}
	while (!mbu_dlist_empty(&np->inq))
		nb_put(n, mbu_container_of(mbu_dlist_pop(&np->inq), struct nbuf, link));
	while (!mbu_dlist_empty(&np->early))
		nb_put(n, mbu_container_of(mbu_dlist_pop(&np->early), struct nbuf, link));
	for (uint32_t i = 0; i < n->nrdone; i++)
		if (n->rdone[i].p == p)
			n->rdone[i].p = NULL;
	while ((b = mbu_rel_rx_pop(&np->rrx)))
		nb_put(n, b);
	for (uint32_t i = 0; i < MBU_REL_WINDOW; i++) {
		if (np->rrx.held[i])
			nb_put(n, np->rrx.held[i]);
		if (np->rtx.ent[i].pkt)
			nb_put(n, np->rtx.ent[i].pkt);
	}
	ckeys_forget(n, np);
	mbu_dlist_remove(&np->link);
	mbu_dlist_remove(&np->flush_link);
	munmap(np->ring, mbx_param.net_ring_size);
	mbu_slots_put(&n->ids, np->id);
	free(np);
	p->net = NULL;
}

/* ---- connections ---- */

static int conn_setup(struct mbx_net *n, struct mbx_conn *c, struct fi_info *info)
{
	int ret;

	/* Transmits complete only where they ask to (every send and read
	 * does; ring writes mostly do not). */
	info->tx_attr->op_flags &= ~FI_COMPLETION;
	ret = fi_endpoint(n->mdom, info, &c->ep, c);
	if (ret)
		return ret;
	ret = fi_ep_bind(c->ep, &n->eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(c->ep, &n->mcq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (!ret)
		ret = fi_ep_bind(c->ep, &n->mcq->fid, FI_RECV);
	if (!ret)
		ret = fi_ep_bind(c->ep, &n->srx[c->cls]->fid, 0);
	if (!ret)
		ret = fi_enable(c->ep);
	return ret;
}

/* A failed attempt of this class waits 10 ms, doubling up to 640 ms; the
 * other class of the same peer is not held back by it. */
static void back_off(struct ncls *cl)
{
	cl->retry_ns = mbu_now_ns() + (10000000ULL << (cl->retries < 6 ? cl->retries : 6));
	cl->retries++;
}

/* Busy connections (see mbu_conn_budget), up or on their way. Our own
 * requests still under way count when we ask, not when a peer asks: if
 * they did, in a storm where every rank has asked its budget's worth,
 * every rank would decline every other and nobody would connect. So a
 * process can end with up to twice its budget, never more. */
static uint32_t busy_conns(struct mbx_net *n, bool asking)
{
	struct mbu_dlist *it;
	uint32_t k = 0;

	mbu_dlist_foreach(&n->conns, it) {
		struct mbx_conn *c = mbu_container_of(it, struct mbx_conn, link);

		k += c->busy && c->np && c->state != C_DEAD && (asking || c->state != C_CONNECTING);
	}
	return k;
}

static bool budget_full(struct mbx_ep *ep, bool asking)
{
	uint32_t peers = ep->av ? (uint32_t)ep->av->count : 0;

	return busy_conns(ep->net, asking) >= mbu_conn_budget(peers, (uint32_t)mbx_param.conn_max);
}

static void conn_start(struct mbx_ep *ep, struct mbx_npeer *np, int cls, bool busy)
{
	struct mbx_net *n = ep->net;
	struct ncls *cl = &np->cl[cls];
	struct sockaddr_in sin;
	struct cm_param prm;
	struct mbx_conn *c;
	int ret;

	if (cl->conn || cl->out || cl->in || np->failed || mbu_now_ns() < cl->retry_ns)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	if (cls == CL_LO)
		use_lo(n);
	c->np = np;
	c->cls = (uint8_t)cls;
	c->busy = busy;
	c->out = true;
	c->state = C_CONNECTING;
	mbu_dlist_insert_tail(&c->link, &n->conns);
	n->eq_hot_ns = mbu_now_ns() + HOT_NS;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(np->p->addr.ip);
	sin.sin_port = htons((uint16_t)(np->p->addr.ports & 0xffff));
	memset(&prm, 0, sizeof(prm));
	prm.magic = NET_MAGIC;
	prm.src = ep->addr;
	prm.dst_ep = np->p->addr.ep;
	prm.dst_pid = np->p->addr.pid;
	prm.cls = (uint8_t)cls;
	prm.busy = busy;
	put24(prm.buf[CL_HI], n->pool_size[POOL_HI]);
	put24(prm.buf[CL_LO], n->pool_size[POOL_BIG]);
	prm.id = np->id;
	ret = conn_setup(n, c, n->minfo);
	if (!ret)
		ret = fi_connect(c->ep, &sin, &prm, sizeof(prm));
	if (ret) {
		MBX_WARN(FI_LOG_EP_CTRL, "connecting to %s: %s\n", np->p->name, fi_strerror(-ret));
		conn_close(c);
		back_off(cl);
		return;
	}
	cl->out = c;
}

static struct mbx_npeer *peer_of(struct mbx_ep *ep, const struct mbx_addr *a)
{
	struct mbx_peer *p = mbx_peer_get(ep, a);

	if (!p)
		return NULL;
	if (!p->net && (mbx_peer_connect(ep, p) || !p->net))
		return NULL;
	return p->net;
}

static void on_connreq(struct mbx_ep *ep, struct fi_eq_cm_entry *e, ssize_t len)
{
	struct mbx_net *n = ep->net;
	struct cm_param prm;
	struct mbx_npeer *np = NULL;
	struct cm_reject rej = { NET_MAGIC, REJ_SIZES };
	struct cm_accept acc = { NET_MAGIC, 0 };
	struct mbx_conn *c;
	struct ncls *cl;

	if ((size_t)len >= sizeof(*e) + sizeof(prm)) {
		memcpy(&prm, e->data, sizeof(prm));
		if (prm.magic == NET_MAGIC && prm.cls < CL_N && prm.id && prm.dst_ep == ep->addr.ep &&
		    prm.dst_pid == ep->addr.pid && prm.src.job == ep->addr.job &&
		    prm.src.uid == ep->addr.uid && prm.src.host != ep->addr.host)
			np = peer_of(ep, &prm.src);
	}
	if (!np) {
		n->st.bad_frames++;
		goto reject;
	}
	/* A frame larger than the buffer it lands in would break the
	 * connection: the sizes are a job-wide setting, checked here. */
	if (get24(prm.buf[CL_HI]) != n->pool_size[POOL_HI] ||
	    get24(prm.buf[CL_LO]) != n->pool_size[POOL_BIG]) {
		MBX_WARN(FI_LOG_EP_CTRL, "%s uses other net frame sizes (%u/%u bytes, here %zu/%zu): "
			 "FI_MATCHBOX_NET_EAGER and FI_MATCHBOX_NET_FRAME must match across the job\n",
			 np->p->name, get24(prm.buf[CL_HI]), get24(prm.buf[CL_LO]),
			 n->pool_size[POOL_HI], n->pool_size[POOL_BIG]);
		n->st.bad_frames++;
		fi_reject(n->pep, e->info->handle, &rej, sizeof(rej));
		fi_freeinfo(e->info);
		/* Both sides give up on the pair, or receives posted here for
		 * it would wait for ever. */
		if (!np->failed)
			np_fail(ep, np, "cannot share connections with this endpoint");
		return;
	}
	cl = &np->cl[prm.cls];
	if (cl->conn || cl->in)
		goto refuse;
	if (cl->out) {
		/* Both asked at once: the higher address's request wins. */
		if (addr_cmp(&prm.src, &ep->addr) < 0)
			goto refuse;
		/* Theirs replaces ours, with no budget check: a busy request
		 * of ours holds a place in the budget already, and one that
		 * was not busy (a large frame waits) must not be declined. */
		prm.busy = prm.busy && cl->out->busy;
		cl->out->np = NULL;	/* its refusal will close it */
		cl->out = NULL;
	} else if (prm.busy && budget_full(ep, false)) {
		goto over_budget;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto reject;
	if (prm.cls == CL_LO)
		use_lo(n);
	c->np = np;
	c->cls = prm.cls;
	c->busy = prm.busy != 0;
	c->their_id = prm.id;
	c->state = C_ACCEPTING;
	mbu_dlist_insert_tail(&c->link, &n->conns);
	n->eq_hot_ns = mbu_now_ns() + HOT_NS;
	acc.id = np->id;
	if (conn_setup(n, c, e->info) || fi_accept(c->ep, &acc, sizeof(acc))) {
		conn_close(c);
		goto reject;
	}
	cl->in = c;
	fi_freeinfo(e->info);
	return;
over_budget:
	/* It keeps the datagram channel; nothing is lost by declining. */
	n->st.conns_over_budget++;
	rej.reason = REJ_BUDGET;
	fi_reject(n->pep, e->info->handle, &rej, sizeof(rej));
	fi_freeinfo(e->info);
	return;
refuse:
	n->st.conns_refused++;
reject:
	fi_reject(n->pep, e->info->handle, NULL, 0);
	fi_freeinfo(e->info);
}

static void np_flush(struct mbx_ep *ep, struct mbx_npeer *np);
static void grant(struct mbx_ep *ep, struct mbx_npeer *np, int cls);

/* Lone frames (a ping-pong's) into a ring up to a 4 KiB message and its
 * headers where the route acknowledges at once: larger ones were slower by
 * ring than by send even there (doc/engines.md, session 47). */
#define RING_LONE_QUICK 4608u

/* The largest lone frame a connection's ring takes (ring_send): what
 * FI_MATCHBOX_CONN_RING_LONE says, else any over a core that is not TCP
 * (an adapter's RDMA write has no acknowledgement to delay), else
 * RING_LONE_QUICK if this host's route to the peer acknowledges TCP data
 * at once (`ip route ... quickack 1`), and none with Linux's default
 * delayed acknowledgements. */
static uint32_t ring_lone_max(const struct mbx_net *n, const struct mbx_npeer *np)
{
	int qa;

	if (mbx_param.conn_ring_lone != MBX_CONN_RING_LONE_AUTO)
		return (uint32_t)mbx_param.conn_ring_lone;
	if (!n->core_tcp)
		return UINT32_MAX;
	qa = mbu_route_quickack(np->p->addr.ip);
	MBX_INFO(FI_LOG_EP_CTRL, "route to %s: %s acknowledgements; lone frames up to %u bytes "
		 "by ring write\n", np->p->name, qa == 1 ? "quick" : qa == 0 ? "delayed" : "unknown",
		 qa == 1 ? RING_LONE_QUICK : 0);
	return qa == 1 ? RING_LONE_QUICK : 0;
}

/* A new high-class connection's ring, while the endpoint has fewer than
 * FI_MATCHBOX_CONN_RINGS: each is polled after every read of the CQ. */
static void ring_open(struct mbx_net *n, struct mbx_conn *c)
{
	uint64_t size = mbx_param.conn_ring;
	struct iovec iov;
	struct cring *r;
	int ret;

	if (!n->ring_ok || n->st.rings_open >= mbx_param.conn_rings)
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->c = c;
	r->size = size;
	r->lone_max = ring_lone_max(n, c->np);
	r->maplen = 2 * size + 4096;
	r->mem = mmap(NULL, r->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->mem == MAP_FAILED) {
		free(r);
		return;
	}
	mbu_dlist_init(&r->link);
	/* Frames tagged with an old lap's number, or user bytes that happen
	 * to sit where a trailer would, must not pass for this ring's. */
	r->nonce = mbu_now_ns() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)r->mem ^
		   (uint64_t)getpid() << 32;
	iov.iov_base = r->mem;
	iov.iov_len = 2 * size + sizeof(uint64_t);
	if (!++n->mr_key)
		n->mr_key = 1;
	ret = fi_mr_regv(n->mdom, &iov, 1, FI_REMOTE_WRITE, 0, n->mr_key, 0, &r->mr, NULL);
	if (ret) {
		MBX_INFO(FI_LOG_MR, "no connection ring: %s\n", fi_strerror(-ret));
		munmap(r->mem, r->maplen);
		free(r);
		n->ring_ok = false;
		return;
	}
	c->ring = r;
	mbu_dlist_insert_tail(&r->link, &n->rings);
	n->st.rings_open++;
	if (c->np->tell_held)
		ring_learn(c->np, r, &c->np->tell);
}

/* Our ring, told to the peer on the connection before any frame of ours
 * goes into its ring (it then knows where to tell us the room). */
static void ring_tell(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct mbx_net *n = ep->net;
	struct mbx_conn *c = np->cl[CL_HI].conn;
	struct cring *r = c->ring;
	struct ring_tell t;
	struct nbuf *b;

	if (r->told)
		return;
	b = nb_get(n, POOL_TINY, NB_TX);
	if (!b)
		return;
	t.base = n->minfo->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)r->mem
								      : 0;
	t.key = fi_mr_key(r->mr);
	t.size = r->size;
	t.nonce = r->nonce;
	fill_hdr(ep, np, b, NT_RING, CH_CONN, CHDR + (uint32_t)sizeof(t));
	memcpy(nb_frame(b), &t, sizeof(t));
	nb_hdr(b)->credits = np->cl[CL_HI].rx.owed;
	if (!conn_send(ep, np, CL_HI, b)) {
		mbu_credit_sent(&np->cl[CL_HI].rx);
		r->told = true;
	}
	nb_put(n, b);
}

static void on_connected(struct mbx_ep *ep, struct mbx_conn *c, const struct fi_eq_cm_entry *e,
			 ssize_t len)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np = c->np;
	struct ncls *cl = np ? &np->cl[c->cls] : NULL;
	struct cm_accept acc;

	if (!np || (cl->out != c && cl->in != c)) {
		conn_retire(n, c, false);
		return;
	}
	if (c->out) {
		/* Our frames on it must name us by the acceptor's id. */
		if ((size_t)len >= sizeof(*e) + sizeof(acc))
			memcpy(&acc, e->data, sizeof(acc));
		if ((size_t)len < sizeof(*e) + sizeof(acc) || acc.magic != NET_MAGIC || !acc.id) {
			MBX_WARN(FI_LOG_EP_CTRL, "%s accepted our connection without its id\n",
				 np->p->name);
			n->st.bad_frames++;
			back_off(cl);
			conn_retire(n, c, false);
			return;
		}
		c->their_id = acc.id;
		cl->out = NULL;
	} else {
		cl->in = NULL;
	}
	c->state = C_UP;
	cl->conn = c;
	/* Both sides start every connection at the smallest window; the
	 * receiver grows it (grant()) as far as its budget allows. */
	cl->credits = cl->peer_win = win_min(n);
	mbu_credit_open(&cl->rx, n->credits, &n->committed[c->cls]);
	cl->retries = 0;
	np->last_act_ns = mbu_now_ns();
	n->nconns[c->cls]++;
	if (c->cls == CL_HI) {
		if (c->out)
			n->st.conns_made++;
		else
			n->st.conns_accepted++;
		n->st.conns_open = n->nconns[CL_HI];
		if (n->nconns[CL_HI] > n->st.conns_max)
			n->st.conns_max = n->nconns[CL_HI];
	} else {
		n->st.lo_conns_made++;
		n->st.lo_conns_open = n->nconns[CL_LO];
		if (n->nconns[CL_LO] > n->st.lo_conns_max)
			n->st.lo_conns_max = n->nconns[CL_LO];
	}
	post_srq(n, c->cls);
	if (c->cls == CL_HI) {
		ring_open(n, c);
		if (c->ring)
			ring_tell(ep, np);
	}
	grant(ep, np, c->cls);
	np_flush(ep, np);
}

static uint32_t reject_reason(const struct fi_eq_err_entry *err)
{
	struct cm_reject rej;

	if (err->err != FI_ECONNREFUSED || !err->err_data || err->err_data_size < sizeof(rej))
		return 0;
	memcpy(&rej, err->err_data, sizeof(rej));
	return rej.magic == NET_MAGIC ? rej.reason : 0;
}

/* An EQ entry with room for the connection data a peer sends. */
union cm_event {
	struct fi_eq_cm_entry cm;
	char buf[sizeof(struct fi_eq_cm_entry) + 256];
};

static void read_eq(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	union cm_event u;
	uint32_t event, why;
	ssize_t ret;

	for (;;) {
		ret = fi_eq_read(n->eq, &event, &u, sizeof(u), 0);
		if (ret == -FI_EAVAIL) {
			struct fi_eq_err_entry err = { 0 };
			struct mbx_conn *c;

			if (fi_eq_readerr(n->eq, &err, 0) < 0)
				return;
			if (!err.fid || err.fid == &n->pep->fid)
				continue;
			c = err.fid->context;
			why = c && c->np ? reject_reason(&err) : 0;
			if (why == REJ_SIZES) {
				struct mbx_npeer *np = c->np;

				conn_retire(n, c, false);
				np_fail(ep, np, "refused our connection: other net frame sizes "
					"(FI_MATCHBOX_NET_EAGER and FI_MATCHBOX_NET_FRAME must match "
					"across the job)");
				continue;
			}
			if (why == REJ_BUDGET) {
				/* Its budget is full: stay on datagrams, ask later. */
				c->np->budget_retry_ns = mbu_now_ns() + BUDGET_RETRY_NS;
				c->np->msgs = 0;
				n->st.conns_over_budget++;
			} else if (c && c->np) {
				back_off(&c->np->cl[c->cls]);
			}
			if (c)
				conn_retire(n, c, false);
			continue;
		}
		if (ret < 0)
			return;
		switch (event) {
		case FI_CONNREQ:
			on_connreq(ep, &u.cm, ret);
			break;
		case FI_CONNECTED:
			on_connected(ep, u.cm.fid->context, &u.cm, ret);
			break;
		case FI_SHUTDOWN: {
			struct mbx_conn *c = u.cm.fid->context;

			/* Frames written into the peer's ring that it never
			 * said it took went down with the connection. */
			if (c->np && !c->np->failed && c->np->cl[CL_HI].conn == c &&
			    !ring_home(c->ring))
				np_fail(ep, c->np, "lost ring frames with its broken connection");
			else
				conn_retire(n, c, true);
			break;
		}
		default:
			break;
		}
	}
}

/* ---- sending ---- */

static void sent(struct mbx_net *n, struct nbuf *b)
{
	if (b->peer) {
		mbx_net_sent(n->ep, b->peer, b->txid);
		b->peer = NULL;
	}
}

static void rel_release(void *pkt, void *arg)
{
	sent(arg, pkt);
	nb_put(arg, pkt);
}

static void track(struct nbuf *b, struct mbx_peer *p, const struct mbu_frame *f)
{
	const struct mbx_wire *w = (const struct mbx_wire *)f;

	if (f->len >= sizeof(*w) && w->op == MBX_OP_EAGER) {
		b->peer = p;
		b->txid = w->id;
	}
}

static void put_ack(struct mbx_npeer *np, struct nhdr *h)
{
	mbu_rel_rx_ack(&np->rrx, &h->cum, &h->sack);
	h->flags |= NF_ACK;
	np->need_ack = np->ack_now = false;
	np->unacked = 0;
}

static bool dgram_room(const struct mbx_net *n)
{
	return n->dsends < DGRAM_SENDS_MAX;
}

static int dgram_send(struct mbx_net *n, struct mbx_npeer *np, struct nbuf *b)
{
	int ret;

	/* Hot either way: the completions that make room are read then. */
	n->dgram_hot_ns = mbu_now_ns() + HOT_NS;
	if (!dgram_room(n))
		return -FI_EAGAIN;
	ret = (int)fi_send(n->uep, b->d, b->len, NULL, np->uaddr, &b->ctx);
	if (!ret) {
		b->refs++;
		n->dsends++;
	}
	return ret;
}

struct resend_arg {
	struct mbx_net *n;
	struct mbx_npeer *np;
};

static void resend(uint32_t seq, void *pkt, void *arg)
{
	struct resend_arg *a = arg;
	struct nbuf *b = pkt;

	(void)seq;
	put_ack(a->np, nb_hdr(b));
	a->n->st.retransmits++;
	(void)dgram_send(a->n, a->np, b);
}

static bool cl_up(const struct ncls *cl)
{
	return cl->conn && cl->conn->state == C_UP;
}

static int conn_send(struct mbx_ep *ep, struct mbx_npeer *np, int cls, struct nbuf *b)
{
	struct mbx_conn *c = np->cl[cls].conn;
	struct iovec iov = { b->d, b->len };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .context = &b->ctx };
	int ret;

	/* Completions are asked for (the connections bind theirs selective,
	 * for the ring writes that go without); the frame says how many of
	 * ours went into the peer's ring before it. */
	if (c->ring)
		nb_hdr(b)->xcount = (uint32_t)c->ring->tx_seq;
	ret = (int)fi_sendmsg(c->ep, &msg, FI_COMPLETION);
	if (ret)
		return ret;
	b->conn = c;
	c->inflight++;
	b->refs++;	/* until its send completes */
	if (nb_hdr(b)->type == NT_DATA) {
		if (c->ring && cls == CL_HI)
			c->ring->tx_sends++;
		if (cls == CL_HI)
			ep->net->st.conn_msgs++;
		else
			ep->net->st.lo_msgs++;
	}
	return 0;
}

/* A control frame with no payload: ACK and PROBE on the datagram channel,
 * CREDIT and CLOSE_* on a connection of class `cls`. */
static int send_ctl(struct mbx_ep *ep, struct mbx_npeer *np, uint8_t type, int cls)
{
	struct mbx_net *n = ep->net;
	bool dgram = type == NT_ACK || type == NT_PROBE;
	uint8_t chan = dgram ? CH_DGRAM : CH_OF(cls);
	struct ncls *cl = &np->cl[cls];
	struct nbuf *b;
	int ret;

	if (!dgram && !cl_up(cl))
		return -FI_ENOTCONN;
	b = nb_get(n, POOL_TINY, NB_TX);
	if (!b)
		return -FI_EAGAIN;
	fill_hdr(ep, np, b, type, chan, hdr_len(chan));
	if (dgram) {
		put_ack(np, nb_hdr(b));
		if (type == NT_PROBE) {
			int64_t seq = mbu_rel_tx_push(&np->rtx, b, mbu_now_ns());

			if (seq < 0) {
				nb_put(n, b);
				return -FI_EAGAIN;
			}
			nb_hdr(b)->seq = (uint32_t)seq;
			b->refs++;	/* the reliability window's reference */
		}
		ret = dgram_send(n, np, b);
	} else {
		nb_hdr(b)->credits = cl->rx.owed;
		ret = conn_send(ep, np, cls, b);
		if (!ret)
			mbu_credit_sent(&cl->rx);
	}
	nb_put(n, b);
	return ret;
}

/* The wire operation a frame carries, 0 if it is too short to say. */
static uint8_t frame_op(const struct mbu_frame *f)
{
	const struct mbx_wire_small *w = (const struct mbx_wire_small *)f;

	return f->len >= sizeof(*w) ? w->op : 0;
}

/* DATA frames of clear-to-send transfers go by the low class; everything
 * the matcher must see in order goes by the high one. */
static int frame_cls(const struct mbu_frame *f)
{
	return frame_op(f) == MBX_OP_DATA ? CL_LO : CL_HI;
}

/* The peer passed the message threshold: a connection if the budgets of
 * both sides allow (the peer's says so by declining). Otherwise it is
 * looked at again after another threshold of messages. */
static void busy_peer(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct ncls *cl = &np->cl[CL_HI];

	if (cl->conn || cl->out || cl->in)
		return;
	if (mbu_now_ns() < np->budget_retry_ns) {
		np->msgs = 0;
	} else if (budget_full(ep, true)) {
		ep->net->st.conns_over_budget++;
		np->msgs = 0;
	} else {
		conn_start(ep, np, CL_HI, true);
	}
}

/* A high-class frame that must go by connection: too big for a datagram,
 * or a frame of a rendezvous (anything but a small message of the
 * application's or the acknowledgement of one), which stays with the
 * connection its data is read over. */
static bool needs_conn(const struct mbu_frame *f, uint32_t len)
{
	uint8_t op = frame_op(f);

	return len > DGRAM_MAX || (op != MBX_OP_SMALL && op != MBX_OP_EAGER && op != MBX_OP_ACK);
}

/* A high-class frame to a peer whose connection is up goes by datagram
 * anyway when that is the faster channel (over tcp/udp a small message's
 * round trip took 11.9 us by datagram and 15.1 by connection), it fits,
 * nothing sent on the connection is still waiting for the peer's matcher
 * (so it cannot overtake), and no frame needed the connection in the last
 * STAY_NS (a stream of mixed sizes would otherwise wait for the datagrams'
 * acknowledgements at every large frame). Only small messages go: the
 * frames of a rendezvous (RTS, clear-to-send, FIN) stay with the connection
 * its data is read over (by datagram each would cost a system call and an
 * acknowledgement more; the bandwidth loss I first measured for it was
 * within this bed's noise). Modes that keep a peer off datagrams keep it
 * off. */
#define STAY_NS	TICK_NS
static bool small_by_dgram(const struct mbx_net *n, const struct mbx_npeer *np, bool need,
			   uint64_t now)
{
	return n->small_dgram && !np->want_conn && !need && now >= np->conn_until_ns &&
	       np->conn_seen == np->conn_sent && !np->core_mark;
}

/* Frames after `f` in the ring that may share its send on the high-class
 * connection: of that class, ones that go by connection anyway (not a
 * small message, which may take a datagram, nor an eager one, whose send
 * completes when its own frame has left), all fitting one receive buffer.
 * Returns the message's length, net header included, and in *cnt the
 * frames it carries; nothing is consumed. A stream of RMA operations or
 * their answers so costs one send and one receive a batch, not a frame. */
static uint32_t batch(const struct mbx_net *n, const struct mbx_npeer *np,
		      const struct mbu_frame *f, uint32_t *cnt)
{
	struct mbu_ring_cons c = np->cons;
	uint32_t len = CHDR + f->len, cap = (uint32_t)n->pool_size[POOL_HI];
	struct mbu_frame *g;

	*cnt = 1;
	c.pos += mbu_ring_padded(f->len);
	while (*cnt < BATCH_MAX && mbu_ring_peek(&c, &g) == MBU_RING_FRAME) {
		uint8_t op = frame_op(g);

		if (frame_cls(g) != CL_HI || op == MBX_OP_SMALL || op == MBX_OP_EAGER ||
		    op == MBX_OP_ACK || MBU_BATCH_STEP(len) + g->len > cap)
			break;
		len = MBU_BATCH_STEP(len) + g->len;
		++*cnt;
		c.pos += mbu_ring_padded(g->len);
	}
	return len;
}

/* Copies the `cnt` frames from `f` on into b, each 8-byte aligned (the
 * gaps zeroed: they go on the wire). */
static void batch_copy(const struct mbx_npeer *np, const struct mbu_frame *f, uint32_t cnt,
		       unsigned char *to)
{
	struct mbu_ring_cons c = np->cons;
	uint32_t off = 0;
	struct mbu_frame *g;

	for (uint32_t k = 0; k < cnt; k++) {
		if (k) {
			memset(to + off, 0, MBU_BATCH_STEP(off) - off);
			off = MBU_BATCH_STEP(off);
			c.pos += mbu_ring_padded(f->len);
			if (mbu_ring_peek(&c, &g) != MBU_RING_FRAME)
				break;	/* batch() saw it: cannot happen */
			f = g;
		}
		memcpy(to + off, f, f->len);
		off += f->len;
	}
}

/* ---- connection rings: sending ---- */

/* One write from our shadow into the peer's ring, the same bytes at the
 * same position. */
static int ring_write(struct mbx_net *n, struct cring *r, uint64_t off, uint64_t len)
{
	struct iovec iov = { r->mem + r->size + off, len };
	struct fi_rma_iov riov = { r->tx_base + off, len, r->tx_key };
	struct fi_msg_rma msg = { .msg_iov = &iov, .iov_count = 1, .rma_iov = &riov,
				  .rma_iov_count = 1 };
	struct nbuf *b = NULL;
	uint64_t flags = 0;
	int ret;

	if (r->tx_unsig + 1 >= RING_SIGNAL && (b = nb_get(n, POOL_TINY, NB_RWR))) {
		msg.context = &b->ctx;
		flags = FI_COMPLETION;
	}
	ret = (int)fi_writemsg(r->c->ep, &msg, flags);
	if (ret) {
		if (b)
			nb_put(n, b);
		return ret;
	}
	if (b) {
		b->conn = r->c;
		r->c->inflight++;
		r->tx_unsig = 0;
	} else {
		r->tx_unsig++;
	}
	return 0;
}

/* The frame of `len` bytes (net header and the `cnt` frames from f on)
 * into the peer's ring: 0 if written, -FI_EAGAIN if it must go by send
 * (no ring, no room, too large for a quarter of it, a lone frame larger
 * than the ring takes, or an eager send's completion with nowhere to
 * wait). */
static int ring_send(struct mbx_ep *ep, struct mbx_npeer *np, struct cring *r,
		     const struct mbu_frame *f, uint32_t cnt, uint32_t len)
{
	struct mbx_net *n = ep->net;
	const struct mbx_wire *w = (const struct mbx_wire *)f;
	bool eager = f->len >= sizeof(*w) && w->op == MBX_OP_EAGER;
	uint64_t need = RING_ALIGN(len) + RING_TRAILER, off, skip, taken;
	struct nhdr *h;
	int ret;

	if (!r || !r->tx_on || need > r->size / 4 || (eager && n->nrdone == RDONE_MAX))
		return -FI_EAGAIN;
	/* A lone frame, with nothing of ours untaken at the peer (a
	 * ping-pong), goes by send above r->lone_max: over tcp, written into
	 * the ring it put Linux into acknowledging from the reader's recv,
	 * 1-3 us later from 2 KiB up, unless the route acknowledges at once
	 * (doc/engines.md, sessions 46-47). Frames that follow others gain by
	 * the ring either way. */
	if (np->conn_sent == np->conn_seen && len > r->lone_max)
		return -FI_EAGAIN;
	off = r->tx_pos & (r->size - 1);
	skip = r->size - off < need ? r->size - off : 0;
	taken = __atomic_load_n((uint64_t *)(r->mem + 2 * r->size), __ATOMIC_ACQUIRE);
	if (r->tx_pos - taken + skip + need > r->size)
		return -FI_EAGAIN;
	if (skip >= CHDR + RING_TRAILER) {
		/* The rest of the lap, skipped: its own header says so. */
		h = (struct nhdr *)(r->mem + r->size + off);
		memset(h, 0, CHDR);
		h->magic = NET_MAGIC;
		h->version = NET_VERSION;
		h->type = NT_PAD;
		h->len = (uint32_t)(skip - RING_TRAILER);
		h->xcount = r->tx_sends;
		*(uint64_t *)((char *)h + h->len) = r->tx_nonce ^ r->tx_seq;
		ret = ring_write(n, r, off, skip);
		if (ret)
			return ret;
		r->tx_seq++;
	}
	if (skip) {
		r->tx_pos += skip;
		off = 0;
	}
	h = (struct nhdr *)(r->mem + r->size + off);
	fill_hdr_at(ep, np, h, NT_DATA, CH_CONN, len);
	h->credits = np->cl[CL_HI].rx.owed;
	h->xcount = r->tx_sends;
	batch_copy(np, f, cnt, (unsigned char *)h + CHDR);
	memset((char *)h + len, 0, RING_ALIGN(len) - len);
	*(uint64_t *)((char *)h + RING_ALIGN(len)) = r->tx_nonce ^ r->tx_seq;
	ret = ring_write(n, r, off, need);
	if (ret)
		return ret;
	r->tx_pos += need;
	r->tx_seq++;
	/* The frame is ours until the peer takes it, as a sent one is the
	 * core's: its send is done (once the caller has finished with it). */
	if (eager) {
		n->rdone[n->nrdone].p = np->p;
		n->rdone[n->nrdone++].id = w->id;
	}
	n->st.conn_msgs++;
	n->st.ring_msgs++;
	return 0;
}

/* Move frames from the peer's ring onto a channel, in order, as far as
 * credits, the datagram window and buffers allow. */
static void np_flush(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct mbx_net *n = ep->net;
	struct mbu_frame *f;
	int st = MBU_RING_EMPTY, ret;

	while (!np->failed && (st = mbu_ring_peek(&np->cons, &f)) == MBU_RING_FRAME) {
		uint32_t len = HDR + f->len;
		int cls = frame_cls(f);
		struct ncls *cl = &np->cl[cls];
		uint64_t now = mbu_now_ns();
		bool need = cls == CL_HI && needs_conn(f, len);
		struct nbuf *b;

		if (np->closing)
			return;
		if (cl_up(cl) && (cls == CL_LO || !small_by_dgram(n, np, need, now))) {
			uint32_t cnt = 1;

			if (cls == CL_HI && mbu_rel_tx_inflight(&np->rtx))
				return;	/* datagrams first, or the switch reorders */
			if (cls == CL_HI)
				len = batch(n, np, f, &cnt);
			else
				len = CHDR + f->len;
			if (cls == CL_HI && !ring_send(ep, np, cl->conn->ring, f, cnt, len)) {
				mbu_credit_sent(&cl->rx);
				goto sent;
			}
			if (!cl->credits) {
				n->st.credit_waits++;
				return;
			}
			b = nb_get(n, pool_for(n, len), NB_TX);
			if (!b)
				return;
			fill_hdr(ep, np, b, NT_DATA, CH_OF(cls), len);
			batch_copy(np, f, cnt, (unsigned char *)nb_frame(b));
			track(b, np->p, f);
			nb_hdr(b)->credits = cl->rx.owed;
			ret = conn_send(ep, np, cls, b);
			nb_put(n, b);
			if (ret)
				return;
			mbu_credit_sent(&cl->rx);
			cl->credits--;
sent:
			if (cls == CL_HI) {
				np->conn_sent++;
				np->core_mark = false;
				if (need || cnt > 1)
					np->conn_until_ns = now + STAY_NS;
			}
			/* All but the last frame sent; the last is consumed below. */
			while (--cnt) {
				mbu_ring_consume(&np->cons, f);
				if (mbu_ring_peek(&np->cons, &f) != MBU_RING_FRAME)
					return;	/* cannot happen: batch() saw it */
			}
		} else if (cls == CL_LO) {
			conn_start(ep, np, CL_LO, false);
			return;
		} else {
			int64_t seq;

			if (!cl_up(cl) && (np->want_conn || np->rdv_conn || len > DGRAM_MAX)) {
				conn_start(ep, np, CL_HI, false);
				return;
			}
			if (mbu_rel_tx_inflight(&np->rtx) >= MBU_REL_WINDOW || !dgram_room(n))
				return;
			b = nb_get(n, pool_for(n, len), NB_TX);
			if (!b)
				return;
			fill_hdr(ep, np, b, NT_DATA, CH_DGRAM, len);
			memcpy(nb_frame(b), f, f->len);
			track(b, np->p, f);
			put_ack(np, nb_hdr(b));
			seq = mbu_rel_tx_push(&np->rtx, b, now);
			nb_hdr(b)->seq = (uint32_t)seq;
			/* Lost here or on the wire alike: the timer sends it again. */
			(void)dgram_send(n, np, b);
			n->st.dgram_msgs++;
			/* (static and ondemand peers never get here: want_conn) */
			if (n->busy_threshold && ++np->msgs >= n->busy_threshold)
				busy_peer(ep, np);
			/* Operations that would rather go by connection (RMA,
			 * atomics and their answers) make a peer busy too, even
			 * where small messages keep to datagrams: a stream of
			 * them moves faster by connection, batched (8-byte
			 * fi_writes 2.1 against 0.9 MB/s, at the same latency). */
			else if (need && ++np->msgs >= BUSY_MSGS)
				busy_peer(ep, np);
		}
		mbu_ring_consume(&np->cons, f);
		np->last_act_ns = now;
	}
	if (st == MBU_RING_CORRUPT)
		MBX_WARN(FI_LOG_EP_DATA, "staging ring to %s is corrupt\n", np->p->name);
}

/* Frames are waiting in the peer's ring: flushed now, or, while a batch of
 * completions is handled (read_cqs), after it. */
static void np_flush_soon(struct mbx_ep *ep, struct mbx_npeer *np)
{
	if (ep->net->holding) {
		if (mbu_dlist_empty(&np->flush_link))
			mbu_dlist_insert_tail(&np->flush_link, &ep->net->flushq);
		return;
	}
	np_flush(ep, np);
}

void mbx_net_kick(struct mbx_ep *ep, struct mbx_peer *p)
{
	np_flush_soon(ep, p->net);
}

/* ---- receiving ---- */

/* The checks every net frame passes: the sizes, then, by datagram, the
 * addresses; by connection, the sender is looked up by its id (NULL: not a
 * peer of ours now). */
static struct mbx_npeer *hdr_check(struct mbx_ep *ep, const struct nhdr *h, uint32_t got,
				   uint8_t chan)
{
	uint32_t hl = hdr_len(chan);

	if (got < hl || h->magic != NET_MAGIC || h->version != NET_VERSION ||
	    h->len != got || h->chan != chan || !h->type || h->type >= NT_MAX)
		return NULL;
	if (h->type == NT_DATA) {
		/* One frame, or on a high-class connection a batch of them. */
		if (!mbu_batch_count((const unsigned char *)h + hl, got - hl,
				     chan == CH_CONN ? BATCH_MAX : 1))
			return NULL;
	} else if (got != hl + (h->type == NT_RING && chan == CH_CONN ? sizeof(struct ring_tell)
									: 0)) {
		return NULL;
	}
	if (chan != CH_DGRAM)
		return mbu_slots_find(&ep->net->ids, h->peer);
	if (h->src.job != ep->addr.job || h->src.uid != ep->addr.uid ||
	    h->src.host == ep->addr.host || !h->src.ip || h->src.pid <= 0)
		return NULL;
	if (h->dst_ep != ep->addr.ep || h->dst_pid != ep->addr.pid)
		return NULL;
	return peer_of(ep, &h->src);
}

static struct mbx_npeer *hdr_ok(struct mbx_ep *ep, struct nbuf *b, uint32_t got, uint8_t chan)
{
	struct mbx_npeer *np = hdr_check(ep, nb_hdr(b), got, chan);

	b->hlen = (uint8_t)hdr_len(chan);
	return np;
}

/* 1: every frame in it taken (or dropped as malformed); 0: the matcher
 * cannot take the next one now, and b->off says where to go on. hdr_ok
 * has checked the frames' lengths against the message's. */
static int deliver_at(struct mbx_ep *ep, struct mbx_npeer *np, const unsigned char *fr,
		      uint32_t end, uint32_t *off)
{
	while (*off < end) {
		const struct mbu_frame *f = (const void *)(fr + *off);
		int r = mbx_deliver_frame(ep, np->p, f);

		if (r == 0)
			return 0;
		if (r < 0)
			ep->net->st.bad_frames++;
		*off += MBU_BATCH_STEP(f->len);
		if (!np->p->net)
			return 1;	/* failed while delivering */
	}
	return 1;
}

static int deliver(struct mbx_ep *ep, struct mbx_npeer *np, struct nbuf *b)
{
	return deliver_at(ep, np, (const unsigned char *)nb_frame(b), nb_hdr(b)->len - b->hlen,
			  &b->off);
}

/* Half the window consumed: give it back now, not at the next tick, or a
 * streaming sender stalls on credits. */
static void return_credits(struct mbx_ep *ep, struct mbx_npeer *np, int cls)
{
	struct ncls *cl = &np->cl[cls];

	if (cl->rx.owed && cl->rx.owed * 2 >= win_target(ep->net, cls) && cl_up(cl))
		send_ctl(ep, np, NT_CREDIT, cls);
}

/* Grow the peer's window toward the target (connections closed, or this
 * one is new): buffers first, then the credits. */
static void grant(struct mbx_ep *ep, struct mbx_npeer *np, int cls)
{
	struct mbx_net *n = ep->net;
	struct ncls *cl = &np->cl[cls];

	if (!cl_up(cl) || !mbu_credit_grow(&cl->rx, win_target(n, cls), &n->committed[cls]))
		return;
	post_srq(n, cls);
	send_ctl(ep, np, NT_CREDIT, cls);
}

/* A frame that came in a shared receive queue's buffer was consumed: its
 * credit goes back to the sender (return_credits() decides when). */
static void consumed(struct mbx_net *n, struct mbx_npeer *np, struct nbuf *b)
{
	int cls = srx_cls(b);

	if (b->kind == NB_RING)
		np->conn_consumed++;
	if (cls < 0)
		return;
	mbu_credit_consumed(&np->cl[cls].rx, win_target(n, cls), &n->committed[cls]);
	if (cls == CL_HI && nb_hdr(b)->type == NT_DATA)
		np->conn_consumed++;
}

static void np_deliver(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct mbx_net *n = ep->net;
	struct nbuf *b;

	while (!mbu_dlist_empty(&np->inq)) {
		b = mbu_container_of(np->inq.next, struct nbuf, link);
		if (!deliver(ep, np, b))
			return;
		mbu_dlist_remove(&b->link);
		consumed(n, np, b);
		nb_put(n, b);
		if (!np->p->net)
			return;	/* failed while delivering */
		return_credits(ep, np, CL_HI);
	}
	while ((b = mbu_rel_rx_pop(&np->rrx))) {
		if (nb_hdr(b)->type != NT_DATA) {
			nb_put(n, b);
			continue;
		}
		if (!deliver(ep, np, b)) {
			mbu_dlist_insert_tail(&b->link, &np->inq);
			return;
		}
		nb_put(n, b);
	}
}

static void on_dgram(struct mbx_ep *ep, struct nbuf *b, uint32_t got)
{
	struct mbx_net *n = ep->net;
	struct nhdr *h = nb_hdr(b);
	struct mbx_npeer *np;

	if (!(np = hdr_ok(ep, b, got, CH_DGRAM))) {
		n->st.bad_frames++;
		nb_put(n, b);
		return;
	}
	np->last_rx_ns = mbu_now_ns();
	n->dgram_hot_ns = np->last_rx_ns + HOT_NS;
	mbu_count_seen(&np->conn_seen, h->consumed, np->conn_sent);
	if (h->flags & NF_ACK)
		mbu_rel_tx_ack(&np->rtx, h->cum, h->sack, rel_release, n);
	if (h->type == NT_DATA || h->type == NT_PROBE) {
		bool in_order = h->seq == np->rrx.expect;
		enum mbu_rel_verdict v = mbu_rel_rx_push(&np->rrx, h->seq, b);

		if (!np->need_ack)
			np->ack_poll = n->polls;
		np->need_ack = true;
		np->ack_now |= !in_order || h->type == NT_PROBE || ++np->unacked >= ACK_EVERY;
		if (v != MBU_REL_ACCEPT) {
			n->st.duplicates += v == MBU_REL_DUPLICATE;
			nb_put(n, b);
			return;
		}
		if (mbu_dlist_empty(&np->inq))
			np_deliver(ep, np);
		return;
	}
	nb_put(n, b);
}

/* Every class's connection to the peer goes; `shut` on the side that
 * asked, whose shutdown tells the other side's provider. */
static void close_all(struct mbx_net *n, struct mbx_npeer *np, bool shut)
{
	np->rdv_conn = false;
	for (int k = 0; k < CL_N; k++) {
		struct mbx_conn *c = np->cl[k].conn;

		if (!c)
			continue;
		conn_retire(n, c, true);
		if (shut && c->ep)
			fi_shutdown(c->ep, 0);
	}
}

/* Nothing of ours unconsumed at the peer, on any class. */
static bool credits_home(const struct mbx_npeer *np)
{
	for (int k = 0; k < CL_N; k++)
		if (cl_up(&np->cl[k]) && np->cl[k].credits < np->cl[k].peer_win)
			return false;
	return !cl_up(&np->cl[CL_HI]) || ring_home(np->cl[CL_HI].conn->ring);
}

static void on_close_req(struct mbx_ep *ep, struct mbx_npeer *np, int cls)
{
	struct mbu_frame *f;
	bool quiet = mbu_ring_peek(&np->cons, &f) == MBU_RING_EMPTY &&
		     mbu_dlist_empty(&np->inq) && credits_home(np) &&
		     !mbu_rel_tx_inflight(&np->rtx) && !np->core_ops;

	if (!quiet) {
		send_ctl(ep, np, NT_CLOSE_NAK, cls);
		return;
	}
	/* Agreed: nothing more goes out on them; the asking side shuts them.
	 * An RMA of ours started on the core now would find it shut. */
	if (!send_ctl(ep, np, NT_CLOSE_ACK, cls))
		close_all(ep->net, np, false);
	else
		np->core_hold = true;
}

/* What every connection frame says besides its own business, by send or
 * by ring: how far the peer has taken ours, credits, its window. True if
 * it brought credits. */
static bool conn_hdr(struct mbx_ep *ep, struct mbx_npeer *np, int cls, const struct nhdr *h)
{
	struct mbx_net *n = ep->net;
	struct ncls *cl = &np->cl[cls];
	bool credited;

	np->last_rx_ns = np->last_act_ns = mbu_now_ns();
	mbu_count_seen(&np->conn_seen, h->consumed, np->conn_sent);
	credited = h->credits && h->credits <= n->credits && cl->credits + h->credits <= n->credits;
	if (credited)
		cl->credits += h->credits;
	else if (h->credits)
		n->st.bad_frames++;
	if (h->win >= win_min(n) && h->win <= n->credits)
		cl->peer_win = h->win;
	return credited;
}

/* A high-class DATA frame goes to the matcher after whatever came earlier
 * by datagram. */
static void data_in(struct mbx_ep *ep, struct mbx_npeer *np, struct nbuf *b)
{
	void *held;

	while ((held = mbu_rel_rx_pop(&np->rrx)))
		mbu_dlist_insert_tail(&((struct nbuf *)held)->link, &np->inq);
	mbu_dlist_insert_tail(&b->link, &np->inq);
	np_deliver(ep, np);
}

/* ---- connection rings: receiving ---- */

/* The frame at the head of r, if it is whole: its header (NULL if none)
 * and the position it starts at. A lap's last bytes, too few for a header
 * and trailer, are skipped by both sides without a word. The length is
 * read before the trailer it leads to, and is bounded by the lap: a stale
 * or half-written one points at bytes that are not this frame's tag. */
static const struct nhdr *ring_head(const struct cring *r, uint64_t *pos, uint32_t *lenp)
{
	uint64_t at = r->rx_pos, off = at & (r->size - 1), tail = r->size - off;
	const struct nhdr *h;
	uint32_t len;

	if (tail < CHDR + RING_TRAILER) {
		at += tail;
		off = 0;
		tail = r->size;
	}
	h = (const struct nhdr *)(r->mem + off);
	len = __atomic_load_n(&h->len, __ATOMIC_RELAXED);
	if (len < CHDR || RING_ALIGN(len) + RING_TRAILER > tail)
		return NULL;
	if (__atomic_load_n((const uint64_t *)(r->mem + off + RING_ALIGN(len)), __ATOMIC_ACQUIRE) !=
	    (r->nonce ^ r->rx_seq))
		return NULL;
	*pos = at;
	*lenp = len;
	return h;
}

/* Tells the peer how far it may write: after a quarter of the ring, or
 * (`all`) whatever was taken, when the connection goes quiet. An 8-byte
 * inject write into its room word, with no completion on either side. */
static void ring_room(struct cring *r, bool all)
{
	uint64_t v = r->rx_pos;

	if (!r->peer || v == r->rx_told || (!all && v - r->rx_told < r->size / 4))
		return;
	if (!fi_inject_write(r->c->ep, &v, sizeof(v), 0, r->tx_base + 2 * r->size, r->tx_key))
		r->rx_told = v;
}

/* A ring frame of `len` bytes in a buffer of ours; NULL, the peer failed,
 * without memory for it. */
static struct nbuf *ring_copy_out(struct mbx_ep *ep, struct mbx_npeer *np, const struct nhdr *h,
				  uint32_t len)
{
	struct nbuf *b = nb_get(ep->net, pool_for(ep->net, len), NB_RING);

	if (!b) {
		np_fail(ep, np, "left a frame untaken: no memory");
		return NULL;
	}
	memcpy(b->d, h, len);
	return b;
}

/* A DATA frame from the ring (checked, `len` bytes): taken where it lies
 * if nothing is waiting before it, copied out if the matcher cannot take
 * all of it now; its place is free either way. `b`: it was copied out
 * before it was checked. */
static void ring_take(struct mbx_ep *ep, struct mbx_npeer *np, const struct nhdr *h,
		      uint32_t len, struct nbuf *b)
{
	const unsigned char *fr = (const unsigned char *)h + CHDR;
	uint32_t end = len - CHDR, off = 0;
	bool credited = conn_hdr(ep, np, CL_HI, h);

	if (!b && mbu_dlist_empty(&np->inq) && !mbu_rel_rx_peek(&np->rrx)) {
		if (deliver_at(ep, np, fr, end, &off)) {
			np->conn_consumed++;
			goto out;
		}
		if (!np->p->net)
			return;
	}
	if (!b && !(b = ring_copy_out(ep, np, h, len)))
		return;
	b->hlen = (uint8_t)CHDR;
	b->len = len;
	b->off = off;
	data_in(ep, np, b);
out:
	if (credited && np->p->net)
		np_flush_soon(ep, np);
}

static void early_in(struct mbx_ep *ep, struct mbx_npeer *np, struct cring *r);

/* Takes the whole frames at the head of r that may go now: a frame waits
 * while frames sent before it by send are still to come. */
static void ring_poll(struct mbx_ep *ep, struct cring *r)
{
	struct mbx_net *n = ep->net;
	const struct nhdr *h;
	uint64_t pos;
	uint32_t len;

	while (r->c->np && !r->c->np->failed && (h = ring_head(r, &pos, &len))) {
		struct mbx_npeer *np = r->c->np;
		struct nbuf *b = NULL;

		/* A skip counts among the ring's frames too: it waits its turn. */
		if (h->xcount != np->hi_sends_in)
			break;
		r->rx_seq++;
		if (h->type == NT_PAD && h->magic == NET_MAGIC) {
			r->rx_pos = pos + (r->size - (pos & (r->size - 1)));
		} else {
			r->rx_pos = pos + RING_ALIGN(len) + RING_TRAILER;
			/* A core that places data while we read (an adapter's
			 * RDMA) could change a frame between its check and its
			 * use: there it is copied out first. No sender of ours
			 * writes a frame larger than a receive buffer. */
			bool fits = len <= n->pool_size[POOL_HI];

			if (fits && !n->core_tcp) {
				if (!(b = ring_copy_out(ep, np, h, len)))
					return;
				h = nb_hdr(b);
			}
			if (fits && hdr_check(ep, h, len, CH_CONN) == np && h->type == NT_DATA) {
				ring_take(ep, np, h, len, b);
				if (!np->p->net || np->failed)
					return;
			} else {
				n->st.bad_frames++;
				if (b)
					nb_put(n, b);
			}
			ring_room(r, false);
		}
		if (!mbu_dlist_empty(&np->early))
			early_in(ep, np, r);
	}
}

/* A DATA frame by send comes after the ring frames the sender wrote
 * before it. The core delivers a connection's bytes in order, so those
 * are in memory by the time its completion is read and ring_poll() has
 * taken them; the frame waits here only if the core did not. */
static bool send_in_order(struct mbx_ep *ep, struct mbx_npeer *np, struct cring *r,
			  struct nbuf *b)
{
	uint32_t x = nb_hdr(b)->xcount;

	if (!r || (x == (uint32_t)r->rx_seq && mbu_dlist_empty(&np->early))) {
		np->hi_sends_in++;
		return true;
	}
	if ((int32_t)(x - (uint32_t)r->rx_seq) < 0) {
		ep->net->st.bad_frames++;	/* claims fewer than we took */
		nb_put(ep->net, b);
		return false;
	}
	mbu_dlist_insert_tail(&b->link, &np->early);
	return false;
}

static void early_in(struct mbx_ep *ep, struct mbx_npeer *np, struct cring *r)
{
	while (!mbu_dlist_empty(&np->early)) {
		struct nbuf *b = mbu_container_of(np->early.next, struct nbuf, link);

		if (nb_hdr(b)->xcount != (uint32_t)r->rx_seq)
			return;
		mbu_dlist_remove(&b->link);
		np->hi_sends_in++;
		data_in(ep, np, b);
		if (!np->p->net || np->failed)
			return;
	}
}

/* The peer's NT_RING: where to write. Its ring must be the size of ours,
 * whose shadow mirrors it. */
static void ring_learn(struct mbx_npeer *np, struct cring *r, const struct ring_tell *t)
{
	if (!r) {
		np->tell = *t;
		np->tell_held = true;
		return;
	}
	if (r->peer)
		return;
	r->peer = true;
	r->tx_base = t->base;
	r->tx_key = t->key;
	r->tx_nonce = t->nonce;
	r->tx_on = t->size == r->size;
	if (!r->tx_on)
		MBX_INFO(FI_LOG_EP_DATA, "%s offers a connection ring of %llu bytes, ours has %llu "
			 "(FI_MATCHBOX_CONN_RING): frames to it go by send\n", np->p->name,
			 (unsigned long long)t->size, (unsigned long long)r->size);
}

static void on_conn_frame(struct mbx_ep *ep, struct nbuf *b, uint32_t got, int cls)
{
	struct mbx_net *n = ep->net;
	struct nhdr *h = nb_hdr(b);
	struct mbx_npeer *np;
	struct cring *r;
	bool credited;

	if (!(np = hdr_ok(ep, b, got, CH_OF(cls))) ||
	    (cls == CL_LO && h->type == NT_DATA && frame_cls(nb_frame(b)) != CL_LO)) {
		n->st.bad_frames++;
		nb_put(n, b);
		return;
	}
	/* Ring frames written before this one go first. */
	r = cls == CL_HI && cl_up(&np->cl[CL_HI]) ? np->cl[CL_HI].conn->ring : NULL;
	if (r)
		ring_poll(ep, r);
	if (!np->p->net || np->failed) {
		nb_put(n, b);
		return;
	}
	credited = conn_hdr(ep, np, cls, h);
	switch (h->type) {
	case NT_DATA:
		if (cls == CL_LO) {
			/* It names its receive and offset: no order to keep
			 * with the matcher's frames. */
			deliver(ep, np, b);
			consumed(n, np, b);
			nb_put(n, b);
			if (np->p->net)
				return_credits(ep, np, CL_LO);
		} else if (send_in_order(ep, np, r, b)) {
			data_in(ep, np, b);
		}
		/* Credits that came with data let frames waiting in the ring go
		 * (with this batch's answers): left for the next tick, a stream
		 * of RMA writes moved one window a millisecond (32 frames: 130
		 * MB/s at 4 KiB). */
		if (credited && np->p->net)
			np_flush_soon(ep, np);
		if (r && np->p->net && !np->failed)
			ring_poll(ep, r);	/* ring frames that waited for this one */
		return;
	case NT_RING:
		if (cls == CL_HI)
			ring_learn(np, r, (const struct ring_tell *)((char *)h + CHDR));
		break;
	case NT_CLOSE_REQ:
		on_close_req(ep, np, cls);
		break;
	case NT_CLOSE_ACK:
		if (np->closing)
			close_all(n, np, true);
		break;
	case NT_CLOSE_NAK:
		np->closing = false;
		break;
	default:
		break;
	}
	nb_put(n, b);
	np_flush(ep, np);
}

/* A send on a connection failed. Connections close only when both sides
 * are quiet, so this one broke. What a control frame carried (credits, the
 * close handshake) starts afresh on the next connection, but a DATA frame
 * is gone with it: the peer fails (fail-stop) rather than leave the
 * operations that frame carried waiting for ever. Frames flushed from a
 * connection we had already retired carry nothing the peer still expects. */
static void send_failed(struct mbx_ep *ep, struct nbuf *b, int err)
{
	struct mbx_conn *c = b->conn;
	struct mbx_npeer *np = c ? c->np : NULL;

	if (np) {
		MBX_WARN(FI_LOG_EP_DATA, "send to %s failed: %s\n", np->p->name, fi_strerror(err));
		if ((b->kind == NB_RWR || nb_hdr(b)->type == NT_DATA) && !np->failed)
			np_fail(ep, np, "lost a frame with its broken connection");
		else
			conn_retire(ep->net, c, true);
	}
	conn_op_done(b);
}

static void read_cqs_held(struct mbx_ep *ep, bool dgram)
{
	struct mbx_net *n = ep->net;
	struct fi_cq_msg_entry e[CQ_BATCH];
	ssize_t got = 0, i;
	uint32_t drained = 0;

	while (dgram && (got = fi_cq_read(n->ucq, e, CQ_BATCH)) > 0) {
		uint32_t rx = 0;

		for (i = 0; i < got; i++) {
			struct nbuf *b = mbu_container_of(e[i].op_context, struct nbuf, ctx);

			if (b->kind == NB_DRX) {
				n->dposted--;
				rx++;
				on_dgram(ep, b, (uint32_t)e[i].len);
			} else {
				n->dsends--;
				nb_put(n, b);
			}
		}
		post_dgram(n);
		drained += rx;
		if (got == CQ_BATCH)
			continue;
		/* libfabric's udp takes one datagram off its socket per read of
		 * the CQ. Where they come faster than progress calls (a burst
		 * of requests; calls that last milliseconds while the core
		 * serves large reads) the socket's buffer overflowed and the
		 * kernel dropped them: 1,000-2,600 a job of 4 MiB messages read
		 * in 1 MiB pieces, each dropped frame a 20 ms retransmission,
		 * and the stream fell from 4.8 to 1.7 GB/s. Once datagrams
		 * come on consecutive calls, read until none is left: a lone
		 * one (a ping-pong's) costs no extra system call. */
		if (!rx || !n->dgram_queue || drained >= DGRAM_POSTED)
			break;
	}
	if (dgram)
		n->dgram_queue = drained != 0;
	if (got == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		if (fi_cq_readerr(n->ucq, &err, 0) > 0 && err.op_context) {
			struct nbuf *b = mbu_container_of(err.op_context, struct nbuf, ctx);

			if (b->kind == NB_DRX)
				n->dposted--;
			else
				n->dsends--;
			nb_put(n, b);
			post_dgram(n);
		}
	}
	while ((got = fi_cq_read(n->mcq, e, CQ_BATCH)) > 0) {
		for (i = 0; i < got; i++) {
			struct nbuf *b = mbu_container_of(e[i].op_context, struct nbuf, ctx);

			int cls = srx_cls(b);

			if (cls >= 0) {
				n->sposted[cls]--;
				on_conn_frame(ep, b, (uint32_t)e[i].len, cls);
			} else if (b->kind == NB_READ) {
				conn_op_done(b);
				n->st.rail_read_bytes[0] += b->len;
				mbx_net_read_done(ep, b->peer, b->rx, b->txid, 0);
				nb_put(n, b);
			} else if (b->kind == NB_UOP) {
				uop_done(ep, b, 0);
				nb_put(n, b);
			} else {
				conn_op_done(b);
				sent(n, b);
				nb_put(n, b);
			}
		}
		post_srqs(n);
		if (got < CQ_BATCH)
			break;
	}
	/* Reading the CQ drove the core, which is when ring writes land. */
	if (!mbu_dlist_empty(&n->rings)) {
		struct mbu_dlist *it, *tmp;

		mbu_dlist_foreach_safe(&n->rings, it, tmp)
			ring_poll(ep, mbu_container_of(it, struct cring, link));
	}
	if (got == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		if (fi_cq_readerr(n->mcq, &err, 0) > 0 && err.op_context) {
			struct nbuf *b = mbu_container_of(err.op_context, struct nbuf, ctx);

			if (srx_cls(b) >= 0) {
				n->sposted[srx_cls(b)]--;
			} else if (b->kind == NB_READ) {
				conn_op_done(b);
				mbx_net_read_done(ep, b->peer, b->rx, b->txid, -(int)err.err);
			} else if (b->kind == NB_UOP) {
				uop_done(ep, b, err.err ? (int)err.err : FI_EIO);
			} else {
				send_failed(ep, b, (int)err.err);
			}
			nb_put(n, b);
			post_srqs(n);
		}
	}
}

/* What the frames read here make us send (acknowledgements, read data,
 * atomic answers) waits in the peers' rings until all are handled, then
 * leaves in as few connection sends as batch() allows. */
static void read_cqs(struct mbx_ep *ep, bool dgram)
{
	struct mbx_net *n = ep->net;
	struct mbu_dlist *it;

	n->holding = true;
	read_cqs_held(ep, dgram);
	n->holding = false;
	/* Eager sends written into rings by the calls before: done now. */
	for (uint32_t i = 0; i < n->nrdone; i++)
		if (n->rdone[i].p)
			mbx_net_sent(ep, n->rdone[i].p, n->rdone[i].id);
	n->nrdone = 0;
	while ((it = mbu_dlist_pop(&n->flushq))) {
		struct mbx_npeer *np = mbu_container_of(it, struct mbx_npeer, flush_link);

		if (!np->failed)
			np_flush(ep, np);
	}
}

/* ---- rendezvous by fi_read ---- */

/* The registration cache's side of the core: a range registered for the
 * peers' fi_read, under a key of ours (the core's keys are the caller's,
 * FI_MR_SCALABLE style; 32 bits fit the RTS, and a key is never reused
 * while its registration could still be live). A cached registration is
 * on the connections' core, and under the same key on every extra rail
 * when they all took it. */
struct rc_mr {
	struct fid_mr *mr;
	bool rails;
	struct fid_mr *rail[MBX_RAILS_MAX - 1];
};

static int rc_reg(void *arg, void *addr, size_t len, void **handle)
{
	struct mbx_net *n = arg;
	struct iovec iov = { addr, len };
	struct rc_mr *h = calloc(1, sizeof(*h));
	int ret;

	if (!h)
		return -FI_ENOMEM;
	if (!++n->mr_key)
		n->mr_key = 1;
	ret = fi_mr_regv(n->mdom, &iov, 1, FI_REMOTE_READ, 0, n->mr_key, 0, &h->mr, NULL);
	if (ret) {
		free(h);
		return ret;
	}
	/* Without the rails the message still goes, on rail 0 alone. */
	if (n->rails) {
		ret = mbx_rails_reg(n->rails, addr, len, n->mr_key, h->rail);
		if (ret)
			MBX_INFO(FI_LOG_MR, "registration on the rails: %s; rail 0 only\n",
				 fi_strerror(-ret));
		h->rails = !ret;
	}
	*handle = h;
	return 0;
}

static void rc_dereg(void *arg, void *handle)
{
	struct mbx_net *n = arg;
	struct rc_mr *h = handle;

	if (h->rails)
		mbx_rails_dereg(n->rails, h->rail);
	fi_close(&h->mr->fid);
	free(h);
}

static const struct mbu_rcache_ops rc_ops = { rc_reg, rc_dereg };

void mbx_net_rma_release(struct mbx_ep *ep, struct mbx_tx *tx)
{
	if (tx->rails)
		ep->net->rail_offers--;
	tx->rails = false;
	if (tx->rce)
		mbu_rcache_put(&ep->net->rc, tx->rce);
	tx->rce = NULL;
	if (tx->mr)
		fi_close(&tx->mr->fid);
	tx->mr = NULL;
}

size_t mbx_net_rts_head(const struct mbx_ep *ep)
{
	return ep->net ? ep->net->rts_head : 0;
}

int mbx_net_rma_reg(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_tx *tx, uint32_t *key,
		    uint64_t *base)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np = p->net;
	int ret;

	/* An RTS written again offers what it offered before. */
	if (tx->rce) {
		*key = (uint32_t)fi_mr_key(((struct rc_mr *)tx->rce->handle)->mr);
		*base = (uintptr_t)tx->iov[0].iov_base - tx->rce->start;
		return 0;
	}
	if (tx->mr) {
		*key = (uint32_t)fi_mr_key(tx->mr);
		*base = 0;
		return 0;
	}
	if (!n || !n->rma || !np || np->failed ||
	    tx->iov_cnt > n->minfo->domain_attr->mr_iov_limit)
		return -FI_EOPNOTSUPP;
	/* A peer on datagrams: its data needs a connection either way, and
	 * pulling it with fi_read took 310 us a MiB where clear-to-send over
	 * a low connection took 730 (ftx_pingpong, 2 hosts). So the RTS, with
	 * the frames behind it, waits for the high connection it is read over,
	 * which stays theirs until it closes. Like a frame too large for a
	 * datagram, it is not a busy connection: no budget declines it. */
	if (!cl_up(&np->cl[CL_HI]))
		np->rdv_conn = true;
	/* One buffer (what MPI sends) goes through the cache; a scatter list
	 * is registered for this send alone. */
	if (tx->iov_cnt == 1) {
		ret = mbu_rcache_get(&n->rc, tx->iov[0].iov_base, tx->iov[0].iov_len, &tx->rce);
		if (!ret) {
			struct rc_mr *h = tx->rce->handle;

			*key = (uint32_t)fi_mr_key(h->mr);
			*base = (uintptr_t)tx->iov[0].iov_base - tx->rce->start;
			/* The peer reads over the rails only if it will learn
			 * where they are. */
			tx->rails = h->rails && mbx_rails_count(n->rails);
			if (tx->rails)
				n->rail_offers++;
			return 0;
		}
		tx->rce = NULL;
	}
	if (!++n->mr_key)
		n->mr_key = 1;
	ret = fi_mr_regv(n->mdom, tx->iov, tx->iov_cnt, FI_REMOTE_READ, 0, n->mr_key, 0, &tx->mr,
			 NULL);
	if (ret) {
		MBX_INFO(FI_LOG_EP_DATA, "fi_mr_regv: %s; using clear-to-send\n", fi_strerror(-ret));
		tx->mr = NULL;
		return ret;
	}
	*key = n->mr_key;
	*base = 0;
	return 0;
}

/* One core RMA operation on a connection: `k` local pieces, one remote
 * range of the core's key, completing into b. */
static int core_rma(struct mbx_conn *c, bool write, const struct iovec *liov, size_t k,
		    uint64_t raddr, size_t len, uint64_t key, struct nbuf *b, uint64_t flags)
{
	struct fi_rma_iov riov = { raddr, len, key };
	struct fi_msg_rma msg;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = liov;
	msg.iov_count = k;
	msg.rma_iov = &riov;
	msg.rma_iov_count = 1;
	msg.context = &b->ctx;
	return write ? (int)fi_writemsg(c->ep, &msg, flags) : (int)fi_readmsg(c->ep, &msg, flags);
}

/* The next piece of a transfer, from byte `off` of (iov, cnt): at most
 * *len and net_rma_chunk bytes (*len becomes its length), in at most as
 * many entries as the core and we take; their number, 0 if it does not fit. */
static size_t core_piece(const struct mbx_net *n, const struct iovec *iov, size_t cnt,
			 size_t off, size_t *len, struct iovec *liov, size_t max)
{
	size_t cap = n->minfo->tx_attr->iov_limit;

	if (*len > max)
		*len = max;
	if (cap > MBX_IOV_LIMIT)
		cap = MBX_IOV_LIMIT;
	return mbu_iov_slice(iov, cnt, off, *len, liov, cap);
}

/* Bytes of fi_read in flight on one connection, whatever message they
 * belong to, in units of the read size: the peer serves reads in order on
 * one stream, so more of them only interleave messages (measured: a window
 * of 64 messages of 1 MiB, each with 4 reads in flight, moved 1.5-2.2 GB/s;
 * one message at a time, 2.5-3.6; 4 to 16 pieces in flight per connection
 * did about as well as each other, 64 as badly as before). Counting bytes
 * keeps 64 KiB messages as deep in the pipe as 128 KiB pieces. */
#define RD_WINDOW 8u

static uint64_t rd_window(const struct mbx_net *n)
{
	return RD_WINDOW * (uint64_t)n->rma_chunk;
}

/* The same for the pieces of RMA operations by the core. */
static uint64_t uop_window(const struct mbx_net *n)
{
	return RD_WINDOW * (uint64_t)n->uop_chunk;
}

/* The rails rx may read over: 1 (the connection alone) unless the sender
 * registered the message on its rails and told us where they are; then as
 * many as both sides have, matched by index. */
static unsigned rd_rails(const struct mbx_net *n, const struct mbx_npeer *np,
			 const struct mbx_rx *rx)
{
	unsigned k = mbx_rails_count(n->rails);

	if (!k || !(rx->msg_wflags & MBX_WF_RAILS) || !np->nrails)
		return 1;
	return 1 + (k < np->nrails ? k : np->nrails);
}

/* Bytes of ours in flight on a rail toward np, against the window. */
static uint64_t rail_load(const struct mbx_npeer *np, unsigned r)
{
	return r ? np->rail_rd_bytes[r] : np->cl[CL_HI].conn->read_bytes;
}

/* The rail the next piece of rx goes on, or -1 when none of its rails has
 * room. A message's first piece fixes its rail under round robin and
 * binding; striping takes the emptiest rail each time, so a slower rail,
 * whose reads complete later, gets fewer pieces. */
static int rd_pick(struct mbx_npeer *np, struct mbx_rx *rx, unsigned nr, unsigned skip,
		   uint64_t win)
{
	unsigned r;
	int best = -1;

	if (rx->rd_rail == MBX_RD_STRIPE) {
		for (r = 0; r < nr; r++)
			if (!(skip & 1u << r) && rail_load(np, r) < win &&
			    (best < 0 || rail_load(np, r) < rail_load(np, (unsigned)best)))
				best = (int)r;
		return best;
	}
	if (rx->rd_rail >= nr)
		rx->rd_rail = 0;
	return rail_load(np, rx->rd_rail) < win ? rx->rd_rail : -1;
}

/* Binding: the peers this endpoint reads from take the rails in turn, in
 * the order of their first large message, starting from rail 1: rail 0
 * carries every frame as well. */
static uint32_t np_bind(struct mbx_net *n, struct mbx_npeer *np)
{
	if (!np->bind)
		np->bind = ++n->nbound;
	return np->bind;
}

/* A peer's rail in our rails' tables, inserted the first time. */
static fi_addr_t rail_addr(struct mbx_net *n, struct mbx_npeer *np, unsigned r)
{
	if (np->rail_fa[r - 1] == FI_ADDR_NOTAVAIL)
		np->rail_fa[r - 1] = mbx_rails_peer(n->rails, r - 1, &np->rail[r - 1]);
	return np->rail_fa[r - 1];
}

/* The next read's size: a piece, or all that is left of a read alone on
 * its connection once that is no more than n->rma_alone (see
 * mbx_net_read). */
static size_t rd_piece(const struct mbx_net *n, size_t left, size_t piece, bool alone)
{
	return alone && left > piece && left <= n->rma_alone ? left : piece;
}

int mbx_net_read(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rx *rx)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np = p->net;
	struct mbx_conn *c;
	unsigned nr, skip = 0;
	size_t piece;
	uint64_t win;
	bool alone;

	if (!n || !n->rma || !np || !cl_up(&np->cl[CL_HI]) || !rx->rd_key)
		return rx->rd_pending ? 0 : -FI_EOPNOTSUPP;
	c = np->cl[CL_HI].conn;
	nr = rd_rails(n, np, rx);
	/* Over several rails, pieces of the message's share of each, up to
	 * the read window, and as many of them in flight per rail as of the
	 * usual pieces: at 128 KiB, two 1 Gb/s rails moved 0.13 GB/s
	 * together where one moved 0.12; at 1 MiB, 0.21 (mbench bw 4 MiB,
	 * namespace hosts: the cost is per read). */
	piece = n->rma_chunk;
	/* A message read alone from its peer (a ping-pong's, not one of a
	 * stream's) takes what is left in one read once that is no more than
	 * FI_MATCHBOX_NET_RMA_ALONE: libfabric 1.17's tcp answers the reads
	 * of a connection one after another, and each costs a turn (2
	 * namespace hosts, 256 KiB ping-pong: the 192 KiB after the head in
	 * one read 58.1 us one-way, in 128 + 64 KiB 65.4; 384 KiB 80.3
	 * against 95.7). In a stream the pieces stay small: there the link is
	 * full anyway, and tcp serves larger reads more slowly. */
	alone = nr == 1 && (mbu_dlist_empty(&p->reading) ||
			    (p->reading.next == &rx->link && rx->link.next == &p->reading));
	win = rd_window(n);
	if (nr > 1) {
		size_t share = ((rx->take + nr - 1) / nr + 4095) & ~(size_t)4095;

		piece = share < piece ? piece : share > rd_window(n) ? rd_window(n) : share;
		win = RD_WINDOW * (uint64_t)piece;
	}
	if (!rx->rd_begun) {
		rx->rd_begun = true;
		if (nr == 1 || mbx_param.rail_policy == MBX_RAIL_STRIPE)
			rx->rd_rail = nr == 1 ? 0 : MBX_RD_STRIPE;
		else if (mbx_param.rail_policy == MBX_RAIL_ROUND_ROBIN)
			rx->rd_rail = (uint8_t)(np->rr_next++ % nr);
		else
			rx->rd_rail = (uint8_t)(np_bind(n, np) % nr);
	}
	while (rx->rd_next < rx->take) {
		size_t len = rx->take - rx->rd_next;
		struct iovec liov[MBX_IOV_LIMIT];
		struct nbuf *b;
		size_t k;
		int ret, r = rd_pick(np, rx, nr, skip, win);

		if (r < 0)
			break;
		k = core_piece(n, rx->iov, rx->iov_cnt, rx->rd_next, &len, liov,
			       rd_piece(n, len, piece, alone));
		if (!k)
			return rx->rd_pending ? 0 : -FI_EOPNOTSUPP;
		b = nb_get(n, POOL_TINY, NB_READ);
		if (!b)
			return rx->rd_pending ? 0 : -FI_EAGAIN;
		b->peer = p;
		b->rx = rx;
		b->txid = rx->msg_id;
		b->rail = (uint8_t)r;
		if (r) {
			fi_addr_t fa = rail_addr(n, np, (unsigned)r);

			ret = fa == FI_ADDR_NOTAVAIL ? -FI_EADDRNOTAVAIL :
			      mbx_rails_read(n->rails, (unsigned)r - 1, fa, liov, k,
					     rx->rd_base + rx->rd_next, len, rx->rd_key, &b->ctx);
			if (ret) {
				nb_put(n, b);
				/* Busy, or its connection is still being
				 * made (which only polling moves): the other
				 * rails take this call's pieces. Refused:
				 * rail 0 takes the rest of this message. */
				if (ret == -FI_EAGAIN) {
					n->rails_hot_ns = mbu_now_ns() + HOT_NS;
					skip |= 1u << r;
				} else {
					MBX_INFO(FI_LOG_EP_DATA, "fi_read on rail %s: %s; rail 0 "
						 "for the rest\n",
						 mbx_rails_iface(n->rails, (unsigned)r - 1),
						 fi_strerror(-ret));
				}
				if (rx->rd_rail != MBX_RD_STRIPE || ret != -FI_EAGAIN)
					rx->rd_rail = 0;
				continue;
			}
		} else {
			ret = core_rma(c, false, liov, k, rx->rd_base + rx->rd_next, len,
				       rx->rd_key, b, FI_COMPLETION);
		}
		if (ret) {
			nb_put(n, b);
			return rx->rd_pending ? 0 : ret;
		}
		b->len = (uint32_t)len;
		n->reads++;
		if (r) {
			np->rail_rd_bytes[r] += len;
			n->rail_reads++;
		} else {
			b->conn = c;
			c->inflight++;
			c->read_bytes += len;
		}
		rx->rd_next += len;
		rx->rd_pending++;
		np->last_act_ns = mbu_now_ns();
	}
	return 0;
}

/* A read on an extra rail has completed. */
static void rail_read_done(struct mbx_ep *ep, struct nbuf *b, int err)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np = b->peer->net;

	n->rail_reads--;
	if (np)
		np->rail_rd_bytes[b->rail] -= b->len;
	if (!err)
		n->st.rail_read_bytes[b->rail] += b->len;
	/* A rail's lost connection fails this read like any error: the
	 * message waits for its other reads before it falls back, where
	 * -FI_ECONNABORTED (rail 0's connection retired) does not wait. */
	if (err == FI_ECONNABORTED)
		err = FI_EIO;
	mbx_net_read_done(ep, b->peer, b->rx, b->txid, -err);
}

static void read_rails(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	unsigned r, nr = mbx_rails_count(n->rails);

	for (r = 0; r < nr; r++) {
		void *ctx[32];
		int err[32], got, i;

		while ((got = mbx_rails_poll(n->rails, r, ctx, err, 32)) > 0) {
			for (i = 0; i < got; i++) {
				struct nbuf *b = mbu_container_of(ctx[i], struct nbuf, ctx);

				rail_read_done(ep, b, err[i]);
				nb_put(n, b);
			}
			if (got < 32)
				break;
		}
	}
}

unsigned mbx_net_rails_untold(struct mbx_ep *ep, struct mbx_peer *p, const void **names)
{
	struct mbx_net *n = ep->net;

	if (!n || !p->net || p->net->rails_told || !mbx_rails_count(n->rails))
		return 0;
	*names = mbx_rails_names(n->rails);
	return mbx_rails_count(n->rails);
}

void mbx_net_rails_told(struct mbx_ep *ep, struct mbx_peer *p)
{
	(void)ep;
	p->net->rails_told = true;
}

void mbx_net_rails_learn(struct mbx_ep *ep, struct mbx_peer *p, const void *names, unsigned cnt)
{
	struct mbx_npeer *np = p->net;
	unsigned i;

	(void)ep;
	for (i = 0; i < cnt; i++) {
		struct mbx_rail_name nm;

		memcpy(&nm, (const char *)names + i * sizeof(nm), sizeof(nm));
		/* A rail that moved (never, today) is looked up again. */
		if (i >= np->nrails || nm.ip != np->rail[i].ip || nm.port != np->rail[i].port)
			np->rail_fa[i] = FI_ADDR_NOTAVAIL;
		np->rail[i] = nm;
	}
	np->nrails = (uint8_t)cnt;
}

/* ---- user RMA by the core's fi_write/fi_read ---- */

/* Peers a region's offer is remembered for; past that, all peers of the
 * net are told when it is withdrawn. */
#define CKEY_PEERS	8u

/* One of our regions registered with this net wire's core, for the peers
 * it was offered to. Its core key comes from the same counter as the
 * rendezvous registrations', so no key is used twice while either could
 * be live. */
struct mbx_ckey {
	struct mbu_dlist link;		/* net->ckeys */
	struct mbx_ckey *mr_next;	/* mr->ckeys */
	struct mbx_net *n;
	struct mbx_mr *mr;
	struct fid_mr *cmr;
	uint32_t key;
	uint32_t nofs;			/* > CKEY_PEERS: offered to more than ofs holds */
	struct mbx_npeer *ofs[CKEY_PEERS];
};

bool mbx_net_rma_busy(struct mbx_peer *p)
{
	return p->net && p->net->core_ops;
}

void mbx_net_key(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	struct mbx_npeer *np = p->net;
	uint32_t ckey = (uint32_t)w->tag, access = (uint32_t)(w->tag >> 32);

	_Static_assert(MBX_KEY_READ >> 32 == MBU_OFFER_READ && MBX_KEY_WRITE >> 32 == MBU_OFFER_WRITE,
		       "KEY frame rights are the offer's");
	if (!np || !mbu_offer_valid(w->data, w->size, access, ckey)) {
		MBX_WARN(FI_LOG_EP_DATA, "malformed key offer from %s\n", p->name);
		ep->stats.bad_frames++;
		return;
	}
	mbu_offers_put(&np->offers, w->id, w->data, w->size, access, ckey);
}

/* Small operations go by the core while fewer than CORE_DEPTH are
 * outstanding to the peer; past that, frames batch them (mbx_net_rma). */
#define CORE_BATCH_MAX	16384u
#define CORE_DEPTH	4u
/* Operations of ours on the core per peer, started or waiting. */
#define UOPS_MAX	1024u

/* Our operations per connection, at most: the core's transmit queue also
 * carries the frames. */
static uint32_t core_cap(const struct mbx_net *n)
{
	size_t q = n->minfo->tx_attr->size / 2;

	return q ? (uint32_t)q : 1;
}

/* One caller's operation on the core, moved in pieces of at most
 * uop_chunk bytes with at most uop_window(n) bytes of them in flight on
 * the connection (as large messages' reads are: a tcp connection with many
 * large operations queued on it moved less than one with a few). It stays
 * on its peer's list, in order, until its last piece completes; pieces of
 * a later operation start only when this one's have all started. */
struct uop {
	struct mbu_dlist link;		/* np->uops; detached (np NULL) once its peer is gone */
	struct mbx_npeer *np;
	void *ctx;
	uint64_t opflags;
	struct iovec iov[MBX_IOV_LIMIT];
	size_t cnt;
	uint64_t raddr, ckey;		/* the core's offset and key */
	size_t len, next;		/* bytes in all; the next piece starts here */
	uint32_t out;			/* pieces in flight */
	int err;			/* the first piece's failure */
	bool write;
};

/* The last piece of u is done, or none will start: report it. */
static void uop_finish(struct mbx_ep *ep, struct uop *u)
{
	if (u->next < u->len || u->out)
		return;
	if (u->np) {
		mbu_dlist_remove(&u->link);
		u->np->core_ops--;
	}
	mbx_tx_report(ep, u->write ? ep->wr_cntr : ep->rd_cntr, u->ctx,
		      FI_RMA | (u->write ? FI_WRITE : FI_READ), u->opflags, 0, u->err, NULL);
	mbu_pool_put(&ep->net->uop_pool, u);
}

static int uop_post(struct mbx_net *n, struct mbx_conn *c, struct uop *u)
{
	size_t len = u->len - u->next, k;
	struct iovec liov[MBX_IOV_LIMIT];
	struct nbuf *b;
	uint64_t flags;
	int ret;

	/* A piece of a list the core takes whole takes no more entries. A
	 * read alone on its connection takes what is left at once, as a
	 * large message's read does (mbx_net_read). */
	k = core_piece(n, u->iov, u->cnt, u->next, &len, liov,
		       rd_piece(n, len, n->uop_chunk,
				!u->write && u->np && u->np->core_ops == 1));
	if (!k)
		return -FI_EINVAL;
	b = nb_get(n, POOL_TINY, NB_UOP);
	if (!b)
		return -FI_EAGAIN;
	b->uctx = u;
	b->len = (uint32_t)len;
	/* The caller's completion semantics go to the core as they are: by
	 * default a write completes once the core has sent it, as rxm's. */
	flags = FI_COMPLETION |
		(u->write ? u->opflags & (FI_INJECT | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE) : 0);
	ret = core_rma(c, u->write, liov, k, u->raddr + u->next, len, u->ckey, b, flags);
	if (ret) {
		nb_put(n, b);
		return ret;
	}
	b->conn = c;
	c->inflight++;
	c->uops++;
	c->uop_bytes += len;
	u->next += len;
	u->out++;
	if (!u->write)
		n->core_read_pieces++;
	return 0;
}

/* Starts the pieces the connection's window has room for, in order. */
static void uop_pump(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct mbx_net *n = ep->net;
	struct mbu_dlist *it, *tmp;
	struct mbx_conn *c;

	if (!cl_up(&np->cl[CL_HI]) || np->closing || np->core_hold)
		return;
	c = np->cl[CL_HI].conn;
	mbu_dlist_foreach_safe(&np->uops, it, tmp) {
		struct uop *u = mbu_container_of(it, struct uop, link);

		while (u->next < u->len) {
			int ret;

			if (c->uop_bytes >= uop_window(n) || c->uops >= core_cap(n))
				return;
			ret = uop_post(n, c, u);
			if (ret == -FI_EAGAIN)
				return;
			if (ret) {
				MBX_WARN(FI_LOG_EP_DATA, "core RMA to %s: %s\n", np->p->name,
					 fi_strerror(-ret));
				u->err = u->err ? u->err : -ret;
				u->next = u->len;
				uop_finish(ep, u);
				break;
			}
			/* A message sent after this write completed must not
			 * overtake it by datagram: the next frame goes on this
			 * connection, behind it. */
			np->core_mark = true;
		}
	}
}

/* The peer's connection is gone: what has not started never will. */
static void uops_detach(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct mbu_dlist *it;

	while ((it = mbu_dlist_pop(&np->uops))) {
		struct uop *u = mbu_container_of(it, struct uop, link);

		mbu_dlist_init(&u->link);
		u->np = NULL;
		np->core_ops--;
		if (u->next < u->len) {
			u->err = u->err ? u->err : FI_ECONNABORTED;
			u->next = u->len;
		}
		uop_finish(ep, u);
	}
}

int mbx_net_rma(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rma_req *r)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np = p->net;
	bool write = r->op == MBX_OP_WRITE;
	const struct fi_rma_iov *ri = r->riov;
	struct mbu_offer *k;
	struct uop *u;

	/* CQ data and empty operations (counted at the target) need the
	 * target's progress; a fence needs the order of frames. */
	if (!n || !n->rma || !np || np->failed || r->cqdata || !r->len || r->rcnt != 1 ||
	    (r->opflags & FI_FENCE) || (!write && r->op != MBX_OP_READ))
		return 1;
	/* A connection on its way down (an idle close agreed or asked for)
	 * takes no new operation; frames wait for the next one. */
	if (np->closing || np->core_hold)
		return 1;
	k = mbu_offers_find(&np->offers, ri->key);
	if (!k) {
		/* A region used once (a registration per message, as a host
		 * engine makes) never costs its target a core registration. */
		r->wantkey = mbu_offers_miss(&np->offers, ri->key);
		return 1;
	}
	/* The region and its rights are as offered until a withdrawal, which
	 * reaches us before anything the target sent after it: refusing here
	 * is what the target's own check would answer. */
	if (!mbu_offer_allows(k, ri->addr, r->len, write ? MBU_OFFER_WRITE : MBU_OFFER_READ)) {
		mbx_tx_report(ep, write ? ep->wr_cntr : ep->rd_cntr, r->context,
			      FI_RMA | (write ? FI_WRITE : FI_READ), r->opflags, 0, FI_EACCES, p);
		return 0;
	}
	/* Which of the two is faster was measured (bench/rma.sh, two namespace
	 * hosts over tcp, 64 operations outstanding against one at a time):
	 * up to 16 KiB frames moved 1.3-1.6x the core's bytes when many were
	 * outstanding, as they share connection sends, while one at a time
	 * the core took 12 us where frames and their acknowledgement took 18;
	 * from 32 KiB up the core was ahead either way (no copies), and from
	 * 1 MiB up by 1.5-1.7x once large operations went in windowed pieces
	 * (bench/results/rma.txt). */
	if (r->len > mbx_param.net_rma_core_max ||
	    (r->len <= CORE_BATCH_MAX && np->core_ops + p->rma_out >= CORE_DEPTH))
		return 1;
	/* An inject's buffer is the caller's again when we return: the core
	 * must take it whole now, or frames copy it. */
	if (!cl_up(&np->cl[CL_HI]) || r->cnt > n->minfo->tx_attr->iov_limit ||
	    ((r->opflags & FI_INJECT) &&
	     (r->len > n->minfo->tx_attr->inject_size || !mbu_dlist_empty(&np->uops) ||
	      np->cl[CL_HI].conn->uop_bytes >= uop_window(n) ||
	      np->cl[CL_HI].conn->uops >= core_cap(n))))
		return 1;
	if (np->core_ops >= UOPS_MAX)
		return -FI_EAGAIN;
	u = mbu_pool_get(&n->uop_pool);
	if (!u)
		return -FI_EAGAIN;
	u->np = np;
	u->ctx = r->context;
	u->opflags = r->opflags;
	memcpy(u->iov, r->iov, r->cnt * sizeof(*r->iov));
	u->cnt = r->cnt;
	u->raddr = ri->addr - k->base;
	u->ckey = k->ckey;
	u->len = r->len;
	u->next = 0;
	u->out = 0;
	u->err = 0;
	u->write = write;
	if ((r->opflags & FI_INJECT) && uop_post(n, np->cl[CL_HI].conn, u)) {
		mbu_pool_put(&n->uop_pool, u);
		return 1;
	}
	mbu_dlist_insert_tail(&u->link, &np->uops);
	np->core_ops++;
	np->last_act_ns = mbu_now_ns();
	n->st.rma_core++;
	if (!write)
		n->core_reads++;
	if (u->out)
		np->core_mark = true;	/* (the inject, posted above) */
	uop_pump(ep, np);
	return 0;
}

/* A piece of ours on the core completed, failed or was flushed. */
static void uop_done(struct mbx_ep *ep, struct nbuf *b, int err)
{
	struct mbx_conn *c = b->conn;
	struct uop *u = b->uctx;
	struct mbx_npeer *np = u->np;

	if (c) {
		c->uops--;
		c->uop_bytes -= b->len;
	}
	conn_op_done(b);
	u->out--;
	if (err && !u->err) {
		u->err = err;
		u->next = u->len;	/* nothing more of it starts */
	}
	uop_finish(ep, u);
	if (np)
		uop_pump(ep, np);
}

int mbx_net_key_offer(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_mr *mr, uint64_t *ckey)
{
	struct mbx_net *n = ep->net;
	struct mbx_npeer *np = p->net;
	struct mbx_ckey *k;
	uint32_t i;
	int ret;

	/* Accesses the core makes pass us by: a region or endpoint that
	 * counts them, or CQ data, keeps to frames. */
	if (!n || !n->rma || !np || np->failed || mr->cntr || mr->iov_cnt != 1 || !mr->len ||
	    ep->rwr_cntr || ep->rrd_cntr || !(mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return -FI_EOPNOTSUPP;
	for (k = mr->ckeys; k && k->n != n; k = k->mr_next)
		;
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return -FI_ENOMEM;
		if (!++n->mr_key)
			n->mr_key = 1;
		ret = fi_mr_regv(n->mdom, mr->iov, 1, mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE),
				 0, n->mr_key, 0, &k->cmr, NULL);
		if (ret) {
			MBX_INFO(FI_LOG_MR, "core registration of key 0x%llx: %s; RMA to it stays "
				 "in frames\n", (unsigned long long)mr->mr.key, fi_strerror(-ret));
			free(k);
			return ret;
		}
		k->key = n->mr_key;
		k->n = n;
		k->mr = mr;
		k->mr_next = mr->ckeys;
		mr->ckeys = k;
		mbu_dlist_insert_tail(&k->link, &n->ckeys);
	}
	for (i = 0; i < k->nofs && i < CKEY_PEERS && k->ofs[i] != np; i++)
		;
	if (i == k->nofs && i < CKEY_PEERS)
		k->ofs[k->nofs++] = np;
	else if (i == CKEY_PEERS)
		k->nofs = CKEY_PEERS + 1;
	*ckey = k->key;
	n->st.rma_keys_offered++;
	return 0;
}

static void ckey_tell(struct mbx_net *n, struct mbx_npeer *np, const struct mbx_ckey *k)
{
	if (np->failed)
		return;
	mbx_proto_ctrl(n->ep, np->p, MBX_OP_KEY, k->mr->mr.key, 0, 0, 0);
	n->st.rma_keys_withdrawn++;
}

/* Closes the core registration; `tell`: the peers offered it hear so. */
static void ckey_free(struct mbx_ckey *k, bool tell)
{
	struct mbx_net *n = k->n;
	struct mbx_ckey **pp;

	if (tell && k->nofs > CKEY_PEERS) {
		struct mbu_dlist *it;

		mbu_dlist_foreach(&n->peers, it)
			ckey_tell(n, mbu_container_of(it, struct mbx_npeer, link), k);
	} else if (tell) {
		for (uint32_t i = 0; i < k->nofs; i++)
			if (k->ofs[i])
				ckey_tell(n, k->ofs[i], k);
	}
	for (pp = &k->mr->ckeys; *pp != k; pp = &(*pp)->mr_next)
		;
	*pp = k->mr_next;
	mbu_dlist_remove(&k->link);
	fi_close(&k->cmr->fid);
	free(k);
}

void mbx_net_mr_revoke(struct mbx_mr *mr)
{
	while (mr->ckeys)
		ckey_free(mr->ckeys, true);
}

/* A peer going away is no longer one to tell. */
static void ckeys_forget(struct mbx_net *n, struct mbx_npeer *np)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(&n->ckeys, it) {
		struct mbx_ckey *k = mbu_container_of(it, struct mbx_ckey, link);

		for (uint32_t i = 0; i < k->nofs && i < CKEY_PEERS; i++)
			if (k->ofs[i] == np)
				k->ofs[i] = NULL;
	}
}

/* ---- timers ---- */

/* Time since stamp `t`; none for a stamp taken after `now`, as the peer
 * work inside one tick does (a wrapped difference would read as ages). */
static inline uint64_t since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

static void np_fail(struct mbx_ep *ep, struct mbx_npeer *np, const char *why)
{
	struct mbu_frame *f;

	MBX_WARN(FI_LOG_EP_DATA,
		 "%s %s (%u datagrams unacknowledged, last heard from %.1f s ago); its operations fail\n",
		 np->p->name, why, mbu_rel_tx_inflight(&np->rtx),
		 (double)since(mbu_now_ns(), np->last_rx_ns) / 1e9);
	np->failed = true;
	while (mbu_ring_peek(&np->cons, &f) == MBU_RING_FRAME)
		mbu_ring_consume(&np->cons, f);
	close_all(ep->net, np, false);
	mbx_fail_peer(ep, np->p);
}

static bool np_waiting(struct mbx_ep *ep, struct mbx_npeer *np)
{
	struct mbu_frame *f;
	size_t i;

	if (mbu_ring_peek(&np->cons, &f) != MBU_RING_EMPTY || mbu_rel_tx_inflight(&np->rtx) ||
	    np->p->cts_active || !mbu_dlist_empty(&np->p->cts_wait) || np->core_ops)
		return true;
	if (!credits_home(np))
		return true;
	for (i = 0; i < ep->tx_cap; i++)
		if (ep->txs[i].state != MBX_TX_FREE && ep->txs[i].peer == np->p)
			return true;
	return false;
}

/* The staging ring's pages go back to the kernel once the ring is empty:
 * frames leave it as soon as a channel takes them, but the positions keep
 * advancing, so without this every peer ever talked to would in time hold
 * the whole ring (256 KiB), not the page or two it uses at once. A given
 * back page reads as zeros, which no stamp matches, as a fresh ring. Done
 * from the 100 ms scan only, so a peer streaming through its ring pays a
 * few page faults per scan, not one per page. */
static void ring_trim(struct mbx_npeer *np)
{
	uint64_t head = np->p->prod.head, size = mbx_param.net_ring_size;
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), end = head & ~(pg - 1), from;

	if (np->cons.pos != head || end <= np->trimmed || end - np->trimmed < 2 * pg)
		return;
	/* Pages strictly before the head's page: the head's own page is being
	 * written into, everything before it in this lap has been consumed. */
	from = end - np->trimmed >= size ? end - size + pg : np->trimmed;
	while (from < end) {
		uint64_t off = from & (size - 1), len = end - from;

		if (len > size - off)
			len = size - off;
		madvise(np->ring + off, len, MADV_DONTNEED);
		from += len;
	}
	np->trimmed = end;
}


static void tick(struct mbx_ep *ep, uint64_t now)
{
	struct mbx_net *n = ep->net;
	uint64_t idle_ns = mbx_param.conn_idle_ms * 1000000ULL;
	bool scan = now - n->last_scan > 100000000ULL;
	struct resend_arg ra = { .n = n };
	struct mbu_dlist *it, *tmp;

	if (scan)
		n->last_scan = now;
	mbu_dlist_foreach_safe(&n->peers, it, tmp) {
		struct mbx_npeer *np = mbu_container_of(it, struct mbx_npeer, link);
		struct mbu_frame *f;
		int upc = 0, first = CL_HI;
		bool owed = false;

		if (np->failed)
			continue;
		ra.np = np;
		if (mbu_rel_tx_poll(&np->rtx, now, resend, &ra) < 0) {
			np_fail(ep, np, "stopped answering on the net wire");
			continue;
		}
		for (int k = 0; k < CL_N; k++) {
			struct ncls *cl = &np->cl[k];

			if (!cl_up(cl))
				continue;
			return_credits(ep, np, k);
			grant(ep, np, k);
			if (k == CL_HI && cl->conn->ring) {
				if (!cl->conn->ring->told)
					ring_tell(ep, np);
				if (since(now, np->last_act_ns) > TICK_NS)
					ring_room(cl->conn->ring, true);
			}
			if (cl->rx.owed && since(now, np->last_act_ns) > TICK_NS)
				send_ctl(ep, np, NT_CREDIT, k);
			if (!upc++)
				first = k;
			owed |= cl->rx.owed != 0;
		}
		if (mbu_ring_peek(&np->cons, &f) == MBU_RING_FRAME)
			np_flush(ep, np);
		/* The lower address asks; the one close handshake takes both
		 * classes down. */
		if (idle_ns && upc && !np->closing && since(now, np->last_act_ns) > idle_ns &&
		    addr_cmp(&ep->addr, &np->p->addr) < 0 && !owed && !np_waiting(ep, np) &&
		    mbu_dlist_empty(&np->inq)) {
			if (!send_ctl(ep, np, NT_CLOSE_REQ, first))
				np->closing = true;
			np->last_act_ns = now;
		}
		if (scan)
			ring_trim(np);
		if (scan && since(now, np->last_rx_ns) > PROBE_AFTER_NS &&
		    !mbu_rel_tx_inflight(&np->rtx) &&
		    (np_waiting(ep, np) || mbx_rx_waits_on(ep, np->p))) {
			send_ctl(ep, np, NT_PROBE, CL_HI);
		}
	}
	mbu_dlist_foreach_safe(&n->conns, it, tmp) {
		struct mbx_conn *c = mbu_container_of(it, struct mbx_conn, link);

		if (c->state == C_DEAD && since(now, c->dead_ns) > DEAD_CONN_NS)
			conn_close(c);
	}
}

static void send_acks(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	struct mbu_dlist *it;

	mbu_dlist_foreach(&n->peers, it) {
		struct mbx_npeer *np = mbu_container_of(it, struct mbx_npeer, link);

		if (np->need_ack && !np->failed && (np->ack_now || np->ack_poll != n->polls))
			send_ctl(ep, np, NT_ACK, CL_HI);
	}
}

/* Static and partial modes connect at start: once the AV holds the job,
 * the higher address of each chosen pair asks (the lower one would be
 * refused anyway). */
static void av_sync(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	size_t i;

	n->av_gen = ep->av->gen;
	for (i = 0; i < ep->av->count; i++) {
		struct mbx_av_entry *e = &ep->av->tab[i];
		struct mbx_peer *p;

		if (!e->valid || !e->resolved || e->addr.host == ep->addr.host || !e->addr.ip ||
		    e->addr.job != ep->addr.job || addr_cmp(&ep->addr, &e->addr) < 0)
			continue;
		p = mbx_peer_get(ep, &e->addr);
		if (!p || mbx_peer_connect(ep, p) || !p->net)
			continue;
		if (p->net->want_conn)
			conn_start(ep, p->net, CL_HI, false);
	}
}

void mbx_net_progress(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	uint64_t now;
	bool cold;

	if (!n)
		return;
	if (ep->av && ep->av->gen != n->av_gen &&
	    (mbx_param.conn_mode == MBX_CONN_STATIC || mbx_param.conn_mode == MBX_CONN_PARTIAL))
		av_sync(ep);
	now = mbu_now_ns();
	cold = n->polls++ % COLD_POLLS != 0 && now - n->last_cold_ns < COLD_NS;
	if (!cold)
		n->last_cold_ns = now;
	if (!cold || now < n->eq_hot_ns)
		read_eq(ep);
	read_cqs(ep, !cold || now < n->dgram_hot_ns);
	if (n->rails && (n->rail_reads || n->rail_offers || !cold || now < n->rails_hot_ns))
		read_rails(ep);
	now = mbu_now_ns();	/* what was just read may have stamped a later time */
	if (!mbu_dlist_empty(&n->peers)) {
		struct mbu_dlist *it;

		mbu_dlist_foreach(&n->peers, it) {
			struct mbx_npeer *np = mbu_container_of(it, struct mbx_npeer, link);

			if (!mbu_dlist_empty(&np->inq) && !np->failed)
				np_deliver(ep, np);
			/* (a piece the core refused for now) */
			if (!mbu_dlist_empty(&np->uops) && !np->failed)
				uop_pump(ep, np);
		}
		send_acks(ep);
	}
	if (now - n->last_tick >= TICK_NS) {
		n->last_tick = now;
		tick(ep, now);
	}
}

bool mbx_net_busy(struct mbx_ep *ep)
{
	return ep->net && (!mbu_dlist_empty(&ep->net->peers) || ep->net->rail_reads ||
			   ep->net->rail_offers);
}

void mbx_net_stats(struct mbx_ep *ep, struct fi_matchbox_net_stats *s)
{
	if (ep->net) {
		*s = ep->net->st;
		s->mr_cache_hits = ep->net->rc.st.hits;
		s->mr_cache_misses = ep->net->rc.st.misses;
		s->mr_cache_uncached = ep->net->rc.st.uncached;
		s->mr_cache_invalidated = ep->net->rc.st.invalidated;
	} else {
		memset(s, 0, sizeof(*s));
	}
}

/* ---- opening and closing ---- */

uint32_t mbx_net_pick_ip(void)
{
	return mbx_net_iface_ip(mbx_param.net_iface);
}

uint32_t mbx_net_iface_ip(const char *name)
{
	struct ifaddrs *ifs, *i;
	uint32_t ip = 0;

	if (getifaddrs(&ifs))
		return 0;
	for (i = ifs; i; i = i->ifa_next) {
		uint32_t a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
			continue;
		if (name[0] ? strcmp(i->ifa_name, name) : (i->ifa_flags & IFF_LOOPBACK) != 0)
			continue;
		a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		if (a) {
			ip = a;
			break;
		}
	}
	freeifaddrs(ifs);
	return ip;
}

struct fi_info *mbx_net_core_info(const char *prov, enum fi_ep_type type, uint32_t ip,
				  uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct sockaddr_in *sin;

	if (!hints)
		return NULL;
	sin = calloc(1, sizeof(*sin));
	if (!sin) {
		fi_freeinfo(hints);
		return NULL;
	}
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	hints->src_addr = sin;
	hints->src_addrlen = sizeof(*sin);
	hints->addr_format = FI_SOCKADDR_IN;
	hints->caps = caps;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = type;
	/* Our buffers are not registered: a core that needs FI_MR_LOCAL
	 * (verbs today) does not match and the next one is tried. And we
	 * choose the keys and address by offset, so that one key names a
	 * registration on every rail. */
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(prov);
	if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, MBX_GETINFO_HIDDEN, hints, &info))
		info = NULL;
	fi_freeinfo(hints);
	return info;
}

static struct fi_info *pick_core(const char *forced, const char *const *order,
				 enum fi_ep_type type, uint32_t ip, uint64_t caps)
{
	struct fi_info *info;

	if (forced[0])
		return mbx_net_core_info(forced, type, ip, caps);
	for (; *order; order++)
		if ((info = mbx_net_core_info(*order, type, ip, caps)))
			return info;
	return NULL;
}

static uint16_t port_of(struct fid *fid)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);

	if (fi_getname(fid, &sin, &len) || sin.sin_family != AF_INET)
		return 0;
	return ntohs(sin.sin_port);
}

static void net_free(struct mbx_net *n)
{
	struct fid *fids[] = {
		n->pep ? &n->pep->fid : NULL, n->srx[CL_HI] ? &n->srx[CL_HI]->fid : NULL,
		n->srx[CL_LO] ? &n->srx[CL_LO]->fid : NULL,
		n->mcq ? &n->mcq->fid : NULL, n->eq ? &n->eq->fid : NULL,
		n->mdom ? &n->mdom->fid : NULL, n->mfab ? &n->mfab->fid : NULL,
		n->uep ? &n->uep->fid : NULL, n->uav ? &n->uav->fid : NULL,
		n->ucq ? &n->ucq->fid : NULL, n->udom ? &n->udom->fid : NULL,
		n->ufab ? &n->ufab->fid : NULL,
	};
	size_t i;

	while (!mbu_dlist_empty(&n->conns))
		conn_free(mbu_container_of(n->conns.next, struct mbx_conn, link));
	while (!mbu_dlist_empty(&n->ckeys))
		ckey_free(mbu_container_of(n->ckeys.next, struct mbx_ckey, link), false);
	mbu_rcache_fini(&n->rc);
	/* After the cache: its registrations are on the rails' domains. */
	mbx_rails_close(n->rails);
	if (n->timer_fd >= 0)
		close(n->timer_fd);
	for (i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			fi_close(fids[i]);
	if (n->uinfo)
		fi_freeinfo(n->uinfo);
	if (n->minfo)
		fi_freeinfo(n->minfo);
	mbu_slots_fini(&n->ids);
	mbu_pool_fini(&n->uop_pool);
	for (int k = 0; k < POOL_N; k++)
		mbu_pool_fini(&n->pool[k]);
	free(n);
}

/* A CQ with a wait descriptor where the core offers one, else without. */
static int cq_open(struct fid_domain *dom, struct fi_cq_attr *attr, struct fid_cq **cq)
{
	int ret = fi_cq_open(dom, attr, cq, NULL);

	if (ret) {
		attr->wait_obj = FI_WAIT_NONE;
		ret = fi_cq_open(dom, attr, cq, NULL);
	}
	return ret;
}

static int wait_fd_of(struct fid *f)
{
	int fd = -1;

	return f && !fi_control(f, FI_GETWAIT, &fd) ? fd : -1;
}

static bool have_wait_fds(const struct mbx_net *n)
{
	return n->wfd[0] >= 0 && n->wfd[1] >= 0 && n->wfd[2] >= 0 && n->timer_fd >= 0;
}

int mbx_net_wait_fds(struct mbx_ep *ep, int *fds)
{
	struct mbx_net *n = ep->net;
	int i, k = 0;

	if (!n)
		return 0;
	for (i = 0; i < 3; i++)
		if (n->wfd[i] >= 0)
			fds[k++] = n->wfd[i];
	if (n->timer_fd >= 0)
		fds[k++] = n->timer_fd;
	return k;
}

/* How often a sleeper with net peers is woken to run the net wire's
 * timers: the dead-peer probes and the idle scans run every 100 ms. */
#define SLEEP_TICK_NS 100000000ULL

int mbx_net_arm(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	struct fid *uf[1], *mf[2];
	struct itimerspec its = { .it_value = { 0, (long)SLEEP_TICK_NS } };
	struct mbu_dlist *it;
	int ret;

	if (!n)
		return 0;
	if (!have_wait_fds(n))
		return mbu_dlist_empty(&n->peers) ? 0 : -FI_EBUSY;
	/* Only polling moves a retransmission, an acknowledgement or credit
	 * owed, or frames still on their way out or in. */
	mbu_dlist_foreach(&n->peers, it) {
		struct mbx_npeer *np = mbu_container_of(it, struct mbx_npeer, link);
		struct mbu_frame *f;

		if (np->failed)
			continue;
		if (mbu_rel_tx_inflight(&np->rtx) || np->need_ack || !mbu_dlist_empty(&np->inq) ||
		    mbu_ring_peek(&np->cons, &f) == MBU_RING_FRAME)
			return -FI_EBUSY;
		for (int k = 0; k < CL_N; k++)
			if (cl_up(&np->cl[k]) && np->cl[k].rx.owed)
				return -FI_EBUSY;
	}
	/* A ring write raises no completion and no descriptor: what landed
	 * in the last read of the CQ is taken before sleeping, and the sends
	 * written into rings complete. */
	if (n->nrdone)
		return -FI_EBUSY;
	mbu_dlist_foreach(&n->rings, it) {
		uint64_t pos;
		uint32_t len;

		if (ring_head(mbu_container_of(it, struct cring, link), &pos, &len))
			return -FI_EBUSY;
	}
	uf[0] = &n->ucq->fid;
	mf[0] = &n->mcq->fid;
	mf[1] = &n->eq->fid;
	ret = fi_trywait(n->ufab, uf, 1);
	if (!ret)
		ret = fi_trywait(n->mfab, mf, 2);
	if (ret == -FI_EAGAIN) {
		/* Read every channel on the next calls, not one in COLD_POLLS. */
		n->dgram_hot_ns = n->eq_hot_ns = mbu_now_ns() + HOT_NS;
		return -FI_EAGAIN;
	}
	if (ret)
		return -FI_EBUSY;
	if (!mbu_dlist_empty(&n->peers) && timerfd_settime(n->timer_fd, 0, &its, NULL))
		return -FI_EBUSY;
	return 0;
}

void mbx_net_disarm(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };
	uint64_t v;

	if (!n || n->timer_fd < 0)
		return;
	(void)timerfd_settime(n->timer_fd, 0, &off, NULL);
	while (read(n->timer_fd, &v, sizeof(v)) > 0)
		;
}

int mbx_net_open(struct mbx_ep *ep)
{
	static const char *const msg_order[] = { "verbs", "tcp", NULL };
	static const char *const dgram_order[] = { "verbs", "udp", NULL };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr ucq_attr = { .format = FI_CQ_FORMAT_MSG, .size = UCQ_SIZE,
				       .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr mcq_attr = { .format = FI_CQ_FORMAT_MSG, .size = MCQ_SIZE,
				       .wait_obj = FI_WAIT_FD };
	struct fi_eq_attr eq_attr = { .size = 256, .wait_obj = FI_WAIT_FD };
	struct fi_rx_attr srx_attr = { .size = 4096 };
	struct mbx_net *n;
	uint16_t uport, mport;
	uint32_t ip;
	int ret;

	ep->net_mask = 1023;
	if (!mbx_param.net)
		return 0;
	ip = ep->want_ip ? ep->want_ip : mbx_net_pick_ip();
	if (!ip) {
		MBX_INFO(FI_LOG_EP_CTRL, "no IPv4 interface%s%s; no net wire\n",
			 mbx_param.net_iface[0] ? " named " : "", mbx_param.net_iface);
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -FI_ENOMEM;
	n->timer_fd = n->wfd[0] = n->wfd[1] = n->wfd[2] = -1;
	mbu_dlist_init(&n->peers);
	mbu_dlist_init(&n->conns);
	mbu_dlist_init(&n->flushq);
	mbu_dlist_init(&n->ckeys);
	mbu_dlist_init(&n->rings);
	n->credits = (uint32_t)mbx_param.net_credits;
	n->pool_size[POOL_TINY] = TINY_MAX;
	n->pool_size[POOL_SMALL] = DGRAM_MAX;
	n->pool_size[POOL_HI] = net_buf_hi(mbx_param.net_eager);
	n->pool_size[POOL_BIG] = net_buf_lo(mbx_param.net_frame);
	mbu_pool_init(&n->pool[POOL_TINY], sizeof(struct nbuf) + TINY_MAX, 64, 0);
	mbu_pool_init(&n->pool[POOL_SMALL], sizeof(struct nbuf) + DGRAM_MAX, 64, 0);
	mbu_pool_init(&n->pool[POOL_HI], sizeof(struct nbuf) + n->pool_size[POOL_HI], 16, 0);
	mbu_pool_init(&n->pool[POOL_BIG], sizeof(struct nbuf) + n->pool_size[POOL_BIG], 8, 0);
	mbu_pool_init(&n->uop_pool, sizeof(struct uop), 64, 0);
	n->st.srq_buf_hi = n->pool_size[POOL_HI];
	n->st.srq_buf_lo = n->pool_size[POOL_BIG];
	n->uinfo = pick_core(mbx_param.net_dgram_prov, dgram_order, FI_EP_DGRAM, ip, FI_MSG);
	/* Connections that can fi_read carry large messages without a copy
	 * through our frames; a core without FI_RMA still does the rest. */
	n->minfo = mbx_param.net_rma ? pick_core(mbx_param.net_msg_prov, msg_order, FI_EP_MSG, ip,
						 FI_MSG | FI_RMA | FI_READ | FI_WRITE |
						 FI_REMOTE_READ | FI_REMOTE_WRITE)
				     : NULL;
	n->rma = n->minfo != NULL;
	n->ring_ok = n->rma && mbx_param.conn_ring && mbx_param.conn_rings;
	/* Read only with rings, which need the core's RMA (minfo set here). */
	n->core_tcp = n->minfo && strcmp(n->minfo->fabric_attr->prov_name, "tcp") == 0;
	/* Large reads over tcp, unless its congestion control is bbr: between
	 * two hosts on cubic, reads of 1 MiB moved 1-4 MiB streams at 8.2-8.7
	 * GB/s against 5.7-6.1 in 128 KiB pieces, and a 1 MiB ping-pong took
	 * 143 us one-way against 221; under bbr, whose pacing holds back a
	 * large response, they did half as well (2.1 against 4.6 GB/s, 466
	 * against 221 us). Other cores keep the pieces they were measured
	 * with. The core's RMA operations take the same pieces: a stream of
	 * 4 MiB messages read by them (our MPI's host engine) moved 4.7-5.5
	 * GB/s in 1 MiB pieces against 3.3-3.4 in 128 KiB ones, once
	 * datagrams were no longer dropped (read_cqs_held). */
	char cc[32] = "";
	bool big_reads = n->core_tcp && (mbu_tcp_cc(cc, sizeof(cc)) || strcmp(cc, "bbr"));

	n->rma_chunk = n->uop_chunk = mbx_param.net_rma_chunk;
	if (!n->rma_chunk)
		n->rma_chunk = n->uop_chunk = big_reads ? (size_t)1 << 20 : (size_t)128 << 10;
	/* A message read alone (a ping-pong's) in one read: over tcp on cubic,
	 * two namespace hosts, medians of 5 interleaved rounds, the host
	 * engine's one-way 2/4/8/16 MiB took 319/747/1920/3226 us whole
	 * against 396/855/2011/4031 in 1 MiB pieces (OB1 329/737/1694/3178),
	 * the tagged engine's 4 MiB 629 against 890; streams, whose reads are
	 * not alone, within the noise (bench/results/net_alone.txt). Under
	 * bbr, where pieces are small, 256 KiB as measured in session 48. */
	n->rma_alone = mbx_param.net_rma_alone != MBX_RMA_ALONE_AUTO ? mbx_param.net_rma_alone
		       : big_reads ? (size_t)16 << 20 : (size_t)256 << 10;
	MBX_INFO(FI_LOG_EP_CTRL, "net: fi_read in pieces of %zu bytes, alone up to %zu (core %s, "
		 "congestion control %s)\n", n->rma_chunk, n->rma_alone,
		 n->minfo ? n->minfo->fabric_attr->prov_name : "none", cc[0] ? cc : "unknown");
	/* A request's head saves a large message a trip where a trip costs
	 * more than a copy of 64 KiB on each side. Over tcp it did not: two
	 * namespace hosts on cubic, our MPI's ping-pong in the faster CPU
	 * placement (bench/mpi/mbench.c's states, 10-12 runs each), 128-256
	 * KiB even (46.6 against 46.9 us one-way, 84.2 against 84.6) and
	 * 512 KiB-2 MiB slower with heads (130.6 against 111.6, 205.5
	 * against 151.9, 381.3 against 342.2); under bbr session 49 found
	 * them even too. Other cores (verbs) keep them, unmeasured here. */
	n->rts_head = mbx_param.net_rts_head != MBX_RTS_HEAD_AUTO ? mbx_param.net_rts_head
		      : n->core_tcp ? 0 : 65536;
	if (!n->minfo)
		n->minfo = pick_core(mbx_param.net_msg_prov, msg_order, FI_EP_MSG, ip, FI_MSG);
	/* Over verbs, RC is the faster channel and stays so. */
	n->small_dgram = mbx_param.net_small_dgram && n->minfo &&
			 strcmp(n->minfo->fabric_attr->prov_name, "verbs") != 0;
	/* A peer is connected for being busy so that its small messages take
	 * the faster channel. Where that is the datagram one, the connection
	 * would carry none of them (small_by_dgram) and only cost memory: an
	 * all-to-all at 64 ranks opened 15 per process for nothing, 30 KiB
	 * each. Frames that need a connection open one either way. */
	n->busy_threshold = mbx_param.conn_threshold ? (uint32_t)mbx_param.conn_threshold
			    : n->small_dgram ? 0 : BUSY_MSGS;
	n->st.busy_threshold = n->busy_threshold;
	n->st.rails = 1;
	if (!n->uinfo || !n->minfo) {
		MBX_WARN(FI_LOG_EP_CTRL, "no core provider for the %s channel; no net wire\n",
			 n->uinfo ? "connected" : "datagram");
		net_free(n);
		return 0;
	}
	ret = fi_fabric(n->uinfo->fabric_attr, &n->ufab, NULL);
	if (!ret)
		ret = fi_domain(n->ufab, n->uinfo, &n->udom, NULL);
	if (!ret)
		ret = fi_av_open(n->udom, &av_attr, &n->uav, NULL);
	if (!ret)
		ret = cq_open(n->udom, &ucq_attr, &n->ucq);
	if (!ret)
		ret = fi_endpoint(n->udom, n->uinfo, &n->uep, NULL);
	if (!ret)
		ret = fi_ep_bind(n->uep, &n->uav->fid, 0);
	if (!ret)
		ret = fi_ep_bind(n->uep, &n->ucq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(n->uep);
	if (!ret)
		ret = fi_fabric(n->minfo->fabric_attr, &n->mfab, NULL);
	if (!ret)
		ret = fi_domain(n->mfab, n->minfo, &n->mdom, NULL);
	if (!ret && n->rma) {
		const char *why = NULL;

		mbu_rcache_init(&n->rc, &rc_ops, n, mbx_param.mr_cache_max_count,
				mbx_param.mr_cache_max_size);
		MBX_INFO(FI_LOG_MR, "registration cache: %zu entries, %zu bytes, monitor %s%s%s\n",
			 mbx_param.mr_cache_max_count, mbx_param.mr_cache_max_size,
			 mbu_rcache_monitor(&why), why ? ": " : "", why ? why : "");
		/* Extra rails only pull what the cache registered, so they
		 * need both. */
		if (mbx_param.net_rails[0] && !mbx_param.mr_cache_max_count)
			MBX_WARN(FI_LOG_EP_CTRL, "FI_MATCHBOX_NET_RAILS needs the registration "
				 "cache (FI_MATCHBOX_MR_CACHE_MAX_COUNT 0); rail 0 only\n");
		else if (mbx_param.net_rails[0] && mbx_rails_open(mbx_param.net_rails, &n->rails))
			MBX_WARN(FI_LOG_EP_CTRL, "no memory for the rails; rail 0 only\n");
	}
	if (!ret) {
		ret = fi_eq_open(n->mfab, &eq_attr, &n->eq, NULL);
		if (ret) {
			eq_attr.wait_obj = FI_WAIT_NONE;
			ret = fi_eq_open(n->mfab, &eq_attr, &n->eq, NULL);
		}
	}
	if (!ret)
		ret = cq_open(n->mdom, &mcq_attr, &n->mcq);
	if (!ret)
		ret = fi_srx_context(n->mdom, &srx_attr, &n->srx[CL_HI], NULL);
	if (!ret)
		ret = fi_srx_context(n->mdom, &srx_attr, &n->srx[CL_LO], NULL);
	if (!ret)
		ret = fi_passive_ep(n->mfab, n->minfo, &n->pep, NULL);
	if (!ret)
		ret = fi_pep_bind(n->pep, &n->eq->fid, 0);
	if (!ret)
		ret = fi_listen(n->pep);
	if (!ret)
		ret = cm_fits(n->pep, n->minfo->fabric_attr->prov_name);
	if (ret) {
		MBX_WARN(FI_LOG_EP_CTRL, "net wire over %s/%s: %s; no net wire\n",
			 n->minfo->fabric_attr->prov_name, n->uinfo->fabric_attr->prov_name,
			 fi_strerror(-ret));
		net_free(n);
		return 0;
	}
	uport = port_of(&n->uep->fid);
	mport = port_of(&n->pep->fid);
	if (!uport || !mport) {
		MBX_WARN(FI_LOG_EP_CTRL, "net wire has no port; no net wire\n");
		net_free(n);
		return 0;
	}
	n->wfd[0] = wait_fd_of(&n->ucq->fid);
	n->wfd[1] = wait_fd_of(&n->mcq->fid);
	n->wfd[2] = wait_fd_of(&n->eq->fid);
	n->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!have_wait_fds(n))
		MBX_INFO(FI_LOG_EP_CTRL, "the net wire's core offers no wait descriptors: "
			 "descriptor waits poll while there are net peers\n");
	ep->net = n;
	n->ep = ep;
	n->st.rails = 1 + mbx_rails_count(n->rails);
	post_dgram(n);
	post_srq(n, CL_HI);
	ep->addr.ip = ip;
	ep->addr.ports = (uint32_t)uport << 16 | mport;
	MBX_INFO(FI_LOG_EP_CTRL, "net wire %s/%s on %08x ports %u/%u\n",
		 n->minfo->fabric_attr->prov_name, n->uinfo->fabric_attr->prov_name, ip,
		 uport, mport);
	return 0;
}

/* The tcp core of libfabric 1.17 frees a socket its listener accepted
 * only once the connection request on it has been read, or the socket
 * has closed: one still waiting when the EQ closes is lost (a 376-byte
 * context and a descriptor, which LeakSanitizer reports). A peer that
 * connects as we close sends its request, or gives up and closes, within
 * moments, so the EQ is read until it has been quiet for EQ_QUIET_NS,
 * declining every request, for at most EQ_DRAIN_NS. */
#define EQ_QUIET_NS	10000000ULL
#define EQ_DRAIN_NS	200000000ULL

static void eq_drain(struct mbx_net *n)
{
	union cm_event u;
	uint64_t now = mbu_now_ns(), quiet = now + EQ_QUIET_NS, cap = now + EQ_DRAIN_NS;
	uint32_t event;
	ssize_t ret;

	while (now < quiet && now < cap) {
		ret = fi_eq_read(n->eq, &event, &u, sizeof(u), 0);
		if (ret == -FI_EAVAIL) {
			struct fi_eq_err_entry err = { 0 };

			if (fi_eq_readerr(n->eq, &err, 0) < 0)
				break;
		} else if (ret == -FI_EAGAIN) {
			usleep(200);
			now = mbu_now_ns();
			continue;
		} else if (ret < 0) {
			break;
		} else if (event == FI_CONNREQ) {
			n->st.conns_refused++;
			fi_reject(n->pep, u.cm.info->handle, NULL, 0);
			fi_freeinfo(u.cm.info);
		}
		now = mbu_now_ns();
		quiet = now + EQ_QUIET_NS;
	}
}

void mbx_net_close(struct mbx_ep *ep)
{
	struct mbx_net *n = ep->net;
	uint64_t deadline;
	struct mbu_dlist *it;

	if (!n)
		return;
	/* What the application sent must leave before we go: flush the rings
	 * and wait for the datagram acknowledgements, for a bounded time. */
	deadline = mbu_now_ns() + 2000000000ULL;
	for (;;) {
		bool busy = false;

		mbx_net_progress(ep);
		mbu_dlist_foreach(&n->peers, it) {
			struct mbx_npeer *np = mbu_container_of(it, struct mbx_npeer, link);
			struct mbu_frame *f;

			if (!np->failed && (mbu_ring_peek(&np->cons, &f) != MBU_RING_EMPTY ||
					    mbu_rel_tx_inflight(&np->rtx)))
				busy = true;
		}
		if (!busy || mbu_now_ns() > deadline)
			break;
		usleep(100);
	}
	if (n->eq && n->pep)
		eq_drain(n);
	if (n->st.peers)
		MBX_INFO(FI_LOG_EP_CTRL, "net: %llu peers, %llu connections made, %llu accepted, "
			 "%llu refused, %llu over budget, %llu closed, max %llu open; %llu datagram "
			 "and %llu connection frames (%llu by ring write), %llu retransmits, %llu duplicates, %llu bad; "
			 "%llu large messages pulled by fi_read in %llu reads, %llu sent with their head; "
			 "%llu low-priority connections, "
			 "%llu frames on them; %llu credit waits; %llu RMA by the core (%llu reads in "
			 "%llu pieces), %llu keys "
			 "offered, %llu withdrawn\n",
			 (unsigned long long)n->st.peers, (unsigned long long)n->st.conns_made,
			 (unsigned long long)n->st.conns_accepted,
			 (unsigned long long)n->st.conns_refused,
			 (unsigned long long)n->st.conns_over_budget,
			 (unsigned long long)n->st.conns_closed,
			 (unsigned long long)n->st.conns_max,
			 (unsigned long long)n->st.dgram_msgs, (unsigned long long)n->st.conn_msgs,
			 (unsigned long long)n->st.ring_msgs,
			 (unsigned long long)n->st.retransmits, (unsigned long long)n->st.duplicates,
			 (unsigned long long)n->st.bad_frames,
			 (unsigned long long)ep->stats.rdv_read, (unsigned long long)n->reads,
			 (unsigned long long)ep->stats.rdv_head,
			 (unsigned long long)n->st.lo_conns_made, (unsigned long long)n->st.lo_msgs,
			 (unsigned long long)n->st.credit_waits, (unsigned long long)n->st.rma_core,
			 (unsigned long long)n->core_reads, (unsigned long long)n->core_read_pieces,
			 (unsigned long long)n->st.rma_keys_offered,
			 (unsigned long long)n->st.rma_keys_withdrawn);
	if (n->rails)
		MBX_INFO(FI_LOG_EP_CTRL, "net rails: %llu; bytes read over each: %llu %llu %llu "
			 "%llu\n", (unsigned long long)n->st.rails,
			 (unsigned long long)n->st.rail_read_bytes[0],
			 (unsigned long long)n->st.rail_read_bytes[1],
			 (unsigned long long)n->st.rail_read_bytes[2],
			 (unsigned long long)n->st.rail_read_bytes[3]);
	/* Registrations of sends still waiting go before their domain. */
	for (size_t i = 0; i < ep->tx_cap; i++)
		mbx_net_rma_release(ep, &ep->txs[i]);
	while (!mbu_dlist_empty(&n->peers))
		mbx_net_peer_fini(ep, mbu_container_of(n->peers.next, struct mbx_npeer, link)->p);
	ep->net = NULL;
	net_free(n);
}
