/* Copies for the large-message paths. A receiver that copies megabytes into
 * a buffer it has not touched lately makes the CPU read every destination
 * line before overwriting it; non-temporal stores skip that read and leave
 * the cache to the data that will be used again (the bulk area). Only worth
 * it for large, cold destinations, hence a size threshold at the call site. */
#ifndef MBU_COPY_H
#define MBU_COPY_H

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>

/* Copies from this size up go through mbu_copy's own loop. */
#define MBU_COPY_LOOP_MIN 4096

/* A receiver's copy out of memory another process has just written:
 * 16-byte loads, stores aligned to the destination's lines. glibc 2.36
 * copies from 8 KiB up with `rep movsb` on a CPU that says it has fast
 * string moves. On the reference VM's AMD EPYC, a receiver that read its
 * peer's frames and chunks that way left the lines so that the sender's
 * next ordinary stores into them ran at 7-11 GB/s, and a stream of 1 MiB
 * messages at 11.5; read with this loop, 28-30 (mbench bw, 5 rounds
 * each, close placement). Below MBU_COPY_LOOP_MIN memcpy's short paths
 * are as fast and stay inline. */
static inline void mbu_copy_loop(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t head = (64 - ((uintptr_t)d & 63)) & 63;

	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= 64; n -= 64, d += 64, s += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_store_si128((__m128i *)d, a);
		_mm_store_si128((__m128i *)(d + 16), b);
		_mm_store_si128((__m128i *)(d + 32), c);
		_mm_store_si128((__m128i *)(d + 48), e);
	}
	memcpy(d, s, n);
}

static inline void mbu_copy(void *dst, const void *src, size_t n)
{
	if (n < MBU_COPY_LOOP_MIN)
		memcpy(dst, src, n);
	else
		mbu_copy_loop(dst, src, n);
}

static inline void mbu_copy_nt(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t head = (16 - ((uintptr_t)d & 15)) & 15;

	if (n < 256) {
		memcpy(d, s, n);
		return;
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= 64; n -= 64, d += 64, s += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	memcpy(d, s, n);
	/* Streaming stores are weakly ordered: order them before the release
	 * store that tells the peer (or the CQ reader) the data is there. */
	_mm_sfence();
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
