/* RMA as a libfabric program sees it, client and server started separately
 * (like libfabric's fabtests):
 *
 *   server: ftx_rma -p PROV [-s SRC] [-P PORT] [-m MODES] [-E] [-V] [-I]
 *   client: ftx_rma -p PROV [-s SRC] [-P PORT] [-m MODES] [-E] [-V] [-I] SERVER
 *
 * MODES is the mr_mode asked for: a comma list of local, prov_key, virt_addr,
 * allocated, or "none" (scalable: keys chosen by the caller, addresses as
 * offsets), or "basic". The program follows the mr_mode the provider
 * answers, as an application must. The server registers three regions
 * (read-write, read-only, write-only) with guard bytes around them and
 * sends their keys and addresses. The client then uses every RMA call:
 * fi_write/fi_read at sizes from 0 to 1 MiB, fi_writev/fi_readv,
 * fi_writemsg/fi_readmsg across three remote segments, fi_inject_write,
 * fi_writedata/fi_inject_writedata (remote CQ data the server must see, one
 * of them with no payload); it keeps a model of the remote region and reads
 * back after each write. Unless -V, it then breaks the rules: a write to the
 * read-only region, a read of the write-only one, a bad key, ranges that run
 * past either end, CQ data on a refused write; each must complete with an
 * error and change nothing (the server checks its regions and guards, and
 * that no refused CQ data reached it). Its write and read counters must
 * count the successes and the errors. -E: the server also counts remote
 * writes and reads with a counter bound to the read-write region
 * (FI_RMA_EVENT) and with remote counters on its endpoint. -I: the server
 * makes no libfabric call at all while the client works (it watches a flag
 * word that the client's last fi_write sets), so every operation must
 * complete without the target's progress, as one-sided RMA over shared
 * memory promises; the client then leaves out what needs the target (CQ
 * data, a key the target never registered). -K: afterwards the server
 * closes the read-write region and registers a smaller one under the same
 * key where keys are the caller's; the client must reach the new region
 * and nothing of the old (a provider that cached the old key's region
 * would write past the new one's end, or into the closed one). -C: the
 * client must have moved some of it by the net wire's core RMA (matchbox
 * between hosts: fi_write/fi_read of the core provider). Exit 0 on
 * success. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_rma.h>
#include <rdma/fi_ext_matchbox.h>

#include "ftx_cs.h"

#define RW_LEN (1u << 20)
#define SMALL_LEN 4096u
#define GUARD 64u
#define GUARD_BYTE 0xEE
#define INIT_SEED 1
#define RO_SEED 77
#define FLAG_WORD 0x1d1e7a56e7ull	/* -I: "the client is done" */

enum { MSG_INFO = 1, MSG_DONE, MSG_VERDICT };

struct region {
	uint64_t key, addr, len;
};

struct info_msg {
	uint32_t kind;
	struct region rw, ro, wo, flag;
};

#define MAX_DATA 4
struct done_msg {
	uint32_t kind;
	uint32_t seed;
	uint64_t rw_ops;	/* successful writes and reads on the read-write region */
	uint64_t writes, reads;	/* successful remote writes and reads in all */
	uint32_t ndata;
	uint64_t data[MAX_DATA];
};

struct verdict_msg {
	uint32_t kind;
	uint32_t ok;
	char why[120];
};

static const char *prov = "matchbox", *src, *port = "9401", *dst;
static uint64_t want_mr = FI_MR_LOCAL | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED;
static bool events, violations = true, idle, rekey, want_core;

static uint8_t pattern(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 8) + (i >> 16));
}

static void fill(uint8_t *p, size_t len, uint32_t seed, size_t from)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(seed, from + i);
}

static struct fi_info *hints_new(void)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_RMA | (events ? FI_RMA_EVENT : 0);
	h->domain_attr->mr_mode = (int)want_mr;
	h->fabric_attr->prov_name = strdup(prov);
	return h;
}

/* The mr_mode bits in effect (FI_MR_BASIC means the three it stood for). */
static uint64_t mr_mode_of(const struct fi_info *fi)
{
	uint64_t m = (uint64_t)fi->domain_attr->mr_mode;

	if (m == FI_MR_BASIC)
		m = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED;
	return m;
}

static struct fid_mr *reg(struct ftx_cs *cs, void *buf, size_t len, uint64_t access,
			  uint64_t want_key, uint64_t flags, uint64_t *key)
{
	struct fid_mr *mr;

	CHK(fi_mr_reg(cs->dom, buf, len, access, 0, want_key, flags, &mr, NULL));
	*key = fi_mr_key(mr);
	if (*key == FI_KEY_NOTAVAIL)
		FAIL("fi_mr_key: no key");
	if (!(mr_mode_of(cs->info) & FI_MR_PROV_KEY) && *key != want_key)
		FAIL("asked for key 0x%llx, got 0x%llx", (unsigned long long)want_key,
		     (unsigned long long)*key);
	return mr;
}

/* ---- server ---- */

static struct fid_cntr *ep_rw_cntr, *ep_rr_cntr;
static uint64_t seen_data[16];
static unsigned nseen;

static void server_bind(struct ftx_cs *cs)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };

	if (!events)
		return;
	CHK(fi_cntr_open(cs->dom, &ca, &ep_rw_cntr, NULL));
	CHK(fi_cntr_open(cs->dom, &ca, &ep_rr_cntr, NULL));
	CHK(fi_ep_bind(cs->ep, &ep_rw_cntr->fid, FI_REMOTE_WRITE));
	CHK(fi_ep_bind(cs->ep, &ep_rr_cntr->fid, FI_REMOTE_READ));
}

static void server_unbind(struct ftx_cs *cs)
{
	(void)cs;
	if (events) {
		CHK(fi_close(&ep_rw_cntr->fid));
		CHK(fi_close(&ep_rr_cntr->fid));
	}
}

static void server_other(struct ftx_cs *cs, const struct fi_cq_err_entry *e)
{
	/* fi_cq(3) asks for FI_RMA too; tcp;ofi_rxm (1.17) sets only
	 * FI_REMOTE_WRITE, so FI_RMA is required of matchbox alone. */
	uint64_t want = FI_REMOTE_WRITE |
			(strcmp(cs->info->fabric_attr->prov_name, "matchbox") ? 0 : FI_RMA);

	if (e->err)
		FAIL("error completion at the target: %s", fi_strerror(e->err));
	if (!(e->flags & FI_REMOTE_CQ_DATA))
		FAIL("unexpected completion at the target (flags 0x%llx)",
		     (unsigned long long)e->flags);
	if ((e->flags & want) != want)
		FAIL("remote CQ data without FI_RMA | FI_REMOTE_WRITE (flags 0x%llx)",
		     (unsigned long long)e->flags);
	if (nseen == sizeof(seen_data) / sizeof(seen_data[0]))
		FAIL("too much remote CQ data");
	seen_data[nseen++] = e->data;
}

static bool region_is(const uint8_t *area, size_t len, uint32_t seed, char *why, size_t wlen,
		      const char *name)
{
	size_t i;

	for (i = 0; i < GUARD; i++)
		if (area[i] != GUARD_BYTE || area[GUARD + len + i] != GUARD_BYTE) {
			snprintf(why, wlen, "%s: guard byte %zu changed", name, i);
			return false;
		}
	for (i = 0; i < len; i++)
		if (area[GUARD + i] != pattern(seed, i)) {
			snprintf(why, wlen, "%s: byte %zu is 0x%02x, not 0x%02x", name, i,
				 area[GUARD + i], pattern(seed, i));
			return false;
		}
	return true;
}

static uint8_t *guarded(size_t len, uint32_t seed)
{
	uint8_t *a = aligned_alloc(4096, (len + 2 * GUARD + 4095) & ~(size_t)4095);

	memset(a, GUARD_BYTE, len + 2 * GUARD);
	fill(a + GUARD, len, seed, 0);
	return a;
}

/* -K, the server's half: the read-write region closes while the client
 * still knows it; a smaller one opens under the same key where the caller
 * chooses keys (a new one otherwise). The client writes the whole new
 * region; the old one must keep what it held. */
#define REKEY_LEN 8192u
#define REKEY_SEED 91

static void rekey_server(struct ftx_cs *cs, struct fid_mr **mr, const uint8_t *old,
			 struct verdict_msg *vm, uint32_t old_seed)
{
	uint8_t *nu = guarded(REKEY_LEN, INIT_SEED);
	uint64_t mode = mr_mode_of(cs->info);
	struct info_msg im = { .kind = MSG_INFO };
	struct done_msg dm;

	CHK(fi_close(&(*mr)->fid));
	*mr = reg(cs, nu + GUARD, REKEY_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0x1001, 0,
		  &im.rw.key);
	im.rw.addr = mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)(nu + GUARD) : 0;
	im.rw.len = REKEY_LEN;
	ftx_cs_send(cs, &im, sizeof(im));
	ftx_cs_recv(cs, &dm, sizeof(dm));
	vm->ok = region_is(nu, REKEY_LEN, REKEY_SEED, vm->why, sizeof(vm->why), "new region") &&
		 region_is(old, RW_LEN, old_seed, vm->why, sizeof(vm->why), "closed region");
	ftx_cs_send(cs, vm, sizeof(*vm));
	free(nu);
	if (!vm->ok)
		FAIL("%s", vm->why);
	printf("server: the region closed kept its bytes, the new one under key 0x%llx got "
	       "the client's: ok\n", (unsigned long long)im.rw.key);
}

static void server(void)
{
	struct ftx_cs cs = { .other = server_other };
	struct info_msg im = { .kind = MSG_INFO };
	struct done_msg dm;
	struct verdict_msg vm = { .kind = MSG_VERDICT, .ok = 1 };
	uint8_t *rw = guarded(RW_LEN, INIT_SEED), *ro = guarded(SMALL_LEN, RO_SEED),
		*wo = guarded(SMALL_LEN, 0);
	struct fid_mr *mr[4];
	static volatile uint64_t flag;
	struct fid_cntr *mr_cntr = NULL;
	uint64_t mode;
	unsigned i;

	ftx_cs_open(&cs, hints_new(), src, port, NULL, server_bind);
	mode = mr_mode_of(cs.info);
	mr[0] = reg(&cs, rw + GUARD, RW_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0x1001,
		    events ? FI_RMA_EVENT : 0, &im.rw.key);
	mr[1] = reg(&cs, ro + GUARD, SMALL_LEN, FI_REMOTE_READ, 0x1002, 0, &im.ro.key);
	mr[2] = reg(&cs, wo + GUARD, SMALL_LEN, FI_REMOTE_WRITE, 0x1003, 0, &im.wo.key);
	mr[3] = reg(&cs, (void *)&flag, sizeof(flag), FI_REMOTE_WRITE, 0x1004, 0, &im.flag.key);
	if (events) {
		struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };

		CHK(fi_cntr_open(cs.dom, &ca, &mr_cntr, NULL));
		CHK(fi_mr_bind(mr[0], &mr_cntr->fid, FI_REMOTE_WRITE | FI_REMOTE_READ));
		CHK(fi_mr_enable(mr[0]));
	}
	im.rw.addr = mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)(rw + GUARD) : 0;
	im.ro.addr = mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)(ro + GUARD) : 0;
	im.wo.addr = mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)(wo + GUARD) : 0;
	im.flag.addr = mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)&flag : 0;
	im.flag.len = sizeof(flag);
	im.rw.len = RW_LEN;
	im.ro.len = im.wo.len = SMALL_LEN;
	printf("server: mr_mode 0x%llx, keys 0x%llx 0x%llx 0x%llx\n", (unsigned long long)mode,
	       (unsigned long long)im.rw.key, (unsigned long long)im.ro.key,
	       (unsigned long long)im.wo.key);
	ftx_cs_send(&cs, &im, sizeof(im));
	if (idle) {
		/* Not one libfabric call until the client's flag lands. */
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (flag != FLAG_WORD) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 60)
				FAIL("no flag after 60 s: the client's RMA waits for our progress");
			usleep(200);
		}
		printf("server: the client finished while we made no libfabric call\n");
	}
	/* The target does nothing but progress while the client works. */
	ftx_cs_recv(&cs, &dm, sizeof(dm));
	if (dm.kind != MSG_DONE)
		FAIL("message of kind %u", dm.kind);
	if (!region_is(rw, RW_LEN, dm.seed, vm.why, sizeof(vm.why), "read-write region") ||
	    !region_is(ro, SMALL_LEN, RO_SEED, vm.why, sizeof(vm.why), "read-only region") ||
	    !region_is(wo, SMALL_LEN, dm.seed + 1, vm.why, sizeof(vm.why), "write-only region"))
		vm.ok = 0;
	if (vm.ok && nseen != dm.ndata) {
		snprintf(vm.why, sizeof(vm.why), "%u remote CQ data entries, %u expected", nseen,
			 dm.ndata);
		vm.ok = 0;
	}
	for (i = 0; vm.ok && i < nseen; i++)
		if (seen_data[i] != dm.data[i]) {
			snprintf(vm.why, sizeof(vm.why), "remote CQ data %u is 0x%llx, not 0x%llx", i,
				 (unsigned long long)seen_data[i], (unsigned long long)dm.data[i]);
			vm.ok = 0;
		}
	if (vm.ok && events) {
		uint64_t c[3] = { fi_cntr_read(mr_cntr), fi_cntr_read(ep_rw_cntr),
				  fi_cntr_read(ep_rr_cntr) };

		if (c[0] != dm.rw_ops || c[1] != dm.writes || c[2] != dm.reads) {
			snprintf(vm.why, sizeof(vm.why),
				 "counters: region %llu (want %llu), remote writes %llu (want %llu), "
				 "remote reads %llu (want %llu)",
				 (unsigned long long)c[0], (unsigned long long)dm.rw_ops,
				 (unsigned long long)c[1], (unsigned long long)dm.writes,
				 (unsigned long long)c[2], (unsigned long long)dm.reads);
			vm.ok = 0;
		}
	}
	ftx_cs_send(&cs, &vm, sizeof(vm));
	if (rekey && vm.ok)
		rekey_server(&cs, &mr[0], rw, &vm, dm.seed);
	for (i = 0; i < 4; i++)
		CHK(fi_close(&mr[i]->fid));
	if (mr_cntr)
		CHK(fi_close(&mr_cntr->fid));
	cs.after_ep = server_unbind;
	ftx_cs_close(&cs);
	free(rw);
	free(ro);
	free(wo);
	if (!vm.ok)
		FAIL("%s", vm.why);
	printf("server: regions, guards, remote CQ data%s as expected: ok\n",
	       events ? " and RMA event counters" : "");
}

/* ---- client ---- */

struct client {
	struct ftx_cs cs;
	struct info_msg im;
	uint8_t *model;		/* what the read-write region must hold */
	uint8_t *out, *in;	/* local source and sink, RW_LEN each */
	void *out_desc, *in_desc;
	struct fid_mr *out_mr, *in_mr;
	struct fid_cntr *wc, *rc;
	uint64_t writes, reads, write_errs, read_errs, rw_ops;
	struct done_msg dm;
	size_t inject_size, iov_limit, rma_iov_limit;
	bool strict;		/* matchbox: the exact error codes */
	struct fi_matchbox_stats st;
	struct fi_matchbox_net_stats ns;
	char ctx;
};

static struct fid_cntr *cl_wc, *cl_rc;

static void client_bind(struct ftx_cs *cs)
{
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };

	CHK(fi_cntr_open(cs->dom, &ca, &cl_wc, NULL));
	CHK(fi_cntr_open(cs->dom, &ca, &cl_rc, NULL));
	CHK(fi_ep_bind(cs->ep, &cl_wc->fid, FI_WRITE));
	CHK(fi_ep_bind(cs->ep, &cl_rc->fid, FI_READ));
}

static void client_unbind(struct ftx_cs *cs)
{
	(void)cs;
	CHK(fi_close(&cl_wc->fid));
	CHK(fi_close(&cl_rc->fid));
}

static void check_entry(struct client *c, const struct fi_cq_err_entry *e, bool write,
			const char *what)
{
	uint64_t want = FI_RMA | (write ? FI_WRITE : FI_READ);

	(void)c;
	if ((e->flags & want) != want)
		FAIL("%s: completion flags 0x%llx lack FI_RMA | %s", what,
		     (unsigned long long)e->flags, write ? "FI_WRITE" : "FI_READ");
}

/* Waits for the operation; success is counted and checked. */
static void done_ok(struct client *c, bool write, bool on_rw, const char *what)
{
	struct fi_cq_err_entry e;
	int err = ftx_cs_wait(&c->cs, &c->ctx, &e);

	if (err)
		FAIL("%s: %s", what, fi_strerror(err));
	check_entry(c, &e, write, what);
	if (write)
		c->writes++;
	else
		c->reads++;
	c->rw_ops += on_rw;
}

/* Waits for an operation that must fail; the code it fails with is
 * checked where the provider's is known. */
static void done_err(struct client *c, bool write, int want, const char *what)
{
	int err = ftx_cs_wait(&c->cs, &c->ctx, NULL);

	if (!err)
		FAIL("%s: completed without error", what);
	if (c->strict && err != want)
		FAIL("%s: failed with %s, not %s", what, fi_strerror(err), fi_strerror(want));
	printf("client: %s: refused (%s)\n", what, fi_strerror(err));
	if (write)
		c->write_errs++;
	else
		c->read_errs++;
}

static uint64_t raddr(const struct region *r, uint64_t off)
{
	return r->addr + off;
}

static void compare(struct client *c, const uint8_t *got, size_t off, size_t len,
		    const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (got[i] != c->model[off + i])
			FAIL("%s: byte %zu of %zu (remote offset %zu) is 0x%02x, not 0x%02x", what, i,
			     len, off + i, got[i], c->model[off + i]);
}

static void write_read(struct client *c, size_t off, size_t len, uint32_t seed)
{
	char what[64];

	snprintf(what, sizeof(what), "fi_write of %zu bytes", len);
	fill(c->out, len, seed, 0);
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, len, c->out_desc, c->cs.peer,
				  raddr(&c->im.rw, off), c->im.rw.key, &c->ctx));
	done_ok(c, true, true, what);
	memcpy(c->model + off, c->out, len);
	memset(c->in, 0, len);
	snprintf(what, sizeof(what), "fi_read of %zu bytes", len);
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->in, len, c->in_desc, c->cs.peer,
				 raddr(&c->im.rw, off), c->im.rw.key, &c->ctx));
	done_ok(c, false, true, what);
	compare(c, c->in, off, len, what);
}

static void vectors(struct client *c)
{
	struct iovec wv[3] = { { c->out, 100 }, { c->out + 100, 5000 }, { c->out + 5100, 30000 } };
	struct iovec rv[3] = { { c->in, 20000 }, { c->in + 20000, 15000 },
			       { c->in + 35000, 100 } };
	void *wd[3] = { c->out_desc, c->out_desc, c->out_desc };
	void *rd[3] = { c->in_desc, c->in_desc, c->in_desc };
	const size_t off = 1000, len = 35100;

	if (c->iov_limit < 3) {
		printf("client: iov_limit %zu: vectors skipped\n", c->iov_limit);
		return;
	}
	fill(c->out, len, 9, 0);
	FTX_POST(&c->cs, fi_writev(c->cs.ep, wv, wd, 3, c->cs.peer, raddr(&c->im.rw, off),
				   c->im.rw.key, &c->ctx));
	done_ok(c, true, true, "fi_writev");
	memcpy(c->model + off, c->out, len);
	memset(c->in, 0, len);
	FTX_POST(&c->cs, fi_readv(c->cs.ep, rv, rd, 3, c->cs.peer, raddr(&c->im.rw, off),
				  c->im.rw.key, &c->ctx));
	done_ok(c, false, true, "fi_readv");
	compare(c, c->in, off, len, "fi_readv");
}

static void messages(struct client *c)
{
	struct iovec wv[2] = { { c->out, 3000 }, { c->out + 3000, 9000 } };
	void *wd[2] = { c->out_desc, c->out_desc };
	struct iovec rv = { c->in, 12000 };
	struct fi_rma_iov r[3] = {
		{ raddr(&c->im.rw, 0), 4000, c->im.rw.key },
		{ raddr(&c->im.rw, 200000), 5000, c->im.rw.key },
		{ raddr(&c->im.rw, 500000), 3000, c->im.rw.key },
	};
	struct fi_msg_rma m = { .msg_iov = wv, .desc = wd, .iov_count = 2, .addr = c->cs.peer,
				.rma_iov = r, .rma_iov_count = 3, .context = &c->ctx };

	if (c->rma_iov_limit < 3 || c->iov_limit < 2) {
		printf("client: rma_iov_limit %zu: fi_writemsg/fi_readmsg skipped\n",
		       c->rma_iov_limit);
		return;
	}
	fill(c->out, 12000, 21, 0);
	FTX_POST(&c->cs, fi_writemsg(c->cs.ep, &m, FI_COMPLETION));
	done_ok(c, true, true, "fi_writemsg across 3 remote segments");
	memcpy(c->model + 0, c->out, 4000);
	memcpy(c->model + 200000, c->out + 4000, 5000);
	memcpy(c->model + 500000, c->out + 9000, 3000);
	memset(c->in, 0, 12000);
	m.msg_iov = &rv;
	m.desc = &c->in_desc;
	m.iov_count = 1;
	FTX_POST(&c->cs, fi_readmsg(c->cs.ep, &m, FI_COMPLETION));
	done_ok(c, false, true, "fi_readmsg across 3 remote segments");
	compare(c, c->in, 0, 4000, "fi_readmsg segment 1");
	compare(c, c->in + 4000, 200000, 5000, "fi_readmsg segment 2");
	compare(c, c->in + 9000, 500000, 3000, "fi_readmsg segment 3");
}

/* Injects report no completion: the write counter says when they are done. */
static void wait_writes(struct client *c)
{
	CHK(fi_cntr_wait(c->wc, c->writes + c->write_errs, 10000));
}

static void injects(struct client *c)
{
	size_t n = c->inject_size < 64 ? c->inject_size : 64;
	uint8_t buf[64];

	if (!n) {
		printf("client: inject_size 0: fi_inject_write skipped\n");
		return;
	}
	fill(buf, n, 33, 0);
	FTX_POST(&c->cs, fi_inject_write(c->cs.ep, buf, n, c->cs.peer, raddr(&c->im.rw, 77),
					 c->im.rw.key));
	memset(buf, 0, sizeof(buf));	/* the provider must have taken its copy */
	c->writes++;
	c->rw_ops++;
	wait_writes(c);
	fill(c->model + 77, n, 33, 0);
	memset(c->in, 0, n);
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->in, n, c->in_desc, c->cs.peer, raddr(&c->im.rw, 77),
				 c->im.rw.key, &c->ctx));
	done_ok(c, false, true, "fi_read after fi_inject_write");
	compare(c, c->in, 77, n, "fi_inject_write");
}

static void with_data(struct client *c)
{
	uint64_t d;

	fill(c->out, 256, 44, 0);
	d = 0x5eed000000000001ull;
	FTX_POST(&c->cs, fi_writedata(c->cs.ep, c->out, 256, c->out_desc, d, c->cs.peer,
				      raddr(&c->im.rw, 4096), c->im.rw.key, &c->ctx));
	done_ok(c, true, true, "fi_writedata");
	memcpy(c->model + 4096, c->out, 256);
	c->dm.data[c->dm.ndata++] = d;
	d = 0x5eed000000000002ull;
	FTX_POST(&c->cs, fi_writedata(c->cs.ep, NULL, 0, NULL, d, c->cs.peer,
				      raddr(&c->im.rw, 0), c->im.rw.key, &c->ctx));
	done_ok(c, true, true, "fi_writedata without payload");
	c->dm.data[c->dm.ndata++] = d;
	if (c->inject_size >= 16) {
		uint8_t buf[16];

		fill(buf, 16, 45, 0);
		d = 0x5eed000000000003ull;
		FTX_POST(&c->cs, fi_inject_writedata(c->cs.ep, buf, 16, d, c->cs.peer,
						     raddr(&c->im.rw, 8192), c->im.rw.key));
		c->writes++;
		c->rw_ops++;
		wait_writes(c);
		memcpy(c->model + 8192, buf, 16);
		c->dm.data[c->dm.ndata++] = d;
	}
}

/* Each must fail at the initiator and leave the target as it was; the
 * endpoint goes on working afterwards. */
static void violations_(struct client *c)
{
	const struct region *rw = &c->im.rw;

	fill(c->out, 64, 99, 0);
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, 64, c->out_desc, c->cs.peer,
				  raddr(&c->im.ro, 0), c->im.ro.key, &c->ctx));
	done_err(c, true, FI_EACCES, "fi_write to a region without FI_REMOTE_WRITE");
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->in, 64, c->in_desc, c->cs.peer,
				 raddr(&c->im.wo, 0), c->im.wo.key, &c->ctx));
	done_err(c, false, FI_EACCES, "fi_read of a region without FI_REMOTE_READ");
	if (!idle) {	/* only the target knows which keys it never registered */
		FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, 64, c->out_desc, c->cs.peer,
					  raddr(rw, 0), rw->key ^ 0x5a5a00, &c->ctx));
		done_err(c, true, FI_EKEYREJECTED, "fi_write with a key nobody registered");
	}
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, 16, c->out_desc, c->cs.peer,
				  raddr(rw, RW_LEN - 8), rw->key, &c->ctx));
	done_err(c, true, FI_EACCES, "fi_write running past the region's end");
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->in, 16, c->in_desc, c->cs.peer,
				 raddr(rw, RW_LEN - 8), rw->key, &c->ctx));
	done_err(c, false, FI_EACCES, "fi_read running past the region's end");
	if (rw->addr >= 8) {
		FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, 16, c->out_desc, c->cs.peer,
					  rw->addr - 8, rw->key, &c->ctx));
		done_err(c, true, FI_EACCES, "fi_write starting before the region");
	}
	if (idle)
		return;
	FTX_POST(&c->cs, fi_writedata(c->cs.ep, c->out, 64, c->out_desc, 0xdeadull, c->cs.peer,
				      raddr(&c->im.ro, 0), c->im.ro.key, &c->ctx));
	done_err(c, true, FI_EACCES, "fi_writedata to a region without FI_REMOTE_WRITE");
}

/* -K, the client's half: the region it knew is gone; the new one, maybe
 * under the same key, is smaller. Past its end is refused, the whole of
 * it is written and read back. */
static void rekey_client(struct client *c)
{
	struct verdict_msg vm;
	struct info_msg im;
	struct region *r = &c->im.rw;

	ftx_cs_recv(&c->cs, &im, sizeof(im));
	if (im.kind != MSG_INFO || im.rw.len != REKEY_LEN)
		FAIL("rekey: message of kind %u", im.kind);
	*r = im.rw;
	fill(c->out, 64, 3, 0);
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, 64, c->out_desc, c->cs.peer,
				  raddr(r, REKEY_LEN), r->key, &c->ctx));
	done_err(c, true, FI_EACCES, "fi_write past the end of the region registered again");
	fill(c->out, REKEY_LEN, REKEY_SEED, 0);
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, REKEY_LEN, c->out_desc, c->cs.peer,
				  raddr(r, 0), r->key, &c->ctx));
	done_ok(c, true, false, "fi_write of the region registered again");
	memset(c->in, 0, REKEY_LEN);
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->in, REKEY_LEN, c->in_desc, c->cs.peer,
				 raddr(r, 0), r->key, &c->ctx));
	done_ok(c, false, false, "fi_read of the region registered again");
	if (memcmp(c->in, c->out, REKEY_LEN))
		FAIL("rekey: the new region does not read back what was written");
	c->dm.kind = MSG_DONE;
	ftx_cs_send(&c->cs, &c->dm, sizeof(c->dm));
	ftx_cs_recv(&c->cs, &vm, sizeof(vm));
	if (vm.kind != MSG_VERDICT || !vm.ok)
		FAIL("rekey: the server says: %s", vm.kind == MSG_VERDICT ? vm.why : "(no verdict)");
	printf("client: the region registered again: ok\n");
}

static void client_run(void)
{
	struct client *c = calloc(1, sizeof(*c));
	struct verdict_msg vm;
	uint64_t mode, key;
	size_t sizes[] = { 0, 1, 7, 64, 4096, 65536, RW_LEN }, k;

	ftx_cs_open(&c->cs, hints_new(), src, port, dst, client_bind);
	c->wc = cl_wc;
	c->rc = cl_rc;
	mode = mr_mode_of(c->cs.info);
	c->strict = !strcmp(c->cs.info->fabric_attr->prov_name, "matchbox");
	c->inject_size = c->cs.info->tx_attr->inject_size;
	c->iov_limit = c->cs.info->tx_attr->iov_limit;
	c->rma_iov_limit = c->cs.info->tx_attr->rma_iov_limit;
	ftx_cs_recv(&c->cs, &c->im, sizeof(c->im));
	if (c->im.kind != MSG_INFO)
		FAIL("message of kind %u", c->im.kind);
	c->model = malloc(RW_LEN);
	fill(c->model, RW_LEN, INIT_SEED, 0);
	c->out = aligned_alloc(4096, RW_LEN);
	c->in = aligned_alloc(4096, RW_LEN);
	if (mode & FI_MR_LOCAL) {
		c->out_mr = reg(&c->cs, c->out, RW_LEN, FI_WRITE | FI_READ, 0x2001, 0, &key);
		c->in_mr = reg(&c->cs, c->in, RW_LEN, FI_WRITE | FI_READ, 0x2002, 0, &key);
		c->out_desc = fi_mr_desc(c->out_mr);
		c->in_desc = fi_mr_desc(c->in_mr);
	}
	printf("client: mr_mode 0x%llx, inject %zu, iov %zu, rma_iov %zu\n",
	       (unsigned long long)mode, c->inject_size, c->iov_limit, c->rma_iov_limit);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		write_read(c, sizes[k] == RW_LEN ? 0 : 13 * k, sizes[k], (uint32_t)(100 + k));
	vectors(c);
	messages(c);
	injects(c);
	if (!idle)
		with_data(c);
	if (violations)
		violations_(c);
	/* Still working after the refusals; then the final picture. */
	memset(c->in, 0, RW_LEN);
	FTX_POST(&c->cs, fi_read(c->cs.ep, c->in, RW_LEN, c->in_desc, c->cs.peer,
				 raddr(&c->im.rw, 0), c->im.rw.key, &c->ctx));
	done_ok(c, false, true, "fi_read of the whole region");
	compare(c, c->in, 0, RW_LEN, "the whole region");
	c->dm.seed = 5;
	fill(c->out, SMALL_LEN, c->dm.seed + 1, 0);
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, SMALL_LEN, c->out_desc, c->cs.peer,
				  raddr(&c->im.wo, 0), c->im.wo.key, &c->ctx));
	done_ok(c, true, false, "fi_write of the write-only region");
	fill(c->out, RW_LEN, c->dm.seed, 0);
	FTX_POST(&c->cs, fi_write(c->cs.ep, c->out, RW_LEN, c->out_desc, c->cs.peer,
				  raddr(&c->im.rw, 0), c->im.rw.key, &c->ctx));
	done_ok(c, true, true, "fi_write of the whole region");
	if (fi_cntr_read(c->wc) != c->writes || fi_cntr_readerr(c->wc) != c->write_errs ||
	    fi_cntr_read(c->rc) != c->reads || fi_cntr_readerr(c->rc) != c->read_errs)
		FAIL("counters: writes %llu/%llu errors %llu/%llu, reads %llu/%llu errors %llu/%llu"
		     " (counted/expected)", (unsigned long long)fi_cntr_read(c->wc),
		     (unsigned long long)c->writes, (unsigned long long)fi_cntr_readerr(c->wc),
		     (unsigned long long)c->write_errs, (unsigned long long)fi_cntr_read(c->rc),
		     (unsigned long long)c->reads, (unsigned long long)fi_cntr_readerr(c->rc),
		     (unsigned long long)c->read_errs);
	if (idle) {
		uint64_t *fw = (uint64_t *)c->out;

		*fw = FLAG_WORD;
		FTX_POST(&c->cs, fi_write(c->cs.ep, fw, sizeof(*fw), c->out_desc, c->cs.peer,
					  raddr(&c->im.flag, 0), c->im.flag.key, &c->ctx));
		done_ok(c, true, false, "fi_write of the flag");
	}
	c->dm.kind = MSG_DONE;
	c->dm.rw_ops = c->rw_ops;
	c->dm.writes = c->writes;
	c->dm.reads = c->reads;
	ftx_cs_send(&c->cs, &c->dm, sizeof(c->dm));
	ftx_cs_recv(&c->cs, &vm, sizeof(vm));
	if (rekey && vm.kind == MSG_VERDICT && vm.ok)
		rekey_client(c);
	if (c->strict) {
		size_t sl = sizeof(c->ns);

		CHK(fi_getopt(&c->cs.ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &c->ns,
			      &sl));
		if (want_core && !c->ns.rma_core)
			FAIL("nothing went by the core's RMA");
		sl = sizeof(c->st);
		CHK(fi_getopt(&c->cs.ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS, &c->st, &sl));
		/* -I: nothing could have gone through the target */
		if (idle && c->st.rma_frames)
			FAIL("%llu operations went in frames with the target idle",
			     (unsigned long long)c->st.rma_frames);
	}
	if (c->out_mr) {
		CHK(fi_close(&c->out_mr->fid));
		CHK(fi_close(&c->in_mr->fid));
	}
	c->cs.after_ep = client_unbind;
	ftx_cs_close(&c->cs);
	if (vm.kind != MSG_VERDICT || !vm.ok)
		FAIL("the server says: %s", vm.kind == MSG_VERDICT ? vm.why : "(no verdict)");
	printf("client: %llu writes, %llu reads, %llu refused: ok\n",
	       (unsigned long long)c->writes, (unsigned long long)c->reads,
	       (unsigned long long)(c->write_errs + c->read_errs));
	if (c->strict)
		printf("client: matchbox moved %llu by CMA, %llu by the net wire's core, %llu in "
		       "frames\n", (unsigned long long)c->st.rma_cma,
		       (unsigned long long)c->ns.rma_core, (unsigned long long)c->st.rma_frames);
	free(c->model);
	free(c->out);
	free(c->in);
	free(c);
}

static uint64_t parse_modes(const char *s)
{
	uint64_t m = 0;
	char *dup = strdup(s), *tok, *save;

	if (!strcmp(s, "none"))
		m = 0;
	else if (!strcmp(s, "basic"))
		m = FI_MR_BASIC;
	else
		for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "local"))
				m |= FI_MR_LOCAL;
			else if (!strcmp(tok, "prov_key"))
				m |= FI_MR_PROV_KEY;
			else if (!strcmp(tok, "virt_addr"))
				m |= FI_MR_VIRT_ADDR;
			else if (!strcmp(tok, "allocated"))
				m |= FI_MR_ALLOCATED;
			else
				FAIL("unknown mr_mode bit '%s'", tok);
		}
	free(dup);
	return m;
}

int main(int argc, char **argv)
{
	int op;

	while ((op = getopt(argc, argv, "p:s:P:m:EVIKC")) != -1) {
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
		case 'm':
			want_mr = parse_modes(optarg);
			break;
		case 'E':
			events = true;
			break;
		case 'V':
			violations = false;
			break;
		case 'I':
			idle = true;
			break;
		case 'K':
			rekey = true;
			break;
		case 'C':
			want_core = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-s SRC] [-P PORT] [-m MODES] [-E] [-V] "
				"[-I] [-K] [-C] [SERVER]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		dst = argv[optind];
	if (idle && events) {
		fprintf(stderr, "-I and -E exclude each other: counted accesses need the target\n");
		return 2;
	}
	if (dst)
		client_run();
	else
		server();
	return 0;
}
