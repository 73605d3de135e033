/*
 * The tool information interface (MPI_T). Tools and libraries use it to
 * list and read an MPI's variables, before MPI_Init and after
 * MPI_Finalize as well. The control variables are the library's parameters
 * (mbmpi_params.h, the table `mpirun --params` prints), each a string read
 * from the environment when the library starts, so they are read-only
 * here: writing one is MPI_T_ERR_CVAR_SET_NEVER. The performance variables
 * are counters of the point-to-point layer's messages and bytes, counting
 * while a handle is started. Both kinds form one category. Every call answers with an
 * MPI_T error class and never invokes an error handler, as the standard
 * asks.
 */
#include "mbmpi.h"
#include "mbmpi_params.h"

#include <stdatomic.h>

#define T_VALUE_MAX 256		/* a cvar handle's count: bytes of its string */
#define T_MAGIC 0x4d50495f54u

struct t_cvar {
	const char *name, *def, *desc;
};

#define T_ENTRY(name, def, desc) {name, def, desc},
static const struct t_cvar t_cvars[] = { MBMPI_PARAMS(T_ENTRY) };
#undef T_ENTRY
#define T_NCVARS ((int)(sizeof(t_cvars) / sizeof(t_cvars[0])))

static const char t_cat_name[] = "matchbox_mpi";
static const char t_cat_desc[] =
	"Parameters of Matchbox MPI, set in the environment before the program starts, and "
	"its message counters";

static atomic_int t_inits;

struct mbmpi_t_cvar {
	uint64_t magic;
	int index;
};

struct mbmpi_t_session {
	uint64_t magic;
	struct mbmpi_t_pvar *handles;
};

/* Copies a string the MPI_T way: with no buffer (or a zero length) only
 * the length it needs, terminator included, is returned; otherwise as much
 * as fits, always terminated, and the length copied. */
static void t_str(const char *src, char *buf, int *len)
{
	int need = (int)strlen(src) + 1;

	if (!len)
		return;
	if (!buf || *len <= 0) {
		*len = need;
		return;
	}
	if (need > *len)
		need = *len;
	memcpy(buf, src, (size_t)need - 1);
	buf[need - 1] = '\0';
	*len = need;
}

static bool t_ready(void)
{
	return atomic_load(&t_inits) > 0;
}

static const char *t_value(int i)
{
	const char *v = getenv(t_cvars[i].name);

	return v ? v : t_cvars[i].def;
}

int PMPI_T_init_thread(int required, int *provided)
{
	if (!provided)
		return MPI_T_ERR_INVALID;
	if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
		return MPI_T_ERR_INVALID;
	atomic_fetch_add(&t_inits, 1);
	*provided = required;	/* nothing here is shared without care */
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_init_thread)

int PMPI_T_finalize(void)
{
	int n = atomic_load(&t_inits);

	do {
		if (n <= 0)
			return MPI_T_ERR_NOT_INITIALIZED;
	} while (!atomic_compare_exchange_weak(&t_inits, &n, n - 1));
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_finalize)

/* ---- Enumerations: none ---- */

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
	(void)enumtype, (void)num, (void)name, (void)name_len;
	return t_ready() ? MPI_T_ERR_INVALID_HANDLE : MPI_T_ERR_NOT_INITIALIZED;
}
MBMPI_ALIAS(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
	(void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
	return t_ready() ? MPI_T_ERR_INVALID_HANDLE : MPI_T_ERR_NOT_INITIALIZED;
}
MBMPI_ALIAS(T_enum_get_item)

/* ---- Control variables ---- */

int PMPI_T_cvar_get_num(int *num_cvar)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!num_cvar)
		return MPI_T_ERR_INVALID;
	*num_cvar = T_NCVARS;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
			 MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
			 int *bind, int *scope)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (cvar_index < 0 || cvar_index >= T_NCVARS)
		return MPI_T_ERR_INVALID_INDEX;
	t_str(t_cvars[cvar_index].name, name, name_len);
	t_str(t_cvars[cvar_index].desc, desc, desc_len);
	/* Which provider to use is for every user; the rest is tuning. */
	if (verbosity)
		*verbosity = cvar_index == 0 ? MPI_T_VERBOSITY_USER_BASIC
					     : MPI_T_VERBOSITY_TUNER_BASIC;
	if (datatype)
		*datatype = MPI_CHAR;
	if (enumtype)
		*enumtype = MPI_T_ENUM_NULL;
	if (bind)
		*bind = MPI_T_BIND_NO_OBJECT;
	if (scope)
		*scope = MPI_T_SCOPE_READONLY;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!name || !cvar_index)
		return MPI_T_ERR_INVALID;
	for (int i = 0; i < T_NCVARS; i++) {
		if (!strcmp(name, t_cvars[i].name)) {
			*cvar_index = i;
			return MPI_SUCCESS;
		}
	}
	return MPI_T_ERR_INVALID_NAME;
}
MBMPI_ALIAS(T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
			     int *count)
{
	struct mbmpi_t_cvar *h;

	(void)obj_handle;	/* bound to no object */
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (cvar_index < 0 || cvar_index >= T_NCVARS)
		return MPI_T_ERR_INVALID_INDEX;
	if (!handle || !count)
		return MPI_T_ERR_INVALID;
	if (!(h = malloc(sizeof(*h))))
		return MPI_T_ERR_MEMORY;
	h->magic = T_MAGIC;
	h->index = cvar_index;
	*handle = h;
	*count = T_VALUE_MAX;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_cvar_handle_alloc)

static bool t_cvar_ok(MPI_T_cvar_handle h)
{
	return h && h->magic == T_MAGIC;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!handle || !t_cvar_ok(*handle))
		return MPI_T_ERR_INVALID_HANDLE;
	(*handle)->magic = 0;
	free(*handle);
	*handle = MPI_T_CVAR_HANDLE_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
	int len = T_VALUE_MAX;

	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!t_cvar_ok(handle))
		return MPI_T_ERR_INVALID_HANDLE;
	if (!buf)
		return MPI_T_ERR_INVALID;
	t_str(t_value(handle->index), buf, &len);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
	(void)buf;
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!t_cvar_ok(handle))
		return MPI_T_ERR_INVALID_HANDLE;
	return MPI_T_ERR_CVAR_SET_NEVER;
}
MBMPI_ALIAS(T_cvar_write)

/* ---- Performance variables ---- */

/* Counters the library keeps under its lock (mbmpi.pv). They move only
 * while some handle is started, so that a program no tool watches pays one
 * test per message; each handle counts what happened while it was started
 * (not continuous), and can be reset or written (not read-only). */
struct t_pvar {
	const char *name, *desc;
	int id;
};

static const struct t_pvar t_pvars[] = {
	{"matchbox_mpi_sent_messages",
	 "Point-to-point messages this process started since MPI_Init, the library's own "
	 "collective traffic included", MBMPI_PV_SENT_MSGS},
	{"matchbox_mpi_sent_bytes", "Bytes of those messages", MBMPI_PV_SENT_BYTES},
	{"matchbox_mpi_received_messages",
	 "Point-to-point messages this process received since MPI_Init (truncated ones "
	 "included, cancelled receives not), the library's own collective traffic included",
	 MBMPI_PV_RECV_MSGS},
	{"matchbox_mpi_received_bytes", "Bytes placed by those receives", MBMPI_PV_RECV_BYTES},
};
#define T_NPVARS ((int)(sizeof(t_pvars) / sizeof(t_pvars[0])))

struct mbmpi_t_pvar {
	uint64_t magic;
	int index;
	bool started;
	uint64_t base;		/* the library's counter when started or last set */
	uint64_t value;		/* counted before that */
	struct mbmpi_t_session *session;
	struct mbmpi_t_pvar *next;	/* the session's handles */
};

static uint64_t t_pv_now(const struct mbmpi_t_pvar *h)
{
	return mbmpi.pv[t_pvars[h->index].id];
}

static uint64_t t_pv_value(const struct mbmpi_t_pvar *h)
{
	return h->value + (h->started ? t_pv_now(h) - h->base : 0);
}

static void t_pv_start(struct mbmpi_t_pvar *h)
{
	if (h->started)
		return;
	h->started = true;
	h->base = t_pv_now(h);
	mbmpi.pv_started++;
}

static void t_pv_stop(struct mbmpi_t_pvar *h)
{
	if (!h->started)
		return;
	h->value += t_pv_now(h) - h->base;
	h->started = false;
	mbmpi.pv_started--;
}

static void t_pv_set(struct mbmpi_t_pvar *h, uint64_t v)
{
	h->value = v;
	h->base = t_pv_now(h);
}

int PMPI_T_pvar_get_num(int *num_pvar)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!num_pvar)
		return MPI_T_ERR_INVALID;
	*num_pvar = T_NPVARS;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
			 int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
			 int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (pvar_index < 0 || pvar_index >= T_NPVARS)
		return MPI_T_ERR_INVALID_INDEX;
	t_str(t_pvars[pvar_index].name, name, name_len);
	t_str(t_pvars[pvar_index].desc, desc, desc_len);
	if (verbosity)
		*verbosity = MPI_T_VERBOSITY_USER_BASIC;
	if (var_class)
		*var_class = MPI_T_PVAR_CLASS_COUNTER;
	if (datatype)
		*datatype = MPI_UNSIGNED_LONG_LONG;
	if (enumtype)
		*enumtype = MPI_T_ENUM_NULL;
	if (bind)
		*bind = MPI_T_BIND_NO_OBJECT;
	if (readonly)
		*readonly = 0;
	if (continuous)
		*continuous = 0;
	if (atomic)
		*atomic = 0;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!name || !pvar_index)
		return MPI_T_ERR_INVALID;
	for (int i = 0; i < T_NPVARS; i++) {
		if (!strcmp(name, t_pvars[i].name) && var_class == MPI_T_PVAR_CLASS_COUNTER) {
			*pvar_index = i;
			return MPI_SUCCESS;
		}
	}
	return MPI_T_ERR_INVALID_NAME;
}
MBMPI_ALIAS(T_pvar_get_index)

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
	struct mbmpi_t_session *s;

	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!session)
		return MPI_T_ERR_INVALID;
	if (!(s = calloc(1, sizeof(*s))))
		return MPI_T_ERR_MEMORY;
	s->magic = T_MAGIC;
	*session = s;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_session_create)

static bool t_session_ok(MPI_T_pvar_session s)
{
	return s && s->magic == T_MAGIC;
}

/* Freeing a session frees the handles still allocated in it. */
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
	struct mbmpi_t_pvar *h, *next;
	int held;

	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!session || !t_session_ok(*session))
		return MPI_T_ERR_INVALID_SESSION;
	held = mbmpi_enter();
	for (h = (*session)->handles; h; h = next) {
		next = h->next;
		t_pv_stop(h);
		h->magic = 0;
		free(h);
	}
	mbmpi_leave(&held);
	(*session)->magic = 0;
	free(*session);
	*session = MPI_T_PVAR_SESSION_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
			     MPI_T_pvar_handle *handle, int *count)
{
	struct mbmpi_t_pvar *h;

	(void)obj_handle;	/* bound to no object */
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!t_session_ok(session))
		return MPI_T_ERR_INVALID_SESSION;
	if (pvar_index < 0 || pvar_index >= T_NPVARS)
		return MPI_T_ERR_INVALID_INDEX;
	if (!handle || !count)
		return MPI_T_ERR_INVALID;
	if (!(h = calloc(1, sizeof(*h))))
		return MPI_T_ERR_MEMORY;
	h->magic = T_MAGIC;
	h->index = pvar_index;
	h->session = session;
	h->next = session->handles;
	session->handles = h;
	*handle = h;
	*count = 1;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_handle_alloc)

/* The checks every handle call makes: initialized, a live session, and a
 * handle of that session (MPI_T_PVAR_ALL_HANDLES where `all_ok`). */
static int t_pvar_check(MPI_T_pvar_session session, MPI_T_pvar_handle handle, bool all_ok)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!t_session_ok(session))
		return MPI_T_ERR_INVALID_SESSION;
	if (all_ok && handle == MPI_T_PVAR_ALL_HANDLES)
		return MPI_SUCCESS;
	for (struct mbmpi_t_pvar *h = session->handles; h; h = h->next)
		if (h == handle)
			return MPI_SUCCESS;
	return MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
	struct mbmpi_t_pvar **pp;
	int ret, held;

	if (!handle)
		return t_ready() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
	if ((ret = t_pvar_check(session, *handle, false)))
		return ret;
	for (pp = &session->handles; *pp != *handle; pp = &(*pp)->next)
		;
	*pp = (*handle)->next;
	held = mbmpi_enter();
	t_pv_stop(*handle);
	mbmpi_leave(&held);
	(*handle)->magic = 0;
	free(*handle);
	*handle = MPI_T_PVAR_HANDLE_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_handle_free)

/* Applies `fn` to one handle or, for MPI_T_PVAR_ALL_HANDLES, to every
 * handle of the session, under the library's lock (the counters move under
 * it, in other threads too). */
static int t_pvar_each(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
		       void (*fn)(struct mbmpi_t_pvar *))
{
	int held, ret = t_pvar_check(session, handle, true);

	if (ret)
		return ret;
	held = mbmpi_enter();
	if (handle == MPI_T_PVAR_ALL_HANDLES) {
		for (struct mbmpi_t_pvar *h = session->handles; h; h = h->next)
			fn(h);
	} else {
		fn(handle);
	}
	mbmpi_leave(&held);
	return MPI_SUCCESS;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	return t_pvar_each(session, handle, t_pv_start);
}
MBMPI_ALIAS(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	return t_pvar_each(session, handle, t_pv_stop);
}
MBMPI_ALIAS(T_pvar_stop)

static void t_pv_zero(struct mbmpi_t_pvar *h)
{
	t_pv_set(h, 0);
}

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	return t_pvar_each(session, handle, t_pv_zero);
}
MBMPI_ALIAS(T_pvar_reset)

/* Read, and with `reset` also set to zero, one handle's value. */
static int t_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf,
		       bool reset)
{
	int held, ret = t_pvar_check(session, handle, false);
	unsigned long long v;

	if (ret)
		return ret;
	if (!buf)
		return MPI_T_ERR_INVALID;
	held = mbmpi_enter();
	v = t_pv_value(handle);
	if (reset)
		t_pv_set(handle, 0);
	mbmpi_leave(&held);
	memcpy(buf, &v, sizeof(v));
	return MPI_SUCCESS;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
	return t_pvar_read(session, handle, buf, false);
}
MBMPI_ALIAS(T_pvar_read)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
	return t_pvar_read(session, handle, buf, true);
}
MBMPI_ALIAS(T_pvar_readreset)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
	int held, ret = t_pvar_check(session, handle, false);
	unsigned long long v;

	if (ret)
		return ret;
	if (!buf)
		return MPI_T_ERR_INVALID;
	memcpy(&v, buf, sizeof(v));
	held = mbmpi_enter();
	t_pv_set(handle, v);
	mbmpi_leave(&held);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_pvar_write)

/* ---- Categories: one, holding every variable ---- */

int PMPI_T_category_get_num(int *num_cat)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!num_cat)
		return MPI_T_ERR_INVALID;
	*num_cat = 1;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
			     int *desc_len, int *num_cvars, int *num_pvars, int *num_categories)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (cat_index != 0)
		return MPI_T_ERR_INVALID_INDEX;
	t_str(t_cat_name, name, name_len);
	t_str(t_cat_desc, desc, desc_len);
	if (num_cvars)
		*num_cvars = T_NCVARS;
	if (num_pvars)
		*num_pvars = T_NPVARS;
	if (num_categories)
		*num_categories = 0;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_get_info)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!name || !cat_index)
		return MPI_T_ERR_INVALID;
	if (strcmp(name, t_cat_name))
		return MPI_T_ERR_INVALID_NAME;
	*cat_index = 0;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_get_index)

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (cat_index != 0)
		return MPI_T_ERR_INVALID_INDEX;
	if (len < 0 || (len > 0 && !indices))
		return MPI_T_ERR_INVALID;
	for (int i = 0; i < len && i < T_NCVARS; i++)
		indices[i] = i;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (cat_index != 0)
		return MPI_T_ERR_INVALID_INDEX;
	if (len < 0 || (len > 0 && !indices))
		return MPI_T_ERR_INVALID;
	for (int i = 0; i < len && i < T_NPVARS; i++)
		indices[i] = i;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_get_pvars)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
	(void)indices;
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (cat_index != 0)
		return MPI_T_ERR_INVALID_INDEX;
	return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_get_categories)

/* The variables and categories never change while the library is loaded. */
int PMPI_T_category_changed(int *stamp)
{
	if (!t_ready())
		return MPI_T_ERR_NOT_INITIALIZED;
	if (!stamp)
		return MPI_T_ERR_INVALID;
	*stamp = 0;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(T_category_changed)
