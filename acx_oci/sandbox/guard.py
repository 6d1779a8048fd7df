"""The code the grader's sandbox runs around pytest to see tampering from inside the test process (issue 46).

On an imported exam the hidden tests import the submission's package into pytest's own process, so the
submission can patch the runner. Three parts, spliced into :data:`acx_oci.sandbox.graderboot.BOOT`:

* :data:`OBSERVE` forks before anything else runs. The child runs pytest; the parent (non-dumpable like the
  child, so the child can neither ptrace it nor read its memory) never runs submission code. It reads the
  child's events from a pipe, waits for the child and only then writes ``/grader-out/guard.json``
  (:data:`RECORD`): its own record, with the child's true exit status and the report's digest as the parent
  reads it (the host compares it with the report it reads itself: a process the child left behind that
  rewrites the report later is seen). It signals nothing: it may run where the pid namespace is the host's.
* :data:`BASELINE` runs after ``import pytest`` and before the submission can: it imports pytest's default
  plugins (so none is later resolved from the submission's tree), takes a snapshot of the runner's functions,
  classes and methods (pytest, _pytest, pluggy), of the builtins and of the process-exit functions, and arms a
  PEP 578 audit hook (which no Python code can remove) that reports a swapped ``__code__``/``__defaults__``
  of the runner's functions and every write, rename or removal under ``/grader-out`` beyond pytest's one
  report write (CPython does not audit a class's attribute writes: the snapshot sees those).
* :data:`~acx_oci.sandbox.guard_plugin.PLUGIN` checks the snapshot again after collection, after each test
  and at the end, as well as the hook implementations (none from ``/workspace``; none changed once tests run),
  and sends each report's outcome and the junit digest to the parent; its ``END`` ends the child with
  ``os._exit`` (no ``atexit`` handler of the submission runs after the report).

Everything here runs inside the sandbox on the image's Python (3.8+); the host reads only the record.
"""

from __future__ import annotations

from acx_oci.sandbox.guard_plugin import END, PLUGIN

#: The parent's record in the writable output dir, read by the host (:func:`acx_oci.sandbox.tamper.read_record`).
RECORD = "guard.json"
#: Bytes of the report the observer digests (the grader's own bound on it).
MAX_REPORT = 4 * 1024 * 1024
#: Bytes of events the parent keeps from the child; a child that sends more floods the channel (tampering).
MAX_EVENTS = 16 * 1024 * 1024

OBSERVE = r"""
import select as _g_select, types as _g_types, builtins as _g_builtins, hashlib as _g_hashlib
_g_exit, _g_write, _g_dumps, _g_getpid = os._exit, os.write, json.dumps, os.getpid
_G_OUT = "/grader-out"
_G_REPORT = _G_OUT + "/report.xml"


def _g_digest(path):
    try:
        st = os.lstat(path)
        if not (st.st_mode & 0o170000) == 0o100000:
            return "not a regular file"
        with open(path, "rb") as fh:
            return _g_hashlib.sha256(fh.read(@MAX_REPORT@ + 1)).hexdigest()
    except OSError:
        return None


def _g_observe():
    ev_r, ev_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ev_r)
        return ev_w
    os.close(ev_w)
    os.close(0)
    buf, status, eof, flooded = bytearray(), None, False, False
    while not (eof and status is not None):
        if not eof and _g_select.select([ev_r], [], [], 0.05)[0]:
            data = os.read(ev_r, 65536)
            eof = not data
            if len(buf) + len(data) > @MAX_EVENTS@:
                flooded = True
            else:
                buf += data
        if status is None:
            done, st = os.waitpid(pid, 0 if eof else os.WNOHANG)
            if done:
                status = st
    rec = {"tests": {}, "tamper": [], "end": None, "reports": [], "flooded": flooded}
    for line in bytes(buf).split(b"\n"):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict):
            continue
        kind = ev.get("e")
        if kind == "case" and isinstance(ev.get("id"), str):
            old = rec["tests"].get(ev["id"])
            if old in (None, "passed", "skipped") or ev.get("o") == "error":
                rec["tests"][ev["id"]] = str(ev.get("o"))
        elif kind == "tamper":
            rec["tamper"].append(str(ev.get("why"))[:300])
        elif kind == "report":
            rec["reports"].append(ev.get("sha"))
        elif kind == "end":
            rec["end"] = ev
    rec["exit"] = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    rec["report"] = _g_digest(_G_REPORT)
    path = _G_OUT + "/" + @RECORD@
    try:
        if os.path.lexists(path):
            os.unlink(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        os.write(fd, json.dumps(rec, sort_keys=True).encode())
        os.close(fd)
    except OSError:
        pass
    code = rec["exit"]
    _g_exit(code if 0 <= code < 256 else 128 + (-code if code < 0 else 1))


_G_FD = _g_observe()


def _g_send(kind, **kw):
    kw["e"] = kind
    try:
        _g_write(_G_FD, (_g_dumps(kw) + "\n").encode())
    except Exception:
        pass
"""

BASELINE = r"""
import importlib as _g_importlib
for _g_name in getattr(_g_importlib.import_module("_pytest.config"), "default_plugins", ()):
    try:
        _g_importlib.import_module("_pytest." + _g_name)
    except Exception:
        pass
for _g_name in ("xml.etree.ElementTree", "xml.sax.saxutils", "pluggy"):  # the junit writer's, ours first
    try:
        _g_importlib.import_module(_g_name)
    except ModuleNotFoundError:  # pytest before 3.7 vendored pluggy as _pytest.vendored_packages.pluggy
        if _g_name != "pluggy":
            raise
_G_RUNNER = ("pytest", "_pytest", "pluggy", "unittest")  # unittest: TestCase-style tests run through it
_G_STATE = {"armed": False, "busy": False, "opens": 0, "failed": 0, "snap": None, "fast": None, "hooks": None,
            "items": {}, "ran": False, "called": set(), "kept": [], "forked": False}
_G_FN = (_g_types.FunctionType, property, classmethod, staticmethod)
_G_BODY = ("__code__", "__defaults__", "__kwdefaults__")  # a runner function's body: never swapped


def _g_ours(obj):
    mod = obj.__dict__.get("__module__") if isinstance(obj, type) else getattr(obj, "__module__", None)
    return isinstance(mod, str) and mod.split(".")[0] in _G_RUNNER


def _g_code(v):
    f = getattr(v, "__func__", None) or getattr(v, "fget", None) or v
    return getattr(f, "__code__", None)


def _g_dirs():
    out = []
    for name in _G_RUNNER:
        mod = sys.modules.get(name)
        f = getattr(mod, "__file__", None)
        if f:
            out.append(os.path.dirname(os.path.realpath(f)) + "/")
    return tuple(out)


_G_DIRS = _g_dirs()


_G_WHERE = {}  # co_filename -> is the runner's: a snapshot holds ~2600 functions from ~100 files


def _g_runner_code(v):
    code = _g_code(v)
    if code is None:
        return False
    name = code.co_filename
    hit = _G_WHERE.get(name)
    if hit is None:
        real = os.path.realpath(name)  # the file's name when it is the runner's ("" when not): truthy as before
        hit = _G_WHERE[name] = os.path.basename(real) if real.startswith(_G_DIRS) else ""
    return hit


_G_HELD = {"classes": [], "funcs": []}  # what the last full snapshot saw, held (so no id is reused)
_g_code_of = __import__("operator").attrgetter("__code__")


def _g_fast():
    # The cheap look each test boundary takes (C-level maps over dicts): the ids of the runner's modules, of
    # every value in their dicts and in their classes' dicts, the classes' MROs, the held functions' code, the
    # builtins and the exit and trace functions. Whatever the full snapshot compares changes one of these.
    out = []
    for name, mod in list(sys.modules.items()):
        if isinstance(name, str) and name.split(".")[0] in _G_RUNNER and mod is not None:
            d = getattr(mod, "__dict__", None) or {}
            out.append((name, id(mod), tuple(d), tuple(map(id, list(d.values())))))
    for c in _G_HELD["classes"]:
        cd = c.__dict__
        out.append((tuple(cd), tuple(map(id, list(cd.values()))), tuple(map(id, c.__mro__))))
    out.append(tuple(map(id, map(_g_code_of, _G_HELD["funcs"]))))
    b = vars(_g_builtins)
    out.append((tuple(b), tuple(map(id, list(b.values())))))
    out.append(tuple(id(getattr(os, k, None)) for k in ("_exit", "kill", "write", "open", "replace", "rename")))
    out.append(tuple(id(getattr(sys, k, None)) for k in ("exit", "excepthook", "settrace", "setprofile")))
    out.append((id(sys.gettrace()), id(sys.getprofile())))
    return out


def _g_descriptor(v):
    return any("__get__" in vars(c) for c in type(v).__mro__)


_G_TAG_KEYS = frozenset(("__module__", "__doc__", "__dict__", "__weakref__", "__qualname__", "xmlname"))
_g_type_attr = {k: vars(type)[k].__get__ for k in ("__name__", "__bases__", "__dict__", "__mro__")}


def _g_xml_taken():
    # pytest < 6's junitxml (a default plugin) imports py.xml; taken with each baseline no submission code preceded
    mod = sys.modules.get("py._xmlgen")
    _G_XML[:] = [getattr(mod, "Tag", None), getattr(mod, "NamespaceMetaclass", None)]


def _g_xml_tag(owner, name, v):
    # py.xml's Namespace makes a tag class on first use and sets it on the namespace (pytest < 6's junitxml:
    # Junit.testcase appears at the first test written). Only such a class counts as the runner's addition:
    # of py.xml's own Tag and on a namespace of its own metaclass (both as they were at the baseline, before
    # the submission could run), with no code of its own, under a name no base defines. Read through type's
    # own descriptors and never raising: no object of the submission's runs code here or stops the check.
    try:
        tag, meta = _G_XML
        if tag is None or not issubclass(type(v), type) or type(owner) is not meta \
                or _g_type_attr["__name__"](v) != name:
            return ""
        bases, own = _g_type_attr["__bases__"](v), _g_type_attr["__dict__"](v)
        if len(bases) != 1 or bases[0] is not tag or not set(own) <= _G_TAG_KEYS:
            return ""
        if "xmlname" in own and not (type(own["xmlname"]) is str and str.__eq__(own["xmlname"], name)):
            return ""
        mro = [_g_type_attr["__dict__"](b) for b in _g_type_attr["__mro__"](owner)]
        return "" if any(name in d for d in mro[1:]) else "xml tag"
    except Exception:
        return ""


def _g_runner_class(v):
    # A class defined in the runner's own modules (read from the type's own dict: no code of v's runs). Python's
    # unittest binds IsolatedAsyncioTestCase on first use (a module __getattr__), after collection.
    try:
        mod = _g_type_attr["__dict__"](v).get("__module__")
        return type(mod) is str and mod.split(".")[0] in _G_RUNNER
    except Exception:
        return False


def _g_snapshot():
    snap, classes, funcs, keep = {}, [], [], []  # keep: every object whose id the snapshot holds
    for name, mod in list(sys.modules.items()):
        if not isinstance(name, str) or name.split(".")[0] not in _G_RUNNER or mod is None:  # py 1.4: a None key
            continue
        snap["m:" + name] = id(mod)
        for k, v in list(getattr(mod, "__dict__", {}).items()):
            if isinstance(v, _g_types.FunctionType) and v.__module__ == name:
                snap["f:%s|%s" % (name, k)] = (id(v), id(_g_code(v)), _g_runner_code(v))
                funcs.append(v)
                keep.append(_g_code(v))
            elif isinstance(v, type) and v.__dict__.get("__module__") == name:
                classes.append(v)
                for ak, av in list(v.__dict__.items()):
                    if isinstance(av, _G_FN):
                        snap["c:%s|%s.%s" % (name, k, ak)] = (id(av), id(_g_code(av)), _g_runner_code(av))
                        keep += (av, _g_code(av))
                        f = getattr(av, "__func__", None) or getattr(av, "fget", None) or av
                        if isinstance(f, _g_types.FunctionType):
                            funcs.append(f)
                    elif callable(av) or _g_descriptor(av):  # a class, a partial, a data descriptor
                        snap["c:%s|%s.%s" % (name, k, ak)] = (id(av), 0, _g_xml_tag(v, ak, av))  # (no code run)
                        keep.append(av)
                snap["t:%s|%s" % (name, k)] = (id(v), tuple(id(b) for b in v.__mro__))
            elif isinstance(v, _g_types.FunctionType):  # a name the module imported: its globals are looked up
                snap["g:%s|%s" % (name, k)] = (id(v), id(v.__code__), _g_runner_code(v))
                keep += (v, v.__code__)
            elif isinstance(v, _g_types.ModuleType):  # a submodule imported later binds itself on its package
                snap["g:%s|%s" % (name, k)] = (id(v), 0, str(getattr(v, "__name__", "")).split(".")[0] in _G_RUNNER)
                keep.append(v)
            elif isinstance(v, type):  # a class the module binds later: unittest's lazy IsolatedAsyncioTestCase
                snap["g:%s|%s" % (name, k)] = (id(v), 0, _g_runner_class(v))
                keep.append(v)
            elif callable(v):
                snap["g:%s|%s" % (name, k)] = (id(v), 0, False)
                keep.append(v)
    for k, v in list(vars(_g_builtins).items()):
        snap["b:" + k] = id(v)
    for k in ("_exit", "kill", "write", "open", "replace", "rename"):
        snap["os:" + k] = id(getattr(os, k, None))
    for k in ("exit", "excepthook", "settrace", "setprofile"):
        snap["sys:" + k] = id(getattr(sys, k, None))
    snap["sys:trace"] = (id(sys.gettrace()), id(sys.getprofile()))
    _G_HELD["classes"], _G_HELD["funcs"], _G_HELD["keep"] = classes, funcs, keep
    return snap


def _g_tamper(why):
    _g_send("tamper", why=why)


def _g_check(where):
    # A function, method or property of pytest, _pytest or pluggy that changed (unless to the runner's own
    # code: pytest's legacypath plugin adds properties to Config at configure), a module or class replaced,
    # a builtin, exit function or trace hook swapped.
    if _g_fast() == _G_STATE["fast"]:
        return  # nothing the full snapshot compares has changed (~20x cheaper than taking it)
    now, base, boot = _g_snapshot(), _G_STATE["snap"], _G_STATE["boot"][0]
    mods = set(k.split(":", 1)[1] for k in base if k.startswith("m:"))
    keys = set(base) | set(k for k in now if k[0] in "fctg" and k[2:].split("|")[0] in mods)
    bad = []
    for k in sorted(keys):
        if now.get(k) == base.get(k) or k in now and now[k] == boot.get(k):
            continue  # unchanged, or back to what it was before the environment's plugins configured
        if k[0] in "fcg" and (now[k][2] and k not in base if k in now else k not in boot):
            continue  # an attribute added with the runner's own code, or one it added gone again (never a
            # replacement: Function.runtest = Node.setup is the runner's code too, and a no-op)
        bad.append(k)
    if bad:
        _g_tamper("%s: the runner changed: %s" % (where, ", ".join(bad[:5])))
    _G_STATE["snap"], _G_STATE["fast"] = now, _g_fast()  # each change said once


def _g_same(event, args):
    # A write that changes nothing: cloudpickle, rebuilding a class a hidden helper made, sets its fresh copy of
    # the helper's function to the defaults it has (None; attrs 597c3a8adb's reference was void in 3 of 3
    # runs). By identity only: == could run the submission's code inside the hook.
    try:
        now = getattr(args[0], args[1])
    except Exception:
        return False
    return now is None if event == "object.__delattr__" else len(args) > 2 and now is args[2]


def _g_under_out(path):
    try:
        if isinstance(path, int):
            return False
        p = os.fsdecode(path)
        return os.path.realpath(p).startswith(_G_OUT + "/") or os.path.realpath(p) == _G_OUT
    except Exception:
        return True


def _g_audit(event, args):
    if event == "exec":  # a module's body (or any code object) runs: is it the submission's?
        if not _G_STATE["ran"] and args and _g_submitted(getattr(args[0], "co_filename", None)):
            _G_STATE["ran"] = True
        return
    if not _G_STATE["armed"] or _G_STATE["busy"]:
        return
    _G_STATE["busy"] = True
    try:
        if event in ("object.__setattr__", "object.__delattr__"):
            obj = args[0]
            if isinstance(obj, (type, _g_types.FunctionType)) and _g_ours(obj) and (args[1] in _G_BODY or not (
                    event == "object.__setattr__" and (_g_runner_code(args[2]) or not callable(args[2])
                                                       and not isinstance(args[2], _G_FN)))):
                _g_tamper("%s on the runner's %s: %s" % (event, getattr(obj, "__qualname__", "?"), args[1]))
            elif isinstance(obj, _g_types.FunctionType) and str(obj.__code__.co_filename).startswith(
                    "/tmp/acx-grader/") and not _g_same(event, args):
                _g_tamper("%s on the hidden test %s: %s" % (event, obj.__qualname__, args[1]))
        elif event == "open" and len(args) >= 3:
            path, mode, flags = args[0], args[1], args[2]
            writing = (any(c in mode for c in "wax+") if isinstance(mode, str)
                       else bool((flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)))
            if writing and _g_under_out(path):
                _G_STATE["opens"] += 1
                if _G_STATE["opens"] > 1 or os.path.realpath(os.fsdecode(path)) != _G_REPORT:
                    _g_tamper("a write to %s beyond pytest's one report" % os.fsdecode(path)[:200])
        elif event in ("os.rename", "os.link", "os.symlink", "os.remove", "os.rmdir", "os.truncate",
                       "os.chmod", "os.utime", "shutil.rmtree", "shutil.move"):
            if any(_g_under_out(a) for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))):
                _g_tamper("%s under %s" % (event, _G_OUT))
    finally:
        _G_STATE["busy"] = False


def _g_submitted(fn):
    # Is this file the submission's? (/workspace, or the package linked in before pytest when pytest needs it)
    hit = _G_MINE.get(fn)
    if hit is None:
        hit = _G_MINE[fn] = isinstance(fn, str) and fn.startswith("/") and (
            fn.startswith(_G_SUBMITTED) or os.path.realpath(fn).startswith(_G_SUBMITTED))
    return hit


def _g_loaded():
    for mod in list(sys.modules.values()):
        where = [getattr(mod, "__file__", None)] + list(getattr(mod, "__path__", None) or ())
        if any(_g_submitted(w) for w in where if isinstance(w, str)):
            return True
    return False


def _g_rebase(start):
    # Before the first conftest loads (start) and at the session's start: when none of the submission's code
    # has run (no module of it executed or loaded), each change since the baseline was pytest's, the
    # environment's plugins' (pytest-mock wraps unittest.mock's asserts at configure) or the hidden conftest's:
    # the runner as the tests meet it. Otherwise only pytest's own start is taken (legacypath swaps in its code
    # before any conftest): a submission that ran (pytest needs the package under test, a conftest imports it)
    # may have changed the rest.
    # (legacypath alone: a submission that ran first may have put any other runner code in a runner slot)
    _G_STATE["kept"].append(_G_HELD.get("keep"))  # the ids the baseline keeps stay held
    now = _g_snapshot()
    if not _G_STATE["ran"] and not _g_loaded():
        base = now
        _g_xml_taken()
    else:
        base = dict(_G_STATE["snap"])
        base.update((k, v) for k, v in now.items() if start and k[0] in "fcg" and v[2] == "legacypath.py"
                    and base.get(k) != v)
    _G_STATE["snap"], _G_STATE["fast"] = base, _g_fast() if base == now else None


_G_SUBMITTED, _G_MINE = ("/workspace/", "/tmp/acx-early/"), {}
_G_XML = [None, None]  # py.xml's Tag and NamespaceMetaclass, as the runner has them (_g_xml_taken)
_g_xml_taken()
_G_STATE["snap"] = _g_snapshot()
_G_STATE["boot"] = (_G_STATE["snap"], _G_HELD["keep"])  # held: no id of it is reused
_G_STATE["ran"] = _g_loaded()
_G_STATE["fast"] = _g_fast()
sys.addaudithook(_g_audit)
_G_STATE["armed"] = True
"""

def splice(boot: str) -> str:
    """The grader's boot with the guard's parts in their places (``GUARD_OBSERVE`` first of all, before the
    hidden tests are read; ``GUARD_BASELINE`` right after ``import pytest``; the plugin and ``_g_end``)."""
    def fill(code: str) -> str:
        return code.replace("@MAX_REPORT@", str(MAX_REPORT)).replace(
            "@MAX_EVENTS@", str(MAX_EVENTS)).replace("@RECORD@", repr(RECORD))
    return (boot.replace("GUARD_OBSERVE", fill(OBSERVE)).replace("GUARD_BASELINE", fill(BASELINE))
            .replace("GUARD_PLUGIN", fill(PLUGIN)).replace("GUARD_END", fill(END)))
