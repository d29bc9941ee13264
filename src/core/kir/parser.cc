#include "kir/parser.h"

namespace nvk::kir {

util::Result<Module> Parse(std::string_view text) { return util::Internal("TODO: kir parser"); }

}  // namespace nvk::kir
