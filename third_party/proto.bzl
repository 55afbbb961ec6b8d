"""C++ code generation from .proto files with Debian's protoc.

Bazel 4's native proto_library/cc_proto_library need a protobuf source
repository (@com_google_protobuf), which would have to be downloaded. This
macro instead runs the system /usr/bin/protoc (protobuf-compiler) in a genrule
and compiles the result against the system libprotobuf.

Usage:
    load("//third_party:proto.bzl", "cc_proto")
    cc_proto(name = "dag_cc_proto", srcs = ["dag.proto"])
"""

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
            "--proto_path=.",
            "--cpp_out=$(GENDIR)",
        ] + ["%s/%s" % (pkg, s) if pkg else s for s in srcs]),
        testonly = testonly,
    )
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
        testonly = testonly,
    )
