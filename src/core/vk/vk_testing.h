// Helpers of the runtime's tests: the test device and SPIR-V assembly.
#pragma once

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "vk/device.h"
#include "vk/instance.h"

namespace nvk::vk {

// The parameter block of the test kernels in testdata/ (one array and its length).
struct Params {
    uint64_t address;
    uint32_t n;
    uint32_t pad;
};

// The first Vulkan 1.2 device, opened once; null where there is none. With
// `staging`, a second logical device on it whose copies always go through
// staging buffers (NVK_VULKAN_STAGING=1), as on a discrete GPU.
inline Device* TestDevice(bool staging = false) {
    auto open = [](bool staged) -> Device* {
        auto instance = Instance::Get(0);
        if (!instance.ok()) return nullptr;
        auto devices = (*instance)->Devices(false);
        if (!devices.ok() || devices->empty()) return nullptr;
        if (staged) setenv("NVK_VULKAN_STAGING", "1", 1);
        auto d = Device::Create(**instance, devices->front());
        if (staged) unsetenv("NVK_VULKAN_STAGING");
        return d.ok() ? d.value() : nullptr;
    };
    static Device* plain = open(false);
    static Device* staged = open(true);
    return staging ? staged : plain;
}

#define REQUIRE_DEVICE()                                      \
    Device* device = TestDevice();                            \
    if (!device) GTEST_SKIP() << "no Vulkan 1.2 device here"

// The words of a SPIR-V assembly file; empty if it does not assemble.
inline std::vector<uint32_t> Assemble(const char* path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    std::string source = text.str();
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_2);
    spv_binary binary = nullptr;
    spv_diagnostic diagnostic = nullptr;
    std::vector<uint32_t> words;
    if (spvTextToBinary(context, source.data(), source.size(), &binary, &diagnostic) ==
        SPV_SUCCESS) {
        words.assign(binary->code, binary->code + binary->wordCount);
    }
    spvBinaryDestroy(binary);
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);
    return words;
}

}  // namespace nvk::vk
