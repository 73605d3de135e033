/* Segment creation, mapping and clean-up for the shm wire. */
#include "mbu_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int mbu_shm_create(const char *name, size_t size, void **addr)
{
	void *p;
	int fd, ret;

	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Our pid is in the name, so its owner is dead: replace it. */
		shm_unlink(name);
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	}
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size)) {
		ret = -errno;
		goto err_unlink;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto err_unlink;
	}
	close(fd);
	*addr = p;
	return 0;
err_unlink:
	close(fd);
	shm_unlink(name);
	return ret;
}

int mbu_shm_open(const char *name, void **addr, size_t *size)
{
	struct stat st;
	void *p;
	int fd, ret;

	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		/* Not ours, or readable by others: never trust it. */
		ret = -EACCES;
		goto out;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	*addr = p;
	*size = (size_t)st.st_size;
	ret = 0;
out:
	close(fd);
	return ret;
}

void mbu_shm_prefault(void *addr, size_t len, int write)
{
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)4095;
	uintptr_t end = (uintptr_t)addr + len;

#if defined(MADV_POPULATE_WRITE) && defined(MADV_POPULATE_READ)
	if (len)
		(void)madvise((void *)start, end - start,
			      write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
#else
	(void)start, (void)end, (void)write;
#endif
}

void mbu_shm_unmap(void *addr, size_t size)
{
	if (addr)
		munmap(addr, size);
}

int mbu_shm_unlink(const char *name)
{
	return shm_unlink(name) ? -errno : 0;
}

/* Unlink "<prefix><pid>-..." segments: of `only` if it is > 0 (a process
 * its parent has waited for), else of every pid that no longer exists. */
static int reap(const char *prefix, long only)
{
	size_t plen = strlen(prefix);
	struct dirent *d;
	int n = 0;
	DIR *dir;

	dir = opendir("/dev/shm");
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		char name[300], *end;
		long pid;

		if (strncmp(d->d_name, prefix, plen))
			continue;
		pid = strtol(d->d_name + plen, &end, 10);
		if (end == d->d_name + plen || *end != '-' || pid <= 0)
			continue;
		if (only > 0 ? pid != only : kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(name, sizeof(name), "/%s", d->d_name);
		if (!shm_unlink(name))
			n++;
	}
	closedir(dir);
	return n;
}

int mbu_shm_reap(const char *prefix)
{
	return reap(prefix, 0);
}

int mbu_shm_reap_pid(const char *prefix, long pid)
{
	return pid > 0 ? reap(prefix, pid) : 0;
}
