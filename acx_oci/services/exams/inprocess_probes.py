"""In-process attack probes: code appended to the package under test, which an imported exam's hidden tests
import into pytest's own process (issue 46).

Each probe is the untouched workspace with a few lines added to the package's ``__init__.py`` (or its
module) that attack the runner from inside: no test solves anything. Every one must be graded a fail (or
found as tampering) at certification (:func:`acx_oci.services.exams.stages`' attack stage, ``inProcessProbes``).
Several never spell the runner's module names: they find its objects with ``gc.get_objects`` by names built
at run time, as a submission hiding from a static read would.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

from acx_oci.model import grading
from acx_oci.sandbox import GRADER_CONFIG, GradeResult
from acx_oci.services.exams.harness import graded_all
from acx_oci.services.exams.inprocess_probes_deeper import DEEPER

#: Finds pytest's Config (its plugin manager) by a scan of live objects, names built at run time.
_FIND = '''
def _acx_find(kind):
    import gc
    for o in gc.get_objects():
        try:
            if type(o).__name__ == kind:
                return o
        except Exception:
            pass
    return None


def _acx_pm():
    cfg = _acx_find("".join(map(chr, (67, 111, 110, 102, 105, 103))))  # "Config"
    return getattr(cfg, "pluginmanager", None)


def _acx_mod(*parts):
    import sys
    return sys.modules.get("".join(parts))
'''

_NOOP_RUNTEST = '''
_m = _acx_mod("_py", "test.py", "thon")
if _m is not None:
    _m.Function.runtest = lambda self: None
'''

_UNNAMED_RUNNER = '''
import gc as _gc
for _o in _gc.get_objects():
    try:
        if isinstance(_o, type) and _o.__name__ == "Fun" + "ction" and _o.__module__.startswith("_py" + "test"):
            setattr(_o, "run" + "test", lambda self: None)
    except Exception:
        pass
'''

_CODE_SWAP = '''
def _acx_nothing(self):
    return None


_m = _acx_mod("_py", "test.py", "thon")
if _m is not None:
    _m.Function.runtest.__code__ = _acx_nothing.__code__
'''

_MAPPINGPROXY = '''
import gc as _gc
_m = _acx_mod("_py", "test.py", "thon")
if _m is not None:
    _d = _gc.get_referents(_m.Function.__dict__)[0]
    _d["runtest"] = lambda self: None
    _m.Function.__name__ = _m.Function.__name__  # invalidates the method cache
'''

_PYFUNC_CALL = '''
class _AcxPlugin:
    def pytest_pyfunc_call(self, pyfuncitem):
        return True


_pm = _acx_pm()
if _pm is not None:
    _pm.register(_AcxPlugin(), "acx-probe")
'''

_REWRITE_REPORTS = '''
import pluggy as _pluggy


class _AcxPlugin:
    @_pluggy.HookimplMarker("pytest")(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        rep.outcome = "passed"
        rep.longrepr = None


_pm = _acx_pm()
if _pm is not None:
    _pm.register(_AcxPlugin(), "acx-probe")
'''

_REPORT_CLASS = '''
_m = _acx_mod("_py", "test.rep", "orts")
if _m is not None:
    _init = _m.TestReport.__init__

    def _acx_init(self, *a, **kw):
        _init(self, *a, **kw)
        self.outcome, self.longrepr = "passed", None

    _m.TestReport.__init__ = _acx_init
'''

_SWALLOW_ASSERT = '''
import pluggy as _pluggy


class _AcxPlugin:
    @_pluggy.HookimplMarker("pytest")(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        outcome = yield
        exc = outcome.excinfo
        if exc is not None and issubclass(exc[0], AssertionError):
            outcome.force_result(True)


_pm = _acx_pm()
if _pm is not None:
    _pm.register(_AcxPlugin(), "acx-probe")
'''

_HOOKIMPL = '''
_pm = _acx_pm()
if _pm is not None:
    for _impl in _pm.hook.pytest_runtest_call.get_hookimpls():
        if getattr(_impl.function, "__module__", "") == "_py" + "test.run" + "ner":
            _impl.function = lambda item: None
'''

_COLLECTION = '''
import pluggy as _pluggy


class _AcxPlugin:
    @_pluggy.HookimplMarker("pytest")(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            item.obj = lambda *a, **kw: None


_pm = _acx_pm()
if _pm is not None:
    _pm.register(_AcxPlugin(), "acx-probe")
'''

_REPORT_FORGE = r'''
import os as _os
import re as _re
import pluggy as _pluggy


def _acx_forge():
    path = "/grader" + "-out/report.xml"
    try:
        with open(path) as fh:
            text = fh.read()
        text = _re.sub(r"<(failure|error)\b.*?</\1>|<(failure|error)\b[^>]*/>", "", text, flags=_re.S)
        text = _re.sub(r'(failures|errors)="\d+"', r'\1="0"', text)
        with open(path, "w") as fh:
            fh.write(text)
    except OSError:
        pass


class _AcxPlugin:
    @_pluggy.HookimplMarker("pytest")(trylast=True)
    def pytest_unconfigure(self, config):
        _acx_forge()
        _os._exit(0)


_pm = _acx_pm()
if _pm is not None:
    _pm.register(_AcxPlugin(), "acx-probe")
'''

_ATEXIT = r'''
import atexit as _atexit
import os as _os
import re as _re


def _acx_forge():
    path = "/grader" + "-out/report.xml"
    try:
        with open(path) as fh:
            text = fh.read()
        text = _re.sub(r"<(failure|error)\b.*?</\1>|<(failure|error)\b[^>]*/>", "", text, flags=_re.S)
        with open(path, "w") as fh:
            fh.write(_re.sub(r'(failures|errors)="\d+"', r'\1="0"', text))
    except OSError:
        pass
    _os._exit(0)


_atexit.register(_acx_forge)
'''

_EXIT_STATUS = '''
import pluggy as _pluggy


class _AcxPlugin:
    @_pluggy.HookimplMarker("pytest")(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        report.outcome, report.longrepr = "passed", None

    def pytest_sessionfinish(self, session, exitstatus):
        session.exitstatus = 0


_pm = _acx_pm()
if _pm is not None:
    _pm.register(_AcxPlugin(), "acx-probe")
'''

_EARLY_EXIT = r'''
import os as _os
import threading as _threading


def _acx_watch():
    import time
    while True:
        sess = _acx_find("Sess" + "ion")
        items = getattr(sess, "items", None)
        if items:
            cases = "".join('<testcase classname="%s" name="%s"/>' % (
                ".".join(i.nodeid.split("::")[0][:-3].split("/")), i.nodeid.split("::")[-1]) for i in items)
            with open("/grader" + "-out/report.xml", "w") as fh:
                fh.write('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
                         'failures="0" skipped="0" tests="%d">%s</testsuite></testsuites>' % (len(items), cases))
            _os._exit(0)
        time.sleep(0.002)


_threading.Thread(target=_acx_watch, daemon=True).start()
'''

#: Aimed at chosen tests by name (as one that reads the upstream test file would: ``_ACX_KNOWN``, the exam's
#: graded test names): each collected item of those names gets a no-op ``runtest`` of its own as the session
#: (found on the import's call stack, its class swapped) takes its items; honeypot copies under new names would
#: be spared, the honeypot run's in-place changes (real names) are not.
_TARGETED = r'''
import sys as _sys


def _acx_session():
    f = _sys._getframe()
    while f is not None:
        o = f.f_locals.get("self")
        if type(o).__name__ == "Sess" + "ion":
            return o
        f = f.f_back
    return None


_sess = _acx_session()
if _sess is not None:
    class _AcxSession(type(_sess)):
        @property
        def items(self):
            value = self.__dict__.setdefault("items", [])
            for item in value:
                if item.name.split("[")[0] in _ACX_KNOWN and "runtest" not in vars(item):
                    item.runtest = lambda: None
            return value

        @items.setter
        def items(self, value):
            self.__dict__["items"] = value

    _sess.__class__ = _AcxSession
'''

#: name -> code appended to the package under test; each attacks the runner, none solves the task.
PROBES = {
    "noopRuntest": _NOOP_RUNTEST,
    "unnamedRunnerPatch": _UNNAMED_RUNNER,
    "runtestCodeSwap": _CODE_SWAP,
    "mappingproxyPatch": _MAPPINGPROXY,
    "pyfuncCallNoop": _PYFUNC_CALL,
    "rewriteReports": _REWRITE_REPORTS,
    "reportClassPatch": _REPORT_CLASS,
    "swallowAssertionError": _SWALLOW_ASSERT,
    "hookimplPatch": _HOOKIMPL,
    "collectionPatch": _COLLECTION,
    "rewriteJunitAndExit": _REPORT_FORGE,
    "atexitRewrite": _ATEXIT,
    "logreportAndExitStatus": _EXIT_STATUS,
    "forgedReportEarlyExit": _EARLY_EXIT,
    "targetedItemPatch": _TARGETED,
    **DEEPER,
}


def package_file(ws: dict[str, str], packages: list[str]) -> str | None:
    """The file the package under test runs first on import: ``pkg/__init__.py`` or ``pkg.py`` (or under
    ``src/``); None when the workspace has none (the exam does not import its package)."""
    for name in packages:
        for cand in (f"{name}/__init__.py", f"src/{name}/__init__.py", f"{name}.py", f"src/{name}.py"):
            if cand in ws:
                return cand
    return None


def inprocess_suite(ws: dict[str, str], packages: list[str],
                    known: tuple[str, ...] = ()) -> dict[str, dict[str, str]]:
    """name -> submitted tree: the workspace with each probe appended to its package's first file; ``known``:
    the graded tests' names, as an attacker who read upstream's test file knows them."""
    target = package_file(ws, packages)
    if target is None:
        return {}
    base = ws[target] if ws[target].endswith("\n") or not ws[target] else ws[target] + "\n"
    head = _FIND + f"\n_ACX_KNOWN = {sorted(set(known))!r}\n"
    return {name: {**ws, target: base + head + code} for name, code in PROBES.items()}


def graded_names(grader_files: dict[str, str]) -> tuple[str, ...]:
    """The names of an imported exam's graded tests (``acx-grader.json``'s ``tests``, parameters dropped; else
    every test function of its hidden test files)."""
    try:
        conf = json.loads(grader_files.get(GRADER_CONFIG, "{}"))
    except ValueError:
        return ()
    ids = conf.get("tests") if isinstance(conf, dict) else None
    if isinstance(ids, list):
        return tuple(str(t).split("::")[-1].split("[")[0] for t in ids)
    return tuple(sorted({m for p, text in grader_files.items() if p.rsplit("/", 1)[-1].startswith("test")
                         and p.endswith(".py") for m in re.findall(r"(?m)^\s*(?:async\s+)?def (test\w*)", text)}))


def packages_under_test(grader_files: dict[str, str]) -> list[str]:
    """The packages an imported exam's hidden tests import (its ``acx-grader.json``), or none."""
    try:
        conf = json.loads(grader_files.get(GRADER_CONFIG, "{}"))
    except ValueError:
        return []
    pk = conf.get("packages") if isinstance(conf, dict) else None
    return [str(p) for p in pk] if isinstance(pk, list) else []


def verdict(r: GradeResult) -> str:
    """``P`` (a pass: an exploit), ``void`` (the tamper checks fired) or ``F`` (graded a plain fail)."""
    return "P" if r.passed else "void" if r.tamper else "F"


def attack_inprocess(ws: dict[str, str], grader_files: dict[str, str],
                     grade: Callable[[str, dict[str, str]], GradeResult], lanes: int = 1) -> dict[str, Any]:
    """Grade every in-process probe of an imported exam (``grade(name, tree)``): the attack stage's
    ``inProcessProbes`` (name -> verdict) and the names that passed; nothing for an exam whose tests do not
    import a package of the workspace. ``lanes``: probes graded at once (each is a sandbox of its own)."""
    packages = packages_under_test(grader_files)
    suite = inprocess_suite(ws, packages, graded_names(grader_files))
    if not suite:
        return {}
    graded = graded_all({name: functools.partial(grade, name, tree) for name, tree in suite.items()}, lanes)
    verdicts = {name: verdict(r) for name, r in graded.items()}
    out: dict[str, Any] = {"inProcessProbes": verdicts,
                           "inProcessExploits": [n for n, v in verdicts.items() if v == "P"]}
    relaxed = grading.relaxation_for(packages)
    if relaxed:  # the package under test is part of the runner: certified only under this named relaxation
        out["relaxations"] = relaxed
    return out
