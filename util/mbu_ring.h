/* Single-producer single-consumer frame ring in shared memory: the channel
 * that carries frames from one process to another on the same node.
 *
 * Why stamps instead of a shared head index: the consumer polls the first
 * word of the next frame, which the producer writes last (release) as the
 * frame's absolute byte position + 1. A small message therefore reaches the
 * other core as one cache line holding both the stamp and the payload, and
 * the consumer never reads a line the producer keeps writing. Positions are
 * absolute 64-bit byte counts, so a stamp left over from the previous lap
 * never equals the one expected now. The consumer publishes its position in
 * `tail` (its own cache line); the producer reads it only when its cached
 * copy says the ring is full. Frames are 64-byte aligned and never wrap: a
 * frame that would cross the end is preceded by a pad frame.
 *
 * Frames come from another process: the consumer checks every length before
 * using it and reports a corrupt ring instead of following a bad length. */
#ifndef MBU_RING_H
#define MBU_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>

#define MBU_RING_ALIGN 64u
#define MBU_FRAME_PAD 0u

struct mbu_frame {
	_Atomic uint64_t stamp;
	uint32_t len;		/* bytes including this header, unpadded */
	uint32_t kind;		/* MBU_FRAME_PAD or a user kind */
};

/* Shared part: lives in the segment. */
struct mbu_ring_shared {
	_Alignas(64) _Atomic uint64_t tail;
	char pad_[56];
};

/* Producer-private view. */
struct mbu_ring_prod {
	struct mbu_ring_shared *sh;
	uint8_t *data;
	uint64_t size;		/* power of two */
	uint64_t head;
	uint64_t tail_cache;
};

/* Consumer-private view. */
struct mbu_ring_cons {
	struct mbu_ring_shared *sh;
	uint8_t *data;
	uint64_t size;
	uint64_t pos;
};

static inline uint64_t mbu_ring_padded(uint64_t len)
{
	return (len + MBU_RING_ALIGN - 1) & ~(uint64_t)(MBU_RING_ALIGN - 1);
}

/* Largest frame (header included) a ring of this size can ever take. */
static inline uint64_t mbu_ring_max_frame(uint64_t size)
{
	return size / 2;
}

static inline void mbu_ring_prod_init(struct mbu_ring_prod *p, struct mbu_ring_shared *sh,
				      uint8_t *data, uint64_t size)
{
	p->sh = sh;
	p->data = data;
	p->size = size;
	p->head = atomic_load_explicit(&sh->tail, memory_order_acquire);
	p->tail_cache = p->head;
}

static inline void mbu_ring_cons_init(struct mbu_ring_cons *c, struct mbu_ring_shared *sh,
				      uint8_t *data, uint64_t size)
{
	c->sh = sh;
	c->data = data;
	c->size = size;
	c->pos = atomic_load_explicit(&sh->tail, memory_order_relaxed);
}

/* Reserve room for a frame of `len` bytes (header included). Returns the frame
 * to fill, or NULL when the ring is full (back-pressure, try later). */
static inline struct mbu_frame *mbu_ring_reserve(struct mbu_ring_prod *p, uint32_t len)
{
	uint64_t need = mbu_ring_padded(len);
	uint64_t off = p->head & (p->size - 1);
	uint64_t pad = off + need > p->size ? p->size - off : 0;
	struct mbu_frame *f;

	if (p->head + pad + need - p->tail_cache > p->size) {
		p->tail_cache = atomic_load_explicit(&p->sh->tail, memory_order_acquire);
		if (p->head + pad + need - p->tail_cache > p->size)
			return NULL;
	}
	if (pad) {
		f = (struct mbu_frame *)(p->data + off);
		f->len = (uint32_t)pad;
		f->kind = MBU_FRAME_PAD;
		atomic_store_explicit(&f->stamp, p->head + 1, memory_order_release);
		p->head += pad;
		off = 0;
	}
	f = (struct mbu_frame *)(p->data + off);
	f->len = len;
	return f;
}

/* Publish a reserved frame: everything written into it becomes visible. */
static inline void mbu_ring_commit(struct mbu_ring_prod *p, struct mbu_frame *f)
{
	uint64_t pos = p->head;

	p->head += mbu_ring_padded(f->len);
	atomic_store_explicit(&f->stamp, pos + 1, memory_order_release);
}

enum mbu_ring_status { MBU_RING_EMPTY = 0, MBU_RING_FRAME = 1, MBU_RING_CORRUPT = -1 };

/* Whether the next frame (or a pad before it) has been published: the
 * one load a poller that usually finds nothing needs, without a call. */
static inline bool mbu_ring_ready(const struct mbu_ring_cons *c)
{
	const struct mbu_frame *f = (const struct mbu_frame *)(c->data + (c->pos & (c->size - 1)));

	return atomic_load_explicit(&f->stamp, memory_order_acquire) == c->pos + 1;
}

/* Look at the next frame without consuming it; pad frames are skipped. */
static inline int mbu_ring_peek(struct mbu_ring_cons *c, struct mbu_frame **out)
{
	for (;;) {
		uint64_t off = c->pos & (c->size - 1);
		struct mbu_frame *f = (struct mbu_frame *)(c->data + off);
		uint64_t plen;

		if (atomic_load_explicit(&f->stamp, memory_order_acquire) != c->pos + 1)
			return MBU_RING_EMPTY;
		plen = mbu_ring_padded(f->len);
		if (f->len < sizeof(*f) || plen > c->size - off)
			return MBU_RING_CORRUPT;
		if (f->kind != MBU_FRAME_PAD) {
			*out = f;
			return MBU_RING_FRAME;
		}
		c->pos += plen;
	}
}

/* Consume the frame returned by the last peek and give its room back. */
static inline void mbu_ring_consume(struct mbu_ring_cons *c, struct mbu_frame *f)
{
	c->pos += mbu_ring_padded(f->len);
	atomic_store_explicit(&c->sh->tail, c->pos, memory_order_release);
}

#endif
