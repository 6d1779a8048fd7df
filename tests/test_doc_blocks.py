"""Every shell block (```sh, ```bash, ```shell, ```console) of the README and docs/ is tagged: run in CI as
written (and by which test), or explicitly not, with the reason. A new block without a tag fails here until it is
given one, in :data:`TAGS` or in the page itself as an HTML comment on the line before it:
``<!-- ci: tests/test_x.py -->`` or ``<!-- not run in CI: why -->``."""

from __future__ import annotations

import re
from pathlib import Path

from .support.env import ROOT

GETTING_STARTED = "tests/test_readme_walkthrough.py"  # runs getting-started's "## Walk-through" blocks, in CI
REAL_AGENT = "tests/test_real_agent_page.py"  # runs the real-agent walk-through and model section, in CI (slow)
WALK = f"ci: {REAL_AGENT} (marked slow: CI runs it) runs the walk-through as written, on the 49-exam slice"
MODEL = (f"ci: {REAL_AGENT} (marked slow: CI runs it) runs the model section after the walk-through, the stand-in "
         "provider and the auditor's replay included")
TOO_LONG = (f"not run in CI: it certifies all 150 exams of bench-py (13+ min on 2 idle cores, over CI's budget); "
            f"{REAL_AGENT} certifies the page's 49-exam slice")

#: (page, the start of the block's first line) -> "ci: TEST" or "not run in CI: REASON".
TAGS: dict[tuple[str, str], str] = {
    ("README.md", "pip install -e . && acx-oci demo"): "ci: tests/test_demo.py (acx-oci demo)",
    ("README.md", "bash scripts/test.sh"): "ci: .ci/run (CI runs exactly this command)",
    ("README.md", "PUBLISHER=$(acx-oci keygen keys/publisher)"):
        f"not run in CI: the README's short form of getting-started's walk-through, which {GETTING_STARTED} runs",
    ("docs/operations.md", "acx-oci gateway --upstream https://registry.internal --listen 0.0.0.0:5443 \\"):
        "not run in CI: a production deployment (a registry.internal and its certificates); the TLS gateway is "
        "tests/gateway/test_gateway_tls.py's",
    ("docs/operations.md", "acx-oci log verify localhost:5000/verifier/log --key log.vkey --since seen.cp --save "
                           "seen.cp"):
        "not run in CI: a monitor's cron job on an operator's log; tests/verifier/test_tlog.py",
    ("docs/operations.md", "acx-oci attest CART --benchmark BENCH --key keys/verifier.key --issuer DID --state "
                           "./state"): "not run in CI: placeholders (CART, BENCH, DID) for an operator's own",
    ("docs/operations.md", "# on the scheduler host: TLS, every party with a certificate from your own CA"):
        "not run in CI: several hosts of a Dask cluster; tests/verifier/test_dask*.py run the executor on loopback",
    ("docs/operations.md", "ACME_API_KEY=... dask worker tls://10.0.0.2:8786 --name w1 ...      # apiKeyEnv: "
                           "ACME_API_KEY"): "not run in CI: a worker host of a cluster, with a real provider's key",
    ("docs/security.md", "python3 -m pytest tests/test_fuzz.py                          # profile \"ci\": "
                         "derandomized"): "ci: tests/test_fuzz.py (the first line is CI's own profile)",
    ("docs/exams-from-repositories.md", "acx-oci exam import --repo ./calc --base 1a2b3c4 --fix 9f8e7d6 "
                                        "--lookalike near-miss.patch"):
        "not run in CI: commits of the reader's own repository; tests/exams/test_exam_import.py import real "
        "ones",
    ("docs/exams-from-repositories.md", "acx-oci exam import --swebench instances.jsonl --repos ./clones "
                                        "--classification public -o ./suite"):
        "not run in CI: SWE-bench data and clones are not downloaded here",
    ("docs/exams-from-repositories.md", "acx-oci exam candidates --repo ./rich --since 2025-06-01 --max 20"):
        "not run in CI: a fetched repository and minutes of image builds; tests/exams/test_exam_harvest.py "
        "harvests real git histories (a local cluster too)",
    ("docs/attest-a-real-agent.md", "REG=${REG:-localhost:5000}"): WALK,
    ("docs/attest-a-real-agent.md", "acx-oci cartridge init ./py-agent --id io.example/py-agent --version 1.0.0 \\"):
        WALK,
    ("docs/attest-a-real-agent.md", "acx-oci exam certify ./bench-py --out ./certs --jobs 2"): WALK,
    ("docs/attest-a-real-agent.md", "acx-oci sandbox check --key keys/verifier.key"): WALK,
    ("docs/attest-a-real-agent.md", "export ACME_API_KEY=sk-standin                     # with a real provider: "
                                    "your key"): MODEL,
    ("docs/attest-a-real-agent.md", "acx-oci cartridge init ./llm-agent --id io.example/llm-agent --version 1.0.0 \\"):
        MODEL,
    ("docs/attest-a-real-agent.md", "acx-oci transcripts export ./att-llm --key keys/verifier.key --to "
                                    "keys/auditor.did.json -o ./export"): MODEL,
    ("docs/attest-a-real-agent.md", "acx-oci exam certify ./bench-py --out ./certs --jobs 2                # 150 "
                                    "exams: ~13 min"): TOO_LONG,
    ("docs/attest-a-real-agent.md", "acx-oci env build localhost:5000/acme/env:bookworm-py --suite bookworm "
                                    "--include python3,python3-pytest --json"):
        "not run in CI: mmdebstrap downloads Debian packages (minutes); tests/envimage/test_envimage.py build "
        "small images",
    ("docs/getting-started.md", "$ sudo apt-get install docker-registry"):
        "not run in CI: installs a system package and serves :5000; tests/support/registry.py starts the same "
        "registry from the same config on 127.0.0.1:0 for every test",
    ("docs/concepts.md", "acx-oci doctor registry.example"):
        "not run in CI: registry.example is the reader's registry; tests/test_doctor.py probes both test registries",
    ("docs/operations.md", "# a verified mirror: cartridge, attestations"):
        "not run in CI: registry.example, mirror.internal and registry.airgap are the operator's; "
        "tests/oci/test_copy.py copies registry to registry, to an oci: bundle and back",
}
BLOCK = re.compile(r"^ *```(?:sh|bash|shell|console)\n(.*?)^ *```$", flags=re.S | re.M)
IN_PAGE_TAG = re.compile(r"<!-- (ci: \S.*|not run in CI: \S.*) -->\s*$")


def blocks() -> list[tuple[str, str, str]]:
    """(page, first line, in-page tag or "") of every ```sh block of the README and docs/*.md."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text("utf-8")
        page = path.relative_to(ROOT).as_posix()
        for m in BLOCK.finditer(text):
            before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            tag = IN_PAGE_TAG.search(before)
            out.append((page, m.group(1).splitlines()[0].strip(), tag.group(1) if tag else ""))
    return out


def test_every_shell_block_is_tagged_run_in_ci_or_not_with_a_reason() -> None:
    found = blocks()
    walkthrough = {(p, first) for p, first, _ in found if p == "docs/getting-started.md"}
    def tagged(page: str, first: str) -> list[tuple[str, str]]:
        return [(p, start) for p, start in TAGS if p == page and first.startswith(start)]

    untagged = [(p, first) for p, first, tag in found
                if not tag and not tagged(p, first) and (p, first) not in walkthrough]
    assert not untagged, f"tag these blocks (TAGS here, or an in-page comment): {untagged}"
    stale = sorted(set(TAGS) - {key for p, first, _ in found for key in tagged(p, first)})
    assert not stale, f"TAGS names blocks no page has any more: {stale}"
    for tag in [*TAGS.values(), *(t for _, _, t in found if t)]:
        assert tag.startswith(("ci: ", "not run in CI: ")) and len(tag) > 20, tag
        for named in re.findall(r"(?:tests|\.ci)/[\w./*]*[\w*]", tag):
            assert list(ROOT.glob(named)), f"{tag!r} names {named}, which does not exist"


def test_getting_started_blocks_are_all_in_the_walk_through_ci_runs() -> None:
    """getting-started's blocks are all under "## Walk-through", which tests/test_readme_walkthrough.py runs, or
    tagged not run (the local registry's setup)."""
    text = (ROOT / "docs" / "getting-started.md").read_text("utf-8")
    start = text.index("\n## Walk-through\n")
    end = text.find("\n## ", start + 1)
    outside = [first for m in BLOCK.finditer(text) if not start < m.start() < end
               if not TAGS.get(("docs/getting-started.md", first := m.group(1).splitlines()[0].strip()), "")
               .startswith("not run in CI: ")]
    assert not outside, f"blocks outside the walk-through, which nothing runs: {outside}"
    assert Path(ROOT / GETTING_STARTED).is_file()
