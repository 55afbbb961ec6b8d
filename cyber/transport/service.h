// Forwards to cyber/service/service.h, where this header now lives; kept so that
// code written against the //cyber/transport label compiles unchanged.
#ifndef CYBER_TRANSPORT_SERVICE_H_FORWARD_
#define CYBER_TRANSPORT_SERVICE_H_FORWARD_
#include "cyber/service/service.h"
#endif
