#include "structurize/structurize.h"

namespace nvk::structurize {

util::Status Structurize(kir::Module& module) { return util::Internal("TODO: structurizer"); }

}  // namespace nvk::structurize
