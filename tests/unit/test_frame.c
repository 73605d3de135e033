/* The receiver's check of a frame before it trusts any field
 * (prov/matchbox/mbx_frame.h): a well-formed frame of every op passes,
 * and a frame whose kind, magic, version or op is wrong, whose length is
 * one byte off what its header says follows, or whose sizes are beyond
 * their limits is refused, with the caller's pointer left as it was.
 * Sizes near 2^64, whose sum with the header length wraps around to a
 * plausible length, are refused too. */
#include <criterion/criterion.h>
#include <string.h>

#include "mbx_frame.h"

/* Room for the largest frame built here (an RTS with MBX_IOV_LIMIT iovs,
 * an eager payload, a small atomic). */
static _Alignas(64) unsigned char buf[2048];
static struct mbx_wire *const w = (struct mbx_wire *)buf;

static void reset(void)
{
	memset(buf, 0, sizeof(buf));
}

TestSuite(frame, .init = reset);

/* A header for `op` whose frame is `len` bytes in all. */
static void hdr(uint8_t op, uint32_t len)
{
	w->f.kind = MBX_FRAME_KIND;
	w->f.len = len;
	w->magic = MBX_WIRE_MAGIC;
	w->version = MBX_WIRE_VERSION;
	w->op = op;
}

/* Accepted, and the caller's pointer set to the frame. */
static bool ok(void)
{
	const struct mbx_wire *out = NULL;
	bool r = mbx_frame_ok(&w->f, &out);

	cr_assert(!r || out == w, "accepted but *out not set");
	return r;
}

/* Refused, and the caller's pointer untouched. */
static void refused(const char *why)
{
	const struct mbx_wire *sentinel = (const struct mbx_wire *)&sentinel;
	const struct mbx_wire *out = sentinel;

	cr_assert_not(mbx_frame_ok(&w->f, &out), "accepted: %s", why);
	cr_assert_eq(out, sentinel, "*out changed on a refused frame: %s", why);
}

/* The frame as built passes; one byte more or less does not. */
static void exact_length(const char *what)
{
	cr_assert(ok(), "refused: %s", what);
	w->f.len++;
	refused(what);
	w->f.len -= 2;
	refused(what);
	w->f.len++;
}

Test(frame, small_frames)
{
	const size_t h = sizeof(struct mbx_wire_small);

	hdr(MBX_OP_SMALL, (uint32_t)h);
	cr_assert(ok(), "an empty small frame");
	w->f.len = (uint32_t)(h + MBX_SMALL_MAX);
	cr_assert(ok(), "a full small frame");
	w->f.len++;
	refused("small frame past MBX_SMALL_MAX");
	w->f.len = (uint32_t)h;
	w->flags = MBX_WF_ACKREQ;
	refused("small frame asking for an acknowledgement");
	w->flags = 0;
	w->f.len = (uint32_t)h - 1;
	refused("shorter than the small header");
	w->f.len = 0;
	refused("zero length");
}

Test(frame, identity)
{
	hdr(MBX_OP_CTS, sizeof(*w));
	cr_assert(ok());
	w->f.kind = MBU_FRAME_PAD;
	refused("padding kind");
	w->f.kind = MBX_FRAME_KIND + 1;
	refused("foreign kind");
	w->f.kind = MBX_FRAME_KIND;
	w->magic ^= 1;
	refused("magic");
	w->magic = MBX_WIRE_MAGIC;
	w->version = MBX_WIRE_VERSION - 1;
	refused("older version");
	w->version = MBX_WIRE_VERSION + 1;
	refused("newer version");
	w->version = MBX_WIRE_VERSION;
	for (unsigned op = 0; op < 256; op++) {
		if (op > 0 && op < MBX_OP_MAX)
			continue;
		w->op = (uint8_t)op;
		refused("unknown op");
	}
	w->op = MBX_OP_FIN;
	w->f.len = sizeof(struct mbx_wire_small);
	refused("a full-header op in a small header's length");
}

Test(frame, header_only_ops)
{
	const uint8_t ops[] = { MBX_OP_CTS, MBX_OP_FIN, MBX_OP_ACK, MBX_OP_RERR,
				MBX_OP_WACK, MBX_OP_KEY };

	for (size_t i = 0; i < sizeof(ops); i++) {
		hdr(ops[i], sizeof(*w));
		w->size = 12345;	/* a count here, not bytes that follow */
		exact_length("header-only op");
	}
}

Test(frame, payload_ops)
{
	const uint8_t ops[] = { MBX_OP_EAGER, MBX_OP_DATA, MBX_OP_RDATA };

	for (size_t i = 0; i < sizeof(ops); i++) {
		hdr(ops[i], (uint32_t)(sizeof(*w) + 100));
		w->size = 100;
		exact_length("payload op");
		hdr(ops[i], sizeof(*w));
		w->size = 0;
		exact_length("empty payload");
		/* sizeof(*w) + size wraps to 8: never a frame's length, as a
		 * frame is at least a header long. */
		w->f.len = 8;
		w->size = UINT64_MAX - sizeof(*w) + 9;
		refused("payload size wrapping to a short length");
		w->f.len = sizeof(*w) + 8;
		refused("payload size wrapping");
	}
}

static void rts(unsigned n, uint64_t each)
{
	struct mbx_wire_iov *wi = (struct mbx_wire_iov *)(w + 1);

	hdr(MBX_OP_RTS, (uint32_t)(sizeof(*w) + n * sizeof(*wi)));
	w->iov_cnt = (uint8_t)n;
	w->size = n * each;
	for (unsigned i = 0; i < n; i++) {
		wi[i].addr = 0x1000 * (i + 1);
		wi[i].len = each;
	}
}

Test(frame, rts)
{
	struct mbx_wire_iov *wi = (struct mbx_wire_iov *)(w + 1);

	rts(1, 1 << 20);
	exact_length("one iov");
	rts(MBX_IOV_LIMIT, 4096);
	exact_length("MBX_IOV_LIMIT iovs");
	rts(MBX_IOV_LIMIT + 1, 4096);
	refused("more iovs than MBX_IOV_LIMIT");
	rts(0, 0);
	refused("no iov");
	rts(2, 4096);
	w->size++;
	refused("size not the sum of the iovs");
	rts(1, MBX_MAX_MSG_SIZE);
	cr_assert(ok(), "the largest message");
	rts(1, MBX_MAX_MSG_SIZE + 1);
	refused("message past MBX_MAX_MSG_SIZE");
	/* Two lengths whose sum wraps to the declared size: the first is
	 * already past the limit. */
	rts(2, 0);
	wi[0].len = UINT64_MAX;
	wi[1].len = 2;
	w->size = 1;
	refused("iov lengths wrapping");
}

/* An RTS carrying its message's first bytes (MBX_WF_HEAD): they are the
 * rest of the frame, never none and never the whole message. */
Test(frame, rts_head)
{
	const uint32_t base = sizeof(*w) + 2 * sizeof(struct mbx_wire_iov);

	rts(2, 4096);
	w->flags = MBX_WF_HEAD | MBX_WF_RMA;
	w->f.len = base + 100;
	cr_assert(ok(), "a 100-byte head");
	cr_assert_eq(mbx_rts_head(w), 100);
	w->f.len = base + 8191;
	cr_assert(ok(), "a head one byte short of the message");
	w->f.len = base + 8192;
	refused("a head as long as the message");
	w->f.len = base + 8193;
	refused("a head longer than the message");
	w->f.len = base;
	refused("the head flag with no head");
	w->flags = MBX_WF_RMA;
	w->f.len = base + 1;
	refused("bytes after the iovs without the head flag");
	w->f.len = base - 1;
	w->flags = MBX_WF_HEAD;
	refused("a frame shorter than its iovs, head flag or not");
	w->flags = 0;
	refused("a frame shorter than its iovs");
}

Test(frame, write)
{
	const uint32_t h = sizeof(*w) + sizeof(struct mbx_wire_rma);

	hdr(MBX_OP_WRITE, h + 64);
	w->size = 64;
	w->tag = 1 << 20;	/* the whole write's length */
	exact_length("a write piece");
	w->tag = MBX_MAX_MSG_SIZE + 1;
	refused("whole write past MBX_MAX_MSG_SIZE");
	w->tag = 64;
	/* The frame is 4 bytes into the RMA header, and size + header
	 * lengths wraps to exactly its length. */
	w->f.len = sizeof(*w) + 4;
	w->size = UINT64_MAX - h + sizeof(*w) + 5;
	refused("write size wrapping to a length inside the RMA header");
	w->f.len = h;
	w->size = 0;
	cr_assert(ok(), "an empty write");
}

Test(frame, read)
{
	hdr(MBX_OP_READ, sizeof(*w) + sizeof(struct mbx_wire_rma));
	w->size = 1 << 20;
	w->data = 1 << 21;
	exact_length("a read segment");
	w->size = MBX_MAX_MSG_SIZE + 1;
	refused("read past MBX_MAX_MSG_SIZE");
	w->size = 1;
	w->data = MBX_MAX_MSG_SIZE + 1;
	refused("read offset past MBX_MAX_MSG_SIZE");
}

Test(frame, rails)
{
	for (uint64_t n = 1; n < MBX_RAILS_MAX; n++) {
		hdr(MBX_OP_RAILS, (uint32_t)(sizeof(*w) + n * sizeof(struct mbx_rail_name)));
		w->size = n;
		exact_length("rail addresses");
	}
	hdr(MBX_OP_RAILS, sizeof(*w));
	w->size = 0;
	refused("no rail");
	hdr(MBX_OP_RAILS, (uint32_t)(sizeof(*w) + MBX_RAILS_MAX * sizeof(struct mbx_rail_name)));
	w->size = MBX_RAILS_MAX;
	refused("as many extra rails as rails in all");
}

static void atomic(int kind, int op, int dt, uint64_t bytes, unsigned bufs)
{
	hdr(MBX_OP_ATOMIC,
	    (uint32_t)(sizeof(*w) + sizeof(struct mbx_wire_atomic) + bytes * bufs));
	w->tag = MBX_ATOMIC_TAG(kind, op, dt);
	w->size = bytes;
}

Test(frame, atomic)
{
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, 64, 1);
	exact_length("sum of 8 uint64");
	atomic(MBU_ATOMIC_FETCH, FI_ATOMIC_READ, FI_UINT32, 16, 0);
	exact_length("atomic read: no operand follows");
	atomic(MBU_ATOMIC_COMPARE, FI_CSWAP, FI_INT64, 8, 2);
	exact_length("compare and swap: operand and compare value");
	atomic(MBU_ATOMIC_COMPARE, FI_CSWAP, FI_INT64, 8, 1);
	refused("compare and swap without its compare value");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, 12, 1);
	refused("size not whole elements");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, 0, 1);
	refused("no element");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, MBX_ATOMIC_MAX_BYTES, 1);
	cr_assert(ok(), "the largest atomic piece");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, MBX_ATOMIC_MAX_BYTES + 8, 1);
	refused("past MBX_ATOMIC_MAX_BYTES");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, 8, 1);
	w->data = MBX_ATOMIC_MAX_BYTES + 1;
	refused("offset past MBX_ATOMIC_MAX_BYTES");
	atomic(MBU_ATOMIC_PLAIN, FI_BOR, FI_DOUBLE, 8, 1);
	refused("bitwise or of doubles");
	atomic(MBU_ATOMIC_PLAIN, FI_CSWAP, FI_INT64, 8, 1);
	refused("compare op as a plain atomic");
	atomic(MBU_ATOMIC_COMPARE + 1, FI_SUM, FI_INT64, 8, 1);
	refused("unknown kind");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, 200, 8, 1);
	refused("unknown datatype");
	atomic(MBU_ATOMIC_PLAIN, FI_SUM, FI_UINT64, 8, 1);
	w->tag |= 1ull << 24;
	refused("bits above the atomic tag");
}

Test(frame, atomic_response)
{
	hdr(MBX_OP_ARESP, sizeof(*w));
	w->size = 64;
	cr_assert(ok(), "applied, nothing returned");
	w->f.len = sizeof(*w) + 64;
	cr_assert(ok(), "applied, old values returned");
	w->f.len = sizeof(*w) + 63;
	refused("part of the old values");
	w->f.len = sizeof(*w) + 65;
	refused("more than the old values");
	w->size = MBX_ATOMIC_MAX_BYTES + 1;
	w->f.len = sizeof(*w);
	refused("response past MBX_ATOMIC_MAX_BYTES");
}
