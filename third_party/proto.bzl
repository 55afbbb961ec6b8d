"""C++ code generation from .proto files with Debian's protoc.

Bazel 4's native proto_library/cc_proto_library need a protobuf source
repository (@com_google_protobuf), which would have to be downloaded. This
macro instead runs the system /usr/bin/protoc (protobuf-compiler) in a genrule
and compiles the result against the system libprotobuf.

Usage:
    load("//third_party:proto.bzl", "cc_proto")
    cc_proto(name = "dag_cc_proto", srcs = ["dag.proto"])
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

_PROTOC = "/usr/bin/protoc"

def cc_proto(name, srcs, deps = [], visibility = None, testonly = False):
    """C++ library generated from `srcs` (.proto files in this package).

    Args:
      name: name of the resulting cc_library.
      srcs: .proto files; imports are resolved from the workspace root.
      deps: other cc_proto targets whose .proto files `srcs` import.
      visibility: visibility of the cc_library.
      testonly: as for any rule.
    """
    pkg = native.package_name()

    # In another workspace (local_repository), this repository's files sit
    # under external/<name>/ and its generated files under
    # $(GENDIR)/external/<name>/: protoc's root follows.
    repo = native.repository_name().lstrip("@")
    root = "external/" + repo if repo else "."
    stems = [s[:-len(".proto")] for s in srcs]
    hdrs = [s + ".pb.h" for s in stems]
    ccs = [s + ".pb.cc" for s in stems]
    proto_inputs = [d + "_protos" for d in deps]

    native.filegroup(
        name = name + "_protos",
        srcs = srcs + proto_inputs,
        visibility = visibility,
        testonly = testonly,
    )
    native.genrule(
        name = name + "_gen",
        srcs = srcs + proto_inputs,
        outs = hdrs + ccs,
        cmd = " ".join([
            _PROTOC,
            "--proto_path=" + root,
            "--cpp_out=$(GENDIR)" + ("/" + root if repo else ""),
        ] + ["/".join([p for p in [root if repo else "", pkg, s] if p]) for s in srcs]),
        testonly = testonly,
    )
    cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
        testonly = testonly,
    )
