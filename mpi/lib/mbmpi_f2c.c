/*
 * Handle conversion between C and Fortran (MPI_x_c2f/f2c). C handles are
 * pointers, Fortran's are INTEGERs: a predefined handle (a small number
 * cast to a pointer) keeps its number; an object's handle gets, the first
 * time it is converted, the next number of its kind above MBMPI_F_BASE,
 * kept in a table (index -> handle) and a hash (handle -> number), so that
 * converting again, either way, costs a lookup. Objects come from pools
 * and are reused at the same address, which then keeps its number.
 */
#include "mbmpi.h"

#define MBMPI_F_BASE 1024

enum { K_COMM, K_TYPE, K_GROUP, K_REQ, K_OP, K_INFO, K_WIN, K_ERRH, K_MSG, K_FILE, K_N };

struct f_kind {
	void **tab;            /* number - MBMPI_F_BASE -> handle */
	int n, cap;
	uintptr_t *hkey;       /* open addressing: handle -> number */
	int *hval;
	size_t hcap;
};

static struct f_kind f_kinds[K_N];

static size_t f_hash(uintptr_t p, size_t cap)
{
	return (size_t)((p >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static int f_hash_grow(struct f_kind *k)
{
	size_t cap = k->hcap ? 2 * k->hcap : 64;
	uintptr_t *key = calloc(cap, sizeof(*key));
	int *val = malloc(sizeof(int) * cap);

	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	for (int i = 0; i < k->n; i++) {
		size_t h = f_hash((uintptr_t)k->tab[i], cap);

		while (key[h])
			h = (h + 1) & (cap - 1);
		key[h] = (uintptr_t)k->tab[i];
		val[h] = i + MBMPI_F_BASE;
	}
	free(k->hkey);
	free(k->hval);
	k->hkey = key;
	k->hval = val;
	k->hcap = cap;
	return 0;
}

static MPI_Fint f_c2f(int kind, void *h)
{
	struct f_kind *k = &f_kinds[kind];
	uintptr_t p = (uintptr_t)h;
	size_t at;

	if (p < MBMPI_F_BASE)
		return (MPI_Fint)p;
	if (k->hcap) {
		for (at = f_hash(p, k->hcap); k->hkey[at]; at = (at + 1) & (k->hcap - 1))
			if (k->hkey[at] == p)
				return k->hval[at];
	}
	/* New: keep the hash at most half full. */
	if ((size_t)(k->n + 1) * 2 > k->hcap && f_hash_grow(k))
		return -1;
	if (k->n == k->cap) {
		int cap = k->cap ? 2 * k->cap : 64;
		void **t = realloc(k->tab, sizeof(*t) * (size_t)cap);

		if (!t)
			return -1;
		k->tab = t;
		k->cap = cap;
	}
	k->tab[k->n] = h;
	for (at = f_hash(p, k->hcap); k->hkey[at]; at = (at + 1) & (k->hcap - 1))
		;
	k->hkey[at] = p;
	k->hval[at] = k->n + MBMPI_F_BASE;
	return k->n++ + MBMPI_F_BASE;
}

static void *f_f2c(int kind, MPI_Fint f)
{
	struct f_kind *k = &f_kinds[kind];

	if (f >= 0 && f < MBMPI_F_BASE)
		return (void *)(uintptr_t)f;
	if (f < MBMPI_F_BASE || f - MBMPI_F_BASE >= k->n)
		return NULL; /* the null handle of every kind */
	return k->tab[f - MBMPI_F_BASE];
}

void mbmpi_f2c_fini(void)
{
	for (int i = 0; i < K_N; i++) {
		free(f_kinds[i].tab);
		free(f_kinds[i].hkey);
		free(f_kinds[i].hval);
		f_kinds[i] = (struct f_kind){0};
	}
}

#define F2C_PAIR(T, name, kind)                                 \
	MPI_Fint PMPI_##name##_c2f(T h)                         \
	{                                                       \
		MBMPI_GUARD();                                  \
		return f_c2f(kind, (void *)h);                  \
	}                                                       \
	MBMPI_ALIAS(name##_c2f)                                 \
	T PMPI_##name##_f2c(MPI_Fint f)                         \
	{                                                       \
		MBMPI_GUARD();                                  \
		return (T)f_f2c(kind, f);                       \
	}                                                       \
	MBMPI_ALIAS(name##_f2c)

F2C_PAIR(MPI_Comm, Comm, K_COMM)
F2C_PAIR(MPI_Datatype, Type, K_TYPE)
F2C_PAIR(MPI_Group, Group, K_GROUP)
F2C_PAIR(MPI_Request, Request, K_REQ)
F2C_PAIR(MPI_Op, Op, K_OP)
F2C_PAIR(MPI_Info, Info, K_INFO)
F2C_PAIR(MPI_Win, Win, K_WIN)
F2C_PAIR(MPI_Errhandler, Errhandler, K_ERRH)
F2C_PAIR(MPI_Message, Message, K_MSG)
F2C_PAIR(MPI_File, File, K_FILE)

/* A Fortran status is MPI_STATUS_SIZE INTEGERs holding the C status. */
int PMPI_Status_c2f(const MPI_Status *c, MPI_Fint *f)
{
	MBMPI_GUARD();
	if (!c || !f)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	memcpy(f, c, sizeof(*c));
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Status_c2f)

int PMPI_Status_f2c(const MPI_Fint *f, MPI_Status *c)
{
	MBMPI_GUARD();
	if (!c || !f)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	memcpy(c, f, sizeof(*c));
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Status_f2c)
