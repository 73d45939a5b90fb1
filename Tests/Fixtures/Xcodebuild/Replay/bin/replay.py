"""The replay harness behind the stand-in `xcodebuild` and `xcrun` (tests only: Linux has no Xcode).

It replays what real Xcode printed for a recorded run of the RandomStuff app's tests (the xcresulttool outputs in
Tests/Fixtures/Xcodebuild, captured on a Mac with Xcode 26): for the tests a command selects, the console lines in
xcodebuild's format, the time each test took (scaled by FANOUT_REPLAY_TIME_SCALE), and `xcresulttool get
test-results tests` JSON made of the recorded nodes of exactly those tests. Simulators are kept in a state folder
(FANOUT_REPLAY_STATE) with simctl's life cycle: created, booted, erased only when shut down, deleted. It checks what a
real Mac would refuse: an .xctestrun whose __TESTROOT__ paths are missing, a destination that names no booted
simulator, and two xcodebuilds on one simulator at once (slots must never share one). Every invocation is logged in
the state folder (invocations.jsonl) so tests can check what ran where.
"""
import fcntl, json, os, plistlib, re, sys, time, uuid

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.dirname(os.path.dirname(HERE))
RECORDINGS = ["xcresulttool-test-results-tests-failures-xcode26.json",
              "xcresulttool-test-results-tests-ui-and-unit-xcode26.json"]
METRICS = "xcresulttool-test-results-metrics-xcode26.json"
ACTIVITIES = "xcresulttool-test-results-activities-testLaunch-xcode26.json"
# Lines copied byte for byte from real captures (see SOURCES.md): the harness prints them with only the test's
# identity (`-[Target.Class method]`) replaced, or, for simctl, the names, UDIDs and states it keeps.
SKIP_CAPTURE = ("xcbeautify-TestLog.txt", "]' skipped (")
MEASURED_CAPTURE = ("xcodebuild-measured-line-xcpretty.txt", "' measured [Time, seconds] ")
SIMCTL_LIST_CAPTURE = "simctl-list-devices-xcode15.txt"
IDENTITY = re.compile(r"-\[[^\]\s]+ [^\]\s]+\]")


def fail(message, code=70):
    sys.stderr.write(message + "\n")
    sys.exit(code)


def state_dir():
    d = os.environ.get("FANOUT_REPLAY_STATE")
    if not d:
        fail("replay: FANOUT_REPLAY_STATE is not set (the harness keeps its simulators there)")
    os.makedirs(os.path.join(d, "devices"), exist_ok=True)
    return d


def log(event):
    event["pid"] = os.getpid()
    event["time"] = time.time()
    with open(os.path.join(state_dir(), "invocations.jsonl"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps(event) + "\n")


def device_path(udid):
    return os.path.join(state_dir(), "devices", udid + ".json")


def load_device(udid):
    try:
        with open(device_path(udid)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def save_device(device):
    with open(device_path(device["udid"]), "w") as f:
        json.dump(device, f)


def recorded_tests():
    """[(target, bundle kind, suite, case node)] in recording order; a test recorded twice keeps its first run."""
    seen, out = set(), []
    for name in RECORDINGS:
        with open(os.path.join(FIXTURES, name)) as f:
            root = json.load(f)
        for plan in root["testNodes"]:
            for bundle in plan.get("children", []):
                for suite in bundle.get("children", []):
                    for case in suite.get("children", []):
                        if case.get("nodeType") != "Test Case":
                            continue
                        method = case["nodeIdentifier"].split("/")[-1]
                        key = (bundle["name"], suite["name"], method.rstrip("()"))
                        if key in seen:
                            continue
                        seen.add(key)
                        out.append((bundle["name"], bundle["nodeType"], suite["name"], case))
    return out


def method_name(case):
    """The name `-only-testing:` and the console use: `testFoo` for `testFoo()`."""
    name = case["nodeIdentifier"].split("/")[-1]
    return name[:-2] if name.endswith("()") else name


WALL_CLOCK = "com.apple.XCTPerformanceMetric_WallClockTime"


def recorded_metric_ids(test_identifier):
    """The identifiers of the metrics the recorded run measured for `Class/method()`."""
    with open(os.path.join(FIXTURES, METRICS)) as f:
        return {m["identifier"] for t in json.load(f) if t["testIdentifier"] == test_identifier
                for run in t["testRuns"] for m in run["metrics"]}


def captured_line(capture, name):
    """The first line of a capture that holds `marker`, with its test identity replaced by `name`."""
    path, marker = capture
    with open(os.path.join(FIXTURES, path), encoding="utf-8") as f:
        line = next(l for l in f if marker in l)
    return IDENTITY.sub(lambda _: name, line.rstrip("\n"), count=1)


def captured_simctl_list():
    """The three line shapes of a real `simctl list devices` (header, runtime section, device)."""
    with open(os.path.join(FIXTURES, SIMCTL_LIST_CAPTURE), encoding="utf-8") as f:
        header, section, device = f.read().split("\n")[:3]
    return header, section, device


def recorded_attachments():
    """{test identifier: [attachment]} of the recorded `get test-results activities` (the first run of each test):
    real names, UUIDs and times of attachments the recorded tests added."""
    with open(os.path.join(FIXTURES, ACTIVITIES)) as f:
        root = json.load(f)
    found = []

    def walk(activities):
        for a in activities:
            found.extend(a.get("attachments", []))
            walk(a.get("childActivities", []))
    walk(root["testRuns"][0]["activities"])
    return {root["testIdentifier"]: found}
