// cyber_service's subcommands over a DomainGraph:
//
//   list                                    every service, one a line
//   info SERVICE                            request and response types,
//                                           servers and clients
//   call SERVICE 'TEXT' [--timeout 1s]      the request in protobuf text
//                                           format, encoded from the
//                                           announced descriptor; prints
//                                           the response in text format
//
// call's errors are the call's status: DeadlineExceeded naming the service
// and the timeout, the server's own code and message, InvalidArgument with
// the text parser's line and column for a request that does not parse.
//
// Threads: RunServiceCommand blocks the calling thread.

#ifndef CYBER_INSPECT_SERVICE_COMMAND_H_
#define CYBER_INSPECT_SERVICE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"

namespace cyber {
namespace inspect {

extern const char kServiceUsage[];

struct ServiceArgs {
  std::string command;  // list info call
  std::string service;  // info, call
  std::string request;  // call: text format ("" is the empty request)
  absl::Duration timeout = absl::Seconds(1);
};

absl::StatusOr<ServiceArgs> ParseServiceArgs(const std::vector<std::string>& args);

absl::Status RunServiceCommand(const ServiceArgs& args, graph::DomainGraph& graph,
                               std::ostream& out);

std::string FormatServiceInfo(const graph::ServiceView& service);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_SERVICE_COMMAND_H_
