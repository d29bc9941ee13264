#include "kir/verifier.h"

namespace nvk::kir {

util::Status Verify(const Module& module) { return util::Status::Ok(); }

}  // namespace nvk::kir
