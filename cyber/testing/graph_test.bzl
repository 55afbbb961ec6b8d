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
"""

load("@rules_cc//cc:defs.bzl", "cc_test")

def cyber_graph_test(name, dags, srcs, deps = [], data = [], args = [], **kwargs):
    """A cc_test of the graphs in `dags`, with cyber::GraphTest available.

    Args:
      name: the test's name.
      dags: graph files (labels); launched, in this order, by GraphTest::Launch().
      srcs: the test's sources (GoogleTest; no main: the rule brings it).
      deps: the component libraries (alwayslink) and whatever else srcs use.
      data: more runfiles (config files the dags name, ...).
      args: more arguments, after the dags (e.g. --gtest_filter, gflags).
      **kwargs: anything else cc_test takes (size, tags, timeout, ...).
    """
    cc_test(
        name = name,
        srcs = srcs,
        data = dags + data,
        args = ["--cyber_graph_dag=$(rootpath %s)" % d for d in dags] + args,
        deps = deps + [Label("//cyber/testing:graph_test")],
        **kwargs
    )
