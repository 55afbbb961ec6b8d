// mcap_fuzzer: arbitrary bytes as a recording, through everything that
// decodes one: McapReader (the walk over records and chunks, zstd and lz4
// included; the summary through the footer or by a scan) and Recording
// (schemas, channels, the writer and origin records, the channel
// statistics metadata, the one order).
//
// Why: a recording comes from disk, from another machine, from a recorder
// killed mid-write or from another MCAP writer; cyber_recorder info, play,
// split, recover and every replay into a graph test read it. They must
// name what is wrong, never crash, read past the bytes or hang.
//
// Checked for each input:
//   - Open refuses exactly the inputs without the magic;
//   - a walk that fails says DataLoss and names the byte offset; the same
//     walk with damage ending the scan visits the same records and fails
//     only for a first record that is not the Header;
//   - a summary built by a scan counts the messages the walk visited;
//   - a recording that loads is in its documented order (log_time,
//     channel, writer, sequence) and holds every message the walk visited.

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#include "cyber/record/mcap/mcap_bytes.h"
#include "cyber/record/mcap/mcap_reader.h"
#include "cyber/record/mcap/recording.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/quiet_logging.h"

namespace {

using cyber::record::McapReader;
using cyber::record::McapRecordView;
using cyber::record::Recording;
using cyber::record::RecordedMessage;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  cyber::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  bool has_magic = size >= cyber::record::kMcapMagicSize &&
                   bytes.compare(0, cyber::record::kMcapMagicSize, cyber::record::kMcapMagic,
                                 cyber::record::kMcapMagicSize) == 0;
  auto reader = McapReader::FromBytes(bytes, "fuzz input");
  FUZZ_CHECK(reader.ok() == has_magic);
  if (!reader.ok()) return 0;

  uint64_t strict_messages = 0;
  auto strict = (*reader)->ForEachRecord([&](const McapRecordView& v) {
    if (v.message.has_value()) ++strict_messages;
    return true;
  });
  if (!strict.ok()) {
    FUZZ_CHECK(strict.status().code() == absl::StatusCode::kDataLoss);
    FUZZ_CHECK(strict.status().message().find("byte ") != absl::string_view::npos);
  }
  uint64_t lenient_messages = 0;
  auto lenient = (*reader)->ForEachRecord(
      [&](const McapRecordView& v) {
        if (v.message.has_value()) ++lenient_messages;
        return true;
      },
      /*damage_ends_scan=*/true);
  if (!lenient.ok()) {
    FUZZ_CHECK(lenient.status().message().find("Header") != absl::string_view::npos);
    FUZZ_CHECK(!strict.ok());
  } else {
    FUZZ_CHECK(lenient->valid_until <= size);
    if (strict.ok()) {
      FUZZ_CHECK(lenient_messages == strict_messages);
      FUZZ_CHECK(lenient->valid_until == strict->valid_until);
    }
  }

  auto summary = (*reader)->Summary();
  if (summary.ok() && !summary->from_summary_section && strict.ok()) {
    FUZZ_CHECK(summary->statistics.message_count == strict_messages);
  }

  auto recording = Recording::LoadBytes(bytes, "fuzz input");
  if (recording.ok()) {
    FUZZ_CHECK(strict.ok());
    FUZZ_CHECK(recording->messages().size() == strict_messages);
    const auto& m = recording->messages();
    for (size_t i = 1; i < m.size(); ++i) {
      FUZZ_CHECK(std::tie(m[i - 1].log_time, m[i - 1].channel, m[i - 1].writer_id,
                          m[i - 1].sequence) <=
                 std::tie(m[i].log_time, m[i].channel, m[i].writer_id, m[i].sequence));
    }
  }
  return 0;
}
