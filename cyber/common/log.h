// Logging for robot code: the AINFO / AWARN / AERROR / AFATAL stream macros
// that Cyber RT modules already use, on top of glog.
//
//   AINFO << "timer \"" << name << "\" started, period " << period;
//
// Severity and destination follow glog's flags (--minloglevel, --logtostderr,
// --v for ADEBUG). Until cyber::Init() or google::InitGoogleLogging() runs,
// glog writes to stderr. Safe to use from any thread.

#ifndef CYBER_COMMON_LOG_H_
#define CYBER_COMMON_LOG_H_

#include "glog/logging.h"

#define ADEBUG VLOG(4)
#define AINFO LOG(INFO)
#define AWARN LOG(WARNING)
#define AERROR LOG(ERROR)
#define AFATAL LOG(FATAL)

#define AINFO_IF(cond) LOG_IF(INFO, cond)
#define AWARN_IF(cond) LOG_IF(WARNING, cond)
#define AERROR_IF(cond) LOG_IF(ERROR, cond)

// Rate-limited variants for paths that may fire at sensor rates.
#define AINFO_EVERY(n) LOG_EVERY_N(INFO, n)
#define AWARN_EVERY(n) LOG_EVERY_N(WARNING, n)
#define AERROR_EVERY(n) LOG_EVERY_N(ERROR, n)

// A broken invariant (a bug in this library, not bad input): abort with a
// message. Bad input is reported with absl::Status instead.
#define ACHECK(cond) CHECK(cond)

#endif  // CYBER_COMMON_LOG_H_
