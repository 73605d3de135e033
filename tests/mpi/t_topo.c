/*
 * Process topologies and the neighbourhood collectives on them, each result
 * checked against the neighbours computed here: MPI_Dims_create's balanced
 * factors, a periodic and a non-periodic grid (coordinates, ranks, shifts,
 * sub-grids), a ring in which one rank is both neighbours (so the two
 * directions must stay apart), a graph, a distributed graph built from
 * edges named by other ranks, and bad arguments.
 */
#include "mt.h"

static int rank, size;

static void dims(void)
{
	int d[3] = {0, 0, 0}, e[2] = {0, 3}, f[2] = {0, 0};

	CHECK_MPI(MPI_Dims_create(12, 3, d));
	CHECK(d[0] == 3 && d[1] == 2 && d[2] == 2);
	CHECK_MPI(MPI_Dims_create(12, 2, e));
	CHECK(e[0] == 4 && e[1] == 3);
	CHECK_MPI(MPI_Dims_create(7, 2, f));
	CHECK(f[0] == 7 && f[1] == 1);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	{
		int g[2] = {5, 0}, cls;
		MPI_Error_class(MPI_Dims_create(12, 2, g), &cls);
		CHECK(cls == MPI_ERR_DIMS);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A grid of all ranks, periodic in the first dimension only. */
static void cart(void)
{
	int d[2] = {0, 0}, per[2] = {1, 0}, co[2], r, src, dst, status;
	MPI_Comm cc, row;

	MPI_Dims_create(size, 2, d);
	CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, d, per, 0, &cc));
	MPI_Topo_test(cc, &status);
	CHECK(status == MPI_CART);
	MPI_Comm_rank(cc, &r);
	CHECK(r == rank);
	CHECK_MPI(MPI_Cart_coords(cc, r, 2, co));
	CHECK(co[0] == rank / d[1] && co[1] == rank % d[1]);
	{
		int back;
		CHECK_MPI(MPI_Cart_rank(cc, co, &back));
		CHECK(back == rank);
	}
	CHECK_MPI(MPI_Cart_shift(cc, 0, 1, &src, &dst));
	CHECK(dst == ((co[0] + 1) % d[0]) * d[1] + co[1]);
	CHECK(src == ((co[0] - 1 + d[0]) % d[0]) * d[1] + co[1]);
	CHECK_MPI(MPI_Cart_shift(cc, 1, 1, &src, &dst));
	CHECK(dst == (co[1] + 1 < d[1] ? rank + 1 : MPI_PROC_NULL));
	CHECK(src == (co[1] > 0 ? rank - 1 : MPI_PROC_NULL));
	/* Neighbour alltoall: what I send toward the negative neighbour of
	 * a dimension arrives in its positive slot. */
	{
		int sb[4], rb[4], e[4], nb[4];

		for (int i = 0; i < 4; i++) {
			sb[i] = rank * 10 + i;
			rb[i] = -1;
		}
		MPI_Cart_shift(cc, 0, 1, &nb[0], &nb[1]);
		MPI_Cart_shift(cc, 1, 1, &nb[2], &nb[3]);
		CHECK_MPI(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cc));
		for (int i = 0; i < 4; i++) {
			/* slot 2k (negative neighbour) holds what it sent to its
			 * positive side, slot 2k+1 what it sent negative. */
			e[i] = nb[i] == MPI_PROC_NULL ? -1 : nb[i] * 10 + (i % 2 ? i - 1 : i + 1);
			CHECK(rb[i] == e[i]);
		}
		for (int i = 0; i < 4; i++)
			rb[i] = -1;
		CHECK_MPI(MPI_Neighbor_allgather(&rank, 1, MPI_INT, rb, 1, MPI_INT, cc));
		for (int i = 0; i < 4; i++)
			CHECK(rb[i] == (nb[i] == MPI_PROC_NULL ? -1 : nb[i]));
	}
	/* A row: the second dimension kept. */
	{
		int keep[2] = {0, 1}, rr, rs, nd;
		CHECK_MPI(MPI_Cart_sub(cc, keep, &row));
		MPI_Comm_rank(row, &rr);
		MPI_Comm_size(row, &rs);
		CHECK(rr == co[1] && rs == d[1]);
		MPI_Cartdim_get(row, &nd);
		CHECK(nd == 1);
		MPI_Comm_free(&row);
	}
	{
		MPI_Comm dup;
		int nd = 0;
		MPI_Comm_dup(cc, &dup);
		MPI_Cartdim_get(dup, &nd);
		CHECK(nd == 2);
		MPI_Comm_free(&dup);
	}
	MPI_Comm_free(&cc);
}

/* A periodic ring: with 1 or 2 ranks one rank is both neighbours. */
static void ring(void)
{
	int per = 1, sb[2] = {rank * 2, rank * 2 + 1}, rb[2] = {-1, -1}, left, right;
	MPI_Comm ringc;
	MPI_Request r;

	MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &per, 0, &ringc);
	MPI_Cart_shift(ringc, 0, 1, &left, &right);
	CHECK_MPI(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ringc, &r));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(rb[0] == left * 2 + 1);  /* the left one sent it rightwards */
	CHECK(rb[1] == right * 2);     /* the right one sent it leftwards */
	MPI_Comm_free(&ringc);
}

/* Every rank connected to the next one and to rank 0. */
static void graph(void)
{
	int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
	int n = 0, cnt, nb[2], status;
	MPI_Comm g;

	for (int i = 0; i < size; i++) {
		edges[n++] = (i + 1) % size;
		if (i != 0)
			edges[n++] = 0;
		index[i] = n;
	}
	CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
	MPI_Topo_test(g, &status);
	CHECK(status == MPI_GRAPH);
	MPI_Graph_neighbors_count(g, rank, &cnt);
	CHECK(cnt == (rank ? 2 : 1));
	MPI_Graph_neighbors(g, rank, 2, nb);
	CHECK(nb[0] == (rank + 1) % size);
	{
		int nn, ne;
		MPI_Graphdims_get(g, &nn, &ne);
		CHECK(nn == size && ne == n);
	}
	MPI_Comm_free(&g);
	free(index);
	free(edges);
}

/* Rank 0 names every edge r -> r+1 (weight r); each rank's lists come out
 * of the exchange, then a neighbour allgatherv moves data along them. */
static void dist_graph(void)
{
	int *src = malloc(sizeof(int) * (size_t)size), *deg = malloc(sizeof(int) * (size_t)size),
	    *dst = malloc(sizeof(int) * (size_t)size), *w = malloc(sizeof(int) * (size_t)size);
	int nin, nout, weighted, in[2], out[2], inw[2], outw[2], n = rank == 0 ? size : 0;
	MPI_Comm g, adj;

	for (int i = 0; i < size; i++) {
		src[i] = i;
		deg[i] = 1;
		dst[i] = (i + 1) % size;
		w[i] = i;
	}
	CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n, src, deg, dst, w, MPI_INFO_NULL, 0, &g));
	MPI_Dist_graph_neighbors_count(g, &nin, &nout, &weighted);
	CHECK(nin == 1 && nout == 1 && weighted);
	MPI_Dist_graph_neighbors(g, 2, in, inw, 2, out, outw);
	CHECK(in[0] == (rank - 1 + size) % size && inw[0] == (rank - 1 + size) % size);
	CHECK(out[0] == (rank + 1) % size && outw[0] == rank);
	{
		int v[2] = {rank, rank + 100}, got[3] = {-1, -1, -1}, rc = 2, disp = 1;
		CHECK_MPI(MPI_Neighbor_allgatherv(v, 2, MPI_INT, got, &rc, &disp, MPI_INT, g));
		CHECK(got[0] == -1 && got[1] == in[0] && got[2] == in[0] + 100);
	}
	/* The same ring given adjacently, unweighted, with alltoallv. */
	CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in, MPI_UNWEIGHTED, 1, out,
						 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &adj));
	MPI_Dist_graph_neighbors_count(adj, &nin, &nout, &weighted);
	CHECK(nin == 1 && nout == 1 && !weighted);
	{
		int v = rank * 3, got = -1, one = 1, zero = 0;
		CHECK_MPI(MPI_Neighbor_alltoallv(&v, &one, &zero, MPI_INT, &got, &one, &zero, MPI_INT, adj));
		CHECK(got == in[0] * 3);
	}
	MPI_Comm_free(&adj);
	MPI_Comm_free(&g);
	free(src);
	free(deg);
	free(dst);
	free(w);
}

static void errors(void)
{
	int cls, d = size + 1, per = 0, co[1];
	MPI_Comm c;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &per, 0, &c), &cls);
	CHECK(cls == MPI_ERR_ARG);
	MPI_Error_class(MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, co), &cls);
	CHECK(cls == MPI_ERR_TOPOLOGY);
	MPI_Error_class(MPI_Neighbor_allgather(&d, 1, MPI_INT, co, 1, MPI_INT, MPI_COMM_WORLD), &cls);
	CHECK(cls == MPI_ERR_TOPOLOGY);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	dims();
	cart();
	ring();
	graph();
	dist_graph();
	errors();
	return mt_finish("t_topo");
}
