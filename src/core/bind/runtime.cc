// numba_vulkan._core's runtime half: instance, devices, validation messages.
// Arrays and buffers are in runtime_array.cc, kernels and the launcher in
// runtime_launch.cc. The Python API (numba_vulkan.runtime) is built on these.
//
// Threads and the GIL: every binding that may wait for the GPU releases the GIL
// around the wait; the device guards its own state (vk/device.h). Waits run
// CheckSignals between their slices, which takes the GIL briefly in the main
// thread only and runs Python's signal handlers, so Ctrl-C interrupts a wait.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <mutex>

#include "bind/errors.h"
#include "bind/graph_capture.h"
#include "bind/runtime_types.h"
#include "vk/fork.h"
#include "vk/instance.h"

namespace nvk::bind {

namespace {

vk::Instance* GetInstance(int debug_level) { return Unwrap(vk::Instance::Get(debug_level)); }

// Python's signal handlers run only in the main thread, so other threads need not
// take the GIL between wait slices at all.
unsigned long g_main_thread = 0;

util::Status CheckSignals() {
    if (PyThread_get_thread_ident() != g_main_thread || !Py_IsInitialized()) {
        return util::Status::Ok();
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    const int failed = PyErr_CheckSignals();  // leaves KeyboardInterrupt set, for Throw
    PyGILState_Release(gil);
    if (failed == 0) return util::Status::Ok();
    return {util::Code::kInterrupted, "interrupted"};
}

// Runs f() with the GIL released, then raises its error, if any.
template <typename F>
void Released(F&& f) {
    util::Status s;
    {
        nb::gil_scoped_release release;
        s = f();
    }
    ThrowIfError(s);
}

// A stream that a graph captures runs nothing until the graph is replayed: waiting
// for it, or asking whether it is done, has no answer (VulkanGraphError).
void RefuseWhileCapturing(PyStream& s, const char* what) {
    if (s.capture() == nullptr) return;
    nb::object cls = nb::module_::import_("numba_vulkan.errors").attr("VulkanGraphError");
    const std::string message =
        std::string("Stream.") + what +
        " while a graph captures the stream: its work runs when the graph is replayed; end "
        "the capture first";
    PyErr_SetObject(cls.ptr(), nb::str(message.c_str()).ptr());
    throw nb::python_error();
}

nb::dict InfoDict(const vk::PhysicalDeviceInfo& d) {
    nb::dict r;
    auto tuple3 = [](const std::array<uint32_t, 3>& a) { return nb::make_tuple(a[0], a[1], a[2]); };
    nb::list nan, denorm;
    for (int w : d.nan_preserve) nan.append(w);
    for (int w : d.denorm_preserve) denorm.append(w);
    r["index"] = d.index;
    r["name"] = d.name;
    r["kind"] = d.kind;
    r["handle"] = reinterpret_cast<uintptr_t>(d.handle);
    r["api_version"] = nb::make_tuple(VK_API_VERSION_MAJOR(d.api_version),
                                      VK_API_VERSION_MINOR(d.api_version),
                                      VK_API_VERSION_PATCH(d.api_version));
    r["vendor_id"] = d.vendor_id;
    r["device_id"] = d.device_id;
    r["driver_name"] = d.driver_name;
    r["driver_info"] = d.driver_info;
    r["float64"] = d.float64;
    r["int64"] = d.int64;
    r["int16"] = d.int16;
    r["int8"] = d.int8;
    r["int64_atomics"] = d.int64_atomics;
    r["float16"] = d.float16;
    r["storage16"] = d.storage16;
    r["storage8"] = d.storage8;
    r["float32_atomic_add"] = d.float32_atomic_add;
    r["push_constant8"] = d.push_constant8;
    r["push_constant16"] = d.push_constant16;
    r["max_local_size"] = tuple3(d.max_local_size);
    r["max_local_invocations"] = d.max_local_invocations;
    r["max_groups"] = tuple3(d.max_groups);
    r["max_shared_memory"] = d.max_shared_memory;
    r["max_push_constants"] = d.max_push_constants;
    r["nan_preserve"] = nb::tuple(nan);
    r["denorm_preserve"] = nb::tuple(denorm);
    r["timestamp_bits"] = d.timestamp_bits;
    r["timestamp_period"] = d.timestamp_period;
    r["subgroup_size"] = d.subgroup_size;
    r["subgroup_basic"] = d.subgroup_basic;
    r["subgroup_vote"] = d.subgroup_vote;
    r["subgroup_arithmetic"] = d.subgroup_arithmetic;
    r["subgroup_ballot"] = d.subgroup_ballot;
    r["subgroup_shuffle"] = d.subgroup_shuffle;
    r["subgroup_shuffle_relative"] = d.subgroup_shuffle_relative;
    r["subgroup_partitioned"] = d.subgroup_partitioned;
    r["vulkan_memory_model"] = d.vulkan_memory_model;
    r["bfloat16_type"] = d.bfloat16_type;
    r["bfloat16_matrix"] = d.bfloat16_matrix;
    nb::list shapes;
    for (const auto& s : d.matrix_shapes) {
        shapes.append(nb::make_tuple(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]));
    }
    r["matrix_shapes_raw"] = shapes;
    r["device_local_bytes"] = d.device_local_bytes;
    r["compute_family"] = d.compute_family;
    r["transfer_family"] = d.transfer_family;
    return r;
}

nb::dict Stats(const vk::PoolStats& s) {
    nb::dict r;
    r["pooled_bytes"] = s.pooled_bytes;
    r["pooled_buffers"] = s.pooled_buffers;
    r["live_bytes"] = s.live_bytes;
    r["hits"] = s.hits;
    r["misses"] = s.misses;
    r["retired_bytes"] = s.retired_bytes;
    r["peak_bytes"] = s.peak_bytes;
    return r;
}

}  // namespace

nb::class_<vk::Device> InitRuntimeDevices(nb::module_& m) {
    m.def("vk_list_devices",
          [](int debug_level, bool refresh) {
              vk::Instance* instance = GetInstance(debug_level);
              auto devices = Unwrap(instance->Devices(refresh));
              nb::list out;
              for (const auto& d : devices) out.append(InfoDict(d));
              return out;
          },
          nb::arg("debug_level"), nb::arg("refresh") = false,
          "Facts of every Vulkan 1.2+ device with a compute queue, as dicts.");
    m.def("vk_validation_messages",
          [](bool clear) {
              nb::list out;
              auto instance = vk::Instance::Get(0);
              if (!instance.ok()) return out;
              for (auto& msg : (*instance)->Messages(clear)) {
                  out.append(nb::make_tuple(msg.severity, msg.message));
              }
              return out;
          },
          nb::arg("clear") = false);
    m.def("vk_instance_debug_level", [](int debug_level) {
        return GetInstance(debug_level)->debug_level();
    });

    nb::class_<PyTimestamp>(m, "Timestamp", "A timestamp recorded on a device (Event).")
        .def_prop_ro("value", [](PyTimestamp& t) { return t.ref->value; },
                     "The timeline value of the batch that writes it.");

    nb::class_<vk::Device> cls(m, "Device", "A Vulkan logical device (one per physical device).");
    cls
        .def_static(
            "open",
            [](int index, int debug_level, int logical) {
                // A parent's thread may have held `mutex` (opening a device) at the fork.
                if (vk::Forked()) Throw(vk::ForkedError());
                static std::mutex mutex;
                // By (physical device, logical): `logical` > 0 opens the physical device
                // once more as a distinct VkDevice (NUMBA_VULKAN_VISIBLE_DEVICES="0,0").
                static std::map<std::pair<int, int>, vk::Device*> open;
                std::lock_guard<std::mutex> lock(mutex);
                auto it = open.find({index, logical});
                if (it != open.end()) {
                    ThrowIfError(it->second->Usable());  // forked or lost
                    return it->second;
                }
                vk::Instance* instance = GetInstance(debug_level);
                auto devices = Unwrap(instance->Devices(false));
                if (index < 0 || index >= static_cast<int>(devices.size())) {
                    Throw(util::InvalidArgument("no Vulkan device " + std::to_string(index)));
                }
                vk::Device* device = Unwrap(vk::Device::Create(*instance, devices[index]));
                open[{index, logical}] = device;
                return device;
            },
            nb::rv_policy::reference, nb::arg("index"), nb::arg("debug_level"),
            nb::arg("logical") = 0)
        .def_prop_ro("handle",
                     [](vk::Device& d) { return reinterpret_cast<uintptr_t>(d.handle()); })
        .def_prop_ro("queue", [](vk::Device& d) { return reinterpret_cast<uintptr_t>(d.queue()); })
        .def_prop_ro("stream_queue",
                     [](vk::Device& d) { return reinterpret_cast<uintptr_t>(d.stream_queue()); })
        .def_prop_ro("command_pool",
                     [](vk::Device& d) { return reinterpret_cast<uint64_t>(d.command_pool()); })
        .def_prop_ro("family", [](vk::Device& d) { return d.info().compute_family; })
        .def_prop_ro("transfer_family", [](vk::Device& d) { return d.info().transfer_family; })
        .def_prop_ro("arrays_mapped", &vk::Device::arrays_mapped)
        .def("host_args_memory", &vk::Device::host_args_memory, nb::arg("kind"),
             "The memory small NumPy arguments use (vk/host_args.cc): kind 0 those the "
             "kernel only reads, 1 those it may write, 2 the buffers written ones are "
             "copied back into: 'mapped arrays', 'host', 'device-local host-visible', "
             "'none' (kind 2 without copies back) or 'off'.")
        .def_prop_ro("barrier_count", &vk::Device::barrier_count,
                     "Memory barriers recorded so far (hazard tracking; for tests).")
        .def_prop_rw("pool_limit", &vk::Device::pool_limit, &vk::Device::set_pool_limit)
        .def_prop_rw("sync_launches", &vk::Device::sync_launches, &vk::Device::set_sync_launches)
        .def_prop_rw("timeout", &vk::Device::timeout, &vk::Device::set_timeout,
                     "Seconds one wait may take before VulkanTimeoutError (0: no limit).")
        .def("check_usable", [](vk::Device& d) { ThrowIfError(d.Usable()); },
             "Raise VulkanForkError or VulkanDeviceLostError if the device cannot be used.")
        .def("_simulate_device_lost", &vk::Device::SimulateDeviceLost,
             "Mark the device lost, as VK_ERROR_DEVICE_LOST would (for tests).")
        .def("pool_stats",
             [](vk::Device& d) {
                 ThrowIfError(d.Usable());  // a forked child must not take the device's lock
                 return Stats(d.pool_stats());
             })
        .def("trim",
             [](vk::Device& d, uint64_t limit) { Released([&] { return d.Trim(limit); }); },
             nb::arg("limit") = 0)
        .def("synchronize",
             [](vk::Device& d) { Released([&] { return d.Synchronize(); }); })
        .def("record_timestamp",
             [](vk::Device& d) {
                 util::Result<vk::TimestampRef> ts = util::Status::Ok();
                 {
                     nb::gil_scoped_release release;  // may wait for a batch slot
                     ts = d.RecordTimestamp();
                 }
                 return PyTimestamp{Unwrap(std::move(ts))};
             },
             "Record a timestamp after the work so far (a Timestamp).")
        .def("read_timestamp_ns",
             [](vk::Device& d, PyTimestamp& ts) {
                 util::Result<double> r = util::Status::Ok();
                 {
                     nb::gil_scoped_release release;
                     r = d.ReadTimestampNs(*ts.ref);
                 }
                 return Unwrap(std::move(r));
             },
             nb::arg("timestamp"))
        .def("create_stream",
             [](vk::Device& d) {
                 vk::StreamState* s = Unwrap(d.AcquireStream());
                 return PyStream{std::make_shared<StreamHandle>(&d, s)};
             },
             "A new stream (vk/stream.cc).")
        .def_prop_ro("stream_queues",
                     [](vk::Device& d) {
                         return nb::make_tuple(d.stream_kernel_queue(), d.stream_copy_queue());
                     },
                     "(kernels, copies) of streams: 0 the device's queue, 1 a second compute "
                     "queue, 2 a queue of the transfer-only family.")
        .def("timestamp_done",
             [](vk::Device& d, PyTimestamp& ts) {
                 ThrowIfError(d.Usable());
                 return d.TimestampDone(*ts.ref);
             },
             nb::arg("timestamp"), "Whether the timestamp has been written (never waits).")
        .def("wait_value",
             [](vk::Device& d, uint64_t value) { Released([&] { return d.WaitValue(value); }); })
        .def("flush", [](vk::Device& d) { Released([&] { return d.Flush(); }); })
        .def("pipeline_cache_data",
             [](vk::Device& d) {
                 std::vector<uint8_t> data = Unwrap(d.PipelineCacheData());
                 return nb::bytes(reinterpret_cast<const char*>(data.data()), data.size());
             },
             "The VkPipelineCache's contents (runtime/cache.py saves them).")
        .def("merge_pipeline_cache",
             [](vk::Device& d, nb::bytes data) {
                 ThrowIfError(d.MergePipelineCache(data.c_str(), data.size()));
             },
             nb::arg("data"), "Merge pipeline cache data saved earlier (a mismatch is ignored).")
        .def("idle", [](vk::Device& d) {
            ThrowIfError(d.Usable());
            return d.Idle();
        });
    InitRuntimeStreams(m);
    return cls;
}

void InitRuntimeStreams(nb::module_& m) {
    using Regions = nb::ndarray<const uint64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    nb::class_<PyStream>(m, "Stream", "The device side of runtime.Stream.")
        .def("copy",
             [](PyStream& s, PyBuffer& src, PyBuffer& dst, Regions regions) {
                 if (src.ref->device != &s.device() || dst.ref->device != &s.device()) {
                     Throw(util::InvalidArgument("a buffer belongs to another device than the "
                                                 "stream"));
                 }
                 if (regions.shape(1) != 3) {
                     Throw(util::InvalidArgument("regions must have 3 columns: source offset, "
                                                 "destination offset, bytes"));
                 }
                 std::vector<VkBufferCopy> list(regions.shape(0));
                 const uint64_t* r = regions.data();
                 for (size_t i = 0; i < list.size(); ++i) {
                     list[i] = VkBufferCopy{r[3 * i], r[3 * i + 1], r[3 * i + 2]};
                 }
                 if (GraphCapture* capture = s.capture()) {  // into the graph (graph_capture.h)
                     if (!list.empty()) capture->AddCopy(src.ref, dst.ref, list);
                     return;
                 }
                 Released([&] {
                     return s.device().StreamCopy(s.state(), *src.ref, *dst.ref, list.data(),
                                                  list.size());
                 });
             },
             nb::arg("src"), nb::arg("dst"), nb::arg("regions"),
             "Enqueue copies of (source offset, destination offset, bytes) rows.")
        .def("query", [](PyStream& s) {
            RefuseWhileCapturing(s, "query()");
            ThrowIfError(s.device().Usable());
            return Unwrap(s.device().StreamDone(s.state()));
        })
        .def("synchronize",
             [](PyStream& s) {
                 RefuseWhileCapturing(s, "synchronize()");
                 Released([&] { return s.device().StreamSynchronize(s.state()); });
             })
        .def_prop_ro("capturing", [](PyStream& s) { return s.capture() != nullptr; },
                     "Whether a graph captures the stream's work (graph_capture.h).")
        .def_prop_ro("value",
                     [](PyStream& s) { return s.device().StreamValue(s.state()); },
                     "The timeline value of the last work enqueued (0: none yet); launches not "
                     "yet submitted (vk/stream_launch.cc) count.")
        .def_prop_ro("completed",
                     [](PyStream& s) {
                         ThrowIfError(s.device().Usable());
                         return s.device().StreamCompleted(s.state());
                     },
                     "The last timeline value known complete (never waits).")
        .def("record_timestamp", [](PyStream& s) {
            if (GraphCapture* capture = s.capture()) {
                return PyTimestamp{Unwrap(capture->graph().AddTimestamp())};
            }
            util::Result<vk::TimestampRef> ts = util::Status::Ok();
            {
                nb::gil_scoped_release release;
                ts = s.device().StreamTimestamp(s.state());
            }
            return PyTimestamp{Unwrap(std::move(ts))};
        });
}

void InitRuntime(nb::module_& m) {
    // Devices, their buffers and kernels live until the process ends; arrays held
    // by module globals at exit are not leaks worth reporting.
    nb::set_leak_warnings(false);
    g_main_thread = nb::cast<unsigned long>(
        nb::module_::import_("threading").attr("main_thread")().attr("ident"));
    vk::SetWaitCheck(&CheckSignals);
    // The runtime's constants, read by runtime.Device and runtime.Event (never copied).
    m.attr("MAX_BATCH") = vk::kMaxBatch;
    m.attr("MAX_IN_FLIGHT") = vk::kMaxInFlight;
    m.attr("BATCH_SLOTS") = vk::kMaxInFlight + 1;
    m.attr("PARAM_ARENA_BYTES") = vk::kParamArenaBytes;
    m.attr("QUERIES") = vk::kQueries;
    m.attr("KERNEL_SLOTS") = vk::kKernelSlots;
    nb::class_<vk::Device> device_class = InitRuntimeDevices(m);
    InitRuntimeArrays(m);
    InitRuntimeExternal(m);
    InitRuntimeKernels(m, device_class);
    InitRuntimeLaunch(m);
    InitRuntimeGraphs(m);
}

}  // namespace nvk::bind
