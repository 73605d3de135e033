/* Copies for the large-message paths on one node. Non-temporal stores skip
 * the read of each destination line before it is overwritten: worth it for
 * a large, cold destination (a receiver's megabytes) and for lines another
 * core's cache holds (a sender's copy into shared memory, mbu_ntpick.h),
 * with a size threshold at the call site. mbu_copy is for a receiver's
 * copy out of shared memory. */
#ifndef MBU_COPY_H
#define MBU_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>

/* Copies from this size up go through mbu_copy's own loop. */
#define MBU_COPY_LOOP_MIN 4096

/* n bytes in 16-byte loads and line-aligned 16-byte stores, ordinary or
 * non-temporal (then fenced: streaming stores are weakly ordered, and the
 * release store that tells the peer or the CQ reader that the data is
 * there must come after them). */
static inline void mbu_copy_lines(void *dst, const void *src, size_t n, bool nt)
{
	char *d = dst;
	const char *s = src;
	size_t head = (64 - ((uintptr_t)d & 63)) & 63;

	if (head > n)
		head = n;
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= 64; n -= 64, d += 64, s += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		if (nt) {
			_mm_stream_si128((__m128i *)d, a);
			_mm_stream_si128((__m128i *)(d + 16), b);
			_mm_stream_si128((__m128i *)(d + 32), c);
			_mm_stream_si128((__m128i *)(d + 48), e);
		} else {
			_mm_store_si128((__m128i *)d, a);
			_mm_store_si128((__m128i *)(d + 16), b);
			_mm_store_si128((__m128i *)(d + 32), c);
			_mm_store_si128((__m128i *)(d + 48), e);
		}
	}
	memcpy(d, s, n);
	if (nt)
		_mm_sfence();
}

/* A receiver's copy out of memory another process has just written.
 * glibc 2.36 copies from 8 KiB up with `rep movsb` on a CPU that says it
 * has fast string moves. On the reference VM's AMD EPYC, a receiver that
 * read its peer's frames and chunks that way left the lines so that the
 * sender's next ordinary stores into them ran at 7-11 GB/s, and a stream
 * of 1 MiB messages at 11.5; read with mbu_copy_lines, 28-30 (mbench bw, 5
 * rounds each, close placement). Below MBU_COPY_LOOP_MIN memcpy's short
 * paths are as fast and stay inline. */
static inline void mbu_copy(void *dst, const void *src, size_t n)
{
	if (n < MBU_COPY_LOOP_MIN)
		memcpy(dst, src, n);
	else
		mbu_copy_lines(dst, src, n, false);
}

static inline void mbu_copy_nt(void *dst, const void *src, size_t n)
{
	if (n < 256)
		memcpy(dst, src, n);
	else
		mbu_copy_lines(dst, src, n, true);
}
#else
static inline void mbu_copy_nt(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

static inline void mbu_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}
#endif

#endif
