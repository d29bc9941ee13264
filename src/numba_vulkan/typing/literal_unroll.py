"""``literal_unroll`` with one loop body per item for items that are not plain values.

Numba's MixedContainerUnroller versions a ``for x in literal_unroll(tup)`` body once per
item *type*: the version for type T starts with ``x = typed_getitem(tup, T, i)`` and runs
for every index i whose item has type T. Where T is a scalar the front end chooses the
value among those items at run time (frontend/exprs.py, typed_getitem). Arrays, tuples and
other non-scalar items are compile-time objects or trees of values in our kernels (a
global array is a buffer of its own), which no run-time index can choose among. So here
each such item gets a version of its own, and ``x = tup[k]`` for its constant index k:
a tuple of five float64 arrays (numba-cuda's test_array_reductions) gives five bodies.
Scalars keep Numba's grouping by type.

LiteralUnroll below is Numba's pass of that name with this unroller in its sub-pipeline.
"""

from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.typed_passes import PartialTypeInference
from numba.core.untyped_passes import (
    GenericRewrites,
    IterLoopCanonicalization,
    MixedContainerUnroller,
    RewriteSemanticConstants,
    TransformLiteralUnrollConstListToTuple,
)
from numba.misc.special import literal_unroll


class _Item:
    """The switch key of one non-scalar tuple item: its own version of the loop body."""

    def __init__(self, ty, index):
        self.ty, self.index = ty, index

    def __repr__(self):
        return f"item {self.index} ({self.ty})"


def _grouped_by_type(ty):
    return isinstance(ty, (types.Number, types.Boolean, types.Literal)) or ty == types.none


@register_pass(mutates_CFG=True, analysis_only=False)
class ItemUnroller(MixedContainerUnroller):
    """MixedContainerUnroller, with one version per item for items not grouped by type."""

    _name = "numba_vulkan_item_unroller"

    def analyse_tuple(self, tup):
        data = {}
        for i, ty in enumerate(tup):
            key = ty if _grouped_by_type(ty) else _Item(ty, i)
            data.setdefault(key, []).append(i)
        return data

    def inject_loop_body(self, switch_ir, loop_ir, caller_max_label, dont_replace, switch_data):
        switch_ir = super().inject_loop_body(
            switch_ir, loop_ir, caller_max_label, dont_replace, switch_data
        )
        for blk in switch_ir.blocks.values():
            for stmt in blk.body:
                value = getattr(stmt, "value", None)
                if (
                    isinstance(stmt, ir.Assign)
                    and isinstance(value, ir.Expr)
                    and value.op == "typed_getitem"
                    and isinstance(value.dtype, _Item)
                ):
                    stmt.value = ir.Expr.static_getitem(
                        value.value, value.dtype.index, None, value.loc
                    )
        return switch_ir


@register_pass(mutates_CFG=True, analysis_only=False)
class LiteralUnroll(FunctionPass):
    """Numba's LiteralUnroll pass, unrolling with ItemUnroller."""

    _name = "numba_vulkan_literal_unroll"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        if not any(
            isinstance(stmt.value, (ir.Global, ir.FreeVar)) and stmt.value.value is literal_unroll
            for blk in state.func_ir.blocks.values()
            for stmt in blk.find_insts(ir.Assign)
        ):
            return False
        pm = PassManager("numba_vulkan_literal_unroll")
        pm.add_pass(PartialTypeInference, "performs partial type inference")
        pm.add_pass(TransformLiteralUnrollConstListToTuple, "switch const list for tuples")
        pm.add_pass(PartialTypeInference, "performs partial type inference")
        pm.add_pass(IterLoopCanonicalization, "switch iter loops for range driven loops")
        pm.add_pass(RewriteSemanticConstants, "rewrite semantic constants")
        pm.add_pass(ItemUnroller, "unroll with one version per non-scalar item")
        pm.add_pass(GenericRewrites, "Generic Rewrites")
        pm.add_pass(RewriteSemanticConstants, "rewrite semantic constants")
        pm.finalize()
        pm.run(state)
        return True
