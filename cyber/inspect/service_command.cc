#include "cyber/inspect/service_command.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "cyber/inspect/command_line.h"
#include "google/protobuf/text_format.h"

namespace cyber {
namespace inspect {

const char kServiceUsage[] =
    R"(cyber_service: the services of the DDS domain (CYBER_DOMAIN_ID).

usage: cyber_service <command> [args]

commands:
  list                      every service, one a line
  info SERVICE              request and response types, servers and clients
                            (node in process@host:pid)
  call SERVICE 'REQUEST' [--timeout 1s]
                            calls SERVICE with REQUEST in protobuf text
                            format ('a: 1 b: 2'; '' for an empty request) and
                            prints the response in text format, or the
                            call's status (a timeout, the server's error)

flags:
  --timeout DURATION        call: how long to wait (1s, 250ms, 2.5); default 1s
  -h, --help                this text

Exit status: 0 done, 1 an error (unknown service: the closest names; nothing
found: which domain was searched; the call failed), 2 bad arguments.
)";

std::string FormatServiceInfo(const graph::ServiceView& s) {
  std::string out = absl::StrCat(s.name, "\n\trequest: ", s.request_type,
                                 "\n\tresponse: ", s.response_type, "\n");
  absl::StrAppend(&out, "\tservers (", s.servers.size(), "):\n");
  for (const std::string& n : s.servers) absl::StrAppend(&out, "\t\t", n, "\n");
  absl::StrAppend(&out, "\tclients (", s.clients.size(), "):\n");
  for (const std::string& n : s.clients) absl::StrAppend(&out, "\t\t", n, "\n");
  return out;
}

absl::StatusOr<ServiceArgs> ParseServiceArgs(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, {"--timeout"}, {});
  if (!line.ok()) return line.status();
  if (line->operands.empty()) return absl::InvalidArgumentError("no command given");
  ServiceArgs parsed;
  parsed.command = line->operands[0];
  const size_t operands = line->operands.size();
  if (parsed.command == "list") {
    if (operands != 1) return absl::InvalidArgumentError("list takes no service");
  } else if (parsed.command == "info") {
    if (operands != 2) return absl::InvalidArgumentError("info takes one service");
  } else if (parsed.command == "call") {
    if (operands < 2 || operands > 3) {
      return absl::InvalidArgumentError("call takes a service and a request in text format");
    }
    if (operands == 3) parsed.request = line->operands[2];
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown command \"", parsed.command, "\""));
  }
  if (line->Has("--timeout") && parsed.command != "call") {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --timeout does not apply to ", parsed.command));
  }
  if (operands >= 2) parsed.service = line->operands[1];
  absl::StatusOr<absl::Duration> timeout = PositiveDuration(*line, "--timeout", absl::Seconds(1));
  if (!timeout.ok()) return timeout.status();
  parsed.timeout = *timeout;
  return parsed;
}

absl::Status RunServiceCommand(const ServiceArgs& args, graph::DomainGraph& graph,
                               std::ostream& out) {
  if (args.command == "list") {
    const std::vector<graph::ServiceView> services = graph.Services();
    out << "The number of services is: " << services.size() << "\n";
    for (const graph::ServiceView& s : services) out << s.name << "\n";
    if (services.empty()) {
      out << "No service found in " << graph.DomainDescription() << ". " << graph.WhyEmpty()
          << "\n";
    }
    return absl::OkStatus();
  }
  graph.WaitUntil([&args](const graph::DomainGraph& g) { return g.Service(args.service).ok(); },
                  kLookupPatience);
  absl::StatusOr<graph::ServiceView> service = graph.Service(args.service);
  if (!service.ok()) return service.status();
  if (args.command == "info") {
    out << FormatServiceInfo(*service);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> request = graph.Encode(service->request_type, args.request);
  if (!request.ok()) return request.status();
  absl::StatusOr<std::string> response = graph.Call(service->name, *request, args.timeout);
  if (!response.ok()) return response.status();
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> decoded =
      graph.Decode(service->response_type, *response);
  if (!decoded.ok()) return decoded.status();
  std::string text;
  google::protobuf::TextFormat::PrintToString(**decoded, &text);
  out << text;
  return absl::OkStatus();
}

}  // namespace inspect
}  // namespace cyber
