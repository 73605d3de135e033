/* The striping arithmetic (util/mbu_stripe.h): shares follow the measured
 * bandwidths and always add up to the transfer, every share but the last
 * reading rail's is aligned, a rail far slower than the rest is left out
 * except on every MBU_STRIPE_PROBE-th transfer; a rail's meter reads its
 * rate from completions, leaving idle time out and averaging bursts; and,
 * with a simulated pair of rails of unequal speed, shares and meters
 * settle where both rails finish together from equal starting guesses. */
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

/* A meter fed a rail's completions reads its rate while busy. */
Test(stripe, meter_reads_a_steady_rail)
{
	struct mbu_meter m = {0};
	double bw = 1.0;
	uint64_t t = 1000;
	int samples = 0;

	/* 64 reads of 512 KiB posted at once, done one every 4 ms */
	for (int i = 0; i < 64; i++)
		mbu_meter_post(&m, t);
	for (int i = 0; i < 64; i++) {
		t += 4000000;
		samples += mbu_meter_done(&m, 512 << 10, t, &bw);
	}
	cr_assert_geq(samples, 20);
	cr_assert_float_eq(bw, (512 << 10) / 4e6, 0.005, "bw %g", bw);
	cr_assert_eq(m.inflight, 0);
}

/* Time with nothing in flight does not count against the rail. */
Test(stripe, meter_skips_idle_time)
{
	struct mbu_meter m = {0};
	double bw = 0.5;
	uint64_t t = 0;

	for (int round = 0; round < 40; round++) {
		/* 1 MB in 6 ms of work, then 100 ms of nothing */
		mbu_meter_post(&m, t);
		mbu_meter_post(&m, t);
		t += 3000000;
		mbu_meter_done(&m, 500000, t, &bw);
		t += 3000000;
		mbu_meter_done(&m, 500000, t, &bw);
		t += 100000000;
	}
	cr_assert_float_eq(bw, 1e6 / 6e6, 0.005, "bw %g", bw);
}

/* Completions that come in bursts (three within 2.4 ms after a gap of
 * 35 ms, as over tcp;ofi_rxm) still average out to the rail's rate. */
Test(stripe, meter_averages_bursts)
{
	struct mbu_meter m = {0};
	double bw = 1.0, rate = 0.125; /* bytes per ns: 1 Gb/s */
	size_t len = 364352;
	uint64_t t = 0, due = 0;

	for (int i = 0; i < 600; i++)
		mbu_meter_post(&m, 0);
	for (int i = 0; i < 600; i += 3) {
		/* three reads' worth of time on the wire, seen at once */
		due += (uint64_t)(3.0 * (double)len / rate);
		t = due;
		for (int k = 0; k < 3; k++) {
			mbu_meter_done(&m, len, t, &bw);
			t += 800000;
		}
		/* the clock went on past due; the next burst is seen late too */
	}
	cr_assert_float_eq(bw, rate, rate * 0.15, "bw %g", bw);
}

/* Two rails at 3:1, guesses equal at first: each transfer is split by
 * the shares, each rail works off its queue at its own speed, and the
 * meters see the completions. The shares settle at 3:1, where both
 * finish together. */
Test(stripe, converges_to_the_rates)
{
	const double rate[2] = {0.375, 0.125}; /* bytes per ns */
	double bw[2] = {1.0, 1.0};
	struct mbu_meter m[2] = {{0}};
	uint64_t free_at[2] = {0, 0}, t = 0;
	size_t part[2], len = 1 << 20;
	unsigned long skipped = 0;

	for (int n = 0; n < 400; n++) {
		mbu_stripe_shares(bw, 2, len, &skipped, part);
		for (int i = 0; i < 2; i++) {
			if (!part[i])
				continue;
			mbu_meter_post(&m[i], t);
			if (free_at[i] < t)
				free_at[i] = t;
			free_at[i] += (uint64_t)((double)part[i] / rate[i]);
			mbu_meter_done(&m[i], part[i], free_at[i], &bw[i]);
		}
		/* the next transfer starts when this one is done */
		t = free_at[0] > free_at[1] ? free_at[0] : free_at[1];
	}
	cr_assert_float_eq((double)part[0] / (double)len, 0.75, 0.02, "share %zu of %zu", part[0],
			   len);
	cr_assert_float_eq(bw[0] / bw[1], 3.0, 0.1, "bw %g %g", bw[0], bw[1]);
}

Test(stripe, sample_without_time_changes_nothing)
{
	cr_assert_float_eq(mbu_stripe_sample(2.5, 1000, 0), 2.5, 1e-12);
	cr_assert_float_eq(mbu_stripe_sample(2.0, 1000, 250), 2.5, 1e-12);
}
