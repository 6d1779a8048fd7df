"""An environment image per spec, with the Debian root's layer and each lock's venv layer kept (issue 43: a
harvest meets a new spec at nearly every commit, and most of them resolve to a lock seen before).

The docs' command, ``acx-oci env build oci:DIR:TAG --spec FILE --json``, runs for ``--specs`` distinct specs
(pytest plus one more small package each: a new lock each) against a fresh image cache (``ACX_OCI_CACHE_DIR``),
then once more for each of them under another spec digest with the same requirements (another package under
test, so the same lock). The first build makes the Debian root (mmdebstrap) and packs its layer; the later
ones reuse both; the repeats reuse the venv's layer too. The floor is that first build, measured in the same
run; the ratio is each later build's seconds over it. Each build's own ``seconds`` are printed too. Needs
mmdebstrap, bubblewrap and PyPI.

Run: python benchmarks/env_root_cache.py [--specs 3] [--out rows.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXTRAS = ["six", "attrs", "toml", "idna", "wcwidth"]  # none of them a dependency of pytest: a new lock each


def build(work: Path, n: int, cache: Path, repeat: bool = False) -> dict[str, object]:
    spec = work / f"spec-{n}{'-again' if repeat else ''}.json"
    spec.write_text(json.dumps({"python": "3.11", "requirements": ["pytest", EXTRAS[n % len(EXTRAS)]],
                                "package": ["calc2" if repeat else "calc"]}))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "env", "build", f"oci:{work / 'layout'}:s{n}{repeat:d}",
                           "--spec", str(spec), "--json"], capture_output=True, text=True,
                          env={**os.environ, "ACX_OCI_CACHE_DIR": str(cache)})
    took = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"env build {n}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    doc = json.loads(proc.stdout)
    return {"spec": f"{n}{' again (same lock)' if repeat else ''}", "seconds": round(took, 1),
            "steps": doc.get("seconds"), "digest": doc.get("imageDigest")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--specs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="acx-rootcache-") as tmp:
        work = Path(tmp)
        rows = [build(work, n, work / "cache") for n in range(args.specs)]
        rows += [build(work, n, work / "cache", repeat=True) for n in range(args.specs)]
    floor = float(rows[0]["seconds"])  # type: ignore[arg-type]
    for r in rows:
        r["ratio"] = round(float(r["seconds"]) / floor, 3)  # type: ignore[arg-type]
        print(f"spec {r['spec']}: {r['seconds']} s (x{r['ratio']} of the first, which made the root) "
              f"steps {r['steps']}")
    later = [float(r["ratio"]) for r in rows[1:args.specs]]  # type: ignore[arg-type]
    again = [float(r["ratio"]) for r in rows[args.specs:]]  # type: ignore[arg-type]
    if later:
        print(f"a later spec with a new lock costs x{sum(later) / len(later):.2f} of the first (the floor, "
              "measured in this run)")
    print(f"a new spec with a lock seen before costs x{sum(again) / len(again):.2f} of the first")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
