/*
 * The Fortran bindings a type-by-type translation cannot give (the rest
 * are generated from mpi.h by gen_fortran.py): arrays of handles and
 * statuses, 1-based indices, attribute values that Fortran holds as
 * INTEGERs, callbacks Fortran writes (reduction operators, attribute copy
 * and delete), functions that return values, and the common blocks whose
 * addresses stand for MPI_BOTTOM, MPI_IN_PLACE and the ignore sentinels.
 */
#include "mbmpi_fort.h"

/* The common blocks of mpif.h: strong definitions that gfortran's common
 * symbols of the same names resolve to. */
MBMPI_API MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_, mpi_fortran_unweighted_,
	mpi_fortran_weights_empty_;
MBMPI_API MPI_Fint mpi_fortran_errcodes_ignore_[1];
MBMPI_API MPI_Fint mpi_fortran_status_ignore_[MBMPI_FSTATUS_INTS];
MBMPI_API MPI_Fint mpi_fortran_statuses_ignore_[MBMPI_FSTATUS_INTS];

/* ---- Strings: blank-padded, no NUL ---- */

char *mbmpi_fstr_in(const char *f, size_t len)
{
	char *c;

	while (len && f[len - 1] == ' ')
		len--;
	while (len && *f == ' ') {
		f++;
		len--;
	}
	if (!(c = malloc(len + 1)))
		return NULL;
	memcpy(c, f, len);
	c[len] = '\0';
	return c;
}

/* Room for what C may write: the Fortran length, or the longest string
 * any MPI call returns, whichever is more. */
char *mbmpi_fstr_buf(size_t len)
{
	char *c = malloc((len > MPI_MAX_INFO_VAL ? len : MPI_MAX_INFO_VAL) + 1);

	if (c)
		c[0] = '\0';
	return c;
}

void mbmpi_fstr_out(char *f, size_t len, const char *c)
{
	size_t n = strnlen(c, len);

	memcpy(f, c, n);
	memset(f + n, ' ', len - n);
}

/* ---- Environment ---- */

MBMPI_FBIND void pmpi_init_(MPI_Fint *ierr)
{
	*ierr = MPI_Init(NULL, NULL);
}
MBMPI_FALIAS(init)

MBMPI_FBIND void pmpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	*ierr = MPI_Init_thread(NULL, NULL, *required, provided);
}
MBMPI_FALIAS(init_thread)

MBMPI_FBIND double pmpi_wtime_(void)
{
	return MPI_Wtime();
}
MBMPI_FALIAS(wtime)

MBMPI_FBIND double pmpi_wtick_(void)
{
	return MPI_Wtick();
}
MBMPI_FALIAS(wtick)

MBMPI_FBIND MPI_Aint pmpi_aint_add_(const MPI_Aint *base, const MPI_Aint *disp)
{
	return MPI_Aint_add(*base, *disp);
}
MBMPI_FALIAS(aint_add)

MBMPI_FBIND MPI_Aint pmpi_aint_diff_(const MPI_Aint *a, const MPI_Aint *b)
{
	return MPI_Aint_diff(*a, *b);
}
MBMPI_FALIAS(aint_diff)

MBMPI_FBIND void pmpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierr)
{
	*ierr = MPI_Pcontrol(*level);
}
MBMPI_FALIAS(pcontrol)

/* Fortran's buffer_addr would receive C's pointer over the user's data:
 * it is left alone, as the other Fortran bindings do. */
MBMPI_FBIND void pmpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierr)
{
	void *c;

	(void)buffer_addr;
	*ierr = MPI_Buffer_detach(&c, size);
}
MBMPI_FALIAS(buffer_detach)

/* ---- Arrays of requests and statuses ---- */

/* n C requests from Fortran's; NULL when n is negative or memory is out. */
static MPI_Request *reqs_in(const MPI_Fint *f, int n)
{
	MPI_Request *c;

	if (n < 0 || !(c = malloc(sizeof(*c) * (size_t)(n ? n : 1))))
		return NULL;
	for (int i = 0; i < n; i++)
		c[i] = MPI_Request_f2c(f[i]);
	return c;
}

static void reqs_out(MPI_Fint *f, MPI_Request *c, int n)
{
	for (int i = 0; i < n; i++)
		f[i] = MPI_Request_c2f(c[i]);
	free(c);
}

static MPI_Status *stats_in(const MPI_Fint *f, int n)
{
	if (f == mpi_fortran_statuses_ignore_ || f == mpi_fortran_status_ignore_)
		return MPI_STATUSES_IGNORE;
	return malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
}

static void stats_out(MPI_Fint *f, MPI_Status *c, int n)
{
	if (c == MPI_STATUSES_IGNORE)
		return;
	for (int i = 0; i < n; i++)
		memcpy(f + (size_t)i * MBMPI_FSTATUS_INTS, &c[i], sizeof(MPI_Status));
	free(c);
}

/* The Fortran status array must be allocated only when one is wanted. */
#define ARRAYS_IN(reqs, statuses, n)                                   \
	MPI_Request *c_reqs = reqs_in(reqs, n);                         \
	MPI_Status *c_stats = c_reqs ? stats_in(statuses, n) : NULL;    \
	if (!c_reqs || (!c_stats && statuses != mpi_fortran_statuses_ignore_ && \
			statuses != mpi_fortran_status_ignore_)) {      \
		free(c_reqs);                                           \
		*ierr = *count < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;    \
		return;                                                 \
	}

MBMPI_FBIND void pmpi_startall_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *ierr)
{
	MPI_Request *c = reqs_in(reqs, *count);

	if (!c) {
		*ierr = *count < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_Startall(*count, c);
	reqs_out(reqs, c, *count);
}
MBMPI_FALIAS(startall)

MBMPI_FBIND void pmpi_waitall_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses,
			       MPI_Fint *ierr)
{
	ARRAYS_IN(reqs, statuses, *count);
	*ierr = MPI_Waitall(*count, c_reqs, c_stats);
	reqs_out(reqs, c_reqs, *count);
	stats_out(statuses, c_stats, *count);
}
MBMPI_FALIAS(waitall)

MBMPI_FBIND void pmpi_testall_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *flag,
			       MPI_Fint *statuses, MPI_Fint *ierr)
{
	ARRAYS_IN(reqs, statuses, *count);
	*ierr = MPI_Testall(*count, c_reqs, flag, c_stats);
	reqs_out(reqs, c_reqs, *count);
	stats_out(statuses, c_stats, *flag ? *count : 0);
}
MBMPI_FALIAS(testall)

/* Fortran's indices count from 1. */
static void index_out(MPI_Fint *index)
{
	if (*index != MPI_UNDEFINED)
		(*index)++;
}

MBMPI_FBIND void pmpi_waitany_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index,
			       MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Request *c = reqs_in(reqs, *count);
	MPI_Status cs, *ps = mbmpi_fstatus_in(status, &cs);

	if (!c) {
		*ierr = *count < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_Waitany(*count, c, index, ps);
	reqs_out(reqs, c, *count);
	index_out(index);
	mbmpi_fstatus_out(status, ps);
}
MBMPI_FALIAS(waitany)

MBMPI_FBIND void pmpi_testany_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index,
			       MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Request *c = reqs_in(reqs, *count);
	MPI_Status cs, *ps = mbmpi_fstatus_in(status, &cs);

	if (!c) {
		*ierr = *count < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_Testany(*count, c, index, flag, ps);
	reqs_out(reqs, c, *count);
	index_out(index);
	if (*flag)
		mbmpi_fstatus_out(status, ps);
}
MBMPI_FALIAS(testany)

static void some_out(MPI_Fint *indices, const MPI_Fint *outcount)
{
	for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
		indices[i]++;
}

MBMPI_FBIND void pmpi_waitsome_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount,
				MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	ARRAYS_IN(reqs, statuses, *count);
	*ierr = MPI_Waitsome(*count, c_reqs, outcount, indices, c_stats);
	reqs_out(reqs, c_reqs, *count);
	some_out(indices, outcount);
	stats_out(statuses, c_stats, *outcount == MPI_UNDEFINED ? 0 : *outcount);
}
MBMPI_FALIAS(waitsome)

MBMPI_FBIND void pmpi_testsome_(const MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount,
				MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	ARRAYS_IN(reqs, statuses, *count);
	*ierr = MPI_Testsome(*count, c_reqs, outcount, indices, c_stats);
	reqs_out(reqs, c_reqs, *count);
	some_out(indices, outcount);
	stats_out(statuses, c_stats, *outcount == MPI_UNDEFINED ? 0 : *outcount);
}
MBMPI_FALIAS(testsome)

/* ---- Arrays of datatypes ---- */

static MPI_Datatype *types_in(const MPI_Fint *f, int n)
{
	MPI_Datatype *c;

	if (n < 0 || !(c = malloc(sizeof(*c) * (size_t)(n ? n : 1))))
		return NULL;
	for (int i = 0; i < n; i++)
		c[i] = MPI_Type_f2c(f[i]);
	return c;
}

MBMPI_FBIND void pmpi_type_create_struct_(const MPI_Fint *count, const MPI_Fint *blocklens,
					  const MPI_Aint *displs, const MPI_Fint *types,
					  MPI_Fint *newtype, MPI_Fint *ierr)
{
	MPI_Datatype *c = types_in(types, *count), nt = MPI_DATATYPE_NULL;

	if (!c) {
		*ierr = *count < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_Type_create_struct(*count, blocklens, displs, c, &nt);
	free(c);
	if (*ierr == MPI_SUCCESS)
		*newtype = MPI_Type_c2f(nt);
}
MBMPI_FALIAS(type_create_struct)

MBMPI_FBIND void pmpi_type_get_contents_(const MPI_Fint *dt, const MPI_Fint *max_ints,
					 const MPI_Fint *max_addrs, const MPI_Fint *max_types,
					 MPI_Fint *ints, MPI_Aint *addrs, MPI_Fint *types,
					 MPI_Fint *ierr)
{
	MPI_Datatype *c;

	if (*max_types < 0 || !(c = malloc(sizeof(*c) * (size_t)(*max_types ? *max_types : 1)))) {
		*ierr = *max_types < 0 ? MPI_ERR_ARG : MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_Type_get_contents(MPI_Type_f2c(*dt), *max_ints, *max_addrs, *max_types, ints,
				      addrs, c);
	if (*ierr == MPI_SUCCESS) {
		int ni, na, nd, comb;

		MPI_Type_get_envelope(MPI_Type_f2c(*dt), &ni, &na, &nd, &comb);
		for (int i = 0; i < nd && i < *max_types; i++)
			types[i] = MPI_Type_c2f(c[i]);
	}
	free(c);
}
MBMPI_FALIAS(type_get_contents)

/* How many peers a w-collective's type arrays describe on each side. */
static int w_peers(MPI_Comm c, bool neighbor, int *nsend, int *nrecv)
{
	int ret, topo, inter, w;

	if (!neighbor) {
		if ((ret = MPI_Comm_test_inter(c, &inter)))
			return ret;
		ret = inter ? MPI_Comm_remote_size(c, nsend) : MPI_Comm_size(c, nsend);
		*nrecv = *nsend;
		return ret;
	}
	if ((ret = MPI_Topo_test(c, &topo)))
		return ret;
	if (topo == MPI_CART) {
		ret = MPI_Cartdim_get(c, nsend);
		*nsend *= 2;
		*nrecv = *nsend;
	} else if (topo == MPI_GRAPH) {
		int rank;

		if (!(ret = MPI_Comm_rank(c, &rank)))
			ret = MPI_Graph_neighbors_count(c, rank, nsend);
		*nrecv = *nsend;
	} else if (topo == MPI_DIST_GRAPH) {
		ret = MPI_Dist_graph_neighbors_count(c, nrecv, nsend, &w);
	} else {
		ret = MPI_ERR_TOPOLOGY;
	}
	return ret;
}

/* One body for the four w-collectives: the type arrays are converted,
 * the C call made, the request (if any) handed back. */
static int w_coll(const MPI_Fint *fcomm, bool neighbor, const MPI_Fint *stypes,
		  const MPI_Fint *rtypes, MPI_Datatype **cs, MPI_Datatype **cr)
{
	int ns, nr, ret;

	*cs = *cr = NULL;
	if ((ret = w_peers(MPI_Comm_f2c(*fcomm), neighbor, &ns, &nr)))
		return ret;
	/* With MPI_IN_PLACE the send types are not read. */
	*cs = types_in(stypes, ns);
	*cr = types_in(rtypes, nr);
	if (!*cs || !*cr) {
		free(*cs);
		free(*cr);
		return MPI_ERR_NO_MEM;
	}
	return MPI_SUCCESS;
}

MBMPI_FBIND void pmpi_alltoallw_(void *sbuf, const MPI_Fint *scounts, const MPI_Fint *sdispls,
				 const MPI_Fint *stypes, void *rbuf, const MPI_Fint *rcounts,
				 const MPI_Fint *rdispls, const MPI_Fint *rtypes,
				 const MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Datatype *cs, *cr;

	if ((*ierr = w_coll(comm, false, stypes, rtypes, &cs, &cr)))
		return;
	*ierr = MPI_Alltoallw(MBMPI_FBUF(sbuf), scounts, sdispls, cs, MBMPI_FBUF(rbuf), rcounts,
			      rdispls, cr, MPI_Comm_f2c(*comm));
	free(cs);
	free(cr);
}
MBMPI_FALIAS(alltoallw)

/* A non-blocking collective reads its type arrays when it starts. */
MBMPI_FBIND void pmpi_ialltoallw_(void *sbuf, const MPI_Fint *scounts, const MPI_Fint *sdispls,
				  const MPI_Fint *stypes, void *rbuf, const MPI_Fint *rcounts,
				  const MPI_Fint *rdispls, const MPI_Fint *rtypes,
				  const MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Datatype *cs, *cr;
	MPI_Request r;

	if ((*ierr = w_coll(comm, false, stypes, rtypes, &cs, &cr)))
		return;
	*ierr = MPI_Ialltoallw(MBMPI_FBUF(sbuf), scounts, sdispls, cs, MBMPI_FBUF(rbuf), rcounts,
			       rdispls, cr, MPI_Comm_f2c(*comm), &r);
	free(cs);
	free(cr);
	if (*ierr == MPI_SUCCESS)
		*req = MPI_Request_c2f(r);
}
MBMPI_FALIAS(ialltoallw)

MBMPI_FBIND void pmpi_neighbor_alltoallw_(void *sbuf, const MPI_Fint *scounts,
					  const MPI_Aint *sdispls, const MPI_Fint *stypes,
					  void *rbuf, const MPI_Fint *rcounts,
					  const MPI_Aint *rdispls, const MPI_Fint *rtypes,
					  const MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Datatype *cs, *cr;

	if ((*ierr = w_coll(comm, true, stypes, rtypes, &cs, &cr)))
		return;
	*ierr = MPI_Neighbor_alltoallw(MBMPI_FBUF(sbuf), scounts, sdispls, cs, MBMPI_FBUF(rbuf),
				       rcounts, rdispls, cr, MPI_Comm_f2c(*comm));
	free(cs);
	free(cr);
}
MBMPI_FALIAS(neighbor_alltoallw)

MBMPI_FBIND void pmpi_ineighbor_alltoallw_(void *sbuf, const MPI_Fint *scounts,
					   const MPI_Aint *sdispls, const MPI_Fint *stypes,
					   void *rbuf, const MPI_Fint *rcounts,
					   const MPI_Aint *rdispls, const MPI_Fint *rtypes,
					   const MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Datatype *cs, *cr;
	MPI_Request r;

	if ((*ierr = w_coll(comm, true, stypes, rtypes, &cs, &cr)))
		return;
	*ierr = MPI_Ineighbor_alltoallw(MBMPI_FBUF(sbuf), scounts, sdispls, cs, MBMPI_FBUF(rbuf),
					rcounts, rdispls, cr, MPI_Comm_f2c(*comm), &r);
	free(cs);
	free(cr);
	if (*ierr == MPI_SUCCESS)
		*req = MPI_Request_c2f(r);
}
MBMPI_FALIAS(ineighbor_alltoallw)

/* ---- User reduction operators ---- */

MBMPI_FBIND void pmpi_op_create_(mbmpi_fuser_fn *fn, const MPI_Fint *commute, MPI_Fint *op,
				 MPI_Fint *ierr)
{
	MPI_Op o;

	*ierr = MPI_Op_create((MPI_User_function *)(void (*)(void))fn, *commute, &o);
	if (*ierr == MPI_SUCCESS) {
		/* Called back with an INTEGER datatype. */
		mbmpi_op(o)->fortran = true;
		*op = MPI_Op_c2f(o);
	}
}
MBMPI_FALIAS(op_create)

/* ---- Error handlers written in Fortran ---- */

/* SUBROUTINE HANDLER(HANDLE, ERROR_CODE): libmpi calls it with the
 * handle's Fortran name (mbmpi_errh_fortran). */
typedef void f_errh_fn(MPI_Fint *handle, MPI_Fint *code);

static void errh_out(int ret, MPI_Errhandler h, MPI_Fint *eh, MPI_Fint *ierr)
{
	*ierr = ret;
	if (ret == MPI_SUCCESS) {
		mbmpi_errh_fortran(h);
		*eh = MPI_Errhandler_c2f(h);
	}
}

#define F_CREATE_ERRHANDLER(name, create, ctype)                                   \
	MBMPI_FBIND void pmpi_##name##_(f_errh_fn *fn, MPI_Fint *eh, MPI_Fint *ierr) \
	{                                                                          \
		MPI_Errhandler h = MPI_ERRHANDLER_NULL;                            \
		int ret = create((ctype *)(void (*)(void))fn, &h);                 \
                                                                                   \
		errh_out(ret, h, eh, ierr);                                        \
	}                                                                          \
	MBMPI_FALIAS(name)

F_CREATE_ERRHANDLER(comm_create_errhandler, MPI_Comm_create_errhandler,
		    MPI_Comm_errhandler_function)
F_CREATE_ERRHANDLER(win_create_errhandler, MPI_Win_create_errhandler,
		    MPI_Win_errhandler_function)
F_CREATE_ERRHANDLER(file_create_errhandler, MPI_File_create_errhandler,
		    MPI_File_errhandler_function)
F_CREATE_ERRHANDLER(errhandler_create, MPI_Errhandler_create, MPI_Handler_function)

/* ---- Generalized requests written in Fortran ---- */

/* QUERY_FN(EXTRA_STATE, STATUS, IERROR), FREE_FN(EXTRA_STATE, IERROR),
 * CANCEL_FN(EXTRA_STATE, COMPLETE, IERROR): C's callbacks below hold the
 * Fortran ones and the program's INTEGER(KIND=MPI_ADDRESS_KIND) state. */
typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierr);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierr);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierr);

struct f_greq {
	f_query_fn *query;
	f_free_fn *free_fn;
	f_cancel_fn *cancel;
	MPI_Aint extra;
};

/* A Fortran status is MPI_STATUS_SIZE INTEGERs holding the C struct's
 * bytes (mbmpi_fstatus_out), so the query writes the C status in place
 * through a copy of the right shape. */
static int f_greq_query(void *extra, MPI_Status *st)
{
	struct f_greq *g = extra;
	MPI_Fint fst[MBMPI_FSTATUS_INTS], ierr = MPI_SUCCESS;

	mbmpi_fstatus_out(fst, st);
	g->query(&g->extra, fst, &ierr);
	memcpy(st, fst, sizeof(*st));
	return ierr;
}

static int f_greq_free(void *extra)
{
	struct f_greq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	g->free_fn(&g->extra, &ierr);
	free(g);
	return ierr;
}

static int f_greq_cancel(void *extra, int complete)
{
	struct f_greq *g = extra;
	MPI_Fint fcomplete = complete ? 1 : 0, ierr = MPI_SUCCESS;	/* gfortran's .TRUE. */

	g->cancel(&g->extra, &fcomplete, &ierr);
	return ierr;
}

MBMPI_FBIND void pmpi_grequest_start_(f_query_fn *query, f_free_fn *free_fn,
				      f_cancel_fn *cancel, const MPI_Aint *extra, MPI_Fint *req,
				      MPI_Fint *ierr)
{
	struct f_greq *g;
	MPI_Request r;

	/* All three are required in Fortran: there is no null procedure. */
	if (!query || !free_fn || !cancel) {
		*ierr = MPI_Grequest_start(NULL, NULL, NULL, NULL, NULL);
		return;
	}
	g = malloc(sizeof(*g));
	if (!g) {
		*ierr = MPI_ERR_NO_MEM;
		return;
	}
	*g = (struct f_greq){ query, free_fn, cancel, *extra };
	*ierr = MPI_Grequest_start(f_greq_query, f_greq_free, f_greq_cancel, g, &r);
	if (*ierr == MPI_SUCCESS)
		*req = MPI_Request_c2f(r);
	else
		free(g);
}
MBMPI_FALIAS(grequest_start)

/* ---- Attributes: Fortran holds values, C holds pointers ---- */

MBMPI_FBIND void pmpi_comm_set_attr_(const MPI_Fint *comm, const MPI_Fint *keyval,
				     const MPI_Aint *val, MPI_Fint *ierr)
{
	*ierr = MPI_Comm_set_attr(MPI_Comm_f2c(*comm), *keyval, (void *)(intptr_t)*val);
}
MBMPI_FALIAS(comm_set_attr)

/* C answers the predefined keys with a pointer to the value. */
MBMPI_FBIND void pmpi_comm_get_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *val,
				     MPI_Fint *flag, MPI_Fint *ierr)
{
	void *p = NULL;

	*ierr = MPI_Comm_get_attr(MPI_Comm_f2c(*comm), *keyval, &p, flag);
	if (*ierr || !*flag)
		return;
	if (*keyval >= MPI_TAG_UB && *keyval <= MPI_LASTUSEDCODE)
		*val = *(int *)p;
	else
		*val = (MPI_Aint)(intptr_t)p;
}
MBMPI_FALIAS(comm_get_attr)

MBMPI_FBIND void pmpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val,
				MPI_Fint *ierr)
{
	*ierr = MPI_Comm_set_attr(MPI_Comm_f2c(*comm), *keyval, (void *)(intptr_t)*val);
}
MBMPI_FALIAS(attr_put)

MBMPI_FBIND void pmpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *val,
				MPI_Fint *flag, MPI_Fint *ierr)
{
	MPI_Aint v = 0;

	pmpi_comm_get_attr_(comm, keyval, &v, flag, ierr);
	if (!*ierr && *flag)
		*val = (MPI_Fint)v;
}
MBMPI_FALIAS(attr_get)

MBMPI_FBIND void pmpi_type_set_attr_(const MPI_Fint *dt, const MPI_Fint *keyval,
				     const MPI_Aint *val, MPI_Fint *ierr)
{
	*ierr = MPI_Type_set_attr(MPI_Type_f2c(*dt), *keyval, (void *)(intptr_t)*val);
}
MBMPI_FALIAS(type_set_attr)

MBMPI_FBIND void pmpi_type_get_attr_(const MPI_Fint *dt, const MPI_Fint *keyval, MPI_Aint *val,
				     MPI_Fint *flag, MPI_Fint *ierr)
{
	void *p = NULL;

	*ierr = MPI_Type_get_attr(MPI_Type_f2c(*dt), *keyval, &p, flag);
	if (!*ierr && *flag)
		*val = (MPI_Aint)(intptr_t)p;
}
MBMPI_FALIAS(type_get_attr)

MBMPI_FBIND void pmpi_win_set_attr_(const MPI_Fint *win, const MPI_Fint *keyval,
				    const MPI_Aint *val, MPI_Fint *ierr)
{
	*ierr = MPI_Win_set_attr(MPI_Win_f2c(*win), *keyval, (void *)(intptr_t)*val);
}
MBMPI_FALIAS(win_set_attr)

MBMPI_FBIND void pmpi_win_get_attr_(const MPI_Fint *win, const MPI_Fint *keyval, MPI_Aint *val,
				    MPI_Fint *flag, MPI_Fint *ierr)
{
	void *p = NULL;

	*ierr = MPI_Win_get_attr(MPI_Win_f2c(*win), *keyval, &p, flag);
	if (*ierr || !*flag)
		return;
	switch (*keyval) {
	case MPI_WIN_SIZE:
		*val = *(MPI_Aint *)p;
		break;
	case MPI_WIN_DISP_UNIT:
	case MPI_WIN_CREATE_FLAVOR:
	case MPI_WIN_MODEL:
		*val = *(int *)p;
		break;
	default: /* MPI_WIN_BASE is the address itself, as are user values. */
		*val = (MPI_Aint)(intptr_t)p;
	}
}
MBMPI_FALIAS(win_get_attr)

/* ---- Attribute callbacks written in Fortran ----
 * C calls a trampoline with the keyval's Fortran functions and extra state
 * as its extra argument; the trampoline calls them with Fortran's
 * arguments. MPI-1's Keyval_create passes INTEGER values, MPI-2's
 * INTEGER(KIND=MPI_ADDRESS_KIND). The records live until MPI_Finalize (a
 * keyval freed while attributes still use it keeps its callbacks). */
typedef void f_copy_fn(const MPI_Fint *h, const MPI_Fint *keyval, const void *extra,
		       const void *in, void *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void f_delete_fn(const MPI_Fint *h, const MPI_Fint *keyval, const void *val,
			 const void *extra, MPI_Fint *ierr);

struct f_keyval {
	f_copy_fn *copy;
	f_delete_fn *del;
	MPI_Aint extra;
	bool mpi1; /* INTEGER values and extra state */
	struct f_keyval *next;
};

static struct f_keyval *f_keyvals;

void mbmpi_fort_fini(void)
{
	while (f_keyvals) {
		struct f_keyval *k = f_keyvals;

		f_keyvals = k->next;
		free(k);
	}
}

/* A record for a new keyval; the caller holds the library lock. */
static struct f_keyval *f_keyval_new(f_copy_fn *copy, f_delete_fn *del, MPI_Aint extra,
				     bool mpi1)
{
	struct f_keyval *k = malloc(sizeof(*k));

	if (k) {
		*k = (struct f_keyval){copy, del, extra, mpi1, f_keyvals};
		f_keyvals = k;
	}
	return k;
}

static int f_copy(MPI_Fint h, int keyval, struct f_keyval *k, void *in, void *out, int *flag)
{
	MPI_Fint fk = keyval, ierr = MPI_SUCCESS, f = 0;

	if (k->mpi1) {
		MPI_Fint fin = (MPI_Fint)(intptr_t)in, fout = 0, fx = (MPI_Fint)k->extra;

		k->copy(&h, &fk, &fx, &fin, &fout, &f, &ierr);
		*(void **)out = (void *)(intptr_t)fout;
	} else {
		MPI_Aint ain = (MPI_Aint)(intptr_t)in, aout = 0;

		k->copy(&h, &fk, &k->extra, &ain, &aout, &f, &ierr);
		*(void **)out = (void *)(intptr_t)aout;
	}
	*flag = f != 0;
	return ierr;
}

static int f_delete(MPI_Fint h, int keyval, void *val, struct f_keyval *k)
{
	MPI_Fint fk = keyval, ierr = MPI_SUCCESS;

	if (k->mpi1) {
		MPI_Fint fv = (MPI_Fint)(intptr_t)val, fx = (MPI_Fint)k->extra;

		k->del(&h, &fk, &fv, &fx, &ierr);
	} else {
		MPI_Aint av = (MPI_Aint)(intptr_t)val;

		k->del(&h, &fk, &av, &k->extra, &ierr);
	}
	return ierr;
}

#define F_KEYVAL_KIND(kind, T, stem)                                                              \
	static int f_##kind##_copy(T h, int keyval, void *extra, void *in, void *out, int *flag) \
	{                                                                                          \
		return f_copy(MPI_##stem##_c2f(h), keyval, extra, in, out, flag);                  \
	}                                                                                          \
	static int f_##kind##_delete(T h, int keyval, void *val, void *extra)                      \
	{                                                                                          \
		return f_delete(MPI_##stem##_c2f(h), keyval, val, extra);                          \
	}                                                                                          \
	MBMPI_FBIND void pmpi_##kind##_create_keyval_(f_copy_fn *copy, f_delete_fn *del,          \
						      MPI_Fint *keyval, const MPI_Aint *extra,    \
						      MPI_Fint *ierr)                             \
	{                                                                                          \
		MBMPI_GUARD();                                                                     \
		struct f_keyval *k = f_keyval_new(copy, del, *extra, false);                       \
		*ierr = k ? MPI_##stem##_create_keyval(f_##kind##_copy, f_##kind##_delete, keyval, \
							k)                                        \
			  : MPI_ERR_NO_MEM;                                                        \
	}                                                                                          \
	MBMPI_FALIAS(kind##_create_keyval)

F_KEYVAL_KIND(comm, MPI_Comm, Comm)
F_KEYVAL_KIND(type, MPI_Datatype, Type)
F_KEYVAL_KIND(win, MPI_Win, Win)

MBMPI_FBIND void pmpi_keyval_create_(f_copy_fn *copy, f_delete_fn *del, MPI_Fint *keyval,
				     const MPI_Fint *extra, MPI_Fint *ierr)
{
	MBMPI_GUARD();
	struct f_keyval *k = f_keyval_new(copy, del, *extra, true);

	*ierr = k ? MPI_Comm_create_keyval(f_comm_copy, f_comm_delete, keyval, k) : MPI_ERR_NO_MEM;
}
MBMPI_FALIAS(keyval_create)

/* The predefined callbacks, callable from Fortran (mpif.h declares them
 * EXTERNAL and programs pass them to the create_keyval calls above). Each
 * behaves the same whichever width its values have. */
#define F_PREDEF_CALLBACKS(prefix, V)                                                            \
	MBMPI_API void prefix##null_copy_fn_(const MPI_Fint *h, const MPI_Fint *k, const V *x,   \
					     const V *in, V *out, MPI_Fint *flag, MPI_Fint *ierr) \
	{                                                                                         \
		(void)h, (void)k, (void)x, (void)in, (void)out;                                   \
		*flag = 0;                                                                        \
		*ierr = MPI_SUCCESS;                                                              \
	}                                                                                         \
	MBMPI_API void prefix##dup_fn_(const MPI_Fint *h, const MPI_Fint *k, const V *x,         \
				       const V *in, V *out, MPI_Fint *flag, MPI_Fint *ierr)       \
	{                                                                                         \
		(void)h, (void)k, (void)x;                                                        \
		*out = *in;                                                                       \
		*flag = 1;                                                                        \
		*ierr = MPI_SUCCESS;                                                              \
	}                                                                                         \
	MBMPI_API void prefix##null_delete_fn_(const MPI_Fint *h, const MPI_Fint *k, const V *v, \
					       const V *x, MPI_Fint *ierr)                        \
	{                                                                                         \
		(void)h, (void)k, (void)v, (void)x;                                               \
		*ierr = MPI_SUCCESS;                                                              \
	}

F_PREDEF_CALLBACKS(mpi_, MPI_Fint)
F_PREDEF_CALLBACKS(mpi_comm_, MPI_Aint)
F_PREDEF_CALLBACKS(mpi_type_, MPI_Aint)
F_PREDEF_CALLBACKS(mpi_win_, MPI_Aint)
