#include "cyber/transport/loan/loan_inlet.h"

#include <pthread.h>

#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace loan {
namespace {

// The record whose doorbell this thread is (null on any other thread).
thread_local const void* doorbell_of = nullptr;

// Segments mapped at once, and segments remembered (what their doorbell
// handled) after their mapping is let go.
constexpr size_t kMapped = 16;
constexpr size_t kRemembered = 256;
// A doorbell thread looks whether its writer is still there this often
// when nothing is published.
constexpr int kIdleCheckMs = 200;

// Holds one pin of a slot (and so the mapping) for a SharedBytes.
struct Pin {
  Pin(std::shared_ptr<LoanMapping> m, uint32_t s) : mapping(std::move(m)), slot(s) {}
  ~Pin() { mapping->Unpin(slot); }
  std::shared_ptr<LoanMapping> mapping;
  uint32_t slot;
};

}  // namespace

LoanInlet::~LoanInlet() { Stop(); }

void LoanInlet::Signal(const std::shared_ptr<Watched>& watched, bool drain) {
  MutexLock lock(&watched->mu);
  if (!watched->stop.load(std::memory_order_relaxed)) {
    watched->drain.store(drain, std::memory_order_relaxed);
    watched->stop.store(true, std::memory_order_release);
  } else if (!drain) {
    watched->drain.store(false, std::memory_order_relaxed);  // Stop() wins
  }
  // After the stop: the ring moves the doorbell word, so a thread that has
  // not reached its wait yet does not sleep through it.
  if (watched->rung != nullptr) watched->rung->RingDoorbell();
}

void LoanInlet::Join(const std::shared_ptr<Watched>& watched) {
  std::thread thread;
  {
    MutexLock lock(&watched->mu);
    if (!watched->started) return;
    if (watched->thread.joinable()) {
      // The doorbell thread itself (its `deliver` dropped the last reader
      // of the channel, or stopped the inlet): it sees `stop` when
      // `deliver` returns and touches nothing of the inlet after that.
      if (watched->thread.get_id() == std::this_thread::get_id()) {
        watched->thread.detach();
        return;
      }
      thread = std::move(watched->thread);
    } else {
      // Joined by another caller, or detached: wait for its end (unless
      // this is that thread).
      while (!watched->ended && doorbell_of != watched.get()) {
        watched->ended_cv.Wait(&watched->mu);
      }
      return;
    }
  }
  thread.join();
}

void LoanInlet::Stop() {
  std::deque<std::shared_ptr<Watched>> all;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    all = watched_;
  }
  // Every stop first, then the waits: no doorbell waits for another.
  for (const auto& w : all) Signal(w, /*drain=*/false);
  for (const auto& w : all) Join(w);
}

absl::StatusOr<std::pair<std::shared_ptr<LoanInlet::Watched>, std::shared_ptr<LoanMapping>>>
LoanInlet::Find(const std::string& segment) {
  std::shared_ptr<Watched> watched;
  {
    MutexLock lock(&mu_);
    for (auto it = watched_.begin(); it != watched_.end(); ++it) {
      if ((*it)->segment != segment) continue;
      watched = *it;
      // Most recently used last: the oldest is let go first.
      watched_.erase(it);
      watched_.push_back(watched);
      if (watched->mapping != nullptr) return std::make_pair(watched, watched->mapping);
      break;
    }
    for (const auto& [name, why] : refused_) {
      if (name == segment) return why;
    }
  }
  // Opened outside the lock (a few system calls); a race opens it twice
  // and keeps one, which is harmless.
  absl::StatusOr<std::shared_ptr<LoanMapping>> opened = LoanMapping::Open(segment);
  if (!opened.ok()) return opened.status();
  if (!(*opened)->ForChannel(channel_)) {
    absl::Status why = absl::InvalidArgumentError(absl::StrCat(
        "loan segment ", segment, " belongs to channel \"", (*opened)->channel(),
        "\", not to this one (a reference sent on the wrong channel)"));
    MutexLock lock(&mu_);
    refused_.emplace_back(segment, why);
    if (refused_.size() > kRefusedRemembered) refused_.pop_front();
    return why;
  }
  std::shared_ptr<LoanMapping> mapping;
  std::vector<std::shared_ptr<Watched>> let_go;  // ended outside the lock
  {
    MutexLock lock(&mu_);
    if (watched == nullptr) {
      for (const auto& w : watched_) {
        if (w->segment == segment) watched = w;
      }
    }
    if (watched == nullptr) {
      watched = std::make_shared<Watched>(segment);
      watched_.push_back(watched);
    }
    if (watched->mapping == nullptr) watched->mapping = *std::move(opened);
    mapping = watched->mapping;
    size_t mapped = 0;
    for (const auto& w : watched_) mapped += w->mapping != nullptr;
    // Over the limit: let go of segments whose writer is gone (their
    // doorbell ended), then the least recently used.
    for (int pass = 0; pass < 2 && mapped > kMapped; ++pass) {
      for (const auto& w : watched_) {
        if (mapped <= kMapped) break;
        if (w == watched || w->mapping == nullptr) continue;
        if (w->starting.load(std::memory_order_acquire)) continue;
        if (pass == 0 && !w->writer_gone.load(std::memory_order_acquire)) continue;
        let_go.push_back(w);
        --mapped;
      }
    }
    // Forget the oldest records beyond kRemembered (never a mapped one).
    size_t excess = watched_.size() > kRemembered ? watched_.size() - kRemembered : 0;
    for (auto it = watched_.begin(); it != watched_.end() && excess > 0;) {
      if ((*it)->mapping == nullptr) {
        let_go.push_back(*it);
        it = watched_.erase(it);
        --excess;
      } else {
        ++it;
      }
    }
  }
  for (const auto& w : let_go) {
    Signal(w, /*drain=*/true);
    MutexLock lock(&mu_);
    if (w->mapping != nullptr) ++stats_.let_go;
  }
  for (const auto& w : let_go) {
    Join(w);
    MutexLock lock(&mu_);
    w->mapping.reset();  // the last pins' messages keep it mapped until dropped
  }
  return std::make_pair(watched, mapping);
}

std::shared_ptr<const SharedBytes> LoanInlet::PinToMessage(
    const std::shared_ptr<LoanMapping>& mapping, LoanReference reference, absl::Status* error) {
  absl::StatusOr<const uint8_t*> data =
      mapping->Pin(reference.slot, reference.generation, reference.size);
  if (!data.ok()) {
    *error = data.status();
    return nullptr;
  }
  auto pin = std::make_shared<const Pin>(mapping, reference.slot);
  const uint64_t size = reference.size;
  return std::make_shared<const SharedBytes>(*data, size, std::move(pin), std::move(reference),
                                             /*written_here_for=*/std::string());
}

absl::StatusOr<std::shared_ptr<const SharedBytes>> LoanInlet::Resolve(absl::string_view wire) {
  absl::StatusOr<DecodedReference> decoded = DecodeReference(wire);
  auto refuse = [&](const absl::Status& status) {
    MutexLock lock(&mu_);
    ++(status.code() == absl::StatusCode::kDataLoss ? stats_.overwritten : stats_.refused);
    return absl::Status(status.code(),
                        absl::StrCat("channel \"", channel_, "\": ", status.message()));
  };
  if (!decoded.ok()) return refuse(decoded.status());
  if (!decoded->loaned) {
    {
      MutexLock lock(&mu_);
      ++stats_.inlined;
    }
    return SharedBytes::Copy(decoded->inline_bytes);
  }
  LoanReference& ref = decoded->loan;
  if (ref.host != ThisHostBootId()) {
    return refuse(absl::FailedPreconditionError(absl::StrCat(
        "a loaned message from host boot id ", BootIdText(ref.host),
        " cannot be read on this host (boot id ", BootIdText(ThisHostBootId()),
        "): loaned bytes are read on the writer's host only; across hosts publish "
        "SharedBytes::Copy (inline) or a protobuf message")));
  }
  if (ref.sequence == 0) {
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("loan reference to segment ", ref.segment, ": sequence 0 (publishes count "
                     "from 1)")));
  }
  auto found = Find(ref.segment);
  if (!found.ok()) return refuse(found.status());
  const std::shared_ptr<Watched> watched = found->first;
  const std::shared_ptr<LoanMapping> mapping = found->second;
  bool stopped;
  {
    MutexLock lock(&mu_);
    stopped = stopped_;
  }
  const bool doorbells = deliver_ != nullptr && !stopped;
  bool start_doorbell = false;
  {
    MutexLock lock(&watched->mu);
    if (watched->start != 0) {
      // Running (not asked to stop, not ended) it handles every later
      // publish; stopped, those it handled (`through` is final once it has
      // ended: asked to stop, it ends after the hand-over in progress, or
      // after its drain).
      while (watched->stop.load(std::memory_order_relaxed) && watched->started &&
             !watched->ended) {
        watched->ended_cv.Wait(&watched->mu);
      }
      const bool running = !watched->stop.load(std::memory_order_relaxed) && !watched->ended;
      const bool doorbells_it =
          ref.sequence == watched->start ||  // DDS brought it twice
          (ref.sequence > watched->start &&
           (running || ref.sequence <= watched->through.load(std::memory_order_acquire)));
      if (doorbells_it) {
        MutexLock l(&mu_);
        ++stats_.confirmed;
        return std::shared_ptr<const SharedBytes>();
      }
    } else if (doorbells) {
      // Claimed before the pin: a concurrent sample of a later publish is
      // then the doorbell's.
      watched->start = ref.sequence;
      watched->through.store(ref.sequence, std::memory_order_release);
      watched->starting.store(true, std::memory_order_release);
      start_doorbell = true;
    }
  }
  absl::Status error;
  std::shared_ptr<const SharedBytes> message = PinToMessage(mapping, ref, &error);
  if (message != nullptr) {
    MutexLock lock(&mu_);
    ++stats_.loaned;
  }
  if (!doorbells) {
    if (message == nullptr) return refuse(error);
    return message;
  }
  // Handed over here, before the doorbell thread starts: it hands over
  // what comes after, so the readers see the publish order.
  const bool pinned = message != nullptr;
  if (pinned) deliver_(std::move(message));
  if (start_doorbell) {
    MutexLock lock(&watched->mu);
    // Not after a stop (Stop(): `starting` kept a let-go away): that
    // doorbell would never be joined.
    if (!watched->stop.load(std::memory_order_relaxed)) {
      watched->rung = mapping;
      watched->started = true;
      watched->thread = std::thread(&LoanInlet::Watch, this, watched, mapping, ref);
      // Named here, not in the thread: it is known by name when this returns.
      pthread_setname_np(watched->thread.native_handle(), "cyber_loan_bell");
    }
    watched->starting.store(false, std::memory_order_release);
  }
  if (!pinned) return refuse(error);
  return std::shared_ptr<const SharedBytes>();
}

void LoanInlet::Watch(std::shared_ptr<Watched> watched, std::shared_ptr<LoanMapping> mapping,
                      LoanReference first) {
  doorbell_of = watched.get();
  uint64_t last = first.sequence;  // handed over by Resolve
  // `stop` is looked at before anything of the inlet is touched: a thread
  // detached by Join() from its own `deliver` must not touch it again.
  for (;;) {
    const bool stopping = watched->stop.load(std::memory_order_acquire);
    const bool drain = watched->drain.load(std::memory_order_relaxed);
    if (stopping && !drain) break;
    const uint32_t bell = mapping->Doorbell();
    const uint64_t newest = mapping->LastSequence();
    while (last < newest) {
      if (watched->stop.load(std::memory_order_acquire) &&
          !watched->drain.load(std::memory_order_relaxed)) {
        break;
      }
      uint64_t next = last + 1;
      uint64_t lost = 0;
      if (newest - next >= kRingEntries) {  // fell behind the ring
        lost = newest - kRingEntries + 1 - next;
        next = newest - kRingEntries + 1;
      }
      Published p;
      absl::Status error;
      std::shared_ptr<const SharedBytes> message;
      if (mapping->ReadRing(next, &p)) {
        LoanReference ref = first;
        ref.slot = p.slot;
        ref.generation = p.generation;
        ref.size = p.size;
        ref.sequence = p.sequence;
        message = PinToMessage(mapping, std::move(ref), &error);
      }
      {
        MutexLock lock(&mu_);
        stats_.overwritten += lost + (message == nullptr ? 1 : 0);
        if (message != nullptr) ++stats_.doorbell;
      }
      last = next;
      watched->through.store(last, std::memory_order_release);
      if (message == nullptr) {
        AWARN_EVERY(100) << "channel \"" << channel_ << "\": publish " << next
                         << " of loan segment " << mapping->name()
                         << " was written over before this process read it (lost)";
        continue;
      }
      deliver_(std::move(message));
    }
    // Asked to stop and to drain: drained through what was published when
    // the stop was seen (any sample Resolve confirmed was published before).
    if (stopping) break;
    if (watched->stop.load(std::memory_order_acquire)) continue;
    if (mapping->LastSequence() != newest) continue;
    mapping->WaitDoorbell(bell, kIdleCheckMs);
    if (mapping->Doorbell() == bell && !mapping->WriterAlive()) {
      watched->writer_gone.store(true, std::memory_order_release);
      break;
    }
  }
  MutexLock lock(&watched->mu);
  watched->ended = true;
  watched->ended_cv.SignalAll();
}

LoanInletStats LoanInlet::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace loan
}  // namespace cyber
