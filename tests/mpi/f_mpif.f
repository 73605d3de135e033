! Fixed-form Fortran 77 style with include 'mpif.h': a ring of messages
! and a reduction, checked; mpif.h must be valid in fixed form.
      program fmpif
      implicit none
      include 'mpif.h'
      integer ierr, rank, np, next, prev, val, total
      integer status(MPI_STATUS_SIZE)
      double precision x, y
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
      next = mod(rank + 1, np)
      prev = mod(rank + np - 1, np)
      call MPI_SENDRECV(rank, 1, MPI_INTEGER, next, 1,
     &     val, 1, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, status, ierr)
      if (ierr .ne. MPI_SUCCESS .or. val .ne. prev
     &     .or. status(MPI_SOURCE) .ne. prev) then
         write (0, *) 'f_mpif: ring failed on rank', rank
         call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
      x = 1.0d0
      call MPI_ALLREDUCE(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call MPI_REDUCE(rank, total, 1, MPI_INTEGER, MPI_MAX, 0,
     &     MPI_COMM_WORLD, ierr)
      if (y .ne. np .or. (rank .eq. 0 .and. total .ne. np - 1)) then
         write (0, *) 'f_mpif: reductions failed on rank', rank
         call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
      if (rank .eq. 0) write (*, '(a,i0,a)') 'f_mpif: ', np,
     &     ' ranks: all checks passed'
      call MPI_FINALIZE(ierr)
      end
