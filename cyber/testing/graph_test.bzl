"""cyber_graph_test: a test of one or more graphs (.dag files) on simulated time.

    load("@cyber_timer//cyber/testing:graph_test.bzl", "cyber_graph_test")

    cyber_graph_test(
        name = "gps_watchdog_test",
        dags = ["gps_watchdog.dag"],
        srcs = ["gps_watchdog_test.cc"],
        deps = [":gps_components"],   # alwayslink libraries that register them
    )

The test code uses cyber::GraphTest (cyber/testing/graph_test.h): Launch()
starts every dag of the rule on a SimulatedGraph, which runs as fast as the
CPU allows and gives the same sequence of events every run. The dags are
passed as --cyber_graph_dag=<runfiles path> arguments, so the rule works the same from
this repository and from a workspace that loads it with local_repository.

A recording (an MCAP file, made by cyber_recorder or by a generator the
test builds) is replayed into the graph on simulated time:

    cyber_graph_test(
        name = "fusion_replay_test",
        dags = ["fusion.dag"],
        srcs = ["fusion_replay_test.cc"],
        deps = [":sensor_components"],
        recording = "drive.mcap",              # a file or a rule's output
        recording_channels = ["/sensor/imu"],  # fed; the rest is not
    )

Each recorded message of those channels reaches the graph at its recorded
instant (the graph's start plus its log_time less the recording's first),
after the graph's own timers of that instant (SimulatedGraph::Options::
recording, cyber/simulation/simulated_graph.h, docs/graph_testing.md).

Strict by default: a graph warning (a channel read and never written, or
written and never read; a service called and served by no one) fails
Launch(). A channel written on purpose for
nobody is declared in the writer's dag entry (unread_outputs: "/alarm");
`strict = False` (with a comment saying why) turns the check off.
"""

load("@rules_cc//cc:defs.bzl", "cc_test")

def cyber_graph_test(
        name,
        dags,
        srcs,
        deps = [],
        data = [],
        args = [],
        strict = True,
        recording = None,
        recording_channels = [],
        **kwargs):
    """A cc_test of the graphs in `dags`, with cyber::GraphTest available.

    Args:
      name: the test's name.
      dags: graph files (labels); launched, in this order, by GraphTest::Launch().
      srcs: the test's sources (GoogleTest; no main: the rule brings it).
      deps: the component libraries (alwayslink) and whatever else srcs use.
      data: more runfiles (config files the dags name, ...).
      args: more arguments, after the dags (e.g. --gtest_filter, gflags).
      strict: graph warnings fail Launch() (--cyber_graph_strict=true|false).
      recording: an MCAP file (label) replayed into the graph
        (--cyber_graph_recording=<runfiles path>); None: none.
      recording_channels: the channels of `recording` to feed, at least one
        (--cyber_graph_recording_channel=<channel>, one each).
      **kwargs: anything else cc_test takes (size, tags, timeout, ...).
    """
    if recording == None and recording_channels:
        fail("cyber_graph_test %s: recording_channels without a recording" % name)
    if recording != None and not recording_channels:
        fail("cyber_graph_test %s: recording %s without recording_channels (name the channels to feed)" %
             (name, recording))
    replay_args = []
    replay_data = []
    if recording != None:
        replay_data = [recording]
        replay_args = ["--cyber_graph_recording=$(rootpath %s)" % recording] + [
            "--cyber_graph_recording_channel=%s" % c
            for c in recording_channels
        ]
    cc_test(
        name = name,
        srcs = srcs,
        data = dags + replay_data + data,
        args = ["--cyber_graph_dag=$(rootpath %s)" % d for d in dags] +
               ["--cyber_graph_strict=%s" % ("true" if strict else "false")] +
               replay_args + args,
        deps = deps + [Label("//cyber/testing:graph_test")],
        **kwargs
    )
