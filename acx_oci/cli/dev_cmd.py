"""``acx-oci dev``: helpers for trying acx-oci out, never for attesting anything (a stand-in model provider)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from acx_oci.cli.main import main
from acx_oci.errors import RegistryError, UsageError


@main.group()
def dev() -> None:
    """Development helpers: stand-ins for outside services, to run the docs' walk-throughs offline."""


@dev.command("provider")
@click.option("--suite", "suite_dir", required=True, type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="The suite in exam form whose reference solutions it answers with (tasks/*/prompt.md, "
                   "tasks/*/reference/).")
@click.option("--listen", default="127.0.0.1:11434", show_default=True, help="HOST:PORT to serve on.")
@click.option("--api-key-env", metavar="NAME",
              help="Require 'Authorization: Bearer' with the value of this environment variable (as a "
                   "models file's apiKeyEnv names it). Default: any key.")
@click.option("--model", "models", multiple=True, metavar="ID",
              help="Answer only these model ids (repeatable; default: any).")
@click.option("--max-difficulty", type=float, metavar="D",
              help="Know only the tasks up to this difficulty (benchmark.json); answer the others with no files, "
                   "so their games fail. Default: every task (then every game is won and sigma stays above "
                   "the gate: NOT ISSUED).")
def provider(suite_dir: Path, listen: str, api_key_env: str | None, models: tuple[str, ...],
             max_difficulty: float | None) -> None:
    """Serve a STAND-IN model provider (OpenAI Chat Completions) until interrupted.

    NOT A MODEL: it answers each request for a task of --suite with that task's reference solution, in the
    format the example llm_agent.py reads, so the model-agent walk-through runs where no model can be had.
    A level earned through it says nothing about any model. It speaks POST /v1/chat/completions (not
    streamed) and GET /v1/models; point a models file's baseUrl at http://HOST:PORT/v1.

    \b
    Example:
      acx-oci dev provider --suite ./bench-py --max-difficulty 35 --api-key-env ACME_API_KEY &
    """
    from acx_oci.egress import StandinProvider, SuiteReferenceSolver
    from acx_oci.gateway import parse_listen

    host, port = parse_listen(listen)
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise UsageError(f"--api-key-env {api_key_env}: expected the key in that environment variable, "
                             "found it unset or empty")
    try:
        solver = SuiteReferenceSolver(suite_dir, max_difficulty=max_difficulty)
    except ValueError as exc:
        raise UsageError(f"--suite: {exc}") from None
    try:
        server = StandinProvider((host, port), solver, key=key, models=models)
    except OSError as exc:
        raise RegistryError(f"dev provider: cannot listen on {listen}: {exc.strerror or exc}") from None
    bound = f"{host}:{server.server_address[1]}"
    known = f"{len(solver.tasks) - len(solver.unknown)} of {len(solver.tasks)}" if max_difficulty is not None \
        else str(len(solver.tasks))
    click.echo(f"acx-oci dev provider: STAND-IN, not a model: http://{bound}/v1 answers {known} "
               f"task(s) of {suite_dir} with their reference solutions", err=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


SDK_DIR = "/usr/local/lib/acx-oci-sdk"


@dev.command("install-sdk")
@click.option("--dir", "sdk_dir", default=SDK_DIR, show_default=True, metavar="DIR",
              help="Where to install (the sandbox binds the host's /usr read-only, so /usr/local/lib is visible).")
def install_sdk(sdk_dir: str) -> None:
    """Install the official model SDKs (openai, anthropic; pinned) for /usr/bin/python3, the interpreter the
    sandbox runs, into a directory of their own, off its default sys.path (the grader's pytest sees no new
    plugins); an agent puts DIR first on sys.path. Idempotent: when DIR already has both at the pinned
    versions, it only prints them. Needs write access to DIR's parent (root, or sudo) and the package index.

    \b
    Example:
      acx-oci dev install-sdk      # prints: openai 3.57.0 anthropic 2.15.0 (runs sudo when DIR is not writable)
    """
    import subprocess
    import sys
    from importlib import resources

    if not Path("/usr/bin/python3").exists():
        raise UsageError("dev install-sdk: expected the sandbox's interpreter at /usr/bin/python3, found none "
                         "(install python3 from your distribution)")
    env = {**os.environ, "ACX_SDK_DIR": sdk_dir}
    has_pip = subprocess.run([sys.executable, "-c", "import pip"], capture_output=True).returncode == 0
    if has_pip:  # this interpreter's pip (else python3 on PATH): the wheels need not match its version
        env["PYTHON"] = sys.executable
    with resources.as_file(resources.files("acx_oci.cli") / "install-sdk.sh") as script:
        proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RegistryError(f"dev install-sdk: the SDKs could not be installed into {sdk_dir}: {last}")
    click.echo(proc.stdout.strip())
