// Runtime tests on the machine's default Vulkan device (lavapipe in CI); they
// skip where no Vulkan 1.2 device exists.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "vk/copy_regions.h"
#include "vk/device.h"
#include "vk/fork.h"
#include "vk/instance.h"
#include "vk/pipeline.h"
#include "vk/result.h"
#include "vk/vk_testing.h"

namespace nvk::vk {
namespace {

TEST(Result, NamesTheVkResult) {
    util::Status s = Check(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory");
    EXPECT_EQ(s.code(), util::Code::kOutOfMemory);
    EXPECT_EQ(s.message(), "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY");
    s = Check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit");
    EXPECT_EQ(s.code(), util::Code::kVulkan);
    EXPECT_NE(s.message().find("VK_ERROR_DEVICE_LOST"), std::string::npos);
    EXPECT_TRUE(Check(VK_SUCCESS, "x").ok());
}

std::vector<VkBufferCopy> g_recorded;  // what the stand-in vkCmdCopyBuffer was given

void VKAPI_CALL RecordCopy(VkCommandBuffer, VkBuffer, VkBuffer, uint32_t n,
                           const VkBufferCopy* regions) {
    g_recorded.insert(g_recorded.end(), regions, regions + n);
}

TEST(CopyRegions, RegionsPast1GiBAreCutInto1GiBPieces) {
    DeviceFns fns{};
    fns.vkCmdCopyBuffer = RecordCopy;
    constexpr VkDeviceSize kGiB = VkDeviceSize{1} << 30;
    // A region of 2^31 bytes or more crashed lavapipe or copied nothing (copy_regions.h).
    const VkBufferCopy regions[] = {{16, 32, 2 * kGiB + 5}, {0, 8, 100}};
    CmdCopyBuffer(fns, VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, regions, 2);
    ASSERT_EQ(g_recorded.size(), 4u);
    const VkBufferCopy want[] = {{16, 32, kGiB}, {16 + kGiB, 32 + kGiB, kGiB},
                                 {16 + 2 * kGiB, 32 + 2 * kGiB, 5}, {0, 8, 100}};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(g_recorded[i].srcOffset, want[i].srcOffset) << i;
        EXPECT_EQ(g_recorded[i].dstOffset, want[i].dstOffset) << i;
        EXPECT_EQ(g_recorded[i].size, want[i].size) << i;
    }
    g_recorded.clear();
    CmdCopyBuffer(fns, VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, regions + 1, 1);
    ASSERT_EQ(g_recorded.size(), 1u);  // small regions pass as they are
    EXPECT_EQ(g_recorded[0].size, 100u);
    g_recorded.clear();
}

TEST(Device, WriteReadRoundTrip) {
    REQUIRE_DEVICE();
    auto buffer = device->Allocate(1000);
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    std::vector<uint32_t> in(250), out(250, 0);
    for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 7 + 1;
    ASSERT_TRUE(device->Write(**buffer, 0, in.data(), 1000).ok());
    ASSERT_TRUE(device->Read(**buffer, 0, out.data(), 1000).ok());
    EXPECT_EQ(in, out);
    EXPECT_FALSE(device->Read(**buffer, 1000, out.data(), 1000).ok());
}

TEST(Device, PinnedMemoryIsMappedAndCopiedDirectly) {
    REQUIRE_DEVICE();
    auto pinned = device->AllocatePinned(4096);
    ASSERT_TRUE(pinned.ok()) << pinned.status().message();
    ASSERT_NE((*pinned)->mapped, nullptr);
    for (int i = 0; i < 1024; ++i) reinterpret_cast<uint32_t*>((*pinned)->mapped)[i] = i * 3;
    auto array = device->Allocate(4096);
    ASSERT_TRUE(array.ok());
    ASSERT_TRUE(device->Copy(**pinned, 0, **array, 0, 4096).ok());  // one vkCmdCopyBuffer
    std::vector<uint32_t> out(1024);
    ASSERT_TRUE(device->Read(**array, 0, out.data(), 4096).ok());
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(out[i], static_cast<uint32_t>(i * 3));
}

TEST(Device, PipelineCacheDataRoundTrips) {
    REQUIRE_DEVICE();
    auto data = device->PipelineCacheData();
    ASSERT_TRUE(data.ok()) << data.status().message();
    ASSERT_GE(data->size(), 16u + VK_UUID_SIZE);  // at least the header
    EXPECT_TRUE(device->MergePipelineCache(data->data(), data->size()).ok());
    // Data of another driver (a header with another UUID) is ignored, not an error.
    std::vector<uint8_t> foreign = *data;
    for (size_t i = 16; i < 16 + VK_UUID_SIZE; ++i) foreign[i] ^= 0xff;
    EXPECT_TRUE(device->MergePipelineCache(foreign.data(), foreign.size()).ok());
}

TEST(Device, PoolReusesReleasedBuffers) {
    REQUIRE_DEVICE();
    ASSERT_TRUE(device->Trim(0).ok());
    PoolStats before = device->pool_stats();
    VkBuffer first;
    {
        auto a = device->Allocate(4096);
        ASSERT_TRUE(a.ok());
        first = (*a)->buffer;
    }
    EXPECT_EQ(device->pool_stats().pooled_buffers, 1u);
    auto b = device->Allocate(4000);  // same bucket
    ASSERT_TRUE(b.ok());
    EXPECT_EQ((*b)->buffer, first);
    EXPECT_EQ(device->pool_stats().hits, before.hits + 1);
    b.value().reset();
    ASSERT_TRUE(device->Trim(0).ok());
    EXPECT_EQ(device->pool_stats().pooled_bytes, 0u);
}

TEST(Kernel, DispatchWritesEveryElement) {
    REQUIRE_DEVICE();
    std::vector<uint32_t> words = Assemble(NVK_VK_TESTDATA "/double_index.spvasm");
    ASSERT_FALSE(words.empty());
    auto kernel = Kernel::Create(*device, words.data(), words.size(), 16);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    const uint32_t n = 1000;
    auto buffer = device->Allocate(n * 4);
    ASSERT_TRUE(buffer.ok());
    std::vector<uint32_t> zeros(n, 0), out(n, 1);
    ASSERT_TRUE(device->Write(**buffer, 0, zeros.data(), n * 4).ok());
    uint32_t local[3] = {64, 1, 1};
    uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    auto pipeline = (*kernel)->Pipeline(local);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
    // Many launches: exercises batching and the in-flight limit.
    for (int rep = 0; rep < 50; ++rep) {
        struct { uint64_t address; uint32_t n; uint32_t pad; } params{(*buffer)->address, n, 0};
        Buffer* used = buffer->get();
        auto value =
            device->RecordDispatch(**kernel, *pipeline, groups, &params, 16, false, &used, 1);
        ASSERT_TRUE(value.ok()) << value.status().message();
        EXPECT_EQ((*buffer)->last_use.load(), *value);
    }
    ASSERT_TRUE(device->Read(**buffer, 0, out.data(), n * 4).ok());
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * i) << i;

    uint32_t too_big[3] = {100000, 1, 1};
    auto bad = (*kernel)->Pipeline(too_big);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), util::Code::kUnsupported);
    EXPECT_TRUE(device->Synchronize().ok());

    // Timestamps around more launches: later ones read later times.
    if (device->info().timestamp_bits > 0) {
        auto q0 = device->RecordTimestamp();
        ASSERT_TRUE(q0.ok()) << q0.status().message();
        struct { uint64_t address; uint32_t n; uint32_t pad; } params{(*buffer)->address, n, 0};
        Buffer* used = buffer->get();
        for (int rep = 0; rep < 10; ++rep) {
            auto value =
                device->RecordDispatch(**kernel, *pipeline, groups, &params, 16, false, &used, 1);
            ASSERT_TRUE(value.ok());
        }
        auto q1 = device->RecordTimestamp();
        ASSERT_TRUE(q1.ok());
        auto t0 = device->ReadTimestampNs(**q0);
        auto t1 = device->ReadTimestampNs(**q1);
        ASSERT_TRUE(t0.ok() && t1.ok());
        EXPECT_GE(*t1, *t0);
        EXPECT_GT(*t1, 0.0);
    }
}

TEST(Device, PoolCountsRetiredBuffersUntilTheDeviceIsPastThem) {
    REQUIRE_DEVICE();
    std::vector<uint32_t> words = Assemble(NVK_VK_TESTDATA "/double_index.spvasm");
    auto kernel = Kernel::Create(*device, words.data(), words.size(), 16);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    uint32_t local[3] = {64, 1, 1};
    auto pipeline = (*kernel)->Pipeline(local);
    ASSERT_TRUE(pipeline.ok());
    ASSERT_TRUE(device->Synchronize().ok());
    ASSERT_TRUE(device->Trim(0).ok());
    const uint64_t limit = device->pool_limit();
    device->set_pool_limit(0);  // every released buffer is retired, none pooled
    const uint32_t n = 1 << 16;
    {
        auto buffer = device->Allocate(n * 4);
        ASSERT_TRUE(buffer.ok());
        EXPECT_GE(device->pool_stats().peak_bytes, device->pool_stats().live_bytes);
        struct { uint64_t address; uint32_t n; uint32_t pad; } params{(*buffer)->address, n, 0};
        Buffer* used = buffer->get();
        uint32_t groups[3] = {n / 64, 1, 1};
        ASSERT_TRUE(
            device->RecordDispatch(**kernel, *pipeline, groups, &params, 16, false, &used, 1).ok());
    }  // released while its launch is recorded, not yet submitted: retired, not destroyed
    PoolStats held = device->pool_stats();
    EXPECT_EQ(held.retired_bytes, uint64_t{n} * 4);
    EXPECT_EQ(held.pooled_bytes, 0u);
    EXPECT_GE(held.peak_bytes, held.retired_bytes);
    ASSERT_TRUE(device->Synchronize().ok());  // past its last use: destroyed
    EXPECT_EQ(device->pool_stats().retired_bytes, 0u);
    device->set_pool_limit(limit);
}

// Makes the code of the Vulkan loader, its layers and the drivers (lavapipe,
// NVIDIA) inaccessible in this process, so that a call into them crashes at once
// (tests/device/_process_child.py does the same from Python; the first page of a
// file's first mapping keeps its ELF headers, which the unwinder reads).
int TrapDriver() {
    std::ifstream maps("/proc/self/maps");
    const long page = sysconf(_SC_PAGESIZE);
    int trapped = 0;
    for (std::string line; std::getline(maps, line);) {
        std::istringstream in(line);
        std::string range, perms, offset, dev, inode, path;
        in >> range >> perms >> offset >> dev >> inode >> path;
        if (perms.find('x') == std::string::npos) continue;
        const std::string name = path.substr(path.rfind('/') + 1);
        bool driver = false;
        for (const char* key : {"libvulkan", "libVkLayer", "lvp", "libGLX_nvidia",
                                "libEGL_nvidia", "libnvidia-"}) {
            driver = driver || name.find(key) != std::string::npos;
        }
        if (!driver) continue;
        uintptr_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        const uintptr_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
        if (std::stoull(offset, nullptr, 16) == 0) start += page;
        if (start < end && mprotect(reinterpret_cast<void*>(start), end - start, PROT_NONE) == 0) {
            ++trapped;
        }
    }
    return trapped;
}

pid_t g_fork_test_parent = 0;

// Stands for the driver's own exit handler (NVIDIA's, from vkCreateInstance), which
// must not run in a forked child.
void ParentsExitHandler() {
    if (getpid() != g_fork_test_parent) _exit(3);
}

// A child forked after the parent used the device: every call fails with kForked
// before reaching the driver or a lock, dropping a buffer leaks it, and exit() skips
// the exit handlers the parent registered (fork.h).
TEST(Fork, ChildGetsErrorsAndSkipsTheParentsTeardown) {
    REQUIRE_DEVICE();
    auto buffer = device->Allocate(256);
    ASSERT_TRUE(buffer.ok());
    BufferRef inherited = buffer.value();
    auto stream = device->AcquireStream();
    ASSERT_TRUE(stream.ok());
    ASSERT_TRUE(device->Synchronize().ok());
    g_fork_test_parent = getpid();
    std::atexit(ParentsExitHandler);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // no gtest assertions here: report through the exit status
        int failures = TrapDriver() > 0 ? 0 : 100;
        auto forked = [&](const util::Status& s) {
            if (s.code() != util::Code::kForked) ++failures;
        };
        std::vector<uint8_t> host(256);
        forked(Instance::Get(0).status());
        forked(device->Usable());
        forked(device->Allocate(16).status());
        forked(device->AllocatePinned(16).status());
        forked(device->Write(*inherited, 0, host.data(), host.size()));
        forked(device->Read(*inherited, 0, host.data(), host.size()));
        forked(device->Copy(*inherited, 0, *inherited, 128, 64).status());
        forked(device->WaitBuffer(*inherited));
        forked(device->Flush());
        forked(device->Synchronize());
        forked(device->Trim(0));
        forked(device->RecordTimestamp().status());
        forked(device->AcquireStream().status());
        forked(device->StreamSynchronize(**stream));
        forked(device->PipelineCacheData().status());
        device->ReleaseStream(*stream);
        inherited.reset();
        buffer = util::Status::Ok();  // the last reference: leaked, not freed
        std::exit(failures == 0 ? 7 : 1);  // 3 if ParentsExitHandler ran
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status)
                                   << " (a call into the trapped driver?)";
    EXPECT_EQ(WEXITSTATUS(status), 7) << "1: a call did not fail with kForked (or nothing "
                                         "was trapped); 3: the parent's exit handlers ran";
    EXPECT_FALSE(Forked());
    device->ReleaseStream(*stream);
}

}  // namespace
}  // namespace nvk::vk
