/*
 * Groups and intra-communicators. A communicator is a group (comm rank ->
 * world rank), the fabric address of each member, and a context id agreed by
 * its members: every process keeps the next id it has never used, and a new
 * communicator takes the largest such id among the parent's members, so it is
 * unused by all of them. Ids are not reused; 2^23 communicator creations fit
 * in the tag's 24-bit context field (mpi/TAGS.md).
 */
#include "mbmpi.h"

#include <stdio.h>

struct mbmpi_comm mbmpi_comm_world, mbmpi_comm_self;
static struct mbmpi_group mbmpi_group_empty = {.refs = 1, .size = 0, .rank = MPI_UNDEFINED};
static int mbmpi_tag_ub = MBMPI_TAG_UB;
static int mbmpi_attr_host = MPI_PROC_NULL, mbmpi_attr_io = MPI_ANY_SOURCE;
static int mbmpi_attr_wtime_global, mbmpi_attr_appnum, mbmpi_attr_universe;

struct mbmpi_group *mbmpi_group(MPI_Group h)
{
	if (h == MPI_GROUP_EMPTY)
		return &mbmpi_group_empty;
	if (h == MPI_GROUP_NULL)
		return NULL;
	return (struct mbmpi_group *)h;
}

MPI_Group mbmpi_group_handle(struct mbmpi_group *g)
{
	return g == &mbmpi_group_empty ? MPI_GROUP_EMPTY : (MPI_Group)g;
}

struct mbmpi_group *mbmpi_group_new(int size)
{
	struct mbmpi_group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->world = malloc(sizeof(int) * (size_t)(size ? size : 1));
	if (!g->world) {
		free(g);
		return NULL;
	}
	g->refs = 1;
	g->size = size;
	g->rank = MPI_UNDEFINED;
	return g;
}

void mbmpi_group_fix_rank(struct mbmpi_group *g)
{
	g->rank = MPI_UNDEFINED;
	for (int i = 0; i < g->size; i++)
		if (g->world[i] == mbmpi.world_rank)
			g->rank = i;
}

void mbmpi_group_release(struct mbmpi_group *g)
{
	if (!g || g == &mbmpi_group_empty)
		return;
	if (--g->refs == 0) {
		free(g->world);
		free(g);
	}
}

int mbmpi_comm_make(struct mbmpi_comm *c, struct mbmpi_group *g, uint32_t ctx)
{
	c->refs = 1;
	c->ctx = ctx;
	c->group = g;
	c->size = g->size;
	c->rank = g->rank;
	c->errh = MPI_ERRORS_ARE_FATAL;
	c->addr = malloc(sizeof(fi_addr_t) * (size_t)g->size);
	if (!c->addr)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < g->size; i++)
		c->addr[i] = mbmpi_comm_world.addr[g->world[i]];
	return MPI_SUCCESS;
}

int mbmpi_comm_init(void)
{
	struct mbmpi_group *gw = mbmpi_group_new(mbmpi.world_size), *gs = mbmpi_group_new(1);
	fi_addr_t *waddr = mbmpi_comm_world.addr;

	if (!gw || !gs)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < mbmpi.world_size; i++)
		gw->world[i] = i;
	gw->rank = mbmpi.world_rank;
	gs->world[0] = mbmpi.world_rank;
	gs->rank = 0;
	mbmpi_comm_world = (struct mbmpi_comm){.refs = 1, .ctx = 0, .rank = mbmpi.world_rank,
					       .size = mbmpi.world_size, .group = gw, .addr = waddr,
					       .errh = MPI_ERRORS_ARE_FATAL, .predef = true};
	strcpy(mbmpi_comm_world.name, "MPI_COMM_WORLD");
	mbmpi_comm_self = (struct mbmpi_comm){.refs = 1, .ctx = 2, .rank = 0, .size = 1, .group = gs,
					      .errh = MPI_ERRORS_ARE_FATAL, .predef = true};
	mbmpi_comm_self.addr = malloc(sizeof(fi_addr_t));
	if (!mbmpi_comm_self.addr)
		return MPI_ERR_NO_MEM;
	mbmpi_comm_self.addr[0] = waddr[mbmpi.world_rank];
	strcpy(mbmpi_comm_self.name, "MPI_COMM_SELF");
	mbu_ids_init(&mbmpi_ctx_ids, 2);	/* world and self; world's node communicators */
	mbmpi_ops_init();
	mbmpi_attr_universe = mbmpi.world_size;
	return MPI_SUCCESS;
}

void mbmpi_comm_fini(void)
{
	mbmpi_shm_free(&mbmpi_comm_world);
	mbmpi_hier_free(&mbmpi_comm_world);
	mbmpi_errh_release(mbmpi_comm_world.errh);
	mbmpi_errh_release(mbmpi_comm_self.errh);
	free(mbmpi_comm_self.addr);
	free(mbmpi_comm_world.addr);
	mbmpi_group_release(mbmpi_comm_self.group);
	mbmpi_group_release(mbmpi_comm_world.group);
	mbmpi_comm_world.refs = mbmpi_comm_self.refs = 0;
	mbmpi_comm_world.addr = mbmpi_comm_self.addr = NULL;
}

int mbmpi_comm_from_group(struct mbmpi_comm *parent, struct mbmpi_group *g, uint32_t ctx,
				 MPI_Comm *out)
{
	struct mbmpi_comm *c;

	if (g->rank == MPI_UNDEFINED) {
		mbmpi_ctx_put(ctx);
		mbmpi_group_release(g);
		*out = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	c = calloc(1, sizeof(*c));
	if (!c || mbmpi_comm_make(c, g, ctx)) {
		mbmpi_ctx_put(ctx);
		free(c ? c->addr : NULL);
		free(c);
		mbmpi_group_release(g);
		return MPI_ERR_NO_MEM;
	}
	c->errh = parent->errh;
	mbmpi_errh_retain(c->errh);
	*out = (MPI_Comm)c;
	return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, size, &c)))
		return ret;
	*size = mbmpi_comm_local_size(c);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_size)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, rank, &c)))
		return ret;
	*rank = c->rank;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_rank)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, group, &c)))
		return ret;
	c->group->refs++;
	*group = mbmpi_group_handle(c->group);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_group)

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	uint32_t ctx;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, newcomm, &c)))
		return ret;
	if (c->inter)
		ret = mbmpi_inter_dup(c, newcomm);
	else if ((ret = mbmpi_ctx_get(c, &ctx)))
		return MBMPI_ERR(c, ret);
	else {
		c->group->refs++;
		ret = mbmpi_comm_from_group(c, c->group, ctx, newcomm);
	}
	/* A duplicate keeps the topology, and the attributes whose copy
	 * callbacks ask for it. */
	if (!ret && c->topo && !(mbmpi_comm(*newcomm)->topo = mbmpi_topo_dup(c->topo))) {
		PMPI_Comm_free(newcomm);
		ret = MPI_ERR_NO_MEM;
	}
	if (!ret && (ret = mbmpi_attr_copy(MBMPI_KV_COMM, comm, c->attrs, *newcomm,
					   &mbmpi_comm(*newcomm)->attrs))) {
		struct mbmpi_comm *n = mbmpi_comm(*newcomm);

		/* The copies made so far are dropped without their delete callbacks. */
		while (n->attrs) {
			struct mbmpi_attr *a = n->attrs;
			n->attrs = a->next;
			free(a);
		}
		PMPI_Comm_free(newcomm);
	}
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_dup)

struct mbmpi_ck {
	int color, key, rank;
};

static int mbmpi_ck_cmp(const void *a, const void *b)
{
	const struct mbmpi_ck *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int mbmpi_split(struct mbmpi_comm *c, int color, int key, MPI_Comm *newcomm)
{
	struct mbmpi_ck *all;
	struct mbmpi_group *g;
	int *vals, n = 0, ret;
	uint32_t ctx;

	vals = malloc(sizeof(int) * 2 * (size_t)c->size);
	all = malloc(sizeof(*all) * (size_t)c->size);
	if (!vals || !all) {
		free(vals);
		free(all);
		return MPI_ERR_NO_MEM;
	}
	vals[2 * c->rank] = color;
	vals[2 * c->rank + 1] = key;
	ret = mbmpi_allgather_int(vals, 2, c);
	if (!ret)
		ret = mbmpi_ctx_get(c, &ctx);
	if (ret)
		goto out;
	if (color == MPI_UNDEFINED) {
		mbmpi_ctx_put(ctx);
		*newcomm = MPI_COMM_NULL;
		goto out;
	}
	for (int i = 0; i < c->size; i++)
		if (vals[2 * i] == color)
			all[n++] = (struct mbmpi_ck){.color = color, .key = vals[2 * i + 1], .rank = i};
	qsort(all, (size_t)n, sizeof(*all), mbmpi_ck_cmp);
	g = mbmpi_group_new(n);
	if (!g) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		g->world[i] = c->group->world[all[i].rank];
	mbmpi_group_fix_rank(g);
	ret = mbmpi_comm_from_group(c, g, ctx, newcomm);
out:
	free(vals);
	free(all);
	return ret;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!newcomm || (color < 0 && color != MPI_UNDEFINED))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	ret = c->inter ? mbmpi_inter_split(c, color, key, newcomm) : mbmpi_split(c, color, key, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_split)

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret, color = MPI_UNDEFINED;

	(void)info;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!newcomm || (type != MPI_COMM_TYPE_SHARED && type != MPI_UNDEFINED))
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	/* Colour: the lowest world rank on this node, from the names in the modex. */
	if (type == MPI_COMM_TYPE_SHARED)
		for (int r = 0; r < mbmpi.world_size; r++)
			if (mbmpi_same_node(r)) {
				color = r;
				break;
			}
	ret = mbmpi_split(c, color, key, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_split_type)

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_group *g = mbmpi_group(group), *copy;
	uint32_t ctx;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!g || g->refs <= 0)
		return MBMPI_ERR(c, MPI_ERR_GROUP);
	if (!newcomm)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if (c->inter) {
		ret = mbmpi_inter_create(c, g, newcomm);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	/* The group must be a subset of the communicator's. */
	for (int i = 0; i < g->size; i++) {
		bool in = false;
		for (int j = 0; j < c->size && !in; j++)
			in = c->group->world[j] == g->world[i];
		if (!in)
			return MBMPI_ERR(c, MPI_ERR_GROUP);
	}
	if ((ret = mbmpi_ctx_get(c, &ctx)))
		return MBMPI_ERR(c, ret);
	copy = mbmpi_group_new(g->size);
	if (!copy) {
		mbmpi_ctx_put(ctx);
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	}
	memcpy(copy->world, g->world, sizeof(int) * (size_t)g->size);
	mbmpi_group_fix_rank(copy);
	ret = mbmpi_comm_from_group(c, copy, ctx, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_create)

bool mbmpi_comm_on_one_node(const struct mbmpi_comm *c)
{
	const char *me;

	if (!mbmpi.hosts)
		return c->size == 1;
	me = mbmpi.hosts[mbmpi.world_rank];
	for (int i = 0; i < c->size; i++)
		if (strcmp(mbmpi.hosts[c->group->world[i]], me))
			return false;
	return true;
}

void mbmpi_comm_destroy(struct mbmpi_comm *c)
{
	mbmpi_ctx_put(c->ctx);
	mbmpi_shm_free(c);
	mbmpi_hier_free(c);
	free(c->addr);
	mbmpi_topo_free(c->topo);
	mbmpi_info_free(c->info);
	if (c->inter)
		mbmpi_inter_free(c);
	mbmpi_group_release(c->group);
	mbmpi_errh_release(c->errh);
	free(c);
}

int PMPI_Comm_free(MPI_Comm *comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if (!comm || mbmpi_check_comm(*comm, &c))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if (c->predef)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if ((ret = mbmpi_attr_clear(MBMPI_KV_COMM, *comm, &c->attrs)))
		return MBMPI_ERR(c, ret);
	/* Operations still pending on it keep it until they complete. */
	mbmpi_comm_release(c);
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_free)

int mbmpi_group_cmp(const struct mbmpi_group *a, const struct mbmpi_group *b)
{
	bool same_order = true;

	if (a->size != b->size)
		return MPI_UNEQUAL;
	for (int i = 0; i < a->size; i++)
		if (a->world[i] != b->world[i])
			same_order = false;
	if (same_order)
		return MPI_IDENT;
	for (int i = 0; i < a->size; i++) {
		bool found = false;
		for (int j = 0; j < b->size && !found; j++)
			found = a->world[i] == b->world[j];
		if (!found)
			return MPI_UNEQUAL;
	}
	return MPI_SIMILAR;
}

int PMPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
	MBMPI_GUARD();
	struct mbmpi_comm *x, *y;
	int r;

	MBMPI_CHECK_INIT();
	if (mbmpi_check_comm(a, &x) || mbmpi_check_comm(b, &y))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if (!result)
		return MBMPI_ERR(x, MPI_ERR_ARG);
	if (x == y) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (x->inter != y->inter) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	r = mbmpi_group_cmp(x->group, y->group);
	if (x->inter) {
		int r2 = mbmpi_group_cmp(x->rgroup, y->rgroup);

		r = r == MPI_UNEQUAL || r2 == MPI_UNEQUAL ? MPI_UNEQUAL
		    : r == MPI_IDENT && r2 == MPI_IDENT  ? MPI_IDENT : MPI_SIMILAR;
	}
	*result = r == MPI_IDENT ? MPI_CONGRUENT : r;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_compare)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	MBMPI_CHECK_INIT();
	if (mbmpi_check_comm(comm, &c))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if (!flag)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*flag = c->inter;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_test_inter)

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int *p = NULL;

	MBMPI_CHECK_INIT();
	if (mbmpi_check_comm(comm, &c))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if (!val || !flag)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	switch (keyval) {
	case MPI_TAG_UB: p = &mbmpi_tag_ub; break;
	case MPI_HOST: p = &mbmpi_attr_host; break;
	case MPI_IO: p = &mbmpi_attr_io; break;
	case MPI_WTIME_IS_GLOBAL: p = &mbmpi_attr_wtime_global; break;
	case MPI_APPNUM: p = &mbmpi_attr_appnum; break;
	case MPI_UNIVERSE_SIZE: p = &mbmpi_attr_universe; break;
	case MPI_LASTUSEDCODE: p = &mbmpi_lastusedcode; break;
	default: {
		int ret = mbmpi_attr_get(MBMPI_KV_COMM, c->attrs, keyval, val, flag);

		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	}
	*(int **)val = p;
	*flag = 1;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_get_attr)

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	MBMPI_CHECK_INIT();
	if (mbmpi_check_comm(comm, &c))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if (!name)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	snprintf(c->name, sizeof(c->name), "%s", name);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *len)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	MBMPI_CHECK_INIT();
	if (mbmpi_check_comm(comm, &c))
		return MBMPI_ERR(NULL, MPI_ERR_COMM);
	if (!name || !len)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*len = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_get_name)

/* ---- Groups ---- */

static int mbmpi_check_group(MPI_Group h, struct mbmpi_group **out)
{
	struct mbmpi_group *g = mbmpi_group(h);

	if (!g || g->refs <= 0)
		return MPI_ERR_GROUP;
	*out = g;
	return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
	MBMPI_GUARD();
	struct mbmpi_group *g;

	if (mbmpi_check_group(group, &g))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (!size)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*size = g->size;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
	MBMPI_GUARD();
	struct mbmpi_group *g;

	if (mbmpi_check_group(group, &g))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (!rank)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*rank = g->rank;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Group_rank)

static int mbmpi_group_out(struct mbmpi_group *g, MPI_Group *out)
{
	if (!g->size) {
		mbmpi_group_release(g);
		*out = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	mbmpi_group_fix_rank(g);
	*out = (MPI_Group)g;
	return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	MBMPI_GUARD();
	struct mbmpi_group *g, *ng;

	if (mbmpi_check_group(group, &g))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (n < 0 || n > g->size || (n && !ranks) || !newgroup)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size)
			return MBMPI_ERR(NULL, MPI_ERR_RANK);
		for (int j = 0; j < i; j++)
			if (ranks[j] == ranks[i])
				return MBMPI_ERR(NULL, MPI_ERR_RANK);
	}
	ng = mbmpi_group_new(n);
	if (!ng)
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	for (int i = 0; i < n; i++)
		ng->world[i] = g->world[ranks[i]];
	return mbmpi_group_out(ng, newgroup);
}
MBMPI_ALIAS(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	MBMPI_GUARD();
	struct mbmpi_group *g, *ng;
	char *drop;
	int k = 0;

	if (mbmpi_check_group(group, &g))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (n < 0 || n > g->size || (n && !ranks) || !newgroup)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	drop = calloc((size_t)g->size + 1, 1);
	if (!drop)
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
			free(drop);
			return MBMPI_ERR(NULL, MPI_ERR_RANK);
		}
		drop[ranks[i]] = 1;
	}
	ng = mbmpi_group_new(g->size - n);
	if (!ng) {
		free(drop);
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	}
	for (int i = 0; i < g->size; i++)
		if (!drop[i])
			ng->world[k++] = g->world[i];
	free(drop);
	return mbmpi_group_out(ng, newgroup);
}
MBMPI_ALIAS(Group_excl)

static bool mbmpi_group_has(const struct mbmpi_group *g, int w)
{
	for (int i = 0; i < g->size; i++)
		if (g->world[i] == w)
			return true;
	return false;
}

/* Union, intersection and difference keep the first group's order, then the
 * second's, as the standard defines them. */
static int mbmpi_group_setop(MPI_Group a, MPI_Group b, int which, MPI_Group *out)
{
	struct mbmpi_group *x, *y, *ng;
	int k = 0;

	if (mbmpi_check_group(a, &x) || mbmpi_check_group(b, &y))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (!out)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	ng = mbmpi_group_new(x->size + y->size);
	if (!ng)
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	for (int i = 0; i < x->size; i++) {
		bool in_y = mbmpi_group_has(y, x->world[i]);
		if (which == 0 || (which == 1 && in_y) || (which == 2 && !in_y))
			ng->world[k++] = x->world[i];
	}
	if (which == 0)
		for (int i = 0; i < y->size; i++)
			if (!mbmpi_group_has(x, y->world[i]))
				ng->world[k++] = y->world[i];
	ng->size = k;
	return mbmpi_group_out(ng, out);
}

int PMPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group *out)
{
	MBMPI_GUARD();
	return mbmpi_group_setop(a, b, 0, out);
}
MBMPI_ALIAS(Group_union)

int PMPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group *out)
{
	MBMPI_GUARD();
	return mbmpi_group_setop(a, b, 1, out);
}
MBMPI_ALIAS(Group_intersection)

int PMPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group *out)
{
	MBMPI_GUARD();
	return mbmpi_group_setop(a, b, 2, out);
}
MBMPI_ALIAS(Group_difference)

int PMPI_Group_translate_ranks(MPI_Group a, int n, const int r1[], MPI_Group b, int r2[])
{
	MBMPI_GUARD();
	struct mbmpi_group *x, *y;

	if (mbmpi_check_group(a, &x) || mbmpi_check_group(b, &y))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (n < 0 || (n && (!r1 || !r2)))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	for (int i = 0; i < n; i++)
		if (r1[i] != MPI_PROC_NULL && (r1[i] < 0 || r1[i] >= x->size))
			return MBMPI_ERR(NULL, MPI_ERR_RANK);
	for (int i = 0; i < n; i++) {
		if (r1[i] == MPI_PROC_NULL) {
			r2[i] = MPI_PROC_NULL;
			continue;
		}
		r2[i] = MPI_UNDEFINED;
		for (int j = 0; j < y->size; j++)
			if (y->world[j] == x->world[r1[i]])
				r2[i] = j;
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group a, MPI_Group b, int *result)
{
	MBMPI_GUARD();
	struct mbmpi_group *x, *y;

	if (mbmpi_check_group(a, &x) || mbmpi_check_group(b, &y))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	if (!result)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*result = mbmpi_group_cmp(x, y);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Group_compare)

int PMPI_Group_free(MPI_Group *group)
{
	MBMPI_GUARD();
	struct mbmpi_group *g;

	if (!group || mbmpi_check_group(*group, &g))
		return MBMPI_ERR(NULL, MPI_ERR_GROUP);
	mbmpi_group_release(g);
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Group_free)

/* Ranks named by (first, last, stride) triplets, in triplet order. */
static int mbmpi_range_ranks(const struct mbmpi_group *g, int n, int ranges[][3], int **out, int *count)
{
	long total = 0;
	int *r, k = 0;

	if (n < 0 || (n && !ranges))
		return MPI_ERR_ARG;
	for (int i = 0; i < n; i++) {
		int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];

		if (s == 0 || f < 0 || f >= g->size || l < 0 || l >= g->size)
			return MPI_ERR_RANK;
		if ((s > 0 && f > l) || (s < 0 && f < l))
			return MPI_ERR_ARG;
		total += (l - f) / s + 1;
	}
	if (total > g->size)
		return MPI_ERR_RANK;
	if (!(r = malloc(sizeof(int) * (size_t)(total ? total : 1))))
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++) {
		int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];

		if ((s > 0 && f > l) || (s < 0 && f < l))
			continue;
		for (int x = f; s > 0 ? x <= l : x >= l; x += s)
			r[k++] = x;
	}
	*out = r;
	*count = k;
	return MPI_SUCCESS;
}

/* Range forms expand the triplets and hand the list to the plain form,
 * which checks that no rank is named twice. */
static int group_ranges(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup,
			int (*plain)(MPI_Group, int, const int[], MPI_Group *), const char *fn)
{
	struct mbmpi_group *g;
	int *r, k, ret;

	if (mbmpi_check_group(group, &g))
		return mbmpi_err(NULL, MPI_ERR_GROUP, fn);
	if (!newgroup)
		return mbmpi_err(NULL, MPI_ERR_ARG, fn);
	if ((ret = mbmpi_range_ranks(g, n, ranges, &r, &k)))
		return mbmpi_err(NULL, ret, fn);
	ret = plain(group, k, r, newgroup);
	free(r);
	return ret;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	MBMPI_GUARD();
	return group_ranges(group, n, ranges, newgroup, PMPI_Group_incl, __func__);
}
MBMPI_ALIAS(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	MBMPI_GUARD();
	return group_ranges(group, n, ranges, newgroup, PMPI_Group_excl, __func__);
}
MBMPI_ALIAS(Group_range_excl)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	int ret;

	if (mbmpi_info_check(info))
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_INFO);
	if ((ret = PMPI_Comm_dup(comm, newcomm)))
		return ret;
	return info == MPI_INFO_NULL ? MPI_SUCCESS : PMPI_Comm_set_info(*newcomm, info);
}
MBMPI_ALIAS(Comm_dup_with_info)

/* Non-blocking: the context agreement is a schedule (mbmpi_nbc.c) and
 * the duplicate appears in *newcomm when the request completes. */
static int comm_idup(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req)
{
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!req || !newcomm)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if (mbmpi_info_check(info))
		return MBMPI_ERR(c, MPI_ERR_INFO);
	ret = mbmpi_comm_idup(c, info, newcomm, req);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
	MBMPI_GUARD();

	return comm_idup(comm, MPI_INFO_NULL, newcomm, req);
}
MBMPI_ALIAS(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req)
{
	MBMPI_GUARD();

	return comm_idup(comm, info, newcomm, req);
}
MBMPI_ALIAS(Comm_idup_with_info)

/* Collective over the group's members only: they agree on a context as
 * any creation does (mbmpi_ctx_get_group), over a stand-in communicator of
 * the group on the parent's contexts, with tags drawn from the caller's so
 * that creations by other groups of the same parent do not meet. */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c, tmp;
	struct mbmpi_group *g = mbmpi_group(group), *copy;
	uint32_t ctx;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!g || g->refs <= 0)
		return MBMPI_ERR(c, MPI_ERR_GROUP);
	if (!newcomm || tag < 0)
		return MBMPI_ERR(c, tag < 0 ? MPI_ERR_TAG : MPI_ERR_ARG);
	if (g->rank == MPI_UNDEFINED) {
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	for (int i = 0; i < g->size; i++)
		if (!mbmpi_group_has(c->group, g->world[i]))
			return MBMPI_ERR(c, MPI_ERR_GROUP);
	copy = mbmpi_group_new(g->size);
	if (!copy)
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	memcpy(copy->world, g->world, sizeof(int) * (size_t)g->size);
	mbmpi_group_fix_rank(copy);
	memset(&tmp, 0, sizeof(tmp));
	if ((ret = mbmpi_comm_make(&tmp, copy, c->ctx))) {
		free(tmp.addr);
		mbmpi_group_release(copy);
		return MBMPI_ERR(c, ret);
	}
	ret = mbmpi_ctx_get_group(&tmp, tag, &ctx);
	free(tmp.addr);
	if (ret) {
		mbmpi_group_release(copy);
		return MBMPI_ERR(c, ret);
	}
	ret = mbmpi_comm_from_group(c, copy, ctx, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_create_group)
