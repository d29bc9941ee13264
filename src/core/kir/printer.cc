#include "kir/printer.h"

namespace nvk::kir {

std::string TypeName(const Module& module, TypeId type) { return "TODO"; }
std::string Print(const Module& module) { return "TODO: kir printer\n"; }

}  // namespace nvk::kir
