"""The official OCI distribution-spec conformance suite against Distribution, ggcr, and the gateway in front of each.

Not run in CI: the suite's sources come from a fetched snapshot of github.com/opencontainers/distribution-spec
(the project keeps no copy), built with Debian's Go (``apt-get install golang-go``) and, for its Go dependencies,
Debian's ``golang-*-dev`` sources in ``/usr/share/gocode`` where Debian has them (resty, uuid, go-digest, logr,
go-cmp, pprof, mapstructure, govalidator, x/net, x/sys, x/text, x/tools, yaml.v3) and fetched snapshots of the
rest (ginkgo v2, gomega, reggie, slim-sprig; Debian's ginkgo is v1). Everything is wired with ``replace``
directives and built offline (``GOPROXY=off``). Release v1.1.1 is built: the suite's main branch needs Go 1.24,
Debian bookworm has 1.19.

    source /work/ENV.sh   # ACX_GGCR_BIN
    python benchmarks/conformance.py --mirrors /work/.mirror

prints one line per target (passed / failed / skipped and the failing specs) and exits 1 when a spec fails through
the gateway that passes on the same registry alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.gateway_proc import GatewayProcess, minimal_policy_files
from tests.support.registry import Registry, ggcr_binary, start_ggcr, start_registry

SUITE_TAG = "v1.1.1"
# fetched module sources: (mirror directory, revision, module path)
FETCHED = [
    ("onsi+ginkgo", "v2.11.0", "github.com/onsi/ginkgo/v2"),
    ("onsi+gomega", "v1.27.8", "github.com/onsi/gomega"),
    ("bloodorangeio+reggie", "v0.6.1", "github.com/bloodorangeio/reggie"),
    ("go-task+slim-sprig", "52ccab3ef572", "github.com/go-task/slim-sprig"),
]
# Debian golang-*-dev sources (module path; the directory drops a /vN suffix)
DEBIAN = ["github.com/asaskevich/govalidator", "github.com/go-resty/resty/v2", "github.com/mitchellh/mapstructure",
          "github.com/google/uuid", "github.com/opencontainers/go-digest", "github.com/go-logr/logr",
          "github.com/google/go-cmp", "github.com/google/pprof", "golang.org/x/net", "golang.org/x/sys",
          "golang.org/x/text", "golang.org/x/tools", "gopkg.in/yaml.v3"]
# required in go.mod files but never imported by the suite: an empty module stands in
STUBS = ["github.com/golang/protobuf", "google.golang.org/protobuf"]
GOCODE = Path("/usr/share/gocode/src")


def _archive(git_dir: Path, rev: str, path: str | None, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    cmd = ["git", "--git-dir", str(git_dir), "archive", rev] + ([path] if path else [])
    tar = subprocess.run(cmd, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)


def _module_dir(src: Path, dest: Path, module: str) -> None:
    subprocess.run(["cp", "-r", str(src), str(dest)], check=True)
    # Debian's go.mod files pin versions nobody can fetch offline: the module line is all the build needs
    (dest / "go.mod").write_text(f"module {module}\n\ngo 1.17\n")
    (dest / "go.sum").unlink(missing_ok=True)


def build_suite(mirrors: Path, work: Path) -> Path:
    """Check the suite out of its fetched snapshot, wire its dependencies, build the test binary (offline)."""
    _archive(mirrors / "opencontainers+distribution-spec" / "repo", SUITE_TAG, "conformance", work / "src")
    suite = work / "src" / "conformance"
    replaces = []
    for mirror, rev, module in FETCHED:
        dest = work / "deps" / mirror
        _archive(mirrors / mirror / "repo", rev, None, dest)
        replaces.append(f"replace {module} => {dest}")
    for module in DEBIAN:
        src = GOCODE / (module.rsplit("/", 1)[0] if module.rsplit("/", 1)[-1][1:].isdigit() else module)
        if not src.is_dir():
            raise SystemExit(f"{src} missing: apt-get install the golang-*-dev package for {module}")
        dest = work / "deb" / module
        dest.parent.mkdir(parents=True, exist_ok=True)
        _module_dir(src, dest, module)
        replaces.append(f"replace {module} => {dest}")
    for module in STUBS:
        dest = work / "stub" / module
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "go.mod").write_text(f"module {module}\n")
        replaces.append(f"replace {module} => {dest}")
    with (suite / "go.mod").open("a") as f:
        f.write("\n" + "\n".join(replaces) + "\n")
    (suite / "go.sum").unlink(missing_ok=True)
    binary = work / "conformance.test"
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOSUMDB": "off", "GOPATH": str(work / "gopath"),
           "GOCACHE": str(work / "gocache")}
    subprocess.run(["go", "test", "-c", "-o", str(binary), "."], cwd=suite, env=env, check=True)
    return binary


def run_suite(binary: Path, host: str, report: Path, namespace: str = "conformance/a") -> dict[str, str]:
    """Run every workflow against ``host``; the outcome of each spec by its full name (from the JUnit report)."""
    report.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OCI_ROOT_URL": f"http://{host}", "OCI_NAMESPACE": namespace,
           "OCI_CROSSMOUNT_NAMESPACE": namespace + "-mount", "OCI_TEST_PULL": "1", "OCI_TEST_PUSH": "1",
           "OCI_TEST_CONTENT_DISCOVERY": "1", "OCI_TEST_CONTENT_MANAGEMENT": "1", "OCI_HIDE_SKIPPED_WORKFLOWS": "0",
           "OCI_DEBUG": "0", "OCI_REPORT_DIR": str(report)}
    subprocess.run([str(binary)], cwd=report, env=env, capture_output=True, timeout=600)
    outcomes: dict[str, str] = {}
    for case in ET.parse(report / "junit.xml").getroot().iter("testcase"):
        name = case.get("name", "")
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes[name] = "failed"
        elif case.find("skipped") is not None:
            outcomes[name] = "skipped"
        else:
            outcomes[name] = "passed"
    return outcomes


@contextmanager
def _registry(kind: str) -> Iterator[Registry]:
    reg = start_ggcr(ggcr_binary()) if kind == "ggcr" else start_registry()
    try:
        yield reg
    finally:
        reg.stop()


def _count(outcomes: dict[str, str]) -> str:
    n = {k: sum(1 for v in outcomes.values() if v == k) for k in ("passed", "failed", "skipped")}
    return f"{n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                        help="where the fetched snapshots are (owner+name/repo git directories)")
    parser.add_argument("--registries", default="distribution,ggcr")
    parser.add_argument("--namespace", default="conformance/a",
                        help="repository the suite writes (acx/... is one the test policy covers)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="acx-conformance-"))
    binary = build_suite(args.mirrors, work)
    regressions = 0
    for kind in args.registries.split(","):
        with _registry(kind) as reg:
            alone = run_suite(binary, reg.host, work / f"{kind}-alone", args.namespace)
        with _registry(kind) as reg, GatewayProcess(reg.host, minimal_policy_files(work)) as gw:
            through = run_suite(binary, gw.address, work / f"{kind}-gateway", args.namespace)
        print(f"{kind} alone:           {_count(alone)}")
        print(f"{kind} through gateway: {_count(through)}")
        for name, outcome in sorted(through.items()):
            if outcome == "failed":
                worse = alone.get(name) == "passed"
                regressions += worse
                print(f"  {'REGRESSION' if worse else 'also alone'}: {name}")
        for name, outcome in sorted(alone.items()):
            if outcome == "failed":
                print(f"  fails alone: {name}")
    print(f"binary and reports: {work}")
    return 1 if regressions else 0


if __name__ == "__main__":
    raise SystemExit(main())
