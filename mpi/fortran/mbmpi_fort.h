/*
 * What the Fortran bindings share, generated and hand-written alike:
 * gfortran's calling convention (every argument by reference, a string's
 * length as a hidden size_t after the others), the sentinels Fortran
 * passes by address (common blocks defined in mbmpi_fhand.c), statuses as
 * MPI_STATUS_SIZE INTEGERs, and strings without their NUL.
 */
#ifndef MBMPI_FORT_H
#define MBMPI_FORT_H

#include "mbmpi.h"

/* The binding is pmpi_x_; mpi_x_ is its weak alias, for profilers. */
#define MBMPI_FBIND MBMPI_API
#define MBMPI_FALIAS(n) \
	extern __typeof__(pmpi_##n##_) mpi_##n##_ \
		__attribute__((weak, alias("pmpi_" #n "_"), visibility("default")));

extern MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_, mpi_fortran_unweighted_,
	mpi_fortran_weights_empty_;
extern MPI_Fint mpi_fortran_status_ignore_[], mpi_fortran_statuses_ignore_[];

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE arrive as the addresses of
 * their common blocks. */
#define MBMPI_FBUF(p)                                                         \
	((const void *)(p) == (const void *)&mpi_fortran_bottom_     ? MPI_BOTTOM \
	 : (const void *)(p) == (const void *)&mpi_fortran_in_place_ ? MPI_IN_PLACE \
								     : (void *)(p))
#define MBMPI_FWEIGHTS(p)                                                            \
	((const void *)(p) == (const void *)&mpi_fortran_unweighted_      ? MPI_UNWEIGHTED \
	 : (const void *)(p) == (const void *)&mpi_fortran_weights_empty_ ? MPI_WEIGHTS_EMPTY \
									  : (p))

#define MBMPI_FSTATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* A Fortran status may be misaligned for the C struct: it is copied. */
static inline MPI_Status *mbmpi_fstatus_in(const MPI_Fint *f, MPI_Status *c)
{
	if (f == mpi_fortran_status_ignore_ || f == mpi_fortran_statuses_ignore_)
		return MPI_STATUS_IGNORE;
	memcpy(c, f, sizeof(*c));
	return c;
}

static inline void mbmpi_fstatus_out(MPI_Fint *f, const MPI_Status *c)
{
	if (c != MPI_STATUS_IGNORE)
		memcpy(f, c, sizeof(*c));
}

char *mbmpi_fstr_in(const char *f, size_t len);
char *mbmpi_fstr_buf(size_t len);
void mbmpi_fstr_out(char *f, size_t len, const char *c);

#endif
