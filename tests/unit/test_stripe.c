/* The striping arithmetic (util/mbu_stripe.h): shares follow the measured
 * bandwidths and always add up to the transfer, every share but the last
 * reading rail's is aligned, a rail far slower than the rest is left out
 * except on every MBU_STRIPE_PROBE-th transfer, and, fed with the times a
 * simulated pair of rails of unequal speed would take, the shares settle
 * where both rails finish together from equal starting guesses. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "mbu_stripe.h"

static size_t sum(const size_t *p, int n)
{
	size_t s = 0;

	for (int i = 0; i < n; i++)
		s += p[i];
	return s;
}

Test(stripe, equal_rails_split_evenly)
{
	double bw[2] = {1, 1};
	size_t part[2];
	unsigned long skipped = 0;

	cr_assert_eq(mbu_stripe_shares(bw, 2, 1 << 20, &skipped, part), 2);
	cr_assert_eq(part[0], 1 << 19);
	cr_assert_eq(part[1], 1 << 19);
	cr_assert_eq(skipped, 0);
}

Test(stripe, shares_follow_bandwidth)
{
	double bw[3] = {2.0, 1.0, 1.0};
	size_t part[3], len = 4u << 20;
	unsigned long skipped = 0;

	cr_assert_eq(mbu_stripe_shares(bw, 3, len, &skipped, part), 3);
	cr_assert_eq(sum(part, 3), len);
	cr_assert_leq(part[0] > len / 2 ? part[0] - len / 2 : len / 2 - part[0], MBU_STRIPE_ALIGN);
	cr_assert_leq(part[1] > len / 4 ? part[1] - len / 4 : len / 4 - part[1], MBU_STRIPE_ALIGN);
}

Test(stripe, parts_add_up_and_align)
{
	srand(7);
	for (int t = 0; t < 20000; t++) {
		int n = 1 + rand() % MBU_STRIPE_MAX, last = -1;
		double bw[MBU_STRIPE_MAX];
		size_t part[MBU_STRIPE_MAX], len = (size_t)rand() % (1u << 24);
		unsigned long skipped = (unsigned long)rand();
		int used;

		for (int i = 0; i < n; i++)
			bw[i] = rand() % 4 ? (double)(rand() % 1000) / 7.0 : 0.0;
		used = mbu_stripe_shares(bw, n, len, &skipped, part);
		cr_assert_eq(sum(part, n), len, "n %d len %zu", n, len);
		cr_assert_leq(used, n);
		cr_assert(len == 0 || used >= 1);
		for (int i = 0; i < n; i++)
			if (part[i])
				last = i;
		/* Only the last rail that reads holds the rounding. */
		for (int i = 0; i < last; i++)
			cr_assert_eq(part[i] % MBU_STRIPE_ALIGN, 0, "part %d of %d: %zu", i, n, part[i]);
	}
}

Test(stripe, nothing_measured_goes_to_the_first)
{
	double bw[2] = {0, 0};
	size_t part[2];
	unsigned long skipped = 0;

	mbu_stripe_shares(bw, 2, 1000, &skipped, part);
	cr_assert_eq(part[0], 1000);
	cr_assert_eq(part[1], 0);
}

Test(stripe, slow_rail_left_out_but_probed)
{
	double bw[2] = {1.0, 1.0 / 40};
	size_t part[2], len = 1 << 20;
	unsigned long skipped = 0;
	int probes = 0;

	for (int t = 0; t < 4 * MBU_STRIPE_PROBE; t++) {
		int used = mbu_stripe_shares(bw, 2, len, &skipped, part);

		cr_assert_eq(sum(part, 2), len);
		if (used == 2) {
			probes++;
			/* the minimum share, so that it is measured again */
			cr_assert_leq(part[1], len / MBU_STRIPE_MIN_DIV + MBU_STRIPE_ALIGN);
			cr_assert_geq(part[1], len / (MBU_STRIPE_MIN_DIV + 1));
		} else {
			cr_assert_eq(part[0], len);
		}
	}
	cr_assert_eq(probes, 4);
}

Test(stripe, a_small_transfer_still_adds_up)
{
	double bw[4] = {1, 1, 1, 1};
	size_t part[4];
	unsigned long skipped = 0;

	/* 100 bytes: the aligned shares are 0; the remainder reads on one rail. */
	cr_assert_eq(mbu_stripe_shares(bw, 4, 100, &skipped, part), 1);
	cr_assert_eq(sum(part, 4), 100);
}

/* Two rails at 3:1, guesses equal at first: each transfer's sample is its
 * share over the time that rail took, with every transfer a window deep
 * (a rail's time is its queue over its rate), as the host engine measures
 * them. The shares converge to 3:1, where both finish together. */
Test(stripe, converges_to_the_rates)
{
	const double rate[2] = {3.0, 1.0}; /* bytes per ns */
	double bw[2] = {1.0, 1.0};
	size_t part[2], len = 1 << 20;
	unsigned long skipped = 0;

	for (int t = 0; t < 60; t++) {
		mbu_stripe_shares(bw, 2, len, &skipped, part);
		for (int i = 0; i < 2; i++) {
			/* 64 transfers alike queued on the rail */
			uint64_t ns = (uint64_t)(64.0 * (double)part[i] / rate[i]) + 1;

			bw[i] = mbu_stripe_sample(bw[i], part[i], ns);
		}
	}
	cr_assert_float_eq((double)part[0] / (double)len, 0.75, 0.01, "share %zu of %zu", part[0],
			   len);
	cr_assert_float_eq(bw[0] / bw[1], 3.0, 0.05);
}

Test(stripe, sample_without_time_changes_nothing)
{
	cr_assert_float_eq(mbu_stripe_sample(2.5, 1000, 0), 2.5, 1e-12);
	cr_assert_float_eq(mbu_stripe_sample(2.0, 1000, 250), 2.5, 1e-12);
}
