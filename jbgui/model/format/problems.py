"""What a reader found wrong with a file, said once, in a shape both ``jbtrace check`` (which adds
a severity) and the loaders (which keep the text) can use."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One fault of one file. ``text`` is the message without the file's name; ``code`` is what
    ``jbtrace check`` calls the fault; ``line``/``offset`` say where."""

    file: str
    text: str
    code: str
    line: int | None = None
    offset: int | None = None
    thread: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else f"offset {self.offset}: " \
            if self.offset is not None else ""
        return f"{self.file}: {where}{self.text}"
