/* mpirun: the launcher of Matchbox MPI. It is a PMIx server (the host side
 * of libpmix): it registers one namespace for the job, describing where
 * each rank is (one host, or hosts of --ppn ranks each that --host-prefix
 * reaches), forks the ranks with the environment PMIx_server_setup_fork
 * gives them, answers their fences itself (every rank, on any host, is this
 * one server's client, so the data the PMIx library collected is already
 * everything), and watches them. The job ends
 * with the first non-zero rank status; a rank killed by a signal, or one that
 * connected to PMIx and exited without finalizing, ends the whole job within
 * about two seconds with a message naming the rank; PMIx_Abort (MPI_Abort)
 * ends every rank and mpirun exits with its code; SIGINT and SIGTERM are
 * passed on to the ranks. With --bind-to, each rank is bound (through hwloc,
 * before it starts) to one core, NUMA node or package of those mpirun may
 * use, by its index on its host, round robin. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

#include "mbmpi_params.h"
#include "mbu_shm.h"

extern char **environ;

struct rank {
	pid_t pid;
	int out[2], err[2];
	bool connected, finalized, done;
	int status;		/* exit code, or 128 + signal */
	char partial[2][4096];
	size_t plen[2];
};

static struct {
	int n;
	struct rank *r;
	char nspace[PMIX_MAX_NSLEN + 1];
	bool tag_output;
	double timeout;
	_Atomic int abort_requested;
	_Atomic int abort_status;
	_Atomic int signal_seen;
	int wake[2];		/* self-pipe: PMIx thread and signal handler -> main */
	char tmpdir[64];
	int ppn;                /* ranks per host with --host-prefix */
	const char *host_prefix;/* command words before each rank's, %h = host */
	const char *pmix_if;    /* interface the PMIx server listens on */
	hwloc_topology_t topo;  /* loaded with --bind-to */
	hwloc_obj_type_t bind_type;
	const char *bind_name;  /* as --bind-to named it */
	int nbind;              /* objects of bind_type mpirun may use; 0: no binding */
	bool report_bindings;
} job;

static void wake_main(void)
{
	char c = 1;

	if (write(job.wake[1], &c, 1) < 0)
		(void)0;	/* the pipe is non-blocking; full means awake */
}

static int rank_of(const pmix_proc_t *proc)
{
	if (!proc || strncmp(proc->nspace, job.nspace, PMIX_MAX_NSLEN))
		return -1;
	return proc->rank < (pmix_rank_t)job.n ? (int)proc->rank : -1;
}

static pmix_status_t on_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
				  void *cbdata)
{
	int r = rank_of(proc);

	(void)obj; (void)cb; (void)cbdata;
	if (r >= 0)
		__atomic_store_n(&job.r[r].connected, true, __ATOMIC_RELEASE);
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_finalized(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
				  void *cbdata)
{
	int r = rank_of(proc);

	(void)obj; (void)cb; (void)cbdata;
	if (r >= 0)
		__atomic_store_n(&job.r[r].finalized, true, __ATOMIC_RELEASE);
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_abort(const pmix_proc_t *proc, void *obj, int status, const char msg[],
			      pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cb,
			      void *cbdata)
{
	(void)obj; (void)procs; (void)nprocs; (void)cb; (void)cbdata;
	fprintf(stderr, "mpirun: rank %d called abort with code %d%s%s\n", rank_of(proc), status,
		msg && *msg ? ": " : "", msg ? msg : "");
	atomic_store(&job.abort_status, status);
	atomic_store(&job.abort_requested, 1);
	wake_main();
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
			      size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cb,
			      void *cbdata)
{
	(void)procs; (void)nprocs; (void)info; (void)ninfo;
	/* Every participant is on this node: the library has gathered all of
	 * it already, so hand it straight back. */
	if (cb)
		cb(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
	return PMIX_SUCCESS;
}

static pmix_status_t on_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
			       pmix_modex_cbfunc_t cb, void *cbdata)
{
	(void)proc; (void)info; (void)ninfo; (void)cb; (void)cbdata;
	return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t module = {
	.client_connected = on_connected,
	.client_finalized = on_finalized,
	.abort = on_abort,
	.fence_nb = on_fence,
	.direct_modex = on_dmodex,
};

static void done_cb(pmix_status_t st, void *cbdata)
{
	(void)st;
	atomic_store((_Atomic int *)cbdata, 1);
}

static void wait_flag(_Atomic int *f)
{
	while (!atomic_load(f))
		usleep(100);
}

static void on_signal(int sig)
{
	atomic_store(&job.signal_seen, sig);
	wake_main();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	return remove(path);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mpirun -n N [-x VAR[=VALUE]]... [--tag-output] [--timeout SECONDS] "
		"program [args...]\n"
		"       [--ppn P --host-prefix 'WORDS %%h'] [--pmix-if IFACE]  (ranks on several hosts:\n"
		"        rank r runs behind WORDS with %%h = r / P; the PMIx server listens on IFACE)\n"
		"       [--bind-to core|numa|socket|hwthread|none] [--report-bindings]  (bind each\n"
		"        rank by its index on its host, round robin; none by default)\n"
		"       mpirun --params   (the MATCHBOX_MPI_* variables of libmpi)\n");
	exit(2);
}

/* Runs the rank behind the --host-prefix words (e.g. "ip netns exec mbx-h%h"),
 * with %h replaced by the rank's host number. */
static void exec_on_host(int host, char **cmd, char **env)
{
	char *words = strdup(job.host_prefix), *save = NULL, *w;
	char **argv = calloc(strlen(job.host_prefix) + 64 + 1024, sizeof(char *));
	int n = 0;

	if (!words || !argv)
		_exit(127);
	for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *h = strstr(w, "%h"), buf[256];

		if (h) {
			snprintf(buf, sizeof(buf), "%.*s%d%s", (int)(h - w), w, host, h + 2);
			w = strdup(buf);
		}
		argv[n++] = w;
	}
	for (int i = 0; cmd[i] && n < 1000 + 64; i++)
		argv[n++] = cmd[i];
	execvpe(argv[0], argv, env);
	fprintf(stderr, "mpirun: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Ranks per host: all of them on one host unless --host-prefix spreads them. */
static int per_host(void)
{
	return job.host_prefix && job.ppn > 0 ? job.ppn : job.n;
}

/* Loads the topology and counts the objects ranks bind to. Only what mpirun
 * may use counts (what its cgroup and its own binding allow), so a job
 * started inside a Slurm allocation or under taskset stays in it. */
static int bind_setup(const char *what)
{
	static const struct { const char *name; hwloc_obj_type_t type; } kinds[] = {
		{"core", HWLOC_OBJ_CORE}, {"numa", HWLOC_OBJ_NUMANODE},
		{"socket", HWLOC_OBJ_PACKAGE}, {"package", HWLOC_OBJ_PACKAGE},
		{"hwthread", HWLOC_OBJ_PU},
	};
	size_t k;

	if (!strcmp(what, "none"))
		return 0;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strcmp(what, kinds[k].name))
			break;
	if (k == sizeof(kinds) / sizeof(kinds[0])) {
		fprintf(stderr, "mpirun: --bind-to takes core, numa, socket, hwthread or none, "
			"not '%s'\n", what);
		return -1;
	}
	if (hwloc_topology_init(&job.topo) ||
	    hwloc_topology_set_flags(job.topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
						 HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING) ||
	    hwloc_topology_load(job.topo)) {
		fprintf(stderr, "mpirun: cannot read this machine's topology (hwloc)\n");
		return -1;
	}
	job.bind_type = kinds[k].type;
	job.bind_name = kinds[k].name;
	job.nbind = hwloc_get_nbobjs_by_type(job.topo, job.bind_type);
	if (job.nbind <= 0) {
		/* A machine that reports no such level (a NUMA node on some
		 * virtual machines) runs unbound rather than not at all. */
		fprintf(stderr, "mpirun: no %s here to bind to; ranks run unbound\n", what);
		job.nbind = 0;
	}
	return 0;
}

/* The index of the object a rank binds to: its index on its host, round robin. */
static int bind_index(int rank)
{
	return rank % per_host() % job.nbind;
}

/* The cpuset of the object a rank binds to, or NULL when ranks run unbound. */
static hwloc_const_cpuset_t bind_set(int rank)
{
	if (!job.nbind)
		return NULL;
	return hwloc_get_obj_by_type(job.topo, job.bind_type, (unsigned)bind_index(rank))->cpuset;
}

static void list_params(void)
{
	/* An empty default is worked out at run time; the meaning says how. */
#define MBMPI_PRINT_PARAM(name, dflt, what) printf("%-30s %-10s %s\n", name, *dflt ? dflt : "-", what);
	printf("%-30s %-10s %s\n", "variable", "default", "meaning");
	MBMPI_PARAMS(MBMPI_PRINT_PARAM)
#undef MBMPI_PRINT_PARAM
	exit(0);
}

/* The name PMIx gives host h. One host is this one. Across hosts, the
 * host-prefix word that holds %h names it ("ssh node%h" gives node0, as the
 * host calls itself; "ip netns exec mbx-h%h" gives mbx-h0; of a VAR=value
 * word, the value), else host<h>. */
static void host_name(int h, char *out, size_t len)
{
	const char *w = job.host_prefix, *mark, *end;

	if (!w) {
		if (gethostname(out, len - 1))
			snprintf(out, len, "localhost");
		out[len - 1] = 0;
		return;
	}
	mark = strstr(w, "%h");
	if (!mark) {
		snprintf(out, len, "host%d", h);
		return;
	}
	while (mark > w && mark[-1] != ' ' && mark[-1] != '=')
		mark--;
	end = strchr(mark, ' ');
	end = end ? end : mark + strlen(mark);
	{
		char word[256], *at;

		snprintf(word, sizeof(word), "%.*s", (int)(end - mark), mark);
		at = strstr(word, "%h");
		snprintf(out, len, "%.*s%d%s", (int)(at - word), word, h, at + 2);
	}
}

/* One info list element holding an array (a node's or a process's data). */
static pmix_status_t add_array(void *list, const char *key, void *sub)
{
	pmix_data_array_t arr;
	pmix_status_t ret = PMIx_Info_list_convert(sub, &arr);

	PMIx_Info_list_release(sub);
	if (ret == PMIX_SUCCESS)
		ret = PMIx_Info_list_add(list, key, &arr, PMIX_DATA_ARRAY);
	PMIX_DATA_ARRAY_DESTRUCT(&arr);
	return ret;
}

/* Describes the job to PMIx: its size, its hosts (one, or those
 * --host-prefix spreads ranks over, --ppn each) and where each rank is, so
 * that a library asking for its local rank, its node's peers or the
 * number of nodes gets the truth on every host. */
static int register_job(void)
{
	int ppn = per_host(), hosts = (job.n + ppn - 1) / ppn, i, ret = PMIX_SUCCESS;
	size_t nodes_len = 1, procs_len = 1;
	char *nodes_str, *procs_str, *node_regex = NULL, *proc_regex = NULL, name[256];
	void *list = PMIx_Info_list_start();
	pmix_data_array_t darr = {0};
	_Atomic int done = 0;
	uint32_t n = (uint32_t)job.n, nh = (uint32_t)hosts;

	nodes_len += (size_t)hosts * sizeof(name);
	procs_len += (size_t)job.n * 12;
	nodes_str = calloc(1, nodes_len);
	procs_str = calloc(1, procs_len);
	if (!list || !nodes_str || !procs_str)
		goto fail;
	for (int h = 0; h < hosts; h++) {
		size_t l = strlen(nodes_str);

		host_name(h, name, sizeof(name));
		snprintf(nodes_str + l, nodes_len - l, "%s%s", h ? "," : "", name);
		for (i = h * ppn; i < job.n && i < (h + 1) * ppn; i++) {
			l = strlen(procs_str);
			snprintf(procs_str + l, procs_len - l, "%s%d",
				 i == h * ppn ? (h ? ";" : "") : ",", i);
		}
	}
	if (PMIx_generate_regex(nodes_str, &node_regex) != PMIX_SUCCESS ||
	    PMIx_generate_ppn(procs_str, &proc_regex) != PMIX_SUCCESS)
		goto fail;
	ret |= PMIx_Info_list_add(list, PMIX_UNIV_SIZE, &n, PMIX_UINT32);
	ret |= PMIx_Info_list_add(list, PMIX_JOB_SIZE, &n, PMIX_UINT32);
	ret |= PMIx_Info_list_add(list, PMIX_MAX_PROCS, &n, PMIX_UINT32);
	ret |= PMIx_Info_list_add(list, PMIX_NUM_NODES, &nh, PMIX_UINT32);
	ret |= PMIx_Info_list_add(list, PMIX_NODE_MAP, node_regex, PMIX_REGEX);
	ret |= PMIx_Info_list_add(list, PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
	for (int h = 0; h < hosts && ret == PMIX_SUCCESS; h++) {
		void *node = PMIx_Info_list_start();
		uint32_t id = (uint32_t)h, first = (uint32_t)(h * ppn);
		uint32_t local = (uint32_t)((h + 1) * ppn < job.n ? ppn : job.n - h * ppn);
		char peers[8192] = "";

		for (i = 0; i < (int)local; i++) {
			size_t l = strlen(peers);

			snprintf(peers + l, sizeof(peers) - l, "%s%u", i ? "," : "", first + (uint32_t)i);
		}
		host_name(h, name, sizeof(name));
		ret |= PMIx_Info_list_add(node, PMIX_NODEID, &id, PMIX_UINT32);
		ret |= PMIx_Info_list_add(node, PMIX_HOSTNAME, name, PMIX_STRING);
		ret |= PMIx_Info_list_add(node, PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
		ret |= PMIx_Info_list_add(node, PMIX_NODE_SIZE, &local, PMIX_UINT32);
		ret |= PMIx_Info_list_add(node, PMIX_LOCALLDR, &first, PMIX_PROC_RANK);
		ret |= PMIx_Info_list_add(node, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
		ret |= add_array(list, PMIX_NODE_INFO_ARRAY, node);
	}
	for (i = 0; i < job.n && ret == PMIX_SUCCESS; i++) {
		void *proc = PMIx_Info_list_start();
		pmix_rank_t rank = (pmix_rank_t)i;
		uint16_t lrank = (uint16_t)(i % ppn);
		uint32_t id = (uint32_t)(i / ppn);

		host_name(i / ppn, name, sizeof(name));
		ret |= PMIx_Info_list_add(proc, PMIX_RANK, &rank, PMIX_PROC_RANK);
		ret |= PMIx_Info_list_add(proc, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
		ret |= PMIx_Info_list_add(proc, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
		ret |= PMIx_Info_list_add(proc, PMIX_NODEID, &id, PMIX_UINT32);
		ret |= PMIx_Info_list_add(proc, PMIX_HOSTNAME, name, PMIX_STRING);
		ret |= add_array(list, PMIX_PROC_INFO_ARRAY, proc);
	}
	if (ret != PMIX_SUCCESS || PMIx_Info_list_convert(list, &darr) != PMIX_SUCCESS)
		goto fail;
	ret = PMIx_server_register_nspace(job.nspace, job.n, darr.array, darr.size, done_cb,
					  (void *)&done);
	if (ret == PMIX_SUCCESS)
		wait_flag(&done);
	else if (ret != PMIX_OPERATION_SUCCEEDED)
		fprintf(stderr, "mpirun: registering the job failed: %s\n", PMIx_Error_string(ret));
	PMIX_DATA_ARRAY_DESTRUCT(&darr);
	PMIx_Info_list_release(list);
	free(node_regex);
	free(proc_regex);
	free(nodes_str);
	free(procs_str);
	return ret == PMIX_SUCCESS || ret == PMIX_OPERATION_SUCCEEDED ? 0 : -1;
fail:
	fprintf(stderr, "mpirun: cannot describe the job to PMIx\n");
	if (list)
		PMIx_Info_list_release(list);
	free(node_regex);
	free(proc_regex);
	free(nodes_str);
	free(procs_str);
	return -1;
}

/* Copy a child's output to ours, each line prefixed with its rank. */
static void relay(int rank, int which, int fd)
{
	struct rank *r = &job.r[rank];
	char *buf = r->partial[which];
	ssize_t got = read(fd, buf + r->plen[which], sizeof(r->partial[0]) - r->plen[which]);
	FILE *out = which ? stderr : stdout;
	size_t start = 0, i;

	if (got <= 0) {
		if (r->plen[which])
			fprintf(out, "[1,%d]<%s>:%.*s\n", rank, which ? "stderr" : "stdout",
				(int)r->plen[which], buf);
		r->plen[which] = 0;
		close(fd);
		if (which)
			r->err[0] = -1;
		else
			r->out[0] = -1;
		return;
	}
	r->plen[which] += (size_t)got;
	for (i = 0; i < r->plen[which]; i++) {
		if (buf[i] != '\n')
			continue;
		fprintf(out, "[1,%d]<%s>:%.*s\n", rank, which ? "stderr" : "stdout",
			(int)(i - start), buf + start);
		start = i + 1;
	}
	if (start == 0 && r->plen[which] == sizeof(r->partial[0])) {
		fprintf(out, "[1,%d]<%s>:%.*s\n", rank, which ? "stderr" : "stdout",
			(int)r->plen[which], buf);
		start = r->plen[which];
	}
	memmove(buf, buf + start, r->plen[which] - start);
	r->plen[which] -= start;
	fflush(out);
}

static void kill_all(int sig)
{
	for (int i = 0; i < job.n; i++)
		if (job.r[i].pid > 0 && !job.r[i].done)
			kill(job.r[i].pid, sig);
}

/* Reap what has exited; returns the number still running. */
static int reap(int *first_bad, const char **why, int *who)
{
	int running = 0;

	for (int i = 0; i < job.n; i++) {
		struct rank *r = &job.r[i];
		int st;

		if (r->done)
			continue;
		if (waitpid(r->pid, &st, WNOHANG) != r->pid) {
			running++;
			continue;
		}
		r->done = true;
		r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (*first_bad)
			continue;
		if (WIFSIGNALED(st)) {
			*first_bad = r->status;
			*why = strsignal(WTERMSIG(st));
			*who = i;
		} else if (r->status) {
			*first_bad = r->status;
			*why = "non-zero exit";
			*who = i;
		} else if (__atomic_load_n(&r->connected, __ATOMIC_ACQUIRE) &&
			   !__atomic_load_n(&r->finalized, __ATOMIC_ACQUIRE)) {
			*first_bad = 1;
			*why = "exited without finalizing";
			*who = i;
		}
	}
	return running;
}

int main(int argc, char **argv)
{
	char **xvars = calloc((size_t)argc, sizeof(char *));
	int nx = 0, i, a, first_bad = 0, who = -1, code;
	const char *why = NULL;
	pmix_info_t sinfo[3];
	size_t nsinfo;
	struct sigaction sa;
	double start, kill_at = 0;
	bool ending = false;

	job.n = 1;
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if ((!strcmp(argv[a], "-n") || !strcmp(argv[a], "-np")) && a + 1 < argc)
			job.n = atoi(argv[++a]);
		else if (!strcmp(argv[a], "-x") && a + 1 < argc)
			xvars[nx++] = argv[++a];
		else if (!strcmp(argv[a], "--params"))
			list_params();
		else if (!strcmp(argv[a], "--host-prefix") && a + 1 < argc)
			job.host_prefix = argv[++a];
		else if (!strcmp(argv[a], "--ppn") && a + 1 < argc)
			job.ppn = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--pmix-if") && a + 1 < argc)
			job.pmix_if = argv[++a];
		else if (!strcmp(argv[a], "--tag-output"))
			job.tag_output = true;
		else if ((!strcmp(argv[a], "--bind-to") || !strcmp(argv[a], "-bind-to")) &&
			 a + 1 < argc) {
			if (bind_setup(argv[++a]))
				return 2;
		} else if (!strcmp(argv[a], "--report-bindings"))
			job.report_bindings = true;
		else if (!strcmp(argv[a], "--timeout") && a + 1 < argc)
			job.timeout = atof(argv[++a]);
		else if (!strcmp(argv[a], "--"))
			{ a++; break; }
		else
			usage();
	}
	if (a >= argc || job.n < 1 || job.n > 4096)
		usage();
	/* Several ranks to a NUMA node or a package is what those are for;
	 * several to a core or a hardware thread is oversubscription. */
	if (job.nbind && (job.bind_type == HWLOC_OBJ_CORE || job.bind_type == HWLOC_OBJ_PU) &&
	    per_host() > job.nbind)
		fprintf(stderr, "mpirun: %d ranks per host and %d %s%s to bind to: several ranks "
			"share each\n", per_host(), job.nbind,
			job.bind_name, job.nbind > 1 ? "s" : "");
	job.r = calloc((size_t)job.n, sizeof(*job.r));
	if (pipe(job.wake))
		return 1;
	fcntl(job.wake[0], F_SETFL, O_NONBLOCK);
	fcntl(job.wake[1], F_SETFL, O_NONBLOCK);
	snprintf(job.nspace, sizeof(job.nspace), "mbx.%d", (int)getpid());
	snprintf(job.tmpdir, sizeof(job.tmpdir), "/tmp/mbxrun.XXXXXX");
	if (!mkdtemp(job.tmpdir)) {
		perror("mpirun: mkdtemp");
		return 1;
	}
	PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TMPDIR, job.tmpdir, PMIX_STRING);
	nsinfo = 1;
	if (job.pmix_if) {
		/* Ranks in other network namespaces reach the server over this
		 * interface instead of loopback. */
		bool yes = true;
		PMIX_INFO_LOAD(&sinfo[nsinfo], PMIX_TCP_IF_INCLUDE, job.pmix_if, PMIX_STRING);
		nsinfo++;
		PMIX_INFO_LOAD(&sinfo[nsinfo], PMIX_SERVER_REMOTE_CONNECTIONS, &yes, PMIX_BOOL);
		nsinfo++;
	}
	if (PMIx_server_init(&module, sinfo, nsinfo) != PMIX_SUCCESS) {
		fprintf(stderr, "mpirun: cannot start the PMIx server\n");
		rmdir(job.tmpdir);
		return 1;
	}
	if (register_job()) {
		PMIx_server_finalize();
		rmdir(job.tmpdir);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < job.n; i++) {
		struct rank *r = &job.r[i];
		pmix_proc_t proc;
		_Atomic int done = 0;
		char **env = NULL;
		int ret;

		PMIX_PROC_LOAD(&proc, job.nspace, (pmix_rank_t)i);
		ret = PMIx_server_register_client(&proc, geteuid(), getegid(), NULL, done_cb,
						  (void *)&done);
		if (ret == PMIX_SUCCESS)
			wait_flag(&done);
		for (char **e = environ; *e; e++)
			PMIX_ARGV_APPEND(ret, env, *e);
		if (PMIx_server_setup_fork(&proc, &env) != PMIX_SUCCESS) {
			fprintf(stderr, "mpirun: cannot set up rank %d\n", i);
			kill_all(SIGKILL);
			break;
		}
		for (int x = 0; x < nx; x++) {
			char *eq = strchr(xvars[x], '='), *val = eq ? eq + 1 : getenv(xvars[x]);
			char name[256];

			snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - xvars[x]) : 255, xvars[x]);
			if (val)
				PMIX_SETENV(ret, name, val, &env);
		}
		r->out[0] = r->err[0] = -1;
		if (job.tag_output && (pipe(r->out) || pipe(r->err))) {
			perror("mpirun: pipe");
			kill_all(SIGKILL);
			break;
		}
		r->pid = fork();
		if (r->pid == 0) {
			if (job.tag_output) {
				dup2(r->out[1], 1);
				dup2(r->err[1], 2);
				close(r->out[0]);
				close(r->err[0]);
			}
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			/* Bound before exec, so the rank's first touch of memory
			 * and every thread it starts are already in place. */
			if (bind_set(i) && hwloc_set_cpubind(job.topo, bind_set(i), HWLOC_CPUBIND_PROCESS))
				fprintf(stderr, "mpirun: cannot bind rank %d: %s\n", i, strerror(errno));
			if (job.host_prefix)
				exec_on_host(i / per_host(), argv + a, env);
			execvpe(argv[a], argv + a, env);
			fprintf(stderr, "mpirun: cannot run %s: %s\n", argv[a], strerror(errno));
			_exit(127);
		}
		if (job.tag_output) {
			close(r->out[1]);
			close(r->err[1]);
		}
		if (job.report_bindings) {
			char *list = NULL;

			if (!bind_set(i))
				fprintf(stderr, "mpirun: rank %d not bound\n", i);
			else if (hwloc_bitmap_list_asprintf(&list, bind_set(i)) >= 0)
				fprintf(stderr, "mpirun: rank %d bound to %s %d (cpus %s)\n", i,
					job.bind_name, bind_index(i), list);
			free(list);
		}
		PMIX_ARGV_FREE(env);
	}

	start = now();
	for (;;) {
		struct pollfd pf[1 + 2 * 4096];
		int nf = 0, running;

		pf[nf++] = (struct pollfd){ .fd = job.wake[0], .events = POLLIN };
		for (i = 0; i < job.n && job.tag_output; i++) {
			pf[nf++] = (struct pollfd){ .fd = job.r[i].out[0], .events = POLLIN };
			pf[nf++] = (struct pollfd){ .fd = job.r[i].err[0], .events = POLLIN };
		}
		if (poll(pf, (nfds_t)nf, 50) > 0) {
			char buf[64];

			if (pf[0].revents && read(job.wake[0], buf, sizeof(buf)) < 0)
				(void)0;
			for (i = 1; i < nf; i++)
				if (pf[i].revents && pf[i].fd >= 0)
					relay((i - 1) / 2, (i - 1) % 2, pf[i].fd);
		}
		running = reap(&first_bad, &why, &who);
		if (!running) {
			bool open_pipes = false;

			for (i = 0; i < job.n && job.tag_output; i++)
				open_pipes |= job.r[i].out[0] >= 0 || job.r[i].err[0] >= 0;
			if (!open_pipes)
				break;
			continue;
		}
		if (ending) {
			if (now() > kill_at)
				kill_all(SIGKILL);
			continue;
		}
		if (atomic_load(&job.signal_seen)) {
			fprintf(stderr, "mpirun: %s; passing it on to the ranks\n",
				strsignal(atomic_load(&job.signal_seen)));
			kill_all(atomic_load(&job.signal_seen));
			if (!first_bad)
				first_bad = 128 + atomic_load(&job.signal_seen);
			ending = true;
		} else if (atomic_load(&job.abort_requested)) {
			kill_all(SIGTERM);
			ending = true;
		} else if (first_bad) {
			fprintf(stderr, "mpirun: rank %d (pid %d) %s (status %d); ending the job\n",
				who, (int)job.r[who].pid, why, first_bad);
			kill_all(SIGTERM);
			ending = true;
		} else if (job.timeout > 0 && now() - start > job.timeout) {
			fprintf(stderr, "mpirun: job exceeded --timeout %.0f s; ending it\n",
				job.timeout);
			kill_all(SIGTERM);
			first_bad = 124;
			ending = true;
		}
		if (ending)
			kill_at = now() + 1.0;
	}
	if (atomic_load(&job.abort_requested))
		code = atomic_load(&job.abort_status);
	else
		code = first_bad;
	if (first_bad && why && !atomic_load(&job.abort_requested) && who >= 0 && !ending)
		fprintf(stderr, "mpirun: rank %d %s (status %d)\n", who, why, first_bad);
	PMIx_server_deregister_nspace(job.nspace, NULL, NULL);
	PMIx_server_finalize();
	/* PMIx leaves its rendezvous files in our directory. */
	nftw(job.tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	/* Ranks killed by a signal cannot remove their matchbox segments, so
	 * they are removed here. A rank that finalized and exited 0 should have
	 * removed its own: say so, or the removal would hide the leak. */
	{
		char prefix[64];
		snprintf(prefix, sizeof(prefix), "mbx-%u-", (unsigned)geteuid());
		for (int i = 0; i < job.n; i++) {
			struct rank *r = &job.r[i];
			int left;

			if (!r->done || r->status || !__atomic_load_n(&r->finalized, __ATOMIC_ACQUIRE))
				continue;
			left = mbu_shm_reap_pid(prefix, (long)r->pid);
			if (left)
				fprintf(stderr, "mpirun: rank %d left %d shared-memory segment%s "
					"behind (removed)\n", i, left, left > 1 ? "s" : "");
		}
		mbu_shm_reap(prefix);
	}
	if (job.topo)
		hwloc_topology_destroy(job.topo);
	free(xvars);
	return code;
}
