"""Heat equation: explicit diffusion of a hot square on a 2-d plate, stepped on the device
and checked against the same steps in NumPy (bit for bit: the same float32 operations in
the same order).

Run: python3 examples/heat_equation.py [n steps] [--png PATH]
"""

import sys

import numpy as np

import numba_vulkan as nv


@nv.jit
def step(u, alpha, out):
    """One explicit Euler step of du/dt = alpha * laplacian(u); the border stays at 0."""
    i = nv.global_id(1)
    j = nv.global_id(0)
    n, m = u.shape
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = u[i, j]
        else:
            lap = u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - np.float32(4) * u[i, j]
            out[i, j] = u[i, j] + alpha * lap


def numpy_step(u, alpha):
    out = u.copy()
    c = u[1:-1, 1:-1]
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - np.float32(4) * c
    out[1:-1, 1:-1] = c + alpha * lap
    return out


def initial(n):
    u = np.zeros((n, n), np.float32)
    u[n // 4 : n // 2, n // 4 : n // 2] = 100.0  # a hot square
    u[5 * n // 8 : 3 * n // 4, n // 2 : 7 * n // 8] = 60.0  # a warm bar
    return u


def main(n=128, steps=200, png=None):
    alpha = np.float32(0.2)  # stable for alpha <= 0.25
    u0 = initial(n)
    a, b = nv.to_device(u0), nv.device_array_like(u0)
    for _ in range(steps):
        step.forall((n, n))(a, alpha, b)  # device arrays: no copies between steps
        a, b = b, a
    result = a.copy_to_host()
    want = u0
    for _ in range(steps):
        want = numpy_step(want, alpha)
    ok = np.array_equal(result, want)
    print(f"heat equation on {nv.get_device().info.name}: {n}x{n}, {steps} steps, "
          f"max temperature {result.max():.3f}, matches NumPy: {ok}")  # fmt: skip
    if png:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
        for ax, img, title in ((axes[0], u0, "t = 0"), (axes[1], result, f"after {steps} steps")):
            im = ax.imshow(img, cmap="inferno", vmin=0, vmax=100)
            ax.set_title(title)
            ax.axis("off")
        fig.colorbar(im, ax=axes, shrink=0.8, label="temperature")
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
