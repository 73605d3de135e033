! The `use mpi` module of Matchbox MPI: the constants, common blocks and
! EXTERNAL declarations of mpif.h. It declares no interfaces, so calls are
! checked as with mpif.h; mpif90 passes -fallow-argument-mismatch, as
! choice buffers of different types go to the same routine.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
