// Streams' open ops (stream.cc): launches on a stream share a submission, and
// everything that waits for one of them, or uses one of its buffers, submits it
// first and is ordered after it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "vk/device.h"
#include "vk/pipeline.h"
#include "vk/vk_testing.h"

namespace nvk::vk {
namespace {

constexpr uint32_t kBig = 1u << 22;  // elements: keeps lavapipe busy for a while

class StreamBatchTest : public ::testing::Test {
  protected:
    void SetUp() override {
        device_ = TestDevice();
        if (!device_) GTEST_SKIP() << "no Vulkan 1.2 device here";
        // A wait for an op never submitted fails (kTimeout) instead of hanging.
        device_->set_timeout(30);
        words_ = Assemble(NVK_VK_TESTDATA "/add_one.spvasm");
        ASSERT_FALSE(words_.empty());
        auto k = Kernel::Create(*device_, words_.data(), words_.size(), 16);
        ASSERT_TRUE(k.ok());
        kernel_ = std::move(k.value());
        auto s = device_->AcquireStream();
        ASSERT_TRUE(s.ok());
        stream_ = *s;
        ASSERT_TRUE(device_->StreamSynchronize(*stream_).ok());
    }
    void TearDown() override {
        if (!device_) return;
        EXPECT_TRUE(device_->Synchronize().ok());
        if (stream_) device_->ReleaseStream(stream_);
        device_->set_timeout(0);
    }

    BufferRef Zeros(uint32_t n) {
        auto b = device_->Allocate(uint64_t{n} * 4);
        EXPECT_TRUE(b.ok());
        std::vector<uint32_t> zeros(n, 0);
        EXPECT_TRUE(device_->Write(**b, 0, zeros.data(), uint64_t{n} * 4).ok());
        EXPECT_TRUE(device_->Synchronize().ok());
        return *b;
    }
    // x[i] += 1 for i < n, on `s` (with `kernel`, default the fixture's).
    uint64_t AddOne(StreamState& s, Buffer& x, uint32_t n, Kernel* kernel = nullptr) {
        kernel = kernel ? kernel : kernel_.get();
        uint32_t local[3] = {64, 1, 1};
        auto pipeline = kernel->Pipeline(local);
        EXPECT_TRUE(pipeline.ok());
        Params p{x.address, n, 0};
        DispatchPiece piece{{(n + 63) / 64, 1, 1}, &p};
        Buffer* used = &x;
        auto v = device_->StreamDispatch(s, *kernel, *pipeline, &piece, 1, sizeof(p), false,
                                         &used, 1);
        EXPECT_TRUE(v.ok()) << v.status().message();
        return v.ok() ? *v : 0;
    }
    uint64_t AddOneOutside(Buffer& x, uint32_t n) {
        uint32_t local[3] = {64, 1, 1}, groups[3] = {(n + 63) / 64, 1, 1};
        auto pipeline = kernel_->Pipeline(local);
        EXPECT_TRUE(pipeline.ok());
        Params p{x.address, n, 0};
        Buffer* used = &x;
        auto v = device_->RecordDispatch(*kernel_, *pipeline, groups, &p, sizeof(p), false,
                                         &used, 1);
        EXPECT_TRUE(v.ok());
        return v.ok() ? *v : 0;
    }
    void ExpectAll(Buffer& x, uint32_t n, uint32_t value) {
        std::vector<uint32_t> back(n);
        ASSERT_TRUE(device_->Read(x, 0, back.data(), uint64_t{n} * 4).ok());
        for (uint32_t i = 0; i < n; ++i) {
            ASSERT_EQ(back[i], value) << "element " << i;
        }
    }
    // Makes the stream busy for a while (a long launch it submits at once, being
    // idle and caught up), so that the launches after it wait in its open op.
    void KeepBusy(StreamState& s) {
        ASSERT_TRUE(device_->StreamSynchronize(s).ok());  // caught up: the next launch goes out
        big_ = Zeros(kBig);
        const uint64_t before = device_->StreamValue(s);
        EXPECT_EQ(AddOne(s, *big_, kBig), before + 1);
        EXPECT_EQ(s.submitted.load(), before + 1);  // submitted at once
    }

    Device* device_ = nullptr;
    std::vector<uint32_t> words_;
    std::unique_ptr<Kernel> kernel_;
    StreamState* stream_ = nullptr;
    BufferRef big_;
};

TEST_F(StreamBatchTest, DependentLaunchesShareSubmissionsAndAHostReadSubmitsThem) {
    constexpr uint32_t n = 1000, kLaunches = 40;
    BufferRef x = Zeros(n);
    KeepBusy(*stream_);
    const uint64_t start = device_->StreamValue(*stream_);
    uint64_t last = 0;
    for (uint32_t k = 0; k < kLaunches; ++k) last = AddOne(*stream_, *x, n);
    EXPECT_EQ(device_->StreamValue(*stream_), last);
    // kMaxBatch launches per op while the stream is busy: a few ops, not one each.
    // (On lavapipe the stream stays busy throughout: 3 ops. A fast GPU may finish the
    // long launch meanwhile, and submit when kSubmitGapNs passes.)
    EXPECT_LE(last - start, kLaunches / 4);
    EXPECT_EQ(x->stream, stream_);
    EXPECT_EQ(x->stream_value, last);
    // A read outside streams waits for the open op, which it submits first.
    ExpectAll(*x, n, kLaunches);
    EXPECT_EQ(stream_->submitted.load(), last);
    ExpectAll(*big_, 1000, 1);
}

TEST_F(StreamBatchTest, QueryAndIdleSubmitTheOpenOp) {
    constexpr uint32_t n = 256;
    BufferRef x = Zeros(n);
    KeepBusy(*stream_);
    const uint64_t value = AddOne(*stream_, *x, n);
    EXPECT_GT(value, stream_->submitted.load());  // waits in the open op
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
        auto done = device_->StreamDone(*stream_);
        ASSERT_TRUE(done.ok());
        if (*done) break;
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "query never saw it done";
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_GE(device_->StreamCompleted(*stream_), value);
    // The same through a buffer and through the device.
    AddOne(*stream_, *x, n);
    while (!device_->BufferIdle(*x)) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the buffer never went idle";
    }
    AddOne(*stream_, *x, n);
    while (!device_->Idle()) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the device never went idle";
    }
    ExpectAll(*x, n, 3);
}

TEST_F(StreamBatchTest, OtherWorkOnItsBuffersIsOrderedAfterTheOpenOp) {
    constexpr uint32_t n = 4096;
    BufferRef x = Zeros(n);
    auto other = device_->AcquireStream();
    ASSERT_TRUE(other.ok());
    KeepBusy(*stream_);
    for (int k = 0; k < 5; ++k) AddOne(*stream_, *x, n);  // the open op: x = 5
    EXPECT_GT(x->stream_value, stream_->submitted.load());
    AddOneOutside(*x, n);  // the device's batch: waits for the stream (6)
    EXPECT_EQ(x->stream_value, stream_->submitted.load());
    AddOne(**other, *x, n);  // another stream: waits for the batch (7)
    AddOne(**other, *x, n);  // its open op, or submitted: 8
    AddOne(*stream_, *x, n);  // back on the first stream: waits for the other's (9)
    // A copy on the stream after a launch: ordered after it.
    BufferRef y = Zeros(n);
    VkBufferCopy region{0, 0, uint64_t{n} * 4};
    ASSERT_TRUE(device_->StreamCopy(*stream_, *x, *y, &region, 1).ok());
    ASSERT_TRUE(device_->StreamSynchronize(*stream_).ok());
    ExpectAll(*y, n, 9);
    ExpectAll(*x, n, 9);
    device_->ReleaseStream(*other);
}

TEST_F(StreamBatchTest, TimestampsAndReleasesSubmitTheOpenOp) {
    constexpr uint32_t n = 512;
    BufferRef x = Zeros(n);
    KeepBusy(*stream_);
    const uint64_t launched = AddOne(*stream_, *x, n);
    if (device_->info().timestamp_bits > 0) {
        auto ts = device_->StreamTimestamp(*stream_);
        ASSERT_TRUE(ts.ok());
        EXPECT_EQ((*ts)->value, launched + 1);  // an op of its own, after the launch's
        ASSERT_TRUE(device_->ReadTimestampNs(**ts).ok());
        ExpectAll(*x, n, 1);
    }
    // A stream released with launches in its open op: they are submitted and run.
    auto other = device_->AcquireStream();
    ASSERT_TRUE(other.ok());
    KeepBusy(**other);
    const uint64_t v = AddOne(**other, *x, n);
    EXPECT_GT(v, (*other)->submitted.load());
    device_->ReleaseStream(*other);
    EXPECT_EQ((*other)->submitted.load(), v);
}

TEST_F(StreamBatchTest, AKernelDroppedWithItsLaunchInTheOpenOpIsRetired) {
    constexpr uint32_t n = 300;
    BufferRef x = Zeros(n);
    KeepBusy(*stream_);
    for (int k = 0; k < 3; ++k) {
        auto made = Kernel::Create(*device_, words_.data(), words_.size(), 16);
        ASSERT_TRUE(made.ok());
        std::unique_ptr<Kernel> temp = std::move(made.value());
        AddOne(*stream_, *x, n, temp.get());
        EXPECT_GT(x->stream_value, stream_->submitted.load());
        temp.reset();  // its pipeline outlives the open op's launch (Device::Retire)
    }
    ASSERT_TRUE(device_->StreamSynchronize(*stream_).ok());
    ExpectAll(*x, n, 3);
}

TEST_F(StreamBatchTest, ThreadsWithStreamsOfTheirOwn) {
    constexpr int kThreads = 6, kReps = 30;
    constexpr uint32_t n = 777;
    std::vector<BufferRef> buffers;
    for (int t = 0; t < kThreads; ++t) buffers.push_back(Zeros(n));
    BufferRef shared = Zeros(n);
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            auto s = device_->AcquireStream();
            if (!s.ok()) {
                errors[t] = "AcquireStream";
                return;
            }
            for (int rep = 0; rep < kReps; ++rep) {
                for (int k = 0; k < 3; ++k) AddOne(**s, *buffers[t], n);
                if (rep % 5 == t % 5) AddOne(**s, *shared, n);  // other streams use it too
                if (rep % 7 == 3 && !device_->StreamSynchronize(**s).ok()) {
                    errors[t] = "StreamSynchronize";
                }
            }
            device_->ReleaseStream(*s);
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
    for (int t = 0; t < kThreads; ++t) ExpectAll(*buffers[t], n, 3 * kReps);
    ExpectAll(*shared, n, kThreads * kReps / 5);
}

}  // namespace
}  // namespace nvk::vk
