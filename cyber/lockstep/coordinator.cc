#include "cyber/lockstep/coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cyber {
namespace lockstep {
namespace {

std::string Instant(int64_t ns) { return absl::FormatDuration(absl::Nanoseconds(ns)); }

}  // namespace

absl::StatusOr<Coordinator> Coordinator::Create(CoordinatorOptions options, absl::Time now) {
  if (options.processes.empty()) {
    return absl::InvalidArgumentError("lockstep coordinator: option processes is empty; name every process of the run");
  }
  std::set<std::string> seen;
  for (const std::string& p : options.processes) {
    if (p.empty()) {
      return absl::InvalidArgumentError("lockstep coordinator: option processes has an empty name");
    }
    if (!seen.insert(p).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("lockstep coordinator: option processes names \"", p, "\" twice"));
    }
  }
  if (options.end_ns < options.start_ns) {
    return absl::InvalidArgumentError(absl::StrCat("lockstep coordinator: option end_ns ", options.end_ns,
                                                   " is before start_ns ", options.start_ns));
  }
  if (options.run_id == 0) {
    return absl::InvalidArgumentError("lockstep coordinator: option run_id is 0; it must not be");
  }
  for (const auto& [name, d] : {std::pair<const char*, absl::Duration>{"join_deadline", options.join_deadline},
                                {"step_deadline", options.step_deadline}}) {
    if (d <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat("lockstep coordinator: option ", name, " is ",
                                                     absl::FormatDuration(d), "; it must be positive"));
    }
  }
  return Coordinator(std::move(options), now);
}

Coordinator::Coordinator(CoordinatorOptions options, absl::Time now)
    : options_(std::move(options)),
      expected_(options_.processes.begin(), options_.processes.end()),
      instant_ns_(options_.start_ns),
      phase_began_(now) {}

void Coordinator::OnReport(const Report& report, absl::Time /*now*/) {
  if (stopped_ || failure_) return;
  const std::string& who = report.process();
  switch (report.kind()) {
    case Report::JOIN: {
      if (report.clock() != "simulated") {
        Fail(absl::StrCat("process \"", who, "\" (host ", report.host(), ", pid ", report.pid(),
                          ") runs on the ", report.clock().empty() ? "unnamed" : report.clock(),
                          " clock and joined a simulated run; start it with --clock=simulated"));
        return;
      }
      if (!expected_.count(who)) {
        Fail(absl::StrCat("process \"", who, "\" (host ", report.host(), ", pid ", report.pid(),
                          ") joined, but the run's processes are ", absl::StrJoin(expected_, ", ")));
        return;
      }
      auto [it, inserted] = joined_pids_.emplace(who, report.pid());
      if (!inserted && it->second != report.pid()) {
        Fail(absl::StrCat("process \"", who, "\" joined again as pid ", report.pid(), " (it was pid ",
                          it->second, ") at step ", step_,
                          ": a process that restarts during a run makes it non-deterministic"));
        return;
      }
      joined_.insert(who);
      joins_[who] = report;
      return;
    }
    case Report::DONE: {
      if (report.run_id() != options_.run_id || !expected_.count(who) || step_ == 0 ||
          report.step() != step_) {
        ++ignored_;
        return;
      }
      if (report.reached_ns() != instant_ns_) {
        Fail(absl::StrCat("process \"", who, "\" reported step ", step_, " done at ", Instant(report.reached_ns()),
                          ", but the step granted ", Instant(instant_ns_)));
        return;
      }
      // A channel opened since (or a writer of a channel it read): who
      // reads from whom is mapped again before the next grant.
      if (Endpoints(report) != Endpoints(latest_.count(who) ? latest_[who] : joins_[who])) {
        remap_ = true;
      }
      latest_[who] = report;
      answered_.insert(who);
      return;
    }
    case Report::LEAVE: {
      if (report.run_id() != options_.run_id && report.run_id() != 0) {
        ++ignored_;
        return;
      }
      if (!expected_.count(who)) return;
      Fail(absl::StrCat("process \"", who, "\" left at step ", step_, " (", Instant(instant_ns_),
                        ") before the end (", Instant(options_.end_ns), ")"));
      return;
    }
    default:
      ++ignored_;
  }
}

void Coordinator::OnProcessLost(const std::string& process, absl::Time /*now*/) {
  if (stopped_ || failure_ || !expected_.count(process)) return;
  Fail(absl::StrCat("process \"", process,
                    "\" was lost (its participant is gone: it exited, was killed, or stopped "
                    "answering) ",
                    step_ == 0 ? std::string("before the first grant")
                               : absl::StrCat("at step ", step_, " (", Instant(instant_ns_), ")")));
}

bool Coordinator::AllJoined() const { return joined_.size() == expected_.size() && Unmatched().empty(); }

std::string Coordinator::Unmatched() const {
  for (const auto& [writer, w] : joins_) {
    for (const ChannelCount& out : w.channels()) {
      if (!out.writes()) continue;
      for (const auto& [reader, r] : joins_) {
        if (reader == writer) continue;
        for (const ChannelCount& in : r.channels()) {
          if (!in.reads() || in.channel() != out.channel()) continue;
          if (std::find(out.matched_readers().begin(), out.matched_readers().end(), reader) ==
              out.matched_readers().end()) {
            return absl::StrCat("the writer of \"", writer, "\" on \"", out.channel(),
                                "\" has not matched the reader of \"", reader, "\" yet");
          }
        }
      }
    }
  }
  return "";
}

bool Coordinator::Due(const std::string& process) const {
  // The start and the end: every process runs (each one's clock reaches
  // the end before its summary).
  if (step_ <= 1 || instant_ns_ >= options_.end_ns) return true;
  auto it = latest_.find(process);
  if (it == latest_.end()) return true;
  const int64_t next = it->second.next_event_ns();
  return next >= 0 && next <= instant_ns_;
}

std::string Coordinator::Owed() const {
  std::vector<std::string> missing;
  for (const std::string& p : expected_) {
    if (Due(p) && !answered_.count(p)) missing.push_back(p);
  }
  if (!missing.empty()) {
    return absl::StrCat("step ", step_, " (", Instant(instant_ns_), "): no DONE yet from ",
                        absl::StrJoin(missing, ", "));
  }
  // Per channel: what each process sent, then what each reader got (each
  // process's latest report: one not due and sent nothing since still
  // holds).
  std::map<std::string, uint64_t> sent;
  for (const auto& [p, r] : latest_) {
    for (const ChannelCount& c : r.channels()) sent[c.channel()] += c.sent();
  }
  for (const auto& [p, r] : latest_) {
    // A gathering process hands over at the next step what has arrived:
    // arrived is what must balance.
    const bool gathers = gathering_now_.count(p) > 0;
    const char* verb = gathers ? "\" has had " : "\" has received ";
    for (const ChannelCount& c : r.channels()) {
      if (!c.reads()) continue;
      const uint64_t from_others = sent[c.channel()] - c.sent();
      const uint64_t got = gathers ? c.arrived() : c.received();
      if (got < from_others) {
        return absl::StrCat("step ", step_, " (", Instant(instant_ns_), "): \"", p, verb, got, " of the ",
                            from_others, " messages the others sent on \"", c.channel(), "\"",
                            gathers ? " arrive" : "");
      }
      if (got > from_others) {
        return absl::StrCat("step ", step_, " (", Instant(instant_ns_), "): \"", p, verb, got,
                            " messages on \"", c.channel(), "\"", gathers ? " arrive" : "", ", more than the ",
                            from_others, " the others reported sending (waiting for their new reports)");
      }
    }
  }
  return "";
}

bool Coordinator::Gathered() const {
  for (const std::string& p : gathering_) {
    auto it = latest_.find(p);
    if (it == latest_.end()) continue;
    const int64_t next = it->second.next_event_ns();
    if (next >= 0 && next <= instant_ns_) return true;
  }
  return false;
}

int Coordinator::Endpoints(const Report& report) {
  // Channels are never closed in the counts, nor their flags cleared: the
  // sum grows with every change.
  int n = 0;
  for (const ChannelCount& c : report.channels()) n += 1 + c.writes() + c.reads();
  return n;
}

void Coordinator::MapWriters() {
  writers_of_.clear();
  readers_of_.clear();
  gathering_.clear();
  // Each process's latest report, its JOIN before the first.
  std::map<std::string, const Report*> reports;
  for (const auto& [p, r] : joins_) reports[p] = &r;
  for (const auto& [p, r] : latest_) reports[p] = &r;
  for (const auto& [reader, r] : reports) {
    for (const ChannelCount& in : r->channels()) {
      if (!in.reads()) continue;
      for (const auto& [writer, w] : reports) {
        if (writer == reader) continue;
        for (const ChannelCount& out : w->channels()) {
          if (out.writes() && out.channel() == in.channel()) {
            writers_of_[reader].insert(writer);
            readers_of_[writer].insert(reader);
          }
        }
      }
    }
  }
  for (const auto& [reader, writers] : writers_of_) {
    if (writers.size() >= 2) gathering_.insert(reader);
  }
}

std::set<std::string> Coordinator::GatheringAt(const Grant& grant, bool same_instant) const {
  if (same_instant || gathering_.empty()) return gathering_;
  // Who may run at this instant: the due processes, and whoever reads
  // what one of them may write. A gathering process with at most one of
  // its writers among them receives messages of this instant from one
  // process only, in the order sent: it may hand them over as they arrive.
  std::set<std::string> may_run(grant.due().begin(), grant.due().end());
  std::vector<std::string> todo(may_run.begin(), may_run.end());
  while (!todo.empty()) {
    const std::string p = std::move(todo.back());
    todo.pop_back();
    auto readers = readers_of_.find(p);
    if (readers == readers_of_.end()) continue;
    for (const std::string& r : readers->second) {
      if (may_run.insert(r).second) todo.push_back(r);
    }
  }
  // One that gathers makes every one gather: a second step at this
  // instant may follow, and a process that took messages as they arrived
  // at this step would still do so with a message of that second step
  // that reaches it before its grant does (the instant is the same, so
  // only deliver_through holds such a message back).
  for (const std::string& g : gathering_) {
    int running_writers = 0;
    for (const std::string& w : writers_of_.at(g)) running_writers += may_run.count(w);
    if (running_writers >= 2) return gathering_;
  }
  return {};
}

int64_t Coordinator::NextInstant() const {
  // Messages of this instant wait to be handed over at a gathering
  // process: another step at this instant.
  if (Gathered()) return instant_ns_;
  int64_t next = options_.end_ns;
  for (const auto& [p, r] : latest_) {
    if (r.next_event_ns() > instant_ns_) next = std::min<int64_t>(next, r.next_event_ns());
  }
  return next;
}

void Coordinator::Fail(std::string why) {
  if (!failure_) failure_ = std::move(why);
}

Coordinator::Decision Coordinator::Stop(std::string why) {
  stopped_ = true;
  Decision d;
  d.kind = Decision::Kind::kStop;
  d.grant.set_run_id(options_.run_id);
  d.grant.set_step(step_);
  d.grant.set_instant_ns(instant_ns_);
  d.grant.set_stop(true);
  d.grant.set_failed(failure_.has_value());
  d.grant.set_why(std::move(why));
  return d;
}

Coordinator::Decision Coordinator::Next(absl::Time now) {
  Decision wait;
  if (stopped_) return wait;
  if (failure_) return Stop(*failure_);
  if (step_ == 0) {
    if (!AllJoined()) {
      if (now - phase_began_ > options_.join_deadline) {
        Fail(absl::StrCat("not every process joined within ", absl::FormatDuration(options_.join_deadline), ": ",
                          Waiting()));
        return Stop(*failure_);
      }
      wait.until = phase_began_ + options_.join_deadline;
      return wait;
    }
  } else {
    const std::string owed = Owed();
    if (!owed.empty()) {
      if (now - phase_began_ > options_.step_deadline) {
        Fail(absl::StrCat("step not complete within ", absl::FormatDuration(options_.step_deadline), ": ", owed));
        return Stop(*failure_);
      }
      wait.until = phase_began_ + options_.step_deadline;
      return wait;
    }
    if (instant_ns_ >= options_.end_ns && !Gathered()) {
      return Stop(absl::StrCat("the end (", Instant(options_.end_ns), ") reached after ", step_, " steps"));
    }
  }
  if (step_ == 0 || remap_) {
    MapWriters();
    remap_ = false;
  }
  const int64_t next = step_ == 0 ? options_.start_ns : NextInstant();
  const bool same_instant = step_ > 0 && next == instant_ns_;
  ++step_;
  instant_ns_ = next;
  answered_.clear();
  phase_began_ = now;
  Decision grant;
  grant.kind = Decision::Kind::kGrant;
  grant.grant.set_run_id(options_.run_id);
  grant.grant.set_step(step_);
  grant.grant.set_instant_ns(instant_ns_);
  for (const std::string& p : expected_) {
    if (Due(p)) grant.grant.add_due(p);
  }
  gathering_now_ = GatheringAt(grant.grant, same_instant);
  for (const std::string& p : gathering_now_) {
    auto it = latest_.find(p);
    (*grant.grant.mutable_deliver_through())[p] = it == latest_.end() ? 0 : it->second.arrivals();
  }
  return grant;
}

bool Coordinator::ReadyToGrant() const {
  if (stopped_ || failure_) return false;
  if (step_ == 0) return AllJoined();
  return Owed().empty() && (instant_ns_ < options_.end_ns || Gathered());
}

std::string Coordinator::Waiting() const {
  if (stopped_) return "";
  if (step_ == 0) {
    std::vector<std::string> missing;
    for (const std::string& p : expected_) {
      if (!joined_.count(p)) missing.push_back(p);
    }
    if (!missing.empty()) return absl::StrCat("waiting for ", absl::StrJoin(missing, ", "), " to join");
    return Unmatched();
  }
  return Owed();
}

}  // namespace lockstep
}  // namespace cyber
