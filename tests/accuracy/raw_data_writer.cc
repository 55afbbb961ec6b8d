#include "tests/accuracy/raw_data_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/accuracy/summary_json.h"

namespace cyber {
namespace accuracy {
namespace {

double Us(absl::Duration d) { return absl::ToDoubleMicroseconds(d); }

void AppendFires(std::string* out, const ScenarioResult& r, const char* source,
                 const std::vector<Fire>& fires) {
  for (const Fire& f : fires) {
    absl::StrAppendFormat(out, "%s,%s,%d,%.1f,%.1f,%.1f,", r.id, source,
                          f.index, Us(f.expected - r.zero),
                          Us(f.actual - r.zero), Us(f.lateness()));
    if (f.tick.has_value()) absl::StrAppendFormat(out, "%.1f", Us(f.actual - *f.tick));
    absl::StrAppendFormat(out, ",%d\n", f.missed_before);
  }
}

std::string FiresCsv(const std::vector<ScenarioResult>& results) {
  std::string out =
      "scenario,source,index,expected_us,actual_us,lateness_us,past_tick_us,"
      "missed_before\n";
  for (const ScenarioResult& r : results) {
    AppendFires(&out, r, "timer", r.timer);
    AppendFires(&out, r, "floor", r.floor);
  }
  return out;
}

std::string WakeupsCsv(const std::vector<ScenarioResult>& results) {
  std::string out = "scenario,start_s,length_s,wakeups,per_s\n";
  for (const ScenarioResult& r : results) {
    for (const WakeupSample& s : r.wakeups) {
      const double length = absl::ToDoubleSeconds(s.length);
      absl::StrAppendFormat(&out, "%s,%.3f,%.3f,%d,%.2f\n", r.id,
                            absl::ToDoubleSeconds(s.start - r.zero), length,
                            s.wakeups,
                            length > 0 ? static_cast<double>(s.wakeups) / length
                                       : 0.0);
    }
  }
  return out;
}

absl::Status WriteFile(const std::filesystem::path& path,
                       const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.close();
  if (!out) {
    return absl::UnavailableError(absl::StrCat(
        "cannot write ", path.string(), ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteRawData(const std::string& dir, const RunInfo& run,
                          const std::vector<ScenarioResult>& results) {
  const std::filesystem::path root(dir);
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  absl::Status s = WriteFile(root / "fires.csv", FiresCsv(results));
  if (s.ok()) s = WriteFile(root / "wakeups.csv", WakeupsCsv(results));
  if (s.ok()) s = WriteFile(root / "summary.json", SummaryJson(run, results));
  return s;
}

}  // namespace accuracy
}  // namespace cyber
