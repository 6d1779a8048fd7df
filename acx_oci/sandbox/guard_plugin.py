"""The guard's half that runs as a pytest plugin in the grader's process (spliced in by
:func:`acx_oci.sandbox.guard.splice`): the runner checked after collection, after each test and at the end.

Kept apart from :mod:`acx_oci.sandbox.guard` (the observer and the baseline, which run before pytest starts):
this half is pytest's hooks, whose order is pytest's. The snapshot it compares is taken again where the runner
is still pytest's and the environment's alone (before the first conftest, at the session's start; see
``_g_rebase``): an environment plugin may change the runner at configure, a submission may not.
"""

from __future__ import annotations

PLUGIN = r"""
def _g_slots(obj):
    # an object's own attributes, from its __dict__ or its __slots__ (pluggy >= 1.1's _HookCaller has slots)
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        return sorted(d.items())
    names = set(n for c in type(obj).__mro__ for n in ((c.__dict__.get("__slots__") or ()) if not isinstance(
        c.__dict__.get("__slots__"), str) else (c.__dict__["__slots__"],)))
    return sorted((n, getattr(obj, n, None)) for n in names)


def _g_relay(pm, session):
    # What calls the hooks is pm's own: each caller's _hookexec is pm's bound method (pluggy's), and no
    # instance attribute of the session, its config or pm shadows a method of its class (gethookproxy: every
    # item's ihook). Checked against the classes, not a baseline: the submission ran before any baseline here.
    for name, caller in list(vars(pm.hook).items()):
        he = getattr(caller, "_hookexec", None)
        if he is not None and getattr(he, "__self__", None) is not pm:
            return "the %s hook's caller runs through %r" % (name, type(he).__name__)
    for obj in (session, getattr(session, "config", None), pm):
        for k, v in _g_slots(obj):
            if callable(v) and isinstance(getattr(type(obj), k, None), _g_types.FunctionType):
                return "%s.%s is the instance's own" % (type(obj).__name__, k)
    return None


def _g_hooks(pm, session=None):
    # each hook's implementations, and what calls them: the callers' own slots (a caller's _hookexec swapped
    # for a no-op), the plugin manager's, and the session's own callables (gethookproxy: every item's ihook)
    out = [("pm", tuple((k, id(v)) for k, v in _g_slots(pm) if callable(v)))]
    if session is not None:
        out.append(("session", tuple((k, id(v)) for k, v in _g_slots(session) if callable(v))))
    for name, caller in list(vars(pm.hook).items()):
        out.append((name, "caller", tuple((k, id(v)) for k, v in _g_slots(caller))))
        for impl in getattr(caller, "get_hookimpls", lambda: ())():
            fn = getattr(impl, "function", None)
            out.append((name, id(impl), id(fn), id(getattr(fn, "__code__", None))))
    return sorted(out, key=repr)


def _g_submitted_hooks(pm):
    for name, caller in list(vars(pm.hook).items()):
        for impl in getattr(caller, "get_hookimpls", lambda: ())():
            code = _g_code(getattr(impl, "function", None))
            if code is None:
                return "%s by %r, which has no code" % (name, type(getattr(impl, "function", None)).__name__)
            if os.path.realpath(code.co_filename).startswith("/workspace/"):
                return "%s from %s" % (name, code.co_filename)
    return None


def _g_item(item):
    obj = getattr(item, "obj", None)
    obj = getattr(obj, "__func__", obj)  # a unittest item's obj becomes a bound method at setup
    own = sorted(k for k in vars(item) if k in ("runtest", "setup", "teardown", "repr_failure", "obj"))
    return (type(item), tuple(own), id(obj), id(getattr(obj, "__code__", None)))


class _GuardPlugin:
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session):
        _g_rebase(False)
    def pytest_load_initial_conftests(self):  # neither first nor last: after legacypath, before the conftests
        _g_rebase(True)
    def _case(self, report):
        try:
            from _pytest.junitxml import mangle_test_address
            names = mangle_test_address(report.nodeid)
            return "%s::%s" % (".".join(names[:-1]), names[-1])
        except Exception:
            return report.nodeid
    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        _g_check("after collection")
        pm = session.config.pluginmanager
        _G_STATE["hooks"] = _g_hooks(pm, session)
        _G_STATE["forked"] = any(pm.has_plugin(n) for n in ("forked", "xdist.boxed"))  # calls in a child
        relay = _g_relay(pm, session)
        if relay:
            _g_tamper("the runner's hook relay was changed: " + relay)
        _G_STATE["items"] = {}
        for item in session.items:
            try:
                _G_STATE["items"][id(item)] = state = _g_item(item)
            except Exception:
                continue
            if state[1]:
                _g_tamper("the test item %s has its own %s" % (item.nodeid, ", ".join(state[1])))
            code = _g_code(getattr(item, "obj", None))
            if code is not None and os.path.realpath(code.co_filename).startswith("/workspace/"):
                _g_tamper("the test item %s runs the submission's code (%s)" % (item.nodeid, code.co_filename))
        if not type(session).__module__.startswith("_pytest."):
            _g_tamper("the session's class was swapped (%s)" % type(session).__name__)
        found = _g_submitted_hooks(pm)
        if found:
            _g_tamper("the submission implements a runner hook: " + found)
        for item in session.items:
            mod = getattr(item, "module", None)
            loader = type(getattr(getattr(mod, "__spec__", None), "loader", None))
            if mod is not None and item.config.getoption("assertmode", "rewrite") == "rewrite" and \
                    not loader.__module__.startswith("_pytest.") and mod.__name__.split(".")[-1].startswith("test") \
                    and "PYTEST_DONT_REWRITE" not in str(getattr(mod, "__doc__", "") or ""):
                _g_tamper("test module %s was not loaded by pytest's loader (%s)" % (mod.__name__, loader.__name__))
                break
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            outcome = "error" if report.when != "call" and report.outcome == "failed" else report.outcome
            _g_send("case", id=self._case(report), o=outcome, when=report.when)
            if report.outcome == "failed":
                _G_STATE["failed"] += 1
            elif report.when == "call" and report.outcome == "passed" and report.nodeid not in _G_STATE["called"] \
                    and not _G_STATE["forked"]:
                _g_tamper("%s passed, but its call never reached the runner's hook" % report.nodeid)
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        yield  # the check after the last test (or after collection) is the check before this one
        _g_check("after " + item.nodeid)
        hooks = _g_hooks(item.config.pluginmanager, item.session)
        if _G_STATE["hooks"] is not None and hooks != _G_STATE["hooks"]:
            _g_tamper("the runner's hooks changed while tests ran (%s)" % item.nodeid)
            _G_STATE["hooks"] = hooks
            relay = _g_relay(item.config.pluginmanager, item.session)
            if relay:
                _g_tamper("the runner's hook relay was changed: " + relay)
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):
        # the item itself, just before and after its call: an instance patch aimed at chosen tests by name
        _G_STATE["called"].add(item.nodeid)  # through the hook as pytest calls it (see pytest_runtest_logreport)
        for when in ("before", "after"):
            want = _G_STATE["items"].get(id(item))
            try:
                got = _g_item(item)
            except Exception:
                got = None
            if want is not None and got != want:
                _g_tamper("the test item %s was changed (%s its call)" % (item.nodeid, when))
            if when == "before":
                yield
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        _g_check("at the session's end")
        _g_send("report", sha=_g_digest(_G_REPORT))
"""

END = r"""
def _g_end(code):
    _G_STATE["armed"] = False
    _g_check("after pytest")
    if code == 0 and _G_STATE["failed"]:
        _g_tamper("pytest exited 0 after %d failed reports" % _G_STATE["failed"])
    _g_send("end", code=code, failed=_G_STATE["failed"])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    _g_exit(code)
"""
