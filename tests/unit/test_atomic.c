/* util/mbu_atomic.h: the table of atomic operations. How many combinations
 * of operation and datatype each kind of atomic has (fi_atomic(3): bitwise
 * operations and FI_MSWAP only on integers, no ordering on complex
 * numbers, FI_ATOMIC_READ only fetching), element sizes, and the
 * arithmetic of each operation on values worked out by hand, including
 * wrap-around, 128-bit carries, complex products, the direction of the
 * conditional swaps, old values returned, and unaligned elements with the
 * bytes around them untouched. */
#include <complex.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <rdma/fi_domain.h>

#include "mbu_atomic.h"

Test(atomic, sizes)
{
	static const size_t want[] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16,
				       sizeof(long double), sizeof(long double complex), 16, 16 };

	for (int dt = 0; dt < 16; dt++)
		cr_assert_eq(mbu_atomic_size(dt), want[dt], "datatype %d", dt);
	cr_assert_eq(mbu_atomic_size(16), 0);
	cr_assert_eq(mbu_atomic_size(-1), 0);
	cr_assert_eq(mbu_atomic_size(FI_VOID), 0);
}

Test(atomic, valid_combinations)
{
	int n[3] = { 0 };

	for (int k = 0; k < 3; k++)
		for (int op = -1; op <= FI_ATOMIC_OP_LAST; op++)
			for (int dt = -1; dt <= 16; dt++)
				n[k] += mbu_atomic_valid((enum mbu_atomic_kind)k, op, dt);
	/* plain: 10 integer types x 11 ops, 3 reals x 8, 3 complex x 6 */
	cr_assert_eq(n[MBU_ATOMIC_PLAIN], 110 + 24 + 18);
	/* fetch: the same and FI_ATOMIC_READ for all 16 */
	cr_assert_eq(n[MBU_ATOMIC_FETCH], 152 + 16);
	/* compare: integers x 7, reals x 6, complex x 2 (CSWAP, CSWAP_NE) */
	cr_assert_eq(n[MBU_ATOMIC_COMPARE], 70 + 18 + 6);
	cr_assert(mbu_atomic_valid(MBU_ATOMIC_PLAIN, FI_SUM, FI_LONG_DOUBLE_COMPLEX));
	cr_assert(!mbu_atomic_valid(MBU_ATOMIC_PLAIN, FI_MIN, FI_FLOAT_COMPLEX));
	cr_assert(!mbu_atomic_valid(MBU_ATOMIC_PLAIN, FI_BOR, FI_DOUBLE));
	cr_assert(!mbu_atomic_valid(MBU_ATOMIC_PLAIN, FI_ATOMIC_READ, FI_INT32));
	cr_assert(mbu_atomic_valid(MBU_ATOMIC_FETCH, FI_ATOMIC_READ, FI_UINT128));
	cr_assert(!mbu_atomic_valid(MBU_ATOMIC_FETCH, FI_CSWAP, FI_INT32));
	cr_assert(!mbu_atomic_valid(MBU_ATOMIC_COMPARE, FI_MSWAP, FI_FLOAT));
	cr_assert(!mbu_atomic_valid(MBU_ATOMIC_COMPARE, FI_CSWAP_LT, FI_DOUBLE_COMPLEX));
	cr_assert(mbu_atomic_valid(MBU_ATOMIC_COMPARE, FI_CSWAP_GT, FI_LONG_DOUBLE));
}

static int32_t i32(int op, int32_t dst, int32_t src, int32_t cmp)
{
	int32_t old = -7;

	mbu_atomic_apply(op, FI_INT32, &dst, &src, &cmp, &old, 1);
	return dst;
}

Test(atomic, int32_every_operation)
{
	cr_assert_eq(i32(FI_MIN, 5, 3, 0), 3);
	cr_assert_eq(i32(FI_MIN, -5, 3, 0), -5);
	cr_assert_eq(i32(FI_MAX, -5, 3, 0), 3);
	cr_assert_eq(i32(FI_SUM, -5, 3, 0), -2);
	cr_assert_eq(i32(FI_PROD, -5, 3, 0), -15);
	cr_assert_eq(i32(FI_LOR, 0, 0, 0), 0);
	cr_assert_eq(i32(FI_LOR, 0, 9, 0), 1);
	cr_assert_eq(i32(FI_LAND, 4, 9, 0), 1);
	cr_assert_eq(i32(FI_LAND, 4, 0, 0), 0);
	cr_assert_eq(i32(FI_LXOR, 4, 9, 0), 0);
	cr_assert_eq(i32(FI_LXOR, 0, 9, 0), 1);
	cr_assert_eq(i32(FI_LXOR, 0, 0, 0), 0);
	cr_assert_eq(i32(FI_BOR, 0x0f0, 0x00f, 0), 0x0ff);
	cr_assert_eq(i32(FI_BAND, 0x0f0, 0x0ff, 0), 0x0f0);
	cr_assert_eq(i32(FI_BXOR, 0x0f0, 0x0ff, 0), 0x00f);
	cr_assert_eq(i32(FI_ATOMIC_WRITE, 1, 2, 0), 2);
	/* compare operations: dst becomes src when `cmp OP dst` */
	cr_assert_eq(i32(FI_CSWAP, 10, 99, 10), 99);
	cr_assert_eq(i32(FI_CSWAP, 10, 99, 11), 10);
	cr_assert_eq(i32(FI_CSWAP_NE, 10, 99, 11), 99);
	cr_assert_eq(i32(FI_CSWAP_NE, 10, 99, 10), 10);
	cr_assert_eq(i32(FI_CSWAP_LE, 10, 99, 10), 99);
	cr_assert_eq(i32(FI_CSWAP_LE, 10, 99, 11), 10);
	cr_assert_eq(i32(FI_CSWAP_LT, 10, 99, 9), 99);
	cr_assert_eq(i32(FI_CSWAP_LT, 10, 99, 10), 10);
	cr_assert_eq(i32(FI_CSWAP_GE, 10, 99, 10), 99);
	cr_assert_eq(i32(FI_CSWAP_GE, 10, 99, 9), 10);
	cr_assert_eq(i32(FI_CSWAP_GT, 10, 99, 11), 99);
	cr_assert_eq(i32(FI_CSWAP_GT, 10, 99, 10), 10);
	/* bits of cmp come from src, the rest stay */
	cr_assert_eq(i32(FI_MSWAP, 0x1234, 0xabcd, 0x0ff0), 0x1bc4);
}

Test(atomic, fetch_returns_old_and_read_changes_nothing)
{
	uint64_t dst[2] = { 40, 50 }, src[2] = { 2, 3 }, old[2];

	mbu_atomic_apply(FI_SUM, FI_UINT64, dst, src, NULL, old, 2);
	cr_assert(dst[0] == 42 && dst[1] == 53 && old[0] == 40 && old[1] == 50);
	mbu_atomic_apply(FI_ATOMIC_READ, FI_UINT64, dst, NULL, NULL, old, 2);
	cr_assert(dst[0] == 42 && dst[1] == 53 && old[0] == 42 && old[1] == 53);
}

Test(atomic, widths_and_wrap)
{
	uint8_t u8 = 250, s8 = 10;
	int8_t i8 = -100, j8 = -100;
	__int128 a = (__int128)UINT64_MAX, b = 1;
	unsigned __int128 m = 0, ms = ~(unsigned __int128)0, mc = (unsigned __int128)1 << 100;

	mbu_atomic_apply(FI_SUM, FI_UINT8, &u8, &s8, NULL, NULL, 1);
	cr_assert_eq(u8, 4);
	mbu_atomic_apply(FI_MIN, FI_INT8, &i8, &(int8_t){ 5 }, NULL, NULL, 1);
	cr_assert_eq(i8, -100, "signed comparison for a signed type");
	mbu_atomic_apply(FI_MIN, FI_UINT8, &j8, &(int8_t){ 5 }, NULL, NULL, 1);
	cr_assert_eq(j8, 5, "unsigned comparison: 156 > 5");
	int64_t big = INT64_MAX;
	uint16_t w16 = 65535;

	mbu_atomic_apply(FI_SUM, FI_INT64, &big, &(int64_t){ 1 }, NULL, NULL, 1);
	cr_assert_eq(big, INT64_MIN, "signed sums wrap (no undefined overflow)");
	mbu_atomic_apply(FI_PROD, FI_UINT16, &w16, &(uint16_t){ 65535 }, NULL, NULL, 1);
	cr_assert_eq(w16, 1, "65535 * 65535 mod 2^16");
	mbu_atomic_apply(FI_SUM, FI_INT128, &a, &b, NULL, NULL, 1);
	cr_assert(a == (__int128)1 << 64, "carry past 64 bits");
	mbu_atomic_apply(FI_MSWAP, FI_UINT128, &m, &ms, &mc, NULL, 1);
	cr_assert(m == mc);
}

Test(atomic, reals_and_complex)
{
	double d = 1.5;
	long double ld = 2.0L;
	float complex fc = 1.0f + 2.0f * I;
	double complex dc = 1.0 + 1.0 * I, dold = 0;

	mbu_atomic_apply(FI_PROD, FI_DOUBLE, &d, &(double){ -4.0 }, NULL, NULL, 1);
	cr_assert_eq(d, -6.0);
	mbu_atomic_apply(FI_MAX, FI_LONG_DOUBLE, &ld, &(long double){ 3.25L }, NULL, NULL, 1);
	cr_assert(ld == 3.25L);
	mbu_atomic_apply(FI_PROD, FI_FLOAT_COMPLEX, &fc, &(float complex){ 3.0f + 4.0f * I }, NULL,
			 NULL, 1);
	cr_assert(crealf(fc) == -5.0f && cimagf(fc) == 10.0f);
	mbu_atomic_apply(FI_CSWAP, FI_DOUBLE_COMPLEX, &dc, &(double complex){ 7.0 },
			 &(double complex){ 1.0 + 1.0 * I }, &dold, 1);
	cr_assert(creal(dc) == 7.0 && cimag(dc) == 0.0 && creal(dold) == 1.0);
}

Test(atomic, unaligned_elements_and_neighbours_untouched)
{
	unsigned char buf[3 * 8 + 2], src[3 * 8];
	uint64_t v;

	memset(buf, 0xAA, sizeof(buf));
	for (int i = 0; i < 3; i++) {
		v = (uint64_t)i + 1;
		memcpy(buf + 1 + 8 * i, &v, 8);
		v = 100;
		memcpy(src + 8 * i, &v, 8);
	}
	mbu_atomic_apply(FI_SUM, FI_UINT64, buf + 1, src, NULL, NULL, 3);
	for (int i = 0; i < 3; i++) {
		memcpy(&v, buf + 1 + 8 * i, 8);
		cr_assert_eq(v, 101 + (uint64_t)i);
	}
	cr_assert(buf[0] == 0xAA && buf[sizeof(buf) - 1] == 0xAA);
}
