"""Launch graphs: a sequence of launches, copies and event records captured from a stream
once, then replayed many times, each replay one submission of a command buffer recorded
in advance (src/core/vk/graph.h).

>>> s = nv.stream()
>>> with nv.graph(s) as g:
...     for _ in range(1000):
...         add_one[1, 64, s](x)
>>> exe = g.instantiate()
>>> exe.replay()                 # on the stream it captured; or exe.replay(other_stream)
>>> exe.rebind(x, y).replay()    # the same launches on another array of x's shape and type

Capture: while a graph captures a stream, the stream's launches, device copies and
``Event.record(stream)`` go into the graph instead of running (nothing else does: work
outside the stream runs as usual). The barriers between captured commands are decided
once, at instantiation, from the arrays each one reads and writes. Work that needs the
host between the graph's steps cannot be captured (VulkanGraphError): NumPy arrays as
launch arguments, copies to or from pageable host memory (use ``pinned_array``),
``Stream.add_callback``, and waiting for the stream (``synchronize``, ``query``).

Parameters: every device array a captured launch takes is a parameter of the graph,
named by the array object itself; ``GraphExec.rebind(array, other)`` binds another
array of the same shape, dtype, layout and device in its place, in every captured
launch that took it. Scalars are constants unless declared with :meth:`Graph.scalar`
before the launches take them. :func:`capture` captures a function and replays it with
new arguments (``f(*args)``).

Replay: ``GraphExec.replay(stream)`` submits the recorded command buffer on the stream
and returns at once. It is ordered like any work on that stream: after the stream's
earlier work and whatever else still uses the graph's arrays (launches outside streams
waiting in the open batch are submitted first), and later work that uses them waits for
it; the arrays stay alive until it is done. A replay of an unchanged graph records
nothing and writes no parameters; after a rebinding, the next replay records a command
buffer that no replay in flight uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import VulkanGraphError
from .runtime import device_list
from .runtime.streams import Stream


def _core():
    from . import _core as core

    return core


class Graph:
    """Launches, copies and event records captured from a stream, to instantiate and replay.

    Use it as a context manager (``with nv.graph(stream) as g:``) or call :meth:`begin`
    and :meth:`end`. A graph captures once.

    Parameters
    ----------
    stream : Stream, optional
        The stream to capture; a new stream of the selected device if None.

    Attributes
    ----------
    stream : Stream
    device : Device
    """

    def __init__(self, stream: Stream | None = None) -> None:
        if stream is None:
            stream = Stream(device_list.get_device(None))
        if not isinstance(stream, Stream):
            raise TypeError(f"a graph captures a Stream, not {type(stream).__name__}")
        self.stream = stream
        self.device = stream.device
        self._core = _core().Graph(self.device._core)
        self._failed = None  # what ended a capture early

    def __repr__(self) -> str:
        state = "capturing" if self._core.capturing else "captured"
        return f"<Graph {state}, {self._core.commands} commands on {self.device.info.name!r}>"

    @property
    def commands(self) -> int:
        """Commands captured so far (dispatches, copies, timestamps; a launch whose grid is
        split is one dispatch per piece)."""
        return self._core.commands

    def begin(self) -> Graph:
        """Start capturing the stream's work."""
        self._core.begin(self.stream._core)
        return self

    def end(self) -> Graph:
        """End the capture."""
        self._core.end(self.stream._core)
        return self

    def __enter__(self) -> Graph:  # noqa: PYI034 - Self needs Python 3.11
        return self.begin()

    def __exit__(self, kind, value, traceback) -> None:
        if self.stream._core.capturing:
            self.end()
        if value is not None:
            self._failed = value

    def scalar(self, value: Any) -> Any:
        """Declare a scalar parameter: returns a new NumPy scalar of the type the launches
        would give `value` (int: int64, float: float64, a NumPy scalar: its own), to pass
        to the captured launches; ``GraphExec.rebind(that_scalar, new_value)`` changes it.

        Values computed from it (``n + 1``) are constants of the graph, as are scalars
        inside tuples and complex numbers.

        Raises
        ------
        VulkanGraphError
            For bools and complex numbers (pass an integer, or two floats, instead).
        """
        if isinstance(value, (bool, np.bool_, complex, np.complexfloating)):
            raise VulkanGraphError(
                f"a {type(value).__name__} cannot be a scalar parameter of a graph (its "
                "objects are shared or its launches unpack it); pass an integer or floats "
                "instead"
            )
        if isinstance(value, np.generic):
            fresh = np.array(value)[()]
        elif isinstance(value, int):
            fresh = np.int64(value) if value < 2**63 else np.uint64(value)
        elif isinstance(value, float):
            fresh = np.float64(value)
        else:
            raise VulkanGraphError(
                f"a scalar parameter of a graph is an int, a float or a NumPy scalar, not "
                f"{type(value).__name__}"
            )
        self._core.declare(fresh)
        return fresh

    def instantiate(self) -> GraphExec:
        """An executable graph: the captured commands with their barriers, to replay.

        Each instantiation has its own bindings and command buffers.

        Raises
        ------
        VulkanGraphError
            If the capture has not ended, or ended with an exception.
        """
        if self._failed is not None:
            raise VulkanGraphError(
                f"the capture ended with an exception ({type(self._failed).__name__}: "
                f"{self._failed}); capture a new graph"
            )
        return GraphExec(self._core.instantiate(), self.stream, self.device)


class GraphExec:
    """An instantiated graph: replay it on a stream, bind other arrays and scalars.

    Attributes
    ----------
    stream : Stream
        The stream it replays on by default (the one captured).
    device : Device
    """

    __slots__ = ("_core", "_stream_core", "device", "stream")

    def __init__(self, core, stream: Stream, device) -> None:
        self._core = core
        self.stream = stream
        self._stream_core = stream._core
        self.device = device

    def __repr__(self) -> str:
        return (f"<GraphExec {self._core.commands} commands, {self._core.barriers} barriers "
                f"on {self.device.info.name!r}>")  # fmt: skip

    def replay(self, stream: Stream | None = None) -> None:
        """Submit the graph on `stream` (the captured one if None) and return at once.

        Ordered after the stream's earlier work and whatever else still uses the graph's
        arrays; work enqueued later that uses them waits for it. Its results are there
        after ``stream.synchronize()`` (or any wait for an array it writes).

        Raises
        ------
        VulkanGraphError
            If the stream belongs to another device or is capturing, or if the
            bindings give two arrays that were different memory at capture the same
            memory.
        """
        if stream is None:
            self._core.replay(self._stream_core)
        else:
            if not isinstance(stream, Stream):
                raise TypeError(f"replay() takes a Stream, not {type(stream).__name__}")
            self._core.replay(stream._core)

    launch = replay  # cuda.core's spelling (Graph.launch(stream))

    def rebind(self, key: Any, value: Any) -> GraphExec:
        """Bind `value` in place of the parameter `key` for the next replays.

        Parameters
        ----------
        key : DeviceArray or scalar
            A device array a captured launch took, or a scalar declared with
            :meth:`Graph.scalar`: the object bound at capture.
        value : DeviceArray or scalar
            An array of the same shape, dtype, layout and device; or a scalar of the
            captured type (a Python int or float is converted to it).

        Returns
        -------
        GraphExec
            Itself, so that ``exe.rebind(x, y).replay()`` reads as one step.

        Raises
        ------
        VulkanGraphError
            If `key` is no parameter, or `value` does not match it.
        """
        if hasattr(key, "shape") and hasattr(value, "shape") and hasattr(key, "device"):
            _check_like(key, value)
        elif isinstance(key, np.generic) and type(value) is not type(key):
            value = _as_scalar(key, value)
        self._core.rebind(key, value)
        return self

    def bound(self, key: Any) -> Any:
        """The object bound now in place of the parameter `key` (None if it is none)."""
        return self._core.bound(key)

    @property
    def parameters(self) -> list[Any]:
        """The parameters' objects as captured, in the order the capture met them."""
        return list(self._core.keys)

    @property
    def commands(self) -> int:
        """Commands of the graph."""
        return self._core.commands

    @property
    def barriers(self) -> int:
        """Barriers the graph records between its commands (decided at instantiation)."""
        return self._core.barriers

    @property
    def records(self) -> int:
        """Times a command buffer of the graph was recorded: once, then once per replay
        after a rebinding."""
        return self._core.records


class GraphFunction:
    """A function captured as a graph: call it with new arguments to replay (:func:`capture`).

    Attributes
    ----------
    graph : GraphExec
    """

    __slots__ = ("_bound", "_keys", "graph")

    def __init__(self, graph: GraphExec, keys: list[Any]) -> None:
        self.graph = graph
        self._keys = keys
        self._bound = list(keys)

    def __call__(self, *args: Any, stream: Stream | None = None) -> None:
        """Replay with `args` bound to the function's parameters (on `stream`, or the
        captured one)."""
        if len(args) != len(self._keys):
            raise TypeError(f"the captured function takes {len(self._keys)} arguments, "
                            f"not {len(args)}")  # fmt: skip
        bound = self._bound
        for i, arg in enumerate(args):
            if arg is not bound[i]:
                self.graph.rebind(self._keys[i], arg)
                bound[i] = arg
        self.graph.replay(stream)


def graph(stream: Stream | None = None) -> Graph:
    """A :class:`Graph` capturing `stream` (a new stream of the selected device if None):
    ``with nv.graph(s) as g: ...``."""
    return Graph(stream)


def capture(fn: Callable[..., Any], *args: Any, stream: Stream | None = None) -> GraphFunction:
    """Capture ``fn(*args)`` as a graph whose parameters are `args`.

    `fn` launches kernels on `stream` (passed to it as the keyword ``stream``). Device
    arrays and scalars in `args` become the graph's parameters; calling the result with
    other arrays of the same shapes and types, or other scalars, replays the graph with
    them.

    Parameters
    ----------
    fn : callable
        ``fn(*args, stream=stream)``.
    *args : DeviceArray, int, float or NumPy scalar
    stream : Stream, optional
        The stream to capture and replay on by default (a new one if None).

    Returns
    -------
    GraphFunction

    Raises
    ------
    VulkanGraphError
        If an argument is of another kind, or reaches no captured launch directly (a
        parameter used only through values computed from it would be replayed as
        captured).
    """
    from .runtime import DeviceArray

    g = Graph(stream)
    keys = []
    for i, arg in enumerate(args):
        if isinstance(arg, DeviceArray):
            keys.append(arg)
        elif isinstance(arg, (int, float, np.generic)):
            keys.append(g.scalar(arg))
        else:
            raise VulkanGraphError(f"argument {i} of a captured function is a "
                                   f"{type(arg).__name__}: parameters are device arrays and "
                                   "scalars")  # fmt: skip
    with g:
        fn(*keys, stream=g.stream)
    exe = g.instantiate()
    params = exe._core.keys
    for i, key in enumerate(keys):
        if not any(p is key for p in params):
            raise VulkanGraphError(
                f"argument {i} of the captured function reaches no captured launch directly; "
                "a graph replays values computed from its parameters (views, n + 1, tuples) "
                "as captured: pass them as arguments of their own"
            )
    return GraphFunction(exe, keys)


def _check_like(key, value):
    """VulkanGraphError unless DeviceArray `value` can take the place of `key`."""
    from .runtime import DeviceArray

    if not isinstance(value, DeviceArray):
        raise VulkanGraphError(f"an array parameter of a graph takes a device array, not "
                               f"{type(value).__name__}")  # fmt: skip
    for what, a, b in (("device", key.device, value.device), ("shape", key.shape, value.shape),
                       ("dtype", key.dtype, value.dtype), ("strides", key.strides, value.strides)):
        if a is not b and a != b:
            raise VulkanGraphError(
                f"a graph replays the {what} it captured: {b} in place of {a} (capture "
                "another graph for it)"
            )


def _as_scalar(key, value):
    """`value` as the NumPy scalar type of the declared scalar `key`, where that loses
    nothing (ints for integer types, ints and floats for float types)."""
    kind = np.dtype(type(key)).kind
    fits = (kind in "iu" and isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            or kind == "f" and isinstance(value, (int, float, np.integer, np.floating)))
    if not fits:
        raise VulkanGraphError(f"a scalar parameter of a graph takes a value of the type it "
                               f"captured ({type(key).__name__}), not {type(value).__name__}")
    try:
        return type(key)(value)
    except OverflowError as e:
        raise VulkanGraphError(f"{value} does not fit the parameter's {type(key).__name__}: "
                               f"{e}") from None
