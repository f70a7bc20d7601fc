#!/usr/bin/env python3
"""Counts Rust code lines: not blank, not only a comment, outside `#[cfg(test)]` items.

Usage: scripts/count-code-lines.py FILE...   (prints each file's count and the total)

A line counts when, after removing `//` comments and `/* */` blocks, something other
than whitespace is left. An item under `#[cfg(test)]` (a `mod tests { ... }`, a test-only
fn or impl) is skipped up to its closing brace. String literals are honoured, so `//`
inside a string does not start a comment.
"""
import sys


def code_lines(text):
    """The lines of `text` with comments removed (one entry per source line)."""
    out, line, i, n = [], [], 0, len(text)
    block = 0
    while i < n:
        c = text[i]
        if c == "\n":
            out.append("".join(line))
            line = []
            i += 1
        elif block:
            if text.startswith("*/", i):
                block -= 1
                i += 2
            elif text.startswith("/*", i):
                block += 1
                i += 2
            else:
                i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            block = 1
            i += 2
        elif c == '"' or (c == "r" and text.startswith(('r"', 'r#"'), i)):
            # A string literal (raw or not): copied, newlines kept as line breaks.
            if c == "r":
                hashes = 0
                j = i + 1
                while text[j] == "#":
                    hashes += 1
                    j += 1
                end = '"' + "#" * hashes
                j += 1
                k = text.index(end, j)
                chunk = text[i : k + len(end)]
                i = k + len(end)
            else:
                j = i + 1
                while text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                chunk = text[i : j + 1]
                i = j + 1
            parts = chunk.split("\n")
            line.append(parts[0])
            for p in parts[1:]:
                out.append("".join(line))
                line = [p]
        elif c == "'" and i + 2 < n and (text[i + 1] == "\\" or text[i + 2] == "'"):
            # A char literal ('"', '\'', '{'): copied whole.
            j = text.index("'", i + 2 if text[i + 1] == "\\" else i + 1)
            if text[i + 1] == "\\" and text[i + 2] == "'":
                j = text.index("'", i + 3)
            line.append(text[i : j + 1])
            i = j + 1
        else:
            line.append(c)
            i += 1
    out.append("".join(line))
    return out


def count(text):
    lines = code_lines(text)
    total, skip_depth, pending_test = 0, None, False
    depth = 0
    for raw in lines:
        s = raw.strip()
        if not s:
            continue
        if skip_depth is not None:
            depth += s.count("{") - s.count("}")
            if depth <= skip_depth:
                skip_depth = None
            continue
        if s.startswith("#[cfg(test)]"):
            pending_test = True
            continue
        if pending_test:
            if s.startswith("#["):
                continue
            pending_test = False
            opened = s.count("{") - s.count("}")
            if opened > 0:
                skip_depth = depth
                depth += opened
            # A one-line item (`mod tests;`, `use ...;`) is skipped by itself.
            continue
        depth += s.count("{") - s.count("}")
        total += 1
    return total


def main():
    grand = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            c = count(f.read())
        grand += c
        print(f"{c:6} {path}")
    print(f"{grand:6} total")


if __name__ == "__main__":
    main()
