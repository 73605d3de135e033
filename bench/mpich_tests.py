#!/usr/bin/env python3
"""Runs MPICH's test suite (test/mpi of a checkout of github.com/pmodels/mpich,
made outside this tree: CI cannot fetch) against an MPI given by its mpicc and
launcher, so that issue 19's conformance bar -- the programs Open MPI and MPICH
pass, ours pass -- can be checked here with the same programs for all three.

The suite normally needs its own autotools configure; this driver replaces it
with what a run needs: a small mpitestconf.h (and dtpoolsconf.h) written into
the checkout, the suite's helpers (util/mtest*.c, dtypes.c, run_mpitests.c and
dtpools) compiled once per MPI, then for each directory's testlist every
program built and run at its process count with its arguments and
environment, passing when it exits 0 and prints "No Errors" (exiting 0 after
"Test Skipped" is reported as the program's own skip). Tests for
MPI-4 or later (mpiversion=) and those above --max-np ranks are skipped;
resultTest= lines (programs meant to abort or exit non-zero) are reported as
such, not judged. Prints one line per run and a count per result.

usage: bench/mpich_tests.py --src MPICH/test/mpi [--mpicc CC] [--mpirun RUN]
        [--out DIR] [--only REGEX] [--skip REGEX] [--max-np N] [DIR ...]
  e.g. bench/mpich_tests.py --src /opt/mpich/test/mpi --mpicc build/mpi/mpicc
        --mpirun build/mpi/mpirun comm
       (Open MPI: --mpicc mpicc.openmpi --mpirun 'mpirun.openmpi
        --oversubscribe --allow-run-as-root'; MPICH: mpicc.mpich, mpirun.mpich)
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys

DEFAULT_DIRS = "pt2pt datatype coll comm group attr errhan init".split()

CONF = """#define HAVE_UNISTD_H 1
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_PTHREAD_H 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INTEGER16 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_INT8_T 1
#define HAVE_INT16_T 1
#define HAVE_INT32_T 1
#define HAVE_INT64_T 1
#define HAVE__BOOL 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define USE_STRICT_MPI 1
#define THREAD_PACKAGE_NONE 0
#define THREAD_PACKAGE_POSIX 1
#define THREAD_PACKAGE_ARGOBOTS 2
#define THREAD_PACKAGE_QTHREADS 3
#define THREAD_PACKAGE_SOLARIS 4
#define THREAD_PACKAGE_WIN 5
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def prepare(src, mpicc, obj):
    """The generated headers the suite's configure would write, and its
    helpers compiled with this MPI."""
    inc = os.path.join(src, "include")
    for path, text in ((os.path.join(inc, "mpitestconf.h"), CONF),
                       (os.path.join(inc, "mtest_mpix.h"), ""),
                       (os.path.join(src, "dtpools", "dtpoolsconf.h"),
                        "#define HAVE_STDLIB_H 1\n#define HAVE_STRING_H 1\n")):
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(text)
    os.makedirs(obj, exist_ok=True)
    units = [("util/" + u + ".c", u) for u in ("mtest", "mtest_common", "dtypes", "mtest_thread",
                                              "run_mpitests")]
    dtp = os.path.join(src, "dtpools", "src")
    units += [("dtpools/src/" + f, "dtp_" + f[:-2]) for f in sorted(os.listdir(dtp))
              if f.endswith(".c")]
    for rel, name in units:
        o = os.path.join(obj, name + ".o")
        if os.path.exists(o):
            continue
        r = sh(shlex.split(mpicc) + ["-c", "-O1", "-w", "-I" + inc,
                                     "-I" + os.path.join(src, "dtpools", "include"),
                                     os.path.join(src, rel), "-o", o])
        if r.returncode:
            sys.exit(f"cannot build the suite's {rel} with {mpicc}:\n{r.stderr}")


def testlist(src, d):
    for n in ("testlist", "testlist.in"):
        p = os.path.join(src, d, n)
        if os.path.exists(p):
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, help="MPICH's test/mpi directory")
    ap.add_argument("--mpicc", default="build/mpi/mpicc")
    ap.add_argument("--mpirun", default="build/mpi/mpirun")
    ap.add_argument("--out", default="/tmp/mpich-tests")
    ap.add_argument("--only")
    ap.add_argument("--skip")
    ap.add_argument("--max-np", type=int, default=8)
    ap.add_argument("--time", type=int, default=90, help="seconds a run may take at most")
    ap.add_argument("dirs", nargs="*", default=DEFAULT_DIRS)
    a = ap.parse_args()
    # runs happen in the test's directory: paths given relative to here
    for k in ("mpicc", "mpirun"):
        w = shlex.split(getattr(a, k))
        if "/" in w[0]:
            w[0] = os.path.abspath(w[0])
        setattr(a, k, shlex.join(w))
    src = os.path.abspath(a.src)
    a.out = os.path.abspath(a.out)
    obj = os.path.join(a.out, "obj")
    prepare(src, a.mpicc, obj)
    counts = collections.Counter()
    for d in a.dirs:
        tl = testlist(src, d)
        if not tl:
            continue
        os.makedirs(os.path.join(a.out, d), exist_ok=True)
        for line in open(tl):
            f = line.split()
            # "@name@" lines are configure substitutions (MPIX, large tests)
            if not f or f[0].startswith("#") or f[0].startswith("@") or "/" in f[0]:
                continue
            name = f[0]
            np_ = int(f[1]) if len(f) > 1 and f[1].isdigit() else 1
            kv = [x.split("=", 1) for x in f[2:] if "=" in x]
            opts = dict(kv)
            key = f"{d}/{name} {np_}" + ("".join(" " + x for x in f[2:]))
            if "mpiversion" in opts and float(opts["mpiversion"]) > 3.1:
                continue
            if opts.get("strict", "").lower() == "false" or np_ > a.max_np:
                continue
            if (a.only and not re.search(a.only, f"{d}/{name}")) or \
               (a.skip and re.search(a.skip, f"{d}/{name}")):
                continue
            exe = os.path.join(a.out, d, name)
            c = os.path.join(src, d, name + ".c")
            if not os.path.exists(c):
                continue
            if not os.path.exists(exe):
                text = open(c, errors="replace").read()
                extra = []
                if "dtpools.h" in text or "mtest_dtp.h" in text:
                    extra += ["-I" + os.path.join(src, "dtpools", "include")]
                    extra += [os.path.join(obj, o) for o in sorted(os.listdir(obj))
                              if o.startswith("dtp_")]
                if "int run(const char" in text:
                    extra.append(os.path.join(obj, "run_mpitests.o"))
                r = sh(shlex.split(a.mpicc) + ["-w", "-O1", "-I" + os.path.join(src, "include"), c] +
                       [os.path.join(obj, o + ".o") for o in ("mtest", "mtest_common", "dtypes",
                                                             "mtest_thread")] +
                       extra + ["-lpthread", "-lm", "-o", exe])
                if r.returncode:
                    open(exe + ".cerr", "w").write(r.stderr)
                    counts["build failed"] += 1
                    print(key, "BUILD-FAILED", flush=True)
                    continue
            env = dict(os.environ)
            for k, v in kv:
                if k == "env" and "=" in v:
                    ek, ev = v.split("=", 1)
                    env[ek] = ev
            args = [v for k, v in kv if k == "arg"]
            limit = min(int(opts.get("timeLimit", a.time)), 3 * a.time)
            r = sh(["timeout", "-k", "5", str(limit)] + shlex.split(a.mpirun) +
                   ["-np", str(np_), exe] + args, env=env, cwd=os.path.join(src, d))
            out = r.stdout + r.stderr
            open(f"{exe}.np{np_}.log", "w").write(out)
            if "resultTest" in opts:
                st = "NOT-JUDGED"
            elif r.returncode in (124, 137):
                st = "TIMEOUT"
            elif r.returncode == 0 and "no errors" in out.lower():
                st = "PASS"
            elif r.returncode == 0 and "test skipped" in out.lower():
                # the program's own check: an MPI-4 call asked for by an
                # argument (sendrecv3 -isendrecv) under an MPI-3.1 library
                st = "SKIPPED-BY-TEST"
            else:
                st = "FAIL"
            counts[st] += 1
            print(key, st, flush=True)
    print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
