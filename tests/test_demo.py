"""``acx-oci demo``: the README's main job, on the embedded layout and on a real registry."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "acx_oci", "demo", *args], capture_output=True, text=True,
                          timeout=300)


def test_demo_on_embedded_layout(tmp_path: Path) -> None:
    proc = run_demo("--workdir", str(tmp_path / "w"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "weak agent (competence 14): NOT ISSUED" in out
    assert "strong agent (competence 33): ISSUED" in out
    assert "SIMULATED tier=" in out and "(reference solver: the demo suite is a simulation" in out
    assert "self_issued" in out and "manifest_mismatch" in out and "['revoked']" in out
    assert "PROVABLE LEVEL OK" in out and "❌" not in out
    assert (tmp_path / "w" / "oci" / "strong" / "index.json").exists()
    # every page the demo points to exists (it pointed to a README section that had moved to docs/)
    pages = re.findall(r"docs/[\w-]+\.md", out)
    assert pages and all((ROOT / page).is_file() for page in pages), pages
    # the layout the demo wrote is a real OCI layout: skopeo reads the strong cartridge
    raw = subprocess.run(["skopeo", "inspect", "--raw", f"oci:{tmp_path / 'w' / 'oci' / 'strong'}:1.0.0"],
                         capture_output=True, text=True, check=True).stdout
    assert "application/vnd.acx.cartridge.v1" in raw


def test_demo_on_registry(registry: str, tmp_path: Path) -> None:
    proc = run_demo("--registry", registry, "--workdir", str(tmp_path / "w"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PROVABLE LEVEL OK" in proc.stdout


def test_demo_refuses_non_empty_workdir(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("keep me")
    proc = run_demo("--workdir", str(tmp_path))
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert (tmp_path / "x").read_text() == "keep me"


def test_demo_cleans_its_temporary_folder_unless_keep(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the child's temp dir; this process's environment is untouched
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "demo"], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "temporary files removed" in proc.stdout and list(tmp_path.glob("acx-demo-*")) == []
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "demo", "--keep"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (kept,) = tmp_path.glob("acx-demo-*")
    assert f"(files in {kept})" in proc.stdout and (kept / "oci" / "strong" / "index.json").exists()
