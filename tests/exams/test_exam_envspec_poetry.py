"""A Poetry project's environment (rich): its own tables read, Poetry's constraints said in PEP 440, the
installer a tox environment names left out."""

from __future__ import annotations

import pytest

from acx_oci.services.exams import envspec, poetryspec

RICH_LIKE = '''[tool.poetry]
name = "rich"
version = "14.3.2"
classifiers = ["Programming Language :: Python :: 3.9", "Programming Language :: Python :: 3.11"]

[tool.poetry.dependencies]
python = ">=3.8.0"
pygments = "^2.13.0"
ipywidgets = { version = ">=7.5.1,<9", optional = true }
markdown-it-py = ">=2.2.0"
mdurl = { git = "https://example.invalid/mdurl.git" }
colorama = { version = "~0.4", markers = "sys_platform == 'win32'", extras = ["x"] }

[tool.poetry.dev-dependencies]
pytest = "^7.0.0"
attrs = "^21.4.0"
'''
TOX = "[tox]\nenvlist = py311\n[testenv]\ndeps =\n    poetry\ncommands =\n    poetry install\n    pytest tests/\n"


def test_a_poetry_projects_own_tables_are_its_environment_and_its_installer_is_not() -> None:
    # before: the spec was ["poetry", "pytest"] (tox's deps), and rich's tests all failed without pygments
    spec = envspec.derive({"pyproject.toml": RICH_LIKE, "tox.ini": TOX}, date="2026-02-19")
    assert spec["requirements"] == ["pygments<3,>=2.13.0", "markdown-it-py>=2.2.0",
                                    "colorama[x]<0.5,>=0.4; sys_platform == \"win32\"",
                                    "pytest<8,>=7.0.0", "attrs<22,>=21.4.0"]
    assert spec["sources"] == ["pyproject.toml [tool.poetry.dependencies]",
                               "pyproject.toml [tool.poetry.dev-dependencies]"]
    assert any(d.startswith("mdurl (a git source") for d in spec["dropped"])
    assert any(d.startswith("poetry (an installer") for d in spec["dropped"])
    assert spec["pythonRequires"] == ">=3.8.0" and spec["classifierPythons"] == ["3.9", "3.11"]
    assert spec["distribution"] == {"name": "rich", "version": "14.3.2"}
    assert spec["package"] == ["rich"]


def test_a_test_group_wins_over_dev_dependencies() -> None:
    doc = RICH_LIKE + '[tool.poetry.group.test.dependencies]\npytest = "8.1.1"\n'
    spec = envspec.derive({"pyproject.toml": doc})
    assert "pytest==8.1.1" in spec["requirements"] and "attrs<22,>=21.4.0" not in spec["requirements"]


@pytest.mark.parametrize(("poetry", "pep440"), [
    ("^1.2.3", ">=1.2.3,<2"), ("^0.2.3", ">=0.2.3,<0.3"), ("^0.0.3", ">=0.0.3,<0.0.4"), ("^0", ">=0,<1"),
    ("~1.2.3", ">=1.2.3,<1.3"), ("~1", ">=1,<2"), ("*", ""), ("1.2.3", "==1.2.3"), ("1.2.*", "==1.2.*"),
    (">=1.2, <2.0", ">=1.2,<2.0"), (">= 1.2 < 2", ">=1.2,<2"), ("^1 || ^2", None), ("latest", None),
])
def test_poetry_constraints_in_pep_440(poetry: str, pep440: str | None) -> None:
    assert poetryspec.specifier(poetry) == pep440


def test_a_constraint_that_cannot_be_said_keeps_the_name_and_hostile_names_stay_out() -> None:
    doc = ('[tool.poetry]\nname = "p"\n[tool.poetry.dependencies]\nfoo = "^1 || ^2"\n'
           '"bar; import os" = "*"\nbaz = [{version = "1", python = "<3.9"}, {version = "2", python = ">=3.9"}]\n')
    spec = envspec.derive({"pyproject.toml": doc})
    assert spec["requirements"][:2] == ["foo", "baz"]
    assert any("not a package name" in d for d in spec["dropped"])
