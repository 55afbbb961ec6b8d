// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// ShmTestParticipant: the smallest Fast-DDS participant that puts files in
// /dev/shm: shared-memory transport only (no UDP), one DataWriter of a
// string on one topic. For tests of shm_cleanup.h, which start it in a child
// process and kill it, or keep it alive in the test process.
//
// The sample type is not plain, so Fast-DDS does not add a data-sharing pool
// (fast_datasharing_*): the files are the transport's only.
//
// Test-only (testonly). Not thread-safe: one thread uses an instance.

#ifndef CYBER_TRANSPORT_DDS_SHM_TEST_PARTICIPANT_H_
#define CYBER_TRANSPORT_DDS_SHM_TEST_PARTICIPANT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cyber {
namespace dds {

class ShmTestParticipant {
 public:
  // Creates the participant in DDS domain `domain` with its writer.
  static absl::StatusOr<std::unique_ptr<ShmTestParticipant>> Create(int domain);
  // Deletes the writer and the participant: Fast-DDS removes its files.
  ~ShmTestParticipant();
  ShmTestParticipant(const ShmTestParticipant&) = delete;
  ShmTestParticipant& operator=(const ShmTestParticipant&) = delete;

  // Writes one sample.
  absl::Status Publish(const std::string& text);

 private:
  struct Entities;
  explicit ShmTestParticipant(std::unique_ptr<Entities> entities);

  std::unique_ptr<Entities> entities_;
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_SHM_TEST_PARTICIPANT_H_
