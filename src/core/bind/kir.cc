#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace nvk::bind {

void InitKir(nb::module_& m) {}

}  // namespace nvk::bind
