/*
 * Internal header of libmpi: the objects behind the MPI handles, the
 * point-to-point engine ops table, and the helpers every part shares
 * (handle lookup, argument checks, error-handler dispatch). Public entry
 * points are defined as PMPI_x and given their MPI_x name by MBMPI_ALIAS;
 * the library calls its own PMPI_x or mbmpi_ functions, never MPI_x, so a
 * profiling layer sees only the user's calls.
 */
#ifndef MBMPI_H
#define MBMPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include "mbu_list.h"
#include "mbu_ids.h"

#define MBMPI_ALIAS(name) \
	extern __typeof__(PMPI_##name) MPI_##name \
		__attribute__((weak, alias("PMPI_" #name), visibility("default")));

#define MBMPI_API __attribute__((visibility("default")))

#define MBMPI_LIKELY(x) __builtin_expect(!!(x), 1)
#define MBMPI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- Tag layout (see mpi/TAGS.md) ---- */
#define MBMPI_TAG_BITS 31
#define MBMPI_TAG_UB 0x7fffffff
#define MBMPI_CTX_SHIFT 31
#define MBMPI_CTX_BITS 24
#define MBMPI_CTX_MAX ((1u << MBMPI_CTX_BITS) - 1)
#define MBMPI_KIND_SHIFT 55
#define MBMPI_KIND_DATA 0ull
#define MBMPI_KIND_ACK 1ull
#define MBMPI_KIND_CONT 2ull
#define MBMPI_FLAG_SYNC (1ull << 59)
#define MBMPI_FLAG_LARGE (1ull << 60)
#define MBMPI_TAG_MASK ((uint64_t)MBMPI_TAG_UB)
#define MBMPI_FLAGS_MASK (MBMPI_FLAG_SYNC | MBMPI_FLAG_LARGE)

static inline uint64_t mbmpi_tag(uint64_t kind, uint32_t ctx, int tag)
{
	return (kind << MBMPI_KIND_SHIFT) | ((uint64_t)ctx << MBMPI_CTX_SHIFT) |
	       ((uint64_t)(uint32_t)tag & MBMPI_TAG_MASK);
}

/* ---- Datatypes ---- */
struct mbmpi_seg {
	MPI_Aint disp;
	size_t len;
	uint16_t basic; /* predefined type index of every element in the run */
};

/* BOUNDS: lb/extent were set explicitly (MPI_Type_create_resized), so no
 * alignment padding is added to types built from it. */
/* HAS_LB/HAS_UB: that bound is explicit (an MPI_LB/MPI_UB marker or a
 * resize) and sticks in types built from it, as MPI-1 defined. */
enum { MBMPI_DT_PREDEF = 1, MBMPI_DT_COMMITTED = 2, MBMPI_DT_CONTIG = 4, MBMPI_DT_BOUNDS = 8,
       MBMPI_DT_HAS_LB = 16, MBMPI_DT_HAS_UB = 32 };
#define MBMPI_DT_LB_MARK 39
#define MBMPI_DT_UB_MARK 40

struct mbmpi_dtype {
	int flags;
	int refs;
	size_t size;              /* bytes of data in one instance */
	MPI_Aint lb, extent;      /* MPI extent (resizable) */
	MPI_Aint true_lb, true_ub;
	int nseg;
	struct mbmpi_seg *segs;   /* typemap of one instance, merged runs */
	/* A vector of very many blocks (MPI_Type_vector(INT_MAX / 2, ...))
	 * keeps one block's runs in segs: one instance is nrep copies of them,
	 * rstride bytes apart. 0 and 1 both mean segs is the whole typemap. */
	size_t nrep;
	MPI_Aint rstride;
	/* Every run of segs is ulen bytes and run k starts ustep bytes after
	 * run k - 1 (0: not so). A vector's block then packs as a strided
	 * copy of fixed-size runs, without reading the typemap: about 6
	 * instructions a double where a memcpy per run took 28
	 * (bench/callgrind_pair.sh vector256). */
	size_t ulen;
	MPI_Aint ustep;
	int base;                 /* the one predefined type all data has, else 0 */
	size_t nelem;             /* basic elements in one instance */
	int align;                /* strictest alignment of the basic types in it */
	struct mbmpi_attr *attrs;
	struct mbmpi_dtargs *args; /* how it was made (MPI_Type_get_envelope) */
	char name[MPI_MAX_OBJECT_NAME];
};

extern struct mbmpi_dtype mbmpi_predef_types[MBMPI_NUM_PREDEF_TYPES];

static inline struct mbmpi_dtype *mbmpi_dt(MPI_Datatype h)
{
	uintptr_t v = (uintptr_t)h;
	return v < MBMPI_NUM_PREDEF_TYPES ? &mbmpi_predef_types[v] : (struct mbmpi_dtype *)h;
}

static inline bool mbmpi_dt_contig(const struct mbmpi_dtype *d)
{
	return d->flags & MBMPI_DT_CONTIG;
}

/* Copies of segs in one instance; runs in one instance's typemap, and the
 * k-th of them. */
static inline size_t mbmpi_dt_reps(const struct mbmpi_dtype *d)
{
	return d->nrep > 1 ? d->nrep : 1;
}

static inline size_t mbmpi_dt_nruns(const struct mbmpi_dtype *d)
{
	return (size_t)d->nseg * mbmpi_dt_reps(d);
}

static inline struct mbmpi_seg mbmpi_dt_run(const struct mbmpi_dtype *d, size_t k)
{
	struct mbmpi_seg g;

	if (d->nrep <= 1)
		return d->segs[k];
	g = d->segs[k % (size_t)d->nseg];
	g.disp += (MPI_Aint)(k / (size_t)d->nseg) * d->rstride;
	return g;
}

/* Whether count instances are one run of bytes, starting at
 * mbmpi_dt_start(d) from the buffer. */
static inline bool mbmpi_dt_flat(const struct mbmpi_dtype *d, size_t count)
{
	return mbmpi_dt_nruns(d) <= 1 && (count <= 1 || d->extent == (MPI_Aint)d->size);
}

static inline MPI_Aint mbmpi_dt_start(const struct mbmpi_dtype *d)
{
	return d->nseg ? d->segs[0].disp : 0;
}

void mbmpi_dtype_init(void);
void mbmpi_dtype_fini(void);
/* Inline: every communication call checks its types. */
static inline int mbmpi_dt_check(MPI_Datatype h)
{
	const struct mbmpi_dtype *d;

	if (h == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	d = mbmpi_dt(h);
	return (d->flags & MBMPI_DT_COMMITTED) && d->refs > 0 ? MPI_SUCCESS : MPI_ERR_TYPE;
}
void mbmpi_pack(const void *in, size_t count, const struct mbmpi_dtype *d, void *out);
/* Unpacks at most `bytes` bytes; returns how many it placed. */
size_t mbmpi_unpack(const void *in, size_t bytes, void *out, size_t count, const struct mbmpi_dtype *d);
size_t mbmpi_elements(const struct mbmpi_dtype *d, size_t bytes, bool *exact);
/* A place in the packed bytes of count instances of a type, so that pieces
 * taken in order cost only their own runs (an engine that pipelines a
 * non-contiguous message in fragments). pos is the packed offset. */
struct mbmpi_dt_cursor {
	size_t pos, inst, rep, in_seg;
	int seg;
};
/* Moves the packed bytes [off, off + len) of (buf, count, d) to `packed`
 * (pack) or from it (unpack); returns how many there were (fewer past the
 * end of the data). A cursor not at `off` seeks there first. */
size_t mbmpi_dt_part(struct mbmpi_dt_cursor *c, void *buf, size_t count,
		     const struct mbmpi_dtype *d, size_t off, void *packed, size_t len, bool pack);
void mbmpi_dt_release(struct mbmpi_dtype *d);
/* Remembers how *t was made, for MPI_Type_get_contents; on failure frees
 * *t and returns the error. */
int mbmpi_dt_record(MPI_Datatype *t, int combiner, int ni, const int *ints, int na,
		    const MPI_Aint *aints, int nd, const MPI_Datatype *types);
void mbmpi_dt_args_free(struct mbmpi_dtype *d);
static inline void mbmpi_dt_retain(struct mbmpi_dtype *d)
{
	if (!(d->flags & MBMPI_DT_PREDEF))
		d->refs++;
}
/* count instances of d from one buffer to another of the same layout. */
void mbmpi_dt_copy(void *dst, const void *src, size_t count, const struct mbmpi_dtype *d);
/* Bytes a buffer of `count` instances spans, and where it starts. */
static inline size_t mbmpi_dt_span(const struct mbmpi_dtype *d, size_t count, MPI_Aint *start)
{
	if (!count) {
		*start = 0;
		return 0;
	}
	*start = d->true_lb;
	return (size_t)((count - 1) * d->extent + (d->true_ub - d->true_lb));
}

/* ---- Ops ---- */
/* A reduction written in Fortran takes its datatype as an INTEGER. */
typedef void mbmpi_fuser_fn(void *in, void *inout, MPI_Fint *len, MPI_Fint *datatype);
struct mbmpi_op {
	int predef;                 /* index for predefined ops, else 0 */
	bool commute;
	bool fortran;               /* fn is an mbmpi_fuser_fn */
	MPI_User_function *fn;
	int refs;                   /* a user op: its handle, and schedules using it */
};
extern struct mbmpi_op mbmpi_predef_ops[MBMPI_NUM_PREDEF_OPS];
/* Fills the predefined ops (their kernels and that they commute) at
 * MPI_Init: every rank must see the same flags before its first reduction,
 * internal ones included, or ranks pick different algorithms. */
void mbmpi_ops_init(void);
static inline struct mbmpi_op *mbmpi_op(MPI_Op h)
{
	uintptr_t v = (uintptr_t)h;
	return v < MBMPI_NUM_PREDEF_OPS ? &mbmpi_predef_ops[v] : (struct mbmpi_op *)h;
}
/* A pending non-blocking reduction keeps its user op alive: the program
 * may free the op before waiting (MPI_Op_free only drops the handle). */
static inline void mbmpi_op_retain(MPI_Op h)
{
	if ((uintptr_t)h >= MBMPI_NUM_PREDEF_OPS)
		mbmpi_op(h)->refs++;
}
void mbmpi_op_release(MPI_Op h);
/* inout[i] = in[i] op inout[i] for `count` instances of `dt`. */
void mbmpi_op_apply(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype dt);
/* Whether a predefined type index is one of MINLOC/MAXLOC's pair types. */
bool mbmpi_is_pair(int base);
int mbmpi_op_check(MPI_Op op, MPI_Datatype dt);

/* ---- Groups and communicators ---- */
struct mbmpi_group {
	int refs;
	int size;
	int rank;        /* the calling process's rank, or MPI_UNDEFINED */
	int *world;      /* group rank -> world rank */
};

/* An intercommunicator keeps the point-to-point view in rank, size and
 * addr (this process's rank in its group; the size and addresses of the
 * remote group, which is all a send or receive names) and its own group in
 * group; `local` is an intracommunicator over the local group, on contexts
 * ctx + 2 and ctx + 3, for the local steps of its collectives. */
struct mbmpi_comm {
	int refs;
	uint32_t ctx;            /* point-to-point context; ctx + 1 is collectives' */
	int rank, size;
	struct mbmpi_group *group;
	fi_addr_t *addr;         /* comm rank -> fabric address */
	bool inter;
	struct mbmpi_group *rgroup;   /* intercommunicator: the remote group */
	struct mbmpi_comm *local;     /* intercommunicator: over the local group */
	MPI_Errhandler errh;
	uint32_t nbc_seq;        /* non-blocking collectives started on it */
	struct mbmpi_win *win;   /* a window's own communicator: errors go to it */
	struct mbmpi_topo *topo; /* Cartesian, graph or distributed graph, or NULL */
	struct mbmpi_attr *attrs;     /* the user's attributes (a window's, on its own comm) */
	struct mbmpi_info *info;      /* hints given by Comm_set_info, or NULL */
	struct mbmpi_shmc *shm;       /* node-local collectives' segment (mbmpi_shmcoll.c) */
	int shm_state;                /* 0 not tried yet, 1 made, -1 not for this one */
	struct mbmpi_hier *hier;      /* across nodes: its node and leader communicators */
	int hier_state;               /* as shm_state */
	bool predef;
	char name[MPI_MAX_OBJECT_NAME];
};

extern struct mbmpi_comm mbmpi_comm_world, mbmpi_comm_self;

static inline struct mbmpi_comm *mbmpi_comm(MPI_Comm h)
{
	uintptr_t v = (uintptr_t)h;
	if (v == 1)
		return &mbmpi_comm_world;
	if (v == 2)
		return &mbmpi_comm_self;
	return v < 16 ? NULL : (struct mbmpi_comm *)h;
}
int mbmpi_comm_init(void);
/* Requests and schedules hold a reference: MPI_Comm_free with operations
 * pending frees the communicator when the last of them completes. */
static inline void mbmpi_comm_retain(struct mbmpi_comm *c)
{
	c->refs++;
}
void mbmpi_comm_destroy(struct mbmpi_comm *c);
static inline void mbmpi_comm_release(struct mbmpi_comm *c)
{
	if (--c->refs == 0 && !c->predef)
		mbmpi_comm_destroy(c);
}
/* Topologies (mbmpi_topo.c). A neighbourhood collective's peers: in[i]
 * sends to this rank, out[j] receives from it; in_tag and out_tag (NULL when
 * order alone pairs them) tell apart the directions of a Cartesian
 * dimension in which one rank is both neighbours. */
struct mbmpi_topo;
void mbmpi_topo_free(struct mbmpi_topo *t);
struct mbmpi_topo *mbmpi_topo_dup(const struct mbmpi_topo *t);
int mbmpi_topo_neighbors(struct mbmpi_comm *c, int *nin, const int **in, const int **in_tag, int *nout,
			 const int **out, const int **out_tag);
void mbmpi_comm_fini(void);
/* Whether all of c's ranks run on this rank's node. */
bool mbmpi_comm_on_one_node(const struct mbmpi_comm *c);
struct mbmpi_group *mbmpi_group(MPI_Group h);
struct mbmpi_group *mbmpi_group_new(int size);
void mbmpi_group_fix_rank(struct mbmpi_group *g);
void mbmpi_group_release(struct mbmpi_group *g);
MPI_Group mbmpi_group_handle(struct mbmpi_group *g);
int mbmpi_group_cmp(const struct mbmpi_group *a, const struct mbmpi_group *b);
int mbmpi_comm_make(struct mbmpi_comm *c, struct mbmpi_group *g, uint32_t ctx);
int mbmpi_comm_from_group(struct mbmpi_comm *parent, struct mbmpi_group *g, uint32_t ctx,
			  MPI_Comm *out);
static inline int mbmpi_comm_local_size(const struct mbmpi_comm *c)
{
	return c->inter ? c->group->size : c->size;
}
/* The world rank of the rank communicators call peer (the remote group's,
 * on an intercommunicator). */
static inline int mbmpi_world_of(const struct mbmpi_comm *c, int peer)
{
	return (c->inter ? c->rgroup : c->group)->world[peer];
}
/* Intercommunicators (mbmpi_inter.c). */
int mbmpi_inter_dup(struct mbmpi_comm *c, MPI_Comm *out);
int mbmpi_inter_make(struct mbmpi_comm *parent, struct mbmpi_group *lg, struct mbmpi_group *rg,
		     uint32_t ctx, MPI_Comm *out);
int mbmpi_inter_split(struct mbmpi_comm *c, int color, int key, MPI_Comm *out);
int mbmpi_inter_create(struct mbmpi_comm *c, struct mbmpi_group *g, MPI_Comm *out);
void mbmpi_inter_free(struct mbmpi_comm *c);
int mbmpi_inter_barrier(struct mbmpi_comm *c);
int mbmpi_inter_bcast(void *buf, int count, MPI_Datatype dt, int root, struct mbmpi_comm *c);
int mbmpi_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		       struct mbmpi_comm *c);
int mbmpi_inter_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			  struct mbmpi_comm *c);
int mbmpi_inter_gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		       MPI_Datatype rt, int root, struct mbmpi_comm *c);
int mbmpi_inter_gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts,
			const int *displs, MPI_Datatype rt, int root, struct mbmpi_comm *c);
int mbmpi_inter_scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			MPI_Datatype rt, int root, struct mbmpi_comm *c);
int mbmpi_inter_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype st,
			 void *rbuf, int rcount, MPI_Datatype rt, int root, struct mbmpi_comm *c);
int mbmpi_inter_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			  MPI_Datatype rt, struct mbmpi_comm *c);
int mbmpi_inter_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
			   const int *rcounts, const int *displs, MPI_Datatype rt, struct mbmpi_comm *c);
int mbmpi_inter_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			 MPI_Datatype rt, struct mbmpi_comm *c);
int mbmpi_inter_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
			  void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rt,
			  struct mbmpi_comm *c);
int mbmpi_inter_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
			  const MPI_Datatype *st, void *rbuf, const int *rcounts, const int *rdispls,
			  const MPI_Datatype *rt, bool bytes, struct mbmpi_comm *c);
int mbmpi_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
			       MPI_Op op, struct mbmpi_comm *c);

/* ---- Attributes (mbmpi_attr.c) ---- */
enum { MBMPI_KV_COMM = 1, MBMPI_KV_TYPE, MBMPI_KV_WIN };
struct mbmpi_attr {
	struct mbmpi_attr *next;
	int key;
	void *val;
};
/* On duplication: every attribute whose copy callback says so, onto `to`. */
int mbmpi_attr_copy(int kind, void *oldh, struct mbmpi_attr *from, void *newh,
		    struct mbmpi_attr **to);
/* On free: every delete callback, newest attribute first; the first error stops it. */
int mbmpi_attr_clear(int kind, void *h, struct mbmpi_attr **list);
int mbmpi_attr_get(int kind, struct mbmpi_attr *list, int key, void *val, int *flag);
int mbmpi_attr_set(int kind, void *h, struct mbmpi_attr **list, int key, void *val);
int mbmpi_attr_delete(int kind, void *h, struct mbmpi_attr **list, int key);
/* The largest error code in use (MPI_LASTUSEDCODE). */
extern int mbmpi_lastusedcode;

/* ---- Info (mbmpi_info.c) ---- */
int mbmpi_info_check(MPI_Info h);
/* A copy, or NULL for MPI_INFO_NULL; *err set on failure. */
struct mbmpi_info *mbmpi_info_copy(MPI_Info h, int *err);
void mbmpi_info_free(struct mbmpi_info *i);
/* A new handle holding a copy of `src` (empty when NULL), for get_info. */
int mbmpi_info_give(const struct mbmpi_info *src, MPI_Info *out);
void mbmpi_attr_fini(void);
void mbmpi_info_fini(void);
void mbmpi_info_set_args(int argc, char **argv);
void mbmpi_f2c_fini(void);
/* Frees what the Fortran bindings keep for the life of the library. */
void mbmpi_fort_fini(void);
void mbmpi_f90_fini(void);

/* ---- Requests ---- */
/* NBC: a non-blocking collective, completed by its schedule (mbmpi_nbc.c). */
/* RMA: a one-sided operation (mbmpi_win.c), done when remotely complete. */
/* GREQ: a generalized request, completed by the program (MPI_Grequest_*). */
enum mbmpi_req_kind { MBMPI_REQ_SEND = 1, MBMPI_REQ_RECV, MBMPI_REQ_DONE_NOW, MBMPI_REQ_NBC,
		      MBMPI_REQ_RMA, MBMPI_REQ_GREQ, MBMPI_REQ_PCOLL, MBMPI_REQ_BFLUSH };
struct mbmpi_greq {
	MPI_Grequest_query_function *query;
	MPI_Grequest_free_function *free_fn;
	MPI_Grequest_cancel_function *cancel;
	void *extra;
};
enum mbmpi_mode { MBMPI_STD = 0, MBMPI_SYNC, MBMPI_READY, MBMPI_BUF };

struct mbmpi_fop;

/* Operations a window has outstanding toward one target, and the first
 * error among those that finished (reported at the next flush). */
struct mbmpi_rma_count {
	int pending;
	int err;
};

/* One outstanding fabric operation; its context is what libfabric returns. */
enum mbmpi_fop_type {
	MBMPI_FOP_SEND = 1, MBMPI_FOP_RECV, MBMPI_FOP_ACK_SEND, MBMPI_FOP_ACK_RECV,
	MBMPI_FOP_PEEK, MBMPI_FOP_RMA,
	/* a continuation piece of a chunked message (the tagged engine's te_stream) */
	MBMPI_FOP_PIECE_SEND, MBMPI_FOP_PIECE_RECV
};

struct mbmpi_fop {
	struct fi_context2 ctx;
	struct mbmpi_req *req;
	void *buf;
	size_t len;
	fi_addr_t addr;
	uint64_t tag, ignore, data, flags;
	struct mbu_dlist link;   /* retry queue */
	int type;
	/* What only some kinds of operation carry (it is also most of a
	 * request's size, which holds one fop). */
	union {
		struct {         /* one-sided: remote address in data, and these */
			int rkind, fdt, fop;
			uint64_t key;
			void *res;
			const void *cmp;
		};
		struct {         /* peek results */
			bool done, found;
			int err;
			uint64_t rtag, rdata;
			size_t rlen;
		};
		struct {         /* a tagged engine's receive: its posting order */
			uint64_t rseq;
			bool posted;     /* on the engine's list of posted receives */
			struct mbu_dlist plink;
			struct mbmpi_msg *msg; /* a claimed message's, until received */
		};
		struct {         /* a piece of a message the tagged engine streams */
			void *bounce;    /* its packed bytes */
			size_t off;      /* where in the message */
		};
	};
};

/* A non-contiguous message of at most this many bytes is packed on the
 * stack and injected, or taken onto the stack and unpacked, and its
 * posted receive's temporary comes from a pool: no request, malloc or
 * free where they are not needed (mbmpi_p2p.c). */
#define MBMPI_PACKED_MAX 4096

struct mbmpi_req {
	int kind;
	int mode;
	bool persistent;
	bool active;         /* persistent: started and not yet completed */
	bool complete;
	bool user_freed;     /* MPI_Request_free on an active request */
	bool internal;       /* no user handle; freed on completion */
	bool builtin;        /* mbmpi_req_sent: shared, never freed */
	int outstanding;     /* fabric operations still in flight */
	MPI_Status status;
	int err;             /* MPI error class for the operation */
	/* what the user asked for */
	void *buf;
	int count;
	struct mbmpi_dtype *dt;
	struct mbmpi_comm *comm;
	int peer, tag;
	uint32_t ctx;        /* comm->ctx, or comm->ctx + 1 for collectives */
	/* what was posted */
	void *cbuf;          /* contiguous buffer handed to the engine */
	size_t clen;
	void *tmp;           /* owned bounce buffer (non-contiguous data, bsend) */
	bool frag;           /* non-contiguous and not staged: cbuf is NULL (frag_min) */
	bool tmp_is_bsend;
	bool tmp_pooled;     /* tmp came from the small temporaries' pool */
	bool tmp_mapped;     /* tmp is a mapping of clen bytes of its own */
	bool listed;               /* on mbmpi.bsends or mbmpi.bflushes */
	struct mbmpi_fop *claimed; /* Mrecv: the peek/claim context */
	struct mbmpi_fop *main;    /* the receive itself, for MPI_Cancel */
	struct mbmpi_rma_count *rma_cnt; /* RMA: the window's count for the target */
	void *eng;                 /* the engine's own state (host engine: the posted entry) */
	/* A new request is cleared only up to here (clearing is a tenth of a
	 * posted receive's instructions): what follows is written before it
	 * is read by what uses it. `own` is the tagged engine's receive
	 * itself, so that the common receive takes nothing from the
	 * operation pool. */
	struct mbmpi_fop own;
	struct mbmpi_greq greq;    /* set whole by MPI_Grequest_start */
	struct mbu_dlist link;     /* bsend list, or the pending buffer flushes (initialised empty) */
	uint64_t bseq;             /* bsend: its number; buffer flush: the last it waits for */
	size_t tmp_valid;          /* set with tmp: bytes of it to unpack at most (the rest went in place) */
};

struct mbmpi_msg {
	struct mbmpi_fop *fop;   /* claimed peek; passed back on the claim receive */
	struct mbmpi_comm *comm;
	MPI_Status status;
	/* Or, fop NULL: the receive the engine began for the message before
	 * its MPI_Mrecv, into a temporary of its own (cbuf, clen bytes, from
	 * malloc), which that MPI_Mrecv adopts as its request. */
	struct mbmpi_req *early;
};

/* One one-sided transfer handed to the engine: bytes for put and get,
 * elements of the fabric datatype for the atomics. */
enum { MBMPI_RMA_PUT = 1, MBMPI_RMA_GET, MBMPI_RMA_ATOMIC, MBMPI_RMA_FETCH, MBMPI_RMA_CSWAP };
struct mbmpi_rma {
	int kind;
	fi_addr_t addr;
	void *buf;
	size_t len;
	void *result;
	const void *compare;
	uint64_t raddr, key;
	int fdt, fop;
};

/* ---- The point-to-point engine ---- */
struct mbmpi_engine {
	const char *name;
	int (*init)(void);
	int (*getname)(void *addr, size_t *len);
	int (*insert)(const void *addrs, size_t addrlen, int n, fi_addr_t *out);
	int (*send)(struct mbmpi_req *r);
	int (*recv)(struct mbmpi_req *r);
	int (*probe)(struct mbmpi_comm *c, int src, int tag, bool claim, int *flag,
		     MPI_Status *st, struct mbmpi_msg **msg);
	int (*cancel)(struct mbmpi_req *r);
	/* A blocking standard send of contiguous bytes, done when it returns
	 * (no request): MPI_SUCCESS, an MPI error class, or -1 when it must
	 * take the ordinary path (too large, or the provider would wait). May
	 * be NULL. */
	int (*inject)(struct mbmpi_comm *c, int peer, int tag, const void *buf, size_t len);
	/* Its counterpart: a receive into contiguous bytes that a message
	 * already waiting completes in the call (no request). Fills the
	 * status's source, tag, byte count and cancelled flag and returns
	 * MPI_SUCCESS or an MPI error class, or -1, having changed nothing,
	 * when the receive must take the ordinary path (nothing waiting whole
	 * that fits). May be NULL. */
	int (*take)(struct mbmpi_comm *c, uint32_t ctx, int src, int tag, void *buf, size_t len,
		    MPI_Status *st);
	int (*progress)(void);
	int (*getopt)(int name, void *val, size_t *len);	/* may be NULL */
	void (*fini)(void);
	/* One-sided, NULL or failing with MPI_ERR_UNSUPPORTED_OPERATION where
	 * the provider has no FI_RMA and FI_ATOMIC. *raddr is what the region's
	 * first byte is called by initiators (its address, or 0 for offsets). */
	int (*rma_reg)(void *buf, size_t len, uint64_t *key, uint64_t *raddr, void **mr);
	void (*rma_dereg)(void *mr);
	int (*rma)(struct mbmpi_req *r, const struct mbmpi_rma *op);
	/* Elements one atomic of this kind may carry; 0 when not offered. */
	size_t (*atomic_max)(int kind, int fdt, int fop);
};
extern const struct mbmpi_engine mbmpi_tagged_engine;
extern const struct mbmpi_engine mbmpi_host_engine;

/* One libfabric endpoint and what hangs off it (mbmpi_fab.c): each engine
 * opens one from the fi_info it chose. */
struct mbmpi_fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	bool rma;                  /* FI_RMA granted */
	bool atomics;              /* FI_ATOMIC granted */
	bool virt_addr;            /* initiators name remote memory by address */
	uint64_t next_key;         /* keys of our choosing, without FI_MR_PROV_KEY */
	size_t min_multi_recv;     /* set before opening: FI_OPT_MIN_MULTI_RECV */
};
/* RDM hints both engines start from: contexts, table AV, SAS order,
 * provider-chosen keys; NULL when out of memory. */
struct fi_info *mbmpi_fab_hints(const char *prov, uint64_t caps);
/* fi_getinfo with those hints; automatic progress, when asked for and not
 * offered, is dropped with a warning rather than failing the job. */
int mbmpi_fab_getinfo(struct fi_info *hints, struct fi_info **info);
int mbmpi_fab_open(struct mbmpi_fab *x, const char *who, enum fi_cq_format format);
int mbmpi_fab_getname(struct mbmpi_fab *x, void *addr, size_t *len);
int mbmpi_fab_insert(struct mbmpi_fab *x, const void *addrs, int n, fi_addr_t *out);
void mbmpi_fab_close(struct mbmpi_fab *x);
int mbmpi_fab_reg(struct mbmpi_fab *x, void *buf, size_t len, uint64_t access, uint64_t *key,
		  uint64_t *raddr, void **mr);
void mbmpi_fab_dereg(void *mr);
/* Posts f's one-sided operation; the provider's return code. */
ssize_t mbmpi_fab_rma_issue(struct mbmpi_fab *x, struct mbmpi_fop *f);
void mbmpi_fab_rma_fill(struct mbmpi_fop *f, const struct mbmpi_rma *op);
size_t mbmpi_fab_atomic_max(struct mbmpi_fab *x, int kind, int fdt, int fop);
/* fi_getopt on the endpoint, in MPI's error classes (MPIX_Fabric_getopt). */
int mbmpi_fab_getopt(struct mbmpi_fab *x, int name, void *val, size_t *len);

/* ---- Process-wide state ---- */
/* The performance variables MPI_T reads: messages the point-to-point layer
 * started and received (the library's own collective traffic included). */
enum { MBMPI_PV_SENT_MSGS, MBMPI_PV_SENT_BYTES, MBMPI_PV_RECV_MSGS, MBMPI_PV_RECV_BYTES,
       MBMPI_PV_N };

struct mbmpi_state {
	int initialized, finalized;
	int thread_level;
	int world_rank, world_size;
	bool singleton;
	bool yield;                /* oversubscribed: yield the core when idle */
	int spin;                  /* idle polls before yielding */
	int local_size;
	char **hosts;              /* world rank -> node name */
	/* world rank -> on another node (mbmpi_same_node, asked once for the
	 * engines' per-peer protocol choices); NULL in a singleton */
	uint8_t *remote;
	const struct mbmpi_engine *eng;
	char procname[MPI_MAX_PROCESSOR_NAME];
	/* buffered sends */
	char *bbuf;
	size_t bbuf_size;
	struct mbu_dlist bsends;
	struct mbu_dlist bflushes; /* MPI_Buffer_iflush requests not yet complete */
	uint64_t bsend_seq;        /* buffered sends numbered in the order they started */
	/* collective algorithm choices (0 = automatic) */
	int alg_bcast, alg_allreduce, alg_allgather, alg_alltoall, alg_reduce_scatter, alg_barrier;
	size_t max_msg;            /* engine-level message limit; larger ones are chunked */
	/* The engine's inject takes this many bytes at most (0: none); set by
	 * its init, never above MBMPI_PACKED_MAX. */
	size_t inject_max;
	size_t coll_shm;           /* node-local collectives: largest region (0: never) */
	bool coll_hier;            /* collectives across nodes: node, then leaders, then node */
	bool progress_thread;      /* MATCHBOX_MPI_PROGRESS=thread: ask for FI_PROGRESS_AUTO */
	/* MPI_T performance counters (mbmpi_t.c), under the lock: they move
	 * only while a tool has a handle started (pv_started of them). */
	uint64_t pv[MBMPI_PV_N];
	int pv_started;
	/* Non-contiguous messages of this many bytes or more go to the engine
	 * unpacked (r->frag): it moves them in fragments, never through a
	 * whole-message copy. Sends only unless frag_recv (the tagged engine
	 * receives into a bounce buffer it may leave untouched but for the
	 * first piece). 0: packed whole. */
	size_t frag_min;
	bool frag_recv;
	/* How many messages wait unmatched where the engine's take would
	 * find them, read without a call (a hint: a progress thread may move
	 * it). NULL when the engine has no take. */
	const size_t *waiting;
};
extern struct mbmpi_state mbmpi;

/* Whether world rank w is on this node, by the node names that came with
 * the addresses (false when they did not come). Both ends of a pair decide
 * it alike, so per-node choices of a protocol agree. */
static inline bool mbmpi_same_node(int w)
{
	return mbmpi.hosts && mbmpi.hosts[w] &&
	       !strcmp(mbmpi.hosts[w], mbmpi.hosts[mbmpi.world_rank]);
}

/* MPI_THREAD_MULTIPLE: one lock around the library. Every MPI call takes
 * it (MBMPI_GUARD, released by the compiler on every return path); a
 * thread that waits gives it up in mbmpi_idle so that others go on. The
 * lock is recursive, for the library's calls to itself and callbacks
 * that call MPI. Below MPI_THREAD_MULTIPLE it costs one load per call. */
extern bool mbmpi_mt;
int mbmpi_lock(void);
void mbmpi_unlock(void);
static inline int mbmpi_enter(void)
{
	return MBMPI_UNLIKELY(mbmpi_mt) ? mbmpi_lock() : 0;
}
static inline void mbmpi_leave(int *held)
{
	if (MBMPI_UNLIKELY(*held))
		mbmpi_unlock();
}
#define MBMPI_GUARD() \
	int mbmpi_guard_ __attribute__((cleanup(mbmpi_leave), unused)) = mbmpi_enter()

/* Errors: raise through the communicator's handler and return the class. */
int mbmpi_err(struct mbmpi_comm *c, int code, const char *fn);
#define MBMPI_ERR(c, code) mbmpi_err((c), (code), __func__)

#define MBMPI_CHECK_INIT()                                                 \
	do {                                                               \
		if (MBMPI_UNLIKELY(!mbmpi.initialized || mbmpi.finalized)) \
			return MBMPI_ERR(NULL, MPI_ERR_OTHER);             \
	} while (0)

int mbmpi_check_comm(MPI_Comm h, struct mbmpi_comm **out);
/* A send's or a receive's arguments, as MPI_Send and MPI_Recv check them. */
int mbmpi_check_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
		     struct mbmpi_comm *c);
int mbmpi_check_recv(const void *buf, int count, MPI_Datatype dt, int src, int tag,
		     struct mbmpi_comm *c);
/* How every query of a communicator opens: the library is up, the handle is
 * valid, the output pointer is there. A failure has been raised through the
 * right handler (under the caller's name) before it is returned. */
int mbmpi_comm_query(MPI_Comm h, const void *out, struct mbmpi_comm **c, const char *fn);
#define MBMPI_COMM_QUERY(h, out, c) mbmpi_comm_query((h), (out), (c), __func__)
void mbmpi_errh_retain(MPI_Errhandler h);
void mbmpi_errh_release(MPI_Errhandler h);
/* Marks a user handler as a Fortran subroutine (the Fortran bindings). */
void mbmpi_errh_fortran(MPI_Errhandler h);

/* Engine progress and blocking-wait helpers. */
void mbmpi_idle(int *spins);
int mbmpi_progress(void);

/* Schedules of non-blocking collectives advance wherever the engine is
 * polled; with none started the cost is one load. */
extern int mbmpi_nbc_live;
int mbmpi_nbc_progress(void);
int mbmpi_comm_idup(struct mbmpi_comm *c, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req);
/* Context ids (mbmpi_nbc.c, by the agreement of mbu_ids.h): a new
 * communicator's, collective over c (both groups of an intercommunicator);
 * over the members of a stand-in communicator, on tags from `tag`; and
 * given back when a communicator goes (or was not made after all). */
extern struct mbu_ids mbmpi_ctx_ids;
/* A context slot is 4 values: a communicator's ctx (point to point) and
 * ctx + 1 (collectives), and ctx + 2 and + 3 for a second communicator
 * derived from it: an intercommunicator's local half, or an intracommunicator's
 * node communicators (hier_get). Slot 0 holds MPI_COMM_WORLD (0) and
 * MPI_COMM_SELF (2); slot 1 is reserved for world's node communicators. Only
 * a slot's first value returns it to the pool (mbmpi_ctx_put). */
#define MBMPI_CTX_WORLD_NODE 6
int mbmpi_ctx_get(struct mbmpi_comm *c, uint32_t *ctx);
int mbmpi_ctx_get_group(struct mbmpi_comm *tmp, int tag, uint32_t *ctx);
void mbmpi_ctx_put(uint32_t ctx);
#define CTX_GROUP_TAG(t) (0x60000000 | (((t) & 0xfffff) << 8))
static inline int mbmpi_poll(void)
{
	int n = mbmpi.eng->progress();

	if (MBMPI_UNLIKELY(mbmpi_nbc_live))
		n += mbmpi_nbc_progress();
	return n;
}

/* Collectives among the ranks of one node through shared memory
 * (mbmpi_shmcoll.c). Each returns MBMPI_SHM_PASS, on every rank alike,
 * when the call is not one for it (ranks on several nodes, data larger
 * than a region); the caller then goes point to point. reduce's root -1
 * is allreduce. */
#define MBMPI_SHM_PASS (-1)
int mbmpi_shm_barrier(struct mbmpi_comm *c);
int mbmpi_shm_bcast(void *buf, size_t count, struct mbmpi_dtype *d, int root, struct mbmpi_comm *c);
int mbmpi_shm_reduce(const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt, MPI_Op op,
		     int root, struct mbmpi_comm *c);
int mbmpi_shm_gather(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
		     size_t rcount, struct mbmpi_dtype *rd, int root, struct mbmpi_comm *c);
int mbmpi_shm_scatter(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
		      size_t rcount, struct mbmpi_dtype *rd, int root, struct mbmpi_comm *c);
int mbmpi_shm_allgather(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
			size_t rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c);
int mbmpi_shm_alltoall(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
		       size_t rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c);
void mbmpi_shm_free(struct mbmpi_comm *c);
void mbmpi_hier_free(struct mbmpi_comm *c);
/* Comm_split's work, for communicators of the library's own too. */
int mbmpi_split(struct mbmpi_comm *c, int color, int key, MPI_Comm *newcomm);

/* Point-to-point internals used by collectives and the MPI calls. */
int mbmpi_isend(const void *buf, int count, struct mbmpi_dtype *dt, int dest, int tag,
		struct mbmpi_comm *c, uint32_t ctx, int mode, struct mbmpi_req **out);
int mbmpi_irecv(void *buf, int count, struct mbmpi_dtype *dt, int src, int tag,
		struct mbmpi_comm *c, uint32_t ctx, struct mbmpi_req **out);
int mbmpi_wait(struct mbmpi_req *r, MPI_Status *st);
int mbmpi_waitall(int n, struct mbmpi_req **r);
void mbmpi_req_free(struct mbmpi_req *r);
extern struct mbmpi_req mbmpi_req_sent;
struct mbmpi_req *mbmpi_req_alloc(void);
void mbmpi_req_done(struct mbmpi_req *r);
/* mbmpi_req_done, with the common request (nothing to unpack, count or
 * release) finished inline. The flags are read before `complete` is
 * written, as mbmpi_req_done explains. */
static inline void mbmpi_req_finish(struct mbmpi_req *r)
{
	if (MBMPI_LIKELY(!r->tmp && !r->rma_cnt && !r->internal && !r->user_freed &&
			 !mbmpi.pv_started)) {
		r->status.MPI_ERROR = r->err;
		r->complete = true;
		return;
	}
	mbmpi_req_done(r);
}
/* The next non-blocking collective started takes sequence number seq and
 * runs in request into, instead of the communicator's next and a new one. */
void mbmpi_nbc_pin(bool on, uint32_t seq, struct mbmpi_req *into);
int mbmpi_pcoll_start(struct mbmpi_req *r);
void mbmpi_pcoll_free(struct mbmpi_req *r);
void mbmpi_status_empty(MPI_Status *st);
int mbmpi_status_set_elements(MPI_Status *st, MPI_Datatype dt, MPI_Count count);
int mbmpi_bsend_detach_wait(void);
struct mbmpi_fop *mbmpi_fop_alloc(void);
void mbmpi_fop_free(struct mbmpi_fop *f);
void mbmpi_p2p_fini(void);

/* Collectives. */
int mbmpi_coll_check_buf(const void *buf, int count, MPI_Datatype dt);
int mbmpi_coll_check_counts(const int *counts, const int *displs, MPI_Datatype dt, int n);
int mbmpi_coll_check_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			    bool need_rbuf);
int mbmpi_barrier(struct mbmpi_comm *c);
int mbmpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		    struct mbmpi_comm *c);
/* vals[rank*per .. rank*per+per) in, every rank's out */
int mbmpi_allgather_int(int *vals, int per, struct mbmpi_comm *c);

/* Parameters (MATCHBOX_MPI_*), shared with mpirun's --params. */
const char *mbmpi_env(const char *name, const char *dflt);
long mbmpi_env_long(const char *name, long dflt);

#endif
