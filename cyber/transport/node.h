// Forwards to cyber/node/node.h, where this header now lives; kept so that
// code written against the //cyber/transport label compiles unchanged.
#ifndef CYBER_TRANSPORT_NODE_H_FORWARD_
#define CYBER_TRANSPORT_NODE_H_FORWARD_
#include "cyber/node/node.h"
#endif
