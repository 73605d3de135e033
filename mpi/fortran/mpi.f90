! The `use mpi` module of Matchbox MPI: the constants, common blocks and
! EXTERNAL declarations of mpif.h, and explicit interfaces for the routines
! that take choice buffers (any type, kind and rank passes there; the other
! arguments are checked). The rest are called through implicit interfaces,
! as with mpif.h.
module mpi
  implicit none
  include 'mpif.h'
  include 'mpi_interfaces.h'
end module mpi
