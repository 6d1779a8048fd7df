"""Example data shipped inside the package (``acx-oci benchmark example``).

``pip install`` does not install the repository's ``testdata/``, yet "Attest a real agent" needs the bench-py
suite and the example agents. They ship as two small tarballs (package data, about 150 KB; the suite unpacked
is 1,500 files) made by ``scripts/pack_examples.py`` from ``testdata/`` and checked against it by
tests/test_real_agent_page.py, so the shipped copy cannot drift from the one the tests use.
"""

from __future__ import annotations

import io
import json
import tarfile
from importlib import resources
from pathlib import Path, PurePosixPath

from acx_oci.errors import UsageError

#: name -> (tarball in acx_oci/examples/, what it is)
EXAMPLES: dict[str, tuple[str, str]] = {
    "bench-py": ("bench-py.tar.gz", "the bench-py suite in exam form (150 exams, 90 held out) and its generator"),
    "bench-py-quick": ("bench-py.tar.gz", "bench-py's 49 exams of difficulty 30 to 40, 47 held out: a quick slice"),
    "agents": ("agents.tar.gz", "the example agents: simple_agent.py (no model) and llm_agent.py (calls a model)"),
}
#: name -> (the example it is cut from, lowest and highest difficulty kept, heldOutFraction): a slice of a suite,
#: the exams whose difficulty is in the band, written with its own id and split (the shipped seal key).
SLICES: dict[str, tuple[str, float, float, float]] = {
    "bench-py-quick": ("bench-py", 30, 40, 0.95),
}
MAX_BYTES = 64 * 1024 * 1024  # unpacked, all members together: far above what ships, a bound all the same


def example_tarball(name: str) -> bytes:
    """The packaged tarball of example ``name``; an unknown name is a usage error listing the known ones."""
    if name not in EXAMPLES:
        raise UsageError(f"benchmark example: unknown example {name!r} (known: {', '.join(sorted(EXAMPLES))})")
    return resources.files("acx_oci").joinpath("examples", EXAMPLES[name][0]).read_bytes()


def example_members(name: str) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file of example ``name`` (checked, nothing written)."""
    if name in SLICES:
        return sliced(*SLICES[name], name=name)
    out: dict[str, bytes] = {}
    total = 0
    with tarfile.open(fileobj=io.BytesIO(example_tarball(name)), mode="r:gz") as tf:
        for m in tf.getmembers():
            rel = PurePosixPath(m.name)
            if rel.is_absolute() or ".." in rel.parts or not (m.isfile() or m.isdir()):
                raise UsageError(f"benchmark example {name}: refusing member {m.name!r}")
            if m.isfile():
                total += m.size
                f = tf.extractfile(m)
                if total > MAX_BYTES or f is None:
                    raise UsageError(f"benchmark example {name}: member {m.name!r} unreadable or too large")
                out[rel.as_posix()] = f.read()
    return out


def write_example(name: str, out_dir: Path) -> list[str]:
    """Write example ``name`` into ``out_dir`` (new or empty); the relative paths written, sorted."""
    members = example_members(name)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise UsageError(f"benchmark example: {out_dir} exists and is not an empty directory")
    for rel, data in sorted(members.items()):
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return sorted(members)


def sliced(source: str, lo: float, hi: float, fraction: float, *, name: str) -> dict[str, bytes]:
    """Example ``source`` cut to the exams of difficulty ``lo``..``hi``: fewer exams to certify (the slow step,
    about 18 sandboxed grades each), each one near the example agents' skill so that the fewer games still
    decide a level. Its ``benchmark.json`` lists those tasks with the id ``acx-NAME`` and ``fraction`` held out;
    the generators, which would write the whole suite again, are left out."""
    members = example_members(source)
    doc = json.loads(members["benchmark.json"])
    keep = [t for t in doc["tasks"] if lo <= float(t["difficulty"]) <= hi]
    kept = {str(t["dir"]).rstrip("/") + "/" for t in keep}
    out = {rel: data for rel, data in members.items()
           if (not rel.startswith("tasks/") or rel[:rel.index("/", 6) + 1] in kept) and not rel.endswith("_tasks.py")}
    doc.update(id=f"acx-{name}", heldOutFraction=fraction, tasks=keep,
               name=f"{doc['name']} (exams of difficulty {lo:g} to {hi:g})")
    out["benchmark.json"] = (json.dumps(doc, indent=2) + "\n").encode("utf-8")
    return out
