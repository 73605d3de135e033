/* Private header of the matchbox provider: its objects (fabric, domain, AV,
 * CQ, counter, EQ, endpoint), their shared helpers and the parameters.
 *
 * Threading: every object of a domain shares the domain's lock, taken only
 * when the application asked for FI_THREAD_SAFE (or left threading
 * unspecified). Progress is manual: it runs inside fi_cq_read, fi_cntr_read,
 * the blocking waits and the data calls, always under that lock, so the
 * endpoint's queues need no locking of their own. */
#ifndef MBX_H
#define MBX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#include "mbu_choose.h"
#include "mbu_ntpick.h"
#include "mbu_keytab.h"
#include "mbu_list.h"
#include "mbu_pool.h"
#include "mbu_qmap.h"
#include "mbu_ring.h"
#include "mbu_match.h"
#include "mbx_proto.h"
#include "rdma/fi_ext_matchbox.h"

#define MBX_PROV_NAME	"matchbox"
#define MBX_FABRIC_NAME	"matchbox"
#define MBX_DOMAIN_NAME	"matchbox" /* one domain: this node's shared memory and the net wire */
#define MBX_PROV_VERSION FI_VERSION(0, 1)
#define MBX_API_VERSION	FI_VERSION(1, 17)
#define MBX_MAX_MSG_SIZE (1ULL << 40)
#define MBX_CQ_DATA_SIZE 8
/* What fi_info advertises per domain (endpoints, queues, CQs, counters):
 * nothing in the provider is sized by it, it is the figure a program may
 * plan for; hints asking for more are refused by fi_getinfo. */
#define MBX_DOM_COUNT 256
#define MBX_TAG_GENERIC 0xAAAAAAAAAAAAAAAAULL /* fi_endpoint(3): alternating bits = one unstructured 64-bit tag */
#define MBX_UX_CLASSES	8

extern struct fi_provider mbx_prov;

#define MBX_WARN(sub, ...) FI_WARN(&mbx_prov, sub, __VA_ARGS__)
#define MBX_INFO(sub, ...) FI_INFO(&mbx_prov, sub, __VA_ARGS__)

enum mbx_large_proto { MBX_LARGE_AUTO, MBX_LARGE_CMA, MBX_LARGE_COPY, MBX_LARGE_ADAPTIVE };
/* RMA to same-host peers: CMA never, to targets not seen progressing, or always. */
enum mbx_rma_cma { MBX_RMA_CMA_NEVER, MBX_RMA_CMA_AUTO, MBX_RMA_CMA_ALWAYS };
enum mbx_conn_mode { MBX_CONN_STATIC, MBX_CONN_ONDEMAND, MBX_CONN_ADAPTIVE, MBX_CONN_PARTIAL };

/* FI_MATCHBOX_NET_RTS_HEAD and FI_MATCHBOX_NET_RMA_ALONE left unset: the
 * net wire chooses by its core. */
#define MBX_RTS_HEAD_AUTO ((size_t)-1)
#define MBX_RMA_ALONE_AUTO ((size_t)-1)

struct mbx_params {
	size_t eager_limit;
	size_t inject_size;
	size_t ring_size;
	size_t copy_min;
	size_t chunk_size;
	size_t nchunks;
	size_t shm_peers;
	size_t shm_prefault;	/* peers whose rings are populated at connect */
	size_t tx_size;
	size_t rx_size;
	size_t unexp_max;
	size_t nt_min;
	size_t nt_rate;		/* MB/s below which a sender's copies into shm go non-temporal */
	int spin_us;
	size_t auto_nap_us;	/* FI_PROGRESS_AUTO's poll interval where it cannot sleep */
	enum mbx_large_proto large_proto;
	char job[32];
	/* the net wire (mbx_net.c) */
	bool net;
	char net_iface[32];
	char net_msg_prov[32];
	char net_dgram_prov[32];
	char net_rails[128];	/* extra interfaces for large reads (mbx_rail.h) */
	char net_rail_prov[32];
	int rail_policy;	/* enum mbx_rail_policy */
	enum mbx_conn_mode conn_mode;
	size_t conn_threshold;	/* 0: chosen by the core (mbx_net.c) */
	size_t conn_idle_ms;
	size_t conn_max;	/* 0: mbu_conn_budget()'s default */
	size_t srq_k, srq_b;
	size_t conn_ring;	/* bytes of a connection ring (mbx_net.c); 0: none */
	size_t conn_rings;	/* connections per endpoint that get one */
	size_t conn_ring_lone;	/* largest lone frame written into a ring, or: */
#define MBX_CONN_RING_LONE_AUTO SIZE_MAX	/* chosen per connection (mbx_net.c) */
	size_t net_credits;
	size_t net_frame;
	size_t net_ring_size;	/* a net peer's staging ring: fits net_frame */
	size_t net_eager;
	size_t net_rto_ms;
	size_t net_tries;
	bool net_rma;
	size_t net_rma_chunk;
	size_t net_rma_alone;	/* a message read alone: its rest in one read up to this */
				/* (MBX_RMA_ALONE_AUTO: by the core) */
	size_t net_rts_head;	/* 0: an RTS to another host carries no head; */
				/* MBX_RTS_HEAD_AUTO: by the core (mbx_net.c) */
	size_t net_rma_core_max;
	size_t mr_cache_max_count;	/* 0: no registration cache */
	size_t mr_cache_max_size;
	bool net_small_dgram;
	size_t resolve_ms;
	enum mbx_rma_cma rma_cma;	/* same-node RMA with CMA (mbx_rma.c) */
};
extern struct mbx_params mbx_param;

/* libfabric 1.17's internal flag that lets a provider find core providers
 * that FI_PROVIDER hid from applications (as efa and lnx do for shm). It is
 * not public API: if a later libfabric drops it, FI_PROVIDER=matchbox alone
 * hides tcp/udp and the net wire reports that it found none. */
#define MBX_GETINFO_HIDDEN (1ULL << 60)

/* Provider capabilities and the ones a user must ask for explicitly. */
#define MBX_TX_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE)
#define MBX_RX_CAPS (FI_MSG | FI_TAGGED | FI_RECV | FI_SOURCE | FI_DIRECTED_RECV | \
		     FI_MULTI_RECV | FI_RMA | FI_ATOMIC | FI_REMOTE_READ | FI_REMOTE_WRITE | \
		     FI_RMA_EVENT)
/* The most one atomic operation may carry (fi_atomicvalid's count is this
 * over the element size); it travels in pieces of whole elements. */
#define MBX_ATOMIC_MAX_BYTES 65536
#define MBX_DOM_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define MBX_CAPS (MBX_TX_CAPS | MBX_RX_CAPS | MBX_DOM_CAPS)
#define MBX_SECONDARY_CAPS (FI_SOURCE | FI_DIRECTED_RECV | FI_MULTI_RECV | FI_LOCAL_COMM | \
			    FI_REMOTE_COMM | FI_RMA_EVENT)
/* The mr_mode bits a domain follows when its fi_info names them (as
 * FI_MR_BASIC does). fi_getinfo asks for none of them, as matchbox needs
 * none: a program chooses its keys and addresses regions by offset, the
 * mode every program that reads its fi_info can handle (and one that
 * allows provider keys but picks its own, like fabtests' fi_multi_mr,
 * needs). */
#define MBX_MR_MODES (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY)
#define MBX_MSG_ORDER (FI_ORDER_SAS)

int mbx_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints, struct fi_info **info);
int mbx_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
int mbx_parse_addr(const void *addr, size_t len, struct mbx_addr *out);
int mbx_format_addr(const struct mbx_addr *a, char *buf, size_t len);
void mbx_shm_name(const struct mbx_addr *a, char *buf, size_t len);
void mbx_params_init(void);
uint32_t mbx_fnv1a(const char *s);

/* A listener address (host order): where an endpoint's name service
 * answers (mbx_addr.c). ip 0 is every local address. */
struct mbx_sockname {
	uint32_t ip;
	uint16_t port;
};

enum { MBX_ADDR_FULL = 0, MBX_ADDR_SOCKNAME = 1 };
bool mbx_addr_format_ok(uint32_t fmt);
/* Bytes per address in an array of `fmt` addresses; 0 for strings. */
size_t mbx_addr_stride(uint32_t fmt);
/* MBX_ADDR_FULL (into *full), MBX_ADDR_SOCKNAME (into *sn) or -FI_EINVAL. */
int mbx_addr_decode(const void *addr, size_t len, uint32_t fmt, struct mbx_addr *full,
		    struct mbx_sockname *sn);
int mbx_addr_encode(const struct mbx_sockname *sn, uint32_t fmt, void *buf, size_t *len);
int mbx_sockname_lookup(const char *node, const char *service, bool passive,
			struct mbx_sockname *sn);
/* Asks the endpoint listening at `sn` for its full address (blocking, up to
 * FI_MATCHBOX_RESOLVE_MS). */
int mbx_name_resolve(const struct mbx_sockname *sn, struct mbx_addr *out);
/* The same for an endpoint of this process, without waiting: true if found. */
bool mbx_name_resolve_local(const struct mbx_sockname *sn, struct mbx_addr *out);
uint32_t mbx_net_pick_ip(void);
uint32_t mbx_host_id(void);
uint32_t mbx_job_id(void);

/* Stubs for ops-table slots we do not implement: never a NULL slot. */
int mbx_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int mbx_no_control(struct fid *fid, int command, void *arg);
int mbx_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
		    void *context);
int mbx_no_tostr(const struct fid *fid, char *buf, size_t len);
int mbx_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
		   void *context);

struct mbx_fabric {
	struct fid_fabric fabric;
	_Atomic int refs;
};

struct mbx_mr;
struct mbx_ckey;

/* The domain's registrations by key (open addressing; a removed key
 * leaves a tombstone). */
struct mbx_mr_table {
	struct mbx_mr **slot;
	size_t mask, used;
};

struct mbx_domain {
	struct fid_domain domain;
	struct mbx_fabric *fab;
	struct fi_info *info;
	pthread_mutex_t lock;
	bool locking;
	_Atomic int refs;
	uint64_t next_key;
	uint64_t mr_mode;
	struct mbx_mr_table mrs;
	/* Every endpoint, under the lock: a counter bound only to a region
	 * (FI_RMA_EVENT) progresses them all while it is read. */
	struct mbu_dlist eps;
	/* Registrations published for same-node initiators (mbx_rma.c):
	 * made at the first enable of an endpoint that takes RMA. */
	struct mbu_keytab kt;
	void *kt_mem;
	size_t kt_size;
	char kt_name[MBX_KT_NAME_MAX];
	bool kt_failed;		/* could not be made: initiators use frames */
	/* FI_PROGRESS_AUTO (mbx_auto.c): the progress thread, the endpoint
	 * whose doorbell it sleeps on, and the condition it naps and hands
	 * that endpoint back on (with the lock above). */
	pthread_t auto_tid;
	pthread_cond_t auto_cv;
	struct mbx_ep *auto_ep;
	bool auto_on, auto_stop;
};

#define MBX_MR_TOMB ((struct mbx_mr *)1)	/* a deleted slot of struct mbx_mr_table */

struct mbx_mr {
	struct fid_mr mr;
	struct mbx_domain *dom;
	struct iovec iov[MBX_IOV_LIMIT];
	size_t iov_cnt;
	size_t len;
	uint64_t access;
	uint64_t offset;		/* fi_mr_attr offset: the first byte's remote address */
	struct mbx_cntr *cntr;		/* FI_RMA_EVENT: counts remote accesses */
	uint64_t cntr_flags;
	int kt_idx;			/* its slot in the domain's published table, or -1 */
	struct mbx_ckey *ckeys;		/* its registrations with net wires' cores (mbx_net.c) */
};

/* An RMA target's check, with the domain lock held: `len` bytes at remote
 * address `addr` under `key`, for `access` (FI_REMOTE_READ/WRITE). On
 * success the bytes are described by up to MBX_IOV_LIMIT iovecs of ours.
 * A zero-length access always succeeds (*mrp: the region, if any). */
int mbx_mr_check(struct mbx_domain *d, uint64_t key, uint64_t addr, uint64_t len,
		 uint64_t access, struct iovec *iov, size_t *cnt, struct mbx_mr **mrp);
void mbx_mr_table_fini(struct mbx_mr_table *t);

static inline void mbx_lock(struct mbx_domain *d)
{
	if (d->locking)
		pthread_mutex_lock(&d->lock);
}

static inline void mbx_unlock(struct mbx_domain *d)
{
	if (d->locking)
		pthread_mutex_unlock(&d->lock);
}

extern struct fi_ops_mr mbx_mr_ops;
int mbx_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int mbx_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		void *context);
int mbx_eq_write_err(struct fid_eq *eq, const struct fi_eq_err_entry *e);

/* Address vector. Entries are never reused after removal, so an fi_addr_t
 * handed out stays unambiguous for the life of the AV. An entry inserted by
 * listener address is resolved to its full address at its first use, as
 * sockets-style providers connect at first use: inserting never waits on
 * the network, and a peer that is not up yet is no error until then. */
struct mbx_av_entry {
	struct mbx_addr addr;		/* valid once resolved */
	struct mbx_sockname sn;		/* the listener address it was inserted by */
	/* The entry incoming messages from this address are reported under and
	 * directed receives match on: the first live insert of the address.
	 * Programs insert one peer twice (Open MPI does for intercommunicator
	 * peers) and then receive from either fi_addr_t. Valid once resolved. */
	fi_addr_t canon;
	bool has_sn;
	bool resolved;
	bool valid;
};

struct mbx_av_rev {
	struct mbx_rev_slot *s;
	size_t mask, used;
};

struct mbx_av {
	struct fid_av av;
	struct mbx_domain *dom;
	enum fi_av_type type;
	uint32_t fmt;			/* the domain's address format */
	struct mbx_av_entry *tab;
	size_t count, cap;
	struct mbx_av_rev rev;		/* addr key -> fi_addr, for FI_SOURCE */
	uint64_t gen;			/* bumped on every insert/remove/resolve */
	struct fid_eq *eq;		/* FI_EVENT: inserts complete here */
	bool event;
	_Atomic int refs;
};

static inline uint64_t mbx_addr_k0(const struct mbx_addr *a)
{
	return ((uint64_t)a->host << 32) | a->uid;
}

static inline uint64_t mbx_addr_k1(const struct mbx_addr *a)
{
	return ((uint64_t)(uint32_t)a->pid << 32) | a->ep;
}

int mbx_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		void *context);
fi_addr_t mbx_av_reverse(struct mbx_av *av, const struct mbx_addr *a);
/* With the domain lock held: 0 when `a` names a usable entry, resolving
 * it first if needed (the lock is dropped while the peer is asked). */
int mbx_av_resolve_locked(struct mbx_av *av, fi_addr_t a);

static inline bool mbx_av_usable(const struct mbx_av *av, fi_addr_t a)
{
	return a < av->count && av->tab[a].valid && av->tab[a].resolved;
}

/* Completion queue. Entries are kept in the richest format and converted on
 * read; the ring grows rather than drop a completion. */
struct mbx_cqe {
	void *context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
};

struct mbx_cq_err {
	struct mbu_dlist link;
	struct fi_cq_err_entry e;
	fi_addr_t src;
};

#define MBX_CQ_MAX_EPS 8

struct mbx_wait;
/* How a CQ or counter can be waited on with a file descriptor: its own
 * epoll set (FI_WAIT_FD, FI_WAIT_UNSPEC), or the wait set it belongs to
 * (FI_WAIT_SET); enabled endpoints put their wake and name sockets in it. */
struct mbx_waitable {
	int fd;			/* own epoll fd, or -1 */
	struct mbx_wait *set;
};

struct mbx_cq {
	struct fid_cq cq;
	struct mbx_domain *dom;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	struct mbx_waitable w;
	struct mbx_cqe *ring;
	size_t cap, head, count;
	struct mbu_dlist errs;
	struct mbx_ep *eps[MBX_CQ_MAX_EPS];
	int neps;
	_Atomic int signaled;
	_Atomic int refs;
};

int mbx_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		void *context);
int mbx_cq_grow(struct mbx_cq *cq);
void mbx_cq_write_err(struct mbx_cq *cq, void *context, uint64_t flags, int err,
		      size_t len, size_t olen, uint64_t tag, uint64_t data, void *buf,
		      fi_addr_t src);
void mbx_progress_cq_eps(struct mbx_ep **eps, int n);
/* A counter's endpoints, or the domain's when it has none of its own. */
void mbx_cntr_progress_locked(struct mbx_cntr *c);

static inline int mbx_cq_write(struct mbx_cq *cq, void *context, uint64_t flags,
			       size_t len, void *buf, uint64_t data, uint64_t tag,
			       fi_addr_t src)
{
	struct mbx_cqe *e;

	if (__builtin_expect(cq->count == cq->cap, 0) && mbx_cq_grow(cq))
		return -FI_ENOMEM;
	e = &cq->ring[(cq->head + cq->count) & (cq->cap - 1)];
	e->context = context;
	e->flags = flags;
	e->len = len;
	e->buf = buf;
	e->data = data;
	e->tag = tag;
	e->src = src;
	cq->count++;
	return 0;
}

struct mbx_cntr {
	struct fid_cntr cntr;
	struct mbx_domain *dom;
	_Atomic uint64_t value, err;
	enum fi_wait_obj wait_obj;
	struct mbx_waitable w;
	struct mbx_ep *eps[MBX_CQ_MAX_EPS];
	int neps;
	_Atomic int refs;
};

int mbx_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);

static inline void mbx_cntr_inc(struct mbx_cntr *c)
{
	if (c)
		atomic_fetch_add_explicit(&c->value, 1, memory_order_release);
}

static inline void mbx_cntr_inc_err(struct mbx_cntr *c)
{
	if (c)
		atomic_fetch_add_explicit(&c->err, 1, memory_order_release);
}

/* A same-node peer as one endpoint sees it: the channel we write into (a
 * slot in its segment) and the channel it writes into (a slot in ours). */
enum mbx_peer_state { MBX_PEER_NEW, MBX_PEER_READY, MBX_PEER_FAILED };

struct mbx_peer {
	struct mbu_dlist key_link;	/* in ep->peers node */
	struct mbu_dlist all_link;
	struct mbu_dlist pend_link;	/* in ep->pending_peers when txq non-empty */
	struct mbx_addr addr;
	char name[MBX_NAME_MAX];
	int state;
	int err;
	/* transmit channel */
	struct mbx_seg_hdr *rseg;
	size_t rseg_size;
	struct mbx_slot *tslot;
	struct mbu_ring_prod prod;
	uint64_t bulk_filled;		/* our copy of tslot->bulk_filled */
	uint64_t bulk_sched;		/* chunks promised by the CTSs accepted so far */
	/* The pipeline's bulk area, mapped whole (mbu_shm_prefault) at its
	 * first use: by us as sender into the peer's slot, as receiver in ours. */
	bool bulk_mapped_tx, bulk_mapped_rx;
	/* Ordinary or non-temporal stores for our large copies into its
	 * segment, by what they have lately achieved (mbu_ntpick.h). */
	struct mbu_ntpick ntpick;
	struct mbu_dlist txq;		/* sends waiting for ring space, in order */
	struct mbu_dlist ctrlq;		/* control frames waiting for ring space */
	/* RMA target: its requests we could not serve yet (no transmit entry
	 * for a read's data), copied out of the ring in order, with those
	 * behind them, so that the frames behind (our own reads' data among
	 * them) are not held up (struct mbx_rma_wait) */
	struct mbu_dlist rma_wait;
	/* receive channel */
	int rxslot;
	struct mbu_dlist cts_wait;	/* matched copy-path receives, in order */
	struct mbx_rx *cts_active;	/* draining (shm) or fed by DATA frames (net) */
	struct mbx_rx *cts_next;	/* shm: cleared to send behind cts_active */
	struct mbu_dlist reading;	/* receives pulling from it with fi_read */
	bool cma_ok;
	/* bookkeeping */
	fi_addr_t fiaddr;
	uint64_t fiaddr_gen;
	size_t eager_limit;		/* largest eager message to this peer */
	size_t piece_limit;		/* net: largest DATA frame of a clear-to-send transfer */
	struct mbx_npeer *net;		/* non-NULL: on another host, reached by net */
	bool lost;			/* the net wire gave up on it: nothing more will come */
	/* RMA target: the write whose pieces are arriving, and its first error */
	uint64_t wr_id;
	int wr_err;
	/* RMA initiator: frame operations not yet answered (CMA must not pass
	 * them), and the peer's published registrations (mbx_rma.c) */
	uint32_t rma_out;
	uint32_t rts_offered;	/* our RTSs to it offered for fi_read, not yet finished */
	int kt_state;			/* MBX_KT_UNSEEN / _MAPPED / _NONE */
	bool rma_cma_ok;
	bool hb_valid;			/* the target's progress count seen once */
	uint64_t hb_seen, hb_ns;	/* ... its last value, and when it last moved */
	uint64_t hb_check;		/* when we last looked */
	struct mbu_keytab kt;
	void *kt_mem;
	size_t kt_size;
};

enum { MBX_KT_UNSEEN = 0, MBX_KT_MAPPED, MBX_KT_NONE };

struct mbx_rxslot {
	struct mbu_ring_cons cons;
	struct mbx_slot *slot;
	struct mbx_peer *peer;
	bool corrupt;
	bool closing;		/* its sender died: retire once drained */
};

/* A send the provider still owns: queued for ring space, waiting for CTS or
 * FIN, or streaming chunks. Kept in a fixed table so that the id echoed by
 * the peer can be checked before it is trusted. */
enum mbx_tx_state { MBX_TX_FREE, MBX_TX_QUEUED, MBX_TX_WAIT, MBX_TX_STREAM };

struct mbx_tx {
	struct mbu_dlist link;
	struct mbx_peer *peer;
	void *context;
	uint64_t flags;		/* completion flags (FI_SEND|FI_TAGGED|...) */
	uint64_t opflags;	/* FI_COMPLETION, FI_INJECT, FI_DELIVERY_COMPLETE */
	uint8_t op;
	uint8_t wflags;
	uint32_t gen;
	uint32_t idx;
	int state;
	uint64_t tag, data;
	size_t size;
	struct iovec iov[MBX_IOV_LIMIT];
	size_t iov_cnt;
	void *bounce;		/* inject data copied while queued */
	/* RMA: the remote segments, and bytes answered of a read */
	struct fi_rma_iov riov[MBX_IOV_LIMIT];
	size_t riov_cnt;
	size_t got;
	int rerr;
	/* atomics: what to do, where old values go, the compare values */
	uint8_t akind, aop, adt;
	struct iovec res_iov[MBX_IOV_LIMIT], cmp_iov[MBX_IOV_LIMIT];
	size_t res_cnt, cmp_cnt;
	struct mbx_peer *rma_peer;	/* an RMA or atomic counted in its peer's rma_out */
	struct fid_mr *mr;	/* net RTS: the data registered for the peer's fi_read */
	struct mbu_rcache_entry *rce;	/* ... or the cached registration holding it */
	bool rails;		/* ... which the RTS offered on the extra rails too */
	bool offered;		/* ... counted in its peer's rts_offered */
	/* copy path */
	uint64_t bulk_base;	/* shm: its first chunk in the bulk ring (from the CTS) */
	size_t want, streamed;
};

#define MBX_RD_STRIPE 0xff

/* A posted receive, or a large receive in progress. */
struct mbx_rx {
	struct mbu_mentry m;
	struct mbu_dlist link;
	void *context;
	uint64_t flags;		/* FI_RECV|FI_TAGGED|FI_MSG (+FI_MULTI_RECV) */
	uint64_t opflags;
	struct iovec iov[MBX_IOV_LIMIT];
	size_t iov_cnt;
	size_t total;
	size_t mr_off;		/* multi-recv: bytes used */
	bool multi;
	bool posted;
	/* large receive in progress */
	struct mbx_peer *peer;
	fi_addr_t msg_src;
	uint64_t msg_tag, msg_data, msg_id;
	uint8_t msg_wflags;
	size_t msg_size, take;
	uint64_t bulk_base;
	size_t copied;
	uint64_t t_drain;	/* when the pipeline started draining it (large_choice) */
	bool chosen;		/* its way was chosen by large_choice: record its time */
	void *cbuf;		/* completion buffer pointer */
	/* pulled from another host with fi_read, in pieces */
	size_t rd_next;		/* first byte not yet asked for */
	uint32_t rd_pending;	/* reads in flight */
	uint32_t rd_key;
	uint64_t rd_base;	/* where the message starts in that registration */
	bool rd_failed;
	bool rd_begun;		/* its rail is chosen (rd_rail) */
	/* The rail every piece goes on (round robin, binding), or
	 * MBX_RD_STRIPE: each piece on the rail with the most room. */
	uint8_t rd_rail;
	uint64_t cflags;	/* extra completion flags (FI_MULTI_RECV) */
};

/* A message that arrived before its receive (or claimed by FI_PEEK|FI_CLAIM). */
struct mbx_ux {
	struct mbu_mentry m;
	struct mbx_peer *peer;
	fi_addr_t src;
	uint8_t op, wflags;
	uint64_t tag, data, size, id;
	union {
		struct mbx_wire_iov riov[MBX_IOV_LIMIT];	/* RTS */
		/* An eager payload this small lives here: no buffer to get and
		 * give back for the common small unexpected message. */
		unsigned char inl[MBX_IOV_LIMIT * sizeof(struct mbx_wire_iov)];
	};
	uint8_t riov_cnt;
	uint32_t rkey;		/* RTS with MBX_WF_RMA */
	size_t kept;		/* bytes in buf: the eager payload, or an RTS's head (0: none) */
	void *buf;
	int cls;
	bool tagged;
};

struct mbx_ctrl {
	struct mbu_dlist link;
	uint8_t op;
	uint64_t id, size, data, tag;
};

/* Transmit entries only a target's answers (read data) may take. Without
 * them, endpoints that all read from one another can each fill their pool
 * with their own reads, and none can answer: a cycle of ranks reading
 * from the next one across hosts stalled that way for good. */
#define MBX_TX_REPLY_RESERVE 64

struct mbx_ep {
	struct fid_ep ep;
	struct mbx_domain *dom;
	struct mbu_dlist dom_link;
	struct mbx_av *av;
	struct mbx_cq *tx_cq, *rx_cq;
	struct mbx_cntr *tx_cntr, *rx_cntr;
	struct mbx_cntr *wr_cntr, *rd_cntr, *rwr_cntr, *rrd_cntr;	/* FI_WRITE, FI_READ, remote */
	struct fi_info *info;
	uint64_t caps;
	uint64_t tx_op_flags, rx_op_flags;
	bool tx_selective, rx_selective;
	bool enabled;
	bool directed;
	size_t min_multi_recv;
	size_t inject_size;
	size_t eager_limit;
	/* While trecv_now posts a receive (under the domain lock): where the
	 * completion of that receive goes if it finishes in the call, and its
	 * context; NULL once filled. */
	struct fi_cq_tagged_entry *now;
	void *now_ctx;
	struct mbx_addr addr;
	char name[MBX_NAME_MAX];
	char shm_name[MBX_NAME_MAX];
	/* inbound segment */
	struct mbx_seg_hdr *seg;
	size_t seg_size;
	struct mbx_rxslot *rxslots;
	size_t shm_prefaulted;	/* peers' rings populated at connect (shm_prefault) */
	/* Same-node messages from copy_min up: CMA (way 0) or the two-copy
	 * pipeline (way 1), by what each lately took (large_proto adaptive). */
	struct mbu_choose large_choice;
	uint32_t nrx;		/* bound slots lie below this index */
	uint32_t claims_seen;
	uint32_t rx_rr;
	/* peers */
	struct mbu_qmap peers;
	struct mbu_dlist peer_list;
	struct mbu_dlist pending_peers;
	struct mbx_peer **fiaddr_peer;
	size_t fiaddr_cap;
	uint64_t fiaddr_gen;
	/* matching */
	struct mbu_posted tposted, mposted;
	struct mbu_unexp tunexp, munexp;
	uint64_t ux_gen;		/* AV generation the queued sources were resolved at */
	size_t peers_lost;		/* peers with `lost` set (receives aimed at them fail) */
	/* resources */
	struct mbx_tx *txs;
	uint32_t *tx_free;
	size_t tx_nfree, tx_cap;	/* tx_cap: tx_size, then MBX_TX_REPLY_RESERVE */
	struct mbu_pool rx_pool, ux_pool, ctrl_pool, bounce_pool;
	struct mbu_pool ux_buf[MBX_UX_CLASSES];
	size_t ux_bytes;
	struct mbu_dlist streaming;	/* tx entries copying chunks */
	struct mbu_dlist draining;	/* rx entries copying chunks out */
	size_t waiting_large;		/* tx entries in WAIT (for dead-peer checks) */
	uint32_t progress_ticks;
	uint32_t auto_seen;		/* progress_ticks after the progress thread's last pass */
	uint64_t last_liveness_ns;
	struct fi_matchbox_stats stats;
	struct mbx_net *net;		/* NULL: no net wire (FI_MATCHBOX_NET=0 or none found) */
	uint32_t want_ip;		/* the net wire's address from info->src_addr; 0: any */
	/* name service (mbx_addr.c) */
	int name_fd;
	int wake_fd;		/* fd waiting: our wake socket, or -1 */
	bool armed;		/* fi_trywait said sleep: senders send wake bytes */
	struct mbx_sockname sname;
	struct local_name *name_entry;
	uint32_t net_mask;		/* poll net when (progress_ticks & net_mask) == 0 */
};

int mbx_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		void *context);
void mbx_ep_progress(struct mbx_ep *ep);
/* mbx_auto.c */
extern _Thread_local bool mbx_auto_thread;
int mbx_auto_start(struct mbx_domain *d);
void mbx_auto_stop(struct mbx_domain *d);
void mbx_auto_forget(struct mbx_ep *ep);
void mbx_ep_wait(struct mbx_ep *ep, long timeout_ns);
extern struct fi_ops_msg mbx_msg_ops;
extern struct fi_ops_tagged mbx_tagged_ops;
extern struct fi_matchbox_tagged_ops mbx_tagged_ext_ops;
extern struct fi_ops_rma mbx_rma_ops;
extern struct fi_ops_atomic mbx_atomic_ops;
int mbx_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **out);
int mbx_query_atomic(struct fid_domain *d, enum fi_datatype dt, enum fi_op op,
		     struct fi_atomic_attr *attr, uint64_t flags);
extern struct fi_ops_collective mbx_coll_ops;

/* Wire-level entry points used by the data calls (mbx_progress.c). */
struct mbx_peer *mbx_peer_get(struct mbx_ep *ep, const struct mbx_addr *a);
/* Resolves an fi_addr_t for a data call, with the domain lock held. */
struct mbx_peer *mbx_peer_lookup(struct mbx_ep *ep, fi_addr_t dest);
/* The peer behind an address. Every change to the AV moves its generation,
 * so an address cached under the current one is still valid and resolved:
 * that common case is inline, the rest is mbx_peer_lookup. */
static inline struct mbx_peer *mbx_peer_of(struct mbx_ep *ep, fi_addr_t dest)
{
	if (__builtin_expect(dest < ep->fiaddr_cap && ep->fiaddr_gen == ep->av->gen &&
			     ep->fiaddr_peer[dest] != NULL, 1))
		return ep->fiaddr_peer[dest];
	return mbx_peer_lookup(ep, dest);
}
/* An RMA write (op MBX_OP_WRITE) or read (MBX_OP_READ) toward p. */
/* One RMA or atomic operation, checked by its caller, for mbx_proto_rma. */
struct mbx_rma_req {
	uint8_t op;			/* MBX_OP_WRITE, MBX_OP_READ or MBX_OP_ATOMIC */
	const struct iovec *iov;	/* local data (write: source, read: sink) */
	size_t cnt, len;
	const struct fi_rma_iov *riov;	/* remote segments, lengths in bytes */
	size_t rcnt;
	uint64_t data;			/* remote CQ data */
	void *context;
	uint64_t opflags;
	bool cqdata;
	bool wantkey;			/* net: ask the target for its core key (KEY) */
	/* atomics: enum mbu_atomic_kind, fi_op, fi_datatype; old values go to
	 * res, compare values come from cmp (same byte length as iov) */
	uint8_t akind, aop, adt;
	const struct iovec *res, *cmp;
	size_t res_cnt, cmp_cnt;
};
ssize_t mbx_proto_rma(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_rma_req *r);
/* A checked RMA or atomic operation to `dest`, under the domain lock
 * (mbx_rma.c); progress is made if the ring is full. */
ssize_t mbx_rma_post(struct mbx_ep *ep, fi_addr_t dest, const struct mbx_rma_req *r);
/* The initiator's completion of a send, RMA or atomic: a CQ entry (an error
 * entry, or a warning for a failed inject without context) and the count
 * in `cntr`. */
void mbx_tx_report(struct mbx_ep *ep, struct mbx_cntr *cntr, void *context, uint64_t flags,
		   uint64_t opflags, uint64_t tag, int err, const struct mbx_peer *p);
/* Move `take` bytes between our iovecs and another process's with CMA
 * (write: ours to theirs); 0 or a negative errno. */
int mbx_cma_move(pid_t pid, bool write, const struct iovec *liov, size_t lcnt,
		 const struct mbx_wire_iov *riov, size_t rcnt, size_t take);
/* The published registration table (mbx_rma.c): the owner's side, called
 * with the domain lock held, and the cleanup of a peer's mapping. */
void mbx_kt_open(struct mbx_domain *d, const struct mbx_addr *a);
void mbx_kt_close(struct mbx_domain *d);
void mbx_kt_publish(struct mbx_domain *d, struct mbx_mr *mr);
void mbx_kt_withdraw(struct mbx_domain *d, struct mbx_mr *mr);
void mbx_kt_peer_fini(struct mbx_peer *p);

/* The op flags a data call goes on with: a CQ entry is written unless this
 * is an inject, or completions are selective and the caller did not ask
 * for this one. */
static inline uint64_t mbx_comp_flags(const struct mbx_ep *ep, uint64_t flags, bool inject_call)
{
	if (inject_call || (ep->tx_selective && !(flags & FI_COMPLETION)))
		return flags & ~(uint64_t)FI_COMPLETION;
	return flags | FI_COMPLETION;
}
int mbx_peer_connect(struct mbx_ep *ep, struct mbx_peer *peer);
ssize_t mbx_proto_send(struct mbx_ep *ep, struct mbx_peer *peer, const struct iovec *iov,
		       size_t cnt, size_t len, uint64_t tag, uint64_t data, void *context,
		       uint64_t cflags, uint64_t opflags, uint8_t wflags);
void mbx_ux_rekey_all(struct mbx_ep *ep);
/* Called per incoming frame and per posted receive: a compare unless the AV
 * changed (mbx_progress.c says why). */
static inline void mbx_ux_refresh(struct mbx_ep *ep)
{
	if (__builtin_expect(ep->av && ep->ux_gen != ep->av->gen, 0))
		mbx_ux_rekey_all(ep);
}
void mbx_proto_recv_posted(struct mbx_ep *ep, struct mbx_rx *rx);
int mbx_proto_take(struct mbx_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		   uint64_t ignore, uint64_t refuse, struct fi_cq_tagged_entry *done);
void mbx_ux_free(struct mbx_ep *ep, struct mbx_ux *ux);
void mbx_ux_discard(struct mbx_ep *ep, struct mbx_ux *ux);
/* Hand an unexpected message to a receive; true when `rx` is finished with. */
bool mbx_deliver_ux(struct mbx_ep *ep, struct mbx_rx *rx, struct mbx_ux *ux);
void mbx_rx_complete(struct mbx_ep *ep, struct mbx_rx *rx, size_t len, void *buf,
		     uint64_t tag, uint64_t data, fi_addr_t src, uint64_t extra,
		     size_t olen);
void mbx_ep_fini_wire(struct mbx_ep *ep);
int mbx_name_open(struct mbx_ep *ep, const struct mbx_sockname *want);
void mbx_name_close(struct mbx_ep *ep);
void mbx_name_update(struct mbx_ep *ep);
void mbx_name_poll(struct mbx_ep *ep);

/* Waiting in file descriptors (mbx_wait.c). */
int mbx_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **out);
int mbx_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int mbx_waitable_init(struct mbx_waitable *w, enum fi_wait_obj obj, struct fid_wait *set,
		      struct fid *member);
void mbx_waitable_fini(struct mbx_waitable *w, struct fid *member);
int mbx_waitable_getwait(struct mbx_waitable *w, enum fi_wait_obj obj, void *arg);
int mbx_waitable_add_fd(struct mbx_waitable *w, int fd);
/* EQs in wait sets: events queued; made with a descriptor. */
bool mbx_eq_ready(struct fid *eq);
bool mbx_eq_waitable(struct fid *eq);
int mbx_wake_attach(struct mbx_ep *ep);
void mbx_wake_detach(struct mbx_ep *ep);
void mbx_ep_disarm(struct mbx_ep *ep);
bool mbx_ep_work_visible(struct mbx_ep *ep);
void mbx_wake_send(const char *name);
/* The endpoint's listener address as others reach it. */
void mbx_name_own(const struct mbx_ep *ep, struct mbx_sockname *sn);
/* For the net wire: hand one inbound frame to the matcher (1 taken, 0 not
 * now: the unexpected buffer is full, -1 malformed and dropped), write a
 * control frame, fail a lost peer. */
int mbx_deliver_frame(struct mbx_ep *ep, struct mbx_peer *p, const struct mbu_frame *f);
void mbx_proto_ctrl(struct mbx_ep *ep, struct mbx_peer *p, uint8_t op, uint64_t id,
		    uint64_t size, uint64_t data, uint64_t tag);
void mbx_fail_peer(struct mbx_ep *ep, struct mbx_peer *p);
bool mbx_rx_waits_on(struct mbx_ep *ep, struct mbx_peer *p);
void mbx_net_read_done(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rx *rx, uint64_t id,
		       int err);
/* The eager frame of send `id` has left for good (acknowledged, or written
 * to a connection): its send may complete. */
void mbx_net_sent(struct mbx_ep *ep, struct mbx_peer *p, uint64_t id);

static inline size_t mbx_iov_len(const struct iovec *iov, size_t cnt)
{
	size_t i, n = 0;

	for (i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

size_t mbx_copy_to_iov(const struct iovec *iov, size_t cnt, size_t off, const void *src,
		       size_t len);
size_t mbx_copy_from_iov(void *dst, const struct iovec *iov, size_t cnt, size_t off,
			 size_t len);

#endif
