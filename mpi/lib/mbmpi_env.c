/*
 * The MPI environment: MPI_Init/Finalize over PMIx (address exchange by
 * Put/Commit/Fence/Get and nothing else), a singleton mode when no launcher
 * is present, error handlers and error strings, Abort, timers, memory and
 * the library's parameters.
 */
#include "mbmpi.h"
#include "mbmpi_params.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <pmix.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

struct mbmpi_state mbmpi;
static pthread_t mbmpi_main_thread;
static pmix_proc_t mbmpi_proc;
static bool mbmpi_pmix;

struct mbmpi_errh {
	MPI_Comm_errhandler_function *fn;
	int refs;    /* the user's handle plus every communicator using it */
	bool fortran; /* fn is a Fortran subroutine: (INTEGER handle, INTEGER code) */
};

void mbmpi_errh_fortran(MPI_Errhandler h)
{
	h->fortran = true;
}

/* A Fortran handler gets the handle's Fortran name and the code by
 * reference, and nothing else (C's varargs tail is C's alone). */
static void mbmpi_errh_call_f(MPI_Errhandler h, MPI_Fint handle, int *code)
{
	MPI_Fint fcode = *code;

	((void (*)(MPI_Fint *, MPI_Fint *))(void (*)(void))h->fn)(&handle, &fcode);
	*code = fcode;
}

static bool mbmpi_errh_user(MPI_Errhandler h)
{
	return (uintptr_t)h > 16;
}

void mbmpi_errh_retain(MPI_Errhandler h)
{
	if (mbmpi_errh_user(h))
		h->refs++;
}

void mbmpi_errh_release(MPI_Errhandler h)
{
	if (mbmpi_errh_user(h) && --h->refs == 0)
		free(h);
}

/* A variable's value, or NULL for the default: unset, empty, or "auto"
 * (what mpirun --params shows for a default worked out at run time, and
 * the default wherever auto is a choice). */
static const char *mbmpi_env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "auto") ? v : NULL;
}

const char *mbmpi_env(const char *name, const char *dflt)
{
	const char *v = mbmpi_env_set(name);

	return v ? v : dflt;
}

long mbmpi_env_long(const char *name, long dflt)
{
	const char *v = mbmpi_env_set(name);
	char *end;
	long x;

	if (!v)
		return dflt;
	errno = 0;
	x = strtol(v, &end, 0);
	if (errno || *end || x < 0) {
		fprintf(stderr, "matchbox mpi: ignoring %s=%s (not a non-negative number)\n", name, v);
		return dflt;
	}
	return x;
}

/* ---- Errors ---- */

static const char *const mbmpi_errstr[] = {
	[MPI_SUCCESS] = "MPI_SUCCESS: no error",
	[MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
	[MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
	[MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid or uncommitted datatype",
	[MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
	[MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
	[MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
	[MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
	[MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
	[MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
	[MPI_ERR_OP] = "MPI_ERR_OP: invalid reduce operation",
	[MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
	[MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
	[MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
	[MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
	[MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated",
	[MPI_ERR_OTHER] = "MPI_ERR_OTHER: other error (see the message printed before it)",
	[MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
	[MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
	[MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
	[MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid keyval",
	[MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
	[MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
	[MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: not supported by this library",
	[MPI_ERR_PROC_FAILED] = "MPI_ERR_PROC_FAILED: a peer process failed",
	[MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
	[MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
	[MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size",
	[MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement",
	[MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
	[MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assertion",
	[MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
	[MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: RMA call outside an access or exposure epoch",
	[MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory outside the window",
	[MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
	[MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
	[MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor for this call",
	[MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: info key empty or too long",
	[MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: info value too long",
	[MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
	[MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: processes cannot be spawned (this library has no dynamic processes)",
	[MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
	[MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service name",
	[MPI_ERR_NAME] = "MPI_ERR_NAME: invalid service name",
	[MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle (this library has no MPI-IO)",
	[MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: arguments differ between processes",
	[MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid file access mode",
	[MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
	[MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: file does not exist",
	[MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
	[MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
	[MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
	[MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: no space left",
	[MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
	[MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or file system",
	[MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file in use",
	[MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation already defined",
	[MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: data conversion failed",
	[MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
	[MPI_T_ERR_MEMORY] = "MPI_T_ERR_MEMORY: out of memory",
	[MPI_T_ERR_NOT_INITIALIZED] = "MPI_T_ERR_NOT_INITIALIZED: MPI_T_init_thread was not called",
	[MPI_T_ERR_CANNOT_INIT] = "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be started",
	[MPI_T_ERR_INVALID_INDEX] = "MPI_T_ERR_INVALID_INDEX: no variable or category has this index",
	[MPI_T_ERR_INVALID_ITEM] = "MPI_T_ERR_INVALID_ITEM: no such item of the enumeration",
	[MPI_T_ERR_INVALID_HANDLE] = "MPI_T_ERR_INVALID_HANDLE: invalid handle",
	[MPI_T_ERR_OUT_OF_HANDLES] = "MPI_T_ERR_OUT_OF_HANDLES: no more handles",
	[MPI_T_ERR_OUT_OF_SESSIONS] = "MPI_T_ERR_OUT_OF_SESSIONS: no more sessions",
	[MPI_T_ERR_INVALID_SESSION] = "MPI_T_ERR_INVALID_SESSION: invalid session",
	[MPI_T_ERR_CVAR_SET_NOT_NOW] = "MPI_T_ERR_CVAR_SET_NOT_NOW: the variable cannot be set now",
	[MPI_T_ERR_CVAR_SET_NEVER] = "MPI_T_ERR_CVAR_SET_NEVER: the variable cannot be set",
	[MPI_T_ERR_PVAR_NO_STARTSTOP] = "MPI_T_ERR_PVAR_NO_STARTSTOP: the variable cannot be started or stopped",
	[MPI_T_ERR_PVAR_NO_WRITE] = "MPI_T_ERR_PVAR_NO_WRITE: the variable cannot be written or reset",
	[MPI_T_ERR_PVAR_NO_ATOMIC] = "MPI_T_ERR_PVAR_NO_ATOMIC: the variable cannot be read and reset atomically",
	[MPI_T_ERR_INVALID_NAME] = "MPI_T_ERR_INVALID_NAME: no variable or category has this name",
	[MPI_T_ERR_INVALID] = "MPI_T_ERR_INVALID: invalid argument",
};

/* Classes and codes added by the program: code -> class and string. */
struct mbmpi_ucode {
	int cls;
	char *str;
};
static struct mbmpi_ucode *mbmpi_ucodes; /* index: code - MPI_ERR_LASTCODE - 1 */
static int mbmpi_nucodes;
int mbmpi_lastusedcode = MPI_ERR_LASTCODE;

static struct mbmpi_ucode *mbmpi_ucode(int code)
{
	int i = code - MPI_ERR_LASTCODE - 1;

	return i >= 0 && i < mbmpi_nucodes ? &mbmpi_ucodes[i] : NULL;
}

static int mbmpi_add_code(int cls, int *out)
{
	struct mbmpi_ucode *t = realloc(mbmpi_ucodes, sizeof(*t) * (size_t)(mbmpi_nucodes + 1));

	if (!t)
		return MPI_ERR_NO_MEM;
	mbmpi_ucodes = t;
	*out = MPI_ERR_LASTCODE + 1 + mbmpi_nucodes;
	t[mbmpi_nucodes++] = (struct mbmpi_ucode){.cls = cls < 0 ? *out : cls, .str = NULL};
	mbmpi_lastusedcode = *out;
	return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
	MBMPI_GUARD();
	int ret;

	if (!errorclass)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if ((ret = mbmpi_add_code(-1, errorclass)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Add_error_class)

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
	MBMPI_GUARD();
	struct mbmpi_ucode *u = mbmpi_ucode(errorclass);
	int ret;

	/* Only a class may be given: a predefined one or one the program added. */
	if (!errorcode || errorclass < 0 ||
	    (errorclass > MPI_ERR_LASTCODE && (!u || u->cls != errorclass)))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if ((ret = mbmpi_add_code(errorclass, errorcode)))
		return MBMPI_ERR(NULL, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
	MBMPI_GUARD();
	struct mbmpi_ucode *u = mbmpi_ucode(errorcode);
	char *dup;

	/* The predefined strings stay as they are. */
	if (!u || !string || strlen(string) >= MPI_MAX_ERROR_STRING)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!(dup = strdup(string)))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	free(u->str);
	u->str = dup;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Add_error_string)

int PMPI_Error_string(int code, char *string, int *resultlen)
{
	MBMPI_GUARD();
	if (!string || !resultlen)
		return MPI_ERR_ARG;
	if (mbmpi_ucode(code)) {
		const char *u = mbmpi_ucode(code)->str;

		*resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", u ? u : "");
		return MPI_SUCCESS;
	}
	if (code < 0 || code > MPI_ERR_LASTCODE) {
		*resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "unknown error code %d", code);
		return MPI_ERR_ARG;
	}
	*resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", mbmpi_errstr[code]);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Error_string)

int PMPI_Error_class(int code, int *cls)
{
	MBMPI_GUARD();
	if (cls && mbmpi_ucode(code)) {
		*cls = mbmpi_ucode(code)->cls;
		return MPI_SUCCESS;
	}
	if (!cls || code < 0 || code > MPI_ERR_LASTCODE)
		return MPI_ERR_ARG;
	*cls = code;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Error_class)

/* The launcher's PMIx server is gone (mpirun killed, its node lost): the
 * job can never finish, and no one is left to reap or signal this rank, so
 * it ends here as MPI_Abort would end it, even while it computes without
 * calling MPI (PMIx's own thread brings the event). PMIx_Finalize takes the
 * handler away, so a rank that finished normally never sees it. */
static void mbmpi_lost_server(size_t id, pmix_status_t st, const pmix_proc_t *src,
			      pmix_info_t info[], size_t ninfo, pmix_info_t *results,
			      size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
			      void *cbdata)
{
	static const char msg[] = "matchbox mpi: lost the launcher (PMIx server); ending this rank\n";

	(void)id, (void)st, (void)src, (void)info, (void)ninfo, (void)results;
	(void)nresults, (void)cbfunc, (void)cbdata;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(1);
}

static _Noreturn void mbmpi_die(int code)
{
	if (mbmpi_pmix)
		PMIx_Abort(code, "MPI_Abort", NULL, 0);
	_exit(code ? code : 1);
}

int mbmpi_err(struct mbmpi_comm *c, int code, const char *fn)
{
	MPI_Errhandler h;

	if (code == MPI_SUCCESS)
		return code;
	if (!c)
		c = &mbmpi_comm_world;
	h = c->errh;
	if (h == MPI_ERRORS_RETURN)
		return code;
	if (h != MPI_ERRORS_ARE_FATAL && h != MPI_ERRORS_ABORT && h != MPI_ERRHANDLER_NULL && c->win) {
		/* A window's own communicator: the handler was made for windows. */
		MPI_Win handle = c->win;

		if (h->fortran)
			mbmpi_errh_call_f(h, MPI_Win_c2f(handle), &code);
		else
			((MPI_Win_errhandler_function *)(void (*)(void))h->fn)(&handle, &code, fn);
		return code;
	}
	if (h != MPI_ERRORS_ARE_FATAL && h != MPI_ERRORS_ABORT && h != MPI_ERRHANDLER_NULL) {
		MPI_Comm handle = c->predef ? (c == &mbmpi_comm_world ? MPI_COMM_WORLD : MPI_COMM_SELF)
					    : (MPI_Comm)c;
		if (h->fortran)
			mbmpi_errh_call_f(h, MPI_Comm_c2f(handle), &code);
		else
			h->fn(&handle, &code, fn);
		return code;
	}
	fprintf(stderr, "matchbox mpi: rank %d: %s: %s; aborting the job\n", mbmpi.world_rank,
		fn, code <= MPI_ERR_LASTCODE && code > 0 ? mbmpi_errstr[code] : "error");
	mbmpi_die(code);
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret = mbmpi_check_comm(comm, &c);

	if (ret)
		return MBMPI_ERR(NULL, ret);
	if (eh == MPI_ERRHANDLER_NULL)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	mbmpi_errh_retain(eh);
	mbmpi_errh_release(c->errh);
	c->errh = eh;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret = mbmpi_check_comm(comm, &c);

	if (ret)
		return MBMPI_ERR(NULL, ret);
	if (!eh)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*eh = c->errh;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_get_errhandler)

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	struct mbmpi_errh *h;

	if (!fn || !eh)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	h = malloc(sizeof(*h));
	if (!h)
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	h->fn = fn;
	h->fortran = false;
	h->refs = 1;
	*eh = h;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_create_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	if (!eh || *eh == MPI_ERRHANDLER_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	/* Communicators still using it keep it alive. */
	mbmpi_errh_release(*eh);
	*eh = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Errhandler_free)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int code)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret = mbmpi_check_comm(comm, &c);

	if (ret)
		return MBMPI_ERR(NULL, ret);
	mbmpi_err(c, code, "MPI_Comm_call_errhandler");
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_call_errhandler)

/* MPI-1 names. */
int PMPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	return PMPI_Comm_create_errhandler(fn, eh);
}
MBMPI_ALIAS(Errhandler_create)

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler eh)
{
	MBMPI_GUARD();
	return PMPI_Comm_set_errhandler(comm, eh);
}
MBMPI_ALIAS(Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	int ret = PMPI_Comm_get_errhandler(comm, eh);

	/* MPI-1's get handed out a reference the caller frees. */
	if (!ret)
		mbmpi_errh_retain(*eh);
	return ret;
}
MBMPI_ALIAS(Errhandler_get)

/* Files: there is no MPI-IO, so the only file is MPI_FILE_NULL, whose
 * handler is the default for files (MPI_ERRORS_RETURN, as the standard
 * sets it). Programs may still set and read it. */
static MPI_Errhandler mbmpi_file_errh = MPI_ERRORS_RETURN;

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))fn, eh);
}
MBMPI_ALIAS(File_create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler eh)
{
	MBMPI_GUARD();
	if (file != MPI_FILE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_FILE);
	if (eh == MPI_ERRHANDLER_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	mbmpi_errh_retain(eh);
	mbmpi_errh_release(mbmpi_file_errh);
	mbmpi_file_errh = eh;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	if (file != MPI_FILE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_FILE);
	if (!eh)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	mbmpi_errh_retain(mbmpi_file_errh);
	*eh = mbmpi_file_errh;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(File_get_errhandler)

static int mbmpi_file_err(int code, const char *fn)
{
	MPI_Errhandler h = mbmpi_file_errh;

	if (h == MPI_ERRORS_RETURN || code == MPI_SUCCESS)
		return code;
	if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT)
		return mbmpi_err(NULL, code, fn);
	{
		MPI_File f = MPI_FILE_NULL;

		if (h->fortran)
			mbmpi_errh_call_f(h, MPI_File_c2f(f), &code);
		else
			((MPI_File_errhandler_function *)(void (*)(void))h->fn)(&f, &code, fn);
	}
	return code;
}

int PMPI_File_call_errhandler(MPI_File file, int code)
{
	MBMPI_GUARD();
	if (file != MPI_FILE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_FILE);
	mbmpi_file_err(code, "MPI_File_call_errhandler");
	return MPI_SUCCESS;
}
MBMPI_ALIAS(File_call_errhandler)

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	MBMPI_GUARD();
	(void)comm, (void)filename, (void)amode, (void)info;
	if (fh)
		*fh = MPI_FILE_NULL;
	return mbmpi_file_err(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_open");
}
MBMPI_ALIAS(File_open)

int PMPI_File_close(MPI_File *fh)
{
	MBMPI_GUARD();
	(void)fh;
	return mbmpi_file_err(MPI_ERR_FILE, "MPI_File_close");
}
MBMPI_ALIAS(File_close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
	MBMPI_GUARD();
	(void)filename, (void)info;
	return mbmpi_file_err(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_delete");
}
MBMPI_ALIAS(File_delete)

/* ---- Dynamic processes: none here ---- */

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (!parent)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*parent = MPI_COMM_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_get_parent)

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
		    MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
	MBMPI_GUARD();
	(void)command, (void)argv, (void)info, (void)root;
	if (intercomm)
		*intercomm = MPI_COMM_NULL;
	for (int i = 0; errcodes && i < maxprocs; i++)
		errcodes[i] = MPI_ERR_SPAWN;
	return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_SPAWN);
}
MBMPI_ALIAS(Comm_spawn)

int PMPI_Comm_spawn_multiple(int count, char *commands[], char **argvs[], const int maxprocs[],
			     const MPI_Info info[], int root, MPI_Comm comm, MPI_Comm *intercomm,
			     int errcodes[])
{
	MBMPI_GUARD();
	(void)commands, (void)argvs, (void)info, (void)root;
	if (intercomm)
		*intercomm = MPI_COMM_NULL;
	for (int i = 0, k = 0; errcodes && maxprocs && i < count; i++)
		for (int j = 0; j < maxprocs[i]; j++)
			errcodes[k++] = MPI_ERR_SPAWN;
	return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_SPAWN);
}
MBMPI_ALIAS(Comm_spawn_multiple)

int PMPI_Open_port(MPI_Info info, char *port_name)
{
	MBMPI_GUARD();
	(void)info, (void)port_name;
	return MBMPI_ERR(NULL, MPI_ERR_UNSUPPORTED_OPERATION);
}
MBMPI_ALIAS(Open_port)

int PMPI_Close_port(const char *port_name)
{
	MBMPI_GUARD();
	(void)port_name;
	return MBMPI_ERR(NULL, MPI_ERR_PORT);
}
MBMPI_ALIAS(Close_port)

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	(void)port_name, (void)info, (void)root, (void)newcomm;
	return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_UNSUPPORTED_OPERATION);
}
MBMPI_ALIAS(Comm_accept)

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	(void)port_name, (void)info, (void)root, (void)newcomm;
	return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_UNSUPPORTED_OPERATION);
}
MBMPI_ALIAS(Comm_connect)

/* Every communicator here is connected only by MPI itself, so
 * disconnecting is freeing once pending traffic is done. */
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if (!comm || (ret = mbmpi_check_comm(*comm, &c)))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if ((ret = PMPI_Barrier(*comm)))
		return ret;
	return PMPI_Comm_free(comm);
}
MBMPI_ALIAS(Comm_disconnect)

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
	MBMPI_GUARD();
	(void)fd;
	if (intercomm)
		*intercomm = MPI_COMM_NULL;
	return MBMPI_ERR(NULL, MPI_ERR_UNSUPPORTED_OPERATION);
}
MBMPI_ALIAS(Comm_join)

int PMPI_Publish_name(const char *service, MPI_Info info, const char *port)
{
	MBMPI_GUARD();
	(void)service, (void)info, (void)port;
	return MBMPI_ERR(NULL, MPI_ERR_UNSUPPORTED_OPERATION);
}
MBMPI_ALIAS(Publish_name)

int PMPI_Unpublish_name(const char *service, MPI_Info info, const char *port)
{
	MBMPI_GUARD();
	(void)service, (void)info, (void)port;
	return MBMPI_ERR(NULL, MPI_ERR_UNSUPPORTED_OPERATION);
}
MBMPI_ALIAS(Unpublish_name)

int PMPI_Lookup_name(const char *service, MPI_Info info, char *port)
{
	MBMPI_GUARD();
	(void)service, (void)info, (void)port;
	return MBMPI_ERR(NULL, MPI_ERR_NAME);
}
MBMPI_ALIAS(Lookup_name)

/* Profiling control: no profiler is built in; a profiling layer that
 * wraps MPI_Pcontrol sees the call. */
int PMPI_Pcontrol(const int level, ...)
{
	MBMPI_GUARD();
	(void)level;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Pcontrol)

/* ---- Start-up ---- */

/* Programs built with our mpicc find the matchbox provider beside libmpi,
 * in the build tree or installed, with no FI_PROVIDER_PATH set by hand. */
static void mbmpi_provider_path(void)
{
	Dl_info info;
	char self[PATH_MAX], dir[PATH_MAX + 64];
	const char *old = getenv("FI_PROVIDER_PATH");
	const char *pick = MBMPI_PROV_INSTALL_DIR;
	char *slash;

	if (dladdr((void *)mbmpi_provider_path, &info) && info.dli_fname &&
	    realpath(info.dli_fname, self)) {
		slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		if (!strcmp(self, MBMPI_BUILD_LIB_DIR))
			pick = MBMPI_PROV_BUILD_DIR;
	}
	if (old && strstr(old, pick))
		return;
	snprintf(dir, sizeof(dir), "%s%s%s", pick, old ? ":" : "", old ? old : "");
	setenv("FI_PROVIDER_PATH", dir, 1);
}

static int mbmpi_count_cpus(void)
{
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* Exchanges {fabric address, node name} through PMIx and fills the AV. */
static int mbmpi_modex(fi_addr_t *addrs)
{
	/* Room for the host engine's names of every rail (up to five of 120
	 * bytes) and a node name. */
	char blob[1024], *all = NULL;
	size_t alen = 768, hlen;
	pmix_value_t val, *pv;
	pmix_info_t info;
	pmix_proc_t proc;
	bool collect = true;
	int ret = MPI_ERR_OTHER, n = mbmpi.world_size;
	size_t stride = 0;

	if (mbmpi.eng->getname(blob + 2, &alen) || alen > 768) {
		fprintf(stderr, "matchbox mpi: this rank's fabric address does not fit in 768 bytes\n");
		return MPI_ERR_OTHER;
	}
	blob[0] = (char)(alen & 0xff);
	blob[1] = (char)(alen >> 8);
	{
		/* The node is the host name and the network namespace, as in the
		 * provider: ranks in other namespaces stand for other nodes. */
		struct stat st;
		char node[MPI_MAX_PROCESSOR_NAME + 32];

		if (stat("/proc/self/ns/net", &st))
			st.st_ino = 0;
		snprintf(node, sizeof(node), "%s/%llu", mbmpi.procname,
			 (unsigned long long)st.st_ino);
		hlen = strlen(node) + 1;
		if (hlen > sizeof(blob) - 2 - alen)
			return MPI_ERR_INTERN;
		memcpy(blob + 2 + alen, node, hlen);
	}

	mbmpi.hosts = calloc((size_t)n, sizeof(char *));
	if (!mbmpi.hosts)
		return MPI_ERR_NO_MEM;
	if (!mbmpi_pmix) {
		mbmpi.hosts[0] = strdup(blob + 2 + alen);
		ret = mbmpi.eng->insert(blob + 2, alen, 1, addrs) ? MPI_ERR_OTHER : MPI_SUCCESS;
		return ret;
	}

	val.type = PMIX_BYTE_OBJECT;
	val.data.bo.bytes = blob;
	val.data.bo.size = 2 + alen + hlen;
	if (PMIx_Put(PMIX_GLOBAL, "mbmpi.addr", &val) != PMIX_SUCCESS ||
	    PMIx_Commit() != PMIX_SUCCESS)
		return MPI_ERR_OTHER;
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	PMIX_PROC_LOAD(&proc, mbmpi_proc.nspace, PMIX_RANK_WILDCARD);
	if (PMIx_Fence(&proc, 1, &info, 1) != PMIX_SUCCESS)
		return MPI_ERR_OTHER;
	for (int r = 0; r < n; r++) {
		size_t al;
		const char *b;

		PMIX_PROC_LOAD(&proc, mbmpi_proc.nspace, (pmix_rank_t)r);
		if (PMIx_Get(&proc, "mbmpi.addr", NULL, 0, &pv) != PMIX_SUCCESS)
			goto out;
		b = pv->data.bo.bytes;
		al = pv->type == PMIX_BYTE_OBJECT && pv->data.bo.size > 2
			     ? ((size_t)(unsigned char)b[0] | (size_t)(unsigned char)b[1] << 8)
			     : 0;
		if (!al || al + 3 > pv->data.bo.size || b[pv->data.bo.size - 1] ||
		    (stride && al != stride)) {
			fprintf(stderr, "matchbox mpi: rank %d published a malformed address\n", r);
			PMIX_VALUE_RELEASE(pv);
			goto out;
		}
		if (!all) {
			stride = al;
			all = malloc(stride * (size_t)n);
			if (!all) {
				PMIX_VALUE_RELEASE(pv);
				ret = MPI_ERR_NO_MEM;
				goto out;
			}
		}
		memcpy(all + (size_t)r * stride, b + 2, al);
		mbmpi.hosts[r] = strdup(b + 2 + al);
		PMIX_VALUE_RELEASE(pv);
		if (!mbmpi.hosts[r]) {
			ret = MPI_ERR_NO_MEM;
			goto out;
		}
	}
	if (!(mbmpi.remote = calloc((size_t)n, 1))) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	for (int w = 0; w < n; w++)
		mbmpi.remote[w] = !mbmpi_same_node(w);
	ret = mbmpi.eng->insert(all, stride, n, addrs) ? MPI_ERR_OTHER : MPI_SUCCESS;
out:
	free(all);
	return ret;
}

static int mbmpi_alg(const char *var, const char *const *names)
{
	const char *v = mbmpi_env(var, "auto");

	if (!strcmp(v, "auto"))
		return 0;
	for (int i = 0; names[i]; i++)
		if (!strcmp(v, names[i]))
			return i + 1;
	fprintf(stderr, "matchbox mpi: unknown %s=%s, using auto\n", var, v);
	return 0;
}

static void mbmpi_read_params(void)
{
	static const char *const barrier[] = {"dissemination", NULL};
	static const char *const bcast[] = {"binomial", "scatter_allgather", NULL};
	static const char *const allreduce[] = {"recursive_doubling", "rabenseifner", NULL};
	static const char *const allgather[] = {"recursive_doubling", "bruck", "ring", NULL};
	static const char *const alltoall[] = {"bruck", "pairwise", "linear", NULL};
	static const char *const rs[] = {"pairwise", "reduce_scatterv", NULL};

	mbmpi.alg_barrier = mbmpi_alg("MATCHBOX_MPI_BARRIER", barrier);
	mbmpi.alg_bcast = mbmpi_alg("MATCHBOX_MPI_BCAST", bcast);
	mbmpi.alg_allreduce = mbmpi_alg("MATCHBOX_MPI_ALLREDUCE", allreduce);
	mbmpi.alg_allgather = mbmpi_alg("MATCHBOX_MPI_ALLGATHER", allgather);
	mbmpi.alg_alltoall = mbmpi_alg("MATCHBOX_MPI_ALLTOALL", alltoall);
	mbmpi.alg_reduce_scatter = mbmpi_alg("MATCHBOX_MPI_REDUCE_SCATTER", rs);
	mbmpi.spin = (int)mbmpi_env_long("MATCHBOX_MPI_SPIN", 64);
	mbmpi.coll_shm = (size_t)mbmpi_env_long("MATCHBOX_MPI_COLL_SHM", 16384);
	mbmpi.coll_hier = mbmpi_env_long("MATCHBOX_MPI_COLL_HIER", 1) != 0;
}

/* Several NICs for matchbox's own rails: the first carries its net wire,
 * the rest are read over (FI_MATCHBOX_NET_IFACE, FI_MATCHBOX_NET_RAILS),
 * unless the user set those. Only when every name is a network interface
 * of this host (device names such as mlx5_0 are the host engine's). */
static bool mbmpi_rails_to_matchbox(const char *list)
{
	char buf[256], rails[256] = "", *save = NULL, *tok, *first;

	if (getenv("FI_MATCHBOX_NET_RAILS") || strlen(list) >= sizeof(buf))
		return false;
	strcpy(buf, list);
	first = strtok_r(buf, ",", &save);
	if (!first || !if_nametoindex(first))
		return false;
	while ((tok = strtok_r(NULL, ",", &save))) {
		if (!if_nametoindex(tok))
			return false;
		if (rails[0])
			strcat(rails, ",");
		strcat(rails, tok);
	}
	if (!rails[0])
		return false;
	if (!getenv("FI_MATCHBOX_NET_IFACE"))
		setenv("FI_MATCHBOX_NET_IFACE", first, 1);
	setenv("FI_MATCHBOX_NET_RAILS", rails, 1);
	return true;
}

/* Which engine matches: the provider when it is one that matches well
 * itself (matchbox, and the fabrics whose hardware or library matches), libmpi
 * otherwise. MATCHBOX_MPI_ENGINE=tagged|host|auto. */
static const struct mbmpi_engine *mbmpi_choose_engine(void)
{
	static const char *const matchers[] = {"matchbox", "cxi", "psm2", "psm3", "opx"};
	const char *want = mbmpi_env("MATCHBOX_MPI_ENGINE", "auto");
	const char *prov = mbmpi_env("MATCHBOX_MPI_PROVIDER", "matchbox");
	const struct mbmpi_engine *e = NULL;
	const char *why = "asked for";
	const char *progress = mbmpi_env("MATCHBOX_MPI_PROGRESS", "manual");

	if (strcmp(progress, "manual") && strcmp(progress, "thread")) {
		fprintf(stderr, "matchbox mpi: MATCHBOX_MPI_PROGRESS=%s: expected manual or thread\n",
			progress);
		return NULL;
	}
	mbmpi.progress_thread = !strcmp(progress, "thread");

	if (!strcmp(want, "tagged")) {
		e = &mbmpi_tagged_engine;
	} else if (!strcmp(want, "host")) {
		e = &mbmpi_host_engine;
	} else if (!strcmp(want, "auto")) {
		size_t n = strcspn(prov, ";");

		e = &mbmpi_host_engine;
		why = "auto: the provider does not match in hardware or in itself";
		for (size_t i = 0; i < sizeof(matchers) / sizeof(matchers[0]); i++)
			if (strlen(matchers[i]) == n && !strncmp(prov, matchers[i], n)) {
				e = &mbmpi_tagged_engine;
				why = "auto: the provider matches";
			}
		/* Several NICs named: matchbox stripes over them itself when
		 * they are interfaces here (its rails) and no other provider
		 * is named for the host engine; another tagged provider
		 * reaches a node by one, so the host engine does. */
		const char *nics = mbmpi_env("MATCHBOX_MPI_HOST_NET_DOMAINS", "");

		if (strchr(nics, ',')) {
			const char *hp = mbmpi_env("MATCHBOX_MPI_HOST_PROVIDERS", "matchbox");

			if (e == &mbmpi_tagged_engine && !strcmp(prov, "matchbox") &&
			    !strcmp(hp, "matchbox") && mbmpi_rails_to_matchbox(nics)) {
				why = "auto: matchbox stripes over the NICs of "
				      "MATCHBOX_MPI_HOST_NET_DOMAINS itself (FI_MATCHBOX_NET_RAILS)";
			} else {
				e = &mbmpi_host_engine;
				why = "auto: MATCHBOX_MPI_HOST_NET_DOMAINS names several NICs, which "
				      "only the host engine stripes over with this provider";
			}
		}
	} else {
		fprintf(stderr, "matchbox mpi: MATCHBOX_MPI_ENGINE=%s: expected tagged, host or auto\n",
			want);
		return NULL;
	}
	if (mbmpi.world_rank == 0 && mbmpi_env_long("MATCHBOX_MPI_VERBOSE", 0) > 0)
		fprintf(stderr, "matchbox mpi: %s engine over %s (%s), %s progress\n", e->name,
			e == &mbmpi_host_engine ? mbmpi_env("MATCHBOX_MPI_HOST_PROVIDERS", prov) : prov,
			why, mbmpi.progress_thread ? "thread" : "manual");
	return e;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	MBMPI_GUARD();
	fi_addr_t *addrs = NULL;
	const char *y;
	int ret, local = 0;

	if (argc && argv)
		mbmpi_info_set_args(*argc, *argv);
	if (mbmpi.initialized || mbmpi.finalized) {
		fprintf(stderr, "matchbox mpi: MPI_Init called twice\n");
		return MPI_ERR_OTHER;
	}
	mbmpi.thread_level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
			     : required < MPI_THREAD_SINGLE   ? MPI_THREAD_SINGLE
							      : required;
	mbmpi_main_thread = pthread_self();
	if (provided)
		*provided = mbmpi.thread_level;
	mbmpi_read_params();
	mbmpi_provider_path();
	if (gethostname(mbmpi.procname, sizeof(mbmpi.procname) - 1))
		strcpy(mbmpi.procname, "localhost");
	mbu_dlist_init(&mbmpi.bsends);
	mbu_dlist_init(&mbmpi.bflushes);
	mbmpi_dtype_init();

	/* No PMIx server in the environment: a singleton, as `./a.out`. */
	if (getenv("PMIX_NAMESPACE") || getenv("PMIX_SERVER_URI41") || getenv("PMIX_SERVER_URI4") ||
	    getenv("PMIX_SERVER_URI3") || getenv("PMIX_SERVER_URI2")) {
		pmix_value_t *v;
		pmix_proc_t wild;

		if (PMIx_Init(&mbmpi_proc, NULL, 0) != PMIX_SUCCESS) {
			fprintf(stderr, "matchbox mpi: PMIx_Init failed\n");
			return MPI_ERR_OTHER;
		}
		mbmpi_pmix = true;
		{
			pmix_status_t lost = PMIX_ERR_LOST_CONNECTION;

			if (PMIx_Register_event_handler(&lost, 1, NULL, 0, mbmpi_lost_server,
							NULL, NULL) < 0)
				fprintf(stderr, "matchbox mpi: cannot watch the launcher's "
					"connection; this rank will outlive a killed mpirun\n");
		}
		PMIX_PROC_LOAD(&wild, mbmpi_proc.nspace, PMIX_RANK_WILDCARD);
		if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS) {
			fprintf(stderr, "matchbox mpi: PMIx has no job size\n");
			return MPI_ERR_OTHER;
		}
		mbmpi.world_size = (int)v->data.uint32;
		PMIX_VALUE_RELEASE(v);
		mbmpi.world_rank = (int)mbmpi_proc.rank;
	} else {
		mbmpi.singleton = true;
		mbmpi.world_size = 1;
		mbmpi.world_rank = 0;
	}

	mbmpi.eng = mbmpi_choose_engine();
	if (!mbmpi.eng)
		return MPI_ERR_ARG;
	ret = mbmpi.eng->init();
	if (ret)
		return ret;
	addrs = malloc(sizeof(*addrs) * (size_t)mbmpi.world_size);
	if (!addrs)
		return MPI_ERR_NO_MEM;
	ret = mbmpi_modex(addrs);
	if (ret) {
		free(addrs);
		return ret;
	}
	for (int r = 0; r < mbmpi.world_size; r++)
		local += mbmpi_same_node(r);
	mbmpi.local_size = local;
	y = mbmpi_env("MATCHBOX_MPI_YIELD", "auto");
	mbmpi.yield = !strcmp(y, "auto") ? local > mbmpi_count_cpus() : atoi(y) != 0;

	mbmpi_comm_world.addr = addrs;
	ret = mbmpi_comm_init();
	if (ret)
		return ret;
	mbmpi.initialized = 1;
	/* From here on every call takes the library lock. */
	mbmpi_mt = mbmpi.thread_level == MPI_THREAD_MULTIPLE;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Init_thread)

int PMPI_Init(int *argc, char ***argv)
{
	MBMPI_GUARD();
	int provided;
	return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}
MBMPI_ALIAS(Init)

int PMPI_Finalize(void)
{
	MBMPI_GUARD();
	int ret;

	MBMPI_CHECK_INIT();
	mbmpi_bsend_detach_wait();
	/* Collectives whose requests the program freed while active still run:
	 * they finish here, while every rank still answers. Bounded, because
	 * an erroneous program may have started one the others never will. */
	{
		double t0 = PMPI_Wtime();
		int spins = 0;

		while (mbmpi_nbc_live && PMPI_Wtime() - t0 < 2.0)
			if (!mbmpi_poll())
				mbmpi_idle(&spins);
	}
	/* Every rank's sends are matched before anyone closes its endpoint. */
	ret = mbmpi_barrier(&mbmpi_comm_world);
	/* Finalize frees MPI_COMM_SELF first, as far as attributes go, so
	 * libraries learn of the end through their delete callbacks. */
	mbmpi_attr_clear(MBMPI_KV_COMM, MPI_COMM_SELF, &mbmpi_comm_self.attrs);
	mbmpi_attr_clear(MBMPI_KV_COMM, MPI_COMM_WORLD, &mbmpi_comm_world.attrs);
	mbmpi_comm_fini();
	mbmpi_attr_fini();
	mbmpi_info_fini();
	mbmpi_f2c_fini();
	mbmpi_fort_fini();
	mbmpi_f90_fini();
	mbmpi_p2p_fini();
	mbmpi_dtype_fini();
	mbmpi.eng->fini();
	for (int r = 0; r < mbmpi.world_size && mbmpi.hosts; r++)
		free(mbmpi.hosts[r]);
	free(mbmpi.hosts);
	mbmpi.hosts = NULL;
	free(mbmpi.remote);
	mbmpi.remote = NULL;
	if (mbmpi_pmix)
		PMIx_Finalize(NULL, 0);
	mbmpi.finalized = 1;
	return ret;
}
MBMPI_ALIAS(Finalize)

int PMPI_Initialized(int *flag)
{
	MBMPI_GUARD();
	if (!flag)
		return MPI_ERR_ARG;
	*flag = mbmpi.initialized;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Initialized)

int PMPI_Finalized(int *flag)
{
	MBMPI_GUARD();
	if (!flag)
		return MPI_ERR_ARG;
	*flag = mbmpi.finalized;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Finalized)

int PMPI_Query_thread(int *provided)
{
	MBMPI_GUARD();
	if (!provided)
		return MPI_ERR_ARG;
	*provided = mbmpi.thread_level;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
	MBMPI_GUARD();
	if (!flag)
		return MPI_ERR_ARG;
	*flag = pthread_equal(pthread_self(), mbmpi_main_thread);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Is_thread_main)

int PMPI_Abort(MPI_Comm comm, int code)
{
	MBMPI_GUARD();
	(void)comm; /* aborting a sub-communicator ends the whole job, as allowed */
	fflush(stdout);
	fflush(stderr);
	mbmpi_die(code);
}
MBMPI_ALIAS(Abort)

int MPIX_Fabric_getopt(int optname, void *optval, size_t *optlen)
{
	if (!mbmpi.initialized || mbmpi.finalized)
		return MPI_ERR_OTHER;
	if (!optval || !optlen)
		return MPI_ERR_ARG;
	if (!mbmpi.eng->getopt)
		return MPI_ERR_UNSUPPORTED_OPERATION;
	return mbmpi.eng->getopt(optname, optval, optlen);
}

double PMPI_Wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
MBMPI_ALIAS(Wtime)

double PMPI_Wtick(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC, &ts))
		return 1e-9;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
MBMPI_ALIAS(Wtick)

int PMPI_Get_processor_name(char *name, int *len)
{
	MBMPI_GUARD();
	if (!name || !len)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!mbmpi.procname[0] && gethostname(mbmpi.procname, sizeof(mbmpi.procname) - 1))
		strcpy(mbmpi.procname, "localhost");
	*len = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", mbmpi.procname);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Get_processor_name)

int PMPI_Get_version(int *version, int *subversion)
{
	MBMPI_GUARD();
	if (!version || !subversion)
		return MPI_ERR_ARG;
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Get_version)

int PMPI_Get_library_version(char *version, int *len)
{
	MBMPI_GUARD();
	if (!version || !len)
		return MPI_ERR_ARG;
	*len = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
			"Matchbox MPI %s (tagged engine over libfabric %u.%u, provider %s)",
			MBMPI_VERSION, FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
			mbmpi_env("MATCHBOX_MPI_PROVIDER", "matchbox"));
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Get_library_version)

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	MBMPI_GUARD();
	void *p;

	(void)info;
	if (size < 0 || !baseptr)
		return MBMPI_ERR(NULL, size < 0 ? MPI_ERR_ARG : MPI_ERR_ARG);
	p = NULL;
	if (posix_memalign(&p, 64, size ? (size_t)size : 1))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Alloc_mem)

int PMPI_Free_mem(void *base)
{
	MBMPI_GUARD();
	free(base);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Free_mem)

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
	MBMPI_GUARD();
	if (!address)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*address = (MPI_Aint)location;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Get_address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	MBMPI_GUARD();
	return base + disp;
}
MBMPI_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint a, MPI_Aint b)
{
	MBMPI_GUARD();
	return a - b;
}
MBMPI_ALIAS(Aint_diff)

/* ---- The library lock ---- */

bool mbmpi_mt;
static pthread_mutex_t mbmpi_mt_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int mbmpi_mt_depth; /* this thread's holds of the lock */
static int mbmpi_mt_waiting;              /* threads blocked on it */

int mbmpi_lock(void)
{
	if (mbmpi_mt_depth) {
		mbmpi_mt_depth++;
		return 1;
	}
	__atomic_add_fetch(&mbmpi_mt_waiting, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&mbmpi_mt_lock);
	__atomic_sub_fetch(&mbmpi_mt_waiting, 1, __ATOMIC_RELAXED);
	mbmpi_mt_depth = 1;
	return 1;
}

void mbmpi_unlock(void)
{
	if (--mbmpi_mt_depth == 0)
		pthread_mutex_unlock(&mbmpi_mt_lock);
}

/* A waiting thread lets the others run: the lock goes to whoever is
 * blocked on it, then comes back at the same depth. */
static void mbmpi_mt_pause(void)
{
	int depth = mbmpi_mt_depth;

	if (!depth || !__atomic_load_n(&mbmpi_mt_waiting, __ATOMIC_RELAXED))
		return;
	mbmpi_mt_depth = 0;
	pthread_mutex_unlock(&mbmpi_mt_lock);
	sched_yield();
	mbmpi_lock();
	mbmpi_mt_depth = depth;
}

/* ---- Blocking-wait policy ---- */

void mbmpi_idle(int *spins)
{
	if (MBMPI_UNLIKELY(mbmpi_mt))
		mbmpi_mt_pause();
	if (mbmpi.yield && ++*spins > mbmpi.spin)
		sched_yield();
}
