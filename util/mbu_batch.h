/* Several frames in one network message: the net wire packs frames that
 * wait in a peer's staging ring into one connection send, each starting
 * 8-byte aligned after the one before, the last ending where the message
 * ends. The receiver walks them with the same rule, and checks the whole
 * chain before it hands any frame on: every length at least a frame
 * header, none past the end, no bytes left over, and no more frames than
 * the channel allows. Pure, so that it can be tested alone. */
#ifndef MBU_BATCH_H
#define MBU_BATCH_H

#include <stdint.h>

#include "mbu_ring.h"

/* Offset of the frame after one that starts at `off` and is `len` long. */
#define MBU_BATCH_STEP(off) (((off) + 7u) & ~(uint32_t)7u)

/* The number of frames in `len` bytes at `p` (8-byte aligned), or 0 if
 * they do not chain as above or there are more than `max`. */
static inline uint32_t mbu_batch_count(const unsigned char *p, uint32_t len, uint32_t max)
{
	uint32_t off = 0, n = 0;

	for (;;) {
		const struct mbu_frame *f = (const void *)(p + off);

		if (len - off < sizeof(*f) || f->len < sizeof(*f) || f->len > len - off)
			return 0;
		if (++n > max)
			return 0;
		if (f->len == len - off)
			return n;
		/* Bytes after this frame: the next one starts aligned. */
		if (MBU_BATCH_STEP(off + f->len) >= len)
			return 0;
		off = MBU_BATCH_STEP(off + f->len);
	}
}

#endif
