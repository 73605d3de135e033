/*
 * The environment calls: thread levels, Initialized/Finalized, timers,
 * names and versions, error strings and classes, error handlers (returning,
 * user-defined), memory allocation, the predefined attributes, and the
 * MPIX_Fabric_getopt extension (the provider's counters).
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

int main(int argc, char **argv)
{
	int provided, flag, len, v, sv, size, *attr, cls;
	char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING], es[MPI_MAX_ERROR_STRING];
	double t0, t1;
	MPI_Errhandler eh, got;
	void *mem;

	CHECK_MPI(MPI_Initialized(&flag));
	CHECK(!flag);
	CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* One lock around the library gives MULTIPLE (t_thread drives it). */
	CHECK(provided == MPI_THREAD_MULTIPLE);
	CHECK_MPI(MPI_Query_thread(&v));
	CHECK(v == provided);
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
