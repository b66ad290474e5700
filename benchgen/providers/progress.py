"""Progress bar for runs (rich): items done, rate, ETA, accepted count and spend.

Rendered on stderr and refreshed by rich's own thread a few times a second, so ``update`` is a
cheap attribute write per item. ``quiet=True`` shows nothing; the final summary line is still
printed unless quiet.
"""

from __future__ import annotations

import sys
from typing import Any


class RunProgress:
    """A thin wrapper so the runner does not depend on rich's API details."""

    def __init__(self, stage: str, *, total: int | None, quiet: bool = False, done_before: int = 0) -> None:
        self.quiet = quiet
        self._progress: Any = None
        self._task: Any = None
        if quiet:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("accepted {task.fields[accepted]}  ${task.fields[spend]:.4f}"),
            console=self._console,
            refresh_per_second=4,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            stage, total=total, completed=done_before, rate=0.0, accepted=0, spend=0.0
        )
        self._done_before = done_before

    def update(self, summary: Any) -> None:
        if self._progress is None:
            return
        task = self._progress.tasks[0]
        elapsed = task.elapsed or 0.0
        rate = summary.written / elapsed if elapsed > 0 else 0.0
        self._progress.update(
            self._task,
            completed=self._done_before + summary.written,
            rate=rate,
            accepted=summary.accepted,
            spend=summary.cost_usd,
        )

    def close(self, summary: Any) -> None:
        if self._progress is None:
            return
        self.update(summary)
        self._progress.stop()
        failed = ", ".join(f"{k} {v}" for k, v in sorted(summary.failed.items())) or "none"
        print(
            f"{summary.stage}: {summary.written} written ({summary.skipped} already done), "
            f"{summary.ok} ok, {summary.accepted} accepted, failed: {failed}; {summary.calls} calls, "
            f"{summary.cached} cached, {summary.input_tokens}+{summary.output_tokens} tokens, "
            f"${summary.cost_usd:.4f}, {summary.elapsed_s:.1f}s",
            file=sys.stderr,
        )
