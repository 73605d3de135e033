/* What the registration cache saves on the net wire: the cost of registering
 * a large send's buffer with the core provider the net wire reads it over
 * (tcp here; verbs where there is a device), the first time (a miss: the
 * core's fi_mr_regv and the monitor's watch of the range) against the second
 * (a lookup), and without the cache (fi_mr_regv and fi_close for every
 * send). Every round takes a fresh buffer, and the three ways are timed in
 * the same round; medians over the rounds are printed, with the ratio.
 * Usage: reg_bench [-p CORE] [-s BYTES] [-n ROUNDS]. Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "mbu_rcache.h"

static struct fid_domain *dom;
static uint64_t next_key;

static int reg(void *arg, void *addr, size_t len, void **h)
{
	struct fid_mr *mr;
	int ret;

	(void)arg;
	ret = fi_mr_reg(dom, addr, len, FI_REMOTE_READ, 0, ++next_key, 0, &mr, NULL);
	if (!ret)
		*h = mr;
	return ret;
}

static void dereg(void *arg, void *h)
{
	(void)arg;
	fi_close(&((struct fid_mr *)h)->fid);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	static const struct mbu_rcache_ops ops = { reg, dereg };
	const char *core = "tcp";
	size_t len = 1 << 20;
	int rounds = 200, opt;
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct fid_fabric *fab;
	struct mbu_rcache c;
	double *first, *second, *nocache;

	while ((opt = getopt(argc, argv, "p:s:n:")) != -1) {
		if (opt == 'p')
			core = optarg;
		else if (opt == 's')
			len = strtoull(optarg, NULL, 0);
		else if (opt == 'n')
			rounds = atoi(optarg);
	}
	if (rounds < 1)
		rounds = 1;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ;
	hints->domain_attr->mr_mode = 0;
	hints->fabric_attr->prov_name = strdup(core);
	if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info) ||
	    fi_fabric(info->fabric_attr, &fab, NULL) || fi_domain(fab, info, &dom, NULL)) {
		fprintf(stderr, "no %s domain with FI_RMA\n", core);
		return 1;
	}
	first = calloc((size_t)rounds, sizeof(double));
	second = calloc((size_t)rounds, sizeof(double));
	nocache = calloc((size_t)rounds, sizeof(double));
	mbu_rcache_init(&c, &ops, NULL, 1024, (size_t)1 << 30);
	for (int r = 0; r < rounds; r++) {
		char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
		struct mbu_rcache_entry *e;
		struct fid_mr *mr;
		double t0, t1, t2, t3;

		if (buf == MAP_FAILED)
			return 1;
		memset(buf, r, len);
		t0 = now_ns();
		if (reg(NULL, buf, len, (void **)&mr))
			return 1;
		dereg(NULL, mr);
		t1 = now_ns();
		if (mbu_rcache_get(&c, buf, len, &e))
			return 1;
		mbu_rcache_put(&c, e);
		t2 = now_ns();
		if (mbu_rcache_get(&c, buf, len, &e))
			return 1;
		mbu_rcache_put(&c, e);
		t3 = now_ns();
		nocache[r] = t1 - t0;
		first[r] = t2 - t1;
		second[r] = t3 - t2;
		munmap(buf, len);
	}
	printf("core %s, %zu-byte buffers, %d rounds, monitor %s: %llu hits, %llu misses, "
	       "%llu invalidated\n", core, len, rounds, mbu_rcache_monitor(NULL),
	       (unsigned long long)c.st.hits, (unsigned long long)c.st.misses,
	       (unsigned long long)c.st.invalidated);
	printf("%-34s %10s\n", "median per send", "us");
	printf("%-34s %10.3f\n", "no cache (fi_mr_reg + fi_close)", median(nocache, rounds) / 1e3);
	printf("%-34s %10.3f\n", "cache, first registration (miss)", median(first, rounds) / 1e3);
	printf("%-34s %10.3f\n", "cache, second registration (hit)", median(second, rounds) / 1e3);
	printf("first / second: %.1fx\n", median(first, rounds) / median(second, rounds));
	mbu_rcache_fini(&c);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(first);
	free(second);
	free(nocache);
	return 0;
}
