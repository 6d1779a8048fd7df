"""A symlink of a repository's tree to a file of the same tree is read as that file; any other link is not."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from acx_oci.errors import PathOutside
from acx_oci.services.exams.gitrepo import open_repo, tree_files


def _repo(tmp_path: Path) -> str:
    root = tmp_path / "r"
    (root / "docs" / "advanced").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs" / "advanced" / "coerce.py").write_text("def coerce(v):\n    return v\n")
    os.symlink("../docs/advanced/coerce.py", root / "tests" / "coerce.py")  # python-semver's layout
    os.symlink("/etc/passwd", root / "tests" / "passwd")  # out of the tree by an absolute name
    os.symlink("../../outside.py", root / "tests" / "up.py")  # out of the tree by a relative one
    os.symlink("coerce.py", root / "tests" / "again.py")  # a link to a link
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_a_link_to_a_file_of_the_tree_is_that_file_and_other_links_are_left_out(tmp_path: Path) -> None:
    head = _repo(tmp_path)
    skipped: list[str] = []
    files = tree_files(open_repo(tmp_path / "r"), head, skipped)
    assert files["tests/coerce.py"] == files["docs/advanced/coerce.py"] == "def coerce(v):\n    return v\n"
    assert sorted(skipped) == ["tests/again.py (symlink)", "tests/passwd (symlink)", "tests/up.py (symlink)"]
    with pytest.raises(PathOutside, match="symlink"):  # the fix's tree: a link that is no file of it is refused
        tree_files(open_repo(tmp_path / "r"), head)
