#include "scheduler/exception_state.h"

#include <cxxabi.h>

namespace cyber {
namespace scheduler {
namespace exception_state_internal {

ExceptionState* LookUpThreadRecord() {
  // cxxabi.h declares the record's type but leaves it incomplete; its
  // fields are the ABI's, which ExceptionState repeats.
  return reinterpret_cast<ExceptionState*>(abi::__cxa_get_globals());
}

}  // namespace exception_state_internal
}  // namespace scheduler
}  // namespace cyber
