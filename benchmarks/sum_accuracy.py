"""Accuracy of DeviceArray.sum against NumPy's pairwise sum, both against math.fsum.

For each float dtype and size, `--trials` arrays of standard normals: the worst
and mean error in ulp of the exact sum (rounded to the dtype), and the worst
error relative to eps * sum|x|. Runs on the default device (lavapipe here).

    python3 benchmarks/sum_accuracy.py                 # 10 trials of 10^4, 10^5, 10^6
"""

import argparse
import math
import warnings

import numpy as np

import numba_vulkan as nv


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--seed", type=int, default=2)
    args = p.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(args.seed)
    print(f"device: {nv.get_device().info.name}; {args.trials} arrays of standard normals each")
    print("dtype    n        ulp of the exact sum: ours worst/mean | numpy worst/mean"
          "   error / (eps sum|x|): ours | numpy")
    for dtype in (np.float32, np.float64):
        eps = float(np.finfo(dtype).eps)
        for n in map(int, args.sizes.split(",")):
            rows = []
            for _ in range(args.trials):
                host = rng.standard_normal(n).astype(dtype)
                wide = host.astype(np.float64).tolist()
                exact = math.fsum(wide)
                ulp = float(np.spacing(dtype(abs(exact))))
                scale = eps * math.fsum(map(abs, wide))
                ours = abs(float(nv.to_device(host).sum()) - exact)
                theirs = abs(float(host.sum()) - exact)
                rows.append((ours / ulp, theirs / ulp, ours / scale, theirs / scale))
            r = np.array(rows)
            print(f"{np.dtype(dtype).name:8} {n:<8} {r[:, 0].max():9.2f} / {r[:, 0].mean():.2f}"
                  f"            | {r[:, 1].max():8.2f} / {r[:, 1].mean():.2f}"
                  f"        {r[:, 2].max():.1e} | {r[:, 3].max():.1e}")


if __name__ == "__main__":
    main()
