// Memory shared with other APIs as file descriptors (VK_KHR_external_memory_fd):
// what runtime/cuda_interop.py hands to CUDA (CuPy, PyTorch) without a copy.
//
// An exportable buffer has a VkDeviceMemory of its own (a dedicated allocation,
// which CUDA's import is told about) allocated with VkExportMemoryAllocateInfo
// for OPAQUE_FD handles, in the memory type the device's arrays use. It is never
// pooled: the pool's buffers are not exportable, and memory another API has
// imported must not change owner under it. ExportFd gives a new descriptor per
// call; the importer (cuImportExternalMemory, or ImportFd here) takes it over.
// The payload is reference-counted by the driver, but the Python side keeps the
// Vulkan buffer alive as long as any import of it anyway.
//
// Ordering is not handled here: the caller waits for the Vulkan work using a
// buffer before another API reads it, and for the other API's work before
// Vulkan uses it (runtime/cuda_interop.py).
#include <cstring>

#include "vk/device.h"
#include "vk/fork.h"
#include "vk/instance.h"
#include "vk/result.h"

namespace nvk::vk {

namespace {

constexpr VkExternalMemoryHandleTypeFlagBits kFd = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
constexpr VkBufferUsageFlags kUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
    VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

}  // namespace

void Device::InitExternal(Instance& instance) {
    const InstanceFns& ifns = instance.fns();
    VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &ids;
    ifns.vkGetPhysicalDeviceProperties2(info_.handle, &props);
    std::memcpy(uuid_.data(), ids.deviceUUID, uuid_.size());

    if (!external_fd_ext_) {
        external_reason_ = "the driver does not offer VK_KHR_external_memory_fd";
        return;
    }
    auto external_props = reinterpret_cast<PFN_vkGetPhysicalDeviceExternalBufferProperties>(
        ifns.vkGetInstanceProcAddr(instance.handle(),
                                   "vkGetPhysicalDeviceExternalBufferProperties"));
    if (!external_props) {
        external_reason_ = "the loader lacks vkGetPhysicalDeviceExternalBufferProperties";
        return;
    }
    VkPhysicalDeviceExternalBufferInfo query{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
    query.usage = kUsage;
    query.handleType = kFd;
    VkExternalBufferProperties answer{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    external_props(info_.handle, &query, &answer);
    const VkExternalMemoryFeatureFlags need =
        VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
    if ((answer.externalMemoryProperties.externalMemoryFeatures & need) != need) {
        external_reason_ = "the driver cannot export and import storage buffers as OPAQUE_FD";
        return;
    }
    get_memory_fd_ = reinterpret_cast<PFN_vkGetMemoryFdKHR>(
        ifns.vkGetDeviceProcAddr(device_, "vkGetMemoryFdKHR"));
    if (!get_memory_fd_) external_reason_ = "the driver lacks vkGetMemoryFdKHR";
}

util::Result<Buffer*> Device::CreateExternalBuffer(uint64_t nbytes, int import_fd,
                                                   uint64_t import_size) {
    if (!exports_memory()) {
        return util::Unsupported("Vulkan device '" + info_.name +
                                 "' cannot share memory with other APIs: " + external_reason_);
    }
    auto buffer = std::make_unique<Buffer>();
    buffer->device = this;
    buffer->size = nbytes;
    VkExternalMemoryBufferCreateInfo external{
        VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = kFd;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.pNext = &external;
    info.size = nbytes;
    info.usage = kUsage;
    if (queue_families_.size() > 1) {  // as memory.cc: shared with the transfer family
        info.sharingMode = VK_SHARING_MODE_CONCURRENT;
        info.queueFamilyIndexCount = static_cast<uint32_t>(queue_families_.size());
        info.pQueueFamilyIndices = queue_families_.data();
    }
    NVK_VK_CHECK("vkCreateBuffer", fns_.vkCreateBuffer(device_, &info, nullptr, &buffer->buffer));
    VkMemoryRequirements req{};
    fns_.vkGetBufferMemoryRequirements(device_, buffer->buffer, &req);
    // The arrays' memory type where the external buffer may use it, else the first
    // device-local one it may.
    uint32_t type = array_type_;
    if (!(req.memoryTypeBits & (1u << type))) {
        Instance* instance = Instance::Get(0).value();
        VkPhysicalDeviceMemoryProperties mem{};
        instance->fns().vkGetPhysicalDeviceMemoryProperties(info_.handle, &mem);
        type = UINT32_MAX;
        for (uint32_t i = 0; i < mem.memoryTypeCount && type == UINT32_MAX; ++i) {
            if ((req.memoryTypeBits & (1u << i)) &&
                (mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
                type = i;
            }
        }
        if (type == UINT32_MAX) {
            DestroyBuffer(buffer.release());
            return util::Unsupported("no device-local memory type can hold exportable buffers");
        }
    }
    const uint64_t memory_size = import_fd >= 0 ? import_size : req.size;
    if (memory_size < req.size) {
        DestroyBuffer(buffer.release());
        return util::InvalidArgument("the imported memory (" + std::to_string(import_size) +
                                     " bytes) is smaller than a buffer of " +
                                     std::to_string(nbytes) + " bytes needs");
    }
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.pNext = &flags;
    dedicated.buffer = buffer->buffer;
    VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    VkImportMemoryFdInfoKHR import_info{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    if (import_fd >= 0) {
        import_info.pNext = &dedicated;
        import_info.handleType = kFd;
        import_info.fd = import_fd;
    } else {
        export_info.pNext = &dedicated;
        export_info.handleTypes = kFd;
    }
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = import_fd >= 0 ? static_cast<void*>(&import_info) : &export_info;
    alloc.allocationSize = memory_size;
    alloc.memoryTypeIndex = type;
    util::Status status =
        Check(fns_.vkAllocateMemory(device_, &alloc, nullptr, &buffer->memory), "vkAllocateMemory");
    if (status.ok()) {
        status = Check(fns_.vkBindBufferMemory(device_, buffer->buffer, buffer->memory, 0),
                       "vkBindBufferMemory");
    }
    if (status.ok() && arrays_mapped_ && type == array_type_) {
        // Mapped like the other arrays where they are (lavapipe); an unmapped buffer
        // is copied through staging instead (copy.cc), so a failure is no error.
        void* ptr = nullptr;
        if (fns_.vkMapMemory(device_, buffer->memory, 0, VK_WHOLE_SIZE, 0, &ptr) == VK_SUCCESS) {
            buffer->mapped = static_cast<uint8_t*>(ptr);
        }
    }
    if (!status.ok()) {
        DestroyBuffer(buffer.release());
        return status;
    }
    buffer->external_size = memory_size;
    VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address.buffer = buffer->buffer;
    buffer->address = fns_.vkGetBufferDeviceAddress(device_, &address);
    return buffer.release();
}

util::Result<BufferRef> Device::AllocateExportable(uint64_t nbytes) {
    NVK_RETURN_IF_ERROR(Usable());
    if (nbytes == 0) nbytes = 1;
    NVK_ASSIGN_OR_RETURN(Buffer * buffer, CreateExternalBuffer(nbytes, -1, 0));
    return BufferRef(buffer, [](Buffer* b) { b->device->RetireBuffer(b); });
}

util::Result<int> Device::ExportFd(const Buffer& buffer) {
    NVK_RETURN_IF_ERROR(Usable());
    if (!exports_memory()) {
        return util::Unsupported("Vulkan device '" + info_.name +
                                 "' cannot share memory with other APIs: " + external_reason_);
    }
    if (buffer.external_size == 0) {
        return util::InvalidArgument("the buffer was not allocated exportable");
    }
    VkMemoryGetFdInfoKHR info{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    info.memory = buffer.memory;
    info.handleType = kFd;
    int fd = -1;
    NVK_VK_CHECK("vkGetMemoryFdKHR", get_memory_fd_(device_, &info, &fd));
    return fd;
}

util::Result<BufferRef> Device::ImportFd(int fd, uint64_t nbytes, uint64_t memory_size) {
    NVK_RETURN_IF_ERROR(Usable());
    if (fd < 0) return util::InvalidArgument("not a file descriptor: " + std::to_string(fd));
    if (nbytes == 0) nbytes = 1;
    NVK_ASSIGN_OR_RETURN(Buffer * buffer, CreateExternalBuffer(nbytes, fd, memory_size));
    return BufferRef(buffer, [](Buffer* b) { b->device->RetireBuffer(b); });
}

}  // namespace nvk::vk
