/* Choosing between two ways of moving a large message by what each has
 * lately achieved on this machine, kept pure so that it can be tested
 * alone. Which way is faster can change while a job runs: on the reference
 * VM a 1 MiB message took 51-66 us through matchbox's two-copy pipeline
 * and 136-147 us by CMA in one state of the machine, and 242-279 against
 * 136-147 in another (when a round trip between its two cores took 0.5 us
 * instead of 0.2), the states lasting seconds to minutes. So each way has
 * an estimate of its cost per byte per size class (a power of two from min
 * up), the cheaper way is taken, and every MBU_CHOOSE_PROBE-th message of a
 * class takes the other, so that a way that lost once is measured again.
 * The first MBU_CHOOSE_WARM messages of a class alternate, the caller's
 * default first: a benchmark sends only about a hundred of each size. An
 * estimate falls at once to a faster measurement and rises an eighth of
 * the way to a slower one: a message delayed by a page fault or by the
 * scheduler moves it little, a change of state within a few messages. */
#ifndef MBU_CHOOSE_H
#define MBU_CHOOSE_H

#include <stdint.h>

#define MBU_CHOOSE_CLASSES 8
#define MBU_CHOOSE_PROBE 32
#define MBU_CHOOSE_WARM 6

struct mbu_choose {
	uint64_t min;                                /* class 0 starts here */
	double ns_per_byte[MBU_CHOOSE_CLASSES][2];   /* 0: not measured yet */
	uint32_t count[MBU_CHOOSE_CLASSES];
};

static inline void mbu_choose_init(struct mbu_choose *c, uint64_t min)
{
	*c = (struct mbu_choose){.min = min ? min : 1};
}

/* The class of a message of size bytes (at least min): sizes [min, 2 min)
 * are class 0, and so on; the last class takes everything above. */
static inline int mbu_choose_class(const struct mbu_choose *c, uint64_t size)
{
	int k = 0;

	while (k < MBU_CHOOSE_CLASSES - 1 && size / c->min >= (2ull << k))
		k++;
	return k;
}

/* The way (0 or 1) to move a message of size bytes; dflt while the class
 * has not measured both. */
static inline int mbu_choose_pick(struct mbu_choose *c, uint64_t size, int dflt)
{
	int k = mbu_choose_class(c, size);
	double a = c->ns_per_byte[k][0], b = c->ns_per_byte[k][1];
	uint32_t n = ++c->count[k];

	if (n <= MBU_CHOOSE_WARM)
		return (n & 1) ? dflt : !dflt;
	if (!(a > 0) || !(b > 0)) /* not measured (a failed way): try it */
		return !(a > 0) ? 0 : 1;
	return (n % MBU_CHOOSE_PROBE == 0) ^ (b < a);
}

/* What moving size bytes the way way took, in ns. */
static inline void mbu_choose_record(struct mbu_choose *c, uint64_t size, int way, uint64_t ns)
{
	int k = mbu_choose_class(c, size);
	double x = (double)(ns ? ns : 1) / (double)(size ? size : 1);
	double *est = &c->ns_per_byte[k][way ? 1 : 0];

	*est = !(*est > 0) || x < *est ? x : *est + (x - *est) / 8;
}

#endif
