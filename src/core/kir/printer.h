// Print: the text form of KIR (inspect_kir, error messages, text-in/text-out tests).
#pragma once

#include <string>

#include "kir/kir.h"

namespace nvk::kir {

std::string Print(const Module& module);
std::string TypeName(const Module& module, TypeId type);

}  // namespace nvk::kir
