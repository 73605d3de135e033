/* A PMIx client used to test mpirun: each rank publishes a value, fences,
 * and checks every other rank's value; then it behaves as argv[1] asks, to
 * exercise the launcher's handling of exits, signals and aborts:
 *   ok | exit CODE RANK | kill RANK | nofinalize RANK | abort CODE | hang |
 *   where (prints where PMIx says the rank is: its local rank, node and
 *   node's peers, the number of nodes) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

/* One line: "where R lrank L nrank N node I host H peers P nodes K". */
static int where(const pmix_proc_t *me)
{
	pmix_proc_t wild;
	pmix_value_t *lr = NULL, *nr = NULL, *id = NULL, *host = NULL, *peers = NULL, *nodes = NULL;
	int bad;

	PMIX_PROC_LOAD(&wild, me->nspace, PMIX_RANK_WILDCARD);
	bad = PMIx_Get(me, PMIX_LOCAL_RANK, NULL, 0, &lr) || lr->type != PMIX_UINT16 ||
	      PMIx_Get(me, PMIX_NODE_RANK, NULL, 0, &nr) || nr->type != PMIX_UINT16 ||
	      PMIx_Get(me, PMIX_NODEID, NULL, 0, &id) || id->type != PMIX_UINT32 ||
	      PMIx_Get(me, PMIX_HOSTNAME, NULL, 0, &host) || host->type != PMIX_STRING ||
	      PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &peers) || peers->type != PMIX_STRING ||
	      PMIx_Get(&wild, PMIX_NUM_NODES, NULL, 0, &nodes) || nodes->type != PMIX_UINT32;
	if (bad)
		fprintf(stderr, "rank %u: PMIx does not say where it is\n", me->rank);
	else
		printf("where %u lrank %u nrank %u node %u host %s peers %s nodes %u\n", me->rank,
		       lr->data.uint16, nr->data.uint16, id->data.uint32, host->data.string,
		       peers->data.string, nodes->data.uint32);
	for (pmix_value_t **v = (pmix_value_t *[]){lr, nr, id, host, peers, nodes, NULL}; *v; v++)
		PMIX_VALUE_RELEASE(*v);
	return bad ? 5 : 0;
}

int main(int argc, char **argv)
{
	pmix_proc_t me, wild, peer;
	pmix_value_t v, *got;
	pmix_info_t coll;
	bool yes = true;
	uint32_t size;
	char key[64], want[64];
	const char *mode = argc > 1 ? argv[1] : "ok";
	int arg = argc > 2 ? atoi(argv[2]) : 0, who = argc > 3 ? atoi(argv[3]) : 0;

	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
		fprintf(stderr, "PMIx_Init failed\n");
		return 3;
	}
	PMIX_PROC_LOAD(&wild, me.nspace, PMIX_RANK_WILDCARD);
	if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &got) != PMIX_SUCCESS) {
		fprintf(stderr, "no job size\n");
		return 3;
	}
	size = got->data.uint32;
	PMIX_VALUE_RELEASE(got);
	snprintf(want, sizeof(want), "hello from %u", me.rank);
	v.type = PMIX_STRING;
	v.data.string = want;
	if (PMIx_Put(PMIX_GLOBAL, "mbx.test", &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS)
		return 3;
	PMIX_INFO_LOAD(&coll, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
	if (PMIx_Fence(&wild, 1, &coll, 1) != PMIX_SUCCESS) {
		fprintf(stderr, "fence failed\n");
		return 3;
	}
	for (uint32_t r = 0; r < size; r++) {
		PMIX_PROC_LOAD(&peer, me.nspace, r);
		snprintf(key, sizeof(key), "hello from %u", r);
		if (PMIx_Get(&peer, "mbx.test", NULL, 0, &got) != PMIX_SUCCESS ||
		    got->type != PMIX_STRING || strcmp(got->data.string, key)) {
			fprintf(stderr, "rank %u: wrong value from rank %u\n", me.rank, r);
			return 4;
		}
		PMIX_VALUE_RELEASE(got);
	}
	printf("rank %u of %u ok\n", me.rank, size);
	if (!strcmp(mode, "where") && where(&me))
		return 5;
	fflush(stdout);
	if (!strcmp(mode, "exit") && (int)me.rank == who) {
		PMIx_Finalize(NULL, 0);
		return arg;
	}
	if (!strcmp(mode, "kill") && (int)me.rank == arg)
		raise(SIGKILL);
	if (!strcmp(mode, "nofinalize") && (int)me.rank == arg)
		_exit(0);
	if (!strcmp(mode, "abort") && me.rank == 0)
		PMIx_Abort(arg, "asked to", NULL, 0);
	if (!strcmp(mode, "hang") || !strcmp(mode, "abort") || !strcmp(mode, "kill") ||
	    !strcmp(mode, "nofinalize"))
		for (;;)
			pause();
	PMIx_Finalize(NULL, 0);
	return 0;
}
