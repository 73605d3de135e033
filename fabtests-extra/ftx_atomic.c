/* Atomics as a libfabric program sees them, client and server started
 * separately (like libfabric's fabtests):
 *
 *   server: ftx_atomic -p PROV [-s SRC] [-P PORT] [-S]
 *   client: ftx_atomic -p PROV [-s SRC] [-P PORT] [-S] SERVER
 *
 * The server registers one region with a slot of four elements for every
 * (kind, operation, datatype) that fi_atomic(3) defines and sends its key.
 * The client asks fi_atomicvalid, fi_fetch_atomicvalid and
 * fi_compare_atomicvalid about every combination (with -S, the strict
 * provider, the answers must be exactly libfabric's table), then runs every
 * combination the provider accepts, rotating through the call forms
 * (plain, v, msg across two remote segments, inject), and checks each
 * fetched old value and, at the end, the whole region read back, against a
 * local model. The model is written independently of any provider's code:
 * integers held as 128-bit values and cut to their width, reals and
 * complex numbers as long double complex; the operands are small numbers
 * whose results every type represents exactly. A combination the provider
 * refuses must be refused at the call with -FI_EOPNOTSUPP. Then both
 * sides add 1 to one counter 500 times each with fi_fetch_atomic (the
 * server through its own address, over the same wire as any peer): the
 * counter must end at 1000 and each side must see its old values rise.
 * Exit 0 on success. While looking into a failure, FTX_TRACE=1 prints
 * each combination before it goes and FTX_FORM=0..3 keeps to one form. */
#include <complex.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "ftx_cs.h"

#define NELEM 4
#define SLOT 128		/* NELEM x the largest element (32 bytes) */
#define NDT 16
#define NOP FI_ATOMIC_OP_LAST
#define NKIND 3
#define NSLOTS (NKIND * NOP * NDT)
#define REGION (NSLOTS * SLOT + SLOT)	/* the last slot: the shared counter */
#define COUNTER_OFF ((size_t)NSLOTS * SLOT)
#define ADDS 500

enum { PLAIN, FETCH, COMPARE };
enum { MSG_INFO = 1, MSG_GO, MSG_ADDS_DONE, MSG_BYE };

struct info_msg {
	uint32_t kind;
	uint64_t key, addr;
};

static const char *prov = "matchbox", *src, *port = "9601", *dst;
static bool strict;

/* ---- the model ---- */

static const size_t dt_size[NDT] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16,
				     sizeof(long double), sizeof(long double complex), 16, 16 };

static bool is_int(int dt)
{
	return dt <= FI_UINT64 || dt == FI_INT128 || dt == FI_UINT128;
}

static bool is_signed(int dt)
{
	return dt == FI_INT8 || dt == FI_INT16 || dt == FI_INT32 || dt == FI_INT64 ||
	       dt == FI_INT128;
}

static bool is_complex(int dt)
{
	return dt == FI_FLOAT_COMPLEX || dt == FI_DOUBLE_COMPLEX || dt == FI_LONG_DOUBLE_COMPLEX;
}

/* libfabric's table, as fi_atomic(3) describes it. */
static bool defined(int kind, int op, int dt)
{
	bool ints = is_int(dt), cplx = is_complex(dt);

	switch (op) {
	case FI_MIN: case FI_MAX:
		return kind != COMPARE && !cplx;
	case FI_SUM: case FI_PROD: case FI_LOR: case FI_LAND: case FI_LXOR:
	case FI_ATOMIC_WRITE:
		return kind != COMPARE;
	case FI_BOR: case FI_BAND: case FI_BXOR:
		return kind != COMPARE && ints;
	case FI_ATOMIC_READ:
		return kind == FETCH;
	case FI_CSWAP: case FI_CSWAP_NE:
		return kind == COMPARE;
	case FI_MSWAP:
		return kind == COMPARE && ints;
	default:	/* the ordered swaps */
		return kind == COMPARE && !cplx;
	}
}

struct val {
	unsigned __int128 u;	/* integers: the bits, cut to the width */
	long double complex z;	/* reals and complex numbers */
};

static unsigned __int128 cut(int dt, unsigned __int128 u)
{
	size_t bits = dt_size[dt] * 8;

	return bits >= 128 ? u : u & (((unsigned __int128)1 << bits) - 1);
}

static __int128 as_signed(int dt, unsigned __int128 u)
{
	size_t bits = dt_size[dt] * 8;

	if (bits < 128 && (u >> (bits - 1) & 1))
		return (__int128)(u | ~(((unsigned __int128)1 << bits) - 1));
	return (__int128)u;
}

static struct val load(int dt, const void *p)
{
	struct val v = { 0, 0 };

	if (is_int(dt)) {
		memcpy(&v.u, p, dt_size[dt]);	/* little-endian, as on this machine */
		v.u = cut(dt, v.u);
	} else if (dt == FI_FLOAT) {
		float f;
		memcpy(&f, p, sizeof(f));
		v.z = f;
	} else if (dt == FI_DOUBLE) {
		double d;
		memcpy(&d, p, sizeof(d));
		v.z = d;
	} else if (dt == FI_LONG_DOUBLE) {
		long double d;
		memcpy(&d, p, sizeof(d));
		v.z = d;
	} else if (dt == FI_FLOAT_COMPLEX) {
		float complex c;
		memcpy(&c, p, sizeof(c));
		v.z = c;
	} else if (dt == FI_DOUBLE_COMPLEX) {
		double complex c;
		memcpy(&c, p, sizeof(c));
		v.z = c;
	} else {
		memcpy(&v.z, p, sizeof(v.z));
	}
	return v;
}

static void store(int dt, void *p, struct val v)
{
	if (is_int(dt)) {
		unsigned __int128 u = cut(dt, v.u);
		memcpy(p, &u, dt_size[dt]);
	} else if (dt == FI_FLOAT) {
		float f = (float)creall(v.z);
		memcpy(p, &f, sizeof(f));
	} else if (dt == FI_DOUBLE) {
		double d = (double)creall(v.z);
		memcpy(p, &d, sizeof(d));
	} else if (dt == FI_LONG_DOUBLE) {
		long double d = creall(v.z);
		memcpy(p, &d, sizeof(d));
	} else if (dt == FI_FLOAT_COMPLEX) {
		float complex c = (float complex)v.z;
		memcpy(p, &c, sizeof(c));
	} else if (dt == FI_DOUBLE_COMPLEX) {
		double complex c = (double complex)v.z;
		memcpy(p, &c, sizeof(c));
	} else {
		memcpy(p, &v.z, sizeof(v.z));
	}
}

/* -1, 0, 1: the order of a and b (integers by signedness, reals by value) */
static int order(int dt, struct val a, struct val b)
{
	if (is_int(dt) && is_signed(dt)) {
		__int128 x = as_signed(dt, a.u), y = as_signed(dt, b.u);
		return x < y ? -1 : x > y;
	}
	if (is_int(dt))
		return a.u < b.u ? -1 : a.u > b.u;
	return creall(a.z) < creall(b.z) ? -1 : creall(a.z) > creall(b.z);
}

static bool nonzero(int dt, struct val v)
{
	return is_int(dt) ? v.u != 0 : v.z != 0;
}

static bool same(int dt, struct val a, struct val b)
{
	return is_int(dt) ? cut(dt, a.u) == cut(dt, b.u) : a.z == b.z;
}

/* dst OP src (with cmp), fi_atomic(3): a conditional swap happens when
 * `cmp OP dst`. */
static struct val model(int op, int dt, struct val d, struct val s, struct val c)
{
	struct val r = d, t = { 0, 0 };
	bool i = is_int(dt);

	switch (op) {
	case FI_MIN: return order(dt, s, d) < 0 ? s : d;
	case FI_MAX: return order(dt, s, d) > 0 ? s : d;
	case FI_SUM:
		if (i) r.u = cut(dt, d.u + s.u);
		else r.z = d.z + s.z;
		return r;
	case FI_PROD:
		if (i) r.u = cut(dt, d.u * s.u);
		else r.z = d.z * s.z;
		return r;
	case FI_LOR: case FI_LAND: case FI_LXOR: {
		bool a = nonzero(dt, d), b = nonzero(dt, s);
		bool x = op == FI_LOR ? (a || b) : op == FI_LAND ? (a && b) : (a != b);
		t.u = x;
		t.z = x;
		return t;
	}
	case FI_BOR: r.u = d.u | s.u; return r;
	case FI_BAND: r.u = d.u & s.u; return r;
	case FI_BXOR: r.u = d.u ^ s.u; return r;
	case FI_ATOMIC_READ: return d;
	case FI_ATOMIC_WRITE: return s;
	case FI_CSWAP: return same(dt, c, d) ? s : d;
	case FI_CSWAP_NE: return !same(dt, c, d) ? s : d;
	case FI_CSWAP_LE: return order(dt, c, d) <= 0 ? s : d;
	case FI_CSWAP_LT: return order(dt, c, d) < 0 ? s : d;
	case FI_CSWAP_GE: return order(dt, c, d) >= 0 ? s : d;
	case FI_CSWAP_GT: return order(dt, c, d) > 0 ? s : d;
	case FI_MSWAP: r.u = cut(dt, (s.u & c.u) | (d.u & ~c.u)); return r;
	}
	return r;
}

/* Small numbers, exact in every type, their sums and products too; for
 * 128-bit integers some go past 64 bits. */
static struct val pick(int dt, unsigned k)
{
	static const int small[8] = { 0, 1, 2, 3, -1, -2, 5, 12 };
	struct val v = { 0, 0 };
	int a = small[k % 8], b = small[(k / 8 + 3) % 8];

	if (is_int(dt)) {
		v.u = cut(dt, (unsigned __int128)(__int128)a);
		if (dt_size[dt] == 16 && k % 3 == 0)
			v.u = cut(dt, v.u + ((unsigned __int128)(unsigned)(k % 7 + 1) << 70));
	} else if (is_complex(dt)) {
		v.z = a + b * I;
	} else {
		v.z = a + (k % 5 == 0 ? 0.5L : 0);
	}
	return v;
}

/* Equal elements: long doubles by value (6 of their 16 bytes are padding,
 * which arithmetic leaves as it likes), everything else bit for bit. */
static bool elem_eq(int dt, const void *a, const void *b)
{
	if (dt == FI_LONG_DOUBLE || dt == FI_LONG_DOUBLE_COMPLEX)
		return load(dt, a).z == load(dt, b).z;
	return !memcmp(a, b, dt_size[dt]);
}

static size_t slot_of(int kind, int op, int dt)
{
	return ((size_t)kind * NOP + (size_t)op) * NDT + (size_t)dt;
}

static void fill_region(uint8_t *r)
{
	for (int k = 0; k < NKIND; k++)
		for (int op = 0; op < NOP; op++)
			for (int dt = 0; dt < NDT; dt++)
				for (int e = 0; e < NELEM; e++)
					store(dt, r + slot_of(k, op, dt) * SLOT + e * dt_size[dt],
					      pick(dt, (unsigned)(slot_of(k, op, dt) * 5 + e)));
}

static struct fi_info *hints_new(void)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_ATOMIC | FI_RMA;
	/* no FI_MR_LOCAL: the operands live in several small buffers */
	h->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED;
	h->fabric_attr->prov_name = strdup(prov);
	return h;
}

static struct fid_cntr *wcntr;
static void bind_cntr(struct ftx_cs *cs)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };

	CHK(fi_cntr_open(cs->dom, &ca, &wcntr, NULL));
	CHK(fi_ep_bind(cs->ep, &wcntr->fid, FI_WRITE));
}

static void unbind_cntr(struct ftx_cs *cs)
{
	(void)cs;
	CHK(fi_close(&wcntr->fid));
}

/* Both sides add 1 to the counter ADDS times; their old values must rise. */
static void adds(struct ftx_cs *cs, fi_addr_t target, uint64_t addr, uint64_t key, void *desc)
{
	uint64_t one = 1, old, prev = 0;
	char ctx;

	for (int i = 0; i < ADDS; i++) {
		FTX_POST(cs, fi_fetch_atomic(cs->ep, &one, 1, desc, &old, desc, target, addr, key,
					     FI_UINT64, FI_SUM, &ctx));
		if (ftx_cs_wait(cs, &ctx, NULL))
			FAIL("fetch-add %d failed", i);
		if (i && old <= prev)
			FAIL("fetch-add %d saw %llu after %llu", i, (unsigned long long)old,
			     (unsigned long long)prev);
		prev = old;
	}
}

static void server(void)
{
	struct ftx_cs cs = { 0 };
	struct info_msg im = { .kind = MSG_INFO };
	uint8_t *region = aligned_alloc(4096, (REGION + 4095) & ~4095ul);
	struct fid_mr *mr;
	char name[256];
	size_t len = sizeof(name);
	fi_addr_t self;
	uint32_t msg;
	uint64_t base;

	memset(region, 0, REGION);
	fill_region(region);
	ftx_cs_open(&cs, hints_new(), src, port, NULL, bind_cntr);
	CHK(fi_mr_reg(cs.dom, region, REGION, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
		      0, 0x3001, 0, &mr, NULL));
	base = (cs.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ||
	       cs.info->domain_attr->mr_mode == FI_MR_BASIC ? (uint64_t)(uintptr_t)region : 0;
	im.key = fi_mr_key(mr);
	im.addr = base;
	ftx_cs_send(&cs, &im, sizeof(im));
	/* Our own address, to reach our own memory the way a peer does. */
	CHK(fi_getname(&cs.ep->fid, name, &len));
	if (fi_av_insert(cs.av, name, 1, &self, 0, NULL) != 1)
		FAIL("inserting our own address");
	ftx_cs_recv(&cs, &msg, sizeof(msg));	/* GO: the client adds now too */
	if (msg != MSG_GO)
		FAIL("message %u", msg);
	adds(&cs, self, base + COUNTER_OFF, im.key, fi_mr_desc(mr));
	ftx_cs_recv(&cs, &msg, sizeof(msg));
	if (msg != MSG_ADDS_DONE)
		FAIL("message %u", msg);
	msg = MSG_ADDS_DONE;
	ftx_cs_send(&cs, &msg, sizeof(msg));
	ftx_cs_recv(&cs, &msg, sizeof(msg));	/* BYE: the client has read everything */
	CHK(fi_close(&mr->fid));
	cs.after_ep = unbind_cntr;
	ftx_cs_close(&cs);
	free(region);
	printf("server: ok\n");
}

struct client {
	struct ftx_cs cs;
	struct info_msg im;
	uint8_t *model, *buf, *res, *cmp, *back;
	struct fid_mr *mr;
	void *desc;
	uint64_t injected;
	char ctx;
	int ran, refused, forms[4];
};

static void run_one(struct client *c, int kind, int op, int dt, int form)
{
	size_t es = dt_size[dt], off = slot_of(kind, op, dt) * SLOT, n = NELEM, e;
	uint64_t addr = c->im.addr + off, key = c->im.key;
	uint8_t *mslot = c->model + off;
	struct fi_ioc iov[2] = { { c->buf, 1 }, { c->buf + es, n - 1 } };
	struct fi_ioc rv[2] = { { c->res, 2 }, { c->res + 2 * es, n - 2 } };
	struct fi_ioc cv[2] = { { c->cmp, 3 }, { c->cmp + 3 * es, n - 3 } };
	struct fi_rma_ioc rma[2] = { { addr, 2, key }, { addr + 2 * es, n - 2, key } };
	struct fi_msg_atomic msg = { .msg_iov = iov, .desc = (void *[]){ c->desc, c->desc },
				     .iov_count = 2, .addr = c->cs.peer, .rma_iov = rma,
				     .rma_iov_count = 2, .datatype = dt, .op = op,
				     .context = &c->ctx };
	void *dd[2] = { c->desc, c->desc };
	int err;

	if (getenv("FTX_TRACE"))
		fprintf(stderr, "kind %d op %d datatype %d form %d\n", kind, op, dt, form);
	for (e = 0; e < n; e++) {
		unsigned k = (unsigned)(off / SLOT * 3 + e * 11 + 7);
		struct val d = load(dt, mslot + e * es);

		store(dt, c->buf + e * es, pick(dt, k));
		/* half the compare values equal the target, so both ways are taken */
		store(dt, c->cmp + e * es, e % 2 ? d : pick(dt, k + 1));
		memset(c->res + e * es, 0xEE, es);
	}
	if (kind == PLAIN && form == 3 && n * es <= c->cs.info->tx_attr->inject_size) {
		FTX_POST(&c->cs, fi_inject_atomic(c->cs.ep, c->buf, n, c->cs.peer, addr, key, dt, op));
		c->injected++;
		CHK(fi_cntr_wait(wcntr, c->injected, 10000));
	} else {
		if (form == 3)
			form = 0;
		if (kind == PLAIN)
			FTX_POST(&c->cs, form == 0 ?
				 fi_atomic(c->cs.ep, c->buf, n, c->desc, c->cs.peer, addr, key, dt, op,
					   &c->ctx) : form == 1 ?
				 fi_atomicv(c->cs.ep, iov, dd, 2, c->cs.peer, addr, key, dt, op,
					    &c->ctx) :
				 fi_atomicmsg(c->cs.ep, &msg, FI_COMPLETION));
		else if (kind == FETCH)
			FTX_POST(&c->cs, form == 0 ?
				 fi_fetch_atomic(c->cs.ep, c->buf, n, c->desc, c->res, c->desc,
						 c->cs.peer, addr, key, dt, op, &c->ctx) : form == 1 ?
				 fi_fetch_atomicv(c->cs.ep, iov, dd, 2, rv, dd, 2, c->cs.peer, addr,
						  key, dt, op, &c->ctx) :
				 fi_fetch_atomicmsg(c->cs.ep, &msg, rv, dd, 2, FI_COMPLETION));
		else
			FTX_POST(&c->cs, form == 0 ?
				 fi_compare_atomic(c->cs.ep, c->buf, n, c->desc, c->cmp, c->desc,
						   c->res, c->desc, c->cs.peer, addr, key, dt, op,
						   &c->ctx) : form == 1 ?
				 fi_compare_atomicv(c->cs.ep, iov, dd, 2, cv, dd, 2, rv, dd, 2,
						    c->cs.peer, addr, key, dt, op, &c->ctx) :
				 fi_compare_atomicmsg(c->cs.ep, &msg, cv, dd, 2, rv, dd, 2,
						      FI_COMPLETION));
		err = ftx_cs_wait(&c->cs, &c->ctx, NULL);
		if (err)
			FAIL("kind %d op %d datatype %d form %d: %s", kind, op, dt, form,
			     fi_strerror(err));
	}
	for (e = 0; e < n; e++) {
		struct val d = load(dt, mslot + e * es), s = load(dt, c->buf + e * es),
			   cm = load(dt, c->cmp + e * es);

		if (kind != PLAIN && !elem_eq(dt, c->res + e * es, mslot + e * es))
			FAIL("kind %d op %d datatype %d form %d: old value %zu differs", kind, op, dt,
			     form, e);
		store(dt, mslot + e * es, model(op, dt, d, s, cm));
	}
	c->forms[form]++;
	c->ran++;
}

static void client(void)
{
	struct client *c = calloc(1, sizeof(*c));
	const char *force = getenv("FTX_FORM");
	int form = force ? atoi(force) % 4 : -1;
	uint32_t msg;
	size_t cnt;

	ftx_cs_open(&c->cs, hints_new(), src, port, dst, bind_cntr);
	ftx_cs_recv(&c->cs, &c->im, sizeof(c->im));
	c->model = aligned_alloc(4096, (REGION + 4095) & ~4095ul);
	c->back = aligned_alloc(4096, (REGION + 4095) & ~4095ul);
	c->buf = calloc(1, SLOT);
	c->res = calloc(1, SLOT);
	c->cmp = calloc(1, SLOT);
	memset(c->model, 0, REGION);
	fill_region(c->model);
	CHK(fi_mr_reg(c->cs.dom, c->back, REGION, FI_READ | FI_WRITE, 0, 0x3002, 0, &c->mr, NULL));
	c->desc = fi_mr_desc(c->mr);
	for (int kind = 0; kind < NKIND; kind++)
		for (int op = 0; op < NOP; op++)
			for (int dt = 0; dt < NDT; dt++) {
				int ret = kind == PLAIN ? fi_atomicvalid(c->cs.ep, dt, op, &cnt) :
					  kind == FETCH ? fi_fetch_atomicvalid(c->cs.ep, dt, op, &cnt) :
					  fi_compare_atomicvalid(c->cs.ep, dt, op, &cnt);

				if (strict && (ret == 0) != defined(kind, op, dt))
					FAIL("valid(kind %d, op %d, datatype %d) answers %d", kind, op,
					     dt, ret);
				if (ret == 0 && !defined(kind, op, dt))
					FAIL("kind %d op %d datatype %d is no libfabric atomic", kind, op,
					     dt);
				if (ret) {
					c->refused++;
					/* The call itself must refuse it, sending nothing. */
					if (kind == PLAIN && defined(kind, op, dt) == false &&
					    fi_atomic(c->cs.ep, c->buf, 1, c->desc, c->cs.peer,
						      c->im.addr, c->im.key, dt, op, &c->ctx) !=
					    -FI_EOPNOTSUPP && strict)
						FAIL("fi_atomic(op %d, datatype %d) not refused", op, dt);
					continue;
				}
				if (cnt < NELEM)
					FAIL("count %zu for kind %d op %d datatype %d", cnt, kind, op, dt);
				run_one(c, kind, op, dt, form >= 0 ? form : c->ran % 4);
			}
	printf("client: %d combinations run (forms %d/%d/%d/%d), %d refused by the provider\n",
	       c->ran, c->forms[0], c->forms[1], c->forms[2], c->forms[3], c->refused);
	msg = MSG_GO;
	ftx_cs_send(&c->cs, &msg, sizeof(msg));
	adds(&c->cs, c->cs.peer, c->im.addr + COUNTER_OFF, c->im.key, c->desc);
	msg = MSG_ADDS_DONE;
	ftx_cs_send(&c->cs, &msg, sizeof(msg));
	ftx_cs_recv(&c->cs, &msg, sizeof(msg));
	{
		uint64_t total = 2 * ADDS;

		memcpy(c->model + COUNTER_OFF, &total, sizeof(total));
	}
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->back, REGION, c->desc, c->cs.peer, c->im.addr,
				 c->im.key, &c->ctx));
	if (ftx_cs_wait(&c->cs, &c->ctx, NULL))
		FAIL("reading the region back");
	for (size_t sl = 0; sl <= NSLOTS; sl++) {
		int dt = sl == NSLOTS ? FI_UINT64 : (int)(sl % NDT);

		for (size_t e = 0; e < NELEM; e++) {
			size_t at = sl * SLOT + e * dt_size[dt];

			if (!elem_eq(dt, c->back + at, c->model + at))
				FAIL("element %zu of slot %zu (kind %zu, op %zu, datatype %d) differs "
				     "from the model", e, sl, sl / (NOP * NDT), sl / NDT % NOP, dt);
		}
	}
	msg = MSG_BYE;
	ftx_cs_send(&c->cs, &msg, sizeof(msg));
	CHK(fi_close(&c->mr->fid));
	c->cs.after_ep = unbind_cntr;
	ftx_cs_close(&c->cs);
	printf("client: every result and the region match the model; %d fetch-adds from each side "
	       "counted: ok\n", ADDS);
	free(c->model);
	free(c->back);
	free(c->buf);
	free(c->res);
	free(c->cmp);
	free(c);
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "p:s:P:S")) != -1) {
		switch (op) {
		case 'p': prov = optarg; break;
		case 's': src = optarg; break;
		case 'P': port = optarg; break;
		case 'S': strict = true; break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-s SRC] [-P PORT] [-S] [SERVER]\n",
				argv[0]);
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
