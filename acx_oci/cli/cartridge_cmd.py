"""``cartridge init|push``, ``inspect`` and ``pull``."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from acx_oci import reasons
from acx_oci.cli.common import emit_json, json_option, level_state, partial_json, registry_options, store_for
from acx_oci.cli.main import main
from acx_oci.cli.referrers_cmd import ResolveFlags, check_deadline, resolve_loaded_cli, resolve_options
from acx_oci.errors import AcxError, UsageError, VerificationError
from acx_oci.model import parse_capability, parse_model_flag, runtime_digest, runtime_limits, runtime_of
from acx_oci.oci import parse_reference
from acx_oci.services.artifacts import LoadedCartridge, init_directory, load_cartridge, push_directory
from acx_oci.services.consumer import check_output_dir, check_pullable, write_pull
from acx_oci.trust import Trust, load_identity, load_trust


@main.group()
def cartridge() -> None:
    """Create and publish agent cartridges."""


@cartridge.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--id", "cartridge_id", required=True, help="Reverse-DNS id, e.g. io.github.acme/dag-builder.")
@click.option("--version", "version", required=True, help="Semantic version, e.g. 1.0.0.")
@click.option("--controller", metavar="DID", help="Controller DID (default: the DID of the key that signs at push).")
@click.option("--capability", "capabilities", multiple=True, metavar="'TASKTYPE[TOKEN+TOKEN...]@DOMAIN'",
              help="A claimed capability; repeatable. Stack tokens become purls (airflow -> pkg:pypi/apache-airflow).")
@click.option("--runtime", "runtime_cmd", metavar="'COMMAND ARGS...'",
              help="The command a verifier runs for each task (split like a shell; signed into the ROM). "
                   "ROM files are read-only at /rom/<path>, the task at /workspace.")
@click.option("--training-cutoff", metavar="YYYY-MM-DD|none",
              help="The agent's model training cutoff (runtime.model.trainingCutoff): verifiers draw only held-out "
                   "exams published after it. 'none' (the default) for agents with no trained model.")
@click.option("--model", "model_flag", metavar="API:MODEL-ID",
              help="The agent calls a model (runtime.network: model): API is openai-chat, openai-responses or "
                   "anthropic-messages; MODEL-ID the model it is built for. Both are signed into the ROM, so a "
                   "level is a level of this ROM with this model; the verifier's models file says where it lives.")
def cartridge_init(directory: Path, cartridge_id: str, version: str, controller: str | None,
                   capabilities: tuple[str, ...], runtime_cmd: str | None, training_cutoff: str | None,
                   model_flag: str | None) -> None:
    """Write a cartridge directory: cartridge.yaml, skills/, save.json.

    With --runtime, verifiers run the ROM itself (`attest --solver rom`): put the
    agent under skills/ (skills/agent.py is /rom/skills/agent.py inside the
    sandbox); edit cartridge.yaml's runtime.limits and runtime.env as needed.

    \b
    Example:
      acx-oci cartridge init ./dag-agent --id io.github.acme/dag-agent --version 1.0.0 \\
          --capability 'build-dag[snowflake+airflow+dbt]@data-engineering' \\
          --runtime 'python3 /rom/skills/agent.py'
    """
    caps = [parse_capability(c) for c in capabilities]
    runtime: dict[str, Any] | None = None
    if runtime_cmd is not None:
        try:
            argv = shlex.split(runtime_cmd)
        except ValueError as exc:
            raise UsageError(f"--runtime: expected a command line, found unbalanced quoting ({exc})") from None
        if not argv:
            raise UsageError("--runtime: expected a command, found an empty string")
        runtime = {"command": argv, "network": "none"}
    if training_cutoff is not None:
        if runtime is None:
            raise UsageError("--training-cutoff describes the runtime's model: it needs --runtime")
        runtime["model"] = {"trainingCutoff": training_cutoff}
    if model_flag is not None:
        if runtime is None:
            raise UsageError("--model describes what the runtime calls: it needs --runtime")
        try:
            declared = parse_model_flag(model_flag)
        except ValueError as exc:
            raise UsageError(f"--model: {exc}") from None
        runtime["network"] = "model"
        runtime["model"] = {**(runtime.get("model") or {}), **declared.to_json()}
    init_directory(directory, cartridge_id, version, caps, controller, runtime)
    click.echo(f"wrote {directory}/cartridge.yaml with {len(caps)} capability claim(s)")
    for c in caps:
        click.echo(f"  - {c.display()}  verified=false")


@cartridge.command("push")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("ref")
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Publisher key (PREFIX.key or a Multikey key-pair JSON); signs the ROM.")
@registry_options
@json_option
def cartridge_push(directory: Path, ref: str, key: Path, plain_http: bool, insecure: bool, timeout: float,
                   as_json: bool) -> None:
    """Sign the ROM and push DIRECTORY as an OCI artifact to REF.

    REF is HOST[:PORT]/REPO[:TAG] or oci:PATH[:TAG] (tag defaults to latest).

    \b
    Example:
      acx-oci cartridge push ./agent registry.example/acme/dag-agent:1.0.0 --key keys/publisher.key
      acx-oci cartridge push ./agent oci:./layout:1.0.0 --key keys/publisher.key --json
    """
    signer = load_identity(key)
    reference = parse_reference(ref)
    if reference.digest:
        raise UsageError(f"cartridge push: expected a tag, not a digest, in {ref!r}")
    store = store_for(ref, plain_http, insecure, timeout)
    pushed = push_directory(store, directory, signer, reference.tag or "latest")
    if as_json:
        emit_json({"manifestDigest": pushed.manifest_digest, "romDigest": pushed.rom_digest,
                   "reference": pushed.reference, "controller": pushed.controller, "signer": pushed.signer})
    else:
        click.echo(f"pushed {pushed.reference}")
        click.echo(f"  manifest digest: {pushed.manifest_digest}")
        click.echo(f"  ROM digest:      {pushed.rom_digest}")
        click.echo(f"  signed by:       {pushed.signer}")


def _trust(path: Path | None) -> Trust | None:
    return load_trust(path) if path else None


def card(loaded: LoadedCartridge) -> dict[str, Any]:
    """The discovery card as JSON (claims only; see ``resolve`` for verified proficiency)."""
    runtime = runtime_of(loaded.rom)
    return {
        "id": loaded.id,
        "version": loaded.version,
        "controller": loaded.controller,
        "romDigest": loaded.rom_digest,
        "manifestDigest": loaded.manifest.digest,
        "signature": {"status": loaded.signature_status, "signer": loaded.signer,
                      "reason": "; ".join(loaded.problems) or loaded.signature.reason},
        "capabilities": [
            {"id": c.id, "display": c.display(), "taskType": c.task_type, "stack": list(c.stack),
             "domain": c.domain, "verified": False}
            for c in loaded.capabilities
        ],
        "runtime": None if runtime is None else {**runtime, "runtimeDigest": runtime_digest(runtime),
                                                 "effectiveLimits": runtime_limits(runtime)},
    }


@main.command()
@click.argument("ref")
@click.option("--trust", "trust_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Trust file (YAML/JSON) naming trusted publishers.")
@registry_options
@json_option
def inspect(ref: str, trust_path: Path | None, plain_http: bool, insecure: bool, timeout: float,
            as_json: bool) -> None:
    """Show a cartridge's discovery card: identity, digests, signature status, claims.

    Signature status: intact, trusted (--json: valid); intact, untrusted (the
    signer is not in your trust file; --json: warning); tampered (exit 1); unsigned.

    \b
    Example:
      acx-oci inspect registry.example/acme/dag-agent:1.0.0 --trust trust.yaml
      acx-oci inspect oci:./layout@sha256:<digest> --json
    """
    trust = _trust(trust_path)
    store = store_for(ref, plain_http, insecure, timeout)
    loaded = load_cartridge(store, parse_reference(ref).target, trust)
    info = card(loaded)
    if as_json:
        emit_json(info)
    else:
        click.echo(f"== cartridge {loaded.id}@{loaded.version} ==")
        click.echo(f"  controller:      {loaded.controller}")
        click.echo(f"  ROM digest:      {loaded.rom_digest}")
        click.echo(f"  manifest digest: {loaded.manifest.digest}")
        click.echo(f"  signature:       {loaded.status_display} ({info['signature']['reason']})")
        rt = info["runtime"]
        if rt is None:
            click.echo("  runtime:         none (a verifier cannot run this ROM; only simulated levels)")
        else:
            click.echo(f"  runtime:         {shlex.join(rt['command'])}  (network {rt.get('network', 'none')}, "
                       f"{rt['runtimeDigest'][:19]}…)")
            if rt.get("network") == "model":
                m = rt.get("model") or {}
                click.echo(f"  model:           {m.get('id')} over {m.get('api')} (through the verifier's proxy)")
        click.echo("== capabilities ==")
        for c in loaded.capabilities:
            click.echo(f"  - {c.display()}  verified=false")
    if loaded.signature_status == reasons.TAMPERED:
        raise SystemExit(1)


@main.command()
@click.argument("ref")
@click.option("-o", "--output", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write the cartridge into (must be empty or absent).")
@click.option("--trust", "trust_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Trust file: trusted publishers and verifiers, accepted benchmarks.")
@click.option("--require", "requirements", multiple=True, metavar="'TASKTYPE>=TIER'",
              help="Refuse (exit 1, write nothing) unless this claim resolves VERIFIED at this tier or level.")
@click.option("--allow-unsigned", is_flag=True, help="Accept a cartridge without a ROM signature.")
@resolve_options
@registry_options
@json_option
def pull(ref: str, out: Path, trust_path: Path | None, requirements: tuple[str, ...], allow_unsigned: bool,
         flags: ResolveFlags, plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """Pull a cartridge with its verified capabilities, digest- and signature-checked.

    Writes the cartridge directory (cartridge.yaml, skills/, save.json, rom.json),
    verified-capabilities.json (the resolution) and credentials/ (the credentials
    it relied on).

    \b
    Example:
      acx-oci pull registry.example/acx/dag-agent:1.0.0 -o ./agent --trust trust.yaml \\
          --require 'build-dag>=senior'
    """
    failed: dict[str, Any] = {"pulled": False, "reference": ref}
    try:
        loaded, resolution, written = _pull(ref, out, trust_path, requirements, allow_unsigned, flags, plain_http,
                                            insecure, timeout, failed)
    except AcxError as exc:
        # --json: what is known so far goes into the failure document (the group adds code and message)
        partial_json({**failed, "error": {"code": exc.code, "message": str(exc), "exitCode": exc.exit_code}})
        raise
    if as_json:
        emit_json({**card(loaded), "pulled": True, "output": str(out), "files": [str(p) for p in written],
                   "resolution": resolution.to_json()})
    else:
        click.echo(f"pulled {loaded.id}@{loaded.version} ({loaded.manifest.digest}) into {out}")
        click.echo(f"  signature: {loaded.status_display}")
        for cap in resolution.capabilities:
            b = cap.best
            state = f"{level_state(b.solver)} tier={b.career_tier} level={b.acx_level}" if b else "NOT VERIFIED"
            click.echo(f"  {cap.capability.display()}  {state}")
        if not resolution.replayed:
            click.echo("  note: replay was off (--no-replay): levels were believed as signed, not re-derived "
                       "from the game records (weaker)")


def _pull(ref: str, out: Path, trust_path: Path | None, requirements: tuple[str, ...], allow_unsigned: bool,
          flags: ResolveFlags, plain_http: bool, insecure: bool, timeout: float,
          failed: dict[str, Any]) -> tuple[LoadedCartridge, Any, list[Path]]:
    """Everything ``pull`` checks, then the write; what is known so far goes into ``failed`` for --json."""
    from datetime import UTC, datetime

    from acx_oci.evaluation import parse_require, unmet

    required = [parse_require(text) for text in requirements]  # parsed once, before any network
    if requirements and trust_path is None:
        raise UsageError("pull: --require needs --trust (whose verifiers and benchmarks count)")
    trust = load_trust(trust_path) if trust_path else Trust.empty()
    check_output_dir(out)
    store = store_for(ref, plain_http, insecure, timeout)
    loaded = load_cartridge(store, parse_reference(ref).target, trust)
    failed.update(manifestDigest=loaded.manifest.digest, signature=loaded.signature_status)
    check_pullable(loaded, ref, allow_unsigned)
    resolution = resolve_loaded_cli(store, loaded, ref, trust, flags)
    check_deadline(resolution, "pull: nothing written")
    failures = unmet(resolution, required, datetime.now(UTC))
    if failures:
        failed.update(requirements={"required": list(requirements), "unmet": failures},
                      resolution=resolution.to_json())
        raise VerificationError("pull: requirement not met, nothing written: " + "; ".join(failures))
    return loaded, resolution, write_pull(store, loaded, resolution, out)
