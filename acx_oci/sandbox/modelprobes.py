"""Containment probes for a ROM that calls a model: what reaches the verifier's proxy, and what key is visible.

They run in the games' exact spec (the proxy socket bound at
:data:`~acx_oci.model.modelapi.SOCKET_INSIDE`) under the same untrusted relay a game runs under
(:func:`~acx_oci.sandbox.relay.relay_argv`), so every request goes the way an agent's would: a TCP
connection to ``127.0.0.1:MODEL_PORT``, bytes copied to the socket, the proxy on the far side. The script
inside sends one allowed request (a control: the path works at all) and one request per forbidden kind,
reads each HTTP status, and dumps what an agent could read of keys: its environment and every readable
``/proc/*/environ`` and ``cmdline``. That report goes to the host only (a file in a bind of its own, never
into the proof); the host holds the real key, searches the report for it, and checks the proxy's record and
the probe upstream's log (:mod:`acx_oci.egress.probe`): each forbidden request refused, none forwarded.

The proof carries statuses, refusal codes, counts and ``absent``/``present`` — never a value read inside.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from acx_oci import reasons, safetree
from acx_oci.errors import AcxError
from acx_oci.jsonio import loads
from acx_oci.model import modelapi as ma
from acx_oci.sandbox.bwrap import SandboxSpec, give_to_sandbox, run, staging_dir
from acx_oci.sandbox.relay import relay_argv

MODEL_PROBE_DIR = "/.acx-model-probe"
MODEL_REPORT_DIR = "/.acx-model-probe-out"
MAX_REPORT = 4 * 1024 * 1024
CONTROL = "allowed"
PREFIX = "model egress: "
PROBE_HEADER = "x-acx-probe"
_STATUS = re.compile(rb"^HTTP/1\.[01] (\d{3})")
_CODE = re.compile(rb'"code"\s*:\s*"([A-Za-z0-9_]{1,64})"')

# Runs as the relay's child with /usr/bin/python3 -I -S. Sends each configured request on its own connection
# to the relay, then dumps what an agent could read of keys; writes the report to the host's output bind.
MODEL_PROBE_SCRIPT = r'''
import json, os, socket, sys
cfg = json.load(open(sys.argv[1]))
limit = cfg["limit"]
report = {"responses": {}, "env": dict(os.environ), "proc": {}}
def exchange(raw):
    s = socket.create_connection(("127.0.0.1", cfg["port"]), timeout=cfg["seconds"])
    try:
        s.sendall(raw.encode("latin-1"))
        got = b""
        while len(got) <= limit:
            d = s.recv(65536)
            if not d:
                break
            got += d
    finally:
        s.close()
    return got
for name, raw in cfg["requests"]:
    try:
        data = exchange(raw)
        report["responses"][name] = {"raw": data[:limit].decode("latin-1"), "truncated": len(data) > limit}
    except Exception as exc:
        report["responses"][name] = {"error": type(exc).__name__}
for pid in ["self"] + sorted(n for n in os.listdir("/proc") if n.isdigit()):
    entry = {}
    for what in ("environ", "cmdline"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as fh:
                data = fh.read(limit + 1)
            entry[what] = data[:limit].decode("latin-1").replace("\0", "\n")
            entry[what + "Truncated"] = len(data) > limit
        except Exception as exc:
            entry[what + "Error"] = type(exc).__name__
    report["proc"][pid] = entry
with open(cfg["report"], "w") as fh:
    json.dump(report, fh)
'''


@dataclass(frozen=True)
class Case:
    """One forbidden request: what it is called in the proof and the answer the proxy must give."""

    name: str
    label: str
    status: int
    code: str


CASES = (
    Case("other_path", "POST /v1/files (another path) through the proxy", 404, reasons.PATH_REFUSED),
    Case("other_model", "another model id through the proxy", 403, reasons.MODEL_REFUSED),
    Case("connect", "CONNECT through the proxy", 405, reasons.CONNECT_REFUSED),
    Case("absolute_uri", "an absolute-URI request line through the proxy", 400, reasons.ABSOLUTE_URI_REFUSED),
    Case("foreign_host", "a foreign Host header through the proxy", 421, reasons.HOST_REFUSED),
)


def _body(api: ma.Api, model_id: str) -> str:
    text = "acx containment probe"
    if api.name == "openai-responses":
        doc: dict[str, Any] = {"model": model_id, "input": text, "max_output_tokens": 1}
    else:
        doc = {"model": model_id, "max_tokens": 1, "messages": [{"role": "user", "content": text}]}
    return json.dumps(doc)


def _http(line: str, host: str, name: str, api: ma.Api, body: str | None) -> str:
    head = [line, f"Host: {host}", f"{PROBE_HEADER}: {name}"]
    if body is not None:
        head += ["Content-Type: application/json", f"{api.key_header}: {api.key_prefix}{ma.PLACEHOLDER_KEY}",
                 f"Content-Length: {len(body.encode())}"]
        if api.name == "anthropic-messages":
            head.append("anthropic-version: 2023-06-01")
    head.append("Connection: close")
    return "\r\n".join(head) + "\r\n\r\n" + (body or "")


def probe_requests(declared: ma.DeclaredModel, upstream: str) -> list[tuple[str, str]]:
    """``(name, raw HTTP request)`` for the control and every :data:`CASES` entry. ``upstream`` is the
    provider's ``host:port`` — what a CONNECT, an absolute URI or a foreign Host would aim at."""
    api = ma.APIS[declared.api]
    relay = f"127.0.0.1:{ma.MODEL_PORT}"
    ok = _body(api, declared.id)
    return [
        (CONTROL, _http(f"POST {api.path} HTTP/1.1", relay, CONTROL, api, ok)),
        ("other_path", _http("POST /v1/files HTTP/1.1", relay, "other_path", api, ok)),
        ("other_model", _http(f"POST {api.path} HTTP/1.1", relay, "other_model", api,
                              _body(api, declared.id + "-acx-probe-other"))),
        ("connect", _http(f"CONNECT {upstream} HTTP/1.1", upstream, "connect", api, None)),
        ("absolute_uri", _http(f"POST http://{upstream}{api.path} HTTP/1.1", upstream, "absolute_uri", api, ok)),
        ("foreign_host", _http(f"POST {api.path} HTTP/1.1", upstream, "foreign_host", api, ok)),
    ]


def run_model_probes(spec: SandboxSpec, declared: ma.DeclaredModel, upstream: str,
                     seconds: float = 30.0) -> tuple[dict[str, Any] | None, str | None]:
    """Run the probe script under the relay in ``spec`` (plus a read-only bind for the script and a
    writable one for its report); ``(report, None)`` or ``(None, why)``. The report is for the host only."""
    stage, outdir = staging_dir("acx-model-probe-"), staging_dir("acx-model-report-")
    try:
        (stage / "probe.py").write_text(MODEL_PROBE_SCRIPT, "utf-8")
        cfg = {"port": ma.MODEL_PORT, "seconds": 10, "limit": 256 * 1024, "report": f"{MODEL_REPORT_DIR}/r.json",
               "requests": probe_requests(declared, upstream)}
        (stage / "config.json").write_text(json.dumps(cfg), "utf-8")
        for f in stage.iterdir():
            f.chmod(0o444)
        probe_spec = replace(spec, ro_binds=(*spec.ro_binds, (stage, MODEL_PROBE_DIR)),
                             rw_binds=(*spec.rw_binds, (outdir, MODEL_REPORT_DIR)))
        give_to_sandbox(outdir, probe_spec)
        argv = relay_argv(["/usr/bin/python3", "-I", "-S", f"{MODEL_PROBE_DIR}/probe.py",
                           f"{MODEL_PROBE_DIR}/config.json"])
        try:
            res = run(probe_spec, argv, time_seconds=min(spec.time_seconds, seconds))
        except AcxError as exc:
            return None, f"model probe run could not start: {type(exc).__name__}"
        if res.timed_out or res.returncode != 0:
            return None, "model probe run failed (" + ("timed out" if res.timed_out else f"exit {res.returncode}") \
                + ")"
        try:
            doc = loads(safetree.read_inside(outdir, "r.json", MAX_REPORT, "model probe report"),
                        "model probe report")
        except (AcxError, OSError, ValueError):
            return None, "model probe report missing or not JSON"
        return (doc, None) if isinstance(doc, dict) else (None, "model probe report is not an object")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(outdir, ignore_errors=True)


def _probe(name: str, expected: str, observed: Any, ok: bool) -> dict[str, Any]:
    return {"name": PREFIX + name, "expected": expected, "observed": observed, "ok": bool(ok)}


def _answer(resp: Any) -> tuple[int | None, str | None, str]:
    """Status and refusal code of one raw response, and how to show it."""
    if not isinstance(resp, dict) or "raw" not in resp:
        err = resp.get("error") if isinstance(resp, dict) else None
        return None, None, f"no answer ({err or 'not sent'})"
    raw = str(resp["raw"]).encode("latin-1", "replace")
    m = _STATUS.match(raw)
    status = int(m.group(1)) if m else None
    c = _CODE.search(raw.split(b"\r\n\r\n", 1)[-1])
    code = c.group(1).decode() if c else None
    return status, code, f"{status if status is not None else 'no status'} {code or '(no code)'}"


def _exchanges(transcript: dict[str, Any], name: str) -> list[dict[str, Any]]:
    out = []
    for ex in transcript.get("exchanges") or []:
        headers = (ex.get("request") or {}).get("headers") or []
        if any(str(n).lower() == PROBE_HEADER and v == name for n, v in headers):
            out.append(ex)
    return out


def _proxy_verdicts(report: dict[str, Any], record: dict[str, Any], transcript: dict[str, Any],
                    upstream_saw: Sequence[dict[str, Any]], declared: ma.DeclaredModel
                    ) -> list[dict[str, Any]]:
    responses = report.get("responses") or {}
    out = []
    status, code, shown = _answer(responses.get(CONTROL))
    exs = _exchanges(transcript, CONTROL)
    fwd = len(exs) == 1 and "forwarded" in exs[0] and not exs[0].get("refused")
    out.append(_probe("control: the model API through the relay", "409 probe_upstream (forwarded to the probe's "
                      "stand-in upstream, never the provider)", shown + ("" if fwd else ", not forwarded"),
                      status == 409 and code == reasons.PROBE_UPSTREAM and fwd))
    for case in CASES:
        status, code, shown = _answer(responses.get(case.name))
        exs = _exchanges(transcript, case.name)
        recorded = [str(e["refused"]) if e.get("refused") else "forwarded" if "forwarded" in e else "answered"
                    for e in exs]
        ok = status == case.status and code == case.code and recorded == [case.code] \
            and "forwarded" not in exs[0]
        out.append(_probe(case.label, f"{case.status} {case.code}, recorded refused, not forwarded",
                          f"{shown}; proxy recorded {recorded or 'nothing'}", ok))
    n = len(CASES)
    counts = {"requests": record.get("requests"), "refused": record.get("refused")}
    out.append(_probe("the proxy's record", f"requests 1 (the control), refused {n}", counts,
                      counts == {"requests": 1, "refused": n}))
    api = ma.APIS[declared.api]
    want = [{"method": "POST", "path": api.path, "model": declared.id, "keyInjected": True}]
    seen = [f"{s.get('method')} {s.get('path')} model={s.get('model')} "
            + ("key injected" if s.get("keyInjected") else "key not injected") for s in upstream_saw]
    out.append(_probe("what reached the upstream", f"the control only (POST {api.path}, model {declared.id}, "
                      "the verifier's key injected)", seen or "nothing",
                      list(upstream_saw) == want))
    return out


def _forms(key: str) -> tuple[str, ...]:
    return tuple({key, json.dumps(key)[1:-1]})


def _key_verdicts(report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    env = report.get("env") if isinstance(report.get("env"), dict) else {}
    assert isinstance(env, dict)
    sdk = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    off = [n for n in sdk if env.get(n) != ma.PLACEHOLDER_KEY]
    out = [_probe("the API keys the agent sees", f"{'='.join(sdk)}={ma.PLACEHOLDER_KEY}",
                  "placeholder" if not off else f"not the placeholder: {', '.join(off)}", not off)]
    procs = report.get("proc") if isinstance(report.get("proc"), dict) else {}
    assert isinstance(procs, dict)
    forms = _forms(key)

    def has(text: Any) -> bool:
        return isinstance(text, str) and any(f in text for f in forms)

    def blob(pid: str, what: str) -> tuple[str | None, str]:
        e = procs.get(pid) if isinstance(procs.get(pid), dict) else None
        if e is None:
            return None, "not listed"
        if e.get(f"{what}Truncated"):
            return None, "too large to search"
        if isinstance(e.get(what), str):
            return str(e[what]), "read"
        return None, f"unreadable ({e.get(what + 'Error')})"

    env_text = "\n".join(f"{k}={v}" for k, v in env.items())
    out.append(_probe("the real key in the agent's environment", "absent",
                      "present" if has(env_text) else "absent", bool(env) and not has(env_text)))
    text, how = blob("self", "environ")
    out.append(_probe("the real key in /proc/self/environ", "read, absent",
                      how if text is None else ("present" if has(text) else "absent"),
                      text is not None and not has(text)))
    text, how = blob("1", "environ")
    unreadable = how.startswith("unreadable")
    out.append(_probe("the real key in /proc/1/environ", "absent (or unreadable by the agent)",
                      how if text is None else ("present" if has(text) else "absent"),
                      (text is not None and not has(text)) or unreadable))
    found, unsearched = [], []
    for pid in sorted(procs):
        for what in ("environ", "cmdline"):
            text, how = blob(pid, what)
            if text is not None and has(text):
                found.append(f"/proc/{pid}/{what}")
            elif how == "too large to search":
                unsearched.append(f"/proc/{pid}/{what}")
    out.append(_probe("the real key in any /proc/*/environ or cmdline", "absent",
                      f"present in {', '.join(found)}" if found else
                      (f"not searched: {', '.join(unsearched)}" if unsearched else "absent"),
                      bool(procs) and not found and not unsearched))
    responses = report.get("responses") or {}
    bad = [n for n, r in sorted(responses.items()) if isinstance(r, dict) and (has(r.get("raw")) or r.get("truncated"))]
    out.append(_probe("the real key in a response through the proxy", "absent",
                      f"present or unsearched in {', '.join(bad)}" if bad else "absent", bool(responses) and not bad))
    return out


def model_verdicts(report: dict[str, Any], record: dict[str, Any], transcript: dict[str, Any],
                   upstream_saw: Sequence[dict[str, Any]], declared: ma.DeclaredModel,
                   key: str) -> list[dict[str, Any]]:
    """The model egress probes, each ``{name, expected, observed, ok}``, from the sandbox's report (host
    only), the probe proxy's record and transcript, and what reached its stand-in upstream. ``key`` is the
    key the probe proxy injects (the verifier's real one): searched for, never shown."""
    probes = [*_proxy_verdicts(report, record, transcript, upstream_saw, declared),
              *_key_verdicts(report, key)]
    with contextlib.suppress(TypeError, ValueError):
        if any(f in json.dumps(probes) for f in _forms(key)):  # never: observations are ours, not read inside
            return [_probe("the proof itself", "holds no secret", "withheld: it echoed the real key", False)]
    return probes
