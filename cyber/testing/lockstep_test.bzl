"""cyber_lockstep_test: a graph split over several processes, tested on lockstep simulated time.

    load("@cyber_timer//cyber/testing:lockstep_test.bzl", "cyber_lockstep_test")

    cyber_lockstep_test(
        name = "route_planning_lockstep_test",
        launch = "route_planning.launch",   # the processes and their dags
        mainboard = ":mainboard",           # with the components linked in
        data = ["planner.dag", "routing.dag"],
        run_for = "10050ms",
        expect = {
            # Lines of a process's summary (spaces squeezed), e.g. its
            # service client's row.
            "planner": ["/planning/route planner client 100 80 20 - 0 0 19"],
        },
        digests = {"planner": "2427d5dc94a164cf"},  # optional
    )

The test runs `cyber_launch start LAUNCH --clock=simulated --run_for=RUN_FOR
[LAUNCH_ARGS]`
`runs` times (2 by default), each on a DDS domain of its own: every process
of the launch file is a mainboard on lockstep simulated time and
cyber_launch is their coordinator (docs/lockstep.md). It fails unless every
run reaches the end with exit 0, every process prints a trace digest (its
Proc() calls) and a delivery digest (the messages other processes sent it,
in the order handed over), each equal in every run (the trace digests also
to `digests`, where given), and each `expect` line is in its process's
summary (a delivery digest can be asserted there). Nothing is left running or in
/dev/shm. The launch file's respawn and start order do not apply: nothing
is respawned, and the lockstep join replaces start_after/wait_for_writer.
"""

def cyber_lockstep_test(
        name,
        launch,
        mainboard,
        run_for,
        data = [],
        runs = 2,
        digests = {},
        expect = {},
        launch_args = [],
        **kwargs):
    """An sh_test running the processes of `launch` in lockstep, `runs` times.

    Args:
      name: the test's name.
      launch: the launch file (label); its dag_conf paths are relative to it.
      mainboard: the mainboard binary with the graph's components (label).
      run_for: the simulated time of each run ("10s", "10050ms").
      data: the dag files the launch file names, and whatever they read.
      runs: how many runs must agree (at least 2).
      digests: process name -> its expected trace digest (16 hex digits).
      expect: process name -> lines its summary must contain (compared with
        runs of spaces squeezed to one).
      launch_args: more arguments of `cyber_launch start`, with $(rootpath)
        of labels in `data`, e.g. a recording to play into the run:
        ["--recording=$(rootpath drive.mcap)", "--recording_channels=/imu"].
      **kwargs: anything else sh_test takes (size, tags, timeout, ...).
    """
    if runs < 2:
        fail("cyber_lockstep_test %s: runs = %d; at least 2 runs are compared" % (name, runs))
    launcher = Label("//cyber/tools/cyber_launch")
    args = [
        "--cyber_launch=$(rootpath %s)" % launcher,
        "--launch=$(rootpath %s)" % launch,
        "--mainboard=$(rootpath %s)" % mainboard,
        "--run_for=%s" % run_for,
        "--runs=%d" % runs,
    ]
    for process, digest in digests.items():
        args.append("--digest=%s=%s" % (process, digest))
    for process, lines in expect.items():
        for line in lines:
            if "'" in line:
                fail("cyber_lockstep_test %s: an expect line of %s has a ' in it" % (name, process))
            # Quoted: test arguments are split at spaces.
            args.append("'--expect=%s=%s'" % (process, line))
    for arg in launch_args:
        if "'" in arg:
            fail("cyber_lockstep_test %s: a launch argument has a ' in it: %s" % (name, arg))
        args.append("'--launch_arg=%s'" % arg)
    native.sh_test(
        name = name,
        srcs = [Label("//cyber/testing:lockstep_graph_test.sh")],
        args = args,
        data = [
            launch,
            mainboard,
            launcher,
            Label("//cyber/testing:fastdds_shm.sh"),
            Label("//cyber/testing:process_test.sh"),
        ] + data,
        **kwargs
    )
