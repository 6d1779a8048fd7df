"""``benchmark demo|example|push|inspect|unseal|exposures``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from acx_oci.cli.common import emit_json, json_option, registry_options, store_for
from acx_oci.cli.main import main
from acx_oci.crypto import recipient_from_did_document
from acx_oci.errors import UsageError
from acx_oci.files import load_json_file
from acx_oci.model import benchmark as bmodel
from acx_oci.oci import parse_reference
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.tools import examples as ex
from acx_oci.trust import load_identity


@main.group()
def benchmark() -> None:
    """Benchmarks: task suites whose held-out slice is sealed to verifiers."""


@benchmark.command("demo")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@json_option
def benchmark_demo(out_dir: Path, as_json: bool) -> None:
    """Write the reference suite acx-bench-dag-de@2026.07.1 to OUT_DIR.

    160 tasks dag-0001 ... dag-0160, difficulties 15-48, held-out fraction 0.6,
    measuring build-dag[snowflake+airflow+dbt]@data-engineering. OUT_DIR gets
    benchmark.json and seal.key (random; it decides the split - keep it secret).

    \b
    Example:
      acx-oci benchmark demo ./bench
    """
    doc = bmodel.demo_document()
    suite, key = bm.write_suite_dir(out_dir, doc)
    bench = bmodel.from_document(doc)
    held = bmodel.held_out_count(len(bench.tasks), bench.held_out_fraction)
    if as_json:
        emit_json({"id": bench.id, "version": bench.version, "taskCount": len(bench.tasks), "heldOutCount": held,
                   "benchmarkDigest": bench.digest, "capability": bench.capability, "suite": str(suite),
                   "sealKey": str(key)})
    else:
        click.echo(f"wrote {suite} and {key}")
        click.echo(f"benchmark {bench.id}@{bench.version}: {len(bench.tasks)} tasks, {held} held out")
        click.echo(f"  measures   {bmodel.capability_display(bench.capability)}")
        click.echo(f"  digest     {bench.digest}")


@benchmark.command("example")
@click.argument("name", type=click.Choice(sorted(ex.EXAMPLES)))
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
def benchmark_example(name: str, out_dir: Path) -> None:
    """Write a shipped example (NAME) into OUT_DIR (new or empty).

    bench-py: a suite in exam form (150 exams, 90 held out; its seal.key ships with it, so its split is
    public: an example, not a secret exam). bench-py-quick: its 49 exams of difficulty 30 to 40, 47 held
    out, the slice "Attest a real agent" certifies, pushes and plays (certification is the slow step).
    agents: the example agents (simple_agent.py, llm_agent.py).

    \b
    Example:
      acx-oci benchmark example bench-py-quick ./bench-py
      acx-oci benchmark example agents ./agents
    """
    written = ex.write_example(name, out_dir)
    click.echo(f"wrote {len(written)} files of {name} ({ex.EXAMPLES[name][1]}) to {out_dir}")


@benchmark.command("push")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("ref")
@click.option("--seal-to", "seal_to", multiple=True, required=True, metavar="VERIFIER.did.json",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A verifier's DID document; the held-out slice is sealed to its keyAgreement key. Repeatable.")
@click.option("--certifications", "records_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where `acx-oci exam certify --out` wrote the sealed records (default: ~/.acx-oci/exams).")
@click.option("--certifier-key", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Signs the suite's exam certification (pushed as a referrer of the benchmark).")
@click.option("--allow-uncertified", is_flag=True,
              help="Push a suite in exam form even if an exam is uncertified or changed since certification; "
                   "recorded in the benchmark and in every credential issued off it.")
@click.option("--customer", metavar="NAME", default=None,
              help="The customer whose customer-owned exams this push carries (their classification.customer); "
                   "a suite with customer-owned exams is refused without it.")
@click.option("--env-store", default=None, metavar="STORE",
              help="Where `exam certify --environments` kept the exams' environment images (its --env-store, "
                   "oci:DIR or REGISTRY/REPO; default: its default). An exam certified in its image gets it "
                   "pinned in its task and copied by digest into REF's repository.")
@registry_options
@json_option
def benchmark_push(directory: Path, ref: str, seal_to: tuple[Path, ...], records_dir: Path | None,
                   certifier_key: Path | None, allow_uncertified: bool, customer: str | None, env_store: str | None,
                   plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """Split the suite in DIRECTORY, seal the held-out slice, push it to REF.

    REF is HOST[:PORT]/REPO[:TAG] or oci:PATH[:TAG] (tag defaults to the version).
    A suite in exam form (tasks/*/exam.yaml) must be certified: every exam's
    sealed record certified and its freeze hash unchanged (else exit 1 naming
    each exam); the certification, signed with --certifier-key, is pushed as
    a referrer of the benchmark (artifactType application/vnd.acx.exam-certification.v1).
    An exam with an environment spec (env.json) certified in its image plays
    in that image: the image is copied by digest from --env-store into REF's
    repository (tag env-<spec digest>) and pinned in the exam's task.
    An exam classified not publicly listable, or customer-owned, is always held
    out and published only as its task commitment (docs/attest-a-real-agent.md).

    \b
    Example:
      acx-oci exam certify ./bench-py --out ./certs
      acx-oci benchmark push ./bench-py registry.example/acme/bench-py:2026.07.1 \\
          --seal-to keys/verifier.did.json --certifications ./certs --certifier-key keys/certifier.key
    """
    from acx_oci.errors import VerificationError
    from acx_oci.oci import StoreOptions
    from acx_oci.services.artifacts import benchmark_env as benv
    from acx_oci.services.artifacts import certification as cert
    from acx_oci.services.artifacts import with_graded_tests
    from acx_oci.services.exams import default_out
    from acx_oci.services.exams import default_store as default_env_store

    looked_in = records_dir or default_out()
    check = cert.check_suite(directory, looked_in)
    if check.exam_form and check.problems and not allow_uncertified:
        raise VerificationError(f"benchmark push: {len(check.problems)} exam(s) not certified: "
                                + _uncertified(check.problems, directory, looked_in))
    certifier = load_identity(certifier_key) if certifier_key else None
    if check.certified and certifier is None and not allow_uncertified:
        raise UsageError("benchmark push: the suite is certified; sign its certification with --certifier-key "
                         "(or push it as uncertified with --allow-uncertified)")
    state = "not-exam-form" if not check.exam_form else \
        "certified" if check.certified and certifier is not None else "uncertified-allowed"
    bench, key = bm.load_suite_dir(directory)
    bm.check_customers(bench, customer)
    recipients = [recipient_from_did_document(load_json_file(p, "verifier DID document"), f"DID document {p}")
                  for p in seal_to]
    reference = parse_reference(ref)
    if reference.digest:
        raise UsageError(f"benchmark push: expected a tag, not a digest, in {ref!r}")
    store = store_for(ref, plain_http, insecure, timeout)
    pins = benv.plan_pins(directory, check.records)
    if pins.unpinned_line():
        click.echo(pins.unpinned_line(), err=True)
    options = StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout)
    images = benv.copy_images(env_store or default_env_store(), store, pins, options)  # before the benchmark
    bench = benv.with_environments(bench, pins, images)
    bench = with_graded_tests(bench, check.records)  # the ids each exam's certification derived
    pushed = bm.push(store, bench, key, recipients, reference.tag or bench.version, state)
    cert_digest = None
    if state == "certified" and certifier is not None and pushed.descriptor is not None:
        records = bm.publishable_records(check.records, bench, key)  # private exams: commitments, redacted
        pred = cert.summary_predicate(bench.id, bench.version, bench.digest, certifier.did, records)
        cert_digest = cert.push_certification(store, pushed.descriptor, pred, records, certifier).digest
    if as_json:
        emit_json({"id": bench.id, "version": bench.version, "manifestDigest": pushed.manifest_digest,
                   "examCertification": state, "certificationDigest": cert_digest,
                   "uncertified": check.problems,
                   "benchmarkDigest": pushed.benchmark_digest,
                   "heldOutSliceDigest": pushed.held_out_slice_digest, "reference": pushed.reference,
                   "environmentImages": {eid: images[d] for eid, (d, _) in sorted(pins.pins.items())},
                   "unpinnedEnvironments": list(pins.unpinned),
                   "sealedTo": [r.kid for r in recipients]})
    else:
        click.echo(f"pushed {pushed.reference}")
        click.echo(f"  benchmark digest:      {pushed.benchmark_digest}")
        click.echo(f"  held-out slice digest: {pushed.held_out_slice_digest}")
        click.echo(f"  sealed to:             {', '.join(r.kid for r in recipients)}")
        click.echo(f"  exam certification:    {state}" + (f" (referrer {cert_digest})" if cert_digest else ""))
        if images:
            click.echo(f"  environment images:    {len(images)} (for {len(pins.pins)} exam(s)), copied into "
                       f"{store.reference.with_tag(None)}")
        for problem in check.problems:
            click.echo(f"    uncertified: {problem}")


@benchmark.command("inspect")
@click.argument("ref")
@registry_options
@json_option
def benchmark_inspect(ref: str, plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """Show a pushed benchmark's public facts (never held-out content).

    \b
    Example:
      acx-oci benchmark inspect registry.example/acme/bench:2026.07.1 --json
    """
    store = store_for(ref, plain_http, insecure, timeout)
    remote = bm.fetch(store, parse_reference(ref).target)
    s = remote.summary()
    if as_json:
        emit_json(s)
        return
    click.echo(f"benchmark {s['id']}@{s['version']}  ({s['manifestDigest']})")
    click.echo(f"  measures              {bmodel.capability_display(s['capability'])}")
    click.echo(f"  tasks                 {s['taskCount']} ({s['publicCount']} public, {s['heldOutCount']} held out)")
    click.echo(f"  benchmark digest      {s['benchmarkDigest']}")
    click.echo(f"  held-out slice digest {s['heldOutSliceDigest']}")
    click.echo(f"  sealed to             {', '.join(s['sealedTo'])}")


@benchmark.command("unseal")
@click.argument("ref")
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The verifier's key (PREFIX.key); its derived X25519 key opens the slice.")
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the held-out slice (JSON, mode 0600).")
@registry_options
@json_option
def benchmark_unseal(ref: str, key: Path, output: Path, plain_http: bool, insecure: bool, timeout: float,
                     as_json: bool) -> None:
    """Verifier side: unseal the held-out slice and check it against the published digests.

    \b
    Example:
      acx-oci benchmark unseal registry.example/acme/bench:2026.07.1 --key keys/verifier.key -o held-out.json
    """
    ident = load_identity(key)
    store = store_for(ref, plain_http, insecure, timeout)
    remote = bm.fetch(store, parse_reference(ref).target)
    unsealed = bm.unseal_remote(remote, ident)
    if output.exists():
        raise UsageError(f"benchmark unseal: refusing to overwrite existing {output}")
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(unsealed.held_out_doc, indent=2) + "\n")
    if as_json:
        emit_json({"output": str(output), "heldOutCount": len(unsealed.held_out),
                   "heldOutSliceDigest": unsealed.held_out_slice_digest, "benchmarkDigest": unsealed.bench.digest})
    else:
        click.echo(f"wrote {output}: {len(unsealed.held_out)} held-out tasks "
                   f"(slice digest {unsealed.held_out_slice_digest} matches)")


@benchmark.command("exposures")
@click.option("--state", "state_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The verifier state directory (attest --state).")
@click.option("--benchmark", "benchmark_digest", metavar="sha256:…", help="Only this benchmark digest.")
@json_option
def benchmark_exposures(state_dir: Path, benchmark_digest: str | None, as_json: bool) -> None:
    """Which held-out tasks were sent to which model provider (agents that call a model).

    Every model call carries held-out task text to the provider. A task sent to a
    provider whose data terms are 'unknown' (the models file's dataUse) may be in
    the training data of models trained after that date: for them, the suite is
    burned.

    \b
    Example:
      acx-oci benchmark exposures --state ~/.acx-oci/verifier --json
    """
    from acx_oci.services.verifier import listing

    rows = listing(state_dir, benchmark_digest)
    if as_json:
        emit_json({"exposures": rows, "tasks": len({(r["benchmarkDigest"], r["taskId"]) for r in rows}),
                   "unknownDataUse": sum(r["dataUse"] != "no-training" for r in rows)})
        return
    if not rows:
        click.echo("no held-out task was sent to a model provider from this state")
    for r in rows:
        warn = "  (may train on it: burned for models trained after this date)" if r["dataUse"] != "no-training" \
            else ""
        click.echo(f"{r['benchmark']}  {r['taskId']}  -> {r['model']} at {r['provider']}  "
                   f"first {r['firstSentAt']}  {r['requests']} request(s)  dataUse {r['dataUse']}{warn}")


def _uncertified(problems: list[str], directory: Path, records: Path) -> str:
    """The problems in one line: the exams with no record at all as one list with the command that makes them
    (a suite never certified, or --certifications forgotten, named 150 times), then the first others."""
    from acx_oci.services.artifacts import NO_RECORD as cert_missing

    missing = [p.split(":", 1)[0].removeprefix("exam ") for p in problems if p.endswith(cert_missing)]
    others = [p for p in problems if not p.endswith(cert_missing)]
    parts = [f"{'; '.join(others[:10])}{f' (and {len(others) - 10} more)' if len(others) > 10 else ''}"] \
        if others else []
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        parts.append(f"{len(missing)} without a certification record in {records} ({', '.join(missing[:5])}{more}): "
                     f"run acx-oci exam certify {directory} --out {records}, or name the records with --certifications")
    return "; ".join(parts)
