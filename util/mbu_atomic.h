/* Atomic operations on memory, element by element, for every datatype and
 * operation libfabric defines (enum fi_datatype, enum fi_op): which
 * combinations exist for plain, fetching and comparing atomics, how big an
 * element is, and the operation itself, applied in one place so that
 * atomics on one location are atomic with each other. Pure: no locking
 * here (the caller serialises), no libfabric calls. Elements may be
 * unaligned. */
#ifndef MBU_ATOMIC_H
#define MBU_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>

enum mbu_atomic_kind {
	MBU_ATOMIC_PLAIN,	/* fi_atomic: dst = dst OP src */
	MBU_ATOMIC_FETCH,	/* fi_fetch_atomic: also returns the old value */
	MBU_ATOMIC_COMPARE,	/* fi_compare_atomic: conditional, returns the old value */
};

/* Bytes of one element of `datatype`; 0 if libfabric defines no such
 * point-to-point datatype. */
size_t mbu_atomic_size(int datatype);
bool mbu_atomic_valid(enum mbu_atomic_kind kind, int op, int datatype);
/* n elements: old[i] = dst[i] (if old), then dst[i] = dst[i] OP src[i],
 * with cmp[i] for the compare operations. The combination must be valid. */
void mbu_atomic_apply(int op, int datatype, void *dst, const void *src, const void *cmp,
		      void *old, size_t n);

#endif
