/* The ids the net wire gives its peers (util/mbu_slots.h): every live
 * object has its own id and is found by it; an id let go finds nothing,
 * even once its slot holds another object; bytes that are no id of ours
 * (0, a slot past the table, a wrong generation) find nothing; the table
 * grows past its first size and reuses freed slots; a slot's generation
 * wraps without ever making the id 0. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "mbu_slots.h"

Test(slots, live_ids_find_their_objects)
{
	struct mbu_slots s = { 0 };
	static int objs[1000];
	uint32_t ids[1000];

	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(mbu_slots_get(&s, &objs[i], &ids[i]), 0);
		cr_assert_neq(ids[i], 0);
	}
	cr_assert_geq(s.cap, 1000);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(mbu_slots_find(&s, ids[i]), &objs[i]);
	for (int i = 0; i < 1000; i++)
		for (int j = i + 1; j < i + 5 && j < 1000; j++)
			cr_assert_neq(ids[i], ids[j]);
	mbu_slots_fini(&s);
}

Test(slots, freed_ids_find_nothing_even_after_reuse)
{
	struct mbu_slots s = { 0 };
	int a, b, c;
	uint32_t ia, ib, ic;

	cr_assert_eq(mbu_slots_get(&s, &a, &ia), 0);
	cr_assert_eq(mbu_slots_get(&s, &b, &ib), 0);
	mbu_slots_put(&s, ia);
	cr_assert_null(mbu_slots_find(&s, ia));
	cr_assert_eq(mbu_slots_find(&s, ib), &b);
	/* Fill the table so that a's slot is taken again. */
	for (uint32_t k = 0; k < s.cap; k++) {
		cr_assert_eq(mbu_slots_get(&s, &c, &ic), 0);
		if ((ic & MBU_SLOTS_MASK) == (ia & MBU_SLOTS_MASK))
			break;
	}
	cr_assert_eq(ic & MBU_SLOTS_MASK, ia & MBU_SLOTS_MASK);
	cr_assert_neq(ic, ia);
	cr_assert_null(mbu_slots_find(&s, ia));
	cr_assert_eq(mbu_slots_find(&s, ic), &c);
	mbu_slots_fini(&s);
}

Test(slots, foreign_bytes_find_nothing)
{
	struct mbu_slots s = { 0 };
	int a;
	uint32_t ia;

	cr_assert_null(mbu_slots_find(&s, 0));
	cr_assert_null(mbu_slots_find(&s, 1u << MBU_SLOTS_BITS));
	cr_assert_eq(mbu_slots_get(&s, &a, &ia), 0);
	cr_assert_null(mbu_slots_find(&s, 0));
	cr_assert_null(mbu_slots_find(&s, ia + 1));	/* an empty slot */
	cr_assert_null(mbu_slots_find(&s, ia ^ (1u << MBU_SLOTS_BITS)));
	cr_assert_null(mbu_slots_find(&s, (ia & ~MBU_SLOTS_MASK) | MBU_SLOTS_MASK));
	cr_assert_null(mbu_slots_find(&s, UINT32_MAX));
	cr_assert_eq(mbu_slots_find(&s, ia), &a);
	mbu_slots_fini(&s);
}

Test(slots, generation_wraps_past_zero)
{
	struct mbu_slots s = { 0 };
	int a;
	uint32_t id, first;

	cr_assert_eq(mbu_slots_get(&s, &a, &first), 0);
	mbu_slots_put(&s, first);
	for (uint32_t i = 0; i < 2 * MBU_SLOTS_GEN_MAX + 3; i++) {
		s.next = 0;	/* the same slot every time */
		cr_assert_eq(mbu_slots_get(&s, &a, &id), 0);
		cr_assert_eq(id & MBU_SLOTS_MASK, first & MBU_SLOTS_MASK);
		cr_assert_geq(id >> MBU_SLOTS_BITS, 1);
		cr_assert_leq(id >> MBU_SLOTS_BITS, MBU_SLOTS_GEN_MAX);
		cr_assert_eq(mbu_slots_find(&s, id), &a);
		mbu_slots_put(&s, id);
		cr_assert_null(mbu_slots_find(&s, id));
	}
	mbu_slots_fini(&s);
}
