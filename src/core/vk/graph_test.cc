// Launch graphs' device side (graph.h): barriers decided at instantiation, replays that
// record once, rebinding, and the refusal of bindings that alias.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "vk/graph.h"
#include "vk/pipeline.h"
#include "vk/vk_testing.h"

namespace nvk::vk {
namespace {

constexpr uint32_t kN = 256;

class GraphTest : public ::testing::Test {
  protected:
    void SetUp() override {
        device_ = TestDevice();
        if (!device_) GTEST_SKIP() << "no Vulkan 1.2 device here";
        std::vector<uint32_t> words = Assemble(NVK_VK_TESTDATA "/double_index.spvasm");
        ASSERT_FALSE(words.empty());
        auto kernel = Kernel::Create(*device_, words.data(), words.size(), 16);
        ASSERT_TRUE(kernel.ok()) << kernel.status().message();
        kernel_ = std::move(*kernel);
        const uint32_t local[3] = {64, 1, 1};
        auto pipeline = kernel_->Pipeline(local);
        ASSERT_TRUE(pipeline.ok());
        pipeline_ = *pipeline;
        auto stream = device_->AcquireStream();
        ASSERT_TRUE(stream.ok());
        stream_ = *stream;
    }
    void TearDown() override {
        if (stream_) device_->ReleaseStream(stream_);
    }

    BufferRef Zeros() {
        auto b = device_->Allocate(kN * 4);
        EXPECT_TRUE(b.ok());
        std::vector<uint32_t> zeros(kN, 0);
        EXPECT_TRUE(device_->Write(**b, 0, zeros.data(), kN * 4).ok());
        return *b;
    }
    std::vector<uint32_t> Contents(Buffer& b) {
        std::vector<uint32_t> out(kN, 7);
        EXPECT_TRUE(device_->Read(b, 0, out.data(), kN * 4).ok());
        return out;
    }
    // A dispatch writing the buffer of `entry` (whose address is `address`).
    uint32_t Dispatch(Graph& g, uint32_t entry, uint64_t address) {
        const uint32_t groups[3] = {kN / 64, 1, 1};
        Params p{address, kN, 0};
        return g.AddDispatch(*kernel_, pipeline_, groups, &p, sizeof(p), false, {{entry, true}});
    }

    Device* device_ = nullptr;
    std::unique_ptr<Kernel> kernel_;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    StreamState* stream_ = nullptr;
};

TEST_F(GraphTest, BarriersOnlyWhereCommandsConflict) {
    BufferRef a = Zeros(), b = Zeros();
    Graph g(*device_);
    const uint32_t ea = g.AddBuffer(a), eb = g.AddBuffer(b);
    Dispatch(g, ea, a->address);
    Dispatch(g, eb, b->address);  // another buffer: no barrier
    Dispatch(g, ea, a->address);  // writes a again: one
    const VkBufferCopy region{0, 0, kN * 4};
    g.AddCopy(ea, eb, &region, 1);  // reads a (written), writes b (written): one
    auto exe = g.Instantiate();
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    EXPECT_EQ((*exe)->barrier_count(), 2u);
    EXPECT_EQ(g.command_count(), 4u);
}

TEST_F(GraphTest, ReplaysRecordOnceUntilABindingChanges) {
    BufferRef a = Zeros(), b = Zeros();
    Graph g(*device_);
    const uint32_t ea = g.AddBuffer(a);
    const uint32_t block = Dispatch(g, ea, a->address);
    auto made = g.Instantiate();
    ASSERT_TRUE(made.ok());
    Graph& exe = **made;
    EXPECT_EQ(Contents(*a)[5], 0u);  // capture and instantiation run nothing
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(exe.Replay(*stream_).ok());
    EXPECT_EQ(exe.records(), 1u);
    std::vector<uint32_t> out = Contents(*a);
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(out[i], 2 * i) << i;

    {  // bind b in place of a: its address in the block, its buffer in the table
        auto lock = exe.Lock();
        std::memcpy(exe.block(block), &b->address, 8);
        exe.SetBuffer(ea, b);
        exe.Changed();
    }
    ASSERT_TRUE(exe.Replay(*stream_).ok());
    EXPECT_EQ(exe.records(), 2u);
    out = Contents(*b);
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(out[i], 2 * i) << i;
    EXPECT_TRUE(device_->StreamSynchronize(*stream_).ok());
}

TEST_F(GraphTest, RefusesBindingsThatAliasDifferentBuffers) {
    BufferRef a = Zeros(), b = Zeros();
    Graph g(*device_);
    const uint32_t ea = g.AddBuffer(a), eb = g.AddBuffer(b);
    Dispatch(g, ea, a->address);
    Dispatch(g, eb, b->address);
    auto made = g.Instantiate();
    ASSERT_TRUE(made.ok());
    Graph& exe = **made;
    EXPECT_EQ(exe.barrier_count(), 0u);
    {
        auto lock = exe.Lock();
        exe.SetBuffer(eb, a);
        exe.Changed();
    }
    util::Result<uint64_t> refused = exe.Replay(*stream_);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), util::Code::kUnsupported);
    {
        auto lock = exe.Lock();
        exe.SetBuffer(eb, b);
        exe.Changed();
    }
    EXPECT_TRUE(exe.Replay(*stream_).ok());
    EXPECT_TRUE(device_->StreamSynchronize(*stream_).ok());
}

TEST_F(GraphTest, TimestampsPointAtTheLastReplay) {
    if (device_->info().timestamp_bits == 0) GTEST_SKIP() << "no timestamps";
    BufferRef a = Zeros();
    Graph g(*device_);
    auto start = g.AddTimestamp();
    ASSERT_TRUE(start.ok());
    Dispatch(g, g.AddBuffer(a), a->address);
    auto end = g.AddTimestamp();
    ASSERT_TRUE(end.ok());
    auto made = g.Instantiate();
    ASSERT_TRUE(made.ok());
    auto before = device_->ReadTimestampNs(**start);  // never replayed: NaN, no wait
    ASSERT_TRUE(before.ok());
    EXPECT_TRUE(*before != *before);
    ASSERT_TRUE((*made)->Replay(*stream_).ok());
    auto t0 = device_->ReadTimestampNs(**start);
    auto t1 = device_->ReadTimestampNs(**end);
    ASSERT_TRUE(t0.ok() && t1.ok());
    EXPECT_LE(*t0, *t1);
    made->reset();  // the timestamps keep the graph's query pool
    auto again = device_->ReadTimestampNs(**end);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *t1);
}

}  // namespace
}  // namespace nvk::vk
