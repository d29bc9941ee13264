// Many threads on one device at once: allocations, copies (mapped and staged),
// host arguments, dispatches through one shared Kernel, kernels created and dropped, timestamps,
// trims and synchronisations, every result checked. Run under ThreadSanitizer
// by scripts/tsan.sh; an ordinary test otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "vk/device.h"
#include "vk/pipeline.h"
#include "vk/vk_testing.h"

namespace nvk::vk {
namespace {

// One thread's work; returns "" or what went wrong.
std::string Work(Device* device, Kernel* shared, const std::vector<uint32_t>& words, int seed,
                 int reps) {
    const uint32_t sizes[] = {1, 63, 64, 1000, 4097, 20000};
    uint32_t local[3] = {64, 1, 1};
    auto stream_or = device->AcquireStream();
    if (!stream_or.ok()) return "AcquireStream: " + stream_or.status().message();
    StreamState* stream = *stream_or;
    struct Release {
        Device* d;
        StreamState* s;
        ~Release() { d->ReleaseStream(s); }
    } release{device, stream};
    for (int rep = 0; rep < reps; ++rep) {
        const uint32_t n = sizes[(seed + rep) % 6];
        auto a = device->Allocate(n * 4);
        auto b = device->Allocate(n * 4);
        if (!a.ok() || !b.ok()) return "Allocate failed";
        std::vector<uint32_t> host(n), back(n);
        for (uint32_t i = 0; i < n; ++i) host[i] = i * 31u + static_cast<uint32_t>(seed) * 7u + 5u;
        if (!device->Write(**a, 0, host.data(), n * 4).ok()) return "Write failed";
        if (!device->Read(**a, 0, back.data(), n * 4).ok()) return "Read failed";
        if (back != host) return "round trip differs";

        // A kernel of this thread's own now and then (created, used, dropped), else the shared one.
        std::unique_ptr<Kernel> own;
        Kernel* kernel = shared;
        if (rep % 10 == 3) {
            auto k = Kernel::Create(*device, words.data(), words.size(), 16);
            if (!k.ok()) return "Kernel::Create: " + k.status().message();
            own = std::move(k.value());
            kernel = own.get();
        }
        auto pipeline = kernel->Pipeline(local);
        if (!pipeline.ok()) return "Pipeline: " + pipeline.status().message();
        uint32_t groups[3] = {(n + 63) / 64, 1, 1};
        Params params{(*a)->address, n, 0};
        Buffer* used = a->get();
        auto value = device->RecordDispatch(*kernel, *pipeline, groups, &params, sizeof(params),
                                            false, &used, 1);
        if (!value.ok()) return "RecordDispatch: " + value.status().message();
        own.reset();  // retired, not destroyed under the launch
        if (!device->Copy(**a, 0, **b, 0, n * 4).ok()) return "Copy failed";
        if (!device->Read(**b, 0, back.data(), n * 4).ok()) return "Read failed";
        for (uint32_t i = 0; i < n; ++i) {
            if (back[i] != 2 * i) {
                return "thread " + std::to_string(seed) + " rep " + std::to_string(rep) +
                       ": element " + std::to_string(i) + " is " + std::to_string(back[i]);
            }
        }
        if (rep % 3 == 2) {
            // On a stream: ordered after the write outside streams, and the read
            // outside streams after it (stream.cc).
            if (!device->Write(**b, 0, host.data(), n * 4).ok()) return "Write failed";
            VkBufferCopy region{0, 0, n * 4};
            if (!device->StreamCopy(*stream, **b, **a, &region, 1).ok()) return "StreamCopy failed";
            if (!device->Read(**a, 0, back.data(), n * 4).ok()) return "Read failed";
            if (back != host) return "stream copy differs";
            Params pb{(*b)->address, n, 0};
            DispatchPiece piece{{groups[0], 1, 1}, &pb};
            Buffer* ub = b->get();
            std::unique_ptr<Kernel> temp;  // dropped with the launch in flight: retired
            Kernel* k = shared;
            if (rep % 6 == 5) {
                auto made = Kernel::Create(*device, words.data(), words.size(), 16);
                if (!made.ok()) return "Kernel::Create failed";
                temp = std::move(made.value());
                k = temp.get();
            }
            auto pl = k->Pipeline(local);
            if (!pl.ok()) return "Pipeline failed";
            auto sv = device->StreamDispatch(*stream, *k, *pl, &piece, 1, sizeof(pb), false, &ub, 1);
            if (!sv.ok()) return "StreamDispatch: " + sv.status().message();
            temp.reset();
            if (!device->StreamCopy(*stream, **b, **a, &region, 1).ok()) return "StreamCopy failed";
            if (device->info().timestamp_bits > 0 && !device->StreamTimestamp(*stream).ok()) {
                return "StreamTimestamp failed";
            }
            (void)device->StreamDone(*stream);
            if (rep % 2 == 0 && !device->StreamSynchronize(*stream).ok()) {
                return "StreamSynchronize failed";
            }
            if (!device->Read(**a, 0, back.data(), n * 4).ok()) return "Read failed";
            for (uint32_t i = 0; i < n; ++i) {
                if (back[i] != 2 * i) return "stream launch: element " + std::to_string(i);
            }
        }
        if (rep % 4 == 2 && device->host_args()) {
            // A host argument (host_args.cc): written by the kernel, read back mapped.
            auto arg = device->AllocateHostArg(n * 4, 1);  // written
            auto in = device->AllocateHostArg(n * 4, 0);   // read only: pool traffic
            if (!arg.ok() || !in.ok()) return "AllocateHostArg failed";
            std::memcpy((*arg)->mapped, host.data(), n * 4);
            std::memcpy((*in)->mapped, host.data(), n * 4);
            Params pa{(*arg)->address, n, 0};
            Buffer* ua[2] = {arg->get(), in->get()};
            const bool w[2] = {true, false};
            auto sp = shared->Pipeline(local);  // `own` and its pipeline are gone
            if (!sp.ok()) return "Pipeline failed";
            auto v = device->RecordDispatch(*shared, *sp, groups, &pa, sizeof(pa), false,
                                            ua, 2, w, false,
                                            /*host_reads=*/!device->host_args_readback());
            if (!v.ok()) return "RecordDispatch (host argument): " + v.status().message();
            uint64_t wait = *v;
            const uint8_t* result = (*arg)->mapped;
            BufferRef back;
            if (device->host_args_readback()) {  // copied back into host memory
                auto rb = device->AllocateHostArg(n * 4, 2);
                if (!rb.ok()) return "AllocateHostArg (readback) failed";
                back = *rb;
                auto c = device->Copy(**arg, 0, *back, 0, n * 4, /*host_reads=*/true);
                if (!c.ok()) return "Copy (readback) failed";
                wait = std::max(wait, *c);
                result = back->mapped;
            }
            if (!device->WaitValue(wait).ok()) return "WaitValue failed";
            for (uint32_t i = 0; i < n; ++i) {
                uint32_t x = 0;
                std::memcpy(&x, result + 4 * i, 4);
                if (x != 2 * i) return "host argument: element " + std::to_string(i);
            }
        }
        if (rep % 5 == 0 && !device->Synchronize().ok()) return "Synchronize failed";
        if (rep % 7 == 0 && !device->Trim(1 << 20).ok()) return "Trim failed";
        if (rep % 4 == 1 && device->info().timestamp_bits > 0) {
            auto q = device->RecordTimestamp();
            if (!q.ok()) return "RecordTimestamp: " + q.status().message();
            if (!device->ReadTimestampNs(**q).ok()) return "ReadTimestampNs failed";
        }
        (void)device->pool_stats();
        (void)device->Idle();
    }
    return "";
}

TEST(Threads, ManyThreadsShareOneDevice) {
    REQUIRE_DEVICE();
    Device* staged = TestDevice(/*staging=*/true);
    ASSERT_NE(staged, nullptr);
    std::vector<uint32_t> words = Assemble(NVK_VK_TESTDATA "/double_index.spvasm");
    ASSERT_FALSE(words.empty());
    auto kernel = Kernel::Create(*device, words.data(), words.size(), 16);
    auto staged_kernel = Kernel::Create(*staged, words.data(), words.size(), 16);
    ASSERT_TRUE(kernel.ok() && staged_kernel.ok());

    constexpr int kThreads = 8, kStagedThreads = 4, kReps = 40;
    std::vector<std::string> errors(kThreads + kStagedThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads + kStagedThreads; ++t) {
        const bool on_staged = t >= kThreads;
        threads.emplace_back([&, t, on_staged] {
            errors[t] = on_staged ? Work(staged, staged_kernel->get(), words, t, kReps)
                                  : Work(device, kernel->get(), words, t, kReps);
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads + kStagedThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_TRUE(device->Synchronize().ok());
    EXPECT_TRUE(staged->Synchronize().ok());
    EXPECT_TRUE(device->Trim(0).ok());
    EXPECT_EQ(device->pool_stats().pooled_bytes, 0u);
}

TEST(Threads, WaitsAreBoundedByTheTimeout) {
    REQUIRE_DEVICE();
    std::vector<uint32_t> words = Assemble(NVK_VK_TESTDATA "/double_index.spvasm");
    auto kernel = Kernel::Create(*device, words.data(), words.size(), 16);
    ASSERT_TRUE(kernel.ok());
    const uint32_t n = 1u << 22;  // 16 MiB written 8 times: far longer than one wait slice
    auto buffer = device->Allocate(uint64_t{n} * 4);
    ASSERT_TRUE(buffer.ok());
    uint32_t local[3] = {64, 1, 1}, groups[3] = {n / 64, 1, 1};
    auto pipeline = (*kernel)->Pipeline(local);
    ASSERT_TRUE(pipeline.ok());
    Params params{(*buffer)->address, n, 0};
    Buffer* used = buffer->get();
    for (int rep = 0; rep < 8; ++rep) {
        ASSERT_TRUE(device->RecordDispatch(**kernel, *pipeline, groups, &params, sizeof(params),
                                           false, &used, 1)
                        .ok());
    }
    device->set_timeout(1e-9);
    util::Status s = device->Synchronize();
    device->set_timeout(0);
    EXPECT_EQ(s.code(), util::Code::kTimeout) << s.message();
    EXPECT_NE(s.message().find("NUMBA_VULKAN_TIMEOUT"), std::string::npos);
    // The work stayed queued and the device usable.
    ASSERT_TRUE(device->Synchronize().ok());
    uint32_t last = 0;
    ASSERT_TRUE(device->Read(**buffer, uint64_t{n - 1} * 4, &last, 4).ok());
    EXPECT_EQ(last, 2 * (n - 1));
    // A wait for a value nobody recorded is an error, not a hang.
    EXPECT_EQ(device->WaitValue(UINT64_MAX / 2).code(), util::Code::kInternal);
}

}  // namespace
}  // namespace nvk::vk
