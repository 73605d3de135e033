/*
 * The environment calls: thread levels, Initialized/Finalized, timers,
 * names and versions, error strings and classes, error handlers (returning,
 * user-defined), memory allocation, the predefined attributes, the
 * MPIX_Fabric_getopt extension (the provider's counters), and the tool
 * information interface (MPI_T) before MPI_Init and after MPI_Finalize.
 */
#include "mt.h"

#include <rdma/fi_ext_matchbox.h>

static int handler_calls, handler_code;

static void my_handler(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	handler_calls++;
	handler_code = *code;
}

/* MPI_T works before MPI_Init and after MPI_Finalize: every control
 * variable described and read, the library's own value (the environment's,
 * or the default) read back, nothing writable, the performance counters
 * described and driven through handles, one category holding the
 * variables, and the errors. */
static void tool_interface(void)
{
	int provided = -1, n = -1, idx = -1, count = 0, stamp = -1;
	char name[128], desc[1024], val[512];
	MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
	MPI_T_pvar_session ses = MPI_T_PVAR_SESSION_NULL;
	MPI_T_pvar_handle ph = MPI_T_PVAR_HANDLE_NULL;
	unsigned long long val64 = 0;

	CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED);
	CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
	CHECK_MPI(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
	CHECK(provided == MPI_THREAD_MULTIPLE);
	CHECK_MPI(MPI_T_cvar_get_num(&n));
	CHECK(n >= 10);
	for (int i = 0; i < n; i++) {
		int nl = sizeof(name), dl = sizeof(desc), verb = 0, bind = 0, scope = 0, need = 0;
		MPI_Datatype dt = MPI_DATATYPE_NULL;
		MPI_T_enum et = (MPI_T_enum)1;

		CHECK_MPI(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &et, desc, &dl, &bind, &scope));
		CHECK(nl == (int)strlen(name) + 1 && dl == (int)strlen(desc) + 1 && dl > 10);
		CHECK(!strncmp(name, "MATCHBOX_MPI_", 13));
		CHECK(dt == MPI_CHAR && et == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT);
		CHECK(scope == MPI_T_SCOPE_READONLY);
		CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL);
		/* Lengths alone, then a buffer too small: truncated, terminated. */
		CHECK_MPI(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL,
					      NULL));
		CHECK(need == nl);
		need = 5;
		CHECK_MPI(MPI_T_cvar_get_info(i, name, &need, NULL, NULL, NULL, NULL, NULL, NULL,
					      NULL));
		CHECK(need == 5 && strlen(name) == 4);
		CHECK_MPI(MPI_T_cvar_get_info(i, name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
		CHECK_MPI(MPI_T_cvar_get_index(name, &idx));
		CHECK(idx == i);
		CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
		CHECK(count > 0 && count <= (int)sizeof(val));
		CHECK_MPI(MPI_T_cvar_read(h, val));
		if (getenv(name))
			CHECK(!strcmp(val, getenv(name)));
		else
			CHECK(strlen(val) > 0);	/* the default */
		CHECK(MPI_T_cvar_write(h, "1") == MPI_T_ERR_CVAR_SET_NEVER);
		CHECK_MPI(MPI_T_cvar_handle_free(&h));
		CHECK(h == MPI_T_CVAR_HANDLE_NULL);
	}
	/* A value set in the environment is the value read. */
	setenv("MATCHBOX_MPI_SPIN", "77", 1);
	CHECK_MPI(MPI_T_cvar_get_index("MATCHBOX_MPI_SPIN", &idx));
	CHECK_MPI(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
	CHECK_MPI(MPI_T_cvar_read(h, val));
	CHECK(!strcmp(val, "77"));
	CHECK_MPI(MPI_T_cvar_handle_free(&h));
	unsetenv("MATCHBOX_MPI_SPIN");
	CHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
	      MPI_T_ERR_INVALID_INDEX);
	CHECK(MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &idx) == MPI_T_ERR_INVALID_NAME);
	CHECK(MPI_T_cvar_handle_alloc(-1, NULL, &h, &count) == MPI_T_ERR_INVALID_INDEX);
	CHECK(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, val) == MPI_T_ERR_INVALID_HANDLE);

	CHECK_MPI(MPI_T_pvar_get_num(&n));
	CHECK(n == 4);
	for (int i = 0; i < n; i++) {
		int nl = sizeof(name), dl = sizeof(desc), verb = 0, cls = 0, bind = 0, ro = 0, cont = 0;
		int atom = -1;
		MPI_Datatype dt = MPI_DATATYPE_NULL;
		MPI_T_enum et = (MPI_T_enum)1;

		CHECK_MPI(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc, &dl, &bind,
					      &ro, &cont, &atom));
		CHECK(!strncmp(name, "matchbox_mpi_", 13) && dl > 10);
		CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG);
		CHECK(et == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT && !ro && !cont && !atom);
		CHECK_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
		CHECK(idx == i);
		CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_LEVEL, &idx) ==
		      MPI_T_ERR_INVALID_NAME);
	}
	CHECK(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
				  NULL, NULL) == MPI_T_ERR_INVALID_INDEX);
	CHECK_MPI(MPI_T_pvar_session_create(&ses));
	CHECK_MPI(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
	CHECK_MPI(MPI_T_pvar_stop(ses, MPI_T_PVAR_ALL_HANDLES));
	CHECK_MPI(MPI_T_pvar_reset(ses, MPI_T_PVAR_ALL_HANDLES));
	CHECK(MPI_T_pvar_handle_alloc(ses, n, NULL, &ph, &count) == MPI_T_ERR_INVALID_INDEX);
	CHECK_MPI(MPI_T_pvar_handle_alloc(ses, 0, NULL, &ph, &count));
	CHECK(count == 1);
	/* A new handle reads 0; it can be written, reset, started, stopped. */
	val64 = 99;
	CHECK_MPI(MPI_T_pvar_read(ses, ph, &val64));
	CHECK(val64 == 0);
	val64 = 41;
	CHECK_MPI(MPI_T_pvar_write(ses, ph, &val64));
	CHECK_MPI(MPI_T_pvar_start(ses, ph));
	CHECK_MPI(MPI_T_pvar_start(ses, ph));
	CHECK_MPI(MPI_T_pvar_readreset(ses, ph, &val64));
	CHECK(val64 == 41);
	CHECK_MPI(MPI_T_pvar_read(ses, ph, &val64));
	CHECK(val64 == 0);
	CHECK_MPI(MPI_T_pvar_stop(ses, ph));
	CHECK_MPI(MPI_T_pvar_reset(ses, ph));
	CHECK(MPI_T_pvar_write(ses, ph, NULL) == MPI_T_ERR_INVALID);
	CHECK(MPI_T_pvar_read(ses, ph, NULL) == MPI_T_ERR_INVALID);
	CHECK(MPI_T_pvar_read(ses, MPI_T_PVAR_ALL_HANDLES, &val64) == MPI_T_ERR_INVALID_HANDLE);
	/* A handle belongs to its session; freeing the session frees the rest. */
	{
		MPI_T_pvar_session other = MPI_T_PVAR_SESSION_NULL;
		MPI_T_pvar_handle left = MPI_T_PVAR_HANDLE_NULL;

		CHECK_MPI(MPI_T_pvar_session_create(&other));
		CHECK(MPI_T_pvar_read(other, ph, &val64) == MPI_T_ERR_INVALID_HANDLE);
		CHECK_MPI(MPI_T_pvar_handle_alloc(other, 1, NULL, &left, &count));
		CHECK_MPI(MPI_T_pvar_session_free(&other));
	}
	CHECK_MPI(MPI_T_pvar_handle_free(ses, &ph));
	CHECK(ph == MPI_T_PVAR_HANDLE_NULL);
	CHECK(MPI_T_pvar_handle_free(ses, &ph) == MPI_T_ERR_INVALID_HANDLE);
	CHECK_MPI(MPI_T_pvar_session_free(&ses));
	CHECK(ses == MPI_T_PVAR_SESSION_NULL);
	CHECK(MPI_T_pvar_session_free(&ses) == MPI_T_ERR_INVALID_SESSION);

	CHECK_MPI(MPI_T_category_get_num(&n));
	CHECK(n == 1);
	{
		int nl = sizeof(name), nc = -1, np = -1, ncat = -1, all = 0, *ix;

		CHECK_MPI(MPI_T_category_get_info(0, name, &nl, NULL, NULL, &nc, &np, &ncat));
		CHECK_MPI(MPI_T_cvar_get_num(&all));
		CHECK(nc == all && np == 4 && ncat == 0);
		CHECK_MPI(MPI_T_category_get_index(name, &idx));
		CHECK(idx == 0);
		ix = calloc((size_t)nc, sizeof(int));
		CHECK_MPI(MPI_T_category_get_cvars(0, nc, ix));
		CHECK(ix[nc - 1] == nc - 1);
		free(ix);
	}
	CHECK_MPI(MPI_T_category_changed(&stamp));
	CHECK(stamp >= 0);
	CHECK_MPI(MPI_T_finalize());
	CHECK_MPI(MPI_T_finalize());
	CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED);
}

/* Started handles count exactly what the program sent and received while
 * they were started: a ring exchange of a small (injected) and a large
 * message, with no other traffic in between; a handle not started, or
 * stopped, does not move. */
static void pvar_counts(int rank, int size)
{
	enum { SM = 0, SB, RM, RB };
	static char big[200000], in[2][200000];
	const char *names[4] = {"matchbox_mpi_sent_messages", "matchbox_mpi_sent_bytes",
				"matchbox_mpi_received_messages", "matchbox_mpi_received_bytes"};
	unsigned long long before[4], after[4];
	MPI_T_pvar_session ses;
	MPI_T_pvar_handle h[4], idle;
	unsigned long long idle_v = 1;
	MPI_Request rq[4];
	int provided, idx, count;
	double small = rank;

	CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
	CHECK_MPI(MPI_T_pvar_session_create(&ses));
	for (int i = 0; i < 4; i++) {
		CHECK_MPI(MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
		CHECK_MPI(MPI_T_pvar_handle_alloc(ses, idx, NULL, &h[i], &count));
	}
	CHECK_MPI(MPI_T_pvar_handle_alloc(ses, 0, NULL, &idle, &count));
	CHECK_MPI(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
	CHECK_MPI(MPI_T_pvar_stop(ses, idle));
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 4; i++)
		CHECK_MPI(MPI_T_pvar_read(ses, h[i], &before[i]));
	MPI_Irecv(in[0], 8, MPI_BYTE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &rq[0]);
	MPI_Irecv(in[1], sizeof(big), MPI_BYTE, (rank + size - 1) % size, 2, MPI_COMM_WORLD, &rq[1]);
	MPI_Isend(&small, 8, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD, &rq[2]);
	MPI_Isend(big, sizeof(big), MPI_BYTE, (rank + 1) % size, 2, MPI_COMM_WORLD, &rq[3]);
	MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < 4; i++)
		CHECK_MPI(MPI_T_pvar_read(ses, h[i], &after[i]));
	CHECK(after[SM] - before[SM] == 2 && after[SB] - before[SB] == 8 + sizeof(big));
	CHECK(after[RM] - before[RM] == 2 && after[RB] - before[RB] == 8 + sizeof(big));
	CHECK_MPI(MPI_T_pvar_read(ses, idle, &idle_v));
	CHECK(idle_v == 0);
	/* Stopped, a handle keeps its count. */
	CHECK_MPI(MPI_T_pvar_stop(ses, MPI_T_PVAR_ALL_HANDLES));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_T_pvar_read(ses, h[SM], &before[SM]));
	CHECK(before[SM] == after[SM]);
	CHECK_MPI(MPI_T_pvar_session_free(&ses));
	CHECK_MPI(MPI_T_finalize());
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int provided, flag, len, v, sv, size, *attr, cls;
	char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING], es[MPI_MAX_ERROR_STRING];
	double t0, t1;
	MPI_Errhandler eh, got;
	void *mem;

	CHECK_MPI(MPI_Initialized(&flag));
	CHECK(!flag);
	tool_interface();
	CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* One lock around the library gives MULTIPLE (t_thread drives it). */
	CHECK(provided == MPI_THREAD_MULTIPLE);
	pvar_counts(mt_rank, size);
	CHECK_MPI(MPI_Query_thread(&v));
	CHECK(v == provided);
	/* MPI_T's classes are error classes like the others. */
	CHECK(MPI_Error_class(MPI_T_ERR_INVALID, &cls) == MPI_SUCCESS && cls == MPI_T_ERR_INVALID);
	CHECK(MPI_T_ERR_INVALID <= MPI_ERR_LASTCODE);
	len = 0;
	CHECK_MPI(MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER, es, &len));
	CHECK(len > 0 && strstr(es, "MPI_T_ERR_CVAR_SET_NEVER"));
	CHECK_MPI(MPI_Is_thread_main(&flag));
	CHECK(flag);
	CHECK_MPI(MPI_Initialized(&flag));
	CHECK(flag);
	CHECK_MPI(MPI_Finalized(&flag));
	CHECK(!flag);

	t0 = MPI_Wtime();
	for (volatile int i = 0; i < 100000; i++)
		;
	t1 = MPI_Wtime();
	CHECK(t1 >= t0 && t1 - t0 < 10);
	CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1e-3);

	CHECK_MPI(MPI_Get_processor_name(name, &len));
	CHECK(len > 0 && (int)strlen(name) == len);
	CHECK_MPI(MPI_Get_version(&v, &sv));
	CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION);
	CHECK_MPI(MPI_Get_library_version(lib, &len));
	CHECK(len > 0 && strstr(lib, "Matchbox") != NULL);

	for (int e = MPI_SUCCESS; e <= MPI_ERR_LASTCODE; e++) {
		CHECK_MPI(MPI_Error_string(e, es, &len));
		CHECK(len > 0 && len < MPI_MAX_ERROR_STRING);
		CHECK_MPI(MPI_Error_class(e, &cls));
		CHECK(cls == e);
	}
	MPI_Error_string(MPI_ERR_TRUNCATE, es, &len);
	CHECK(strstr(es, "truncat") != NULL);

	/* Error handlers: default fatal, settable, user handlers get the code. */
	CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
	CHECK(got == MPI_ERRORS_ARE_FATAL);
	CHECK_MPI(MPI_Comm_create_errhandler(my_handler, &eh));
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
	CHECK(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
	CHECK(handler_calls == 1 && handler_code == MPI_ERR_COUNT);
	CHECK_MPI(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
	CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER);
	CHECK_MPI(MPI_Errhandler_free(&eh));
	CHECK(eh == MPI_ERRHANDLER_NULL);
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
	CHECK(handler_calls == 2);
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

	CHECK_MPI(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
	CHECK(mem != NULL);
	memset(mem, 1, 1 << 20);
	CHECK_MPI(MPI_Free_mem(mem));

	CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag));
	CHECK(flag && *attr >= 32767);
	CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag));
	CHECK(flag && *attr == size);
	CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &attr, &flag));
	CHECK(flag && *attr == 0);
	{
		MPI_Aint a, b;
		int arr[4];
		MPI_Get_address(&arr[0], &a);
		MPI_Get_address(&arr[3], &b);
		CHECK(MPI_Aint_diff(b, a) == 3 * (MPI_Aint)sizeof(int));
		CHECK(MPI_Aint_add(a, 4) == a + 4);
	}

#ifdef MPIX_FABRIC_GETOPT
	{
		/* The provider's own counters, through the engine's endpoint. */
		const char *prov = getenv("MATCHBOX_MPI_PROVIDER");
		struct fi_matchbox_stats st;
		size_t sl = sizeof(st);
		int r = MPIX_Fabric_getopt(FI_MATCHBOX_OPT_STATS, &st, &sl);

		if (!prov || !strcmp(prov, "matchbox")) {
			CHECK(r == MPI_SUCCESS && sl == sizeof(st));
			sl = 1;
			CHECK(MPIX_Fabric_getopt(FI_MATCHBOX_OPT_STATS, &st, &sl) == MPI_ERR_ARG);
		} else {
			CHECK(r == MPI_ERR_UNSUPPORTED_OPERATION);
		}
		sl = sizeof(st);
		CHECK(MPIX_Fabric_getopt(0x7ffffff0, &st, &sl) == MPI_ERR_UNSUPPORTED_OPERATION);
		CHECK(MPIX_Fabric_getopt(FI_MATCHBOX_OPT_STATS, NULL, &sl) == MPI_ERR_ARG);
	}
#endif

	{
		int bad = mt_fails, anybad = 0;
		MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		CHECK_MPI(MPI_Finalize());
		CHECK_MPI(MPI_Finalized(&flag));
		CHECK(flag);
		tool_interface();
#ifdef MPIX_FABRIC_GETOPT
		{
			size_t sl = sizeof(v);
			CHECK(MPIX_Fabric_getopt(FI_MATCHBOX_OPT_STATS, &v, &sl) == MPI_ERR_OTHER);
		}
#endif
		if (mt_rank == 0)
			printf("t_env: %d ranks, %d checks, %d failed\n", size, mt_checks, anybad + mt_fails);
		return anybad || mt_fails;
	}
}
