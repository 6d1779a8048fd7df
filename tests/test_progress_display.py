"""The attest progress display: games and uploads are separate bars (rich, on stderr)."""

from __future__ import annotations

from acx_oci.cli.progress import ProgressDisplay


def test_games_then_upload_are_two_phases() -> None:
    shown = ProgressDisplay()
    shown(1, 90, "pass  mu=25.00 sigma=8.00")
    shown(90, 90, "pass  mu=33.00 sigma=1.20")
    shown(1, 91, "uploaded credential.json")
    shown(91, 91, "uploaded game-0090.dsse.json")
    try:
        tasks = {t.fields["phase"]: t for t in shown._bar.tasks}
        assert set(tasks) == {"games", "upload"}
        assert (tasks["games"].completed, tasks["games"].total) == (90, 90)
        assert (tasks["upload"].completed, tasks["upload"].total) == (91, 91)
        assert tasks["upload"].description == "uploaded game-0090.dsse.json"
    finally:
        shown.stop()
