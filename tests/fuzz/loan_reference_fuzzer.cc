// loan_reference_fuzzer: arbitrary bytes as a sample of a SharedBytes
// channel (cyber/transport/loan/), through everything that touches them
// before a reader's callback, and arbitrary bytes as a loan segment file.
//
// Why: a reference names a file in /dev/shm, a slot, a generation and a
// size; a hostile or broken writer on the host chooses all four, and the
// file's header too. The promise (loan_reference.h, loan_segment.h): never
// read outside the mapping, never crash, refuse with an error naming what
// is wrong, and deliver only bytes that a writer published.
//
// Each input is:
//   1. decoded (DecodeReference); a loan whose segment name is "self" is
//      pointed at this fuzzer's own live segment (on this host), whose slots hold
//      published bytes (so the fuzzer reaches Pin with real geometry);
//   2. handed to the channel's inlet handler (Channel<SharedBytes>, the
//      transport controlling delivery time, so every message comes through
//      the handler), whose routines are then run;
//   3. written as a file under the segment prefix and opened as a segment
//      (LoanMapping::Open), then pinned at a slot, generation and size taken
//      from the input.
// Checked:
//   - the handler accepts an inline reference and delivers exactly its bytes
//     once; it accepts a loan only of the own segment at a published slot,
//     generation and size, and delivers exactly those bytes; nothing else
//     reaches the callback;
//   - a segment file that opens has consistent geometry; a pin returns a
//     pointer inside it or an error.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/loan/loan_reference.h"
#include "cyber/transport/loan/loan_segment.h"
#include "cyber/transport/loan/shared_bytes.h"
#include "cyber/transport/testing/fake_transport.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/quiet_logging.h"

namespace cyber {
namespace fuzz {
namespace {

constexpr uint32_t kSlots = 4;
constexpr uint64_t kSlotBytes = 64;

struct World {
  World() {
    QuietLogging();
    Runtime::Options o;
    o.name = "fuzz";
    o.run_threads = false;
    o.remote = transport;
    runtime = std::make_unique<Runtime>(std::move(o));
    node = std::make_unique<Node>("fuzz", runtime->scheduler(), runtime->bus());
    ReaderConfig config;
    config.channel_name = "/fuzz";
    config.pending_queue_size = 4;
    auto r = node->TryCreateReader<SharedBytes>(
        config, [this](const std::shared_ptr<const SharedBytes>& m) {
          ++delivered;
          last.assign(m->view().data(), m->view().size());
        });
    FUZZ_CHECK(r.ok()) << r.status();
    reader = *r;
    FUZZ_CHECK(transport->SubscribedType("/fuzz") == SharedBytes::kTypeName);
    auto s = loan::LoanSegment::Create("/fuzz", kSlots, kSlotBytes);
    FUZZ_CHECK(s.ok()) << s.status();
    segment = *s;
    // Every slot published once, filled with its index + 1.
    for (uint32_t i = 0; i < kSlots; ++i) {
      absl::StatusOr<loan::SlotClaim> c = segment->Claim();
      FUZZ_CHECK(c.ok()) << c.status();
      std::memset(c->data, static_cast<int>(c->slot + 1), kSlotBytes);
      published.push_back(segment->Publish(*c, kSlotBytes, false));
    }
    // Random, not by pid: every Bazel sandbox runs its test as pid 12 and
    // /dev/shm is shared, so two concurrent runs would write one file.
    scratch = absl::StrCat(loan::kSegmentPrefix, "fuzz_scratch.", std::random_device()(), ".",
                           getpid());
  }
  // Decides delivery time (as a lockstep run does): no doorbell thread,
  // every message comes through the channel's handler.
  std::shared_ptr<test::FakeTransport> transport = [] {
    test::FakeTransportOptions options;
    options.controls_delivery_time = true;
    return std::make_shared<test::FakeTransport>(options);
  }();
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Node> node;
  std::shared_ptr<Reader<SharedBytes>> reader;
  std::shared_ptr<loan::LoanSegment> segment;
  std::vector<loan::Published> published;
  std::string scratch;
  int delivered = 0;
  std::string last;
};

World& TheWorld() {
  static World* world = [] {
    auto* w = new World();  // never destroyed: fuzzers exit hard
    // ... but the segment's name goes at exit, so /dev/shm keeps nothing.
    std::atexit(+[] { shm_unlink(("/" + TheWorld().segment->name()).c_str()); });
    return w;
  }();
  return *world;
}

uint64_t Take(const uint8_t* data, size_t size, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && at + i < size; ++i) v |= uint64_t{data[at + i]} << (8 * i);
  return v;
}

}  // namespace
}  // namespace fuzz
}  // namespace cyber

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cyber;        // NOLINT
  using namespace cyber::fuzz;  // NOLINT
  World& w = TheWorld();
  if (size > (1u << 16)) return 0;
  std::string wire(reinterpret_cast<const char*>(data), size);

  // 1. Decode; "self" names the fuzzer's own segment.
  absl::StatusOr<loan::DecodedReference> decoded = loan::DecodeReference(wire);
  if (decoded.ok() && decoded->loaned && decoded->loan.segment == "self") {
    loan::LoanReference r = decoded->loan;
    r.segment = w.segment->name();
    r.host = loan::ThisHostBootId();
    wire = loan::EncodeLoan(r);
    decoded = loan::DecodeReference(wire);
    FUZZ_CHECK(decoded.ok()) << decoded.status();
  }
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  }

  // 2. The channel's inlet.
  std::string expected;
  bool acceptable = false;
  if (decoded.ok() && !decoded->loaned) {
    acceptable = true;
    expected.assign(decoded->inline_bytes.data(), decoded->inline_bytes.size());
  } else if (decoded.ok()) {
    const loan::LoanReference& r = decoded->loan;
    for (const loan::Published& p : w.published) {
      if (r.segment == w.segment->name() && r.host == loan::ThisHostBootId() &&
          r.sequence != 0 && r.slot == p.slot && r.generation == p.generation && r.size <= kSlotBytes) {
        acceptable = true;
        expected.assign(r.size, static_cast<char>(p.slot + 1));
      }
    }
  }
  const int before = w.delivered;
  const bool accepted = w.transport->Arrive("/fuzz", wire);
  w.runtime->scheduler()->RunReady();
  // A reference to another live segment of this host could be accepted
  // too; none exists here but the own one.
  FUZZ_CHECK(accepted == acceptable) << "accepted " << accepted;
  FUZZ_CHECK(w.delivered == before + (accepted ? 1 : 0));
  if (accepted) FUZZ_CHECK(w.last == expected);

  // 3. The input as a segment file, opened and pinned.
  const std::string path = "/" + w.scratch;
  const int fd = shm_open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0600);
  FUZZ_CHECK(fd >= 0);
  // Page-sized files from the input's first bytes: a header page, the
  // ring page and a few slots' worth, the rest zero.
  const size_t file_size = 4096 * (1 + Take(data, size, 0) % 6);
  FUZZ_CHECK(ftruncate(fd, static_cast<off_t>(file_size)) == 0);
  if (size > 0) {
    FUZZ_CHECK(pwrite(fd, data, std::min(size, file_size), 0) >= 0);
  }
  close(fd);
  absl::StatusOr<std::shared_ptr<loan::LoanMapping>> mapping = loan::LoanMapping::Open(w.scratch);
  if (mapping.ok()) {
    const loan::LoanMapping& m = **mapping;
    FUZZ_CHECK(m.slots() >= 1 && m.slots() <= loan::kMaxSlots);
    FUZZ_CHECK(m.slot_bytes() >= 1 && m.slot_bytes() <= loan::kMaxSlotBytes);
    const uint32_t slot = static_cast<uint32_t>(Take(data, size, 8));
    const uint32_t generation = static_cast<uint32_t>(Take(data, size, 12));
    const uint64_t length = Take(data, size, 16) % (2 * m.slot_bytes() + 1);
    absl::StatusOr<const uint8_t*> pinned = (*mapping)->Pin(slot, generation, length);
    if (pinned.ok()) {
      FUZZ_CHECK(slot < m.slots() && length <= m.slot_bytes());
      volatile uint8_t sum = 0;
      for (uint64_t i = 0; i < length; ++i) sum = sum + (*pinned)[i];  // in bounds (asan)
      (*mapping)->Unpin(slot);
    }
    loan::Published p;
    (void)(*mapping)->ReadRing(Take(data, size, 24), &p);
  }
  shm_unlink(path.c_str());
  return 0;
}
