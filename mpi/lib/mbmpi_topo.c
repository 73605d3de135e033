/*
 * Process topologies: Cartesian grids, graphs and distributed graphs hung on
 * a communicator, the queries on them, and the neighbour lists the
 * neighbourhood collectives (mbmpi_nbc.c) walk. Ranks are never reordered
 * (reorder is allowed to be ignored), so a topology communicator is a split
 * or duplicate of its parent with the description attached; MPI_Comm_dup
 * copies it.
 */
#include "mbmpi.h"

MBMPI_API int mbmpi_unweighted[1], mbmpi_weights_empty[1];

struct mbmpi_topo {
	int kind;                 /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
	int ndims, *dims, *periods, *coords;
	int nnodes, nedges, *index, *edges;
	/* The neighbour lists of this rank, kept for every kind. */
	int nin, nout, *in, *out, *inw, *outw, *in_tag, *out_tag;
	bool weighted;
};

static int *dup_ints(const int *a, int n)
{
	int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

	if (p && n > 0 && a)
		memcpy(p, a, sizeof(int) * (size_t)n);
	return p;
}

void mbmpi_topo_free(struct mbmpi_topo *t)
{
	if (!t)
		return;
	free(t->dims);
	free(t->periods);
	free(t->coords);
	free(t->index);
	free(t->edges);
	free(t->in);
	free(t->out);
	free(t->inw);
	free(t->outw);
	free(t->in_tag);
	free(t->out_tag);
	free(t);
}

struct mbmpi_topo *mbmpi_topo_dup(const struct mbmpi_topo *t)
{
	struct mbmpi_topo *n = calloc(1, sizeof(*n));
	bool ok;

	if (!n)
		return NULL;
	*n = *t;
	n->dims = dup_ints(t->dims, t->ndims);
	n->periods = dup_ints(t->periods, t->ndims);
	n->coords = dup_ints(t->coords, t->ndims);
	n->index = dup_ints(t->index, t->nnodes);
	n->edges = dup_ints(t->edges, t->nedges);
	n->in = dup_ints(t->in, t->nin);
	n->out = dup_ints(t->out, t->nout);
	n->inw = dup_ints(t->inw, t->nin);
	n->outw = dup_ints(t->outw, t->nout);
	n->in_tag = t->in_tag ? dup_ints(t->in_tag, t->nin) : NULL;
	n->out_tag = t->out_tag ? dup_ints(t->out_tag, t->nout) : NULL;
	ok = n->dims && n->periods && n->coords && n->index && n->edges && n->in && n->out &&
	     n->inw && n->outw && (!t->in_tag || n->in_tag) && (!t->out_tag || n->out_tag);
	if (!ok) {
		mbmpi_topo_free(n);
		return NULL;
	}
	return n;
}

int mbmpi_topo_neighbors(struct mbmpi_comm *c, int *nin, const int **in, const int **in_tag, int *nout,
			 const int **out, const int **out_tag)
{
	struct mbmpi_topo *t = c->topo;

	if (!t)
		return MPI_ERR_TOPOLOGY;
	*nin = t->nin;
	*in = t->in;
	*in_tag = t->in_tag;
	*nout = t->nout;
	*out = t->out;
	*out_tag = t->out_tag;
	return MPI_SUCCESS;
}

static int topo_of(MPI_Comm comm, int kind, struct mbmpi_comm **c, struct mbmpi_topo **t)
{
	int ret;

	if ((ret = mbmpi_check_comm(comm, c)))
		return ret;
	if ((*c)->inter)
		return MPI_ERR_COMM;
	if (!(*c)->topo || (kind && (*c)->topo->kind != kind))
		return MPI_ERR_TOPOLOGY;
	*t = (*c)->topo;
	return MPI_SUCCESS;
}

#define TOPO_BEGIN(comm, kind, c, t)                                   \
	struct mbmpi_comm *c;                                          \
	struct mbmpi_topo *t;                                          \
	int ret;                                                       \
	MBMPI_CHECK_INIT();                                            \
	if ((ret = topo_of(comm, kind, &c, &t)))                       \
		return MBMPI_ERR(ret == MPI_ERR_TOPOLOGY ? c : NULL, ret);

/* ---- Dims_create ---- */

/* The factorisation of n into k non-increasing factors that is most even
 * (the standard asks for dimensions "as close to each other as possible"):
 * the smallest spread between largest and smallest, and among those the
 * largest smallest factor, then the largest next one, which is also what
 * MPICH answers. A search over the divisors of n, each at most the one
 * before and at least the k-th root of what is left. */
static bool dims_better(const int *a, const int *b, int total)
{
	if (a[0] - a[total - 1] != b[0] - b[total - 1])
		return a[0] - a[total - 1] < b[0] - b[total - 1];
	for (int i = total - 1; i >= 0; i--)
		if (a[i] != b[i])
			return a[i] > b[i];
	return false;
}

static void dims_search(const int *divs, int ndivs, int n, int k, int maxf, int *cur, int *best,
			int depth, int total, bool *found)
{
	if (k == 0) {
		if (n == 1 && (!*found || dims_better(cur, best, total))) {
			*found = true;
			memcpy(best, cur, sizeof(int) * (size_t)total);
		}
		return;
	}
	for (int j = 0; j < ndivs; j++) {
		int d = divs[j];
		long pw = 1;

		if (d > maxf || n % d)
			continue;
		for (int i = 0; i < k && pw < n; i++)
			pw *= d;
		if (pw < n)
			break; /* smaller d cannot cover what is left */
		cur[depth] = d;
		dims_search(divs, ndivs, n / d, k - 1, d, cur, best, depth + 1, total, found);
	}
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	MBMPI_GUARD();
	long fixed = 1;
	int nfree = 0, rest;

	MBMPI_CHECK_INIT();
	if (nnodes <= 0 || ndims < 0 || (ndims && !dims))
		return MBMPI_ERR(NULL, nnodes <= 0 ? MPI_ERR_ARG : MPI_ERR_DIMS);
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return MBMPI_ERR(NULL, MPI_ERR_DIMS);
		if (dims[i])
			fixed *= dims[i];
		else
			nfree++;
	}
	if (nnodes % fixed)
		return MBMPI_ERR(NULL, MPI_ERR_DIMS);
	rest = (int)(nnodes / fixed);
	if (!nfree)
		return rest == 1 ? MPI_SUCCESS : MBMPI_ERR(NULL, MPI_ERR_DIMS);
	{
		/* The divisors of what is to share out, largest first. */
		int *f = malloc(sizeof(int) * (size_t)nfree * 2), nd = 0, *divs;
		bool found = false;

		divs = malloc(sizeof(int) * 2 * 1400);
		if (!f || !divs) {
			free(f);
			free(divs);
			return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
		}
		for (int d = 1; (long)d * d <= rest; d++)
			if (rest % d == 0) {
				divs[nd++] = d;
				if (d != rest / d)
					divs[nd++] = rest / d;
			}
		for (int i = 0; i < nd; i++)
			for (int j = i + 1; j < nd; j++)
				if (divs[j] > divs[i]) {
					int x = divs[i];
					divs[i] = divs[j];
					divs[j] = x;
				}
		dims_search(divs, nd, rest, nfree, rest, f, f + nfree, 0, nfree, &found);
		free(divs);
		for (int i = 0, k = 0; i < ndims; i++)
			if (!dims[i])
				dims[i] = f[nfree + k++];
		free(f);
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Dims_create)

/* ---- Cartesian ---- */

static void cart_coords(const struct mbmpi_topo *t, int rank, int *coords)
{
	for (int i = t->ndims - 1; i >= 0; i--) {
		coords[i] = rank % t->dims[i];
		rank /= t->dims[i];
	}
}

/* MPI_PROC_NULL off a non-periodic edge. */
static int cart_rank_of(const struct mbmpi_topo *t, const int *coords)
{
	int r = 0;

	for (int i = 0; i < t->ndims; i++) {
		int x = coords[i];

		if (x < 0 || x >= t->dims[i]) {
			if (!t->periods[i])
				return MPI_PROC_NULL;
			x = ((x % t->dims[i]) + t->dims[i]) % t->dims[i];
		}
		r = r * t->dims[i] + x;
	}
	return r;
}

static void cart_shift(const struct mbmpi_topo *t, int dim, int disp, int *src, int *dst)
{
	int *c = malloc(sizeof(int) * (size_t)(t->ndims ? t->ndims : 1));

	if (!c) {
		*src = *dst = MPI_PROC_NULL;
		return;
	}
	memcpy(c, t->coords, sizeof(int) * (size_t)t->ndims);
	c[dim] = t->coords[dim] + disp;
	*dst = cart_rank_of(t, c);
	c[dim] = t->coords[dim] - disp;
	*src = cart_rank_of(t, c);
	free(c);
}

/* Neighbours of a Cartesian rank, per dimension the negative then the
 * positive one. What goes to the negative neighbour arrives in its
 * positive slot: the tag says which direction a message travelled. */
static int cart_lists(struct mbmpi_topo *t, int rank)
{
	int n = 2 * t->ndims;

	t->coords = malloc(sizeof(int) * (size_t)(t->ndims ? t->ndims : 1));
	t->in = malloc(sizeof(int) * (size_t)(n ? n : 1));
	t->out = malloc(sizeof(int) * (size_t)(n ? n : 1));
	t->in_tag = malloc(sizeof(int) * (size_t)(n ? n : 1));
	t->out_tag = malloc(sizeof(int) * (size_t)(n ? n : 1));
	t->inw = calloc((size_t)(n ? n : 1), sizeof(int));
	t->outw = calloc((size_t)(n ? n : 1), sizeof(int));
	t->index = malloc(sizeof(int));
	t->edges = malloc(sizeof(int));
	if (!t->coords || !t->in || !t->out || !t->in_tag || !t->out_tag || !t->inw || !t->outw ||
	    !t->index || !t->edges)
		return MPI_ERR_NO_MEM;
	cart_coords(t, rank, t->coords);
	t->nin = t->nout = n;
	for (int d = 0; d < t->ndims; d++) {
		int src, dst;

		cart_shift(t, d, 1, &src, &dst);
		t->in[2 * d] = t->out[2 * d] = src;
		t->in[2 * d + 1] = t->out[2 * d + 1] = dst;
		/* Sent toward negative: tag 2d; the receiver's positive slot. */
		t->out_tag[2 * d] = 2 * d;
		t->out_tag[2 * d + 1] = 2 * d + 1;
		t->in_tag[2 * d] = 2 * d + 1;
		t->in_tag[2 * d + 1] = 2 * d;
	}
	return MPI_SUCCESS;
}

/* A communicator of the first `n` ranks of c (the others get
 * MPI_COMM_NULL) carrying topology t, which it then owns. */
static int topo_comm(struct mbmpi_comm *c, int n, struct mbmpi_topo *t, MPI_Comm *out)
{
	MPI_Comm h = (MPI_Comm)c;
	int ret;

	if (c->predef)
		h = c == &mbmpi_comm_world ? MPI_COMM_WORLD : MPI_COMM_SELF;
	ret = PMPI_Comm_split(h, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, out);
	if (ret || *out == MPI_COMM_NULL) {
		mbmpi_topo_free(t);
		return ret;
	}
	mbmpi_comm(*out)->topo = t;
	return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
		     MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_topo *t;
	long n = 1;
	int ret;

	(void)reorder;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!newcomm || ndims < 0 || (ndims && (!dims || !periods)))
		return MBMPI_ERR(c, ndims < 0 ? MPI_ERR_DIMS : MPI_ERR_ARG);
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return MBMPI_ERR(c, MPI_ERR_DIMS);
		n *= dims[i];
		if (n > c->size)
			return MBMPI_ERR(c, MPI_ERR_ARG);
	}
	if (!(t = calloc(1, sizeof(*t))))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	t->kind = MPI_CART;
	t->ndims = ndims;
	t->dims = dup_ints(dims, ndims);
	t->periods = malloc(sizeof(int) * (size_t)(ndims ? ndims : 1));
	if (!t->dims || !t->periods) {
		mbmpi_topo_free(t);
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	}
	for (int i = 0; i < ndims; i++)
		t->periods[i] = periods[i] != 0;
	if (c->rank < n && (ret = cart_lists(t, c->rank))) {
		mbmpi_topo_free(t);
		return MBMPI_ERR(c, ret);
	}
	ret = topo_comm(c, (int)n, t, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_create)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_CART, c, t);
	if (rank < 0 || rank >= c->size)
		return MBMPI_ERR(c, MPI_ERR_RANK);
	if (maxdims < t->ndims || (t->ndims && !coords))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	cart_coords(t, rank, coords);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_coords)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_CART, c, t);
	if (!rank || (t->ndims && !coords))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < t->ndims; i++)
		if (!t->periods[i] && (coords[i] < 0 || coords[i] >= t->dims[i]))
			return MBMPI_ERR(c, MPI_ERR_ARG);
	*rank = cart_rank_of(t, coords);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_rank)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *src, int *dst)
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_CART, c, t);
	if (direction < 0 || direction >= t->ndims || !src || !dst)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	cart_shift(t, direction, disp, src, dst);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_shift)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_CART, c, t);
	if (maxdims < t->ndims || (t->ndims && (!dims || !periods || !coords)))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < t->ndims; i++) {
		dims[i] = t->dims[i];
		periods[i] = t->periods[i];
		coords[i] = t->coords[i];
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_get)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_CART, c, t);
	if (!ndims)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*ndims = t->ndims;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cartdim_get)

/* The ranks that share this rank's coordinates in the dropped dimensions,
 * as a grid of the kept ones. */
int PMPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_topo *n;
	int color = 0, key = 0, k = 0;

	TOPO_BEGIN(comm, MPI_CART, c, t);
	if (!newcomm || (t->ndims && !remain))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < t->ndims; i++) {
		if (remain[i]) {
			key = key * t->dims[i] + t->coords[i];
			k++;
		} else {
			color = color * t->dims[i] + t->coords[i];
		}
	}
	if (!(n = calloc(1, sizeof(*n))))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	n->kind = MPI_CART;
	n->ndims = k;
	n->dims = malloc(sizeof(int) * (size_t)(k ? k : 1));
	n->periods = malloc(sizeof(int) * (size_t)(k ? k : 1));
	if (!n->dims || !n->periods) {
		mbmpi_topo_free(n);
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	}
	for (int i = 0, j = 0; i < t->ndims; i++)
		if (remain[i]) {
			n->dims[j] = t->dims[i];
			n->periods[j++] = t->periods[i];
		}
	if ((ret = PMPI_Comm_split((MPI_Comm)c, color, key, newcomm))) {
		mbmpi_topo_free(n);
		return ret;
	}
	if ((ret = cart_lists(n, key))) {
		mbmpi_topo_free(n);
		PMPI_Comm_free(newcomm);
		return MBMPI_ERR(c, ret);
	}
	mbmpi_comm(*newcomm)->topo = n;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_sub)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	long n = 1;
	int ret;

	(void)periods;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!newrank || ndims < 0 || (ndims && !dims))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < ndims; i++)
		n *= dims[i] > 0 ? dims[i] : 1;
	if (n > c->size)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Cart_map)

/* ---- Graphs ---- */

static int graph_lists(struct mbmpi_topo *t, int rank)
{
	int lo = rank ? t->index[rank - 1] : 0, n = t->index[rank] - lo;

	t->in = dup_ints(t->edges + lo, n);
	t->out = dup_ints(t->edges + lo, n);
	t->inw = calloc((size_t)(n ? n : 1), sizeof(int));
	t->outw = calloc((size_t)(n ? n : 1), sizeof(int));
	t->dims = malloc(sizeof(int));
	t->periods = malloc(sizeof(int));
	t->coords = malloc(sizeof(int));
	t->nin = t->nout = n;
	return t->in && t->out && t->inw && t->outw && t->dims && t->periods && t->coords
		       ? MPI_SUCCESS
		       : MPI_ERR_NO_MEM;
}

int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
		      MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_topo *t;
	int ret, nedges;

	(void)reorder;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!newcomm || nnodes < 0 || nnodes > c->size || (nnodes && (!index || !edges)))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return MBMPI_ERR(c, MPI_ERR_ARG);
	nedges = nnodes ? index[nnodes - 1] : 0;
	for (int i = 0; i < nedges; i++)
		if (edges[i] < 0 || edges[i] >= nnodes)
			return MBMPI_ERR(c, MPI_ERR_ARG);
	if (!(t = calloc(1, sizeof(*t))))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	t->kind = MPI_GRAPH;
	t->nnodes = nnodes;
	t->nedges = nedges;
	t->index = dup_ints(index, nnodes);
	t->edges = dup_ints(edges, nedges);
	ret = !t->index || !t->edges ? MPI_ERR_NO_MEM : c->rank < nnodes ? graph_lists(t, c->rank) : 0;
	if (ret) {
		mbmpi_topo_free(t);
		return MBMPI_ERR(c, ret);
	}
	ret = topo_comm(c, nnodes, t, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Graph_create)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_GRAPH, c, t);
	if (!nnodes || !nedges)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*nnodes = t->nnodes;
	*nedges = t->nedges;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_GRAPH, c, t);
	if ((maxindex && !index) || (maxedges && !edges) || maxindex < 0 || maxedges < 0)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < t->nnodes && i < maxindex; i++)
		index[i] = t->index[i];
	for (int i = 0; i < t->nedges && i < maxedges; i++)
		edges[i] = t->edges[i];
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Graph_get)

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *n)
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_GRAPH, c, t);
	if (rank < 0 || rank >= t->nnodes)
		return MBMPI_ERR(c, MPI_ERR_RANK);
	if (!n)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*n = t->index[rank] - (rank ? t->index[rank - 1] : 0);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int max, int neighbors[])
{
	MBMPI_GUARD();
	int lo;

	TOPO_BEGIN(comm, MPI_GRAPH, c, t);
	if (rank < 0 || rank >= t->nnodes)
		return MBMPI_ERR(c, MPI_ERR_RANK);
	if (max < 0 || (max && !neighbors))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	lo = rank ? t->index[rank - 1] : 0;
	for (int i = lo; i < t->index[rank] && i - lo < max; i++)
		neighbors[i - lo] = t->edges[i];
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Graph_neighbors)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	(void)index, (void)edges;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!newrank || nnodes < 0 || nnodes > c->size)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Graph_map)

/* ---- Distributed graphs ---- */

static bool weights_given(const int *w)
{
	return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
}

static int dist_make(struct mbmpi_comm *c, int nin, const int *in, const int *inw, int nout,
		     const int *out, const int *outw, bool weighted, MPI_Comm *newcomm)
{
	struct mbmpi_topo *t = calloc(1, sizeof(*t));
	MPI_Comm h = c->predef ? (c == &mbmpi_comm_world ? MPI_COMM_WORLD : MPI_COMM_SELF) : (MPI_Comm)c;
	int ret;

	if (!t)
		return MPI_ERR_NO_MEM;
	t->kind = MPI_DIST_GRAPH;
	t->nin = nin;
	t->nout = nout;
	t->weighted = weighted;
	t->in = dup_ints(in, nin);
	t->out = dup_ints(out, nout);
	t->inw = weighted && inw ? dup_ints(inw, nin) : calloc((size_t)(nin ? nin : 1), sizeof(int));
	t->outw = weighted && outw ? dup_ints(outw, nout) : calloc((size_t)(nout ? nout : 1), sizeof(int));
	t->dims = malloc(sizeof(int));
	t->periods = malloc(sizeof(int));
	t->coords = malloc(sizeof(int));
	t->index = malloc(sizeof(int));
	t->edges = malloc(sizeof(int));
	if (!t->in || !t->out || !t->inw || !t->outw || !t->dims || !t->periods || !t->coords ||
	    !t->index || !t->edges) {
		mbmpi_topo_free(t);
		return MPI_ERR_NO_MEM;
	}
	if ((ret = PMPI_Comm_dup(h, newcomm))) {
		mbmpi_topo_free(t);
		return ret;
	}
	mbmpi_topo_free(mbmpi_comm(*newcomm)->topo);
	mbmpi_comm(*newcomm)->topo = t;
	return MPI_SUCCESS;
}

static int check_ranks(const int *r, int n, int size)
{
	if (n < 0 || (n && !r))
		return MPI_ERR_ARG;
	for (int i = 0; i < n; i++)
		if (r[i] < 0 || r[i] >= size)
			return MPI_ERR_RANK;
	return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int nin, const int in[], const int inw[], int nout,
				    const int out[], const int outw[], MPI_Info info, int reorder,
				    MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	(void)info, (void)reorder;
	if ((ret = MBMPI_COMM_QUERY(comm, newcomm, &c)))
		return ret;
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if ((ret = check_ranks(in, nin, c->size)) || (ret = check_ranks(out, nout, c->size)))
		return MBMPI_ERR(c, ret);
	if ((nin && !inw) || (nout && !outw))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	/* Weighted unless MPI_UNWEIGHTED: MPI_WEIGHTS_EMPTY is a weighted
	 * graph with no edges here. */
	ret = dist_make(c, nin, in, inw, nout, out, outw, inw != MPI_UNWEIGHTED || outw != MPI_UNWEIGHTED,
			newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Dist_graph_create_adjacent)

/* Each rank names some edges; every edge goes to its source (an
 * out-neighbour) and its destination (an in-neighbour) by one all-to-all.
 * Edges keep the order of (naming rank, position) on both ends. */
int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
			   const int dests[], const int weights[], MPI_Info info, int reorder,
			   MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int *scount = NULL, *rcount = NULL, *sdisp = NULL, *rdisp = NULL, *sbuf = NULL, *rbuf = NULL;
	int *in = NULL, *out = NULL, *inw = NULL, *outw = NULL, nin = 0, nout = 0, total = 0, ret, p;
	bool weighted = weights != MPI_UNWEIGHTED;
	MPI_Comm h;

	(void)info, (void)reorder;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	h = c->predef ? (c == &mbmpi_comm_world ? MPI_COMM_WORLD : MPI_COMM_SELF) : comm;
	if (!newcomm || n < 0 || (n && (!sources || !degrees)) || (n && !weights))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if ((ret = check_ranks(sources, n, c->size)))
		return MBMPI_ERR(c, ret);
	for (int i = 0; i < n; i++) {
		if (degrees[i] < 0)
			return MBMPI_ERR(c, MPI_ERR_ARG);
		total += degrees[i];
	}
	if ((ret = check_ranks(dests, total, c->size)))
		return MBMPI_ERR(c, ret);
	p = c->size;
	scount = calloc((size_t)p, sizeof(int));
	rcount = calloc((size_t)p, sizeof(int));
	sdisp = calloc((size_t)p, sizeof(int));
	rdisp = calloc((size_t)p, sizeof(int));
	sbuf = malloc(sizeof(int) * 4 * (size_t)(2 * total + 1));
	if (!scount || !rcount || !sdisp || !rdisp || !sbuf) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	/* Records of 4 ints: kind (0 out, 1 in), peer, weight, order. */
	for (int i = 0, e = 0; i < n; i++)
		for (int k = 0; k < degrees[i]; k++, e++) {
			scount[sources[i]] += 4;
			scount[dests[e]] += 4;
		}
	for (int i = 1; i < p; i++)
		sdisp[i] = sdisp[i - 1] + scount[i - 1];
	{
		int *at = calloc((size_t)p, sizeof(int));

		if (!at) {
			ret = MPI_ERR_NO_MEM;
			goto out;
		}
		for (int i = 0, e = 0; i < n; i++)
			for (int k = 0; k < degrees[i]; k++, e++) {
				int w = weighted ? weights[e] : 0, *r;

				r = &sbuf[sdisp[sources[i]] + at[sources[i]]];
				at[sources[i]] += 4;
				r[0] = 0, r[1] = dests[e], r[2] = w, r[3] = c->rank;
				r = &sbuf[sdisp[dests[e]] + at[dests[e]]];
				at[dests[e]] += 4;
				r[0] = 1, r[1] = sources[i], r[2] = w, r[3] = c->rank;
			}
		free(at);
	}
	if ((ret = PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, h)))
		goto out;
	total = 0;
	for (int i = 0; i < p; i++) {
		rdisp[i] = total;
		total += rcount[i];
	}
	if (!(rbuf = malloc(sizeof(int) * (size_t)(total + 1)))) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	if ((ret = PMPI_Alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT, h)))
		goto out;
	in = malloc(sizeof(int) * (size_t)(total / 4 + 1));
	out = malloc(sizeof(int) * (size_t)(total / 4 + 1));
	inw = malloc(sizeof(int) * (size_t)(total / 4 + 1));
	outw = malloc(sizeof(int) * (size_t)(total / 4 + 1));
	if (!in || !out || !inw || !outw) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	for (int i = 0; i < total; i += 4) {
		if (rbuf[i] == 0) {
			out[nout] = rbuf[i + 1];
			outw[nout++] = rbuf[i + 2];
		} else {
			in[nin] = rbuf[i + 1];
			inw[nin++] = rbuf[i + 2];
		}
	}
	ret = dist_make(c, nin, in, inw, nout, out, outw, weighted, newcomm);
out:
	free(scount);
	free(rcount);
	free(sdisp);
	free(rdisp);
	free(sbuf);
	free(rbuf);
	free(in);
	free(out);
	free(inw);
	free(outw);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *nin, int *nout, int *weighted)
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_DIST_GRAPH, c, t);
	if (!nin || !nout || !weighted)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*nin = t->nin;
	*nout = t->nout;
	*weighted = t->weighted;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Dist_graph_neighbors_count)

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxin, int in[], int inw[], int maxout, int out[],
			      int outw[])
{
	MBMPI_GUARD();
	TOPO_BEGIN(comm, MPI_DIST_GRAPH, c, t);
	if (maxin < 0 || maxout < 0 || (maxin && !in) || (maxout && !out))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < t->nin && i < maxin; i++) {
		in[i] = t->in[i];
		if (t->weighted && weights_given(inw) && inw)
			inw[i] = t->inw[i];
	}
	for (int i = 0; i < t->nout && i < maxout; i++) {
		out[i] = t->out[i];
		if (t->weighted && weights_given(outw) && outw)
			outw[i] = t->outw[i];
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Dist_graph_neighbors)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, status, &c)))
		return ret;
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	*status = c->topo ? c->topo->kind : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Topo_test)
