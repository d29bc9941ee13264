#include "spirv/tools.h"

namespace nvk::spirv {

util::Status Validate(const std::vector<uint32_t>& words) { return util::Internal("TODO"); }
util::Result<std::vector<uint32_t>> Optimize(const std::vector<uint32_t>& words) {
    return util::Internal("TODO");
}
std::string Disassemble(const std::vector<uint32_t>& words) { return "TODO"; }

}  // namespace nvk::spirv
