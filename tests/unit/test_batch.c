/* The net wire's framing of several frames in one message
 * (util/mbu_batch.h): a chain built the way the sender packs it is read
 * back whole, at every size and count up to the limit; and every way a
 * peer could send it wrong is refused before a frame is trusted: a length
 * shorter than a header, one running past the end, bytes left over after
 * the last frame, a next frame with no room for its header, more frames
 * than the channel allows. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "mbu_batch.h"

static _Alignas(8) unsigned char buf[1 << 16];

/* Packs frames of the given lengths as the sender does; returns the
 * message length. */
static uint32_t pack(const uint32_t *lens, uint32_t n)
{
	uint32_t off = 0, end = 0;

	memset(buf, 0xa5, sizeof(buf));
	for (uint32_t i = 0; i < n; i++) {
		struct mbu_frame *f = (struct mbu_frame *)(buf + off);

		f->len = lens[i];
		f->kind = 1;
		end = off + lens[i];
		off = MBU_BATCH_STEP(end);
	}
	return end;
}

Test(batch, one_frame)
{
	uint32_t l = sizeof(struct mbu_frame), len = pack(&l, 1);

	cr_assert_eq(mbu_batch_count(buf, len, 1), 1);
	l = 100;
	len = pack(&l, 1);
	cr_assert_eq(mbu_batch_count(buf, len, 1), 1);
	cr_assert_eq(mbu_batch_count(buf, len, 64), 1);
}

Test(batch, chains_read_back_whole)
{
	uint32_t lens[64];

	srand(7);
	for (int round = 0; round < 2000; round++) {
		uint32_t n = 1 + (uint32_t)rand() % 64, len;

		for (uint32_t i = 0; i < n; i++)
			lens[i] = (uint32_t)sizeof(struct mbu_frame) + (uint32_t)rand() % 900;
		len = pack(lens, n);
		cr_assert_eq(mbu_batch_count(buf, len, 64), n, "round %d", round);
		/* A channel that takes fewer frames refuses the chain. */
		if (n > 1)
			cr_assert_eq(mbu_batch_count(buf, len, n - 1), 0);
	}
}

Test(batch, bad_lengths_refused)
{
	uint32_t lens[3] = {40, 53, 24}, len = pack(lens, 3);
	struct mbu_frame *second = (struct mbu_frame *)(buf + 40);
	struct mbu_frame *third = (struct mbu_frame *)(buf + 40 + 56);

	cr_assert_eq(mbu_batch_count(buf, len, 8), 3);
	/* Shorter than a header. */
	second->len = sizeof(struct mbu_frame) - 1;
	cr_assert_eq(mbu_batch_count(buf, len, 8), 0);
	second->len = 0;
	cr_assert_eq(mbu_batch_count(buf, len, 8), 0);
	/* Past the end, by one byte and by a wrapping amount. */
	second->len = 53;
	third->len = 25;
	cr_assert_eq(mbu_batch_count(buf, len, 8), 0);
	third->len = UINT32_MAX;
	cr_assert_eq(mbu_batch_count(buf, len, 8), 0);
	third->len = 24;
	/* Bytes left over after the last frame. */
	cr_assert_eq(mbu_batch_count(buf, len + 1, 8), 0);
	cr_assert_eq(mbu_batch_count(buf, len + 8, 8), 0);
	/* Cut short: the last frame no longer fits, or its header does not. */
	cr_assert_eq(mbu_batch_count(buf, len - 1, 8), 0);
	cr_assert_eq(mbu_batch_count(buf, 40 + 56 + 4, 8), 0);
	/* Too short for even one header. */
	cr_assert_eq(mbu_batch_count(buf, 0, 8), 0);
	cr_assert_eq(mbu_batch_count(buf, sizeof(struct mbu_frame) - 1, 8), 0);
}

Test(batch, step_keeps_frames_aligned)
{
	for (uint32_t off = 0; off < 1000; off++) {
		uint32_t s = MBU_BATCH_STEP(off);

		cr_assert(s % 8 == 0 && s >= off && s < off + 8);
	}
}
