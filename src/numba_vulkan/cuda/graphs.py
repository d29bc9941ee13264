"""numba.cuda's side of launch graphs (numba_vulkan.graphs), in the shape numba-cuda#832
proposes after cuda.core: a graph builder is a stream, accepted wherever a stream is
(``kernel[grid, block, builder]``, ``to_device(..., stream=builder)``,
``copy_to_host(out, stream=builder)``), whose work between ``begin_building()`` and
``end_building()`` becomes a graph; ``complete()`` gives the graph to ``launch(stream)``.
CUDA's stream capture (``begin_capture(stream)`` ... ``end_capture(stream)``) is here too.

>>> builder = cuda.create_graph_builder()
>>> builder.begin_building()
>>> kernel[blocks, threads, builder](d_x)
>>> graph = builder.end_building().complete()
>>> graph.launch(stream)
"""

from ..errors import VulkanGraphError
from ..graphs import Graph, GraphExec
from ..runtime.streams import Stream

__all__ = ["GraphBuilder", "begin_capture", "create_graph_builder", "end_capture"]


class GraphBuilder(Stream):
    """A stream that builds a graph of the work enqueued on it (cuda.core's GraphBuilder).

    Parameters
    ----------
    device : int, Device or None
        The device; the selected one by default.
    """

    def __init__(self, device=None) -> None:
        super().__init__(device)
        self._graph = None

    @property
    def is_building(self) -> bool:
        """Whether work enqueued now goes into the graph."""
        return bool(self._core.capturing)

    def begin_building(self) -> "GraphBuilder":
        """Start building: the builder's launches, copies and event records go into the graph."""
        self._graph = Graph(self).begin()
        return self

    def end_building(self) -> "GraphBuilder":
        """Stop building."""
        if self._graph is None:
            raise VulkanGraphError("end_building() before begin_building()")
        self._graph.end()
        return self

    def complete(self) -> GraphExec:
        """The built graph, ready to ``launch(stream)`` (``replay``) many times."""
        if self._graph is None:
            raise VulkanGraphError("complete() before begin_building()")
        return self._graph.instantiate()


def create_graph_builder(device=None) -> GraphBuilder:
    """A new :class:`GraphBuilder` on `device` (cuda.core's ``Device.create_graph_builder``)."""
    return GraphBuilder(device)


_capturing = {}  # id(stream) -> (stream, Graph) between begin_capture and end_capture


def begin_capture(stream: Stream) -> None:
    """Start capturing `stream`'s work into a graph (CUDA's cudaStreamBeginCapture)."""
    graph = Graph(stream).begin()
    _capturing[id(stream)] = (stream, graph)


def end_capture(stream: Stream) -> Graph:
    """End the capture begun on `stream`: the graph, to ``instantiate()`` and ``launch``."""
    found = _capturing.pop(id(stream), None)
    if found is None or found[0] is not stream:
        raise VulkanGraphError("end_capture() on a stream that begin_capture() did not start")
    return found[1].end()
