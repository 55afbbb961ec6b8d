// The runtime scope and its lookup rule live in cyber/common/runtime_scope.h
// (below every layer that reads them); this header keeps the path that
// docs/api.md names for //cyber/runtime:scope.
#ifndef CYBER_RUNTIME_RUNTIME_SCOPE_H_
#define CYBER_RUNTIME_RUNTIME_SCOPE_H_
#include "cyber/common/runtime_scope.h"
#endif  // CYBER_RUNTIME_RUNTIME_SCOPE_H_
