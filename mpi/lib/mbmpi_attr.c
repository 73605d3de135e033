/*
 * Keyvals and the attributes they name, on communicators, datatypes and
 * windows (a window keeps its attributes on its private communicator), with
 * the copy callbacks run by MPI_Comm_dup/MPI_Type_dup and the delete
 * callbacks run by frees, explicit deletes, replacement and MPI_Finalize.
 * Also the MPI-1 names (Keyval_create, Attr_put, ...) and the predefined
 * keys: MPI_TAG_UB and friends on communicators, MPI_WIN_BASE and friends
 * on windows (mbmpi_win.c answers those). A freed keyval lives on until
 * the last attribute using it is gone, as the standard requires.
 */
#include "mbmpi.h"

#define KV_FIRST 100 /* below: the predefined keys */

struct mbmpi_keyval {
	int kind;
	void (*copy)(void);
	void (*del)(void);
	void *extra;
	int refs;   /* the user's handle (until freed) plus attributes */
	bool live;  /* not yet freed by the user */
};

static struct mbmpi_keyval *kv_tab;
static int kv_n, kv_cap;

int mbmpi_comm_dup_fn(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
	(void)comm, (void)key, (void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mbmpi_type_dup_fn(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
	(void)t, (void)key, (void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mbmpi_win_dup_fn(MPI_Win w, int key, void *extra, void *in, void *out, int *flag)
{
	(void)w, (void)key, (void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

static struct mbmpi_keyval *kv_get(int kind, int key)
{
	struct mbmpi_keyval *k;

	if (key < KV_FIRST || key >= KV_FIRST + kv_n)
		return NULL;
	k = &kv_tab[key - KV_FIRST];
	return k->kind == kind && k->refs > 0 ? k : NULL;
}

static void kv_release(struct mbmpi_keyval *k)
{
	if (--k->refs == 0)
		k->kind = 0;
}

static int kv_create(int kind, void (*copy)(void), void (*del)(void), int *key, void *extra)
{
	if (!key)
		return MPI_ERR_ARG;
	if (kv_n == kv_cap) {
		int cap = kv_cap ? 2 * kv_cap : 16;
		struct mbmpi_keyval *t = realloc(kv_tab, sizeof(*t) * (size_t)cap);

		if (!t)
			return MPI_ERR_NO_MEM;
		kv_tab = t;
		kv_cap = cap;
	}
	kv_tab[kv_n] = (struct mbmpi_keyval){.kind = kind, .copy = copy, .del = del,
					     .extra = extra, .refs = 1, .live = true};
	*key = KV_FIRST + kv_n++;
	return MPI_SUCCESS;
}

static int kv_free(int kind, int *key)
{
	struct mbmpi_keyval *k;

	if (!key)
		return MPI_ERR_ARG;
	k = kv_get(kind, *key);
	if (!k)
		return MPI_ERR_KEYVAL;
	/* Freeing again a keyval that attributes still keep alive changes
	 * nothing (MPICH and its tests treat it so); a keyval gone entirely
	 * is an error. */
	if (k->live) {
		k->live = false;
		kv_release(k);
	}
	*key = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

static int kv_call_copy(int kind, struct mbmpi_keyval *k, void *h, int key, void *in, void *out,
			int *flag)
{
	*flag = 0;
	if (!k->copy)
		return MPI_SUCCESS;
	switch (kind) {
	case MBMPI_KV_COMM:
		return ((MPI_Comm_copy_attr_function *)k->copy)((MPI_Comm)h, key, k->extra, in, out, flag);
	case MBMPI_KV_TYPE:
		return ((MPI_Type_copy_attr_function *)k->copy)((MPI_Datatype)h, key, k->extra, in, out,
								 flag);
	default:
		return ((MPI_Win_copy_attr_function *)k->copy)((MPI_Win)h, key, k->extra, in, out, flag);
	}
}

static int kv_call_del(int kind, struct mbmpi_keyval *k, void *h, int key, void *val)
{
	if (!k->del)
		return MPI_SUCCESS;
	switch (kind) {
	case MBMPI_KV_COMM:
		return ((MPI_Comm_delete_attr_function *)k->del)((MPI_Comm)h, key, val, k->extra);
	case MBMPI_KV_TYPE:
		return ((MPI_Type_delete_attr_function *)k->del)((MPI_Datatype)h, key, val, k->extra);
	default:
		return ((MPI_Win_delete_attr_function *)k->del)((MPI_Win)h, key, val, k->extra);
	}
}

int mbmpi_attr_copy(int kind, void *oldh, struct mbmpi_attr *from, void *newh, struct mbmpi_attr **to)
{
	struct mbmpi_attr **tail = to;

	(void)newh;
	/* Keep the order: the copy's list reads as the original's. */
	for (; from; from = from->next) {
		struct mbmpi_keyval *k = kv_get(kind, from->key);
		struct mbmpi_attr *a;
		void *out = NULL;
		int flag, ret;

		if (!k)
			continue;
		if ((ret = kv_call_copy(kind, k, oldh, from->key, from->val, &out, &flag)))
			return ret;
		if (!flag)
			continue;
		if (!(a = malloc(sizeof(*a))))
			return MPI_ERR_NO_MEM;
		*a = (struct mbmpi_attr){.next = NULL, .key = from->key, .val = out};
		k->refs++;
		*tail = a;
		tail = &a->next;
	}
	return MPI_SUCCESS;
}

int mbmpi_attr_clear(int kind, void *h, struct mbmpi_attr **list)
{
	while (*list) {
		struct mbmpi_attr *a = *list;
		struct mbmpi_keyval *k = kv_get(kind, a->key);
		int ret;

		/* Unlinked before its callback runs: the callback may delete
		 * other attributes of the same object. */
		*list = a->next;
		if (k && (ret = kv_call_del(kind, k, h, a->key, a->val))) {
			a->next = *list;
			*list = a;
			return ret;
		}
		if (k)
			kv_release(k);
		free(a);
	}
	return MPI_SUCCESS;
}

static struct mbmpi_attr **attr_find(struct mbmpi_attr **list, int key)
{
	for (; *list; list = &(*list)->next)
		if ((*list)->key == key)
			return list;
	return NULL;
}

int mbmpi_attr_get(int kind, struct mbmpi_attr *list, int key, void *val, int *flag)
{
	struct mbmpi_attr **a;

	if (!val || !flag)
		return MPI_ERR_ARG;
	if (!kv_get(kind, key))
		return MPI_ERR_KEYVAL;
	a = attr_find(&list, key);
	*flag = a != NULL;
	if (a)
		*(void **)val = (*a)->val;
	return MPI_SUCCESS;
}

int mbmpi_attr_set(int kind, void *h, struct mbmpi_attr **list, int key, void *val)
{
	struct mbmpi_keyval *k = kv_get(kind, key);
	struct mbmpi_attr **old, *a;
	int ret;

	if (!k || !k->live)
		return MPI_ERR_KEYVAL;
	if ((old = attr_find(list, key))) {
		/* Replacing runs the delete callback on the old value first. */
		if ((ret = kv_call_del(kind, k, h, key, (*old)->val)))
			return ret;
		(*old)->val = val;
		return MPI_SUCCESS;
	}
	if (!(a = malloc(sizeof(*a))))
		return MPI_ERR_NO_MEM;
	*a = (struct mbmpi_attr){.next = *list, .key = key, .val = val};
	*list = a;
	k->refs++;
	return MPI_SUCCESS;
}

int mbmpi_attr_delete(int kind, void *h, struct mbmpi_attr **list, int key)
{
	struct mbmpi_keyval *k = kv_get(kind, key);
	struct mbmpi_attr **p, *a;
	int ret;

	if (!k)
		return MPI_ERR_KEYVAL;
	if (!(p = attr_find(list, key)))
		return MPI_ERR_KEYVAL;
	a = *p;
	*p = a->next;
	if ((ret = kv_call_del(kind, k, h, key, a->val))) {
		/* Refused: the attribute stays (at the head: the callback may
		 * have changed the list around its old place). */
		a->next = *list;
		*list = a;
		return ret;
	}
	free(a);
	kv_release(k);
	return MPI_SUCCESS;
}

/* ---- Communicators ---- */

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
			    int *keyval, void *extra)
{
	MBMPI_GUARD();
	int ret = kv_create(MBMPI_KV_COMM, (void (*)(void))copy, (void (*)(void))del, keyval, extra);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_create_keyval)

int PMPI_Comm_free_keyval(int *keyval)
{
	MBMPI_GUARD();
	int ret = kv_free(MBMPI_KV_COMM, keyval);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_free_keyval)

static MPI_Comm comm_handle(struct mbmpi_comm *c)
{
	if (c == &mbmpi_comm_world)
		return MPI_COMM_WORLD;
	if (c == &mbmpi_comm_self)
		return MPI_COMM_SELF;
	return (MPI_Comm)c;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	ret = mbmpi_attr_set(MBMPI_KV_COMM, comm_handle(c), &c->attrs, keyval, val);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_set_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	ret = mbmpi_attr_delete(MBMPI_KV_COMM, comm_handle(c), &c->attrs, keyval);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_delete_attr)

/* MPI-1 names. */
int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra)
{
	MBMPI_GUARD();
	return PMPI_Comm_create_keyval(copy, del, keyval, extra);
}
MBMPI_ALIAS(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
	MBMPI_GUARD();
	return PMPI_Comm_free_keyval(keyval);
}
MBMPI_ALIAS(Keyval_free)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *val)
{
	MBMPI_GUARD();
	return PMPI_Comm_set_attr(comm, keyval, val);
}
MBMPI_ALIAS(Attr_put)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *val, int *flag)
{
	MBMPI_GUARD();
	return PMPI_Comm_get_attr(comm, keyval, val, flag);
}
MBMPI_ALIAS(Attr_get)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	MBMPI_GUARD();
	return PMPI_Comm_delete_attr(comm, keyval);
}
MBMPI_ALIAS(Attr_delete)

/* ---- Datatypes ---- */

static int type_check(MPI_Datatype t, struct mbmpi_dtype **out)
{
	if (t == MPI_DATATYPE_NULL || mbmpi_dt(t)->refs <= 0)
		return MPI_ERR_TYPE;
	*out = mbmpi_dt(t);
	return MPI_SUCCESS;
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del,
			    int *keyval, void *extra)
{
	MBMPI_GUARD();
	int ret = kv_create(MBMPI_KV_TYPE, (void (*)(void))copy, (void (*)(void))del, keyval, extra);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_create_keyval)

int PMPI_Type_free_keyval(int *keyval)
{
	MBMPI_GUARD();
	int ret = kv_free(MBMPI_KV_TYPE, keyval);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void *val)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret;

	if ((ret = type_check(type, &d)) ||
	    (ret = mbmpi_attr_set(MBMPI_KV_TYPE, type, &d->attrs, keyval, val)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void *val, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret;

	if ((ret = type_check(type, &d)) ||
	    (ret = mbmpi_attr_get(MBMPI_KV_TYPE, d->attrs, keyval, val, flag)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret;

	if ((ret = type_check(type, &d)) ||
	    (ret = mbmpi_attr_delete(MBMPI_KV_TYPE, type, &d->attrs, keyval)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_delete_attr)

/* ---- Windows: keyvals here, the attributes in mbmpi_win.c ---- */

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del,
			   int *keyval, void *extra)
{
	MBMPI_GUARD();
	int ret = kv_create(MBMPI_KV_WIN, (void (*)(void))copy, (void (*)(void))del, keyval, extra);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Win_create_keyval)

int PMPI_Win_free_keyval(int *keyval)
{
	MBMPI_GUARD();
	int ret = kv_free(MBMPI_KV_WIN, keyval);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Win_free_keyval)

void mbmpi_attr_fini(void)
{
	free(kv_tab);
	kv_tab = NULL;
	kv_n = kv_cap = 0;
}
