/* Addresses: an endpoint's identity (host, user, process, endpoint, job,
 * net wire address) and its text form, the FI_ADDR_STR "mbx://" string that
 * fi_getname hands out and fi_av_insert takes. */
#include "mbx.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint32_t mbx_fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

uint32_t mbx_host_id(void)
{
	static uint32_t id;
	char host[256] = "";

	if (!id) {
		struct stat st;
		size_t n;

		/* A host is a kernel and a network namespace: processes in other
		 * namespaces share our /dev/shm but stand for other nodes (the
		 * test cluster of tests/netns/), so they must not be reached by shm. */
		gethostname(host, sizeof(host) - 32);
		n = strlen(host);
		if (!stat("/proc/self/ns/net", &st))
			snprintf(host + n, sizeof(host) - n, "/%llu", (unsigned long long)st.st_ino);
		id = mbx_fnv1a(host) | 1;
	}
	return id;
}

uint32_t mbx_job_id(void)
{
	return mbx_fnv1a(mbx_param.job);
}

int mbx_format_addr(const struct mbx_addr *a, char *buf, size_t len)
{
	int n = snprintf(buf, len, "mbx://%08x%08x%08x%08x%08x%08x%08x", a->host, a->uid,
			 (uint32_t)a->pid, a->ep, a->job, a->ip, a->ports);

	return n < 0 || (size_t)n >= len ? -FI_ETOOSMALL : n + 1;
}

static int parse_hex32(const char **p, uint32_t *out, char stop)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (isxdigit((unsigned char)*s) && n < 9) {
		v = v * 16 + (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' :
					(tolower((unsigned char)*s) - 'a' + 10));
		s++;
		n++;
	}
	if (n != 8 || *s != stop)
		return -FI_EINVAL;
	*out = (uint32_t)v;
	*p = s + (stop ? 1 : 0);
	return 0;
}

int mbx_parse_addr(const void *addr, size_t len, struct mbx_addr *out)
{
	const char *s = addr, *p;
	struct mbx_addr a;
	uint32_t pid;

	if (!addr || len < 8 || len > MBX_NAME_MAX || !memchr(s, '\0', len))
		return -FI_EINVAL;
	if (strncmp(s, "mbx://", 6))
		return -FI_EINVAL;
	p = s + 6;
	memset(&a, 0, sizeof(a));
	if (strlen(p) == 56) {
		uint32_t *f[7] = { &a.host, &a.uid, &pid, &a.ep, &a.job, &a.ip, &a.ports };
		char field[9];
		int i;

		for (i = 0; i < 7; i++) {
			const char *q = field;

			memcpy(field, p + 8 * i, 8);
			field[8] = '\0';
			if (parse_hex32(&q, f[i], '\0'))
				return -FI_EINVAL;
		}
	} else if (parse_hex32(&p, &a.host, ':') || parse_hex32(&p, &a.uid, ':') ||
		   parse_hex32(&p, &pid, ':') || parse_hex32(&p, &a.ep, ':') ||
		   parse_hex32(&p, &a.job, '\0')) {
		/* The older colon form names a same-host endpoint only. */
		return -FI_EINVAL;
	}
	a.pid = (int32_t)pid;
	if (a.pid <= 0)
		return -FI_EINVAL;
	*out = a;
	return 0;
}

void mbx_shm_name(const struct mbx_addr *a, char *buf, size_t len)
{
	snprintf(buf, len, "/mbx-%u-%d-%x-%x", a->uid, a->pid, a->job, a->ep);
}
