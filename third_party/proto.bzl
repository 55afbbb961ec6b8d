"""C++ code generation from .proto files with Debian's protoc.

Bazel 4's native proto_library/cc_proto_library need a protobuf source
repository (@com_google_protobuf), which would have to be downloaded. This
macro instead runs the system /usr/bin/protoc (protobuf-compiler) in a genrule
and compiles the result against the system libprotobuf.

Usage, in this repository:
    load("//third_party:proto.bzl", "cc_proto")
    cc_proto(name = "dag_cc_proto", srcs = ["dag.proto"])

and in another workspace that names this one `cyber_timer` (local_repository):
    load("@cyber_timer//third_party:proto.bzl", "cc_proto")
    cc_proto(name = "fix_cc_proto", srcs = ["fix.proto"])

The macro's own labels are Label()s, resolved against this repository
wherever it is loaded from; `srcs` and `deps` are the caller's, resolved in
the caller's package as for any rule. A .proto file imports others by their
path from the root of the repository that holds them: "gps/fix.proto" for
the caller's own, "msgs/other.proto" for one whose public cc_proto
@other//msgs:other_cc_proto is in deps. (This repository's own cc_protos are
private to it.)
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

_PROTOC = "/usr/bin/protoc"

# A Label, not "//third_party:protobuf": a string would name a package of
# whichever workspace calls the macro.
_PROTOBUF = Label("//third_party:protobuf")

def _repo_root(repo):
    """Where a repository's source files sit in the execution root.

    Args:
      repo: repository name without "@"; "" for the main repository.

    Returns:
      "." for the main repository, external/<repo> for any other (Bazel 4
      places every external repository there; generated files go to
      $(GENDIR)/external/<repo>).
    """
    return "external/" + repo if repo else "."

def _label_repo(label, own_repo):
    """The repository name (no "@") of a label string written in a BUILD file.

    Args:
      label: as written by the caller: ":x", "//p:x" or "@r//p:x".
      own_repo: the caller's repository (no "@"), which the first two name.

    Returns:
      The repository name; "" for the main repository.
    """
    if label.startswith("@"):
        return label[1:label.index("//")] if "//" in label else label[1:]
    return own_repo

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

    # The repository the macro is called in: "" for the main repository of
    # the build (this one, or another workspace calling it on its own
    # .proto files), else the name an external repository has there. Its
    # files sit under _repo_root(repo) and its generated files under
    # $(GENDIR)/external/<repo>/ (or $(GENDIR) itself): protoc's root for
    # srcs and its output directory follow, so that "pkg/x.pb.h" lands where
    # the genrule's outs say and is #included by that path.
    repo = native.repository_name().lstrip("@")
    root = _repo_root(repo)
    stems = [s[:-len(".proto")] for s in srcs]
    hdrs = [s + ".pb.h" for s in stems]
    ccs = [s + ".pb.cc" for s in stems]
    proto_inputs = [d + "_protos" for d in deps]

    # Imported files may come from another repository (a proto in deps that
    # is @other//...): that repository's root is searched too, after the
    # caller's own.
    roots = [root]
    for d in deps:
        dep_root = _repo_root(_label_repo(d, repo))
        if dep_root not in roots:
            roots.append(dep_root)

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
        ] + ["--proto_path=" + r for r in roots] + [
            "--cpp_out=$(GENDIR)" + ("/" + root if repo else ""),
        ] + ["/".join([p for p in [root if repo else "", pkg, s] if p]) for s in srcs]),
        testonly = testonly,
    )
    cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + [_PROTOBUF],
        visibility = visibility,
        testonly = testonly,
    )
