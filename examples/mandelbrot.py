"""Mandelbrot set: iteration counts computed on the default Vulkan device,
printed as ASCII art.

Run: python3 examples/mandelbrot.py [width height max_iter] [--png PATH]
(--png also saves the iteration counts as a picture; it needs matplotlib)
"""

import sys

import numpy as np

import numba_vulkan as nv


@nv.jit
def mandelbrot(xs, ys, max_iter, escape, counts):
    i = nv.global_id(0)  # row
    j = nv.global_id(1)  # column
    if i < counts.shape[0] and j < counts.shape[1]:
        x0 = xs[j]
        y0 = ys[i]
        zr = x0 - x0  # 0 in the coordinates' type (float32: no float64 needed)
        zi = zr
        n = 0
        while n < max_iter:
            zr2 = zr * zr
            zi2 = zi * zi
            if zr2 + zi2 > escape:
                break
            zi = (zr + zr) * zi + y0
            zr = zr2 - zi2 + x0
            n += 1
        counts[i, j] = n


SHADES = " .:-=+*#%@"


def main(width=78, height=32, max_iter=100, png=None):
    xs = np.linspace(-2.2, 0.8, width).astype(np.float32)
    ys = np.linspace(-1.2, 1.2, height).astype(np.float32)
    counts = np.zeros((height, width), np.int32)
    mandelbrot.forall(counts.shape)(xs, ys, max_iter, np.float32(4.0), counts)
    for row in counts:
        print(
            "".join(
                SHADES[min(int(c) * len(SHADES) // max_iter, len(SHADES) - 1)]
                if c < max_iter
                else "@"
                for c in row
            )
        )
    print(
        f"computed on {nv.get_device().info.name} "
        f"({width}x{height}, max_iter={max_iter}, {int((counts == max_iter).sum())} points inside)"
    )
    if png:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(width / 100, height / 100), dpi=100)
        ax.imshow(np.log1p(counts), cmap="twilight_shifted", extent=(-2.2, 0.8, -1.2, 1.2))
        ax.axis("off")
        fig.savefig(png, dpi=100, bbox_inches="tight", pad_inches=0)


if __name__ == "__main__":
    argv = sys.argv[1:]
    png = None
    if "--png" in argv:
        k = argv.index("--png")
        png = argv[k + 1]
        del argv[k : k + 2]
    main(*[int(a) for a in argv[:3]], png=png)
