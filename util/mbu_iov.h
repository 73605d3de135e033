/* Slicing a scatter list: the part [off, off + len) of a receive's buffers
 * as at most `cap` iovecs, for the net wire's pieces of a large message
 * pulled by fi_read (each piece lands where the whole message would). Pure,
 * so that it is tested alone. */
#ifndef MBU_IOV_H
#define MBU_IOV_H

#include <stddef.h>
#include <sys/uio.h>

/* Returns the number of iovecs written, or 0 when the range is empty, runs
 * past the buffers, or needs more than `cap` of them. */
static inline size_t mbu_iov_slice(const struct iovec *iov, size_t cnt, size_t off, size_t len,
				   struct iovec *out, size_t cap)
{
	size_t i, k = 0;

	for (i = 0; i < cnt && len; i++) {
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		if (k == cap)
			return 0;
		n = iov[i].iov_len - off < len ? iov[i].iov_len - off : len;
		out[k].iov_base = (char *)iov[i].iov_base + off;
		out[k++].iov_len = n;
		len -= n;
		off = 0;
	}
	return len ? 0 : k;
}

#endif
