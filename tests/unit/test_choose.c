/* The large-message chooser (util/mbu_choose.h): size classes double from
 * min; a class's first messages alternate, the default first; then the
 * cheaper way wins, a way never measured is tried, the other is probed
 * every MBU_CHOOSE_PROBE-th message; a change of which is cheaper turns the
 * choice within a few messages, one slow message does not, and a faster
 * measurement counts at once. */
#include <criterion/criterion.h>

#include "mbu_choose.h"

Test(choose, classes_double_from_min)
{
	struct mbu_choose c;

	mbu_choose_init(&c, 262144);
	cr_assert_eq(mbu_choose_class(&c, 262144), 0);
	cr_assert_eq(mbu_choose_class(&c, 524287), 0);
	cr_assert_eq(mbu_choose_class(&c, 524288), 1);
	cr_assert_eq(mbu_choose_class(&c, 1 << 20), 2);
	cr_assert_eq(mbu_choose_class(&c, 4 << 20), 4);
	cr_assert_eq(mbu_choose_class(&c, 1ull << 40), MBU_CHOOSE_CLASSES - 1);
	mbu_choose_init(&c, 0); /* no division by zero */
	cr_assert_eq(mbu_choose_class(&c, 1), 0);
}

/* Picks n messages of size and returns how many took way 1; each is
 * recorded at the cost per byte of its way. */
static int run(struct mbu_choose *c, uint64_t size, int n, double cost0, double cost1, int dflt)
{
	int ones = 0;

	for (int i = 0; i < n; i++) {
		int w = mbu_choose_pick(c, size, dflt);

		ones += w;
		mbu_choose_record(c, size, w, (uint64_t)((w ? cost1 : cost0) * (double)size));
	}
	return ones;
}

Test(choose, default_until_both_measured_then_probe)
{
	struct mbu_choose c;
	int ones;

	mbu_choose_init(&c, 262144);
	/* The first messages alternate, the default (1) first; then a way
	 * still not measured (here both: say, every attempt failed) is
	 * tried. */
	for (int i = 1; i <= MBU_CHOOSE_WARM; i++)
		cr_assert_eq(mbu_choose_pick(&c, 1 << 20, 1), i & 1);
	cr_assert_eq(mbu_choose_pick(&c, 1 << 20, 1), 0);
	mbu_choose_record(&c, 1 << 20, 0, 1 << 20);
	cr_assert_eq(mbu_choose_pick(&c, 1 << 20, 1), 1);
	/* Another class is untouched by that. */
	cr_assert_eq(c.count[mbu_choose_class(&c, 300000)], 0);
	/* Way 0 at a third of way 1's cost: once both are known, way 0 wins
	 * every message but the probes. */
	mbu_choose_init(&c, 262144);
	ones = run(&c, 1 << 20, 10 * MBU_CHOOSE_PROBE, 1.0, 3.0, 1);
	cr_assert_leq(ones, MBU_CHOOSE_WARM / 2 + 10, "way 1 taken %d times", ones);
	cr_assert_geq(ones, 10, "way 1 never probed again (%d)", ones);
}

Test(choose, follows_a_change_of_state)
{
	struct mbu_choose c;
	int ones;

	mbu_choose_init(&c, 262144);
	run(&c, 1 << 20, 4 * MBU_CHOOSE_PROBE, 1.0, 3.0, 1);
	/* Way 0 becomes the slower one: within a few probes of it, way 1. */
	run(&c, 1 << 20, 2 * MBU_CHOOSE_PROBE, 5.0, 3.0, 1);
	ones = run(&c, 1 << 20, 4 * MBU_CHOOSE_PROBE, 5.0, 3.0, 1);
	cr_assert_geq(ones, 4 * MBU_CHOOSE_PROBE - 4, "way 1 taken only %d times", ones);
	/* A single slow message of the winning way does not turn it. */
	mbu_choose_record(&c, 1 << 20, 1, (uint64_t)(4.0 * (1 << 20)));
	cr_assert_eq(mbu_choose_pick(&c, 1 << 20, 0), 1);
	/* One fast probe of the other does. */
	mbu_choose_record(&c, 1 << 20, 0, (uint64_t)(2.0 * (1 << 20)));
	cr_assert_eq(mbu_choose_pick(&c, 1 << 20, 0), 0);
}
