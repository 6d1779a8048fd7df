"""Python packages in an environment image: pinned once with hashes, wheels only, installed inside the sandbox.

An exam's environment spec (``env.json``: a Python ``X.Y`` and requirement lines) becomes an image in four steps:

1. **Resolve** on the host with a resolver that cannot build (:mod:`acx_oci.envimage.lock`: ``uv pip compile
   --no-build`` for the image's Python and platform, no configuration read), then fetch each locked wheel by
   its URL and check its sha256. Every requirement passed the one door first
   (:mod:`acx_oci.envimage.requirement`): re-serialised name, extras, specifier and marker, nothing else.
   Wheels only: a wheel is unpacked, never run, so nothing a package ships executes on the host. A
   requirement with no wheel (only a source distribution, whose build scripts would run) is named and
   refused. The package under test is dropped from the lock (a test dependency such as hypothesis's pytest
   plugin may pull it in). The lock is ``name==version --hash=sha256:…`` per file.
2. **Debian root** for the Python's suite (:data:`PYTHONS`) with mmdebstrap, as ``env build`` makes it.
3. **Install inside the sandbox**: the root unpacked into a scratch dir is ``/`` of a bubblewrap sandbox with
   no network; there ``python3 -m venv --without-pip`` makes :data:`VENV` and pip, run from its own (hashed)
   wheel, installs the lock with ``--require-hashes --no-index --only-binary :all: --no-deps --no-compile``, then
   byte-compiles the venv reproducibly (:data:`COMPILE`).
   The venv's own Python then lists what is installed; a package under test found there fails the build.
4. **Image**, three reproducible layers (:mod:`acx_oci.envimage.layers`): the Debian root's (packed once per
   root), the venv's (owned by root, mtimes clamped, with ``acx-lock.txt``; packed and installed once per lock
   on that root) and the spec's own ``acx-env.json`` (what certification records); annotations carry the spec
   digest, the Python and the package list.

Images are cached by :func:`spec_digest` as the tag ``spec-<hex>`` of an image store (:func:`ensure_image`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acx_oci import safetree
from acx_oci.crypto import canonical, sha256_digest
from acx_oci.envimage import layers, preflight
from acx_oci.envimage.build import BuiltImage, Layer, image_from_layers, resolve_epoch
from acx_oci.envimage.cache import default_cache_dir
from acx_oci.envimage.lock import Pinned, file_roots, installer, later_dates, resolve
from acx_oci.envimage.requirement import admit, name_of, normalize
from acx_oci.envimage.root import DebianRoot, cached_root
from acx_oci.envimage.unpack import remove_tree
from acx_oci.errors import AcxError, MachineUnfit, NoWheel, RegistryError, UsageError
from acx_oci.oci import StoreOptions
from acx_oci.sandbox import SandboxSpec, give_to_sandbox, run, staging_dir

VENV = "/opt/acx-venv"
VENV_PYTHON = f"{VENV}/bin/python"
ENV_REPORT = "acx-env.json"
LOCK_FILE = "acx-lock.txt"
#: The Pythons an environment image can have: a Debian suite's own python3 (reproducible, pulled by digest).
PYTHONS = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
#: When each Python we offer was released: a fix's date picks among those it could have run on, and a source
#: build's tools are no older (setuptools of 2019 fails on 3.9: ``HTMLParser.unescape`` is gone).
RELEASED = {"3.9": "2020-10-05", "3.11": "2022-10-24", "3.13": "2024-10-07"}
DEFAULT_PYTHON = "3.11"
ANN_SPEC = "dev.acx.image.env-spec"
ANN_PYTHON = "dev.acx.image.python"
ANN_PY_PACKAGES = "dev.acx.image.python-packages"
INSTALL_SECONDS = 1200.0
#: Python 3.12's release: until then ``venv`` and ``virtualenv`` put setuptools in every environment.
SETUPTOOLS_SEEDED_UNTIL = "2023-10-02"


def build_inputs(spec: dict[str, Any]) -> dict[str, Any]:
    """What decides the image: the Python (so its Debian suite), the requirements, the packages left out."""
    python = str(spec.get("python") or DEFAULT_PYTHON)
    if python not in PYTHONS:
        raise UsageError(f"environment spec: python {python!r}: expected one of {', '.join(PYTHONS)}")
    reqs = spec.get("requirements")
    if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
        raise UsageError("environment spec: requirements must be a list of strings")
    # Each line goes into a requirements file the resolver reads: through the one door, re-serialised (a spec
    # holding anything else -- a URL, a path, an option, a Unicode line separator -- is refused whole).
    admitted = [admit(r, "environment spec") for r in reqs]
    excluded = sorted(normalize(str(n)) for n in spec.get("package") or ())
    inputs: dict[str, Any] = {"python": python, "suite": PYTHONS[python], "requirements": admitted,
                              "excludePackages": excluded}
    pins = spec.get("constraints") or []  # what the repository locks: versions only, through the same door
    if not isinstance(pins, list) or not all(isinstance(c, str) for c in pins):
        raise UsageError("environment spec: constraints must be a list of strings")
    if pins:
        inputs["constraints"] = [admit(c, "environment spec constraint") for c in pins]
    day = spec.get("resolvedAsOf")
    if day is not None:  # the index as it was at the end of that day (uv's --exclude-newer)
        if not isinstance(day, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
            raise UsageError(f"environment spec: resolvedAsOf {str(day)[:40]!r}: expected YYYY-MM-DD")
        inputs["excludeNewer"] = f"{day}T23:59:59Z"
        if day < SETUPTOOLS_SEEDED_UNTIL and "setuptools" not in {name_of(r) for r in admitted} | set(excluded):
            # a virtualenv of that time had setuptools, and packages of that time import pkg_resources without
            # declaring it (pytest 3.0 does at start-up): the image's venv is made without it
            inputs["requirements"] = [*admitted, "setuptools"]
    return inputs


def spec_digest(spec: dict[str, Any]) -> str:
    """The digest environment images are cached by: of :func:`build_inputs` only (notes do not count)."""
    return sha256_digest(canonical(build_inputs(spec)))


#: What the venv's own Python says: its version, whether pytest imports (and what it missed), whether pytest
#: runs a one-line test (pytest 2.9 imports on CPython 3.9 and then fails every run with an INTERNALERROR),
#: and the installed distributions.
REPORT = ("import importlib.metadata as m, json, os, re, subprocess, sys, tempfile\n"
          "err = missing = runs = runs_missing = None\n"
          "try:\n    import pytest\n"
          "except BaseException as e:\n"
          "    err, missing = ('%s: %s' % (type(e).__name__, e))[:300], getattr(e, 'name', None)\n"
          "if err is None:\n"
          "    d = tempfile.mkdtemp()\n"
          "    with open(os.path.join(d, 'test_acx_selftest.py'), 'w') as f:\n"
          "        f.write('def test_ok():\\n    assert 1 + 1 == 2\\n')\n"
          "    p = subprocess.run([sys.executable, '-I', '-B', '-m', 'pytest', '-q', d], cwd=d, timeout=300,\n"
          "                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n"
          "    said = [ln for ln in p.stdout.decode('utf-8', 'replace').splitlines() if ln.strip()]\n"
          "    runs = None if p.returncode == 0 else ('exit %d: %s' % (p.returncode, ' | '.join(said[-2:])))[:300]\n"
          "    hit = runs and re.findall(r\"No module named '([A-Za-z0-9_.]{1,200})'\", '\\n'.join(said))\n"
          "    runs_missing = hit[-1] if hit else None\n"
          "print(json.dumps({'python': sys.version.split()[0], 'pytest': err, 'missing': missing, 'runs': runs, "
          "'runsMissing': runs_missing, "
          "'packages': sorted({'%s==%s' % (d.metadata['Name'], d.version) for d in m.distributions()})}))\n")


#: The venv's modules byte-compiled once, at build, as the root's are (:data:`build.PYC_RECOMPILE`): in one
#: process, in sorted order, PYTHONHASHSEED=0, the header holding the source's hash (the layer clamps mtimes).
#: pip's ``--no-compile`` left none, and every grade compiled pytest and its plugins again: 0.25 s of each
#: pytest start on the attrs image. A file this Python cannot compile is left without (Python does the same).
COMPILE = ("import compileall, py_compile\n"
           f"compileall.compile_dir({VENV + '/lib'!r}, quiet=2, workers=1,"
           " invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)\n")


def install(root: Path, wheels: Path, venv: Path, pip_wheel: str) -> dict[str, Any]:
    """Make the venv and install the lock inside a sandbox whose ``/`` is ``root`` (no network, no host
    Python); returns what the venv's own Python says is installed."""
    spec = SandboxSpec(rootfs=root, ro_binds=((wheels, "/tmp/acx-wheels"),), rw_binds=((venv, VENV),),
                       time_seconds=INSTALL_SECONDS, memory_mib=4096, pids=256, disk_mib=512, file_size_mib=2048,
                       open_files=1024)
    give_to_sandbox(venv, spec)
    script = (f"set -e; /usr/bin/python3 -m venv --without-pip {VENV}; "
              f"{VENV_PYTHON} /tmp/acx-wheels/tools/{pip_wheel}/pip install --no-index --find-links "
              "/tmp/acx-wheels/dist --require-hashes --only-binary :all: --no-deps --no-compile --no-cache-dir "
              "--disable-pip-version-check --no-input -q -r /tmp/acx-wheels/" + LOCK_FILE + "; "
              f"PYTHONHASHSEED=0 {VENV_PYTHON} -S -c \"$ACX_COMPILE\"; "  # -S: no package's .pth runs
              f"exec {VENV_PYTHON} -I -B -c \"$ACX_REPORT\"")  # -I ignores PYTHONDONTWRITEBYTECODE
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", "ACX_REPORT": REPORT, "ACX_COMPILE": COMPILE,
           "PIP_CONFIG_FILE": "/dev/null", "PYTHONDONTWRITEBYTECODE": "1", "SOURCE_DATE_EPOCH": "0"}
    res = run(SandboxSpec(**{**spec.__dict__, "env": env}), ["/bin/sh", "-c", script])
    if res.returncode != 0 or res.timed_out:
        tail = res.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise UsageError(f"env build: installing inside the sandbox failed (exit {res.returncode}"
                         f"{', timed out' if res.timed_out else ''}): {' | '.join(tail)}")
    try:
        report = json.loads(res.stdout.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise UsageError("env build: the venv's Python did not report what is installed") from None
    return {"python": str(report["python"]), "packages": [str(p) for p in report["packages"]],
            "pytest": report.get("pytest"), "missing": report.get("missing"), "runs": report.get("runs"),
            "runsMissing": report.get("runsMissing")}


def runner_needs(report: dict[str, Any], under_test: set[str]) -> dict[str, Any]:
    """The install report, with a one-line test that failed only because pytest or a plugin it loads imports the
    package under test read as one that runs (``runnerNeeds``: that module). The package is left out of the
    image on purpose, and the grader's boot gives the submission's from the start (attrs: hypothesis's plugin
    imports ``attr``; the build was refused, and every attrs exam with it)."""
    missing = normalize(str(report.get("runsMissing") or "").split(".")[0])
    if report.get("runs") is not None and missing and missing in under_test:
        return {**report, "runs": None, "runnerNeeds": missing}
    return report


def pytest_check(report: dict[str, Any], pins: Sequence[Pinned], under_test: Sequence[str]) -> str | None:
    """The package under test the image's pytest imports (the submission provides it at grading), or None;
    :class:`UsageError` when pytest cannot be imported for any other reason (a harness that cannot start is
    never a grade: the build is refused and says what it left out). ``under_test``: the names left out of the
    lock and the spec's import names of the package (``attr`` and ``attrs`` for attrs)."""
    if report.get("runnerNeeds"):
        return str(report["runnerNeeds"])
    if report.get("runs") is not None and "pytest" in {p.name for p in pins}:
        version = next(p.version for p in pins if p.name == "pytest")
        raise UsageError(f"env build: the image's pytest {version} cannot run a one-line test on CPython "
                         f"{report['python']} ({report['runs']})")
    if report.get("pytest") is None or "pytest" not in {p.name for p in pins}:
        return None
    missing = normalize(str(report.get("missing") or "").split(".")[0])
    if missing and missing in set(under_test):
        return missing
    raise UsageError(f"env build: the image's pytest cannot be imported ({report['pytest']}); left out as the "
                     f"package under test: {', '.join(under_test) or 'nothing'}")


MAX_BUILDS = 8


def _resolve_building(inputs: dict[str, Any], wheels: Path, root: DebianRoot, pip_pin: Callable[[], Pinned], *,
                      allow_build: bool,
                      index_url: str | None, find_links: Sequence[Path],
                      notes: list[str] | None = None,
                      made: dict[Path, dict[str, Any]] | None = None) -> tuple[list[Pinned], list[str],
                                                                              list[dict[str, Any]]]:
    """:func:`resolve`; with ``allow_build``, each requirement that has only an sdist is built inside the
    sandbox (:mod:`acx_oci.envimage.sdist`) and the resolution tried again with its wheel. ``made`` (output
    folder -> what was built there) carries the wheels built by an earlier resolution of the same build."""
    from acx_oci.envimage import sdist

    made = {} if made is None else made
    links: list[Path] = [*find_links, *made]
    built: list[dict[str, Any]] = list(made.values())
    for n in range(MAX_BUILDS + 1):
        try:
            pins, left_out = resolve(inputs, wheels, index_url=index_url, find_links=links, notes=notes)
            return pins, left_out, built
        except NoWheel as refusal:
            if not allow_build or not refusal.sdists or n == MAX_BUILDS:
                raise
            url = sdist.pick(refusal)
            if any(b["sdist"] == sdist.file_name(url) for b in built):  # its wheel did not help: never again
                raise UsageError(f"env build: {refusal.name}: the wheel built from {sdist.file_name(url)} does not "
                                 "satisfy the resolution either; refused") from None
            step = root.work / f"build-{len(made)}"
            src, digest = sdist.fetch(url, step / "sdist", file_roots(index_url, find_links))
            reqs = {**inputs, "requirements": sdist.build_requires(src), "excludePackages": []}
            if "excludeNewer" in reqs:  # tools of the fix's day, but none older than the image's Python
                reqs["excludeNewer"] = max(reqs["excludeNewer"], f"{RELEASED[inputs['python']]}T23:59:59Z")
            try:
                bpins, _ = resolve(reqs, step / "deps", index_url=index_url, find_links=links)
            except UsageError as exc:  # the user asked for the sdist's package, not for its build backend
                why = str(exc).removeprefix("env build: ")
                raise UsageError(f"env build: {src.name} (only a source distribution) is built inside the "
                                 f"sandbox, but its build requirements cannot be had: {why}") from None
            (step / "lock").mkdir(mode=0o755)
            (step / "lock" / "build.txt").write_text("".join(p.line() + "\n" for p in bpins), "utf-8")
            (step / "sandbox-out").mkdir(mode=0o755)  # the sandbox writes here; the wheel is taken into out/
            wheel = sdist.build_wheel(root.unpacked(), src, step / "deps" / "dist", step / "lock" / "build.txt",
                                      wheels / "tools", pip_pin().filename, step / "sandbox-out", step / "out",
                                      epoch=root.epoch)
            built.append(sdist.sdist_note(src, digest, wheel))
            made[step / "out"] = built[-1]
            links.append(step / "out")
    raise AssertionError("unreachable")


RECIPE = 7  # raised when builds change: a fixed builder never serves what an older one made (7: .pyc kept)
_ROOT_EXTRA = {"bullseye": ("python3-distutils",)}  # pip reads its locations through distutils below 3.10


def root_packages(suite: str) -> tuple[str, ...]:
    """The Debian packages of an environment image's root for ``suite``: python3 and what pip needs there."""
    return ("python3", *_ROOT_EXTRA.get(suite, ()))


def build_env_image(ref: str, spec: dict[str, Any], *, epoch: int | None = None, index_url: str | None = None,
                    find_links: Sequence[Path] = (), mirror: str | None = None, allow_build: bool = False,
                    store_options: StoreOptions | None = None, keep_tar: Path | None = None,
                    include: Sequence[str] | None = None, root_cache: bool = True,
                    on_step: Callable[[str], None] = lambda step: None) -> BuiltImage:
    """Resolve, build the Debian root, install inside the sandbox, push to ``ref``; see the module docstring.
    ``include``: the root's Debian packages (default :func:`root_packages`); ``keep_tar`` keeps or reuses its tar,
    else (``root_cache``) the root is reused from :func:`cached_root` while it is young enough.
    ``on_step`` hears each step's name as it starts (a build takes minutes: certification shows where it is).
    What the machine lacks (mmdebstrap, bubblewrap, a route to the index) is :class:`MachineUnfit`, up front."""
    inputs = build_inputs(spec)
    digest = sha256_digest(canonical(inputs))
    sde = resolve_epoch(epoch)
    include = root_packages(inputs["suite"]) if include is None else include
    if keep_tar is None and root_cache:
        keep_tar = cached_root(inputs["suite"], include, sde, mirror)
    preflight.check(index_url, mmdebstrap=not (keep_tar is not None and keep_tar.exists()))
    work = staging_dir("acx-pyenv-")
    try:
        wheels = work / "wheels"
        wheels.mkdir(mode=0o755)
        root = DebianRoot(inputs["suite"], work, sde, mirror, keep_tar, include, on_step, VENV)
        venvs = _Venvs(root, work, sde, default_cache_dir() if root_cache and keep_tar is not None else None)
        on_step("resolve (uv, wheels only, never building)")
        pip_pin = functools.cache(lambda: installer(inputs, wheels, index_url=index_url, find_links=find_links))
        notes: list[str] = []
        days = later_dates(inputs.get("excludeNewer"), datetime.now(UTC).strftime("%Y-%m-%d"))
        tried: set[str] = set()
        made: dict[Path, dict[str, Any]] = {}  # wheels built from source, kept for the later years' resolutions
        for k, day in enumerate(days):  # the fix's day; a year later while its pytest cannot run here
            attempt = {**{k: v for k, v in inputs.items() if k != "excludeNewer"}, **({"excludeNewer": day} if day
                                                                                        else {})}
            pins, left_out, built = _resolve_building(attempt, wheels, root, pip_pin, allow_build=allow_build,
                                                      index_url=index_url, find_links=find_links, notes=notes,
                                                      made=made)
            lock = "".join(p.line() + "\n" for p in pins)
            if lock in tried:
                continue  # the same lock as a year before: its pytest does not run either
            tried.add(lock)
            venv, report, kept = _venv(work / f"venv-{k}", wheels, lock, root, pip_pin, on_step, venvs)
            report = runner_needs(report, {*left_out, *inputs["excludePackages"]})
            if report.get("runs") is None or day is None or "pytest" not in {p.name for p in pins}:
                break
            notes.append(f"as of {day[:10]}: pytest {next(p.version for p in pins if p.name == 'pytest')} cannot "
                         f"run a one-line test on CPython {report['python']} ({str(report['runs'])[:120]}); "
                         "resolved again a year later")
        bad = sorted({n for p in report["packages"] if (n := name_of(p))} & set(inputs["excludePackages"]))
        if bad:
            raise UsageError(f"env build: the package under test {bad[0]} was installed into the environment")
        needs = pytest_check(report, pins, sorted({*left_out, *inputs["excludePackages"]}))
        doc = {"specDigest": digest, "inputs": inputs, "python": report["python"], "packages": report["packages"],
               "lock": [p.line() for p in pins], "installer": pip_pin().line(), "leftOut": sorted(set(left_out)),
               "builtFromSource": built, "resolvedAsOf": spec.get("resolvedAsOf"), "notes": notes,
               "constraintSources": spec.get("constraintSources") or [], "pytestImports": needs}
        on_step("image (the root's, the venv's and the spec's layers)")
        t0 = time.monotonic()
        if kept is None:
            assert venv is not None
            safetree.write_inside(venv, LOCK_FILE, lock.encode("utf-8"))
            kept = layers.venv_layer(venv, VENV.lstrip("/"), work, sde, cache=venvs.cache,
                                     key=venvs.key(lock, pip_pin().line()), report=report)
        said = json.dumps(doc, indent=2, sort_keys=True).encode("utf-8") + b"\n"
        parts = [venvs.root(), kept, layers.report_layer(f"{VENV.lstrip('/')}/{ENV_REPORT}", said, work, sde)]
        t1 = time.monotonic()
        annotations = {ANN_SPEC: digest, ANN_PYTHON: report["python"], ANN_PY_PACKAGES: "\n".join(report["packages"])}
        built_image = image_from_layers(
            parts, ref, suite=inputs["suite"], include=list(include), epoch=sde, store_options=store_options,
            annotations=annotations, also=spec_tag(spec),
            created_by=[f"mmdebstrap --variant=apt --include={','.join(include)} {inputs['suite']} (acx-oci env build)",
                        f"acx-oci env build: {VENV} (python {inputs['python']}, {len(pins)} wheels)",
                        f"acx-oci env build --spec: {VENV}/{ENV_REPORT} (spec {digest})"])
        built_image.seconds = {"layers": round(t1 - t0, 2), **built_image.seconds,
                               "venvLayerKept": venv is None}
        built_image.python_env = {k: doc[k] for k in ("leftOut", "pytestImports", "resolvedAsOf", "notes",
                                                      "constraintSources")}
        return built_image
    finally:
        with contextlib.suppress(OSError):
            remove_tree(work)


class _Venvs:
    """Where venv layers are kept between builds (None: a build from scratch keeps and reuses nothing), keyed
    by the lock on this build's root layer (packed once, when first needed)."""

    def __init__(self, root: DebianRoot, work: Path, epoch: int, cache: Path | None) -> None:
        self._root, self.work, self.epoch, self.cache = root, work, epoch, cache
        self._layer: Layer | None = None

    def root(self) -> Layer:
        if self._layer is None:
            self._layer = layers.root_layer(self._root.made(), self.epoch, self.work, keep=self.cache is not None)
        return self._layer

    def key(self, lock: str, installer_line: str) -> str:
        return layers.venv_key(lock, installer_line, self.root(), self.epoch, RECIPE)


def _venv(venv: Path, wheels: Path, lock: str, root: DebianRoot, pip_pin: Callable[[], Pinned],
          on_step: Callable[[str], None], venvs: _Venvs) -> tuple[Path | None, dict[str, Any], Layer | None]:
    """The lock's venv: its kept layer and install report when this root has had it installed before (no
    venv), else installed into a fresh ``venv`` inside the sandbox (no layer yet)."""
    if venvs.cache is not None:
        found = layers.cached_venv(venvs.cache, venvs.key(lock, pip_pin().line()))
        if found is not None:
            on_step("install (kept from an earlier build of the same lock)")
            return None, found[1], found[0]
    pip_pin()  # the installer's wheel, fetched once the lock stands (a refused resolution needs none)
    (wheels / LOCK_FILE).write_text(lock, "utf-8")
    for d in (wheels, wheels / "dist", wheels / "tools"):
        d.chmod(0o755)
        for f in d.iterdir():
            if f.is_file():
                f.chmod(0o644)
    venv.mkdir(mode=0o755)
    unpacked = root.unpacked()
    on_step("install (pip in the sandbox)")
    return venv, install(unpacked, wheels, venv, pip_pin().filename), None


def spec_tag(spec: dict[str, Any]) -> str:
    """An image's tag in a store: ``spec-``, :data:`RECIPE` and the spec digest's hex."""
    return f"spec-r{RECIPE}-" + spec_digest(spec).split(":", 1)[1][:32]


def read_report(root: Path) -> dict[str, Any] | None:
    """The venv's ``acx-env.json`` of an unpacked image (read through real directories only), or None."""
    rel = f"{VENV.lstrip('/')}/{ENV_REPORT}"
    try:
        raw = safetree.read_inside(root, rel, 4 * 1024 * 1024, "environment report")
    except (OSError, AcxError):
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def ensure_image(spec: dict[str, Any], store: str, *, build: bool = True,
                 store_options: StoreOptions | None = None, **build_args: Any) -> str:
    """The pinned reference of the spec's image in ``store`` (``oci:DIR`` or ``registry/repo``): the tag
    :func:`spec_tag` if it is there, else built and pushed under it (``build=False``: refused instead)."""
    from acx_oci.oci import open_store, parse_reference

    ref = f"{store}:{spec_tag(spec)}"
    reference = parse_reference(ref)
    try:
        with open_store(reference, store_options) as st:
            return f"{ref}@{st.resolve(reference.target).digest}"
    except RegistryError as exc:  # unreachable: a build would end in a push that fails the same way
        raise MachineUnfit(f"the environment image store {store} cannot be read ({exc}); "
                           "give a reachable --env-store", store=True) from None
    except AcxError:
        pass  # not there (yet): built below
    if not build:
        raise UsageError(f"environment image {ref} not found (spec {spec_digest(spec)}); build it with "
                         "acx-oci env build --spec env.json")
    return build_env_image(ref, spec, store_options=store_options, **build_args).reference
