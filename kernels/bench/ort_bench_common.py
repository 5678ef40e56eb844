"""Shared by the CPU benchmarks against ONNX Runtime (cpu_vs_ort.py,
cpu_model_vs_original.py): session options, the clock and interleaved rounds."""
import os
import time


def session_options(ort, lib, threads):
    """ORT session options with attnopt's custom ops, threads for ORT's intra-op
    pool; ATTNOPT_NUM_THREADS must already be set before the library loads."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.register_custom_ops_library(os.path.abspath(lib))
    return so


def clock(wall):
    """Process CPU time by default: other jobs share the cores, and CPU time only
    counts while this process runs."""
    return time.perf_counter if wall else time.process_time


def describe(ort, threads, wall):
    return (f"onnxruntime {ort.__version__}, threads {threads}, {'wall' if wall else 'process CPU'} time, "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def interleaved(sides, rounds, tick):
    """sides: name -> zero-argument callable. Runs every side once per round,
    alternating the order; returns name -> list of seconds."""
    names = list(sides)
    times = {k: [] for k in names}
    for r in range(rounds):
        for k in (names if r % 2 == 0 else names[::-1]):
            t0 = tick()
            sides[k]()
            times[k].append(tick() - t0)
    return times
