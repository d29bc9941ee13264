#include "spirv/emit.h"

namespace nvk::spirv {

util::Result<std::vector<uint32_t>> Emit(const kir::Module& module, const EmitOptions& options) {
    return util::Internal("TODO: emitter");
}

}  // namespace nvk::spirv
