! The Fortran bindings in miniature, through `use mpi` and mpif90: point to
! point (statuses, requests, 1-based indices, MPI_STATUS_IGNORE), collectives
! (MPI_IN_PLACE, a reduction written in Fortran), a derived type over a
! column-major array, one-sided communication, strings, attributes with a
! Fortran copy callback, error handlers and generalized requests written in
! Fortran, and communicator management. Every result is checked; the first
! wrong one stops the job with a message.
module checks
  use mpi
  implicit none
  integer :: rank, nprocs
  ! What the Fortran callbacks below saw.
  integer :: eh_calls = 0, eh_handle = -1, eh_code = -1
  integer :: gq_calls = 0, gf_calls = 0, gc_calls = 0
  integer(kind=MPI_ADDRESS_KIND) :: g_extra = -1
  logical :: gc_complete = .true.
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: ierr
    if (.not. ok) then
      write (0, '(a,i0,2a)') 'f_mpi: rank ', rank, ' failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check

  subroutine ok(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    call check(ierr == MPI_SUCCESS, what)
  end subroutine ok
end module checks

! A reduction MPI calls with Fortran's arguments: elementwise max of |x|.
subroutine absmax(invec, inoutvec, len, datatype)
  implicit none
  integer, intent(in) :: len, datatype
  integer, intent(in) :: invec(len)
  integer, intent(inout) :: inoutvec(len)
  integer :: i
  do i = 1, len
    inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
  end do
end subroutine absmax

! An attribute copy callback: the copy is the value plus extra_state.
subroutine copy_plus(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine copy_plus

! An error handler MPI calls with Fortran's arguments (for communicators,
! windows and files alike: the handle, then the error code).
subroutine on_error(handle, code)
  use checks
  implicit none
  integer :: handle, code
  eh_calls = eh_calls + 1
  eh_handle = handle
  eh_code = code
end subroutine on_error

! A generalized request's callbacks: the query fills the status.
subroutine g_query(extra, status, ierr)
  use checks
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  gq_calls = gq_calls + 1
  g_extra = extra
  status(MPI_SOURCE) = 3
  status(MPI_TAG) = 9
  call MPI_Status_set_elements(status, MPI_INTEGER, 5, ierr)
  call MPI_Status_set_cancelled(status, gc_calls > 0, ierr)
end subroutine g_query

subroutine g_free(extra, ierr)
  use checks
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  gf_calls = gf_calls + 1
  g_extra = extra
  ierr = MPI_SUCCESS
end subroutine g_free

subroutine g_cancel(extra, complete, ierr)
  use checks
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  gc_calls = gc_calls + 1
  gc_complete = complete
  g_extra = extra
  ierr = MPI_SUCCESS
end subroutine g_cancel

program f_mpi
  use checks
  implicit none
  integer :: ierr, provided

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call ok(ierr, 'init_thread')
  call check(provided >= MPI_THREAD_FUNNELED, 'thread level')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call ok(ierr, 'size')
  call point_to_point()
  call collectives()
  call derived_types()
  call one_sided()
  call strings_and_attributes()
  call communicators()
  call callbacks()
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0,a)') 'f_mpi: ', nprocs, ' ranks: all checks passed'
  call MPI_Finalize(ierr)
  call ok(ierr, 'finalize')

contains

  subroutine point_to_point()
    integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
    integer :: reqs(2), next, prev, n, idx, ierr, i
    double precision :: sbuf(100), rbuf(100)
    logical :: flag

    next = mod(rank + 1, nprocs)
    prev = mod(rank - 1 + nprocs, nprocs)
    sbuf = [(rank * 1000 + i, i = 1, 100)]
    rbuf = -1
    call MPI_Sendrecv(sbuf, 100, MPI_DOUBLE_PRECISION, next, 7, rbuf, 100, &
                      MPI_DOUBLE_PRECISION, prev, 7, MPI_COMM_WORLD, status, ierr)
    call ok(ierr, 'sendrecv')
    call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == 7, 'sendrecv status')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, n, ierr)
    call check(n == 100, 'get_count')
    call check(all(rbuf == [(prev * 1000 + i, i = 1, 100)]), 'sendrecv data')

    rbuf = -1
    call MPI_Irecv(rbuf, 50, MPI_DOUBLE_PRECISION, prev, 8, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(sbuf, 50, MPI_DOUBLE_PRECISION, next, 8, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, statuses, ierr)
    call ok(ierr, 'waitall')
    call check(all(reqs == MPI_REQUEST_NULL), 'waitall nulls the requests')
    call check(statuses(MPI_SOURCE, 1) == prev .and. statuses(MPI_TAG, 1) == 8, 'waitall status')
    call check(all(rbuf(1:50) == [(prev * 1000 + i, i = 1, 50)]), 'irecv data')

    ! Waitany counts from 1; the receive is the second request.
    call MPI_Isend(sbuf, 1, MPI_DOUBLE_PRECISION, next, 9, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(rbuf, 1, MPI_DOUBLE_PRECISION, prev, 9, MPI_COMM_WORLD, reqs(2), ierr)
    do i = 1, 2
      call MPI_Waitany(2, reqs, idx, status, ierr)
      call ok(ierr, 'waitany')
      call check(idx == 1 .or. idx == 2, 'waitany index is 1-based')
      call check(reqs(idx) == MPI_REQUEST_NULL, 'waitany nulls its request')
    end do
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
    call check(idx == MPI_UNDEFINED, 'waitany on nothing')

    call MPI_Isend(sbuf, 3, MPI_DOUBLE_PRECISION, next, 10, MPI_COMM_WORLD, reqs(1), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(prev, 10, MPI_COMM_WORLD, flag, status, ierr)
    end do
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, n, ierr)
    call check(n == 3, 'iprobe count')
    call MPI_Recv(rbuf, 3, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
                  MPI_STATUS_IGNORE, ierr)
    call ok(ierr, 'recv with MPI_STATUS_IGNORE')
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
    call MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE, ierr)
    call ok(ierr, 'waitall with MPI_STATUSES_IGNORE')
  end subroutine point_to_point

  subroutine collectives()
    integer :: ierr, i, op, v(4), root, ipair(2)
    integer, allocatable :: all_ranks(:)
    double precision :: d, dpair(2)
    real :: rpair(2)
    external absmax

    d = rank + 0.5d0
    call MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call ok(ierr, 'allreduce in place')
    call check(abs(d - (nprocs * (nprocs - 1) / 2.0d0 + 0.5d0 * nprocs)) < 1d-9, 'allreduce sum')

    root = nprocs - 1
    v = 0
    if (rank == root) v = [11, 22, 33, 44]
    call MPI_Bcast(v, 4, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check(all(v == [11, 22, 33, 44]), 'bcast')

    allocate (all_ranks(nprocs))
    all_ranks = -1
    call MPI_Allgather(rank, 1, MPI_INTEGER, all_ranks, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(all_ranks == [(i, i = 0, nprocs - 1)]), 'allgather')

    ! MAXLOC/MINLOC on Fortran's pair types: (value, index) in one type.
    dpair(1) = mod(rank * 7, nprocs) + 0.5d0
    dpair(2) = rank
    call MPI_Allreduce(MPI_IN_PLACE, dpair, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, &
                       MPI_COMM_WORLD, ierr)
    call ok(ierr, 'MAXLOC on MPI_2DOUBLE_PRECISION')
    call check(dpair(1) == maxval([(mod(i * 7, nprocs) + 0.5d0, i = 0, nprocs - 1)]), &
               'MAXLOC value')
    call check(mod(int(dpair(2)) * 7, nprocs) + 0.5d0 == dpair(1), 'MAXLOC location')
    rpair = [real(nprocs - rank), real(rank)]
    call MPI_Allreduce(MPI_IN_PLACE, rpair, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(rpair(1) == 1.0 .and. rpair(2) == real(nprocs - 1), 'MINLOC on MPI_2REAL')
    ipair = [5, rank]
    call MPI_Allreduce(MPI_IN_PLACE, ipair, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(ipair(1) == 5 .and. ipair(2) == 0, 'MINLOC ties keep the smallest index')

    call MPI_Op_create(absmax, .true., op, ierr)
    call ok(ierr, 'op_create')
    v = [-rank, rank, -2 * rank, 0]
    call MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call ok(ierr, 'allreduce with a Fortran op')
    call check(all(v == [nprocs - 1, nprocs - 1, 2 * (nprocs - 1), 0]), 'Fortran op result')
    call MPI_Op_free(op, ierr)
    call check(op == MPI_OP_NULL, 'op_free')
  end subroutine collectives

  subroutine derived_types()
    integer :: a(4, 3), col, ierr, sz, st, i, j, blens(2), types(2)
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent, disps(2), base
    integer :: status(MPI_STATUS_SIZE), next, prev
    type pair
      integer :: i
      double precision :: d
    end type pair
    type(pair) :: p(2), q(2)

    ! A row of a column-major 4x3 array: 3 integers, stride 4.
    call MPI_Type_vector(3, 1, 4, MPI_INTEGER, col, ierr)
    call MPI_Type_commit(col, ierr)
    call ok(ierr, 'type_vector')
    call MPI_Type_size(col, sz, ierr)
    call check(sz == 12, 'type_size')
    call MPI_Type_get_extent(col, lb, extent, ierr)
    call check(lb == 0 .and. extent == 36, 'type_get_extent')
    next = mod(rank + 1, nprocs)
    prev = mod(rank - 1 + nprocs, nprocs)
    a = reshape([(rank * 100 + i, i = 1, 12)], [4, 3])
    call MPI_Sendrecv_replace(a(2, 1), 1, col, next, 3, prev, 3, MPI_COMM_WORLD, status, ierr)
    call ok(ierr, 'sendrecv_replace')
    do j = 1, 3
      do i = 1, 4
        if (i == 2) then
          call check(a(i, j) == prev * 100 + i + 4 * (j - 1), 'row received')
        else
          call check(a(i, j) == rank * 100 + i + 4 * (j - 1), 'rest untouched')
        end if
      end do
    end do
    call MPI_Type_free(col, ierr)
    call check(col == MPI_DATATYPE_NULL, 'type_free')

    call MPI_Get_address(p(1), base, ierr)
    call MPI_Get_address(p(1)%i, disps(1), ierr)
    call MPI_Get_address(p(1)%d, disps(2), ierr)
    disps = disps - base
    blens = 1
    types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
    call MPI_Type_create_struct(2, blens, disps, types, st, ierr)
    call ok(ierr, 'type_create_struct')
    call MPI_Type_commit(st, ierr)
    call MPI_Type_get_extent(st, lb, extent, ierr)
    call MPI_Get_address(p(2), disps(1), ierr)
    call check(extent == disps(1) - base, 'struct extent matches the Fortran type')
    p = [pair(rank, rank * 1.5d0), pair(-rank, -0.25d0)]
    q = pair(-9, -9d0)
    call MPI_Sendrecv(p, 2, st, next, 4, q, 2, st, prev, 4, MPI_COMM_WORLD, status, ierr)
    call ok(ierr, 'struct sendrecv')
    call check(q(1)%i == prev .and. q(1)%d == prev * 1.5d0 .and. q(2)%i == -prev .and. &
               q(2)%d == -0.25d0, 'struct data')
    call MPI_Type_free(st, ierr)
  end subroutine derived_types

  subroutine one_sided()
    integer :: win, ierr, next, flag_i, i
    integer :: buf(8), got(8), src(3), one(1)
    integer(kind=MPI_ADDRESS_KIND) :: winsz, disp, attr
    logical :: flag

    buf = rank
    winsz = 8 * 4
    call MPI_Win_create(buf, winsz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call ok(ierr, 'win_create')
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
    call check(flag .and. attr == winsz, 'MPI_WIN_SIZE attribute')
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
    call check(flag .and. attr == 4, 'MPI_WIN_DISP_UNIT attribute')
    next = mod(rank + 1, nprocs)
    call MPI_Win_fence(0, win, ierr)
    disp = 2
    ! Origin buffers stay valid until the epoch ends: no array temporaries.
    src = [(100 + rank, i = 1, 3)]
    call MPI_Put(src, 3, MPI_INTEGER, next, disp, 3, MPI_INTEGER, win, ierr)
    call ok(ierr, 'put')
    call MPI_Win_fence(0, win, ierr)
    flag_i = mod(rank - 1 + nprocs, nprocs)
    ! buf(1) may already take the accumulates of the next epoch.
    call check(all(buf(3:5) == 100 + flag_i) .and. buf(2) == rank .and. buf(6) == rank, &
               'put landed at the displacement')
    disp = 0
    one = 1
    call MPI_Accumulate(one, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    if (rank == 0) call check(buf(1) == nprocs, 'accumulate')
    got = -1
    call MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win, ierr)
    disp = 0
    call MPI_Get(got, 8, MPI_INTEGER, next, disp, 8, MPI_INTEGER, win, ierr)
    call MPI_Win_unlock(next, win, ierr)
    call ok(ierr, 'get under lock')
    call check(got(3) == 100 + rank .and. got(8) == next, 'get data')
    call MPI_Win_free(win, ierr)
    call check(win == MPI_WIN_NULL, 'win_free')
  end subroutine one_sided

  subroutine strings_and_attributes()
    character(len=MPI_MAX_PROCESSOR_NAME) :: host
    character(len=MPI_MAX_OBJECT_NAME) :: name
    character(len=40) :: val
    integer :: len, ierr, info, keyval, dup
    integer(kind=MPI_ADDRESS_KIND) :: attr, extra
    logical :: flag
    external copy_plus

    call MPI_Get_processor_name(host, len, ierr)
    call check(len > 0 .and. len_trim(host) == len, 'processor name, blank padded')
    call MPI_Comm_set_name(MPI_COMM_WORLD, '  the world  ', ierr)
    call MPI_Comm_get_name(MPI_COMM_WORLD, name, len, ierr)
    call check(name == 'the world' .and. len == 9, 'comm name round trip')

    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'colour', 'blue', ierr)
    call MPI_Info_get(info, 'colour', 40, val, flag, ierr)
    call check(flag .and. val == 'blue', 'info get')
    call MPI_Info_get(info, 'shape', 40, val, flag, ierr)
    call check(.not. flag, 'info get of a missing key')
    call MPI_Info_free(info, ierr)
    call check(info == MPI_INFO_NULL, 'info_free')

    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, attr, flag, ierr)
    call check(flag .and. attr >= 32767, 'MPI_TAG_UB is a value, not an address')

    extra = 5
    call MPI_Comm_create_keyval(copy_plus, MPI_COMM_NULL_DELETE_FN, keyval, extra, ierr)
    call ok(ierr, 'comm_create_keyval with Fortran callbacks')
    attr = 37
    call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, attr, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_get_attr(dup, keyval, attr, flag, ierr)
    call check(flag .and. attr == 42, 'copy callback ran on dup with extra_state')
    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval, ierr)
    call MPI_Comm_free_keyval(keyval, ierr)
    call check(keyval == MPI_KEYVAL_INVALID, 'comm_free_keyval')
  end subroutine strings_and_attributes

  subroutine communicators()
    integer :: half, ierr, hrank, hsize, group, wgroup, res
    double precision :: t0, t1

    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
    call ok(ierr, 'comm_split')
    call MPI_Comm_rank(half, hrank, ierr)
    call MPI_Comm_size(half, hsize, ierr)
    call check(hsize == (nprocs + 1 - mod(rank, 2)) / 2, 'split size')
    call check(hrank == hsize - 1 - rank / 2, 'split orders by key')
    call MPI_Comm_group(half, group, ierr)
    call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
    call MPI_Group_compare(group, wgroup, res, ierr)
    call check((nprocs == 1 .and. res == MPI_IDENT) .or. (nprocs > 1 .and. res == MPI_UNEQUAL), &
               'group_compare')
    call MPI_Group_free(group, ierr)
    call MPI_Group_free(wgroup, ierr)
    call MPI_Comm_free(half, ierr)
    call check(half == MPI_COMM_NULL, 'comm_free')
    t0 = MPI_Wtime()
    t1 = MPI_Wtime()
    call check(t1 >= t0 .and. MPI_Wtick() > 0, 'wtime')
  end subroutine communicators

  subroutine callbacks()
    external :: on_error, g_query, g_free, g_cancel
    integer :: eh, d, ierr, cls, win, req, n, buf(4)
    integer :: status(MPI_STATUS_SIZE)
    integer(kind=MPI_ADDRESS_KIND) :: extra, wsize
    logical :: flag

    ! A communicator's handler, called by the program and by an error.
    call MPI_Comm_create_errhandler(on_error, eh, ierr)
    call ok(ierr, 'comm_create_errhandler with a Fortran handler')
    call MPI_Comm_dup(MPI_COMM_WORLD, d, ierr)
    call MPI_Comm_set_errhandler(d, eh, ierr)
    call MPI_Comm_call_errhandler(d, MPI_ERR_TAG, ierr)
    call check(eh_calls == 1 .and. eh_handle == d .and. eh_code == MPI_ERR_TAG, &
               'comm handler called with the communicator and the code')
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, d, ierr)
    call MPI_Error_class(ierr, cls, n)
    call check(eh_calls == 2 .and. eh_handle == d .and. cls == MPI_ERR_RANK .and. &
               eh_code == ierr, 'comm handler called for a send to no rank, which returns')
    call MPI_Errhandler_free(eh, ierr)
    call MPI_Comm_free(d, ierr)

    ! A window's.
    call MPI_Win_create_errhandler(on_error, eh, ierr)
    call ok(ierr, 'win_create_errhandler')
    wsize = 16
    call MPI_Win_create(buf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call MPI_Win_set_errhandler(win, eh, ierr)
    call MPI_Win_call_errhandler(win, MPI_ERR_OTHER, ierr)
    call check(eh_calls == 3 .and. eh_handle == win .and. eh_code == MPI_ERR_OTHER, &
               'window handler called with the window')
    call MPI_Win_free(win, ierr)
    call MPI_Errhandler_free(eh, ierr)

    ! The files' default handler (there are no files here: MPI_FILE_NULL's).
    call MPI_File_create_errhandler(on_error, eh, ierr)
    call ok(ierr, 'file_create_errhandler')
    call MPI_File_set_errhandler(MPI_FILE_NULL, eh, ierr)
    call MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO, ierr)
    call check(eh_calls == 4 .and. eh_handle == MPI_FILE_NULL .and. eh_code == MPI_ERR_IO, &
               'file handler called with MPI_FILE_NULL')
    call MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN, ierr)
    call MPI_Errhandler_free(eh, ierr)

    ! A generalized request: completed, waited for, freed.
    extra = 77
    call MPI_Grequest_start(g_query, g_free, g_cancel, extra, req, ierr)
    call ok(ierr, 'grequest_start with Fortran callbacks')
    call MPI_Test(req, flag, status, ierr)
    call check(.not. flag .and. gq_calls == 0, 'grequest incomplete until completed')
    call MPI_Grequest_complete(req, ierr)
    call MPI_Wait(req, status, ierr)
    call ok(ierr, 'wait on a grequest')
    call check(req == MPI_REQUEST_NULL .and. gq_calls == 1 .and. gf_calls == 1 .and. &
               g_extra == 77, 'query and free called with extra_state')
    call check(status(MPI_SOURCE) == 3 .and. status(MPI_TAG) == 9, 'status from the query')
    call MPI_Get_count(status, MPI_INTEGER, n, ierr)
    call check(n == 5, 'elements set by the query')
    ! Cancelled before it completes: the callback hears it is not complete.
    extra = 78
    call MPI_Grequest_start(g_query, g_free, g_cancel, extra, req, ierr)
    call MPI_Cancel(req, ierr)
    call check(gc_calls == 1 .and. .not. gc_complete .and. g_extra == 78, &
               'cancel called with complete false and extra_state')
    call MPI_Grequest_complete(req, ierr)
    call MPI_Wait(req, status, ierr)
    call MPI_Test_cancelled(status, flag, ierr)
    call check(flag .and. gf_calls == 2, 'cancelled status from the query, then freed')
  end subroutine callbacks
end program f_mpi
