// Making a Launcher (launcher.h): the kernel's argument declarations turned, once,
// into the specs each launch checks its arguments against (launch_args.h), the
// hidden parameters' fixed values and the grid's own parameters; and the options
// the dispatcher sets afterwards (NumPy arguments, required layouts, last_block).
#include "bind/launcher.h"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "bind/errors.h"

namespace nvk::bind {

Launcher::Launcher(vk::Device* device, nb::object kernel, nb::list args, uint32_t param_size,
                   bool params_in_buffer, nb::object hidden)
    : device_(device), kernel_obj_(std::move(kernel)), in_buffer_(params_in_buffer) {
    kernel_ = nb::cast<PyKernel&>(kernel_obj_).kernel.get();
    if (&kernel_->device() != device_) {
        Throw(util::InvalidArgument("the kernel was loaded on another device"));
    }
    param_size_ = param_size;
    block_bytes_ = (param_size + 15u) & ~15u;
    last_block_.assign(block_bytes_, 0);
    std::vector<bool> covered(param_size, false);  // bytes every launch writes
    auto cover = [&](uint32_t off, uint32_t n) {
        for (uint32_t k = off; k < off + n && k < param_size; ++k) covered[k] = true;
    };
    auto check = [&](const kir::ArgDecl& a, uint32_t off, uint32_t n) {
        if (off + n > param_size) {
            Throw(util::InvalidArgument("argument '" + a.name + "' at offset " +
                                        std::to_string(off) +
                                        " lies outside the parameter block of " +
                                        std::to_string(param_size) + " bytes"));
        }
        cover(off, n);
    };
    nb::dict values = hidden.is_none() ? nb::dict() : nb::cast<nb::dict>(hidden);
    for (nb::handle h : args) {
        const kir::ArgDecl& a = nb::cast<const kir::ArgDecl&>(h);
        if (a.kind == kir::ArgKind::kHidden) {
            AddHidden(a, values, check);
            continue;
        }
        ArgSpec spec;
        if (a.kind == kir::ArgKind::kArray) {
            spec.is_array = true;
            spec.code = DtypeCode(a.dtype_kind, a.itemsize, a.record_key);
            spec.ndim = static_cast<int>(a.ndim);
            spec.addr_offset = a.offset;
            spec.index_bytes = kir::MemoryBytes(a.index);
            if (spec.ndim > kMaxDims || a.extents.size() != a.ndim ||
                a.strides.size() != a.ndim ||
                (spec.index_bytes != 4 && spec.index_bytes != 8)) {
                Throw(util::InvalidArgument("malformed array argument '" + a.name + "'"));
            }
            check(a, spec.addr_offset, 8);
            for (int i = 0; i < spec.ndim; ++i) {
                spec.extent_offsets[i] = a.extents[i];
                spec.stride_offsets[i] = a.strides[i];
                check(a, spec.extent_offsets[i], spec.index_bytes);
                check(a, spec.stride_offsets[i], spec.index_bytes);
            }
            spec.written = a.written;
            ++array_count_;
        } else {
            spec = ScalarSpec(a);
            if (spec.nbytes != 4 && spec.nbytes != 8) {
                Throw(util::InvalidArgument("argument '" + a.name + "' has a " +
                                            kir::ScalarName(a.slot) +
                                            " slot; the launcher writes 4- and 8-byte slots"));
            }
            check(a, spec.offset, spec.nbytes);
        }
        specs_.push_back(spec);
    }
    if (fixed_.size() != nb::len(values)) {
        Throw(util::InvalidArgument("hidden values were given for parameters the kernel "
                                    "does not have"));
    }
    // Where every byte of the block is written per launch, launch() skips the
    // memset (the alignment padding past param_size is never read by a kernel).
    zero_block_ = std::find(covered.begin(), covered.end(), false) != covered.end();
}

// One hidden parameter: a grid one by its name, any other from `values`.
template <typename Check>
void Launcher::AddHidden(const kir::ArgDecl& a, nb::dict values, Check& check) {
    const uint32_t nbytes = kir::MemoryBytes(a.slot);
    check(a, a.offset, nbytes);
    static const char* kAxes[3] = {"x", "y", "z"};
    for (int axis = 0; axis < 3; ++axis) {
        if (nbytes != 4) break;
        if (a.name == std::string("grid.base.") + kAxes[axis]) {
            grid_.has_base = grid_.reads_ids = true;
            grid_.base[axis] = a.offset;
            grid_.index_bytes = kir::MemoryBytes(a.index);
            return;
        }
        if (axis == 0 && a.name == "grid.stride.x") {
            grid_.has_stride = true;
            grid_.stride = a.offset;
            return;
        }
        if (a.name == std::string("grid.groups.") + kAxes[axis]) {
            grid_.has_groups = grid_.reads_ids = true;
            grid_.groups[axis] = a.offset;
            grid_.index_bytes = kir::MemoryBytes(a.index);
            return;
        }
    }
    nb::str key(a.name.c_str());
    if (!values.contains(key)) {
        Throw(util::InvalidArgument("the kernel has a hidden parameter '" + a.name +
                                    "': give its value (hidden={name: value})"));
    }
    nb::handle v = values[key];
    FixedValue fixed;
    fixed.offset = a.offset;
    fixed.nbytes = nbytes;
    PyBuffer* buffer = nullptr;
    DeviceArrayBase* array = nullptr;
    if (nb::try_cast<DeviceArrayBase*>(v, array) && array) {
        // A hidden array (global arrays, the status buffer): the address of its
        // element 0; its extents and strides are hidden parameters of their own.
        if (nbytes != 8 || array->device != device_) {
            Throw(util::InvalidArgument("hidden parameter '" + a.name +
                                        "': a device array of this device needs a u64 "
                                        "slot"));
        }
        fixed.buffer = array->buffer;
        fixed.value = array->address();
        fixed.written = a.written;
    } else if (nb::try_cast<PyBuffer*>(v, buffer) && buffer) {
        if (nbytes != 8 || buffer->ref->device != device_) {
            Throw(util::InvalidArgument("hidden parameter '" + a.name +
                                        "': a buffer of this device needs a u64 slot"));
        }
        fixed.buffer = buffer->ref;
        fixed.value = buffer->ref->address;
    } else if (nbytes == 4 || nbytes == 8) {
        fixed.value = nb::cast<uint64_t>(v);  // raises for a negative or too large int
        if (nbytes == 4 && fixed.value > UINT32_MAX) {
            Throw(util::InvalidArgument("hidden parameter '" + a.name +
                                        "': the value does not fit its 32-bit slot"));
        }
    } else {
        Throw(util::InvalidArgument("hidden parameter '" + a.name + "': 4- or 8-byte slots"));
    }
    fixed_.push_back(std::move(fixed));
}

void Launcher::AllowNumpy(nb::list formats) {
    if (nb::len(formats) != specs_.size()) {
        Throw(util::InvalidArgument("allow_numpy: one entry per argument"));
    }
    if (!device_->host_args()) return;  // NVK_VULKAN_HOST_ARGS=off
    for (size_t i = 0; i < specs_.size(); ++i) {
        nb::handle f = formats[i];
        if (f.is_none()) continue;
        if (!specs_[i].is_array) {
            Throw(util::InvalidArgument("allow_numpy: argument " + std::to_string(i) +
                                        " is no array"));
        }
        specs_[i].numpy_format = nb::cast<std::string>(f);
    }
}

void Launcher::RequireLayouts(nb::list layouts) {
    if (nb::len(layouts) != specs_.size()) {
        Throw(util::InvalidArgument("require_layouts: one entry per argument"));
    }
    for (size_t i = 0; i < specs_.size(); ++i) {
        nb::handle l = layouts[i];
        if (l.is_none()) continue;
        std::string s = nb::cast<std::string>(l);
        if (!specs_[i].is_array || (s != "C" && s != "F")) {
            Throw(util::InvalidArgument("require_layouts: argument " + std::to_string(i) +
                                        " takes no layout '" + s + "'"));
        }
        specs_[i].layout = s[0];
    }
}

nb::bytes Launcher::LastBlock() const {
    if (!keep_last_.load()) {
        Throw(util::InvalidArgument("set keep_last_block = True before launching to keep "
                                    "the parameter block of the last launch"));
    }
    std::lock_guard<std::mutex> lock(last_mutex_);
    return nb::bytes(reinterpret_cast<const char*>(last_block_.data()), param_size_);
}

}  // namespace nvk::bind
