#include "tests/accuracy/summary_json.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace accuracy {
namespace {

// The "cpu" objects tools/accuracy_report.py reads: per scenario, seconds
// and percent of one core; in the config, whose threads they are.
TEST(SummaryJsonTest, WritesCpuPerScenario) {
  RunInfo run;
  run.cpu_threads = {"timer-tick", {"default-", "io-"}};
  run.thread_cpu_resolution = absl::Milliseconds(10);
  ScenarioResult idle;
  idle.id = "idle";
  idle.kind = ScenarioKind::kIdle;
  idle.cpu.window = absl::Seconds(4);
  idle.cpu.tick = absl::Milliseconds(20);
  idle.cpu.tick_threads = 1;
  idle.cpu.processors = absl::Milliseconds(100);
  idle.cpu.processor_threads = 2;
  idle.cpu.process = absl::Milliseconds(200);
  ScenarioResult periodic = idle;
  periodic.id = "periodic_2ms";
  periodic.kind = ScenarioKind::kPeriodic;
  periodic.cpu.floor = absl::Milliseconds(40);

  const std::string json = SummaryJson(run, {idle, periodic});
  EXPECT_NE(json.find("    \"cpu\": {\n"
                      "      \"tick_thread\": \"timer-tick\",\n"
                      "      \"processor_prefixes\": [\n"
                      "        \"default-\",\n"
                      "        \"io-\"\n"
                      "      ],\n"
                      "      \"thread_resolution_s\": 0.01\n"
                      "    }\n"),
            std::string::npos)
      << json;
  const std::string idle_cpu =
      "      \"cpu\": {\n"
      "        \"window_s\": 4,\n"
      "        \"tick_s\": 0.02,\n"
      "        \"tick_pct\": 0.5,\n"
      "        \"tick_threads\": 1,\n"
      "        \"processors_s\": 0.1,\n"
      "        \"processors_pct\": 2.5,\n"
      "        \"processor_threads\": 2,\n"
      "        \"process_s\": 0.2,\n"
      "        \"process_pct\": 5,\n"
      "        \"floor_s\": null,\n"
      "        \"floor_pct\": null\n"
      "      },\n";  // "target" follows
  EXPECT_NE(json.find(idle_cpu), std::string::npos) << json;
  EXPECT_NE(json.find("        \"floor_s\": 0.04,\n"
                      "        \"floor_pct\": 1\n"),
            std::string::npos)
      << json;
}

// The fields of issue 24 tools/accuracy_report.py reads: a oneshot's
// precision, whether the timer was refused, and the target verdict.
TEST(SummaryJsonTest, WritesPrecisionRefusalAndTarget) {
  RunInfo run;
  ScenarioResult exact;
  exact.id = "oneshot_3ms_exact";
  exact.kind = ScenarioKind::kOneshot;
  exact.precision = timer::TimerPrecision::kExact;
  const Instant zero;
  for (int i = 0; i < 10; ++i) {
    Fire f;
    f.index = i;
    f.expected = zero + absl::Milliseconds(3 * i);
    f.actual = f.expected + absl::Microseconds(95);
    exact.timer.push_back(f);
    f.actual = f.expected + absl::Microseconds(90);
    exact.floor.push_back(f);
  }
  ScenarioResult refused;
  refused.id = "periodic_1ms";
  refused.kind = ScenarioKind::kPeriodic;
  refused.period = absl::Milliseconds(1);
  refused.refused = true;
  refused.error = "period 1ms is below the 2ms resolution";

  const std::string json = SummaryJson(run, {exact, refused});
  EXPECT_NE(json.find("      \"refused\": false,\n"
                      "      \"precision\": \"kExact\",\n"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("      \"target\": {\n"
                      "        \"basis\": \"lateness\",\n"
                      "        \"rule\": \"p50 <= floor + 10us\",\n"
                      "        \"p50_over_floor_us\": 5,\n"
                      "        \"p99_over_floor_ratio\": 1.055555556,\n"
                      "        \"verdict\": \"meets\",\n"
                      "        \"why\": \"\"\n"
                      "      }\n"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("      \"refused\": true,\n"
                      "      \"precision\": null,\n"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("        \"p50_over_floor_us\": null,\n"
                      "        \"p99_over_floor_ratio\": null,\n"
                      "        \"verdict\": \"refused\",\n"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace accuracy
}  // namespace cyber
