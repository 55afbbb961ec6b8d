// Forwards to cyber/node/reader.h, where this header now lives; kept so that
// code written against the //cyber/transport label compiles unchanged.
#ifndef CYBER_TRANSPORT_READER_H_FORWARD_
#define CYBER_TRANSPORT_READER_H_FORWARD_
#include "cyber/node/reader.h"
#endif
