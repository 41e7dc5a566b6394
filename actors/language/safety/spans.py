"""Found spans of a text replaced by markers: the one splice that secrets and prompt injection share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: a span of the text and what was found there
Span = tuple[int, int, str]


@dataclass(slots=True)
class _Group:
    """Overlapping spans, replaced by one marker named by the longest of them."""

    start: int
    end: int
    finding: str
    named_by: int  # the length of the span that named it

    def absorb(self, start: int, end: int, finding: str, weakest: str | None) -> None:
        longer = end - start > self.named_by
        if longer or (end - start == self.named_by and self.finding == weakest):
            self.finding, self.named_by = finding, end - start
        self.end = max(self.end, end)


def splice(
    text: str, spans: Iterable[Span], marker: Callable[[str], str], weakest: str | None = None
) -> tuple[str, list[str]]:
    """``text`` with each group of overlapping spans replaced by one ``marker``, named by the group's longest
    span (of two as long, the first, unless its finding is ``weakest``: a checked number names a span that
    is also a random-looking run), and the groups' findings in order, each once. A group covers all of its
    spans, so no part of a finding is left in the text."""
    groups: list[_Group] = []
    for start, end, finding in sorted(spans):
        if groups and start < groups[-1].end:
            groups[-1].absorb(start, end, finding, weakest)
        else:
            groups.append(_Group(start, end, finding, end - start))
    pieces, last, findings = [], 0, []
    for group in groups:
        pieces += [text[last : group.start], marker(group.finding)]
        last = group.end
        if group.finding not in findings:
            findings.append(group.finding)
    pieces.append(text[last:])
    return "".join(pieces), findings
