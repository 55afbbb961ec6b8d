// Writes the recording graph_test_recording_test replays (a genrule runs
// it, so no binary file is committed): on /d, google.protobuf.Duration
// 1..5 s every 7 ms from the first log_time; on /unfed, one message
// before them (the recording's first: instants count from it).
//
//   write_durations_recording <out.mcap>

#include <cstdint>
#include <cstdio>

#include "cyber/simulation/testing/recording_file.h"
#include "google/protobuf/duration.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <out.mcap>\n", argv[0]);
    return 2;
  }
  constexpr uint64_t kT0 = 1700000000000000000ull;
  constexpr uint64_t kStep = 7000000;  // 7 ms
  auto file = cyber::testing::RecordingFile::Create(argv[1]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  google::protobuf::Duration d;
  d.set_seconds(100);
  absl::Status s = (*file)->Add("/unfed", d, kT0);
  for (int64_t i = 1; i <= 5 && s.ok(); ++i) {
    d.set_seconds(i);
    s = (*file)->Add("/d", d, kT0 + static_cast<uint64_t>(i) * kStep);
  }
  if (s.ok()) s = (*file)->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
