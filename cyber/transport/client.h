// Forwards to cyber/service/client.h, where this header now lives; kept so that
// code written against the //cyber/transport label compiles unchanged.
#ifndef CYBER_TRANSPORT_CLIENT_H_FORWARD_
#define CYBER_TRANSPORT_CLIENT_H_FORWARD_
#include "cyber/service/client.h"
#endif
