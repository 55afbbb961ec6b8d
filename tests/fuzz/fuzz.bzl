"""cc_fuzz_test: one libFuzzer target, two ways to build it.

Why two: a fuzzer is only useful if what it once found stays fixed, and only
cheap if every ordinary build can check that. So each fuzzer's
LLVMFuzzerTestOneInput is linked twice:

  <name>_fuzz_test  cc_test: the fuzz function with fuzz_replay_main.cc,
                  which feeds it every file of corpus/<name>_fuzzer/ (the
                  seeds) and regressions/<name>_fuzzer/ (inputs that once
                  failed). Runs in `bazel test //...` under every config
                  (gcc, asan, ubsan, tsan), so the corpora are regression
                  tests.
  <name>_fuzzer   cc_binary, tagged manual: under --config=fuzz (clang 14,
                  --define=fuzzing=true) linked with -fsanitize=fuzzer, i.e.
                  libFuzzer's main; tools/run_fuzzers.sh runs it. In any other
                  config it is the replay binary again, so that building it
                  never needs clang and a crash file found by libFuzzer can be
                  replayed under gcc: bazel run //tests/fuzz:<name>_fuzzer --
                  $PWD/crash-file.

The switch is a select() on //tests/fuzz:fuzzing (--define=fuzzing=true), so a
gcc build of //... never sees -fsanitize=fuzzer.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")

# Labels, not strings: a string would name a package of whichever workspace
# calls the macro.
_REPLAY_MAIN = Label("//tests/fuzz:fuzz_replay_main")
# select() wants a string key in Bazel 4: the Label's own, which keeps the
# repository name ("@cyber_timer//...") when loaded from another workspace.
_FUZZING = str(Label("//tests/fuzz:fuzzing"))

def cc_fuzz_test(name, srcs, deps = [], size = "small", timeout = None, **kwargs):
    """Declares <name>_fuzz_test (replay) and <name>_fuzzer (libFuzzer).

    Args:
      name: the fuzzer's base name; its corpora are corpus/<name>_fuzzer/
        and regressions/<name>_fuzzer/ beside the BUILD file.
      srcs: sources defining LLVMFuzzerTestOneInput (and optionally
        LLVMFuzzerInitialize).
      deps: what they need.
      size: size of the replay test.
      timeout: timeout of the replay test (default: from size).
      **kwargs: passed to the library, the test and the binary (e.g. copts).
    """
    fuzzer = name + "_fuzzer"
    lib = fuzzer + "_lib"

    # alwayslink: nothing in the library is referenced before libFuzzer's own
    # main (which comes after it on the link line) asks for the entry point.
    cc_library(
        name = lib,
        testonly = True,
        srcs = srcs,
        deps = deps,
        alwayslink = True,
        **kwargs
    )

    # Runfiles paths, relative to the test's working directory (the main
    # repository's runfiles): another repository's files are under ../<name>.
    repo = native.repository_name().lstrip("@")
    package = ("../%s/" % repo if repo else "") + native.package_name()
    seeds = native.glob(["corpus/%s/**" % fuzzer])
    regressions = native.glob(["regressions/%s/**" % fuzzer])
    if not seeds:
        fail("cc_fuzz_test %s: corpus/%s/ has no seed files" % (name, fuzzer))
    args = ["%s/corpus/%s" % (package, fuzzer)]
    if regressions:
        args.append("%s/regressions/%s" % (package, fuzzer))

    cc_test(
        name = name + "_fuzz_test",
        size = size,
        timeout = timeout,
        args = args,
        data = seeds + regressions,
        deps = [lib, _REPLAY_MAIN],
        **kwargs
    )

    cc_binary(
        name = fuzzer,
        testonly = True,
        tags = ["manual"],
        linkopts = select({
            _FUZZING: ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [lib] + select({
            _FUZZING: [],
            "//conditions:default": [_REPLAY_MAIN],
        }),
        **kwargs
    )
