/* Futex wait/wake on words in shared memory, so a process can sleep until a
 * peer rings its doorbell instead of spinning (fi_cq_sread, fi_cntr_wait,
 * oversubscribed nodes). Shared (not private) futexes, since the word lives
 * in a segment mapped by several processes. */
#ifndef MBU_FUTEX_H
#define MBU_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline int mbu_futex_wait(_Atomic uint32_t *word, uint32_t expect, long timeout_ns)
{
	struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };

	return (int)syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expect,
			    timeout_ns >= 0 ? &ts : NULL, NULL, 0);
}

static inline void mbu_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

static inline uint64_t mbu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
