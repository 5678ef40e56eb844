#!/usr/bin/env python3
"""CPU regression benchmark: the CPU library of the working tree (B) against
the one of a given commit (A, default: the merge base of HEAD and main) on
the fixed shape table of bench/cpu_ab_driver.cpp, in alternating processes.

Each round runs every shape once per side, each measurement a fresh process
(bench/cpu_ab_driver, built from the working tree, dlopens the side's
libattnopt_cpu.so), alternating which side goes first. Prints, per shape,
min and median per side and the ratios B/A of the minima and of the medians
(below 1: B is faster), and whether the outputs' checksums agree. Exits 0
whatever the timings are; 1 when B cannot be built or fails; A's commit not
being available (a shallow clone) is reported and skipped.

  python3 kernels/bench/cpu_ab.py [--base COMMIT] [--b COMMIT] [--rounds 5]
                                  [--quick] [--threads 1] [--wall] [--shape NAME] [--pair]

--pair measures both libraries in one process, interleaved (what a commit
quotes), with B against a copy of itself beside each ratio as its noise band.

--b COMMIT measures that commit instead of the working tree (to A/B two old
commits); --quick runs the table's small sizes (CI, about a minute).
A's library is built once per commit under --cache (default kernels/build/ab/, kept).
Standard library only; needs git, cmake and a C++ compiler.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import io

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.dirname(HERE)
ROOT = os.path.dirname(KERNELS)
JOBS = "2"


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True, text=True).stdout.strip()


def merge_base():
    """The merge base of HEAD and main; on main itself (CI's clone), where
    that is HEAD and an A/B would measure the tree against itself, the parent
    of the last commit that changed the kernels' code: that change is B."""
    base = None
    for ref in ("main", "origin/main"):
        try:
            base = git("merge-base", "HEAD", ref)
            break
        except subprocess.CalledProcessError:
            continue
    head = git("rev-parse", "HEAD")
    if base is None or base == head:
        last = git("log", "-1", "--format=%H", "--", "kernels/src", "kernels/include")
        if last:
            try:
                return git("rev-parse", last + "^")
            except subprocess.CalledProcessError:
                pass
        return head
    return base


def cmake_build(src, build, targets, tests):
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DATTNOPT_CUDA=OFF",
                        f"-DATTNOPT_BUILD_TESTS={'ON' if tests else 'OFF'}", "-DORT_INCLUDE_DIR=/nonexistent"],
                       check=True, capture_output=True, text=True)
    subprocess.run(["cmake", "--build", build, "-j", JOBS, "--target", *targets], check=True, capture_output=True,
                   text=True)


def commit_library(sha, cache=os.path.join(KERNELS, "build", "ab")):
    """Builds libattnopt_cpu.so of commit sha (its kernels/ only) under cache, once."""
    top = os.path.join(cache, sha[:12])
    lib = os.path.join(top, "build", "libattnopt_cpu.so")
    if os.path.exists(lib):
        return lib
    src = os.path.join(top, "src")
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(src)
    data = subprocess.run(["git", "-C", ROOT, "archive", sha, "kernels"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        t.extractall(src)
    cmake_build(os.path.join(src, "kernels"), os.path.join(top, "build"), ["attnopt_cpu_shared"], tests=False)
    return lib


def measure(driver, lib, shape, a):
    cmd = [driver, lib, shape, "--threads", str(a.threads)] + (["--quick"] if a.quick else []) + (
        ["--wall"] if a.wall else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="commit of side A (default: merge base of HEAD and main)")
    ap.add_argument("--b", help="commit of side B (default: the working tree)")
    ap.add_argument("--build", default=os.path.join(KERNELS, "build", "cpu"),
                    help="build folder of the working tree (configured here when missing)")
    ap.add_argument("--cache", default=os.path.join(KERNELS, "build", "ab"),
                    help="where the commits' libraries are built and kept")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--wall", action="store_true", help="wall time instead of process CPU time")
    ap.add_argument("--shape", action="append", help="a shape name (cpu_ab_driver --list); default: all")
    ap.add_argument("--pair", action="store_true",
                    help="both libraries in one process, interleaved (cpu_ab_driver --pair), with B against a copy "
                         "of itself beside it: the noise band a ratio must leave to mean anything")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be >= 1")

    try:
        cmake_build(KERNELS, a.build, ["attnopt_cpu_shared", "cpu_ab_driver"], tests=True)
    except subprocess.CalledProcessError as e:
        print(f"cpu_ab: building the working tree failed:\n{e.stdout}{e.stderr}", file=sys.stderr)
        return 1
    driver = os.path.join(a.build, "cpu_ab_driver")
    try:
        base = git("rev-parse", a.base or merge_base())
        lib_a = commit_library(base, a.cache)
        lib_b = commit_library(git("rev-parse", a.b), a.cache) if a.b else os.path.join(a.build, "libattnopt_cpu.so")
    except subprocess.CalledProcessError as e:
        print(f"cpu_ab: skipped: a commit could not be built ({' '.join(e.cmd[:4])} ...): {e.stderr}".strip())
        return 0
    shapes = a.shape or subprocess.run([driver, "--list"], check=True, capture_output=True, text=True).stdout.split("\n")
    shapes = [s for s in shapes if s]
    b_name = git("rev-parse", "--short", a.b) if a.b else "working tree"
    dirty = " (uncommitted changes)" if not a.b and git("status", "--porcelain", "--untracked-files=no") else ""
    how = (f"{max(a.rounds, 3)} pairs in one process, interleaved" if a.pair
           else f"{a.rounds} rounds, order alternating, one process per measurement")
    print(f"A = {base[:10]}, B = {b_name}{dirty}; {how}; threads {a.threads}, {'wall' if a.wall else 'process CPU'} time"
          f"{', --quick sizes' if a.quick else ''}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if a.pair:
        return pair_table(driver, lib_a, lib_b, shapes, a)
    print("| shape | A min / median ms | B min / median ms | B/A min | B/A median | outputs |")
    print("|---|---:|---:|---:|---:|---|")
    failed = False
    for shape in shapes:
        times = {"A": [], "B": []}
        sums = {}
        try:
            for r in range(a.rounds):
                for side in (("A", "B") if r % 2 == 0 else ("B", "A")):
                    t, s = measure(driver, lib_a if side == "A" else lib_b, shape, a)
                    times[side].append(t)
                    sums[side] = s
        except subprocess.CalledProcessError as e:
            print(f"| {shape} | failed: {e.stderr.strip()} | | | | |", flush=True)
            failed = True
            continue
        ta, tb = times["A"], times["B"]
        rel = abs(sums["A"] - sums["B"]) / max(abs(sums["A"]), 1e-30)
        same = "same" if rel < 1e-4 else f"checksums differ by {rel:.1e}"
        print(f"| {shape} | {min(ta) * 1e3:.4g} / {statistics.median(ta) * 1e3:.4g} | "
              f"{min(tb) * 1e3:.4g} / {statistics.median(tb) * 1e3:.4g} | {min(tb) / min(ta):.3f} | "
              f"{statistics.median(tb) / statistics.median(ta):.3f} | {same} |", flush=True)
    return 1 if failed else 0


def pair_table(driver, lib_a, lib_b, shapes, a):
    """Per shape: B/A in one process, interleaved, and B against a copy of
    itself (a second dlopen needs a second file) in the same way."""
    copy = lib_b + ".self.so"
    shutil.copyfile(lib_b, copy)
    print("| shape | B/A pairs median (quartiles) | B/B' band (quartiles) | outputs |")
    print("|---|---|---|---|")
    failed = False
    for shape in shapes:
        row = []
        for other in (lib_b, copy):
            cmd = [driver, lib_a if other == lib_b else lib_b, shape, "--pair", other, "--samples", str(max(a.rounds, 3)),
                   "--threads", str(a.threads)] + (["--quick"] if a.quick else []) + (["--wall"] if a.wall else [])
            p = subprocess.run(cmd, capture_output=True, text=True)
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr.strip()
            if p.returncode != 0:
                failed = True
            row.append(line)
        ratio = lambda s: s.split("B/A pairs median ")[1].split(",")[0] if "B/A pairs median " in s else s
        same = "same" if all("same output yes" in r for r in row) else "DIFFERENT"
        print(f"| {shape} | {ratio(row[0])}) | {ratio(row[1])}) | {same} |", flush=True)
        failed = failed or same != "same"
    os.remove(copy)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
