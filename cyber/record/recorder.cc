#include "cyber/record/recorder.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/common/steady_time.h"
#include "cyber/graph/descriptors.h"
#include "glog/logging.h"

namespace cyber {
namespace record {
namespace {

struct Item {
  std::shared_ptr<const ChannelInfo> channel;
  std::string payload;
  MessageOrigin origin;
  uint64_t log_time = 0;
  uint64_t publish_time = 0;
};

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

uint64_t UnixNanos(absl::Time t) { return static_cast<uint64_t>(absl::ToUnixNanos(t)); }

}  // namespace

// What the transport's threads and the listener share with the writing
// thread; the listener holds it by shared_ptr, so it outlives a listener
// call that races with Stop().
struct RecorderShared {
  Mutex mu;
  CondVar wake;  // the writing thread: a graph change or the stop
  std::deque<Item> queue ABSL_GUARDED_BY(mu);
  uint64_t queued_bytes ABSL_GUARDED_BY(mu) = 0;
  uint64_t peak_queued_bytes ABSL_GUARDED_BY(mu) = 0;
  // Bytes of the batch the writing thread is writing: with the queue's,
  // what the recorder holds, bounded by queue_bytes.
  uint64_t writing_bytes ABSL_GUARDED_BY(mu) = 0;
  // Not yet counted by the writer, by channel.
  std::map<std::string, uint64_t> dropped ABSL_GUARDED_BY(mu);
  std::map<std::string, uint64_t> lost ABSL_GUARDED_BY(mu);
  // Each writer's sequence numbers as they arrive (by GUID): a gap is a
  // message lost before it reached the recorder. Counted here, in arrival
  // order, so that a message the recorder drops is not counted lost too.
  SequenceGaps sequence_gaps ABSL_GUARDED_BY(mu);
  absl::Time last_drop_warning ABSL_GUARDED_BY(mu) = absl::InfinitePast();  // steady
  bool graph_changed ABSL_GUARDED_BY(mu) = true;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  // Published by the writing thread for Stats().
  std::map<std::string, ChannelRecordStats> totals ABSL_GUARDED_BY(mu);
  std::map<std::string, std::string> waiting ABSL_GUARDED_BY(mu);
  std::vector<std::string> files ABSL_GUARDED_BY(mu);
  uint64_t bytes_written ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
};

class Recorder::Impl {
 public:
  Impl(graph::DomainGraph* graph, RecorderOptions options, std::unique_ptr<RecordingWriter> writer)
      : graph_(graph),
        options_(std::move(options)),
        writer_(std::move(writer)),
        shared_(std::make_shared<RecorderShared>()) {
    {
      MutexLock lock(&shared_->mu);
      shared_->files = writer_->files();
    }
    std::shared_ptr<RecorderShared> shared = shared_;
    listener_ = graph_->AddListener([shared] {
      MutexLock lock(&shared->mu);
      shared->graph_changed = true;
      shared->wake.Signal();
    });
    thread_ = std::thread([this] { Run(); });
  }

  ~Impl() {
    absl::Status s = Stop();
    LOG_IF(ERROR, !s.ok()) << "recorder: " << s;
  }

  absl::Status Stop() {
    // Held for the whole stop: a second caller returns once it is done.
    MutexLock stopping(&stop_mu_);
    {
      MutexLock lock(&shared_->mu);
      if (stopped_) return shared_->error;
      stopped_ = true;
      shared_->stopping = true;
      shared_->wake.Signal();
    }
    graph_->RemoveListener(listener_);
    thread_.join();
    MutexLock lock(&shared_->mu);
    return shared_->error;
  }

  RecorderStats Stats() const {
    RecorderStats s;
    MutexLock lock(&shared_->mu);
    s.channels = shared_->totals;
    for (const auto& [channel, n] : shared_->dropped) s.channels[channel].dropped += n;
    for (const auto& [channel, n] : shared_->lost) s.channels[channel].lost += n;
    s.queued_bytes = shared_->queued_bytes;
    s.peak_queued_bytes = shared_->peak_queued_bytes;
    s.bytes_written = shared_->bytes_written;
    s.files = shared_->files;
    s.waiting = shared_->waiting;
    s.error = shared_->error;
    return s;
  }

 private:
  bool Selected(const std::string& channel) const {
    if (Contains(options_.exclude, channel)) return false;
    return options_.all || Contains(options_.channels, channel);
  }

  // Subscribes to every selected channel not subscribed yet; says why a
  // selected one cannot be recorded yet. On the writing thread only.
  void Refresh() {
    std::map<std::string, std::string> waiting;
    std::vector<graph::ChannelView> channels = graph_->Channels();
    for (const std::string& name : options_.channels) {
      bool known = std::any_of(channels.begin(), channels.end(),
                               [&](const graph::ChannelView& c) { return c.name == name; });
      if (!known && subscriptions_.count(name) == 0) {
        waiting[name] = absl::StrCat("no process of ", graph_->DomainDescription(),
                                     " announces it yet");
      }
    }
    for (const graph::ChannelView& view : channels) {
      if (!Selected(view.name) || subscriptions_.count(view.name) > 0) continue;
      const std::optional<ChannelQos> qos = graph::ReaderQosFor(view);
      if (!qos.has_value()) {
        waiting[view.name] = "no writer in another process yet";
        continue;
      }
      if (view.descriptor == nullptr) {
        waiting[view.name] = absl::StrCat("no descriptor of ", view.type_name, " announced yet");
        continue;
      }
      auto info = std::make_shared<ChannelInfo>();
      info->name = view.name;
      info->type_name = view.type_name;
      info->descriptor_set = graph::DescriptorSetOf(view.descriptor).SerializeAsString();
      const bool reliable = qos->reliability == ChannelQos::Reliability::kReliable;
      const bool transient = qos->durability == ChannelQos::Durability::kTransientLocal;
      info->metadata = {{"qos", qos->ToString()},
                        {"reliable", reliable ? "true" : "false"},
                        {"transient_local", transient ? "true" : "false"},
                        {"depth", absl::StrCat(qos->depth)}};
      std::shared_ptr<RecorderShared> shared = shared_;
      const uint64_t limit = options_.queue_bytes;
      std::shared_ptr<const ChannelInfo> channel = info;
      absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub = graph_->Subscribe(
          view.name, [shared, channel, limit](const graph::DomainGraph::Received& r) {
            const absl::Time now = absl::Now();  // the recording's time line, not a schedule
            MutexLock lock(&shared->mu);
            if (!r.writer_guid.empty() && r.sequence > 0) {
              if (uint64_t gap = shared->sequence_gaps.Next(r.writer_guid, r.sequence)) {
                shared->lost[channel->name] += gap;
              }
            }
            if (shared->queued_bytes + shared->writing_bytes + r.payload.size() > limit) {
              ++shared->dropped[channel->name];
              const absl::Time steady = SteadyNow();  // the warning's rate, on the steady clock
              if (steady - shared->last_drop_warning >= absl::Seconds(1)) {
                shared->last_drop_warning = steady;
                LOG(WARNING) << "recorder: cannot keep up: it holds "
                             << shared->queued_bytes + shared->writing_bytes
                             << " bytes (the limit is " << limit
                             << "); dropping messages of \"" << channel->name
                             << "\" (each is counted in the channel's statistics)";
              }
              return;
            }
            Item item;
            item.channel = channel;
            item.payload.assign(r.payload.data(), r.payload.size());
            item.origin.writer_label = r.writer;
            item.origin.writer_guid = r.writer_guid;
            item.origin.sequence = r.sequence;
            item.log_time = UnixNanos(now);
            item.publish_time = r.send_time == absl::InfinitePast() ? item.log_time
                                                                    : UnixNanos(r.send_time);
            shared->queued_bytes += item.payload.size();
            shared->peak_queued_bytes = std::max(shared->peak_queued_bytes, shared->queued_bytes);
            shared->queue.push_back(std::move(item));
          });
      if (!sub.ok()) {
        waiting[view.name] = std::string(sub.status().message());
        continue;
      }
      subscriptions_[view.name] = *std::move(sub);
      if (!failed_) {
        if (absl::Status s = writer_->DeclareChannel(*info); !s.ok()) {
          failed_ = true;
          LOG(ERROR) << "recorder: writing stops: " << s;
          MutexLock lock(&shared_->mu);
          shared_->error = s;
        }
      }
      LOG(INFO) << "recorder: recording \"" << view.name << "\" (" << view.type_name << ", "
                << qos->ToString() << ")";
    }
    MutexLock lock(&shared_->mu);
    shared_->waiting = std::move(waiting);
  }

  // Writes a batch; after the first error nothing more is written (it is
  // counted as dropped) and the error is kept for Stats() and Stop().
  void Write(std::deque<Item>* batch, std::map<std::string, uint64_t>* dropped,
             std::map<std::string, uint64_t>* lost) {
    for (const auto& [channel, n] : *dropped) writer_->CountDropped(channel, n);
    for (const auto& [channel, n] : *lost) writer_->CountLost(channel, n);
    for (Item& item : *batch) {
      if (failed_) {
        writer_->CountDropped(item.channel->name, 1);
        continue;
      }
      absl::Status s = writer_->Write(*item.channel, item.origin, item.log_time,
                                      item.publish_time, item.payload);
      if (!s.ok()) {
        failed_ = true;
        LOG(ERROR) << "recorder: writing stops: " << s;
        MutexLock lock(&shared_->mu);
        shared_->error = s;
      }
    }
    batch->clear();
    dropped->clear();
    lost->clear();
    MutexLock lock(&shared_->mu);
    shared_->writing_bytes = 0;
  }

  void Publish() {
    MutexLock lock(&shared_->mu);
    shared_->totals = writer_->totals();
    shared_->files = writer_->files();
    shared_->bytes_written = writer_->bytes();
  }

  void Run() {
    absl::Time last_refresh = absl::InfinitePast();
    absl::Time last_flush = SteadyNow();
    std::deque<Item> batch;
    std::map<std::string, uint64_t> dropped, lost;
    while (true) {
      bool changed, stopping;
      {
        MutexLock lock(&shared_->mu);
        // Messages are written in batches at most 100 ms old; a graph
        // change or the stop wakes the thread at once.
        if (!shared_->graph_changed && !shared_->stopping) {
          shared_->wake.WaitUntil(&shared_->mu, std::chrono::steady_clock::now() +
                                                   std::chrono::milliseconds(100));
        }
        batch.swap(shared_->queue);
        shared_->writing_bytes = shared_->queued_bytes;
        shared_->queued_bytes = 0;
        dropped.swap(shared_->dropped);
        lost.swap(shared_->lost);
        changed = shared_->graph_changed;
        shared_->graph_changed = false;
        stopping = shared_->stopping;
      }
      Write(&batch, &dropped, &lost);
      absl::Time now = SteadyNow();
      if (stopping) break;
      if (changed || now - last_refresh >= absl::Milliseconds(250)) {
        Refresh();
        last_refresh = now;
      }
      if (now - last_flush >= options_.flush_period && !failed_) {
        if (absl::Status s = writer_->Flush(); !s.ok()) {
          failed_ = true;
          MutexLock lock(&shared_->mu);
          shared_->error = s;
        }
        last_flush = now;
      }
      Publish();
    }
    // No handler runs once its subscription is gone; then the last of the
    // queue is written.
    subscriptions_.clear();
    {
      MutexLock lock(&shared_->mu);
      batch.swap(shared_->queue);
      shared_->writing_bytes = shared_->queued_bytes;
      shared_->queued_bytes = 0;
      dropped.swap(shared_->dropped);
      lost.swap(shared_->lost);
    }
    Write(&batch, &dropped, &lost);
    absl::Status closed = writer_->Close();
    Publish();
    if (!closed.ok()) {
      MutexLock lock(&shared_->mu);
      if (shared_->error.ok()) shared_->error = closed;
    }
  }

  graph::DomainGraph* const graph_;
  const RecorderOptions options_;
  std::unique_ptr<RecordingWriter> writer_;  // the writing thread's
  std::shared_ptr<RecorderShared> shared_;
  uint64_t listener_ = 0;
  std::map<std::string, std::unique_ptr<RemoteSubscription>> subscriptions_;  // the writing thread's
  bool failed_ = false;                                                     // the writing thread's
  Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(shared_->mu) = false;
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Start(graph::DomainGraph* graph,
                                                          RecorderOptions options) {
  if (!options.all && options.channels.empty()) {
    return absl::InvalidArgumentError(
        "recorder: nothing selected: record all channels (-a) or name some (-c CHANNEL)");
  }
  options.output.count_sequence_gaps = false;  // counted on arrival, before the queue
  absl::StatusOr<std::unique_ptr<RecordingWriter>> writer = RecordingWriter::Open(options.output);
  if (!writer.ok()) return writer.status();
  auto impl = std::make_unique<Impl>(graph, std::move(options), *std::move(writer));
  return std::unique_ptr<Recorder>(new Recorder(std::move(impl)));
}

Recorder::Recorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recorder::~Recorder() = default;
RecorderStats Recorder::Stats() const { return impl_->Stats(); }
absl::Status Recorder::Stop() { return impl_->Stop(); }

}  // namespace record
}  // namespace cyber
