"""How a kernel (dispatcher.Dispatcher) pickles: Dask's ``distributed`` sends kernels to its
workers so, and Dask pickles every function it tokenises together with the kernels it calls.

A kernel pickles as the pickle of its Python function (cloudpickle's where it is installed:
by value for a function of a script or a notebook), its options, its class and what changes
its launches (``_STATE``: a numba.cuda signature's conversions of scalar arguments,
cuda/signatures.py, and ``debug=True``'s waiting launches); the receiving process compiles
on its first launch. Once the kernel has compiled (the values of its globals are then
constants of its code), the first pickle made is kept for later ones, with the values the
globals had then: a graph of ``map_blocks(f)`` no longer pickles the function at each build.
"""

import pickle
import threading

# What a pickled kernel keeps besides its function and options.
_STATE = ("sync_launches", "scalar_dtypes")

# The kernels whose functions this thread is pickling.
_active = threading.local()


def reduce(kernel):
    """``kernel.__reduce__()``."""
    state = {k: kernel.__dict__[k] for k in _STATE if k in kernel.__dict__}
    active = _active.__dict__.setdefault("kernels", set())
    if id(kernel) in active:
        # The function refers to its own kernel (a recursive device function): here,
        # inside its own pickle, it is in that pickle already.
        return _from_function, (kernel.py_func, kernel.options, type(kernel)), state
    data = kernel._pickled
    if data is None:
        active.add(id(kernel))
        try:
            data = _pickle_function(kernel.py_func)
        finally:
            active.discard(id(kernel))
        if kernel._compiled:
            kernel._pickled = data
    return _from_pickle, (data, kernel.options, type(kernel)), state


def _pickle_function(func):
    """`func` pickled on its own: by value where cloudpickle is installed, else by
    reference."""
    try:
        import cloudpickle
    except ImportError:
        return pickle.dumps(func)
    return cloudpickle.dumps(func)


def _from_pickle(data, options, cls):
    return _from_function(pickle.loads(data), options, cls)


def _from_function(func, options, cls):
    return cls(func, options)  # Dispatcher, or a subclass of its constructor (TypedDispatcher)
