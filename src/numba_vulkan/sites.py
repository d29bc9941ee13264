"""Raise and print sites: what a kernel's status buffer records, and how the host reads it.

Kernels that can raise an exception or print (``raise``, ``assert``,
``boundscheck=True``, ``error_model="python"``, ``print``) get one hidden
argument: a per-device buffer of uint32 words in host-visible memory
(runtime/reports.py), laid out as

    words[0]        exception flag: 0, or 1 once an invocation raised (compare-and-swap
                    from 0 to 1, so exactly one invocation wins and writes the rest)
    words[1:3]      the raise site's key (64 bits, low word first)
    words[3:9]      the invocation's global id x, y, z, each as (low, high) words
    words[9:13]     two 64-bit run-time values of the message (IndexError: index, extent)
    words[13]       invocations started, words[14] those that left every loop by its own
    words[15]       exits, and the last started kernel's LoopSite key: kernels for a driver
                    that cuts long loops short count these (kir/loop_guard.h)
    words[16]       print cursor: words claimed so far (may pass the capacity)
    words[17]       print capacity: words of records the buffer holds
    words[18]       print records lost because the buffer was full
    words[19:]      print records: [length in words, key low, key high, values...]

Everything static about a site (exception class and arguments, source line,
the items of a print and how to format them) stays on the host, in a
registry keyed by a hash of that description. The key is deterministic, so
kernels loaded from the disk cache (which carry their sites) decode too.
"""

import hashlib
import struct

from . import _core, forksafe

EXC_FLAG = 0
EXC_KEY = 1
EXC_GID = 3
EXC_VALUES = 9
EXC_WORDS = 13  # the exception record: words[:EXC_WORDS]
LOOP_STARTED = _core.LOOP_STARTED_WORD  # the loop guard writes them (kir/loop_guard.h)
LOOP_FINISHED = _core.LOOP_FINISHED_WORD
LOOP_KERNEL = _core.LOOP_KERNEL_WORD
PRINT_AREA = 16  # words[PRINT_AREA:] is the print buffer of print_records
PRINT_HEADER = 3  # cursor, capacity, lost


def _key(description):
    digest = hashlib.blake2b(repr(description).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class RaiseSite:
    """A place where a kernel raises: ``raise E(args)``, ``assert``, an index or division check.

    ``template`` (optional) formats the message from the two run-time values,
    as ``template.format(v0, v1)``; ``signed`` says how to read each value.
    """

    def __init__(self, exc_class, args, kernel, filename, line, template=None, signed=(True, True)):
        self.exc_class = exc_class
        self.args = tuple(args or ())
        self.kernel = kernel
        self.filename = filename
        self.line = line
        self.template = template
        self.signed = tuple(signed)
        module = getattr(exc_class, "__module__", "")
        cls = f"{module}.{getattr(exc_class, '__qualname__', exc_class)}"
        self.key = _key(("raise", cls, self.args, kernel, filename, line, template, self.signed))

    def exception(self, words):
        """The exception this site raised, from the status words (a sequence of ints)."""
        gid = tuple(words[EXC_GID + 2 * a] | (words[EXC_GID + 2 * a + 1] << 32) for a in range(3))
        values = []
        for i, signed in enumerate(self.signed):
            v = words[EXC_VALUES + 2 * i] | (words[EXC_VALUES + 2 * i + 1] << 32)
            values.append(v - (1 << 64) if signed and v >= 1 << 63 else v)
        if self.template is not None:
            message = self.template.format(*values)
        elif self.args:
            message = str(self.args[0]) if len(self.args) == 1 else str(self.args)
        else:
            message = ""
        where = (f"in kernel '{self.kernel}' at {self.filename}:{self.line}, "
                 f"global id ({gid[0]}, {gid[1]}, {gid[2]})")  # fmt: skip
        text = f"{message} ({where})" if message else f"({where})"
        try:
            exc = self.exc_class(text)
        except Exception:  # an exception class with another signature: its own arguments
            exc = self.exc_class(*self.args)
        exc.global_id = gid
        exc.kernel = self.kernel
        exc.filename = self.filename
        exc.line = self.line
        return exc

    def __reduce__(self):  # the key is recomputed on load
        return (RaiseSite, (self.exc_class, self.args, self.kernel, self.filename, self.line,
                            self.template, self.signed))  # fmt: skip


class LoopSite:
    """A kernel whose loops are counted for a driver's loop cap (kir/loop_guard.h): its key
    is one word, which the kernel's workgroups write when they start."""

    def __init__(self, kernel, filename, line):
        self.kernel = kernel
        self.filename = filename
        self.line = line
        self.key = _key(("loops", kernel, filename, line)) & 0xFFFFFFFF

    def exception(self, cut, limit):
        """The VulkanLoopLimitError for `cut` invocations that did not finish their loops."""
        from .errors import VulkanLoopLimitError

        cap = f"after {limit:,} loop iterations" if limit else "early"
        exc = VulkanLoopLimitError(
            f"kernel '{self.kernel}' ({self.filename}:{self.line}): {cut:,} "
            f"invocation{'s' if cut != 1 else ''} did not finish their loops, because this driver ends "
            f"loops {cap} per invocation without an error (Mesa's lavapipe does), so the "
            "kernel's results are wrong; split the work so that each invocation loops less, "
            "or run it on a GPU (docs/runtime.md, \"lavapipe's loop cap\")")
        exc.kernel = self.kernel
        exc.filename = self.filename
        exc.line = self.line
        return exc

    def __reduce__(self):
        return (LoopSite, (self.kernel, self.filename, self.line))


class PrintSite:
    """A ``print(...)`` in a kernel: its items, each a constant string or a value.

    Items are ``("str", text)``, or ``(what, words, bits, signed)`` for a value
    stored in 1 or 2 words: what is "int", "bool" or "float" (bits 32 or 64:
    how the words hold it), or ``("tuple", items)``.
    """

    def __init__(self, items, filename, line):
        self.items = tuple(items)
        self.filename = filename
        self.line = line
        self.key = _key(("print", self.items, filename, line))

    def words(self):
        """Words of the record's values (after its 3 header words)."""
        return _count(self.items)

    def format(self, values):
        """The printed line from the record's value words."""
        out, _ = _format_items(self.items, values, 0)
        return " ".join(out)

    def __reduce__(self):
        return (PrintSite, (self.items, self.filename, self.line))


def _count(items):
    n = 0
    for item in items:
        if item[0] == "tuple":
            n += _count(item[1])
        elif item[0] != "str":
            n += item[1]
    return n


def _format_items(items, values, pos):
    out = []
    for item in items:
        if item[0] == "str":
            out.append(item[1])
        elif item[0] == "tuple":
            parts, pos = _format_items(item[1], values, pos)
            out.append("(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")
        else:
            what, nwords, bits, signed = item
            raw = values[pos] | ((values[pos + 1] << 32) if nwords == 2 else 0)
            pos += nwords
            out.append(_format_value(what, raw, nwords, bits, signed))
    return out, pos


def _format_value(what, raw, nwords, bits, signed):
    """A value as numba.njit prints it: Python's str of the boxed int, bool or float."""
    if what == "bool":
        return str(bool(raw))
    if what == "float":
        if bits == 64:
            return str(struct.unpack("<d", struct.pack("<Q", raw))[0])
        # float32 (and float16, computed in float32) box to a Python float: str of the double
        return str(struct.unpack("<f", struct.pack("<I", raw & 0xFFFFFFFF))[0])
    width = 32 * nwords
    if signed and raw >= 1 << (width - 1):
        raw -= 1 << width
    return str(raw)


# ------------------------------------------------------------------ the registry

_lock = forksafe.lock()
_sites = {}  # key -> RaiseSite or PrintSite


def register(sites):
    """Make `sites` known to the host (kernels do it when compiled or loaded)."""
    with _lock:
        for site in sites:
            _sites.setdefault(site.key, site)


def lookup(key):
    """The site of `key`, or None (a kernel compiled in another process, not loaded here)."""
    return _sites.get(key)


def format_print_records(words):
    """The lines of a print buffer (``words``: cursor, capacity, lost, records), in order,
    and the number of records lost to a full buffer."""
    words = [int(w) for w in words]
    if len(words) < PRINT_HEADER:
        raise ValueError("a print buffer has at least 3 words: cursor, capacity, lost")
    cursor, capacity, lost = words[:PRINT_HEADER]
    end = PRINT_HEADER + min(cursor, capacity, len(words) - PRINT_HEADER)
    lines, pos = [], PRINT_HEADER
    while pos + 3 <= end:
        length = words[pos]
        if length == 0:  # the records that fit end here (a full area: runtime/reports.py)
            break
        if length < 3 or pos + length > end:
            lines.append(f"<numba_vulkan: malformed print record at word {pos}>")
            break
        site = lookup(words[pos + 1] | (words[pos + 2] << 32))
        if site is None:
            lines.append("<numba_vulkan: a print record of a kernel unknown to this process>")
        else:
            lines.append(site.format(words[pos + 3: pos + length]))
        pos += length
    return lines, lost


def lost_line(lost, capacity):
    """The line that reports print records lost to a full buffer."""
    return (f"numba_vulkan: {lost} print record(s) lost: the print buffer of {capacity} words "
            "was full (set NUMBA_VULKAN_PRINT_WORDS to enlarge it, or synchronize more often)")


def record_words(nvalues):
    """Words of a print record with `nvalues` value words."""
    return 3 + nvalues


__all__ = ["RaiseSite", "PrintSite", "register", "lookup", "format_print_records", "lost_line"]
