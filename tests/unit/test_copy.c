/* The copies of util/mbu_copy.h: every byte of the destination range is the
 * source's and nothing outside it is written, for every alignment of
 * either side within a line and for sizes around each of the loops'
 * boundaries (the 64-byte steps, the memcpy threshold, the non-temporal
 * floor). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbu_copy.h"

enum { MAXN = 3 * 4096 + 300, GUARD = 128 };

static unsigned char src[MAXN + 2 * GUARD], dst[MAXN + 2 * GUARD];

static void check(void (*copy)(void *, const void *, size_t), const char *what)
{
	static const size_t sizes[] = {0, 1, 15, 16, 63, 64, 65, 127, 128, 255, 256, 257,
				       4095, 4096, 4097, 4096 + 63, 8191, 8192, 8193,
				       3 * 4096 + 1, MAXN};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int so = 0; so < 64; so += 7) {
			for (int d0 = 0; d0 < 64; d0 += 5) {
				size_t n = sizes[s];

				for (size_t i = 0; i < sizeof(src); i++)
					src[i] = (unsigned char)(i * 131 + s + (size_t)so);
				memset(dst, 0xee, sizeof(dst));
				copy(dst + GUARD + d0, src + GUARD + so, n);
				cr_assert(!memcmp(dst + GUARD + d0, src + GUARD + so, n),
					  "%s: %zu bytes, source +%d, destination +%d", what, n, so,
					  d0);
				for (size_t i = 0; i < GUARD + (size_t)d0; i++)
					cr_assert_eq(dst[i], 0xee, "%s wrote before", what);
				for (size_t i = GUARD + (size_t)d0 + n; i < sizeof(dst); i++)
					cr_assert_eq(dst[i], 0xee, "%s wrote past the end", what);
			}
		}
	}
}

Test(copy, ordinary)
{
	check(mbu_copy, "mbu_copy");
}

Test(copy, nontemporal)
{
	check(mbu_copy_nt, "mbu_copy_nt");
}
