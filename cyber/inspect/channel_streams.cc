#include "cyber/inspect/channel_streams.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cyber/common/mutex.h"
#include "cyber/inspect/field_selector.h"
#include "cyber/inspect/rate_meter.h"
#include "cyber/inspect/rate_subscription.h"
#include "cyber/inspect/size_meter.h"

namespace cyber {
namespace inspect {
namespace {

// How often the waiting thread looks at the count and the stop flag.
constexpr absl::Duration kPoll = absl::Milliseconds(20);

// Waits until `done` or `stop`, calling `report` every `period`.
void WaitAndReport(const std::function<bool()>& done, const StopFn& stop, absl::Duration period,
                   const std::function<void()>& report) {
  absl::Time next = absl::Now() + period;
  while (!done() && !(stop && stop())) {
    absl::SleepFor(kPoll);
    if (report && absl::Now() >= next) {
      report();
      next += period;
    }
  }
}

}  // namespace

absl::Status NoDescriptor(const graph::ChannelView& channel) {
  return absl::FailedPreconditionError(absl::StrCat(
      "channel ", channel.name, ": no process announced the descriptor of its type \"",
      channel.type_name, "\", so its messages cannot be decoded"));
}

absl::Status RunEcho(const ChannelArgs& args, const graph::ChannelView& channel,
                     graph::DomainGraph& graph, std::ostream& out, const StopFn& stop) {
  if (channel.descriptor == nullptr) return NoDescriptor(channel);
  std::vector<FieldStep> path;
  if (!args.field.empty()) {
    absl::StatusOr<std::vector<FieldStep>> parsed = ParseFieldPath(args.field);
    if (!parsed.ok()) return parsed.status();
    path = *std::move(parsed);
    // A wrong field is reported before any message comes.
    absl::StatusOr<std::unique_ptr<google::protobuf::Message>> empty =
        graph.NewMessage(channel.type_name);
    if (!empty.ok()) return empty.status();
    absl::StatusOr<std::string> probe = SelectField(**empty, path);
    if (!probe.ok() && !absl::IsInvalidArgument(probe.status())) return probe.status();
  }
  struct State {
    Mutex mu;
    int64_t printed ABSL_GUARDED_BY(mu) = 0;
  } state;
  const int64_t count = args.count;
  auto subscription = graph.Subscribe(channel.name, [&](const graph::DomainGraph::Received& r) {
    const std::string type = r.type_name.empty() ? channel.type_name : r.type_name;
    std::string text;
    auto message = graph.Decode(type, r.payload);
    if (!message.ok()) {
      text = absl::StrCat("(a message of ", r.payload.size(),
                          " bytes that does not decode: ", message.status().message(), ")\n");
    } else {
      absl::StatusOr<std::string> selected = SelectField(**message, path);
      text = selected.ok() ? *selected : absl::StrCat("(", selected.status().message(), ")\n");
    }
    MutexLock lock(&state.mu);
    if (count > 0 && state.printed >= count) return;
    out << text << "---\n";
    out.flush();
    ++state.printed;
  });
  if (!subscription.ok()) return subscription.status();
  WaitAndReport(
      [&] {
        MutexLock lock(&state.mu);
        return count > 0 && state.printed >= count;
      },
      stop, args.report_period, nullptr);
  subscription->reset();
  return absl::OkStatus();
}

absl::Status RunHz(const ChannelArgs& args, const graph::ChannelView& channel,
                   graph::DomainGraph& graph, std::ostream& out, const StopFn& stop) {
  struct State {
    explicit State(size_t window) : meter(window) {}
    Mutex mu;
    RateMeter meter ABSL_GUARDED_BY(mu);
    uint64_t at_last_report ABSL_GUARDED_BY(mu) = 0;
  } state(args.window);
  const int64_t count = args.count;
  auto subscription = SubscribeForRate(graph, channel, [&](absl::Time received, size_t) {
    MutexLock lock(&state.mu);
    if (count > 0 && state.meter.total() >= static_cast<uint64_t>(count)) return;
    state.meter.Add(received);
  });
  if (!subscription.ok()) return subscription.status();
  auto report = [&] {
    MutexLock lock(&state.mu);
    if (state.meter.total() == state.at_last_report) {
      out << "no new messages\n";
    } else if (std::optional<RateReport> r = state.meter.Report()) {
      out << FormatRate(*r);
    }
    out.flush();
    state.at_last_report = state.meter.total();
  };
  WaitAndReport(
      [&] {
        MutexLock lock(&state.mu);
        return count > 0 && state.meter.total() >= static_cast<uint64_t>(count);
      },
      stop, args.report_period, report);
  subscription->reset();
  MutexLock lock(&state.mu);
  if (state.meter.total() == state.at_last_report && state.at_last_report > 0) {
    return absl::OkStatus();  // the last report says it all
  }
  if (std::optional<RateReport> r = state.meter.Report()) {
    out << FormatRate(*r);
  } else {
    out << "fewer than 2 messages on " << channel.name << ": no rate\n";
  }
  return absl::OkStatus();
}

absl::Status RunBw(const ChannelArgs& args, graph::DomainGraph& graph, std::ostream& out,
                   const StopFn& stop) {
  std::vector<graph::ChannelView> views;
  for (const std::string& name : args.channels) {
    absl::StatusOr<graph::ChannelView> channel = graph.Channel(name);
    if (!channel.ok()) return channel.status();
    views.push_back(*std::move(channel));
  }
  struct PerChannel {
    explicit PerChannel(size_t window) : meter(window) {}
    SizeMeter meter;
  };
  struct State {
    Mutex mu;
    std::vector<PerChannel> channels ABSL_GUARDED_BY(mu);
    uint64_t at_last_report ABSL_GUARDED_BY(mu) = 0;  // messages of all channels
  } state;
  {
    MutexLock lock(&state.mu);
    for (size_t i = 0; i < args.channels.size(); ++i) state.channels.emplace_back(args.window);
  }
  const uint64_t count = static_cast<uint64_t>(args.count);
  const bool several = args.channels.size() > 1;
  std::vector<std::unique_ptr<RemoteSubscription>> subscriptions;
  for (size_t i = 0; i < args.channels.size(); ++i) {
    auto subscription =
        SubscribeForRate(graph, views[i], [&state, i, count](absl::Time received, size_t bytes) {
          MutexLock lock(&state.mu);
          SizeMeter& meter = state.channels[i].meter;
          if (count > 0 && meter.total() >= count) return;
          meter.Add(received, bytes);
        });
    if (!subscription.ok()) return subscription.status();
    subscriptions.push_back(*std::move(subscription));
  }
  auto total = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mu) {
    uint64_t all = 0;
    for (const PerChannel& c : state.channels) all += c.meter.total();
    return all;
  };
  auto print = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mu) {
    state.at_last_report = total();
    for (size_t i = 0; i < args.channels.size(); ++i) {
      if (several) out << args.channels[i] << "\n";
      if (std::optional<SizeReport> r = state.channels[i].meter.Report()) {
        out << FormatSize(*r);
      } else {
        out << "fewer than 2 messages: no bandwidth\n";
      }
    }
    out.flush();
  };
  WaitAndReport(
      [&] {
        MutexLock lock(&state.mu);
        if (count == 0) return false;
        for (const PerChannel& c : state.channels) {
          if (c.meter.total() < count) return false;
        }
        return true;
      },
      stop, args.report_period,
      [&] {
        MutexLock lock(&state.mu);
        print();
      });
  subscriptions.clear();
  MutexLock lock(&state.mu);
  if (state.at_last_report == 0 || total() != state.at_last_report) print();
  return absl::OkStatus();
}

}  // namespace inspect
}  // namespace cyber
