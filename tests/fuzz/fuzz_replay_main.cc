// A main() for fuzz targets outside libFuzzer: runs LLVMFuzzerTestOneInput
// once on every input file named on the command line (directories are read
// recursively, in name order) and succeeds if none of them failed.
//
// Why: libFuzzer needs clang, but the inputs a fuzzer has collected -- its
// seed corpus and every input that once found a bug -- are worth replaying in
// every build. Linked with this file (see fuzz.bzl) each fuzzer is a plain
// cc_test that gcc, ASan, UBSan and TSan builds run like any other test; a
// failing input aborts the process (the fuzzers' checks abort, as libFuzzer
// expects), and the line printed just before names the file.
//
//   fuzz_replay dir_or_file...     arguments starting with '-' are ignored,
//                                  so a libFuzzer command line replays too
//
// Threads: one; inputs run one after another, as under libFuzzer.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc,
                                                           char*** argv);

namespace {

namespace fs = std::filesystem;

// Appends the input files `arg` names; false (with a message) if none exist.
bool CollectInputs(const std::string& arg, std::vector<fs::path>* inputs) {
  std::error_code error;
  const fs::file_status status = fs::status(arg, error);
  if (error || !fs::exists(status)) {
    std::fprintf(stderr, "replay: %s: no such file or directory\n", arg.c_str());
    return false;
  }
  if (!fs::is_directory(status)) {
    inputs->push_back(arg);
    return true;
  }
  std::vector<fs::path> found;
  for (fs::recursive_directory_iterator it(arg, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file(error)) found.push_back(it->path());
  }
  if (error) {
    std::fprintf(stderr, "replay: %s: %s\n", arg.c_str(), error.message().c_str());
    return false;
  }
  std::sort(found.begin(), found.end());
  inputs->insert(inputs->end(), found.begin(), found.end());
  return true;
}

bool ReadFile(const fs::path& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    ok = CollectInputs(arg, &inputs) && ok;
  }
  if (!ok) return 2;
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs (usage: %s dir_or_file...)\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> bytes;
  for (const fs::path& path : inputs) {
    if (!ReadFile(path, &bytes)) {
      std::fprintf(stderr, "replay: %s: cannot read\n", path.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    // A copy of exactly `size` bytes on the heap, as libFuzzer passes it, so
    // that ASan sees a read past the end of the input.
    std::vector<uint8_t> input(bytes);
    LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
  }
  std::fprintf(stderr, "replay: %zu inputs, all passed\n", inputs.size());
  return 0;
}
