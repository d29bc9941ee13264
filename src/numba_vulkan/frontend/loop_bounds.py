"""A static upper bound on the loop iterations of a kernel, per invocation.

Mesa 22's lavapipe ends a loop nest after 65,535 iterations per invocation,
silently (DeviceInfo.loop_iteration_limit, runtime/probes.py). The
dispatcher warns about kernels that could pass such a limit; this module says
which ones cannot: those whose every loop is a ``for`` over ``range`` with
constant arguments. The bound is the sum, over all loops, of a loop's trip
count times those of the loops around it: an over-estimate where the driver
counts per loop nest, never an under-estimate.
"""

from numba.core import ir
from numba.core.analysis import compute_cfg_from_blocks


def _static_int(func_ir, var):
    try:
        defn = func_ir.get_definition(var)
    except KeyError:  # several definitions: not a constant
        return None
    if isinstance(defn, (ir.Const, ir.Global, ir.FreeVar)):
        value = defn.value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _range_trips(func_ir, header):
    """The trip count of the range loop whose header is `header`, or None."""
    for stmt in header.body:
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
            continue
        if stmt.value.op != "iternext":
            continue
        try:
            getiter = func_ir.get_definition(stmt.value.value)
            call = func_ir.get_definition(getiter.value)
            func = func_ir.get_definition(call.func)
        except (KeyError, AttributeError):
            return None
        if getattr(func, "value", None) is not range or call.kws or call.vararg:
            return None
        args = [_static_int(func_ir, a) for a in call.args]
        if not args or any(a is None for a in args):
            return None
        try:
            return len(range(*args))
        except (TypeError, ValueError, OverflowError):
            return None
    return None


def _acyclic(blocks):
    """True if every edge goes to a higher label, so that there is no loop (a cycle of
    integer labels has an edge to a lower or equal one); False if unsure. Cheaper than the
    CFG for the loop-free device functions each call site asks about."""
    for label, block in blocks.items():
        try:
            targets = block.body[-1].get_targets()
        except (IndexError, AttributeError, NotImplementedError):  # no terminator
            return False
        for target in targets:
            if target <= label or target not in blocks:
                return False
    return True


def static_iterations(func_ir):
    """An upper bound on the loop iterations of one invocation, or None if there is none.

    Returns 0 for a kernel without loops.
    """
    if _acyclic(func_ir.blocks):
        return 0
    try:
        loops = compute_cfg_from_blocks(func_ir.blocks).loops()
    except Exception:  # an IR the analysis does not take: assume the worst
        return None
    trips = {}
    for header in loops:
        trips[header] = _range_trips(func_ir, func_ir.blocks[header])
        if trips[header] is None:
            return None
    total = 0
    for header, loop in loops.items():
        count = trips[header]
        for other, outer in loops.items():
            if other != header and header in outer.body:
                count *= trips[other]
        total += count
    return total
