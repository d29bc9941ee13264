// vkCmdCopyBuffer with every region cut into pieces of at most kMaxCopyRegion bytes.
//
// lavapipe (Mesa 22.3) crashes or copies nothing for a region of 2^31 bytes or more (a
// 2 GiB device array copied in one region came out all zeros, or the process died), while
// the same bytes as 1 GiB regions copy right, at any offset (probed on a 3 GiB buffer).
// Every copy of arrays goes through here, on every device: more regions cost nothing.
#pragma once

#include <algorithm>
#include <vector>

#include "vk/loader.h"

namespace nvk::vk {

inline constexpr VkDeviceSize kMaxCopyRegion = VkDeviceSize{1} << 30;

inline void CmdCopyBuffer(const DeviceFns& fns, VkCommandBuffer cb, VkBuffer src, VkBuffer dst,
                          const VkBufferCopy* regions, size_t n) {
    bool small = true;
    for (size_t i = 0; i < n; ++i) small = small && regions[i].size <= kMaxCopyRegion;
    if (small) {
        fns.vkCmdCopyBuffer(cb, src, dst, static_cast<uint32_t>(n), regions);
        return;
    }
    std::vector<VkBufferCopy> pieces;
    for (size_t i = 0; i < n; ++i) {
        for (VkDeviceSize done = 0; done < regions[i].size; done += kMaxCopyRegion) {
            const VkDeviceSize size = std::min(kMaxCopyRegion, regions[i].size - done);
            pieces.push_back({regions[i].srcOffset + done, regions[i].dstOffset + done, size});
        }
    }
    fns.vkCmdCopyBuffer(cb, src, dst, static_cast<uint32_t>(pieces.size()), pieces.data());
}

}  // namespace nvk::vk
