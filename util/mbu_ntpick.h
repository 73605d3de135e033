/* Which stores a sender uses to copy a large payload into shared memory that
 * another process reads next: ordinary stores, or non-temporal ones that
 * skip reading each destination line first. An ordinary store into a line
 * the reader's cache still holds must take the line from that cache before
 * writing it. Where the two cores share a last-level cache that is cheap;
 * across the reference VM's more distant placement (a cache line between
 * the two vCPUs in 300-370 ns) a sender copied a 64 KiB frame into its ring
 * at 1.8 GB/s with ordinary stores, and the stream of 64 KiB messages ran
 * at that speed, against 14-16 GB/s with non-temporal stores. In the close
 * placement ordinary stores ran at 7 GB/s (64 KiB frames) or 11-30 GB/s
 * (1 MiB messages through the pipeline), where non-temporal ones gave
 * 13-14 and 16-19 GB/s end to end: the reader then takes the data from
 * memory instead of the other cache.
 *
 * So the sender times its ordinary copies (the copy is the stream's
 * bottleneck when it is slow) and keeps an estimate of their rate; below
 * `slow` (bytes per microsecond) it copies with non-temporal stores, and
 * every MBU_NTPICK_PROBE-th copy after that with ordinary stores again,
 * timed, so that a change of placement is seen. Pure bookkeeping: the
 * caller owns the clock and the copies (tests/unit/test_ntpick.c). */
#ifndef MBU_NTPICK_H
#define MBU_NTPICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MBU_NTPICK_MIN 8192	/* smaller copies are never timed nor streamed */
#define MBU_NTPICK_PROBE 64	/* non-temporal copies between two probes */
#define MBU_NTPICK_WARM 4	/* timed copies before the estimate counts */

struct mbu_ntpick {
	uint64_t rate;		/* bytes per microsecond, ordinary stores */
	uint32_t timed;		/* ordinary copies timed so far (saturates) */
	uint32_t left;		/* non-temporal copies before the next probe */
	bool nt;
};

/* Whether the copy of n bytes should use non-temporal stores. A copy that
 * returns false and is at least MBU_NTPICK_MIN long should be timed and
 * given to mbu_ntpick_note. slow == 0 never picks them. */
static inline bool mbu_ntpick_use(struct mbu_ntpick *p, size_t n)
{
	if (n < MBU_NTPICK_MIN || !p->nt)
		return false;
	if (p->left) {
		p->left--;
		return true;
	}
	return false;	/* the probe */
}

/* An ordinary copy of n bytes took ns nanoseconds. The estimate moves a
 * quarter of the way to each measurement, so one copy delayed by a page
 * fault or the scheduler moves it little; a probe moves it half the way,
 * so that a placement that became close again is back to ordinary stores
 * within two or three probes. */
static inline void mbu_ntpick_note(struct mbu_ntpick *p, size_t n, uint64_t ns, uint64_t slow)
{
	uint64_t r;

	if (n < MBU_NTPICK_MIN)
		return;
	r = (uint64_t)n * 1000 / (ns ? ns : 1);
	if (!p->timed)
		p->rate = r;
	else if (p->nt)
		p->rate = (p->rate + r) / 2;
	else
		p->rate = (3 * p->rate + r) / 4;
	if (p->timed < UINT32_MAX)
		p->timed++;
	p->nt = slow && p->timed >= MBU_NTPICK_WARM && p->rate < slow;
	p->left = p->nt ? MBU_NTPICK_PROBE : 0;
}

#endif
