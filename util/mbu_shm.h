/* POSIX shared-memory segments for the shm wire: created mode 0600 by their
 * owner, opened by peers of the same user, unlinked by the owner when it
 * closes. Names are "<prefix><pid>-<rest>", so segments that a crashed
 * process left behind can be found and removed by the next run (a process
 * that no longer exists cannot be using them). */
#ifndef MBU_SHM_H
#define MBU_SHM_H

#include <stddef.h>
#include <sys/types.h>

/* Create a fresh segment; a stale one of the same name (pid reuse after a
 * crash) is replaced. Returns 0 or a negative errno. */
int mbu_shm_create(const char *name, size_t size, void **addr);
/* Map an existing segment read-write; *size gets its length. */
int mbu_shm_open(const char *name, void **addr, size_t *size);
void mbu_shm_unmap(void *addr, size_t size);
/* Map the pages of [addr, addr + len) into this process now (allocating
 * them if need be), for writing or for reading, without changing a byte,
 * so that the first pass over them takes no page faults. Best effort: a
 * kernel without MADV_POPULATE_* (before 5.14) leaves them to fault. */
void mbu_shm_prefault(void *addr, size_t len, int write);
int mbu_shm_unlink(const char *name);
/* Unlink segments "<prefix><pid>-..." whose pid is gone; returns how many. */
int mbu_shm_reap(const char *prefix);
/* Unlink the segments "<prefix><pid>-..." of one process that has ended. */
int mbu_shm_reap_pid(const char *prefix, long pid);

#endif
