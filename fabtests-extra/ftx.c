/* Process launch, name exchange, barriers and completion helpers for the
 * fabtests-extra programs (see ftx.h). */
#include "ftx.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAME_SLOT 256
#define TIMEOUT_S 60

double ftx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void ftx_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = (unsigned char)(x >> ((i & 7) * 8));
	}
}

bool ftx_check(const void *buf, size_t len, uint64_t seed)
{
	const unsigned char *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (p[i] != (unsigned char)(x >> ((i & 7) * 8)))
			return false;
	}
	return true;
}

static int full_write(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int full_read(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Keeps progressing the provider while it waits, as an MPI barrier does: a
 * peer may still need our answers (a provider with manual progress
 * acknowledges only when called). */
void ftx_barrier(struct ftx *t)
{
	struct pollfd pfd = { .fd = t->from_parent, .events = POLLIN };
	char c = 'B';

	if (full_write(t->to_parent, &c, 1))
		_exit(3);
	while (t->ep && poll(&pfd, 1, 1) == 0)
		ftx_progress(t);
	if (full_read(t->from_parent, &c, 1))
		_exit(3);
}

const char *ftx_opt(struct ftx *t, char flag, const char *def)
{
	int i;

	for (i = 1; i < t->argc - 1; i++)
		if (t->argv[i][0] == '-' && t->argv[i][1] == flag && !t->argv[i][2])
			return t->argv[i + 1];
	return def;
}

size_t ftx_sizes(struct ftx *t, const char *def, size_t *list, size_t cap, size_t *max)
{
	char *s = strdup(ftx_opt(t, 'S', def)), *tok, *save;
	size_t n = 0;

	*max = 0;
	for (tok = strtok_r(s, ",", &save); tok && n < cap; tok = strtok_r(NULL, ",", &save)) {
		list[n] = strtoull(tok, NULL, 0);
		if (list[n] > *max)
			*max = list[n];
		n++;
	}
	free(s);
	return n;
}

int ftx_progress(struct ftx *t)
{
	struct fi_cq_tagged_entry e[16];
	fi_addr_t src[16];
	struct fi_cq_err_entry err;
	ssize_t n;

	n = fi_cq_read(t->txcq, e, 16);
	if (n > 0) {
		t->tx_done += (uint64_t)n;
	} else if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(t->txcq, &err, 0);
		fprintf(stderr, "[rank %d] send failed: %s\n", t->rank, fi_strerror(err.err));
		t->tx_err++;
		t->tx_done++;
	} else if (n != -FI_EAGAIN) {
		return (int)n;
	}
	if (t->rxcq == t->txcq)
		return 0;
	n = fi_cq_readfrom(t->rxcq, e, 16, src);
	if (n == -FI_ENOSYS)
		n = fi_cq_read(t->rxcq, e, 16);
	if (n > 0) {
		if (t->nstash + (size_t)n > t->stash_cap) {
			t->stash_cap = (t->stash_cap + (size_t)n) * 2;
			t->stash = realloc(t->stash, t->stash_cap * sizeof(*t->stash));
			t->stash_src = realloc(t->stash_src, t->stash_cap * sizeof(*t->stash_src));
		}
		memcpy(t->stash + t->nstash, e, (size_t)n * sizeof(*e));
		memcpy(t->stash_src + t->nstash, src, (size_t)n * sizeof(*src));
		t->nstash += (size_t)n;
	}
	return n == -FI_EAVAIL ? 1 : 0;
}

int ftx_wait_rx(struct ftx *t, struct fi_cq_tagged_entry *e, fi_addr_t *src,
		struct fi_cq_err_entry *err)
{
	double end = ftx_now() + TIMEOUT_S;

	for (;;) {
		int r;

		if (t->nstash) {
			*e = t->stash[0];
			if (src)
				*src = t->stash_src[0];
			t->nstash--;
			memmove(t->stash, t->stash + 1, t->nstash * sizeof(*t->stash));
			memmove(t->stash_src, t->stash_src + 1, t->nstash * sizeof(*t->stash_src));
			return 1;
		}
		r = ftx_progress(t);
		if (r == 1) {
			struct fi_cq_err_entry tmp;

			memset(&tmp, 0, sizeof(tmp));
			if (fi_cq_readerr(t->rxcq, err ? err : &tmp, 0) == 1)
				return 0;
		} else if (r < 0) {
			fprintf(stderr, "[rank %d] cq read: %s\n", t->rank, fi_strerror(-r));
			return r;
		}
		if (ftx_now() > end) {
			fprintf(stderr, "[rank %d] timed out waiting for a receive\n", t->rank);
			return -FI_ETIMEDOUT;
		}
	}
}

int ftx_wait_tx(struct ftx *t, uint64_t count)
{
	double end = ftx_now() + TIMEOUT_S;

	while (t->tx_done < count) {
		if (ftx_progress(t) < 0 || ftx_now() > end) {
			fprintf(stderr, "[rank %d] timed out waiting for sends\n", t->rank);
			return -FI_ETIMEDOUT;
		}
	}
	return t->tx_err ? -FI_EIO : 0;
}

int ftx_wait_sends(struct ftx *t)
{
	return ftx_wait_tx(t, t->tx_posted);
}

int ftx_tsend(struct ftx *t, const void *buf, size_t len, int to, uint64_t tag, void *ctx)
{
	double end = ftx_now() + TIMEOUT_S;
	ssize_t r;

	while ((r = fi_tsend(t->ep, buf, len, NULL, t->peer[to], tag, ctx)) == -FI_EAGAIN) {
		ftx_progress(t);
		if (ftx_now() > end)
			return -FI_ETIMEDOUT;
	}
	if (!r)
		t->tx_posted++;
	return (int)r;
}

int ftx_trecv(struct ftx *t, void *buf, size_t len, int from, uint64_t tag, uint64_t ignore,
	      void *ctx)
{
	double end = ftx_now() + TIMEOUT_S;
	fi_addr_t src = from < 0 ? FI_ADDR_UNSPEC : t->peer[from];
	ssize_t r;

	while ((r = fi_trecv(t->ep, buf, len, NULL, src, tag, ignore, ctx)) == -FI_EAGAIN) {
		ftx_progress(t);
		if (ftx_now() > end)
			return -FI_ETIMEDOUT;
	}
	return (int)r;
}

#define CHECK(call)							\
	do {								\
		int _r = (int)(call);					\
		if (_r) {						\
			fprintf(stderr, "[rank %d] %s: %s\n", t->rank, #call, fi_strerror(-_r)); \
			return 2;					\
		}							\
	} while (0)

static int open_fabric(struct ftx *t, const struct ftx_spec *spec)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 4096 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	hints->caps = FI_TAGGED | FI_MSG | spec->caps;
	hints->ep_attr->type = FI_EP_RDM;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_VIRT_ADDR;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(t->prov);
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &t->fi));
	fi_freeinfo(hints);
	if (t->fi->domain_attr->mr_mode & FI_MR_LOCAL) {
		fprintf(stderr, "[rank %d] provider needs FI_MR_LOCAL; not supported here\n", t->rank);
		return 2;
	}
	CHECK(fi_fabric(t->fi->fabric_attr, &t->fabric, NULL));
	CHECK(fi_domain(t->fabric, t->fi, &t->domain, NULL));
	CHECK(fi_cq_open(t->domain, &cq_attr, &t->txcq, NULL));
	CHECK(fi_cq_open(t->domain, &cq_attr, &t->rxcq, NULL));
	CHECK(fi_av_open(t->domain, &av_attr, &t->av, NULL));
	CHECK(fi_endpoint(t->domain, t->fi, &t->ep, NULL));
	CHECK(fi_ep_bind(t->ep, &t->av->fid, 0));
	CHECK(fi_ep_bind(t->ep, &t->txcq->fid, FI_TRANSMIT));
	CHECK(fi_ep_bind(t->ep, &t->rxcq->fid, FI_RECV));
	CHECK(fi_enable(t->ep));
	return 0;
}

static void close_fabric(struct ftx *t)
{
	if (t->ep)
		fi_close(&t->ep->fid);
	if (t->av)
		fi_close(&t->av->fid);
	if (t->txcq)
		fi_close(&t->txcq->fid);
	if (t->rxcq)
		fi_close(&t->rxcq->fid);
	if (t->domain)
		fi_close(&t->domain->fid);
	if (t->fabric)
		fi_close(&t->fabric->fid);
	if (t->fi)
		fi_freeinfo(t->fi);
	free(t->peer);
	free(t->stash);
	free(t->stash_src);
}

/* FTX_HOSTS=H spreads the ranks over H network-namespace hosts (rank r on
 * mbx-h<r % H>, the cluster of tests/netns/cluster.sh): the same programs
 * then run across hosts. */
static int enter_host(struct ftx *t)
{
	const char *h = getenv("FTX_HOSTS");
	char path[128];
	int hosts, fd, ret;

	if (!h || (hosts = atoi(h)) <= 0)
		return 0;
	snprintf(path, sizeof(path), "/var/run/netns/mbx-h%d", t->rank % hosts);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "[rank %d] %s: %s\n", t->rank, path, strerror(errno));
		return 2;
	}
	ret = setns(fd, CLONE_NEWNET);
	close(fd);
	if (ret) {
		fprintf(stderr, "[rank %d] setns %s: %s\n", t->rank, path, strerror(errno));
		return 2;
	}
	return 0;
}

static int child(struct ftx *t, const struct ftx_spec *spec)
{
	char name[NAME_SLOT] = "", *all;
	size_t len = sizeof(name);
	int i, ret;

	ret = enter_host(t);
	if (!ret)
		ret = open_fabric(t, spec);
	if (!ret)
		ret = fi_getname(&t->ep->fid, name, &len) ? 2 : 0;
	if (ret)
		memset(name, 0, sizeof(name));
	/* Even a failed rank reports, so the others do not wait forever. */
	if (full_write(t->to_parent, name, sizeof(name)))
		return 3;
	all = calloc((size_t)t->size, NAME_SLOT);
	if (full_read(t->from_parent, all, (size_t)t->size * NAME_SLOT)) {
		free(all);
		return 3;
	}
	if (ret) {
		free(all);
		return ret;
	}
	t->peer = calloc((size_t)t->size, sizeof(*t->peer));
	for (i = 0; i < t->size; i++) {
		if (!all[i * NAME_SLOT]) {
			fprintf(stderr, "[rank %d] rank %d failed to open\n", t->rank, i);
			free(all);
			return 2;
		}
		if (fi_av_insert(t->av, all + i * NAME_SLOT, 1, &t->peer[i], 0, NULL) != 1) {
			fprintf(stderr, "[rank %d] fi_av_insert of rank %d failed\n", t->rank, i);
			free(all);
			return 2;
		}
	}
	free(all);
	ftx_barrier(t);
	ret = spec->run(t);
	if (!ret) {
		ftx_barrier(t);
		/* Keep progressing briefly: a peer may still need our replies. */
		double end = ftx_now() + 0.05;

		while (ftx_now() < end)
			ftx_progress(t);
		ftx_barrier(t);
	}
	close_fabric(t);
	return ret;
}

int ftx_main(int argc, char **argv, const struct ftx_spec *spec)
{
	struct ftx t = { .prov = "matchbox", .size = spec->ranks, .argc = argc, .argv = argv };
	int (*c2p)[2], (*p2c)[2], i, failed = 0, status;
	pid_t *pids;
	char *names;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			t.prov = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			t.size = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-v"))
			t.verbose = true;
		else if (!strcmp(argv[i], "-h")) {
			printf("usage: %s [-p provider] [-n ranks] [test options]\n", argv[0]);
			return 0;
		}
	}
#ifdef FTX_PROV_DIR
	/* In the build tree, find the provider we just built. */
	setenv("FI_PROVIDER_PATH", FTX_PROV_DIR, 0);
#endif
	if (t.size < 1 || t.size > 256) {
		fprintf(stderr, "bad rank count\n");
		return 2;
	}
	c2p = calloc((size_t)t.size, sizeof(*c2p));
	p2c = calloc((size_t)t.size, sizeof(*p2c));
	pids = calloc((size_t)t.size, sizeof(*pids));
	names = calloc((size_t)t.size, NAME_SLOT);
	fflush(stdout);
	for (i = 0; i < t.size; i++) {
		if (pipe(c2p[i]) || pipe(p2c[i]))
			return 2;
		pids[i] = fork();
		if (pids[i] == 0) {
			t.rank = i;
			t.to_parent = c2p[i][1];
			t.from_parent = p2c[i][0];
			close(c2p[i][0]);
			close(p2c[i][1]);
			alarm(TIMEOUT_S * 3);
			status = child(&t, spec);
			fflush(stdout);	/* _exit() would drop buffered output */
			_exit(status);
		}
		close(c2p[i][1]);
		close(p2c[i][0]);
	}
	for (i = 0; i < t.size; i++)
		if (full_read(c2p[i][0], names + i * NAME_SLOT, NAME_SLOT))
			failed = 1;
	for (i = 0; i < t.size && !failed; i++)
		if (full_write(p2c[i][1], names, (size_t)t.size * NAME_SLOT))
			failed = 1;
	/* Relay barriers until every rank has closed its pipe. */
	while (!failed) {
		int got = 0, eof = 0;
		char c;

		for (i = 0; i < t.size; i++) {
			if (full_read(c2p[i][0], &c, 1))
				eof++;
			else
				got++;
		}
		if (eof == t.size)
			break;
		if (eof) {
			failed = 1;
			break;
		}
		for (i = 0; i < t.size; i++)
			full_write(p2c[i][1], "G", 1);
	}
	for (i = 0; i < t.size; i++) {
		if (failed)
			kill(pids[i], SIGKILL);
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			if (WIFSIGNALED(status))
				fprintf(stderr, "%s: rank %d killed by signal %d\n", spec->name, i,
					WTERMSIG(status));
			failed = 1;
		}
	}
	printf("%s (%s, %d ranks): %s\n", spec->name, t.prov, t.size, failed ? "FAIL" : "PASS");
	free(c2p);
	free(p2c);
	free(pids);
	free(names);
	return failed;
}
