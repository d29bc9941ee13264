"""Views of a device array's memory: another shape and strides over the same buffer
(``view``, ``broadcast_to``), and the bytes an array touches (``span``). Strides here are
the device's: bytes of the *stored* element type (``DeviceArray._dev_strides``)."""


def view(array, shape, dev_strides, extra_offset=0):
    """A view of `array`'s buffer with the given shape and stored-byte strides (`array`
    itself where that is what it already is: views cost a DeviceArray each)."""
    shape, dev_strides = tuple(map(int, shape)), tuple(map(int, dev_strides))
    if not extra_offset and array._dev_strides == dev_strides and array.shape == shape:
        return array
    return array._view(shape, array._offset + extra_offset, dev_strides)


def broadcast_to(array, shape):
    """`array` broadcast to `shape` as a view (stride 0 along new and stretched axes).

    Raises
    ------
    ValueError
        If the shapes do not broadcast, with NumPy's message.
    """
    shape = tuple(shape)
    if array.shape == shape:
        return array
    extra = len(shape) - array.ndim
    if extra < 0:
        raise ValueError(f"cannot broadcast an array of shape {array.shape} to {shape}")
    strides = [0] * extra
    for n, target, s in zip(array.shape, shape[extra:], array._dev_strides):
        if n == target:
            strides.append(s)
        elif n == 1:
            strides.append(0)
        else:
            raise ValueError(
                f"operands could not be broadcast together: shape {array.shape} to {shape}"
            )
    return view(array, shape, strides)


def span(array):
    """(first byte, end byte) of the stored memory `array` touches; (0, 0) if empty."""
    lo = hi = array._offset
    for n, s in zip(array.shape, array._dev_strides):
        if n == 0:
            return 0, 0
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + array._itemsize
