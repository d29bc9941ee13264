"""N-body: gravitating particles stepped with leapfrog, the forces computed on the device
(one invocation per body, all pairs), checked against the same computation in NumPy.

Run: python3 examples/nbody.py [n steps] [--png PATH]
"""

import math
import sys

import numpy as np

import numba_vulkan as nv

SOFTENING = 0.05


@nv.jit
def accelerations(pos, mass, acc):
    """acc[i] = sum over j of m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2)."""
    i = nv.global_id(0)
    if i < pos.shape[0]:
        ax = 0.0
        ay = 0.0
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            r2 = dx * dx + dy * dy + SOFTENING * SOFTENING
            inv = mass[j] / (r2 * math.sqrt(r2))
            ax += dx * inv
            ay += dy * inv
        acc[i, 0] = ax
        acc[i, 1] = ay


@nv.jit
def kick_drift(pos, vel, acc, dt):
    """Leapfrog: half a kick, then a drift."""
    i = nv.global_id(0)
    if i < pos.shape[0]:
        for k in range(2):
            vel[i, k] += 0.5 * dt * acc[i, k]
            pos[i, k] += dt * vel[i, k]


@nv.jit
def kick(vel, acc, dt):
    i = nv.global_id(0)
    if i < vel.shape[0]:
        for k in range(2):
            vel[i, k] += 0.5 * dt * acc[i, k]


def numpy_accelerations(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d**2).sum(axis=2) + SOFTENING**2
    return (d * (mass[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(axis=1)


def initial(n, seed=1):
    """A rotating disc of particles around a heavy centre."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.3, 1.0, n)
    theta = rng.uniform(0, 2 * np.pi, n)
    pos = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1)
    mass = np.full(n, 1.0 / n)
    mass[0] = 1.0
    pos[0] = 0.0
    speed = np.sqrt(1.0 / r)
    vel = np.stack([-speed * np.sin(theta), speed * np.cos(theta)], axis=1)
    vel[0] = 0.0
    return pos, vel, mass


def main(n=256, steps=100, png=None):
    if n > 65535:
        raise SystemExit("n must stay below lavapipe's 65,535 loop iterations per invocation")
    dt = 0.002
    pos0, vel0, mass = initial(n)
    pos, vel, m = nv.to_device(pos0), nv.to_device(vel0), nv.to_device(mass)
    acc = nv.device_array((n, 2), np.float64)
    accelerations.forall(n)(pos, m, acc)
    # The same forces on the host: the device's sums run in another order, so they agree
    # to rounding, not bit for bit.
    ok = bool(np.allclose(acc.copy_to_host(), numpy_accelerations(pos0, mass), rtol=1e-10,
                          atol=1e-12))  # fmt: skip
    track = [pos0.copy()]
    for s in range(steps):
        kick_drift.forall(n)(pos, vel, acc, dt)
        accelerations.forall(n)(pos, m, acc)
        kick.forall(n)(vel, acc, dt)
        if png and s % 5 == 4:
            track.append(pos.copy_to_host())
    p = pos.copy_to_host()
    # The same integration on the host, step by step.
    hp, hv = pos0.copy(), vel0.copy()
    ha = numpy_accelerations(hp, mass)
    for _ in range(steps):
        hv += 0.5 * dt * ha
        hp += dt * hv
        ha = numpy_accelerations(hp, mass)
        hv += 0.5 * dt * ha
    ok = ok and bool(np.allclose(p, hp, rtol=1e-8, atol=1e-10))
    print(f"n-body on {nv.get_device().info.name}: {n} bodies, {steps} steps, "
          f"matches NumPy: {ok}")  # fmt: skip
    if png:
        import matplotlib.pyplot as plt

        t = np.array(track)
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        for k in range(1, n, max(1, n // 48)):
            ax.plot(t[:, k, 0], t[:, k, 1], lw=0.8)
        ax.scatter(p[1:, 0], p[1:, 1], s=2, c="k")
        ax.set_aspect("equal")
        ax.set_title(f"{n} bodies, {steps} leapfrog steps")
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
