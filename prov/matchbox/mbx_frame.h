/* The check that every frame passes before the receiver reads anything
 * else in it, whether it came through a shared-memory ring or off the net
 * wire: bytes written by another process (or another host) are not trusted
 * until their kind, version, op and length agree. Header-only so that the
 * receive path keeps it inline and the unit tests (tests/unit/test_frame.c)
 * can feed it hostile frames without an endpoint. */
#ifndef MBX_FRAME_H
#define MBX_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mbu_atomic.h"
#include "mbx.h"
#include "mbx_rail.h"

/* How many values each element of an atomic carries: the operand (none
 * for FI_ATOMIC_READ) and the compare value. */
static inline size_t mbx_atomic_bufs(uint8_t kind, uint8_t op)
{
	return (op != FI_ATOMIC_READ) + (kind == MBU_ATOMIC_COMPARE);
}

/* True, with *out set, if `f` is a frame this version writes: its kind,
 * magic and version, a known op, and a length that is exactly what its
 * header says follows it (sizes within their limits). The ring or the net
 * wire has already checked that f->len bytes are there. */
static inline bool mbx_frame_ok(const struct mbu_frame *f, const struct mbx_wire **out)
{
	const struct mbx_wire *w = (const struct mbx_wire *)f;

	if (f->kind != MBX_FRAME_KIND || f->len < sizeof(struct mbx_wire_small))
		return false;
	if (w->magic != MBX_WIRE_MAGIC || w->version != MBX_WIRE_VERSION)
		return false;
	if (w->op == MBX_OP_SMALL) {
		if (f->len > sizeof(struct mbx_wire_small) + MBX_SMALL_MAX ||
		    (w->flags & MBX_WF_ACKREQ))
			return false;
		*out = w;
		return true;
	}
	if (f->len < sizeof(*w))
		return false;
	switch (w->op) {
	case MBX_OP_EAGER:
	case MBX_OP_DATA:
	case MBX_OP_RDATA:
		/* Payload after the header; a size near 2^64 wraps the sum
		 * below a header's length, which f->len never is. */
		if (f->len != sizeof(*w) + w->size)
			return false;
		break;
	case MBX_OP_CTS:
	case MBX_OP_FIN:
	case MBX_OP_ACK:
	case MBX_OP_RERR:
	case MBX_OP_WACK:
	case MBX_OP_KEY:
		if (f->len != sizeof(*w))
			return false;
		break;
	case MBX_OP_RTS: {
		const struct mbx_wire_iov *wi = (const struct mbx_wire_iov *)(w + 1);
		uint64_t sum = 0;
		int i;

		if (!w->iov_cnt || w->iov_cnt > MBX_IOV_LIMIT ||
		    f->len < sizeof(*w) + w->iov_cnt * sizeof(*wi))
			return false;
		/* A head is never empty and never the whole message (that
		 * would have gone eager); without one, nothing follows. */
		if (w->flags & MBX_WF_HEAD ? !mbx_rts_head(w) || mbx_rts_head(w) >= w->size :
					     mbx_rts_head(w) != 0)
			return false;
		for (i = 0; i < w->iov_cnt; i++) {
			if (wi[i].len > MBX_MAX_MSG_SIZE)
				return false;
			sum += wi[i].len;
		}
		if (sum != w->size || w->size > MBX_MAX_MSG_SIZE)
			return false;
		break;
	}
	case MBX_OP_WRITE:
		/* The size bound first: the sum below wraps for a size near
		 * 2^64 and would then match a frame shorter than its header. */
		if (w->size > MBX_MAX_MSG_SIZE ||
		    f->len != sizeof(*w) + sizeof(struct mbx_wire_rma) + w->size ||
		    w->tag > MBX_MAX_MSG_SIZE)
			return false;
		break;
	case MBX_OP_READ:
		if (f->len != sizeof(*w) + sizeof(struct mbx_wire_rma) ||
		    w->size > MBX_MAX_MSG_SIZE || w->data > MBX_MAX_MSG_SIZE)
			return false;
		break;
	case MBX_OP_RAILS:
		if (!w->size || w->size >= MBX_RAILS_MAX ||
		    f->len != sizeof(*w) + w->size * sizeof(struct mbx_rail_name))
			return false;
		break;
	case MBX_OP_ATOMIC: {
		int kind = MBX_ATOMIC_KIND(w->tag), aop = MBX_ATOMIC_OP(w->tag);
		int dt = MBX_ATOMIC_DT(w->tag);
		size_t es;

		if (kind > MBU_ATOMIC_COMPARE || !mbu_atomic_valid(kind, aop, dt) ||
		    w->tag >> 24)
			return false;
		es = mbu_atomic_size(dt);
		if (!w->size || w->size > MBX_ATOMIC_MAX_BYTES || w->size % es ||
		    w->data > MBX_ATOMIC_MAX_BYTES ||
		    f->len != sizeof(*w) + sizeof(struct mbx_wire_atomic) +
			      w->size * mbx_atomic_bufs((uint8_t)kind, (uint8_t)aop))
			return false;
		break;
	}
	case MBX_OP_ARESP:
		if (w->size > MBX_ATOMIC_MAX_BYTES ||
		    (f->len != sizeof(*w) && f->len != sizeof(*w) + w->size))
			return false;
		break;
	default:
		return false;
	}
	*out = w;
	return true;
}

#endif
