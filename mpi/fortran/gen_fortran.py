#!/usr/bin/env python3
"""Writes the Fortran side of libmpi from include/mpi.h, so that the two
can never disagree: the C bindings Fortran calls (gfortran's names:
pmpi_send_, with mpi_send_ its weak alias for profilers) and a small C
program that prints mpif.h with the values the C header defines.

usage: gen_fortran.py MPI_H BINDINGS_C FCONST_C INTERFACES_H MPI_F08_F90

It also writes the explicit interfaces the `use mpi` module gives for the
routines that take choice buffers: gfortran 10 and later refuse calls that
pass buffers of different types to one routine without them. Buffers get
gfortran's NO_ARG_CHECK, so any type, kind and rank is accepted; the other
arguments are checked.

Every MBMPI_FN declaration is bound unless it is in HAND (written in
mbmpi_fhand.c, where Fortran's arguments need more than a type-by-type
translation) or NOT_BOUND (C-only, or taking C callbacks Fortran cannot
supply). An argument type the table below does not know stops the build:
a new C function gets its Fortran binding, or a decision, at once.
"""
import re
import sys

# Handle types and the stem of their MPI_<stem>_f2c/c2f.
HANDLES = {'MPI_Comm': 'Comm', 'MPI_Datatype': 'Type', 'MPI_Group': 'Group', 'MPI_Op': 'Op',
           'MPI_Request': 'Request', 'MPI_Win': 'Win', 'MPI_Info': 'Info',
           'MPI_Errhandler': 'Errhandler', 'MPI_Message': 'Message', 'MPI_File': 'File'}

# Fortran's arguments differ from C's beyond types: arrays of handles and
# statuses, attribute values, callbacks, functions returning values.
HAND = {
    'Init', 'Init_thread', 'Wtime', 'Wtick', 'Aint_add', 'Aint_diff', 'Pcontrol',
    'Startall', 'Waitall', 'Testall', 'Waitany', 'Testany', 'Waitsome', 'Testsome',
    'Type_create_struct', 'Type_get_contents', 'Alltoallw', 'Ialltoallw',
    'Neighbor_alltoallw', 'Ineighbor_alltoallw', 'Buffer_detach', 'Op_create',
    'Comm_set_attr', 'Comm_get_attr', 'Type_set_attr', 'Type_get_attr', 'Win_set_attr',
    'Win_get_attr', 'Attr_put', 'Attr_get', 'Comm_create_keyval', 'Type_create_keyval',
    'Win_create_keyval', 'Keyval_create',
    # Callbacks called with Fortran's arguments (mbmpi_fhand.c).
    'Comm_create_errhandler', 'Win_create_errhandler', 'File_create_errhandler',
    'Errhandler_create', 'Grequest_start',
}

NOT_BOUND = {
    # C-only by definition.
    'Comm_c2f', 'Comm_f2c', 'Type_c2f', 'Type_f2c', 'Group_c2f', 'Group_f2c', 'Request_c2f',
    'Request_f2c', 'Op_c2f', 'Op_f2c', 'Info_c2f', 'Info_f2c', 'Win_c2f', 'Win_f2c',
    'Errhandler_c2f', 'Errhandler_f2c', 'Message_c2f', 'Message_f2c', 'File_c2f', 'File_f2c',
    'Status_c2f', 'Status_f2c',
    # Spawn has no use here.
    'Comm_spawn', 'Comm_spawn_multiple',
    # C's argc and argv.
    'Info_create_env',
    # Persistent w collectives keep their arrays of types until freed; the
    # Fortran binding's converted copies would not live that long.
    'Alltoallw_init', 'Neighbor_alltoallw_init',
    # MPI-1 forms removed in MPI-3 whose Fortran arguments are INTEGER where
    # C's are MPI_Aint; Fortran programs use the MPI-2 names.
    'Type_hvector', 'Type_hindexed', 'Type_struct', 'Address', 'Type_extent', 'Type_lb',
    'Type_ub',
}

# void * arguments that are not choice buffers (no MPI_BOTTOM/IN_PLACE).
PLAIN_POINTERS = {'baseptr', 'base', 'location'}


def parse(header):
    text = open(header).read()
    fns = []
    for ret, name, args in re.findall(r'MBMPI_FN\(\s*([^,]+?)\s*,\s*(\w+)\s*,\s*\((.*?)\)\)\s*\n',
                                      text, re.S):
        args = ' '.join(args.split())
        params = []
        if args != 'void':
            for p in args.split(','):
                m = re.match(r'(.*?)(\w+)\s*((?:\[[^\]]*\])*)$', p.strip())
                if not m:
                    params = None
                    break
                ctype = (m.group(1).strip() + (' ' + m.group(3) if m.group(3) else '')).strip()
                params.append((ctype, m.group(2)))
        fns.append((ret.strip(), name, params))
    return text, fns


def bind(name, params):
    """C source of mpi_<name>_ or raises KeyError on an unknown type."""
    decl, strs, pre, call, post, hidden = [], [], [], [], [], []
    for ctype, p in params:
        base = ctype.replace('const ', '').strip()
        if base in ('int', 'MPI_Aint', 'MPI_Count', 'MPI_Offset'):
            ft = 'MPI_Fint' if base == 'int' else base
            decl.append(f'const {ft} *{p}')
            call.append(f'*{p}')
        elif base in ('int *', 'int []', 'MPI_Aint *', 'MPI_Aint []', 'MPI_Count *'):
            ft = base.split()[0]
            ft = 'MPI_Fint' if ft == 'int' else ft
            decl.append(f'{ft} *{p}')
            call.append(f'MBMPI_FWEIGHTS({p})' if 'weights' in p else p)
        elif base == 'int [][3]':
            decl.append(f'MPI_Fint (*{p})[3]')
            call.append(p)
        elif base in HANDLES:
            decl.append(f'const MPI_Fint *{p}')
            call.append(f'MPI_{HANDLES[base]}_f2c(*{p})')
        elif base.endswith(' *') and base[:-2] in HANDLES:
            h = base[:-2]
            decl.append(f'MPI_Fint *{p}')
            pre.append(f'{h} c_{p} = MPI_{HANDLES[h]}_f2c(*{p});')
            call.append(f'&c_{p}')
            post.append(f'*{p} = MPI_{HANDLES[h]}_c2f(c_{p});')
        elif base == 'MPI_Status *':
            decl.append(f'MPI_Fint *{p}')
            pre.append(f'MPI_Status c_{p}, *p_{p} = mbmpi_fstatus_in({p}, &c_{p});')
            call.append(f'p_{p}')
            if 'const' not in ctype:
                post.append(f'mbmpi_fstatus_out({p}, p_{p});')
        elif base == 'void *':
            decl.append(f'void *{p}')
            call.append(p if p in PLAIN_POINTERS else f'MBMPI_FBUF({p})')
        elif base in ('char *', 'char []'):
            decl.append(f'char *{p}')
            hidden.append(f'size_t {p}_len')
            if 'const' in ctype:
                strs.append(f'if (!(c_{p} = mbmpi_fstr_in({p}, {p}_len)))')
            else:
                strs.append(f'if (!(c_{p} = mbmpi_fstr_buf({p}_len)))')
                post.append(f'if (*ierr == MPI_SUCCESS)')
                post.append(f'\tmbmpi_fstr_out({p}, {p}_len, c_{p});')
            strs.append('\tgoto nomem;')
            call.append(f'c_{p}')
        else:
            raise KeyError(f'{name}: argument {p} of type "{ctype}"')
    cstrs = [f'c_{p}' for ctype, p in params
             if ctype.replace('const ', '').strip() in ('char *', 'char []')]
    frees = [f'free({c});' for c in cstrs]
    fname = name.lower()
    out = [f'MBMPI_FBIND void pmpi_{fname}_(' +
           ', '.join(decl + ['MPI_Fint *ierr'] + hidden) + ')', '{']
    if cstrs:
        out.append('\tchar ' + ', '.join(f'*{c} = NULL' for c in cstrs) + ';')
        out.append('')
    out += ['\t' + line for line in strs + pre]
    out.append(f'\t*ierr = MPI_{name}({", ".join(call)});')
    out += ['\t' + line for line in post]
    if frees:
        out += ['\t' + line for line in frees]
        out.append('\treturn;')
        out.append('nomem:')
        out += ['\t' + line for line in frees]
        out.append('\t*ierr = MPI_ERR_NO_MEM;')
    out.append('}')
    out.append(f'MBMPI_FALIAS({fname})')
    return '\n'.join(out) + '\n'


# Kinds and the sentinels Fortran passes by address (common blocks that
# mbmpi_fhand.c defines), and the functions mpif.h declares.
MPIF_TAIL = '''
      integer MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND
      integer MPI_INTEGER_KIND
      parameter (MPI_ADDRESS_KIND=8)
      parameter (MPI_OFFSET_KIND=8)
      parameter (MPI_COUNT_KIND=8)
      parameter (MPI_INTEGER_KIND=4)
      integer MPI_SOURCE, MPI_TAG, MPI_ERROR
      parameter (MPI_SOURCE=1)
      parameter (MPI_TAG=2)
      parameter (MPI_ERROR=3)
      integer MPI_BOTTOM
      common /mpi_fortran_bottom/ MPI_BOTTOM
      integer MPI_IN_PLACE
      common /mpi_fortran_in_place/ MPI_IN_PLACE
      integer MPI_STATUS_IGNORE(MPI_STATUS_SIZE)
      common /mpi_fortran_status_ignore/ MPI_STATUS_IGNORE
      integer MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)
      common /mpi_fortran_statuses_ignore/ MPI_STATUSES_IGNORE
      integer MPI_UNWEIGHTED
      common /mpi_fortran_unweighted/ MPI_UNWEIGHTED
      integer MPI_WEIGHTS_EMPTY
      common /mpi_fortran_weights_empty/ MPI_WEIGHTS_EMPTY
      integer MPI_ERRCODES_IGNORE(1)
      common /mpi_fortran_errcodes_ignore/ MPI_ERRCODES_IGNORE
      external MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, MPI_DUP_FN
      external MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN
      external MPI_COMM_DUP_FN
      external MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN
      external MPI_TYPE_DUP_FN
      external MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN
      external MPI_WIN_DUP_FN
      double precision MPI_WTIME, MPI_WTICK
      external MPI_WTIME, MPI_WTICK
      integer(kind=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF
      external MPI_AINT_ADD, MPI_AINT_DIFF
'''

# Names mpi.h defines that are C-only or given above with Fortran's value.
CONST_SKIP = {'MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR', 'MPI_BOTTOM', 'MPI_IN_PLACE',
              'MPI_STATUS_IGNORE', 'MPI_STATUSES_IGNORE', 'MPI_UNWEIGHTED', 'MPI_WEIGHTS_EMPTY',
              'MPI_ERRCODES_IGNORE', 'MPI_ARGV_NULL', 'MPI_ARGVS_NULL'}


def fconst(text):
    names = []
    for n in re.findall(r'^#define (MPI_[A-Z0-9_]+)[ \t]', text, re.M):
        if n not in CONST_SKIP and n not in names and not n.endswith('_FN'):
            names.append(n)
    out = ['/* Generated by gen_fortran.py: prints mpif.h. */',
           '#include <stdio.h>', '#include <stdint.h>', '#include "mpi.h"', '',
           '/* Integers and handles have a Fortran value; anything else (pointers,',
           ' * strings, callbacks) is C-only and printed as nothing. */',
           '#define VAL(x) _Generic((x), int: (long long)(intptr_t)(x), '
           'unsigned: (long long)(intptr_t)(x), long: (long long)(intptr_t)(x), '
           'long long: (long long)(intptr_t)(x), unsigned long: (long long)(x), '
           + ', '.join(f'{h}: (long long)(intptr_t)(x)' for h in sorted(HANDLES)) +
           ', default: (long long)-0x7fffffffffffffffLL)',
           '/* The handle type a constant has in mpi_f08, or NULL for an integer. */',
           '#define HT(x) _Generic((x), ' + ', '.join(f'{h}: "{h}"' for h in sorted(HANDLES)) +
           ', default: (const char *)0)',
           '/* mpif.h by default; with f08ints or f08handles, the declarations of',
           ' * the mpi_f08 module: integer constants, then handle constants. */',
           'static int mode;',
           '#define P(name) do { long long v_ = VAL(name); const char *t_ = HT(name); \\',
           '\tif (v_ == -0x7fffffffffffffffLL) break; \\',
           '\tif (mode == 0) printf("      integer %s\\n      parameter (%s=%lld)\\n", #name, #name, v_); \\',
           '\telse if (mode == 1 && !t_) printf("  integer, parameter :: %s = %lld\\n", #name, v_); \\',
           '\telse if (mode == 2 && t_) printf("  type(%s), parameter :: %s = %s(%lld)\\n", t_, #name, t_, v_); \\',
           '\t} while (0)',
           '', 'int main(int argc, char **argv)', '{',
           '\tmode = argc > 1 ? (argv[1][3] == \'i\' ? 1 : 2) : 0;',
           '\tif (mode == 1)',
           '\t\tprintf("  integer, parameter :: MPI_STATUS_SIZE = %zu\\n", sizeof(MPI_Status) / sizeof(MPI_Fint));',
           '\tif (mode) {'] + [f'\t\tP({n});' for n in names] + ['\t\treturn 0;', '\t}',
           '\tputs("! mpif.h for Matchbox MPI, printed at build time from mpi.h.");',
           '\tputs("! Valid as fixed and free form: include \'mpif.h\' or use mpi.");',
           '\tprintf("      integer MPI_STATUS_SIZE\\n      parameter (MPI_STATUS_SIZE=%zu)\\n",',
           '\t       sizeof(MPI_Status) / sizeof(MPI_Fint));']
    out += [f'\tP({n});' for n in names]
    out += ['\tfputs(' + ' '.join('"' + line.replace('\\', '\\\\').replace('"', '\\"') + '\\n"'
                                  for line in MPIF_TAIL.strip('\n').split('\n')) + ', stdout);',
            '\treturn 0;', '}']
    return '\n'.join(out) + '\n'


# int * arguments that Fortran declares LOGICAL.
LOGICALS = {'flag', 'periods', 'reorder', 'remain_dims', 'commute', 'weighted'}


def fdecl(name, ctype, p):
    """The Fortran declaration of one argument of an explicit interface."""
    base = ctype.replace('const ', '').strip()
    kinds = {'MPI_Aint': 'integer(kind=MPI_ADDRESS_KIND)', 'MPI_Count': 'integer(kind=MPI_COUNT_KIND)',
             'MPI_Offset': 'integer(kind=MPI_OFFSET_KIND)'}
    if base == 'void *':
        return f'!GCC$ ATTRIBUTES NO_ARG_CHECK :: {p}\n    type(*), dimension(*) :: {p}'
    if base in ('char *', 'char []'):
        return f'character(len=*) :: {p}'
    if base in ('MPI_Status *',):
        return f'integer :: {p}(MPI_STATUS_SIZE)'
    if base == 'int [][3]':
        return f'integer :: {p}(3, *)'
    scalar = base.split()[0]
    ftype = kinds.get(scalar, 'logical' if p in LOGICALS else 'integer')
    if scalar not in kinds and scalar != 'int' and scalar not in HANDLES:
        raise KeyError(f'{name}: no Fortran interface type for "{ctype}"')
    if base.endswith('[]'):
        return f'{ftype} :: {p}(*)'
    if base.endswith('*'):
        return f'{ftype} :: {p}'
    return f'{ftype}, intent(in) :: {p}'


def interface(name, params):
    names = [p for _, p in params] + ['ierror']
    lines, line = [], f'  subroutine MPI_{name}('
    for i, n in enumerate(names):
        piece = n + (', ' if i + 1 < len(names) else ')')
        if len(line) + len(piece) > 90:
            lines.append(line + '&')
            line = '      '
        line += piece
    lines.append(line)
    lines.append('    import :: MPI_ADDRESS_KIND, MPI_COUNT_KIND, MPI_OFFSET_KIND, MPI_STATUS_SIZE')
    lines.append('    implicit none')
    for ctype, p in params:
        lines.append('    ' + fdecl(name, ctype, p))
    lines.append('    integer :: ierror')
    lines.append(f'  end subroutine MPI_{name}')
    return '\n'.join(lines)


def interfaces(fns):
    out = ['! Generated by mpi/fortran/gen_fortran.py from include/mpi.h: explicit',
           '! interfaces of the routines with choice buffers, for the `use mpi` module.',
           'interface']
    for ret, name, params in fns:
        if name in NOT_BOUND or not params or ret != 'int':
            continue
        voids = [p for c, p in params if c.replace('const ', '').strip() == 'void *']
        # Attribute values and extra state are INTEGERs in Fortran: those
        # routines keep implicit interfaces.
        if voids and not set(voids) & {'extra', 'val', 'attribute_val'}:
            out.append(interface(name, params))
    out.append('end interface')
    return '\n'.join(out) + '\n'


# ---- The mpi_f08 module ----
#
# Each routine is a module procedure with the MPI-3 Fortran 2008 arguments
# (handles as TYPE(MPI_Comm) and kin, TYPE(MPI_Status), an optional
# ierror) that calls the same routine's `use mpi` binding above (pmpi_x_):
# a handle type holds one INTEGER and a status type MPI_STATUS_SIZE of them,
# so passed by reference they are what that binding reads. Routines whose
# Fortran 2008 form differs from their C arguments are in F08_SPECIAL and
# F08_FUNCTIONS.

F08_KINDS = {'MPI_Aint': 'integer(kind=MPI_ADDRESS_KIND)',
             'MPI_Count': 'integer(kind=MPI_COUNT_KIND)',
             'MPI_Offset': 'integer(kind=MPI_OFFSET_KIND)'}

# void * arguments that hold values or C pointers in Fortran, not buffers.
F08_ADDRESS_VALUES = {'attribute_val', 'val', 'extra_state', 'extra'}
F08_C_POINTERS = {'baseptr'}

# name: (first line, declarations, binding, its declarations, call arguments,
# the optional ierror or None)
F08_SPECIAL = {
    'Init': ('subroutine MPI_Init(ierror)', ['integer, optional, intent(out) :: ierror'],
             'pmpi_init', ['integer :: ierror'], ['ierr'], 'ierror'),
    'Init_thread': ('subroutine MPI_Init_thread(required, provided, ierror)',
                    ['integer, intent(in) :: required', 'integer, intent(out) :: provided',
                     'integer, optional, intent(out) :: ierror'],
                    'pmpi_init_thread', ['integer :: required, provided, ierror'],
                    ['required', 'provided', 'ierr'], 'ierror'),
    'Pcontrol': ('subroutine MPI_Pcontrol(level)', ['integer, intent(in) :: level'],
                 'pmpi_pcontrol', ['integer :: level, ierror'], ['level', 'ierr'], None),
    'Buffer_detach': ('subroutine MPI_Buffer_detach(buffer_addr, size, ierror)',
                      ['type(c_ptr), intent(out) :: buffer_addr', 'integer, intent(out) :: size',
                       'integer, optional, intent(out) :: ierror'],
                      'pmpi_buffer_detach', ['type(c_ptr) :: buffer_addr', 'integer :: size, ierror'],
                      ['buffer_addr', 'size', 'ierr'], 'ierror'),
}

# The routines that are functions: name, result type (also the arguments').
F08_FUNCTIONS = [('Wtime', 'double precision', []), ('Wtick', 'double precision', []),
                 ('Aint_add', 'integer(kind=MPI_ADDRESS_KIND)', ['base', 'disp']),
                 ('Aint_diff', 'integer(kind=MPI_ADDRESS_KIND)', ['addr1', 'addr2'])]


def f08_function(name, rtype, args):
    a, callee = ', '.join(args), f'pmpi_{name.lower()}'
    lines = [f'  {rtype} function MPI_{name}({a})']
    if args:
        lines.append(f'    {rtype}, intent(in) :: {a}')
    lines += ['    interface', f'      function {callee}({a})', '        import',
              f'        {rtype} :: {callee}' + (f', {a}' if args else ''),
              f'      end function {callee}', '    end interface',
              f'    MPI_{name} = {callee}({a})', f'  end function MPI_{name}']
    return '\n'.join(lines)


def f08_decl(name, ctype, p, dummy):
    """Declarations of one argument: in the routine (dummy=True, with
    intents) and in the interface of the binding it calls."""
    const = 'const' in ctype
    base = ctype.replace('const ', '').strip()
    intent_in = ', intent(in)' if dummy else ''
    if base == 'void *':
        if p in F08_ADDRESS_VALUES:
            return [f'integer(kind=MPI_ADDRESS_KIND) :: {p}']
        if p in F08_C_POINTERS:
            return [f'type(c_ptr) :: {p}']
        return [f'!GCC$ ATTRIBUTES NO_ARG_CHECK :: {p}',
                f'type(*), dimension(*){intent_in if const else ""} :: {p}']
    if base in ('char *', 'char []'):
        return [f'character(len=*){intent_in if const else ""} :: {p}']
    if base.endswith('_function *'):
        return [f'external :: {p}']
    if base == 'int [][3]':
        return [f'integer :: {p}(3, *)']
    if base in ('MPI_Status *', 'MPI_Status []'):
        return [f'type(MPI_Status) :: {p}' + ('(*)' if base.endswith('[]') else '')]
    scalar = base.split()[0]
    if scalar in HANDLES:
        ftype = f'type({scalar})'
    elif scalar in F08_KINDS:
        ftype = F08_KINDS[scalar]
    elif scalar == 'int':
        ftype = 'logical' if p in LOGICALS else 'integer'
    else:
        raise KeyError(f'{name}: no Fortran 2008 type for "{ctype}"')
    if base.endswith('[]'):
        return [f'{ftype}{intent_in if const else ""} :: {p}(*)']
    if base.endswith('*'):
        return [f'{ftype} :: {p}']
    return [f'{ftype}{intent_in} :: {p}']


def f08_wrap(line, indent):
    """A free-form line, continued where it grows long."""
    lead = line[:len(line) - len(line.lstrip())]
    out, cur = [], lead
    for word in line.strip().split(' '):
        if cur.strip() and len(cur) + len(word) + 1 > 100:
            out.append(cur + ' &')
            cur = indent + '    ' + word
        else:
            cur = cur + ' ' + word if cur.strip() else cur + word
    out.append(cur)
    return out


def f08_routine(head, decls, callee, idecls, args, ierror):
    lines = f08_wrap('  ' + head, '  ')
    lines += ['    ' + d for d in decls]
    lines.append('    interface')
    lines += f08_wrap(f'      subroutine {callee}(' +
                      ', '.join('ierror' if a == 'ierr' else a for a in args) + ')', '      ')
    lines += ['        import', '        implicit none']
    lines += ['        ' + d for d in idecls]
    lines += [f'      end subroutine {callee}', '    end interface', '    integer :: ierr']
    lines += f08_wrap(f'    call {callee}(' + ', '.join(args) + ')', '    ')
    if ierror:
        lines.append(f'    if (present({ierror})) {ierror} = ierr')
    lines.append('  end ' + head.split('(')[0])
    return '\n'.join(lines)


def f08_module(fns):
    procs, skipped = [], []
    for ret, name, params in fns:
        if name in NOT_BOUND or name in [f[0] for f in F08_FUNCTIONS]:
            continue
        if name in F08_SPECIAL:
            procs.append(f08_routine(*F08_SPECIAL[name]))
            continue
        if ret != 'int' or params is None:
            skipped.append(name)
            continue
        try:
            decls = [d for c, p in params for d in f08_decl(name, c, p, True)]
            idecls = [d for c, p in params for d in f08_decl(name, c, p, False)]
        except KeyError:
            skipped.append(name)
            continue
        plist = [p for _, p in params]
        head = f'subroutine MPI_{name}(' + ', '.join(plist + ['ierror']) + ')'
        decls.append('integer, optional, intent(out) :: ierror')
        idecls.append('integer :: ierror')
        procs.append(f08_routine(head, decls, f'pmpi_{name.lower()}', idecls,
                                 plist + ['ierr'], 'ierror'))
    handles = sorted(HANDLES)
    out = ['! Generated by mpi/fortran/gen_fortran.py from include/mpi.h: the mpi_f08',
           '! module. Each routine calls the `use mpi` binding of the same name.',
           'module mpi_f08',
           '  use, intrinsic :: iso_c_binding, only: c_ptr',
           '  implicit none',
           "  include 'mpi_f08_ints.h'",
           '  integer, parameter :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8',
           '  integer, parameter :: MPI_INTEGER_KIND = 4']
    for h in handles:
        out += [f'  type, bind(C) :: {h}', '    integer :: MPI_VAL', f'  end type {h}']
    out += ['  type, bind(C) :: MPI_Status',
            '    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR',
            '    integer :: mbmpi_internal(MPI_STATUS_SIZE - 3)',
            '  end type MPI_Status',
            "  include 'mpi_f08_handles.h'",
            '  ! The sentinels are the common blocks of mpif.h: the bindings know',
            '  ! them by address.',
            '  integer :: MPI_BOTTOM, MPI_IN_PLACE, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY',
            '  integer :: MPI_ERRCODES_IGNORE(1)',
            '  type(MPI_Status) :: MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE(1)',
            '  common /mpi_fortran_bottom/ MPI_BOTTOM',
            '  common /mpi_fortran_in_place/ MPI_IN_PLACE',
            '  common /mpi_fortran_unweighted/ MPI_UNWEIGHTED',
            '  common /mpi_fortran_weights_empty/ MPI_WEIGHTS_EMPTY',
            '  common /mpi_fortran_errcodes_ignore/ MPI_ERRCODES_IGNORE',
            '  common /mpi_fortran_status_ignore/ MPI_STATUS_IGNORE',
            '  common /mpi_fortran_statuses_ignore/ MPI_STATUSES_IGNORE',
            '  ! The predefined attribute callbacks (mbmpi_fhand.c).',
            '  external :: MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, MPI_DUP_FN',
            '  external :: MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, MPI_COMM_DUP_FN',
            '  external :: MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, MPI_TYPE_DUP_FN',
            '  external :: MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, MPI_WIN_DUP_FN',
            '  interface operator(==)']
    out += [f'    module procedure mbmpi_eq_{h[4:].lower()}' for h in handles]
    out += ['  end interface', '  interface operator(/=)']
    out += [f'    module procedure mbmpi_ne_{h[4:].lower()}' for h in handles]
    out += ['  end interface', 'contains']
    for h in handles:
        k = h[4:].lower()
        for op, fn in (('==', 'eq'), ('/=', 'ne')):
            out += [f'  elemental logical function mbmpi_{fn}_{k}(a, b)',
                    f'    type({h}), intent(in) :: a, b',
                    f'    mbmpi_{fn}_{k} = a%MPI_VAL {op} b%MPI_VAL',
                    f'  end function mbmpi_{fn}_{k}']
    out += [f08_function(*f) for f in F08_FUNCTIONS]
    out += procs
    out.append('end module mpi_f08')
    if skipped:
        out.insert(2, '! Not in it: ' + ', '.join(skipped))
    return '\n'.join(out) + '\n'


def main():
    header, bindings_c, fconst_c, interfaces_h, f08_f90 = sys.argv[1:6]
    text, fns = parse(header)
    out = ['/* Generated by mpi/fortran/gen_fortran.py from include/mpi.h: the',
           ' * Fortran bindings that translate argument by argument. */',
           '#include "mbmpi_fort.h"', '']
    unknown = []
    for ret, name, params in fns:
        if name in HAND or name in NOT_BOUND:
            continue
        if ret != 'int' or params is None:
            unknown.append(f'{name}: returns {ret} or has variadic arguments')
            continue
        try:
            out.append(bind(name, params))
        except KeyError as e:
            unknown.append(str(e))
    if unknown:
        sys.exit('gen_fortran.py: no Fortran binding rule for\n  ' + '\n  '.join(unknown))
    with open(bindings_c, 'w') as f:
        f.write('\n'.join(out))
    with open(fconst_c, 'w') as f:
        f.write(fconst(text))
    with open(interfaces_h, 'w') as f:
        f.write(interfaces(fns))
    with open(f08_f90, 'w') as f:
        f.write(f08_module(fns))


if __name__ == '__main__':
    main()
