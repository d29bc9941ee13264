// Kernel: a SPIR-V compute module on one device, and its pipelines.
//
// Kernels take no descriptor sets: arrays are device addresses inside the
// parameter block (ARCHITECTURE.md decision 3), so the pipeline layout holds
// only a push-constant range of push_size bytes. The workgroup size is given by
// specialization constants 0, 1, 2 (x, y, z), so one module serves every local
// size: a pipeline is created on first use of a local size and kept.
//
// Threads: Pipeline() may be called from many threads at once (mu_ guards the
// list of pipelines; the last-used entry is an atomic pointer into it). Destroying a Kernel never waits: its Vulkan
// objects are retired (Device::Retire) until the launches recorded so far are done.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vk/device.h"

namespace nvk::vk {

class Kernel {
  public:
    // `words`: the SPIR-V module, entry point "main". `push_size`: bytes of push
    // constants the module declares (0: none).
    static util::Result<std::unique_ptr<Kernel>> Create(Device& device, const uint32_t* words,
                                                        size_t count, uint32_t push_size);
    ~Kernel();
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    Device& device() const { return *device_; }
    uint32_t push_size() const { return push_size_; }
    VkPipelineLayout layout() const { return layout_; }
    size_t pipeline_count() const {
        std::lock_guard<std::mutex> lock(mu_);
        return pipelines_.size();
    }

    // The pipeline for workgroup size `local`; fails with kUnsupported when the
    // device does not allow that size. The last size used is answered without a lock.
    util::Result<VkPipeline> Pipeline(const uint32_t local[3]) {
        const Entry* last = last_.load(std::memory_order_acquire);
        if (last && local[0] == last->local[0] && local[1] == last->local[1] &&
            local[2] == last->local[2]) {
            return last->pipeline;
        }
        return FindOrCreate(local);
    }

    // What the driver reports about the pipeline it compiles for workgroup size
    // `local` (VK_KHR_pipeline_executable_properties: registers, code size, ...),
    // from a pipeline created for the query and destroyed after it. A diagnostic:
    // fails with kUnsupported where the driver lacks the extension.
    struct Statistic {
        std::string executable;  // the executable's name (a compute pipeline has one)
        std::string name;
        std::string description;
        bool integral = true;  // value_int holds it (bools as 0/1), else value_float
        int64_t value_int = 0;
        double value_float = 0.0;
    };
    // The driver's internal representations (its compiled code as text, where it
    // gives them): name, description, text. Left empty unless asked for.
    struct Representation {
        std::string executable, name, description, text;
    };
    struct Report {
        std::vector<Statistic> statistics;
        std::vector<Representation> representations;
    };
    util::Result<Report> Statistics(const uint32_t local[3], bool representations) const;

  private:
    struct Entry {  // never changed or freed while the kernel lives
        std::array<uint32_t, 3> local;
        VkPipeline pipeline;
    };

    explicit Kernel(Device& device) : device_(&device) {}
    util::Result<VkPipeline> FindOrCreate(const uint32_t local[3]);  // takes mu_
    // A new pipeline for workgroup size `local` (checked against the device's limits).
    util::Result<VkPipeline> CreatePipeline(const std::array<uint32_t, 3>& local,
                                            VkPipelineCreateFlags flags,
                                            VkPipelineCache cache) const;

    mutable std::mutex mu_;  // guards pipelines_
    Device* device_;
    uint32_t push_size_ = 0;
    VkShaderModule module_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    std::vector<std::unique_ptr<Entry>> pipelines_;
    std::atomic<const Entry*> last_{nullptr};  // the last one used
};

}  // namespace nvk::vk
