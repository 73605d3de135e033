/* util/mbu_iov.h: slicing a receive's scatter list into the pieces that
 * fi_read fills. Every piece of a message, cut at every size, must cover
 * exactly its bytes of the buffers, in order, and a range that runs past
 * the buffers or needs too many iovecs must be refused. */
#include <criterion/criterion.h>

#include "mbu_iov.h"

Test(iov, slices_cover_exactly_their_bytes)
{
	static char buf[100];
	struct iovec iov[4] = { { buf, 10 }, { buf + 10, 0 }, { buf + 10, 35 }, { buf + 45, 55 } };
	struct iovec out[4];

	for (size_t piece = 1; piece <= 100; piece++) {
		for (size_t off = 0; off < 100; off += piece) {
			size_t len = 100 - off < piece ? 100 - off : piece, k, sum = 0;
			char *next = buf + off;

			k = mbu_iov_slice(iov, 4, off, len, out, 4);
			cr_assert(k > 0 && k <= 3, "piece %zu at %zu: %zu iovecs", piece, off, k);
			for (size_t i = 0; i < k; i++) {
				cr_assert_eq((char *)out[i].iov_base, next);
				cr_assert(out[i].iov_len > 0);
				next += out[i].iov_len;
				sum += out[i].iov_len;
			}
			cr_assert_eq(sum, len);
		}
	}
}

Test(iov, refuses_what_does_not_fit)
{
	static char buf[30];
	struct iovec iov[3] = { { buf, 10 }, { buf + 10, 10 }, { buf + 20, 10 } };
	struct iovec out[3];

	cr_assert_eq(mbu_iov_slice(iov, 3, 25, 6, out, 3), 0, "past the end");
	cr_assert_eq(mbu_iov_slice(iov, 3, 30, 1, out, 3), 0, "starts at the end");
	cr_assert_eq(mbu_iov_slice(iov, 3, 5, 20, out, 2), 0, "needs 3, cap 2");
	cr_assert_eq(mbu_iov_slice(iov, 3, 5, 20, out, 3), 3);
	cr_assert_eq(mbu_iov_slice(iov, 3, 0, 0, out, 3), 0, "empty");
	cr_assert_eq(mbu_iov_slice(iov, 3, 10, 10, out, 1), 1);
	cr_assert_eq((char *)out[0].iov_base, buf + 10);
}
