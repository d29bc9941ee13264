"""Image blur: a separable Gaussian blur (a horizontal pass, then a vertical one, edges
clamped) of a generated test image on the device, checked against NumPy.

Run: python3 examples/image_blur.py [size radius] [--png PATH]
"""

import sys

import numpy as np

import numba_vulkan as nv


def gaussian_weights(radius):
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    w = np.exp(-0.5 * (x / (radius / 2.0)) ** 2)
    return (w / w.sum()).astype(np.float32)


def make_blur(radius):
    """The two passes for one radius: the weights are a global array, frozen into the kernel
    as constants when it is compiled."""
    weights = gaussian_weights(radius)

    @nv.jit
    def horizontal(img, out):
        i = nv.global_id(1)
        j = nv.global_id(0)
        h, w = img.shape
        if i < h and j < w:
            s = np.float32(0)
            for k in range(-radius, radius + 1):
                jj = min(max(j + k, 0), w - 1)
                s += weights[k + radius] * img[i, jj]
            out[i, j] = s

    @nv.jit
    def vertical(img, out):
        i = nv.global_id(1)
        j = nv.global_id(0)
        h, w = img.shape
        if i < h and j < w:
            s = np.float32(0)
            for k in range(-radius, radius + 1):
                ii = min(max(i + k, 0), h - 1)
                s += weights[k + radius] * img[ii, j]
            out[i, j] = s

    return weights, horizontal, vertical


def numpy_blur(img, weights):
    radius = len(weights) // 2
    h, w = img.shape
    tmp = np.zeros_like(img)
    for k in range(-radius, radius + 1):  # same order of the sums as the kernels
        tmp += weights[k + radius] * img[:, np.clip(np.arange(w) + k, 0, w - 1)]
    out = np.zeros_like(img)
    for k in range(-radius, radius + 1):
        out += weights[k + radius] * tmp[np.clip(np.arange(h) + k, 0, h - 1), :]
    return out


def test_image(size):
    """Stripes, a checkerboard and discs: edges of every direction to blur."""
    y, x = np.mgrid[0:size, 0:size] / size
    img = ((x * 12).astype(int) % 2) * 0.5
    img[size // 2 :, : size // 2] = (((x * 16).astype(int) + (y * 16).astype(int)) % 2)[
        size // 2 :, : size // 2
    ]
    for cx, cy, r in ((0.7, 0.3, 0.15), (0.75, 0.75, 0.1)):
        img[(x - cx) ** 2 + (y - cy) ** 2 < r * r] = 1.0
    return img.astype(np.float32)


def main(size=256, radius=6, png=None):
    img = test_image(size)
    weights, horizontal, vertical = make_blur(radius)
    d_img = nv.to_device(img)
    tmp, out = nv.device_array_like(img), nv.device_array_like(img)
    horizontal.forall((size, size))(d_img, tmp)
    vertical.forall((size, size))(tmp, out)
    result = out.copy_to_host()
    ok = bool(np.array_equal(result, numpy_blur(img, weights)))
    print(f"image blur on {nv.get_device().info.name}: {size}x{size}, radius {radius}, "
          f"matches NumPy: {ok}")  # fmt: skip
    if png:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(8, 4))
        for ax, im, title in ((axes[0], img, "input"), (axes[1], result, f"blurred, r={radius}")):
            ax.imshow(im, cmap="gray", vmin=0, vmax=1)
            ax.set_title(title)
            ax.axis("off")
        fig.savefig(png, dpi=100, bbox_inches="tight")
    return 0 if ok else 1


if __name__ == "__main__":
    argv = sys.argv[1:]
    png = None
    if "--png" in argv:
        k = argv.index("--png")
        png = argv[k + 1]
        del argv[k : k + 2]
    sys.exit(main(*[int(a) for a in argv[:2]], png=png))
