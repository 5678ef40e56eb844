"""A/B of two builds of libattnopt_ort.so in ONNX Runtime on one model.

Each measurement is a fresh process (so the two libraries never share one):
it registers the library, warms up twice, and prints the fastest of 5 runs.
Rounds alternate which side goes first. Prints min and median per side and
the ratios B/A.

Usage: python ort_lib_ab.py LIB_A LIB_B MODEL [ROUNDS]   (onnxruntime, numpy)
"""
import statistics
import subprocess
import sys
import time


def one(lib, model):
    import numpy as np
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.register_custom_ops_library(lib)
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if i.type == "tensor(bool)":
            feed[i.name] = rng.random(shape) > 0.2
        else:
            dt = np.float16 if i.type == "tensor(float16)" else np.float32
            feed[i.name] = rng.standard_normal(shape).astype(dt)
    for _ in range(2):
        s.run(None, feed)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        s.run(None, feed)
        best = min(best, time.perf_counter() - t)
    print(best)


def main():
    if sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3])
        return
    a, b, model = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    times = {"A": [], "B": []}
    for r in range(rounds):
        order = [("A", a), ("B", b)] if r % 2 == 0 else [("B", b), ("A", a)]
        for side, lib in order:
            out = subprocess.run([sys.executable, __file__, "--one", lib, model], check=True,
                                 capture_output=True, text=True).stdout
            times[side].append(float(out))
    for side in "AB":
        print(f"{side}: min {min(times[side]):.4f} s, median {statistics.median(times[side]):.4f} s")
    print(f"B/A: min {min(times['B']) / min(times['A']):.3f}, "
          f"median {statistics.median(times['B']) / statistics.median(times['A']):.3f}")


if __name__ == "__main__":
    main()
