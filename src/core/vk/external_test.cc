// Exportable memory (external.cc) on the machine's default device: a descriptor
// exported and imported back gives a second buffer over the same memory, on the
// mapped path and through staging buffers (as on a discrete GPU). Skips where the
// driver cannot export (lavapipe can: memfd).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "vk/vk_testing.h"

namespace nvk::vk {
namespace {

void CheckAlias(Device* device) {
    if (!device->exports_memory()) GTEST_SKIP() << device->external_reason();
    auto a = device->AllocateExportable(4096);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_GE((*a)->external_size, 4096u);
    auto fd = device->ExportFd(**a);
    ASSERT_TRUE(fd.ok()) << fd.status().message();
    auto b = device->ImportFd(*fd, (*a)->size, (*a)->external_size);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_NE((*a)->address, (*b)->address);  // two buffers...
    std::vector<uint32_t> in(1024), out(1024, 0);
    for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 5 + 3;
    ASSERT_TRUE(device->Write(**a, 0, in.data(), 4096).ok());
    ASSERT_TRUE(device->Synchronize().ok());  // the write may go out with a later batch
    ASSERT_TRUE(device->Read(**b, 0, out.data(), 4096).ok());  // ...one memory
    EXPECT_EQ(in, out);
    a->reset();  // the import holds the memory by itself
    std::fill(out.begin(), out.end(), 0);
    ASSERT_TRUE(device->Read(**b, 0, out.data(), 4096).ok());
    EXPECT_EQ(in, out);
}

TEST(External, ExportedMemoryImportsAsAnAlias) {
    REQUIRE_DEVICE();
    CheckAlias(device);
}

TEST(External, ExportedMemoryImportsAsAnAliasThroughStaging) {
    Device* device = TestDevice(/*staging=*/true);
    if (!device) GTEST_SKIP() << "no Vulkan 1.2 device here";
    CheckAlias(device);
}

TEST(External, OrdinaryBuffersAndBadDescriptorsAreRefused) {
    REQUIRE_DEVICE();
    if (!device->exports_memory()) GTEST_SKIP() << device->external_reason();
    auto plain = device->Allocate(256);
    ASSERT_TRUE(plain.ok());
    auto fd = device->ExportFd(**plain);
    ASSERT_FALSE(fd.ok());
    EXPECT_EQ(fd.status().code(), util::Code::kInvalidArgument);
    EXPECT_FALSE(device->ImportFd(-1, 256, 256).ok());
    // More bytes than the exported allocation holds.
    auto a = device->AllocateExportable(256);
    ASSERT_TRUE(a.ok());
    auto good = device->ExportFd(**a);
    ASSERT_TRUE(good.ok());
    auto big = device->ImportFd(*good, 1 << 20, (*a)->external_size);
    EXPECT_FALSE(big.ok());
    if (!big.ok()) close(*good);  // not taken over on failure
}

}  // namespace
}  // namespace nvk::vk
