"""Files and images from outside never reach the host (issue 28).

Each case hashes a victim tree on the host before and after and asserts it is unchanged; the suite cases
also scan every published blob for a marker only a host file holds. The first six are the findings of the
attack review (each failed on the code before ``acx_oci.safetree``); the rest are the classic tar tricks.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acx_oci.cli import main
from acx_oci.envimage import Limits, prepare
from acx_oci.errors import ImageUnsafe, PathOutside
from acx_oci.safetree import exists_inside
from acx_oci.services.artifacts.benchmark import load_suite_dir
from tests.support.layers import push_layers, tar_layer

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMS = ROOT / "testdata" / "bench-py"
BASE = [("etc", "dir", None), ("etc/passwd", "file", b"root:x:0:0::/:/bin/sh\n"), ("usr", "dir", None),
        ("usr/bin", "dir", None), ("usr/bin/tool", "file", b"#!/bin/sh\n")]
MARKER = "HOST-SECRET-7f3a9c"


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def state(top: Path) -> dict[str, Any]:
    """Every entry under ``top`` (and ``top`` itself): type, mode, mtime, content or link target."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in [".", *dirnames, *filenames]:
            p = Path(dirpath) / name
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                body: Any = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                body = os.readlink(p)
            else:
                body = None
            out[str(p.relative_to(top.parent))] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                                                   st.st_mtime_ns, body)
    return out


@pytest.fixture()
def victim(tmp_path: Path) -> Path:
    """A host directory an image must never touch: mode 0700, an old mtime, a secret file, a subdirectory."""
    v = tmp_path / "victim"
    (v / "sub").mkdir(parents=True)
    (v / "secret").write_text(MARKER + "\n")
    for p in (v / "sub", v):
        p.chmod(0o700)
        os.utime(p, (1_000_000_000, 1_000_000_000))
    return v


def pull(tmp_path: Path, layers: list[bytes], limits: Limits | None = None) -> Path:
    ref = push_layers(tmp_path / "layout", "img", layers)
    return prepare(ref, cache_dir=tmp_path / "cache", limits=limits).root


def refused_or_inside(tmp_path: Path, layers: list[bytes], words: str | None = None) -> Path | None:
    """Pull ``layers``; a refusal must be one ImageUnsafe line (with ``words``) and leave no cache entry."""
    try:
        return pull(tmp_path, layers)
    except ImageUnsafe as exc:
        assert "\n" not in str(exc)
        if words:
            assert words in str(exc), str(exc)
        cache = tmp_path / "cache"
        assert not cache.exists() or not [p for p in cache.iterdir() if not p.name.startswith(".")]
        return None


# --- the findings ---------------------------------------------------------------------------------------

def test_finding1_pending_directory_mode_is_not_applied_through_a_later_symlink(tmp_path: Path,
                                                                               victim: Path) -> None:
    before = state(victim)
    layer = tar_layer([*BASE, ("x", "dir", None), ("x/sub", "dir", None, 0o7777, 0),
                       ("x", "sym", str(victim))])
    root = refused_or_inside(tmp_path, [layer])
    assert state(victim) == before, "the unpacker changed a host directory"
    if root is not None:
        assert os.readlink(root / "x") == str(victim)  # kept as data, never followed


def test_finding1_across_layers_too(tmp_path: Path, victim: Path) -> None:
    before = state(victim)
    lower = tar_layer([*BASE, ("x", "dir", None)])
    upper = tar_layer([("x/sub", "dir", None, 0o7777, 0), ("x", "sym", str(victim))])
    refused_or_inside(tmp_path, [lower, upper])
    assert state(victim) == before


def test_finding2_mount_points_never_follow_an_absolute_etc_symlink(tmp_path: Path, victim: Path) -> None:
    before = state(victim)
    layer = tar_layer([("etc", "sym", str(victim)), ("usr", "dir", None)])
    assert refused_or_inside(tmp_path, [layer], "/etc is a symlink") is None
    assert state(victim) == before and not (victim / "passwd").exists() and not (victim / "group").exists()


def test_finding3_a_chain_of_relative_links_cannot_leave_the_root(tmp_path: Path, victim: Path) -> None:
    climb = len((tmp_path / "cache" / ("0" * 64) / "rootfs").parts) + 2
    links = [("a", "dir", None), ("a/r0", "sym", "..")]
    links += [(f"a/r{i}", "sym", f"r{i - 1}/..") for i in range(1, climb)]
    links.append(("a/shadow", "sym", f"r{climb - 1}" + str(victim / "secret")))
    root = refused_or_inside(tmp_path, [tar_layer([*BASE, *links])], "leads outside the root")
    assert root is None  # each link passes the lexical check; together they leave the root: refused


def test_no_relative_link_of_an_accepted_image_resolves_outside_it_on_the_host(tmp_path: Path) -> None:
    """A merged-/usr style tree with relative and absolute links: accepted, and every relative link the host
    resolves stays inside; absolute ones are rooted (the sandbox's meaning) and host code never follows them."""
    layer = tar_layer([*BASE, ("bin", "sym", "usr/bin"), ("usr/lib", "dir", None), ("usr/lib/x", "dir", None),
                       ("usr/lib/x/y", "sym", "../../bin/tool"), ("lib", "sym", "usr/lib"),
                       ("etc/alternatives", "dir", None), ("etc/alternatives/awk", "sym", "/usr/bin/tool"),
                       ("usr/lib/up", "sym", "../lib/x/../../bin")])
    root = pull(tmp_path, [layer])
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink() and not os.readlink(p).startswith("/"):
                assert os.path.realpath(p).startswith(real_root + "/"), p
    assert exists_inside(root, "etc/alternatives/awk") and exists_inside(root, "lib/x/y")
    assert exists_inside(root, "/bin/tool") and not exists_inside(root, "bin/missing")


def _suite(tmp_path: Path) -> Path:
    """A copy of the certified example suite, to be made hostile."""
    suite = tmp_path / "suite"
    shutil.copytree(EXAMS, suite, symlinks=True)
    return suite


def _first_task_dir(suite: Path) -> Path:
    return sorted(p.parent for p in suite.glob("*/*/exam.yaml"))[0] if list(suite.glob("*/*/exam.yaml")) \
        else sorted(p.parent for p in suite.glob("*/exam.yaml"))[0]


def _blobs_with_marker(layout: Path) -> list[str]:
    if not layout.exists():
        return []
    return [p.name for p in (layout / "blobs" / "sha256").iterdir() if MARKER.encode() in p.read_bytes()]


@pytest.mark.parametrize("plant", ["workspace-file", "prompt", "grader-common-abs", "hidden-dir"])
def test_finding4_benchmark_push_publishes_no_host_file(tmp_path: Path, victim: Path, plant: str) -> None:
    suite = _suite(tmp_path)
    task = _first_task_dir(suite)
    if plant == "workspace-file":
        (task / "workspace").mkdir(exist_ok=True)
        (task / "workspace" / "notes.txt").symlink_to(victim / "secret")
    elif plant == "prompt":
        (task / "prompt.md").unlink()
        (task / "prompt.md").symlink_to(victim / "secret")
    elif plant == "grader-common-abs":
        doc = (suite / "benchmark.json").read_text()
        (suite / "benchmark.json").write_text(doc.replace('"graderCommon": "grader-common"',
                                                          f'"graderCommon": "{victim}"'))
    else:
        shutil.rmtree(task / "hidden")
        (task / "hidden").symlink_to(victim)
    with pytest.raises(PathOutside):
        load_suite_dir(suite)
    layout = tmp_path / "out-layout"
    assert cli("keygen", str(tmp_path / "verifier")).exit_code == 0
    res = cli("benchmark", "push", str(suite), f"oci:{layout}:bench", "--allow-uncertified",
              "--seal-to", str(tmp_path / "verifier.did.json"))
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output, res.output
    assert str(victim) in res.output or "symlink" in res.output or "absolute" in res.output, res.output
    assert _blobs_with_marker(layout) == []


@pytest.mark.parametrize("plant", ["prompt", "grader-common-abs"])
def test_finding5_exam_certify_refuses_outside_inputs(tmp_path: Path, victim: Path, plant: str) -> None:
    suite = _suite(tmp_path)
    task = _first_task_dir(suite)
    if plant == "prompt":
        (task / "prompt.md").unlink()
        (task / "prompt.md").symlink_to(victim / "secret")
    else:
        doc = (suite / "benchmark.json").read_text()
        (suite / "benchmark.json").write_text(doc.replace('"graderCommon": "grader-common"',
                                                          f'"graderCommon": "{victim}"'))
    out = tmp_path / "records"
    res = cli("exam", "certify", str(task), "--out", str(out))
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output, res.output
    assert not out.exists() or MARKER not in "".join(p.read_text(errors="replace") for p in out.rglob("*")
                                                     if p.is_file())


def test_cartridge_push_refuses_a_save_or_skill_symlink(tmp_path: Path, victim: Path) -> None:
    d = tmp_path / "cart"
    res = cli("cartridge", "init", str(d), "--id", "com.example.hostile", "--version", "1.0.0",
              "--capability", "build-dag[airflow]@data-engineering")
    assert res.exit_code == 0, res.output
    layout = tmp_path / "cart-layout"
    key = tmp_path / "pub"
    assert cli("keygen", str(key)).exit_code == 0
    for planted in (d / "save.json", d / "skills" / "leak.md"):
        planted.parent.mkdir(exist_ok=True)
        if planted.exists():
            planted.unlink()
        planted.symlink_to(victim / "secret")
        res = cli("cartridge", "push", str(d), f"oci:{layout}:c", "--key", f"{key}.key")
        assert res.exit_code == 2 and "symlink" in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1
        planted.unlink()
    assert _blobs_with_marker(layout) == []


# --- the classic tricks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case, words", [
    ("absolute", "absolute path"),
    ("dotdot", "contains '..'"),
    ("write-through-link", "goes through the symlink"),
    ("climbing-link", "leads outside the root"),
    ("hardlink-outside", "contains '..'"),
    ("hardlink-absolute", "absolute path"),
    ("whiteout-through-link", "goes through the symlink"),
    ("opaque-through-link", "goes through the symlink"),
    ("sparse-100GiB", "decompresses past"),
])
def test_classic_tricks_are_refused_with_one_line(tmp_path: Path, victim: Path, case: str, words: str) -> None:
    v = str(victim)
    entries = {
        "absolute": [(f"{v}/evil", "file", b"x")],
        "dotdot": [("etc/../../../victim/evil", "file", b"x")],
        "write-through-link": [("out", "sym", v), ("out/evil", "file", b"x")],
        "climbing-link": [("etc/up", "sym", "../../../../../../../../" + v.lstrip("/"))],
        "hardlink-outside": [("etc/h", "link", "../victim/secret")],
        "hardlink-absolute": [("etc/h", "link", f"{v}/secret")],
        "whiteout-through-link": [("out", "sym", v), ("out/.wh.secret", "file", b"")],
        "opaque-through-link": [("out", "sym", v), ("out/.wh..wh..opq", "file", b"")],
        "sparse-100GiB": [("big", "sparse", 100 * 1024 ** 3)],
    }[case]
    before = state(victim)
    assert refused_or_inside(tmp_path, [tar_layer([*BASE, *entries])], words) is None
    assert state(victim) == before
    res = cli("env", "pull", push_layers(tmp_path / "layout", "again", [tar_layer([*BASE, *entries])]),
              "--cache-dir", str(tmp_path / "cache2"))
    assert res.exit_code == 1 and words in res.output and len(res.output.strip().splitlines()) == 1, res.output


def test_devices_fifos_and_setid_are_neutralised(tmp_path: Path, victim: Path) -> None:
    before = state(victim)
    root = pull(tmp_path, [tar_layer([*BASE, ("dev-null", "chr", None), ("pipe", "fifo", None),
                                      ("usr/bin/su", "setuid", b"su"), ("usr/bin/sg", "dir", None, 0o2755)])])
    assert not os.path.lexists(root / "dev-null") and not os.path.lexists(root / "pipe")
    assert not os.stat(root / "usr/bin/su").st_mode & (stat.S_ISUID | stat.S_ISGID)
    assert not os.stat(root / "usr/bin/sg").st_mode & stat.S_ISGID
    assert state(victim) == before


def test_duplicate_entries_the_last_wins_and_a_replaced_directory_keeps_no_pending_mode(tmp_path: Path) -> None:
    root = pull(tmp_path, [tar_layer([*BASE, ("opt", "dir", None), ("opt/d", "dir", None, 0o500, 5),
                                      ("opt/d", "file", b"second"), ("etc/dup", "file", b"one"),
                                      ("etc/dup", "file", b"two"), ("etc/dir", "dir", None, 0o700, 7),
                                      ("etc/dir", "dir", None, 0o751, 9)])])
    assert (root / "opt/d").read_bytes() == b"second" and (root / "etc/dup").read_bytes() == b"two"
    st = os.lstat(root / "etc/dir")
    assert stat.S_ISDIR(st.st_mode) and int(st.st_mtime) == 9
    assert stat.S_IMODE(st.st_mode) & 0o777 == (0o751 if os.geteuid() == 0 else 0o751 | 0o700)


def test_a_layer_of_100k_entries_stops_at_the_entry_bound(tmp_path: Path, victim: Path) -> None:
    entries: list[tuple[Any, ...]] = [("many", "dir", None)]
    entries += [(f"many/f{i}", "file", b"") for i in range(100_000)]
    before = state(victim)
    with pytest.raises(ImageUnsafe, match="more than 50000 entries"):
        pull(tmp_path, [tar_layer([*BASE, *entries])], Limits(max_entries=50_000))
    assert state(victim) == before
    assert not [p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]
