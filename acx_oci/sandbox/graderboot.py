"""What runs first inside the grading sandbox: the boot that reads the hidden tests from stdin and starts pytest.

Kept apart from :mod:`acx_oci.sandbox.grader` (which stages, runs and reads back a grade) because it is one
program with its own order of events, and that order is the security argument:

1. the process is made non-dumpable, the hidden tests are read from stdin into a private dir in /tmp;
2. the environment's pytest plugins (``pytest11`` entry points of its installed distributions) are found and
   loaded while no submission path is on ``sys.path``: a ``*.dist-info`` in the workspace never names one;
3. when pytest or one of those plugins needs the package under test (pytest imports ``pluggy`` and
   ``iniconfig``), that package alone is linked in from the submission first, so the runner imports the
   submission's copy from the start (the record's ``packageBeforeRunner``); otherwise the submission joins
   ``sys.path`` only after pytest is imported;
4. a runner that cannot start exits :data:`NO_RUNNER_EXIT`: the harness's fault, never a failing test.

The tamper guard's parts (:mod:`acx_oci.sandbox.guard`) are spliced in at ``GUARD_*``: the observer forks
first of all, the runner's baseline is taken once pytest and the environment's plugins are imported.
"""

from __future__ import annotations

from acx_oci.sandbox import guard

#: The grader's own settings file among the hidden tests (written by ``exam import``; never the submission's):
#: ``packages`` (the top-level modules under test: the submission goes first on ``sys.path`` and each must
#: resolve to /workspace, else pytest exits :data:`SHADOWED_EXIT`), ``tests`` (node ids relative to the hidden
#: tree: only those are graded, and an id that is neither collected nor in a module that failed to collect
#: is an error), ``conftest`` (the hidden tree's own conftest.py files are loaded; /workspace never is),
#: ``ini`` (the repository's pytest settings, :mod:`acx_oci.services.exams.pytestconf`), ``data`` (files of the
#: hidden tree the tests read while they run: they outlive collection).
GRADER_CONFIG = "acx-grader.json"
#: pytest's exit when a package under test resolved outside the submission: the run proves nothing (lane error).
SHADOWED_EXIT = 17
#: pytest's exit when the hidden tree's conftest.py could not load because the submission's package under test
#: cannot even be imported (marshmallow 78393d8's incomplete fix): the submission's fail, not a broken grader.
UNIMPORTABLE_EXIT = 18
#: The boot's exit when pytest itself (or an environment plugin) cannot be imported: no test ran (lane error).
NO_RUNNER_EXIT = 19

BOOT = r"""
import ctypes, json, os, re, shutil, sys
if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
    sys.exit("grader: prctl(PR_SET_DUMPABLE) failed")
GUARD_OBSERVE
files = json.loads(sys.stdin.buffer.read())
conf = json.loads(files.pop("GRADER_CONFIG", "{}"))
null = os.open("/dev/null", os.O_RDONLY)
os.dup2(null, 0)
os.close(null)
root = os.path.join("/tmp", "acx-grader")
os.mkdir(root, 0o700)
for rel, data in files.items():
    path = os.path.join(root, "tests", rel)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(data)
packages = [str(p) for p in conf.get("packages") or ()]
wanted = {"tests/" + str(t) for t in conf.get("tests") or ()}
firsts = [d for d in ("/workspace/src", "/workspace") if os.path.isdir(d)] if packages else []

def norm(name):
    return re.sub(r"[-_.]+", "-", str(name)).lower()

def no_runner(what, exc):
    sys.stderr.write("grader: the test runner cannot start: %s: %s: %s\n" % (what, type(exc).__name__, str(exc)[:300]))
    os._exit(NO_RUNNER_EXIT)

# The environment's plugins, found while no submission path is on sys.path (a dist-info there names none).
try:
    import importlib.metadata as md
    plugin_eps, dists = {}, {}
    for dist in md.distributions():
        name = norm(dist.metadata["Name"] or "")
        dists.setdefault(name, dist)
        for ep in dist.entry_points:
            if ep.group == "pytest11" and ep.name not in plugin_eps:
                plugin_eps[ep.name] = (name, ep)
except Exception as exc:
    no_runner("reading the environment's distributions", exc)
# What pytest and those plugins import (their requirements, followed): the package under test among them is
# the submission's from the start, linked alone (the rest of /workspace is not on sys.path before pytest).
need, todo = set(), ["pytest"] + [n for n, _ in plugin_eps.values()]
while todo and len(need) < 400:
    name = norm(todo.pop())
    if name in need:
        continue
    need.add(name)
    dist = dists.get(name)
    for req in (dist.requires or []) if dist is not None else []:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m and "extra ==" not in req:
            todo.append(m.group(1))
whole = bool({norm(d) for d in conf.get("distributions") or ()} & need)  # the project's distribution itself
early = sorted(p for p in packages if whole or norm(p) in need)
if whole:  # every top-level package of the project the image leaves out, not only those the fix changed (attrs:
    # jsonschema, under pytest-mypy-plugins, imports `attrs`; the fix changed `attr`). The image's own report says
    # which (ours, read-only); a host grade has none.
    try:
        with open(os.path.join(sys.prefix, "acx-env.json"), encoding="utf-8") as fh:
            left = json.load(fh)["inputs"]["excludePackages"]
        early = sorted(set(early) | {str(p) for p in left if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,99}", str(p))})
    except (OSError, ValueError, KeyError, TypeError):
        pass
if early:
    links = os.path.join("/tmp", "acx-early")
    os.mkdir(links, 0o700)
    for name in early:
        for top in firsts:
            for cand in (name, name + ".py"):
                if os.path.exists(os.path.join(top, cand)):
                    os.symlink(os.path.join(top, cand), os.path.join(links, cand))
                    break
            else:
                continue
            break
    sys.path.insert(0, links)
    sys.stderr.write("grader: the package under test is the submission's from the start: %s\n" % ", ".join(early))
try:
    import pytest
    plugins = [ep.load() for _, ep in sorted(plugin_eps.values(), key=lambda v: v[1].name)]
except Exception as exc:
    import traceback
    if early and any(f.filename.startswith(("/tmp/acx-early/", "/workspace/"))
                     for f in traceback.extract_tb(exc.__traceback__)):  # the submission's package broke pytest
        sys.stderr.write("grader: the package under test %s cannot be imported: %s: %s\n"
                         % (", ".join(early), type(exc).__name__, str(exc)[:300]))
        os._exit(UNIMPORTABLE_EXIT)
    no_runner("import pytest and the environment's plugins", exc)
GUARD_BASELINE
if IMPORT_SUBMISSION:
    sys.path.append("/workspace")
sys.path[:0] = firsts  # after pytest itself is imported: the submission cannot replace the grader's modules
# The project under test is never installed: its metadata alone, so that importlib.metadata.version(it) answers.
for name, version in (conf.get("distributions") or {}).items():
    info = os.path.join("/tmp", "acx-dist", "%s-%s.dist-info" % (name.replace("-", "_"), version))
    os.makedirs(info, mode=0o700)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as fh:
        fh.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
    if os.path.dirname(info) not in sys.path:
        sys.path.insert(len(firsts), os.path.dirname(info))
args = sys.argv[1:]
with open(sys.modules["_pytest.main"].__file__, encoding="utf-8", errors="replace") as fh:
    if "--rootdir" not in fh.read():  # pytest < 3.x (a 2016 fix's own) has no --rootdir: with -c it takes the
        # paths' common folder, so the paths are the root itself (ids and junit names start tests/, as elsewhere)
        shutil.copyfile("/grader/pytest.ini", os.path.join(root, "pytest.ini"))
        args = [os.path.join(root, "pytest.ini") if a == "/grader/pytest.ini" else root
                if a == os.path.join(root, "tests") else a for a in args if not a.startswith("--rootdir=")]
if conf.get("conftest"):
    args = [a for a in args if a != "--noconftest"] + ["--confcutdir=" + root]
# The repository's own settings (configuration only, read from its base tree at import; never its conftest).
for key, value in sorted((conf.get("ini") or {}).items()):
    if key == "pythonpath":  # folders of the repository, as pytest puts them first: here, of the hidden tree
        sys.path[:0] = [os.path.normpath(os.path.join(root, "tests", d)) for d in value.split()]
        continue
    args.append("--override-ini=%s=%s" % (key, value))  # one value each: pytest < 4's -o takes every next word
if "pytest_mock" in plugin_eps:  # it wraps unittest.mock's asserts at configure (for its messages alone): the
    # guard takes no change made once the submission may have run (a conftest that imports the package under test)
    args.append("--override-ini=mock_traceback_monkeypatch=false")
# Test modules the hidden tests import (their shared helpers): importable, never collected and graded.
args += ["--ignore=" + os.path.join(root, "tests", str(p)) for p in conf.get("notCollected") or ()]
if conf:  # a test module the base cannot import (it names what the fix adds) is a failing test, not a broken grader
    args.append("--continue-on-collection-errors")

def outside(name):
    mod = sys.modules.get(name)
    if mod is None:
        return None
    where = [getattr(mod, "__file__", None) or ""] + list(getattr(mod, "__path__", None) or ())
    bad = [w for w in where if w and not os.path.realpath(w).startswith("/workspace/")]
    return bad[0] if bad else None

class Hide:
    broken = set()
    collected = False
    def pytest_collectreport(self, report):
        if report.failed:
            self.broken.add(report.nodeid.split("::", 1)[0])
    def pytest_collection_modifyitems(self, session, config, items):
        if not wanted:
            return
        # An id without parameters names every parametrized case of its test, as pytest's own selection does.
        got = {i.nodeid for i in items} | {i.nodeid.split("[", 1)[0] for i in items}
        lost = sorted(m for m in wanted - got if m.split("::", 1)[0] not in self.broken)
        if lost:
            raise pytest.UsageError("grader: test id not collected: " + lost[0][len("tests/"):])
        items[:] = [i for i in items if i.nodeid in wanted or i.nodeid.split("[", 1)[0] in wanted]
    def pytest_collection_finish(self, session):
        for item in session.items:  # a package's __init__.py is imported at setup: import it while it exists
            for node in item.listchain():
                if isinstance(node, getattr(pytest, "Package", ())):
                    try:
                        node.obj
                    except Exception:
                        pass
        Hide.collected = True
        # Out of process, the hidden files go now: the submission, a child process, never saw them. In process
        # the package under test ran while pytest imported them, so removing them hides nothing, and a test's
        # spawned child re-imports its test module by name (filelock's multiprocessing "spawn" tests).
        if not (IMPORT_SUBMISSION or packages):
            shutil.rmtree(root)
            for rel in files:  # pytest >= 8 imports a package's __init__.py again at setup: an empty stand-in
                if os.path.basename(rel) == "__init__.py" or rel in (conf.get("data") or ()):  # data tests read
                    path = os.path.join(root, "tests", rel)
                    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write("" if rel.endswith(".py") else files[rel])
        for name in packages:
            bad = outside(name)
            if bad is not None:
                sys.stderr.write("grader: package under test %s resolved outside /workspace: %s\n" % (name, bad))
                os._exit(SHADOWED_EXIT)

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # its plugins are those loaded above, never a scan of sys.path
GUARD_PLUGIN
GUARD_END
code = pytest.main(args, plugins=[Hide(), _GuardPlugin()] + plugins)
if code == 4 and packages and not Hide.collected:  # a usage error before collection: a conftest did not load
    import importlib
    shutil.rmtree(root)
    for name in packages:
        try:
            importlib.import_module(name)
        except Exception as exc:
            sys.stderr.write("grader: the package under test %s cannot be imported: %s: %s\n"
                             % (name, type(exc).__name__, str(exc)[:300]))
            os._exit(UNIMPORTABLE_EXIT)
_g_end(code)
"""


def pytest_argv(*, import_submission: bool = False, python: str = "/usr/bin/python3") -> list[str]:
    """The grader's command line inside the sandbox (no part of it comes from the submission).

    The hidden tests come on stdin (see :data:`BOOT`), never from a bind. Plugins are never autoloaded by
    pytest itself (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): the boot loads the environment's before the
    submission is on ``sys.path``.
    """
    boot = guard.splice(BOOT).replace("IMPORT_SUBMISSION", repr(bool(import_submission))).replace(
        "GRADER_CONFIG", GRADER_CONFIG).replace("SHADOWED_EXIT", str(SHADOWED_EXIT)).replace(
        "UNIMPORTABLE_EXIT", str(UNIMPORTABLE_EXIT)).replace("NO_RUNNER_EXIT", str(NO_RUNNER_EXIT))
    # -rs: a skip's reason in the output, for the record (a skipped graded test is no pass); the override as
    # one word: pytest before 4 read `-o` as taking every following word (the tests' folder too: iniconfig's)
    return [python, "-I", "-B", "-c", boot, "-q", "-rs", "-p", "no:cacheprovider", "--noconftest",
            "-c", "/grader/pytest.ini", "--rootdir=/tmp/acx-grader", "--junitxml=/grader-out/report.xml",
            "--override-ini=junit_family=xunit2", "/tmp/acx-grader/tests"]
