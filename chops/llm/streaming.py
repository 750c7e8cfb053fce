"""Streaming one string field out of a JSON reply while the model is still writing it.

A structured answer arrives as ``{"source":2,"answer":"You can upload until …"}``; the user should
see the answer's words as they are generated, not the JSON around them. ``JsonStringField`` is fed
the raw pieces and hands on the decoded text of one top-level string field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')


class JsonStringField:
    """Feed raw JSON pieces with ``feed``; ``sink`` receives the decoded value of ``key`` in order.

    Works on compact and indented JSON. Assumes the key occurs once at the top level before its value
    (a string containing the same ``"key":`` text earlier would be mistaken for it: the pipeline's
    schemas put no other free text before the streamed field).
    """

    def __init__(self, key: str, sink: Callable[[str], None]):
        """Stream the string value of ``key`` to ``sink``."""
        self._opener = re.compile(r'"' + re.escape(key) + r'"\s*:\s*"')
        self._sink = sink
        self._buffer = ""  # text not yet handed on: before the value, or an incomplete escape
        self._inside = False
        self._done = False

    def feed(self, piece: str) -> None:
        """Take the next piece of the reply."""
        if self._done:
            return
        self._buffer += piece
        if not self._inside:
            match = self._opener.search(self._buffer)
            if match is None:
                return
            self._inside, self._buffer = True, self._buffer[match.end():]
        self._drain()

    def _drain(self) -> None:
        out, i, buf = [], 0, self._buffer
        while i < len(buf):
            ch = buf[i]
            if ch == '"':
                self._done = True
                break
            if ch == "\\":
                match = _ESCAPE.match(buf, i)
                if match is None:
                    break  # the escape is not complete yet: wait for the next piece
                out.append(json.loads(f'"{match.group(0)}"'))
                i = match.end()
                continue
            out.append(ch)
            i += 1
        self._buffer = "" if self._done else buf[i:]
        if out:
            self._sink("".join(out))
