"""Numba's typing errors, said in our words (issue 6, item 8).

A kernel that Numba cannot type fails in type inference with a TypingError
whose text is about Numba's internals (templates, candidate implementations,
"During: ..." contexts). Users of numba_vulkan get a VulkanUnsupportedError
instead: the construct, the source line, and what to do where we know it.
The original error stays available as the ``numba_error`` attribute.
"""

import re

from numba.core.errors import TypingError

from ..errors import VulkanTypingError, VulkanUnsupportedError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_UNKNOWN_ATTR = re.compile(r"Unknown attribute '([^']+)' of type (.+?)(?:\n|$)")
_MODULE = re.compile(r"Module\(<module '([^']+)'")
_NO_IMPL = re.compile(r"No implementation of function (.+?) found for signature:\s*>>> ([^\n]+)")
_UNTYPED_GLOBAL = re.compile(r"Untyped global name '([^']+)':\s*([^\n]*)")
_CANNOT_DETERMINE = re.compile(r"Cannot determine Numba type of (<[^>]+>|[^\n]+)")
_INVALID_USE = re.compile(r"Invalid use of (.+?) with parameters \(([^\n]*)\)")
_NOT_TYPED = re.compile(r"Use of unsupported NumPy function '([^']+)'")
_OPCODE = re.compile(r"Use of unsupported opcode \(([A-Z_]+)\)")
_OTHER_TARGET = re.compile(
    r"Function resolution cannot find any matches for function '<function ([^ ]+) at"
)
_ILLEGAL_DEL = re.compile(r"Illegal IR, del found")
_UNPACK_LENGTH = re.compile(r"wrong tuple length for [^:]+: ', 'expected (\d+), got (\d+)")
_SETATTR = re.compile(r"Cannot resolve setattr: \((.+?)\)\.(\w+) =")
_YIELD_CLOSURE = re.compile(r"The use of yield in a closure is unsupported")
_OPCODES = {
    "IMPORT_NAME": "import statements",
    "IMPORT_FROM": "import statements",
    "STORE_GLOBAL": "assigning a global variable",
    "DELETE_GLOBAL": "deleting a global variable",
    "YIELD_VALUE": "generators (yield)",
    "SETUP_WITH": "with statements",
    "BEFORE_WITH": "with statements",
}


def plain(text):
    """`text` without terminal colours."""
    return _ANSI.sub("", text)


def _first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("During:", "File ")):
            return line
    return "this construct"


_OURS = re.compile(r"([^\n]*? is not supported in Vulkan kernels[^\n]*)")
# The checks of nv.matrix's templates (typing/matrix.py), which name the problem themselves
_MATRIX = re.compile(r"(nv\.matrix\.\w+\(.*?\): [^\n]*)")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


#: numba.cuda's names for the ids, and what they are here.
_CUDA_NAMES = {
    "threadIdx": "nv.local_id(axis)", "blockIdx": "nv.group_id(axis)",
    "blockDim": "nv.local_size(axis)", "gridDim": "nv.num_groups(axis)",
    "cuda": "the numba.cuda layer (from numba_vulkan import cuda)",
}  # fmt: skip
_NAME_ERROR = re.compile(r"NameError: name '([^']+)' is not defined")


def describe(error):
    """What a Numba TypingError (or typing-time error) is about, in our words."""
    text = plain(getattr(error, "msg", None) or str(error))
    m = _NAME_ERROR.search(text) or _NAME_ERROR.search(plain(str(error)))
    if m:  # as numba.njit says it, with numba.cuda's names pointed to ours
        name = m.group(1)
        hint = _CUDA_NAMES.get(name)
        return f"NameError: name '{name}' is not defined" + (
            f" (numba.cuda's {name} is {hint} in numba_vulkan; or write the kernel with "
            "`from numba_vulkan import cuda`, whose cuda.threadIdx.x works as in numba.cuda)"
            if hint else "")  # fmt: skip
    m = _OURS.search(text)
    if m and ("VulkanUnsupportedError" in text or "recursion is not supported" in text):
        # Ours, raised while typing a callee and wrapped by Numba's overload resolution.
        return re.sub(r"^.*?VulkanUnsupportedError: ", "", m.group(1)).strip()
    m = _MATRIX.search(text)
    if m:
        return m.group(1).strip()
    m = _UNKNOWN_ATTR.search(text)
    if m:
        attr, owner = m.group(1), m.group(2).strip()
        mod = _MODULE.match(owner)
        if mod and mod.group(1).split(".")[0] == "numba_vulkan":
            return (
                f"'{mod.group(1)}.{attr}' (nv.{attr}) does not exist in this version of "
                "numba_vulkan, so it is not supported in Vulkan kernels"
            )
        if mod:
            return f"'{mod.group(1)}.{attr}' is not supported in Vulkan kernels"
        ns = re.match(r"Module\(<numba_vulkan intrinsics (\w+)>\)", owner)
        if ns:  # nv.shared.x, nv.atomic.x, nv.subgroup.x...
            return (f"'nv.{ns.group(1)}.{attr}' does not exist in this version of numba_vulkan, "
                    "so it is not supported in Vulkan kernels")  # fmt: skip
        return f"the attribute '.{attr}' of {owner} is not supported in Vulkan kernels"
    m = _NO_IMPL.search(text)
    if m and m.group(2).startswith("<unknown function>"):  # Function(float32)(array...)
        fn = re.match(r"Function\(([\w.]+)\)", m.group(1))
        if fn:
            args = m.group(2)[len("<unknown function>"):].strip()
            return f"calling '{fn.group(1)}' with {args} is not supported in Vulkan kernels"
    if m:
        return (
            f"'{m.group(2).strip()}' is not supported in Vulkan kernels (no implementation of "
            f"{_short_function(m.group(1))} for these argument types)"
        )
    m = _INVALID_USE.search(text)
    if m:
        return (
            f"calling {_short_function(m.group(1))} with ({m.group(2)}) is not supported in "
            "Vulkan kernels"
        )
    m = _UNTYPED_GLOBAL.search(text)
    if m:
        return f"the global name '{m.group(1)}' is not supported in Vulkan kernels ({m.group(2)})"
    m = _NOT_TYPED.search(text)
    if m:
        return f"'{m.group(1)}' (or this use of it) is not supported in Vulkan kernels"
    m = _OPCODE.search(text)
    if m:
        what = _OPCODES.get(m.group(1), f"the Python operation {m.group(1)}")
        return f"{what}: not supported in Vulkan kernels"
    m = _OTHER_TARGET.search(text)
    if m:
        return (
            f"calling '{m.group(1)}' is not supported in Vulkan kernels (it is registered for "
            "another target; register it for the generic target or target='vulkan')"
        )
    m = _UNPACK_LENGTH.search(text)
    if m:
        return (f"unpacking a tuple ({m.group(2)} items) into {m.group(1)} names is not "
                "supported in Vulkan kernels")  # fmt: skip
    m = _SETATTR.search(text)
    if m:
        return (f"setting the attribute '.{m.group(2)}' of {m.group(1)} is not supported in "
                "Vulkan kernels")  # fmt: skip
    if _YIELD_CLOSURE.search(text):
        return "generator expressions and yield are not supported in Vulkan kernels"
    if _ILLEGAL_DEL.search(text):
        return "del statements are not supported in Vulkan kernels"
    m = _CANNOT_DETERMINE.search(text)
    if m and "DeviceArray" in m.group(1):
        return (
            "global device arrays are not supported in Vulkan kernels yet "
            "(pass the DeviceArray as a kernel argument)"
        )
    if m:
        return f"values like {m.group(1)} are not supported in Vulkan kernels"
    return f"{_first_line(text)} (not supported in Vulkan kernels)"


def _short_function(text):
    """'Function(<built-in function add>)' -> "'add'"; other texts unchanged."""
    m = re.search(r"<(?:built-in )?function ([^ >]+)", text)
    if m:
        return f"'{m.group(1)}'"
    m = re.search(r"<class '([^']+)'>", text)
    if m:
        return f"'{m.group(1)}'"
    return text


def _innermost_loc(error, loc):
    """The location of the innermost failure: a typing error inside a device function names
    the callee's line first in its text (Numba appends the caller's context after it)."""
    from numba.core import ir

    places = [
        (f, line)
        for f, line in _FILE_LINE.findall(plain(str(error)))
        if "site-packages" not in f and "/numba/" not in f and not f.startswith("<")
    ]
    if len(set(places)) < 2 or loc is None or str(loc.line) not in (p[1] for p in places):
        return loc, None
    filename, line = places[0]
    outer = f"{loc.filename}:{loc.line}" if loc is not None else None
    return ir.Loc(filename, int(line)), outer


_DURING_AT = re.compile(r"(?:During: [^\n]*? at|Raised from) ([^\n]+?) \((\d+)\)")


def _loc_from_text(error):
    """The location named by the last "During: ... at FILE (LINE)" context, or None."""
    from numba.core import ir

    found = _DURING_AT.findall(plain(str(error)))
    if not found:
        return None
    filename, line = found[-1]
    return ir.Loc(filename, int(line))


def translate(error, default_loc=None):
    """A VulkanUnsupportedError for Numba typing error `error`, with its source location
    (a VulkanTypingError where `error` is a TypingError)."""
    loc = getattr(error, "loc", None) or default_loc or _loc_from_text(error)
    if isinstance(error, VulkanUnsupportedError):
        # Ours, raised inside a nested typing: drop the "During: ..." contexts Numba added.
        better = VulkanUnsupportedError(error.msg, loc=loc)
    else:
        message = describe(error)
        inner, outer = _innermost_loc(error, loc)
        if outer is not None:
            message += f" (in a device function called at {outer})"
        kind = VulkanTypingError if isinstance(error, TypingError) else VulkanUnsupportedError
        better = kind(message, loc=inner)
    better.numba_error = error
    return better
