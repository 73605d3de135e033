/* The atomic operations of mbu_atomic.h. Each datatype class gets one
 * function (integers, reals, complex numbers), written once as a macro and
 * expanded per C type, holding only the operations C defines for the
 * class: the validity table and the code cannot disagree about what a
 * complex minimum is. fi_atomic(3) gives the semantics: for the compare
 * operations, dst changes when `cmp OP dst` holds (FI_CSWAP_LT: cmp < dst),
 * and FI_MSWAP sets the bits of cmp to those of src. */
#include "mbu_atomic.h"

#include <complex.h>
#include <stdint.h>
#include <string.h>

#include <rdma/fi_domain.h>

typedef float complex mbu_cfloat;
typedef double complex mbu_cdouble;
typedef long double complex mbu_cldouble;
typedef __int128 mbu_i128;
typedef unsigned __int128 mbu_u128;

enum { CLASS_NONE, CLASS_INT, CLASS_REAL, CLASS_COMPLEX };

static int class_of(int dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8: case FI_INT16: case FI_UINT16: case FI_INT32:
	case FI_UINT32: case FI_INT64: case FI_UINT64: case FI_INT128: case FI_UINT128:
		return CLASS_INT;
	case FI_FLOAT: case FI_DOUBLE: case FI_LONG_DOUBLE:
		return CLASS_REAL;
	case FI_FLOAT_COMPLEX: case FI_DOUBLE_COMPLEX: case FI_LONG_DOUBLE_COMPLEX:
		return CLASS_COMPLEX;
	default:
		return CLASS_NONE;
	}
}

size_t mbu_atomic_size(int dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8: return 1;
	case FI_INT16: case FI_UINT16: return 2;
	case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
	case FI_INT64: case FI_UINT64: case FI_DOUBLE: return 8;
	case FI_FLOAT_COMPLEX: return sizeof(mbu_cfloat);
	case FI_DOUBLE_COMPLEX: return sizeof(mbu_cdouble);
	case FI_LONG_DOUBLE: return sizeof(long double);
	case FI_LONG_DOUBLE_COMPLEX: return sizeof(mbu_cldouble);
	case FI_INT128: case FI_UINT128: return sizeof(mbu_i128);
	default: return 0;
	}
}

bool mbu_atomic_valid(enum mbu_atomic_kind kind, int op, int dt)
{
	int c = class_of(dt);
	bool ordered = c != CLASS_COMPLEX, bits = c == CLASS_INT;

	if (c == CLASS_NONE)
		return false;
	switch (op) {
	case FI_MIN: case FI_MAX:
		return kind != MBU_ATOMIC_COMPARE && ordered;
	case FI_SUM: case FI_PROD: case FI_LOR: case FI_LAND: case FI_LXOR:
	case FI_ATOMIC_WRITE:
		return kind != MBU_ATOMIC_COMPARE;
	case FI_BOR: case FI_BAND: case FI_BXOR:
		return kind != MBU_ATOMIC_COMPARE && bits;
	case FI_ATOMIC_READ:
		return kind == MBU_ATOMIC_FETCH;
	case FI_CSWAP: case FI_CSWAP_NE:
		return kind == MBU_ATOMIC_COMPARE;
	case FI_CSWAP_LE: case FI_CSWAP_LT: case FI_CSWAP_GE: case FI_CSWAP_GT:
		return kind == MBU_ATOMIC_COMPARE && ordered;
	case FI_MSWAP:
		return kind == MBU_ATOMIC_COMPARE && bits;
	default:
		return false;
	}
}

/* Sums and products: integers wrap (computed unsigned and at least as
 * wide as unsigned int, as signed overflow and promoted 16-bit products
 * would be undefined in C); reals and complex numbers as C computes them. */
#define ARITH_OPS(T)							\
	case FI_SUM: r = d + s; break;					\
	case FI_PROD: r = d * s; break;
#define WRAP_OPS(T, W)							\
	case FI_SUM: r = (T)((W)d + (W)s); break;			\
	case FI_PROD: r = (T)((W)d * (W)s); break;

/* The operations every class has. */
#define COMMON_OPS(T)							\
	case FI_LOR: r = (T)(d || s); break;				\
	case FI_LAND: r = (T)(d && s); break;				\
	case FI_LXOR: r = (T)((d && !s) || (!d && s)); break;		\
	case FI_ATOMIC_READ: break;					\
	case FI_ATOMIC_WRITE: r = s; break;				\
	case FI_CSWAP: if (c == d) r = s; break;			\
	case FI_CSWAP_NE: if (c != d) r = s; break;

#define ORDERED_OPS							\
	case FI_MIN: r = s < d ? s : d; break;				\
	case FI_MAX: r = s > d ? s : d; break;				\
	case FI_CSWAP_LE: if (c <= d) r = s; break;			\
	case FI_CSWAP_LT: if (c < d) r = s; break;			\
	case FI_CSWAP_GE: if (c >= d) r = s; break;			\
	case FI_CSWAP_GT: if (c > d) r = s; break;

#define BIT_OPS								\
	case FI_BOR: r = d | s; break;					\
	case FI_BAND: r = d & s; break;					\
	case FI_BXOR: r = d ^ s; break;					\
	case FI_MSWAP: r = (s & c) | (d & ~c); break;

#define APPLY_FN(name, T, OPS)						\
static void name(int op, char *dst, const char *src, const char *cmp, char *old, size_t n) \
{									\
	for (size_t i = 0; i < n; i++) {				\
		T d, s, c = 0, r;					\
									\
		memcpy(&d, dst + i * sizeof(T), sizeof(T));		\
		memcpy(&s, src ? src + i * sizeof(T) : (const char *)&c, sizeof(T)); \
		if (cmp)						\
			memcpy(&c, cmp + i * sizeof(T), sizeof(T));	\
		if (old)						\
			memcpy(old + i * sizeof(T), &d, sizeof(T));	\
		r = d;							\
		switch (op) {						\
		OPS							\
		default: break;						\
		}							\
		if (op != FI_ATOMIC_READ)				\
			memcpy(dst + i * sizeof(T), &r, sizeof(T));	\
	}								\
}

#define INT_OPS(T, W) WRAP_OPS(T, W) COMMON_OPS(T) ORDERED_OPS BIT_OPS
#define REAL_OPS(T) ARITH_OPS(T) COMMON_OPS(T) ORDERED_OPS
#define CPLX_OPS(T) ARITH_OPS(T) COMMON_OPS(T)

APPLY_FN(apply_i8, int8_t, INT_OPS(int8_t, uint64_t))
APPLY_FN(apply_u8, uint8_t, INT_OPS(uint8_t, uint64_t))
APPLY_FN(apply_i16, int16_t, INT_OPS(int16_t, uint64_t))
APPLY_FN(apply_u16, uint16_t, INT_OPS(uint16_t, uint64_t))
APPLY_FN(apply_i32, int32_t, INT_OPS(int32_t, uint64_t))
APPLY_FN(apply_u32, uint32_t, INT_OPS(uint32_t, uint64_t))
APPLY_FN(apply_i64, int64_t, INT_OPS(int64_t, uint64_t))
APPLY_FN(apply_u64, uint64_t, INT_OPS(uint64_t, uint64_t))
APPLY_FN(apply_i128, mbu_i128, INT_OPS(mbu_i128, mbu_u128))
APPLY_FN(apply_u128, mbu_u128, INT_OPS(mbu_u128, mbu_u128))
APPLY_FN(apply_f, float, REAL_OPS(float))
APPLY_FN(apply_d, double, REAL_OPS(double))
APPLY_FN(apply_ld, long double, REAL_OPS(long double))
APPLY_FN(apply_cf, mbu_cfloat, CPLX_OPS(mbu_cfloat))
APPLY_FN(apply_cd, mbu_cdouble, CPLX_OPS(mbu_cdouble))
APPLY_FN(apply_cld, mbu_cldouble, CPLX_OPS(mbu_cldouble))

void mbu_atomic_apply(int op, int dt, void *dst, const void *src, const void *cmp, void *old,
		      size_t n)
{
	static void (*const fn[])(int, char *, const char *, const char *, char *, size_t) = {
		[FI_INT8] = apply_i8, [FI_UINT8] = apply_u8, [FI_INT16] = apply_i16,
		[FI_UINT16] = apply_u16, [FI_INT32] = apply_i32, [FI_UINT32] = apply_u32,
		[FI_INT64] = apply_i64, [FI_UINT64] = apply_u64, [FI_FLOAT] = apply_f,
		[FI_DOUBLE] = apply_d, [FI_FLOAT_COMPLEX] = apply_cf,
		[FI_DOUBLE_COMPLEX] = apply_cd, [FI_LONG_DOUBLE] = apply_ld,
		[FI_LONG_DOUBLE_COMPLEX] = apply_cld, [FI_INT128] = apply_i128,
		[FI_UINT128] = apply_u128,
	};

	if (dt >= 0 && (size_t)dt < sizeof(fn) / sizeof(fn[0]) && fn[dt])
		fn[dt](op, dst, src, cmp, old, n);
}
