// Links the process runtime to other processes over DDS: a static
// initializer registers, before main, the maker that gives every process
// runtime (cyber/runtime/process_runtime.h) a DdsTransport, from Cyber RT's
// CYBER_DOMAIN_ID and CYBER_IP and the flags below. Linked (alwayslink) by
// //cyber/init and mainboard, and by any program that wants its channels to
// reach other processes; a program that does not link it stays in-process
// and does not load Fast-DDS.

#include <errno.h>  // program_invocation_short_name

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "cyber/common/log.h"
#include "cyber/runtime/process_runtime.h"
#include "cyber/transport/dds/dds_transport.h"
#include "gflags/gflags.h"

DEFINE_bool(in_process_only, false,
            "keep every channel inside this process: no DDS participant, nothing "
            "on the network or in /dev/shm (default: protobuf channels also reach "
            "the other processes of the DDS domain, CYBER_DOMAIN_ID)");
DEFINE_string(dds_profile_file, "",
              "a Fast-DDS XML profile file whose default participant profile the "
              "transport starts from (e.g. DDS Security's properties); empty: no "
              "profile file is read at all");

namespace cyber {
namespace dds {
namespace {

// The DDS transport (started by the first protobuf channel), unless
// --in_process_only. A malformed CYBER_DOMAIN_ID or CYBER_IP is reported
// and the process stays in-process: it runs, and says why it is alone.
std::shared_ptr<RemoteTransport> MakeFromFlags() {
  if (FLAGS_in_process_only) return nullptr;
  absl::StatusOr<DdsTransportOptions> options =
      DdsTransportOptionsFromEnvironment(program_invocation_short_name);
  if (!options.ok()) {
    AERROR << options.status().message()
           << "; channels stay inside this process";
    return nullptr;
  }
  options->profile_file = FLAGS_dds_profile_file;
  return std::make_shared<DdsTransport>(*std::move(options));
}

const bool g_registered = [] {
  SetProcessRemoteMaker(&MakeFromFlags);
  return true;
}();

}  // namespace
}  // namespace dds
}  // namespace cyber
