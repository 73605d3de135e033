/* The choice of stores for a sender's large copies (util/mbu_ntpick.h):
 * small copies never count; ordinary stores until a few timed copies say
 * they are slow; then non-temporal ones, with an ordinary probe every
 * MBU_NTPICK_PROBE copies; one slow copy among fast ones changes nothing,
 * a placement that turned fast again is back within a few probes, and a
 * threshold of 0 never picks non-temporal stores. */
#include <criterion/criterion.h>

#include "mbu_ntpick.h"

enum { N = 65536 };

/* ns for an ordinary copy of N bytes at gbs GB/s (bytes per ns). */
static uint64_t at(double gbs)
{
	return (uint64_t)(N / gbs);
}

/* Runs copies of N bytes whose ordinary copies run at gbs; returns how
 * many of them were non-temporal. */
static int run(struct mbu_ntpick *p, int copies, double gbs, uint64_t slow)
{
	int nt = 0;

	for (int i = 0; i < copies; i++) {
		if (mbu_ntpick_use(p, N))
			nt++;
		else
			mbu_ntpick_note(p, N, at(gbs), slow);
	}
	return nt;
}

Test(ntpick, small_copies_never_count)
{
	struct mbu_ntpick p = {0};

	for (int i = 0; i < 100; i++) {
		cr_assert(!mbu_ntpick_use(&p, MBU_NTPICK_MIN - 1));
		mbu_ntpick_note(&p, MBU_NTPICK_MIN - 1, 1000000, 12000);
	}
	cr_assert_eq(p.timed, 0);
	cr_assert(!p.nt);
}

Test(ntpick, fast_ordinary_stores_stay)
{
	struct mbu_ntpick p = {0};

	cr_assert_eq(run(&p, 1000, 28.0, 12000), 0);
	cr_assert(p.rate > 20000 && p.rate < 30000, "rate %lu MB/s", (unsigned long)p.rate);
}

Test(ntpick, slow_ordinary_stores_turn_nontemporal_with_probes)
{
	struct mbu_ntpick p = {0};
	int nt;

	/* The warm-up is timed whatever it shows. */
	cr_assert_eq(run(&p, MBU_NTPICK_WARM - 1, 2.0, 12000), 0);
	cr_assert(!p.nt);
	cr_assert_eq(run(&p, 1, 2.0, 12000), 0);
	cr_assert(p.nt);
	/* From then on one ordinary probe per MBU_NTPICK_PROBE copies. */
	nt = run(&p, 10 * (MBU_NTPICK_PROBE + 1), 2.0, 12000);
	cr_assert_eq(nt, 10 * MBU_NTPICK_PROBE);
}

Test(ntpick, one_slow_copy_changes_nothing)
{
	struct mbu_ntpick p = {0};

	run(&p, 100, 28.0, 12000);
	mbu_ntpick_note(&p, N, at(1.0), 12000);
	cr_assert(!p.nt, "rate %lu MB/s", (unsigned long)p.rate);
	cr_assert_eq(run(&p, 100, 28.0, 12000), 0);
}

Test(ntpick, placement_turning_close_again_is_followed)
{
	struct mbu_ntpick p = {0};
	int probes = 0;

	run(&p, 100, 2.0, 12000);
	cr_assert(p.nt);
	/* Ordinary copies are fast again: a few probes bring them back. */
	while (p.nt && probes < 10) {
		run(&p, MBU_NTPICK_PROBE + 1, 28.0, 12000);
		probes++;
	}
	cr_assert(!p.nt);
	cr_assert_leq(probes, 3);
	cr_assert_eq(run(&p, 100, 28.0, 12000), 0);
}

Test(ntpick, zero_threshold_never_streams)
{
	struct mbu_ntpick p = {0};

	cr_assert_eq(run(&p, 500, 0.5, 0), 0);
	cr_assert(!p.nt);
}

Test(ntpick, zero_time_is_fast_not_a_division_by_zero)
{
	struct mbu_ntpick p = {0};

	for (int i = 0; i < 10; i++)
		mbu_ntpick_note(&p, N, 0, 12000);
	cr_assert(!p.nt);
}
