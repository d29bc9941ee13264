"""The kernels of numba-cuda's documentation that Vulkan cannot run, run with only the
import changed: each must fail with our VulkanUnsupportedError naming the reason,
never run wrongly or fail inside Numba.

Grid-wide synchronisation (examples.rst laplace and sessionize, cooperative_groups.rst),
CUDA C linking (cuda_ffi.rst), raw CUDA pointers (examples.rst cpointer), recursion
(cudapysupported.rst) and the debugger's breakpoint (debugging.rst). Sources as in
test_cuda_doc_examples.py (numba-cuda snapshot b18b944, BSD-2-Clause); docs/cuda-compat.md
lists them with the reasons.
"""

import numpy as np
import pytest

from numba_vulkan.errors import VulkanUnsupportedError

pytestmark = [pytest.mark.device, pytest.mark.usefixtures("device")]

GRID_SYNC = "grid-wide synchronisation"

# test -> (page and section, {why refused: [kernels]}), as in test_cuda_doc_examples.py
DOC_KERNELS = {
    "test_laplace_grid_sync_refused": ("examples.rst: 1D Heat Equation",
                                       {"refused: grid sync": ["solve_heat_equation"]}),
    "test_sessionize_grid_sync_refused": ("examples.rst: Dividing Click Data into Sessions",
                                          {"refused: grid sync": ["sessionize"]}),
    "test_cooperative_groups_grid_sync_refused": ("cooperative_groups.rst",
                                                  {"refused: grid sync": ["sequential_rows"]}),
    "test_cpointer_refused": ("examples.rst: Passing a pointer to a kernel",
                              {"refused: raw pointers": ["add_one"]}),
    "test_ffi_declare_device_refused": (
        "cuda_ffi.rst / examples (test_ffi.py)",
        {"refused: CUDA C linking": ["multiply_vectors", "reduction_caller", "vector_saxpy"]}),
    "test_ffi_legacy_link_refused": ("cuda_ffi.rst: Legacy link support",
                                     {"refused: CUDA C linking": ["multiply_vectors (link=)"]}),
    "test_recursion_refused": ("cudapysupported.rst: Recursion",
                               {"refused: recursion": ["fib (device function)"]}),
    "test_debugger_example_refused": ("debugging.rst (examples/debugging/hello.py)",
                                      {"refused: debugger": ["hello"]}),
}


# examples.rst "1D Heat Equation" (doc_examples/test_laplace.py)
def test_laplace_grid_sync_refused():
    # ex_laplace.import.begin
    import numpy as np
    from numba_vulkan import cuda
    # ex_laplace.import.end

    # ex_laplace.allocate.begin
    # Use an odd problem size.
    # This is so there can be an element truly in the "middle" for symmetry.
    size = 1001
    data = np.zeros(size)

    # Middle element is made very hot
    data[500] = 10000
    buf_0 = cuda.to_device(data)

    # This extra array is used for synchronization purposes
    buf_1 = cuda.device_array_like(buf_0)

    niter = 10000
    # ex_laplace.allocate.end

    # ex_laplace.kernel.begin
    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)

        # Don't continue if our index is outside the domain
        if i >= len(buf_0):
            return

        # Prepare to do a grid-wide synchronization later
        grid = cuda.cg.this_grid()

        for step in range(timesteps):
            # Select the buffer from the previous timestep
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0

            # Get the current temperature associated with this point
            curr_temp = data[i]

            # Apply formula from finite difference equation
            if i == 0:
                # Left wall is held at T = 0
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                # Right wall is held at T = 0
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                # Interior points are a weighted average of their neighbors
                next_temp = curr_temp + k * (
                    data[i - 1] - (2 * curr_temp) + data[i + 1]
                )

            # Write new value to the next buffer
            next_data[i] = next_temp

            # Wait for every thread to write before moving on
            grid.sync()
    # ex_laplace.kernel.end

    with pytest.raises(VulkanUnsupportedError, match=GRID_SYNC):
        # ex_laplace.launch.begin
        solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)
        # ex_laplace.launch.end


# examples.rst "Dividing Click Data into Sessions" (doc_examples/test_sessionize.py)
def test_sessionize_grid_sync_refused():
    # ex_sessionize.import.begin
    import numpy as np
    from numba_vulkan import cuda

    # Set the timeout to one hour
    session_timeout = np.int64(np.timedelta64("3600", "s"))
    # ex_sessionize.import.end

    ids = cuda.to_device(np.array([1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3]))
    sec = cuda.to_device(np.array([1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001,
                                   10000], dtype="datetime64[ns]").astype("int64"))
    results = cuda.to_device(np.zeros(len(ids)))

    # ex_sessionize.kernel.begin
    @cuda.jit
    def sessionize(user_id, timestamp, results):
        gid = cuda.grid(1)
        size = len(user_id)

        if gid >= size:
            return

        # Determine session boundaries
        is_first_datapoint = gid == 0
        if not is_first_datapoint:
            new_user = user_id[gid] != user_id[gid - 1]
            timed_out = (
                timestamp[gid] - timestamp[gid - 1] > session_timeout
            )
            is_sess_boundary = new_user or timed_out
        else:
            is_sess_boundary = True

        # Determine session labels
        if is_sess_boundary:
            # This thread marks the start of a session
            results[gid] = gid

            # Make sure all session boundaries are written
            # before populating the session id
            grid = cuda.cg.this_grid()
            grid.sync()

            look_ahead = 1
            # Check elements 'forward' of this one
            # until a new session boundary is found
            while results[gid + look_ahead] == 0:
                results[gid + look_ahead] = gid
                look_ahead += 1

                # Avoid out-of-bounds accesses by the last thread
                if gid + look_ahead == size - 1:
                    results[gid + look_ahead] = gid
                    break
    # ex_sessionize.kernel.end

    with pytest.raises(VulkanUnsupportedError, match=GRID_SYNC):
        # ex_sessionize.launch.begin
        sessionize.forall(len(ids))(ids, sec, results)
        # ex_sessionize.launch.end


# cooperative_groups.rst "Applications and Example" (doc_examples/test_cg.py)
def test_cooperative_groups_grid_sync_refused():
    # magictoken.ex_grid_sync_kernel.begin
    from numba_vulkan import cuda
    from numba_vulkan.cuda import int32
    import numpy as np

    sig = (int32[:, ::1],)

    @cuda.jit(sig)
    def sequential_rows(M):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()

        rows = M.shape[0]
        cols = M.shape[1]

        for row in range(1, rows):
            opposite = cols - col - 1
            # Each row's elements are one greater than the previous row
            M[row, col] = M[row - 1, opposite] + 1
            # Wait until all threads have written their column element,
            # and that the write is visible to all other threads
            g.sync()
    # magictoken.ex_grid_sync_kernel.end

    # magictoken.ex_grid_sync_data.begin
    # Empty input data
    A = np.zeros((1024, 1024), dtype=np.int32)
    # A somewhat arbitrary choice (one warp), but generally smaller block sizes
    # allow more blocks to be launched (noting that other limitations on
    # occupancy apply such as shared memory size)
    blockdim = 32
    griddim = A.shape[1] // blockdim
    # magictoken.ex_grid_sync_data.end

    with pytest.raises(VulkanUnsupportedError, match=GRID_SYNC):
        # magictoken.ex_grid_sync_launch.begin
        # Kernel launch - this is implicitly a cooperative launch
        sequential_rows[griddim, blockdim](A)
        # magictoken.ex_grid_sync_launch.end


# examples.rst "Passing a pointer to a kernel" (doc_examples/test_cpointer.py)
def test_cpointer_refused():
    # ex_cpointer.sig.begin
    import numpy as np
    from numba_vulkan import cuda
    from numba_vulkan.cuda import types

    # The first kernel argument is a pointer to a uint8 array.
    # The second argument holds the length as a uint32.
    # The return type of a kernel is always void.
    sig = types.void(types.CPointer(types.uint8), types.uint32)
    # ex_cpointer.sig.end

    # ex_cpointer.kernel.begin
    with pytest.raises(VulkanUnsupportedError, match=r"pointer \(uint8\*\).*do not exist"):
        @cuda.jit(sig)
        def add_one(x, n):
            i = cuda.grid(1)
            if i < n:
                x[i] += 1
    # ex_cpointer.kernel.end

    # ex_cpointer.launch.begin
    x = cuda.to_device(np.arange(10, dtype=np.uint8))

    # Print initial values of x
    print(x.copy_to_host())  # [0 1 2 3 4 5 6 7 8 9]

    # Obtain a pointer to the data from from the CUDA Array Interface
    with pytest.raises(VulkanUnsupportedError, match="no CUDA device pointer"):
        x_ptr = x.__cuda_array_interface__["data"][0]  # noqa: F841
    assert not hasattr(x, "__cuda_array_interface__")  # probes still answer False
    # ex_cpointer.launch.end (the launch cannot be reached)


# examples.rst / cuda_ffi.rst: CUDA C functions linked into kernels (doc_examples/test_ffi.py)
def test_ffi_declare_device_refused():
    # magictoken.ex_linking_cu.begin
    from numba_vulkan import cuda
    import os

    # Path to the source containing the foreign function
    # (here assumed to be in a subdirectory called "ffi")
    basedir = os.path.dirname(os.path.abspath(__file__))
    functions_cu = os.path.join(basedir, "ffi", "functions.cu")

    with pytest.raises(VulkanUnsupportedError, match="declare_device.*not possible on Vulkan"):
        # Declaration of the foreign function
        mul = cuda.declare_device(  # noqa: F841
            "mul_f32_f32", "float32(float32, float32)", link=functions_cu
        )

    # magictoken.ex_from_buffer_decl.begin (reduction_caller's function)
    signature = "float32(CPointer(float32), int32)"
    with pytest.raises(VulkanUnsupportedError, match="declare_device.*not possible on Vulkan"):
        sum_reduce = cuda.declare_device(  # noqa: F841
            "sum_reduce", signature, link=functions_cu
        )

    # magictoken.ex_extra_search_paths_kernel.begin (vector_saxpy's function; the
    # example first sets numba.cuda's config.CUDA_NVRTC_EXTRA_SEARCH_PATHS, whose
    # import fails here with a plain ImportError: numba_vulkan.cuda has no config)
    saxpy_cu = os.path.join(basedir, "ffi", "saxpy.cu")
    sig = "float32(float32, float32, float32)"
    with pytest.raises(VulkanUnsupportedError, match="declare_device.*not possible on Vulkan"):
        saxpy = cuda.declare_device("saxpy", sig=sig, link=saxpy_cu)  # noqa: F841


# cuda_ffi.rst "Legacy @cuda.jit decorator link support"
def test_ffi_legacy_link_refused():
    from numba_vulkan import cuda

    with pytest.raises(VulkanUnsupportedError, match="link=.*not possible on Vulkan"):
        @cuda.jit(link=['functions.cu'])
        def multiply_vectors(r, x, y):
            i = cuda.grid(1)

            if i < len(r):
                r[i] = mul(x[i], y[i])  # noqa: F821


# cudapysupported.rst "Recursion": self-recursion, which numba.cuda supports and SPIR-V
# for Vulkan forbids
def test_recursion_refused():
    from numba_vulkan import cuda

    @cuda.jit("int64(int64)", device=True)
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    @cuda.jit
    def caller(out):
        out[0] = fib(10)

    with pytest.raises(VulkanUnsupportedError, match="recursi"):
        caller[1, 1](np.zeros(1, np.int64))


# debugging.rst's kernel (numba-cuda's examples/debugging/hello.py): made for cuda-gdb,
# with debug=True, opt=False and breakpoint(); debug=True is accepted (error_model="python",
# launches that wait), and the kernel stops at breakpoint(), with or without it
# (tests/nodevice/test_refusals.py's rule: a call of a function kernels do not know)
def test_debugger_example_refused():
    from numba_vulkan import cuda
    import numpy as np

    num_entries = 8

    #
    # In the following code, we use explicit breakpoint function calls to insert
    # breakpoints.
    #
    @cuda.jit(debug=True, opt=False)
    def hello(input, output):
        gid = cuda.grid(1)
        size = len(input)
        if gid >= size:
            return

        # Print the value of the array at the current thread's index
        # Output will likely not happen until the kernel is finished executing
        # because host synchronization is needed to print the output.
        # Output is not guaranteed to be printed in thread order.
        print("input[", gid, "] =", input[gid])

        # Reverse the input array
        output[gid] = input[size - gid - 1]

        # Synchronize all threads in the block
        cuda.syncthreads()

        # Have the first thread print a message to indicate that all threads
        # have synchronized
        if gid == 0:
            print("All threads have synchronized (local memory array)")

        # Print the value of the output array at the current thread's index
        print("output[", gid, "] =", output[gid])

        # Allocate a new array in shared memory
        shared_array = cuda.shared.array(num_entries, dtype=np.int64)

        # Hit a manually-inserted breakpoint here
        breakpoint()

        # Fill the shared array with the input array with negative values in reverse order
        shared_array[gid] = -input[size - gid - 1]

        # Synchronize all threads in the block
        cuda.syncthreads()

        # Have the first thread print a message to indicate that all threads
        # have synchronized
        if gid == 0:
            print("All threads have synchronized (shared memory array)")

        # Print the value of the shared array at the current thread's index
        print("shared_array[", gid, "] =", shared_array[gid])

        # Demonstrate polymorphic variables by setting the value of a variable to a different type.
        # The print() calls are used to ensure that the variable is not optimized out.
        # Stepping through the code will show how the variable changes value and type with each assignment.
        # Only let the first thread do this to reduce clutter in the output.
        if gid == 0:
            # Hit another manually-inserted breakpoint here
            breakpoint()

            # Set the variable to different values and types.
            variable = True
            print("variable =", variable)
            variable = 0x80000000
            print("variable =", variable)
            variable = 0x8000000000000000
            print("variable =", variable)
            variable = 3.141592653589793
            print("variable =", variable)
            variable = 2.718281828459045
            print("variable =", variable)

    input = cuda.to_device(np.array(range(num_entries), dtype=np.int64))
    output = cuda.to_device(np.zeros(len(input), dtype=np.int64))
    with pytest.raises(VulkanUnsupportedError, match="calling 'breakpoint'"):
        hello[1, len(input)](input, output)
    with pytest.raises(VulkanUnsupportedError, match="calling 'breakpoint'"):
        cuda.jit(hello.py_func)[1, len(input)](input, output)
