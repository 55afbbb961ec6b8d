#!/usr/bin/env python3
"""Fails on a dependency that runs up the layers, or between two parts of one layer.

Why: docs/architecture.md draws the layers (common at the bottom, programs at
the top); a library that reaches up (the scheduler linking the transport) makes
every user of the lower part link the upper one, and two folders that need
each other are one part in two places. Bazel refuses cycles between targets,
not between folders: this check refuses them between parts.

Input: the dependency edges of the repository's libraries on stdin, as
`bazel query --output=graph --nograph:factored` prints them (one `"a" -> "b"`
line per edge); tools/check_layers.sh makes the query. Tests and binaries
are leaves: nothing depends on them, so they close no cycle. tools/layers.txt
names each part (a folder, with every folder below it unless a deeper part
is listed, or one target written as a label) and its layer. An edge from
part A to part B passes when B's layer is below A's, or A is B.
"""

import re
import sys


def load_layers(path):
    parts = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2 or not fields[1].isdigit():
                sys.exit(f"{path}:{number}: expected 'folder layer', got {line!r}")
            parts[fields[0]] = int(fields[1])
    return parts


def part_of(label, parts):
    """The part of `label`: itself if listed, else the deepest listed folder
    that holds its package; None if none does."""
    if label in parts:
        return label
    package = label[2:].split(":", 1)[0]
    best = None
    for folder in parts:
        if folder.startswith("//"):
            continue
        if package == folder or package.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


EDGE = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)"')


def ours(label):
    """Whether `label` is a target of this repository (not @bazel_tools, not
    a select() condition)."""
    return label.startswith("//") and not label.startswith("//conditions:")


def canonical(label):
    """`//timer` and `//timer:timer` are one target."""
    if ":" not in label:
        return label + ":" + label.rsplit("/", 1)[-1]
    return label


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    parts = {(canonical(k) if k.startswith("//") else k): v
             for k, v in load_layers(sys.argv[1]).items()}
    bad = {}
    unplaced = set()
    edges = 0
    for line in sys.stdin:
        m = EDGE.match(line)
        if not m:
            continue
        edges += 1
        source, target = m.group(1), m.group(2)
        if not ours(source) or not ours(target):
            continue
        source, target = canonical(source), canonical(target)
        a, b = part_of(source, parts), part_of(target, parts)
        for label, part in ((source, a), (target, b)):
            if part is None:
                unplaced.add(label.split(":", 1)[0])
        if a is None or b is None or a == b:
            continue
        if parts[b] >= parts[a]:
            bad.setdefault((a, b), []).append(f"{source} -> {target}")
    if edges == 0:
        sys.exit("check_layers: no dependency edge on stdin (did the query fail?)")
    for pkg in sorted(unplaced):
        print(f"package {pkg} is in no part of {sys.argv[1]}: place it")
    for (a, b), examples in sorted(bad.items()):
        kind = "across one layer" if parts[a] == parts[b] else "upward"
        print(f"{a} (layer {parts[a]}) -> {b} (layer {parts[b]}): {kind}, "
              f"{len(examples)} edge(s), e.g. {examples[0]}")
    if bad or unplaced:
        print(f"check_layers: FAILED ({len(bad)} part pair(s), "
              f"{len(unplaced)} unplaced package(s))")
        return 1
    print(f"check_layers: {edges} edges, every one runs down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
