"""Status lines and progress bars on stderr (rich), silenced by ``quiet``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Reporter:
    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self._console = None
        if not quiet:
            from rich.console import Console

            self._console = Console(stderr=True)

    def status(self, message: str) -> None:
        if self._console is not None:
            self._console.print(f"[dim]release:[/dim] {message}", highlight=False)

    @contextmanager
    def progress(self, label: str) -> Iterator[Callable[[int, int], None]]:
        """Yield ``tick(done, total)``; shows a rich progress bar unless quiet."""
        if self._console is None:
            yield lambda done, total: None
            return
        if not self._console.is_terminal:  # logs / CI: one status line instead of a redrawn bar
            seen = [0]

            def count(done: int, total: int) -> None:
                seen[0] = total

            yield count
            self.status(f"{label}: {seen[0]} rows checked")
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("[dim]release:[/dim] " + label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self._console,
            transient=True,
        ) as bar:
            task = bar.add_task(label, total=None)

            def tick(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            yield tick
