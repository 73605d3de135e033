! The mpi_f08 module in miniature, through mpif90: handle types compared
! with == and /=, TYPE(MPI_Status) and its fields, ierror left out and
! given, arrays of requests and statuses, choice buffers of several ranks
! and a scalar, MPI_IN_PLACE, a reduction written in Fortran 2008 terms, a
! derived type, one-sided communication, matched probes, strings, attributes,
! an error handler with Fortran 2008's arguments, and the functions
! (MPI_Wtime, MPI_Aint_add). Every result is checked; the
! first wrong one stops the job with a message.
module checks08
  use mpi_f08
  implicit none
  integer :: rank, nprocs
  type(MPI_Comm) :: eh_comm
  integer :: eh_code = -1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a,i0,2a)') 'f_mpi08: rank ', rank, ' failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check

  ! A reduction MPI calls with Fortran 2008's arguments: elementwise max of |x|.
  subroutine absmax(invec, inoutvec, len, datatype)
    integer, intent(in) :: len
    integer, intent(in) :: invec(len)
    integer, intent(inout) :: inoutvec(len)
    type(MPI_Datatype), intent(in) :: datatype
    integer :: i
    if (datatype /= MPI_INTEGER) return
    do i = 1, len
      inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
    end do
  end subroutine absmax
  ! An error handler in Fortran 2008 terms: TYPE(MPI_Comm), then the code.
  subroutine on_error08(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    eh_comm = comm
    eh_code = code
  end subroutine on_error08
end module checks08

program f_mpi08
  use checks08
  implicit none
  integer :: ierr, provided

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call check(ierr == MPI_SUCCESS .and. provided >= MPI_THREAD_FUNNELED, 'init_thread')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call check(ierr == MPI_SUCCESS, 'size with ierror')
  call point_to_point()
  call collectives()
  call derived_types()
  call one_sided()
  call strings_and_attributes()
  call communicators()
  call error_handler()
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0,a)') 'f_mpi08: ', nprocs, ' ranks: all checks passed'
  call MPI_Finalize(ierr)
  call check(ierr == MPI_SUCCESS, 'finalize')

contains

  subroutine point_to_point()
    type(MPI_Status) :: status, statuses(2)
    type(MPI_Request) :: reqs(2)
    type(MPI_Message) :: msg
    integer :: next, prev, n, i
    logical :: flag
    double precision :: sbuf(100), rbuf(100)
    integer :: one

    next = mod(rank + 1, nprocs)
    prev = mod(rank - 1 + nprocs, nprocs)
    do i = 1, 100
      sbuf(i) = rank * 1000 + i
    end do
    call MPI_Sendrecv(sbuf, 100, MPI_DOUBLE_PRECISION, next, 7, rbuf, 100, &
                      MPI_DOUBLE_PRECISION, prev, 7, MPI_COMM_WORLD, status)
    call check(status%MPI_SOURCE == prev .and. status%MPI_TAG == 7, 'sendrecv status')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, n)
    call check(n == 100 .and. rbuf(100) == prev * 1000 + 100, 'sendrecv data')

    call MPI_Irecv(rbuf, 100, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(sbuf, 100, MPI_DOUBLE_PRECISION, next, 8, MPI_COMM_WORLD, reqs(2))
    call check(reqs(1) /= MPI_REQUEST_NULL, 'request handle')
    call MPI_Waitall(2, reqs, statuses)
    call check(all(reqs == MPI_REQUEST_NULL), 'waitall frees requests')
    call check(statuses(1)%MPI_SOURCE == prev, 'waitall status')

    ! A scalar buffer, MPI_STATUS_IGNORE, and a matched probe.
    one = rank + 5
    call MPI_Isend(one, 1, MPI_INTEGER, next, 9, MPI_COMM_WORLD, reqs(1))
    call MPI_Mprobe(prev, 9, MPI_COMM_WORLD, msg, status)
    call check(msg /= MPI_MESSAGE_NULL .and. status%MPI_TAG == 9, 'mprobe')
    call MPI_Mrecv(n, 1, MPI_INTEGER, msg, MPI_STATUS_IGNORE)
    call check(n == prev + 5, 'mrecv')
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
    call MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE)
    call check(.not. flag, 'nothing left')
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  end subroutine point_to_point

  subroutine collectives()
    integer :: grid(3, 4), v, m(3), i
    type(MPI_Op) :: op
    logical :: commute

    grid = 0
    if (rank == 0) grid = reshape([(i, i = 1, 12)], [3, 4])
    call MPI_Bcast(grid, 12, MPI_INTEGER, 0, MPI_COMM_WORLD)
    call check(grid(3, 4) == 12 .and. grid(2, 1) == 2, 'bcast of a 2-d array')
    v = rank + 1
    call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(v == nprocs * (nprocs + 1) / 2, 'allreduce in place')
    call MPI_Op_create(absmax, .true., op)
    call MPI_Op_commutative(op, commute)
    call check(commute, 'op_commutative')
    m = [-rank, rank - 3, 2]
    call MPI_Allreduce(MPI_IN_PLACE, m, 3, MPI_INTEGER, op, MPI_COMM_WORLD)
    ! With one rank the operator is never called: the values stay.
    call check(m(1) == nprocs - 1 .and. m(3) == 2 .and. &
               m(2) == merge(-3, max(3, nprocs - 4), nprocs == 1), 'user op')
    call MPI_Op_free(op)
    call check(op == MPI_OP_NULL, 'op_free')
  end subroutine collectives

  subroutine derived_types()
    type(MPI_Datatype) :: row, dup
    integer :: a(4, 5), b(5), i, sz
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent, a1, a2

    ! One row of a column-major array: 5 elements 4 apart.
    call MPI_Type_vector(5, 1, 4, MPI_INTEGER, row)
    call MPI_Type_commit(row)
    call MPI_Type_size(row, sz)
    call MPI_Type_get_extent(row, lb, extent)
    call check(sz == 20 .and. lb == 0 .and. extent == 68, 'vector size and extent')
    a = reshape([(i, i = 1, 20)], [4, 5])
    b = 0
    call MPI_Sendrecv(a(2, 1), 1, row, 0, 3, b, 5, MPI_INTEGER, 0, 3, MPI_COMM_SELF, &
                      MPI_STATUS_IGNORE)
    call check(all(b == [2, 6, 10, 14, 18]), 'row through a vector type')
    call MPI_Type_dup(row, dup)
    call check(dup /= row .and. dup /= MPI_DATATYPE_NULL, 'type_dup')
    call MPI_Type_free(dup)
    call MPI_Type_free(row)
    call check(row == MPI_DATATYPE_NULL, 'type_free')
    call MPI_Get_address(a(1, 1), a1)
    call MPI_Get_address(a(1, 2), a2)
    call check(MPI_Aint_diff(a2, a1) == 16 .and. MPI_Aint_add(a1, 16_MPI_ADDRESS_KIND) == a2, &
               'aint_add and aint_diff')
  end subroutine derived_types

  subroutine one_sided()
    type(MPI_Win) :: win
    integer :: cells(8), v
    integer(kind=MPI_ADDRESS_KIND) :: size, disp

    cells = -1
    size = 32
    call MPI_Win_create(cells, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
    call MPI_Win_fence(0, win)
    v = rank * 10
    disp = mod(rank, 8)
    call MPI_Put(v, 1, MPI_INTEGER, mod(rank + 1, nprocs), disp, 1, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check(cells(mod(mod(rank - 1 + nprocs, nprocs), 8) + 1) == &
               mod(rank - 1 + nprocs, nprocs) * 10, 'put')
    call MPI_Win_free(win)
    call check(win == MPI_WIN_NULL, 'win_free')
  end subroutine one_sided

  subroutine strings_and_attributes()
    type(MPI_Comm) :: dup
    character(len=MPI_MAX_OBJECT_NAME) :: name
    character(len=MPI_MAX_PROCESSOR_NAME) :: host
    integer :: n, keyval
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    logical :: flag

    call MPI_Comm_set_name(MPI_COMM_WORLD, 'the world')
    call MPI_Comm_get_name(MPI_COMM_WORLD, name, n)
    call check(name(1:n) == 'the world' .and. n == 9, 'comm names')
    call MPI_Get_processor_name(host, n)
    call check(n > 0, 'processor name')
    extra = 0
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra)
    val = 42
    call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, val)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_get_attr(dup, keyval, val, flag)
    call check(flag .and. val == 42, 'attribute copied by MPI_COMM_DUP_FN')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
    call check(flag .and. val >= 32767, 'MPI_TAG_UB')
    call MPI_Comm_free(dup)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval)
    call MPI_Comm_free_keyval(keyval)
    call check(keyval == MPI_KEYVAL_INVALID, 'comm_free_keyval')
  end subroutine strings_and_attributes

  subroutine communicators()
    type(MPI_Comm) :: half
    type(MPI_Group) :: group, wgroup
    integer :: hrank, hsize, res
    double precision :: t0, t1

    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half)
    call check(half /= MPI_COMM_NULL .and. half /= MPI_COMM_WORLD, 'comm_split')
    call MPI_Comm_rank(half, hrank)
    call MPI_Comm_size(half, hsize)
    call check(hsize == (nprocs + 1 - mod(rank, 2)) / 2, 'split size')
    call check(hrank == hsize - 1 - rank / 2, 'split orders by key')
    call MPI_Comm_compare(half, MPI_COMM_WORLD, res)
    call check((nprocs == 1 .and. res == MPI_CONGRUENT) .or. (nprocs > 1 .and. res == MPI_UNEQUAL), &
               'comm_compare')
    call MPI_Comm_group(half, group)
    call MPI_Comm_group(MPI_COMM_WORLD, wgroup)
    call MPI_Group_compare(group, wgroup, res)
    call check((nprocs == 1 .and. res == MPI_IDENT) .or. (nprocs > 1 .and. res == MPI_UNEQUAL), &
               'group_compare')
    call MPI_Group_free(group)
    call MPI_Group_free(wgroup)
    call MPI_Comm_free(half)
    call check(half == MPI_COMM_NULL, 'comm_free')
    t0 = MPI_Wtime()
    t1 = MPI_Wtime()
    call check(t1 >= t0 .and. MPI_Wtick() > 0, 'wtime')
  end subroutine communicators

  subroutine error_handler()
    type(MPI_Errhandler) :: eh
    type(MPI_Comm) :: d
    integer :: ierr

    call MPI_Comm_create_errhandler(on_error08, eh)
    call MPI_Comm_dup(MPI_COMM_WORLD, d)
    call MPI_Comm_set_errhandler(d, eh)
    call MPI_Comm_call_errhandler(d, MPI_ERR_ARG, ierr)
    call check(eh_comm == d .and. eh_code == MPI_ERR_ARG, 'Fortran 2008 error handler')
    call MPI_Errhandler_free(eh)
    call MPI_Comm_free(d)
  end subroutine error_handler
end program f_mpi08
