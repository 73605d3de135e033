/*
 * MPI_Info: ordered (key, value) string pairs, keys unique, in the order
 * they were first set (MPI_Info_get_nthkey's n counts in that order).
 * MPI_INFO_ENV is a read-only object describing how the job started.
 * Communicators keep the hints the standard defines for them (others are
 * dropped, so get_info shows what the library understood), windows keep
 * what they are given; get_info hands back a fresh copy. No hint changes
 * behaviour yet, which the standard allows.
 */
#include "mbmpi.h"

#include <stdio.h>

#define INFO_MAGIC 0x494e464f

struct mbmpi_info {
	int magic;
	int n, cap;
	char **key, **val;
};

static struct mbmpi_info info_env = {.magic = INFO_MAGIC};

static struct mbmpi_info *info_obj(MPI_Info h)
{
	struct mbmpi_info *i;

	if (h == MPI_INFO_ENV)
		return &info_env;
	if ((uintptr_t)h < 16)
		return NULL;
	i = (struct mbmpi_info *)h;
	return i->magic == INFO_MAGIC ? i : NULL;
}

int mbmpi_info_check(MPI_Info h)
{
	return h == MPI_INFO_NULL || info_obj(h) ? MPI_SUCCESS : MPI_ERR_INFO;
}

static int info_find(const struct mbmpi_info *i, const char *key)
{
	for (int k = 0; k < i->n; k++)
		if (!strcmp(i->key[k], key))
			return k;
	return -1;
}

static int info_put(struct mbmpi_info *i, const char *key, const char *val)
{
	int k = info_find(i, key);
	char *v = strdup(val), *kd;

	if (!v)
		return MPI_ERR_NO_MEM;
	if (k >= 0) {
		free(i->val[k]);
		i->val[k] = v;
		return MPI_SUCCESS;
	}
	if (i->n == i->cap) {
		int cap = i->cap ? 2 * i->cap : 8;
		char **nk = realloc(i->key, sizeof(char *) * (size_t)cap), **nv;

		if (!nk) {
			free(v);
			return MPI_ERR_NO_MEM;
		}
		i->key = nk;
		nv = realloc(i->val, sizeof(char *) * (size_t)cap);
		if (!nv) {
			free(v);
			return MPI_ERR_NO_MEM;
		}
		i->val = nv;
		i->cap = cap;
	}
	if (!(kd = strdup(key))) {
		free(v);
		return MPI_ERR_NO_MEM;
	}
	i->key[i->n] = kd;
	i->val[i->n++] = v;
	return MPI_SUCCESS;
}

void mbmpi_info_free(struct mbmpi_info *i)
{
	if (!i || i == &info_env)
		return;
	for (int k = 0; k < i->n; k++) {
		free(i->key[k]);
		free(i->val[k]);
	}
	free(i->key);
	free(i->val);
	i->magic = 0;
	free(i);
}

static struct mbmpi_info *info_new(void)
{
	struct mbmpi_info *i = calloc(1, sizeof(*i));

	if (i)
		i->magic = INFO_MAGIC;
	return i;
}

static struct mbmpi_info *info_clone(const struct mbmpi_info *src)
{
	struct mbmpi_info *i = info_new();

	for (int k = 0; i && src && k < src->n; k++)
		if (info_put(i, src->key[k], src->val[k])) {
			mbmpi_info_free(i);
			return NULL;
		}
	return i;
}

struct mbmpi_info *mbmpi_info_copy(MPI_Info h, int *err)
{
	struct mbmpi_info *i;

	*err = MPI_SUCCESS;
	if (h == MPI_INFO_NULL)
		return NULL;
	if (!(i = info_clone(info_obj(h))))
		*err = MPI_ERR_NO_MEM;
	return i;
}

int mbmpi_info_give(const struct mbmpi_info *src, MPI_Info *out)
{
	struct mbmpi_info *i = info_clone(src);

	if (!i)
		return MPI_ERR_NO_MEM;
	*out = (MPI_Info)i;
	return MPI_SUCCESS;
}

/* MPI_INFO_ENV: the command and its arguments as MPI_Init saw them (so
 * that MPI_Info_create_env, which may run before MPI_Init, describes the
 * same start), filled the first time anyone reads it. */
static int env_argc;
static char **env_argv;

void mbmpi_info_set_args(int argc, char **argv)
{
	env_argc = argc;
	env_argv = argv;
}

static int info_fill_args(struct mbmpi_info *i, int argc, char **argv)
{
	size_t len = 1;
	char *all;
	int ret;

	if (argc < 1 || !argv || !argv[0])
		return MPI_SUCCESS;
	if ((ret = info_put(i, "command", argv[0])))
		return ret;
	for (int a = 1; a < argc; a++)
		len += strlen(argv[a]) + 1;
	if (!(all = calloc(1, len)))
		return MPI_ERR_NO_MEM;
	for (int a = 1; a < argc; a++) {
		if (a > 1)
			strcat(all, " ");
		strcat(all, argv[a]);
	}
	ret = argc > 1 ? info_put(i, "argv", all) : MPI_SUCCESS;
	free(all);
	return ret;
}

static void info_env_fill(void)
{
	static bool done;

	if (done || !mbmpi.initialized)
		return;
	done = true;
	info_fill_args(&info_env, env_argc, env_argv);
}

static int key_check(const char *key)
{
	if (!key)
		return MPI_ERR_INFO_KEY;
	size_t n = strlen(key);
	return n == 0 || n > MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

int PMPI_Info_create(MPI_Info *info)
{
	MBMPI_GUARD();
	struct mbmpi_info *i;

	if (!info)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!(i = info_new()))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	*info = (MPI_Info)i;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_create)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);
	int ret;

	if (!i || i == &info_env)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if ((ret = key_check(key)))
		return MBMPI_ERR(NULL, ret);
	if (!value || strlen(value) > MPI_MAX_INFO_VAL)
		return MBMPI_ERR(NULL, MPI_ERR_INFO_VALUE);
	if ((ret = info_put(i, key, value)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_set)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);
	int k, ret;

	if (!i)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if ((ret = key_check(key)))
		return MBMPI_ERR(NULL, ret);
	if (valuelen < 0 || !flag || (valuelen && !value))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	info_env_fill();
	k = info_find(i, key);
	*flag = k >= 0;
	if (k >= 0) {
		/* valuelen excludes the terminator: at most valuelen characters. */
		size_t n = strlen(i->val[k]);

		if (n > (size_t)valuelen)
			n = (size_t)valuelen;
		memcpy(value, i->val[k], n);
		value[n] = 0;
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_get)

/* MPI-4: the value and its length in one call; *buflen in, the length
 * with its terminator out. */
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);
	int k, ret;

	if (!i)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if ((ret = key_check(key)))
		return MBMPI_ERR(NULL, ret);
	if (!buflen || !flag || *buflen < 0 || (*buflen && !value))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	info_env_fill();
	k = info_find(i, key);
	*flag = k >= 0;
	if (k >= 0) {
		int n = (int)strlen(i->val[k]);

		if (*buflen > 0) {
			int c = n < *buflen - 1 ? n : *buflen - 1;

			memcpy(value, i->val[k], (size_t)c);
			value[c] = 0;
		}
		*buflen = n + 1;
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_get_string)

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
	MBMPI_GUARD();
	struct mbmpi_info *i;
	int ret;

	if (!info)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!(i = info_new()))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	if ((ret = info_fill_args(i, argc, argv))) {
		mbmpi_info_free(i);
		return MBMPI_ERR(NULL, ret);
	}
	*info = (MPI_Info)i;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_create_env)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);
	int k, ret;

	if (!i)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if ((ret = key_check(key)))
		return MBMPI_ERR(NULL, ret);
	if (!valuelen || !flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	info_env_fill();
	k = info_find(i, key);
	*flag = k >= 0;
	if (k >= 0)
		*valuelen = (int)strlen(i->val[k]);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_get_valuelen)

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);

	if (!i)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if (!nkeys)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	info_env_fill();
	*nkeys = i->n;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);

	if (!i)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	info_env_fill();
	if (n < 0 || n >= i->n)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!key)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	strcpy(key, i->key[n]);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_get_nthkey)

int PMPI_Info_delete(MPI_Info info, const char *key)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);
	int k, ret;

	if (!i || i == &info_env)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if ((ret = key_check(key)))
		return MBMPI_ERR(NULL, ret);
	if ((k = info_find(i, key)) < 0)
		return MBMPI_ERR(NULL, MPI_ERR_INFO_NOKEY);
	free(i->key[k]);
	free(i->val[k]);
	memmove(&i->key[k], &i->key[k + 1], sizeof(char *) * (size_t)(i->n - k - 1));
	memmove(&i->val[k], &i->val[k + 1], sizeof(char *) * (size_t)(i->n - k - 1));
	i->n--;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_delete)

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	MBMPI_GUARD();
	struct mbmpi_info *i = info_obj(info);
	int ret;

	if (!i)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	if (!newinfo)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	info_env_fill();
	if ((ret = mbmpi_info_give(i, newinfo)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_dup)

int PMPI_Info_free(MPI_Info *info)
{
	MBMPI_GUARD();
	struct mbmpi_info *i;

	if (!info || !(i = info_obj(*info)) || i == &info_env)
		return MBMPI_ERR(NULL, MPI_ERR_INFO);
	mbmpi_info_free(i);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Info_free)

static const char *const comm_hints[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
					 "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_info *i;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (mbmpi_info_check(info))
		return MBMPI_ERR(c, MPI_ERR_INFO);
	if (!(i = mbmpi_info_copy(info, &ret)) && ret)
		return MBMPI_ERR(c, ret);
	for (int k = 0; i && k < i->n;) {
		bool known = false;

		for (size_t h = 0; h < sizeof(comm_hints) / sizeof(comm_hints[0]); h++)
			known |= !strcmp(i->key[k], comm_hints[h]);
		if (known) {
			k++;
			continue;
		}
		free(i->key[k]);
		free(i->val[k]);
		memmove(&i->key[k], &i->key[k + 1], sizeof(char *) * (size_t)(i->n - k - 1));
		memmove(&i->val[k], &i->val[k + 1], sizeof(char *) * (size_t)(i->n - k - 1));
		i->n--;
	}
	mbmpi_info_free(c->info);
	c->info = i;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, info, &c)))
		return ret;
	if ((ret = mbmpi_info_give(c->info, info)))
		return MBMPI_ERR(c, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_get_info)

void mbmpi_info_fini(void)
{
	for (int k = 0; k < info_env.n; k++) {
		free(info_env.key[k]);
		free(info_env.val[k]);
	}
	free(info_env.key);
	free(info_env.val);
	info_env = (struct mbmpi_info){.magic = INFO_MAGIC};
}
