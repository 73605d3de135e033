/*
 * Persistent collectives (MPI-4, MPI_Bcast_init and its kind). An init call
 * checks what it can without communicating, keeps the arguments, and takes
 * the communicator's next non-blocking collective sequence number (inits
 * are ordered like collectives). Each MPI_Start runs the matching
 * non-blocking collective again with that number and into the persistent
 * request, so its messages carry the same tags every time and starts of
 * different persistent collectives may come in any order on each rank.
 * Instances of one request do not mix: a start needs the previous instance
 * complete locally, and each pair of ranks sees their messages in order.
 */
#include "mbmpi.h"

#include <stdlib.h>

enum pc_kind {
	PC_BARRIER, PC_BCAST, PC_REDUCE, PC_ALLREDUCE, PC_GATHER, PC_GATHERV, PC_SCATTER,
	PC_SCATTERV, PC_ALLGATHER, PC_ALLGATHERV, PC_ALLTOALL, PC_ALLTOALLV, PC_ALLTOALLW,
	PC_REDUCE_SCATTER, PC_REDUCE_SCATTER_BLOCK, PC_SCAN, PC_EXSCAN, PC_NALLGATHER,
	PC_NALLGATHERV, PC_NALLTOALL, PC_NALLTOALLV, PC_NALLTOALLW
};

/* The arguments of any of them; each kind uses some. */
struct pcoll {
	enum pc_kind kind;
	uint32_t seq;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	const MPI_Aint *sadispls, *radispls;
	MPI_Datatype stype, rtype;
	const MPI_Datatype *stypes, *rtypes;
	MPI_Op op;
	MPI_Comm comm;
	bool held_s, held_r, held_op;	/* references the request holds */
};

/* The persistent request keeps the communicator, and the datatypes and
 * operation given by handle, so that the program may free its handles.
 * Arguments are checked at each start, by the non-blocking collective (a
 * receive type at a non-root rank may be anything, and is not kept). */
static int pc_init(struct pcoll *a, MPI_Info info, MPI_Request *req)
{
	struct mbmpi_comm *c;
	struct mbmpi_req *r;
	struct pcoll *keep;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(a->comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!req)
		return MBMPI_ERR(c, MPI_ERR_REQUEST);
	if (mbmpi_info_check(info))
		return MBMPI_ERR(c, MPI_ERR_INFO);
	keep = malloc(sizeof(*keep));
	r = keep ? mbmpi_req_alloc() : NULL;
	if (!r) {
		free(keep);
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	}
	*keep = *a;
	keep->seq = c->nbc_seq++;
	keep->held_s = keep->stype != MPI_DATATYPE_NULL && !mbmpi_dt_check(keep->stype);
	keep->held_r = keep->rtype != MPI_DATATYPE_NULL && !mbmpi_dt_check(keep->rtype);
	keep->held_op = keep->op != MPI_OP_NULL && keep->held_r &&
			!mbmpi_op_check(keep->op, keep->rtype);
	if (keep->held_s)
		mbmpi_dt_retain(mbmpi_dt(keep->stype));
	if (keep->held_r)
		mbmpi_dt_retain(mbmpi_dt(keep->rtype));
	if (keep->held_op)
		mbmpi_op_retain(keep->op);
	r->kind = MBMPI_REQ_PCOLL;
	r->persistent = true;
	r->active = false;
	r->complete = true;
	r->comm = c;
	mbmpi_comm_retain(c);
	r->peer = MPI_PROC_NULL;
	r->eng = keep;
	mbmpi_status_empty(&r->status);
	*req = r;
	return MPI_SUCCESS;
}

void mbmpi_pcoll_free(struct mbmpi_req *r)
{
	struct pcoll *a = r->eng;

	if (!a)
		return;
	if (a->held_s)
		mbmpi_dt_release(mbmpi_dt(a->stype));
	if (a->held_r)
		mbmpi_dt_release(mbmpi_dt(a->rtype));
	if (a->held_op)
		mbmpi_op_release(a->op);
	free(a);
	r->eng = NULL;
}

/* MPI_Start: the non-blocking collective, pinned to this request. Its
 * argument checks run here, and a failure leaves the request inactive. */
int mbmpi_pcoll_start(struct mbmpi_req *r)
{
	const struct pcoll *a = r->eng;
	MPI_Request tmp = MPI_REQUEST_NULL;
	int ret = MPI_ERR_INTERN;

	mbmpi_nbc_pin(true, a->seq, r);
	switch (a->kind) {
	case PC_BARRIER:
		ret = PMPI_Ibarrier(a->comm, &tmp);
		break;
	case PC_BCAST:
		ret = PMPI_Ibcast(a->rbuf, a->rcount, a->rtype, a->root, a->comm, &tmp);
		break;
	case PC_REDUCE:
		ret = PMPI_Ireduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm, &tmp);
		break;
	case PC_ALLREDUCE:
		ret = PMPI_Iallreduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, &tmp);
		break;
	case PC_GATHER:
		ret = PMPI_Igather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
				   a->comm, &tmp);
		break;
	case PC_GATHERV:
		ret = PMPI_Igatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls,
				    a->rtype, a->root, a->comm, &tmp);
		break;
	case PC_SCATTER:
		ret = PMPI_Iscatter(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
				    a->comm, &tmp);
		break;
	case PC_SCATTERV:
		ret = PMPI_Iscatterv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcount,
				     a->rtype, a->root, a->comm, &tmp);
		break;
	case PC_ALLGATHER:
		ret = PMPI_Iallgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
				      a->comm, &tmp);
		break;
	case PC_ALLGATHERV:
		ret = PMPI_Iallgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls,
				       a->rtype, a->comm, &tmp);
		break;
	case PC_ALLTOALL:
		ret = PMPI_Ialltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm,
				     &tmp);
		break;
	case PC_ALLTOALLV:
		ret = PMPI_Ialltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcounts,
				      a->rdispls, a->rtype, a->comm, &tmp);
		break;
	case PC_ALLTOALLW:
		ret = PMPI_Ialltoallw(a->sbuf, a->scounts, a->sdispls, a->stypes, a->rbuf, a->rcounts,
				      a->rdispls, a->rtypes, a->comm, &tmp);
		break;
	case PC_REDUCE_SCATTER:
		ret = PMPI_Ireduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, a->comm, &tmp);
		break;
	case PC_REDUCE_SCATTER_BLOCK:
		ret = PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm,
						 &tmp);
		break;
	case PC_SCAN:
		ret = PMPI_Iscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, &tmp);
		break;
	case PC_EXSCAN:
		ret = PMPI_Iexscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, &tmp);
		break;
	case PC_NALLGATHER:
		ret = PMPI_Ineighbor_allgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					       a->rtype, a->comm, &tmp);
		break;
	case PC_NALLGATHERV:
		ret = PMPI_Ineighbor_allgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
						a->rdispls, a->rtype, a->comm, &tmp);
		break;
	case PC_NALLTOALL:
		ret = PMPI_Ineighbor_alltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					      a->rtype, a->comm, &tmp);
		break;
	case PC_NALLTOALLV:
		ret = PMPI_Ineighbor_alltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					       a->rcounts, a->rdispls, a->rtype, a->comm, &tmp);
		break;
	case PC_NALLTOALLW:
		ret = PMPI_Ineighbor_alltoallw(a->sbuf, a->scounts, a->sadispls, a->stypes, a->rbuf,
					       a->rcounts, a->radispls, a->rtypes, a->comm, &tmp);
		break;
	}
	mbmpi_nbc_pin(false, 0, NULL);
	return ret;
}

/* Fields not named are zero: MPI_DATATYPE_NULL and MPI_OP_NULL. */
#define PC(...) struct pcoll a = { __VA_ARGS__ }

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_BARRIER, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Barrier_init)

int PMPI_Bcast_init(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info info,
		    MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_BCAST, .rbuf = buf, .rcount = count, .rtype = dt, .root = root, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Bcast_init)

int PMPI_Reduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_REDUCE, .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = dt, .op = op,
	   .root = root, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Reduce_init)

int PMPI_Allreduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_ALLREDUCE, .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = dt, .op = op,
	   .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Allreduce_init)

int PMPI_Gather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_GATHER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcount = rcount, .rtype = rtype, .root = root, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Gather_init)

int PMPI_Gatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		      const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
		      MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_GATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .root = root, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Gatherv_init)

int PMPI_Scatter_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		      MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_SCATTER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcount = rcount, .rtype = rtype, .root = root, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Scatter_init)

int PMPI_Scatterv_init(const void *sbuf, const int scounts[], const int displs[],
		       MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
		       MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_SCATTERV, .sbuf = sbuf, .scounts = scounts, .sdispls = displs,
	   .stype = stype, .rbuf = rbuf, .rcount = rcount, .rtype = rtype, .root = root,
	   .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Scatterv_init)

int PMPI_Allgather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_ALLGATHER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcount = rcount, .rtype = rtype, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Allgather_init)

int PMPI_Allgatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			 const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
			 MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Allgatherv_init)

int PMPI_Alltoall_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_ALLTOALL, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcount = rcount, .rtype = rtype, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Alltoall_init)

int PMPI_Alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[],
			MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
			MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_ALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
	   .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype,
	   .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Alltoallv_init)

/* The w forms keep the program's arrays of types, as MPI-4 lets them: the
 * arrays and the types in them must stay until the request is freed. */
int PMPI_Alltoallw_init(const void *sbuf, const int scounts[], const int sdispls[],
			const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
			const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Info info,
			MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_ALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
	   .stypes = stypes, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
	   .rtypes = rtypes, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Alltoallw_init)

int PMPI_Reduce_scatter_init(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
			     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_REDUCE_SCATTER, .sbuf = sbuf, .rbuf = rbuf, .rcounts = rcounts, .rtype = dt,
	   .op = op, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Reduce_scatter_init)

int PMPI_Reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt,
				   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_REDUCE_SCATTER_BLOCK, .sbuf = sbuf, .rbuf = rbuf, .rcount = rcount,
	   .rtype = dt, .op = op, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Reduce_scatter_block_init)

int PMPI_Scan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_SCAN, .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = dt, .op = op,
	   .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Scan_init)

int PMPI_Exscan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_EXSCAN, .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = dt, .op = op,
	   .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Exscan_init)

int PMPI_Neighbor_allgather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				 int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
				 MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_NALLGATHER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcount = rcount, .rtype = rtype, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Neighbor_allgather_init)

int PMPI_Neighbor_allgatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				  const int rcounts[], const int displs[], MPI_Datatype rtype,
				  MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_NALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Neighbor_allgatherv_init)

int PMPI_Neighbor_alltoall_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
				int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
				MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_NALLTOALL, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,
	   .rcount = rcount, .rtype = rtype, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Neighbor_alltoall_init)

int PMPI_Neighbor_alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[],
				 MPI_Datatype stype, void *rbuf, const int rcounts[],
				 const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
				 MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_NALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
	   .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype,
	   .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Neighbor_alltoallv_init)

int PMPI_Neighbor_alltoallw_init(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
				 const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
				 const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
				 MPI_Info info, MPI_Request *req)
{
	MBMPI_GUARD();
	PC(.kind = PC_NALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sadispls = sdispls,
	   .stypes = stypes, .rbuf = rbuf, .rcounts = rcounts, .radispls = rdispls,
	   .rtypes = rtypes, .comm = comm);
	return pc_init(&a, info, req);
}
MBMPI_ALIAS(Neighbor_alltoallw_init)
