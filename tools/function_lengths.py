#!/usr/bin/env python3
"""Lists C++ function definitions longer than a limit.

Usage: tools/function_lengths.py [-n N] [PATH ...]

Prints `path:line length name` for every function definition in the given
files or folders (default: proxy engine policies conf common) whose length
exceeds N lines (default 80), and exits 1 if there is any, else 0.

Length counts from the line holding the function's name to the line of its
closing brace, both included. Lambdas, local classes and nested blocks count
toward the enclosing function. Member functions defined inside a class are
named Class::member; out-of-class definitions keep their qualified name.

A standard-library-only scanner rather than a parser: comments, string and
character literals (raw strings included) and preprocessor lines are blanked
first, and only the first branch of an #if/#ifdef chain is kept (the #else
branch of `#if 0`). Code that hides braces or signatures behind macros can
fool it.
"""

import argparse
import os
import re
import sys

DEFAULT_DIRS = ["proxy", "engine", "policies", "conf", "common"]
EXTENSIONS = (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h", ".hxx", ".ipp", ".inl", ".cu", ".cuh")

IDENT_START = re.compile(r"[A-Za-z_]")
LITERAL_PREFIXES = {"", "u8", "u", "U", "L"}


# ---------------------------------------------------------------------------
# Cleaning: blank everything that is not code, keeping offsets and newlines.


def _blank(chars, start, end):
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def strip_literals_and_comments(text):
    """Blanks comments and literal contents (quotes stay), same length."""
    chars = list(text)
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            # A backslash-newline continues a // comment.
            while end < n and end > 0 and text[end - 1] == "\\":
                nxt = text.find("\n", end + 1)
                end = n if nxt < 0 else nxt
            _blank(chars, i, end)
            i = end
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            _blank(chars, i, end)
            i = end
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            # pp-number, so that digit separators (1'000) are not char literals.
            j = i + 1
            while j < n:
                d = text[j]
                if d in "eEpP" and j + 1 < n and text[j + 1] in "+-":
                    j += 2
                elif d.isalnum() or d in "_.'":
                    j += 1
                else:
                    break
            i = j
        elif IDENT_START.match(c):
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if j < n and text[j] == '"' and word.endswith("R") and word[:-1] in LITERAL_PREFIXES:
                i = _skip_raw_string(text, chars, j)
            elif j < n and text[j] in "\"'" and word in LITERAL_PREFIXES:
                i = _skip_quoted(text, chars, j)
            else:
                i = j
        elif c in "\"'":
            i = _skip_quoted(text, chars, i)
        else:
            i += 1
    return "".join(chars)


def _skip_quoted(text, chars, i):
    quote = text[i]
    n = len(text)
    j = i + 1
    while j < n and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    end = min(j, n)
    _blank(chars, i + 1, end)
    return end + 1


def _skip_raw_string(text, chars, i):
    # text[i] is the opening quote of R"delim( ... )delim".
    paren = text.find("(", i)
    if paren < 0:
        return i + 1
    delim = text[i + 1:paren]
    close = text.find(")" + delim + '"', paren)
    end = len(text) if close < 0 else close + len(delim) + 1
    _blank(chars, i + 1, end)
    return end + 1


DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w*)(.*)")


def strip_preprocessor(text):
    """Blanks directive lines and all but one branch of each conditional."""
    lines = text.split("\n")
    # Join backslash continuations logically: a directive's continuation
    # lines are blanked with it.
    out = []
    # Stack of [keeping_this_branch, a_branch_was_taken, parent_keeping].
    stack = []
    keeping = True
    i = 0
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.match(line)
        if m:
            span = 1
            while lines[i + span - 1].endswith("\\") and i + span < len(lines):
                span += 1
            word, rest = m.group(1), m.group(2).strip()
            if word in ("if", "ifdef", "ifndef"):
                take = not (word == "if" and rest == "0")
                stack.append([keeping, take])
                keeping = keeping and take
            elif word in ("elif", "else") and stack:
                parent, taken = stack[-1]
                take = not taken and word == "else"
                stack[-1][1] = taken or take
                keeping = parent and take
            elif word == "endif" and stack:
                keeping = stack.pop()[0]
            out.extend([""] * span)
            i += span
            continue
        out.append(line if keeping else "")
        i += 1
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Scanning.

NS_RE = re.compile(r"\s*(inline\s+)?namespace\b|\s*extern\s*\"[^\"]*\"\s*$")  # extern "C" {
CLASS_RE = re.compile(r"\s*(?:typedef\s+)?(class|struct|union)\b")
ENUM_RE = re.compile(r"\s*enum\b")
ACCESS_RE = re.compile(r"\s*(public|private|protected)\s*:(?!:)")
NOT_A_NAME = {"decltype", "alignas", "__attribute__", "__declspec", "noexcept", "throw", "sizeof",
              "alignof", "if", "for", "while", "switch", "return", "static_assert", "typeid"}
QUALIFIERS = re.compile(
    r"(\s*(const|volatile|noexcept\s*\(\s*\)|noexcept|override|final|mutable|try"
    r"|&&|&|throw\s*\(\s*\)))*\s*")
NAME_BEFORE_PAREN = re.compile(
    r"((?:[A-Za-z_]\w*\s*(?:<[^(){};]*>)?\s*::\s*)*"
    r"(?:~\s*[A-Za-z_]\w*|operator\s*(?:\(\s*\)|\[\s*\]|[^\w\s(]+|\s[\w\s:<>*&]+?)|[A-Za-z_]\w*))\s*$")


def blank_groups(s, open_c, close_c):
    """Blanks the insides of balanced open_c..close_c groups (top level)."""
    chars = list(s)
    depth = 0
    for i, c in enumerate(s):
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
        if c == "\n" or (depth == 1 and c == open_c) or (depth == 0 and c == close_c):
            continue
        if depth > 0:
            chars[i] = " "
    return "".join(chars)


def blank_template_headers(s):
    """Blanks `template <...>` headers (angle brackets balanced outside
    parentheses)."""
    chars = list(s)
    for m in re.finditer(r"\btemplate\s*<", s):
        depth = 0
        paren = 0
        j = m.end() - 1
        while j < len(s):
            if s[j] == "(":
                paren += 1
            elif s[j] == ")":
                paren -= 1
            elif paren > 0:
                pass
            elif s[j] == "<":
                depth += 1
            elif s[j] == ">" and s[j - 1] != "-":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        _blank(chars, m.start(), min(j + 1, len(s)))
    return "".join(chars)


def paren_groups(s):
    """(open, close) index pairs of the top-level parentheses of s."""
    groups, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                groups.append((start, i))
    return groups


def top_level_assignment(s):
    """Index of a top-level `=` that is an assignment/initializer, or -1."""
    depth = 0
    for i, c in enumerate(s):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "=" and depth == 0:
            prev = s[i - 1] if i else ""
            nxt = s[i + 1] if i + 1 < len(s) else ""
            if prev in "=!<>+-*/%&|^" or nxt == "=":
                continue
            if re.search(r"\boperator\s*$", s[:i]):
                continue
            return i
    return -1


def classify(prefix):
    """Classifies the text before a `{` at namespace or class scope.

    Returns (kind, name, name_offset); kind is one of "ns", "class", "func",
    "meminit" (a brace member initializer of a constructor: not a body) or
    "other" (an enum or a braced initializer).
    """
    s = blank_groups(prefix, "{", "}")
    s = blank_template_headers(s)
    s = re.sub(r"\[\[.*?\]\]", lambda m: " " * len(m.group(0)), s, flags=re.S)
    while True:
        m = ACCESS_RE.match(s)
        if not m:
            break
        s = " " * m.end() + s[m.end():]
    if ENUM_RE.match(s):
        return "other", "", 0
    if NS_RE.match(s):
        return "ns", "", 0
    eq = top_level_assignment(s)
    if eq >= 0:
        rhs = s[eq + 1:].lstrip()
        lhs = re.search(r"([A-Za-z_]\w*)\s*$", s[:eq])
        if rhs.startswith("[") and lhs:
            return "func", lhs.group(1), lhs.start(1)  # a lambda bound to a name
        return "other", "", 0
    for open_i, close_i in paren_groups(s):
        before = s[:open_i]
        m = NAME_BEFORE_PAREN.search(before)
        if not m:
            continue
        name = re.sub(r"\s*(::|~|<|>|\(|\))\s*", r"\1", re.sub(r"\s+", " ", m.group(1).strip()))
        last = re.split(r"::", name)[-1]
        if last in NOT_A_NAME or name == "operator":
            continue
        rest = blank_groups(s[close_i + 1:], "(", ")")  # noexcept(...) -> noexcept( )
        q = QUALIFIERS.match(rest)
        tail = rest[q.end():]
        if tail == "" or tail.startswith("->"):
            return "func", name, m.start(1)
        if tail.startswith(":") and not tail.startswith("::"):
            # Constructor: `{` ends the member-initializer list only after
            # a complete initializer, `)` or `}`.
            if s.rstrip()[-1:] in (")", "}"):
                return "func", name, m.start(1)
            return "meminit", "", 0
    m = CLASS_RE.match(s)
    if m:
        rest = s[m.end():]
        rest = re.sub(r"\b(alignas|__declspec|__attribute__)\s*\(", " (", rest)
        rest = blank_groups(rest, "(", ")").replace("(", " ").replace(")", " ")
        nm = re.match(r"\s*([A-Za-z_][\w:]*(?:\s*<[^{]*?>)?)", rest)
        name = re.sub(r"\s+", "", nm.group(1)) if nm else ""
        if name in ("final",):
            name = ""
        return "class", name, 0
    return "other", "", 0


class Scanner:
    def __init__(self, path, text):
        self.path = path
        self.text = text
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.functions = []  # (line, length, name)

    def line_of(self, pos):
        lo, hi = 0, len(self.line_starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if self.line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid
        return lo + 1

    def skip_group(self, pos):
        """pos is at `{`; returns the index just past its matching `}`."""
        depth = 0
        text = self.text
        n = len(text)
        while pos < n:
            c = text[pos]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return pos + 1
            pos += 1
        return n

    def scan(self, pos=0, owners=(), top=True):
        """Scans a namespace/class scope (the file when top) from pos;
        returns the index just past its closing `}` (or the end of the text)."""
        text = self.text
        n = len(text)
        start = pos
        paren = 0
        while pos < n:
            c = text[pos]
            if c == "(":
                paren += 1
            elif c == ")":
                paren = max(0, paren - 1)
            elif c == ";" and paren == 0:
                start = pos + 1
            elif c == "}":
                if not top:
                    return pos + 1
                start = pos + 1  # a stray `}` at file scope (macros): skip it
            elif c == "{":
                if paren > 0:
                    pos = self.skip_group(pos)
                    continue
                kind, name, offset = classify(text[start:pos])
                if kind == "meminit":
                    pos = self.skip_group(pos)
                    continue
                if kind == "func":
                    end = self.skip_group(pos)
                    first = self.line_of(start + offset)
                    last = self.line_of(end - 1)
                    full = "::".join([o for o in owners if o] + [name]) if "::" not in name else name
                    self.functions.append((first, last - first + 1, full))
                    pos = start = end
                    continue
                if kind in ("ns", "class"):
                    inner = owners + (name,) if kind == "class" else owners
                    pos = start = self.scan(pos + 1, inner, top=False)
                    continue
                pos = start = self.skip_group(pos)
                continue
            pos += 1
        return n


def scan_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        raw = f.read()
    text = strip_preprocessor(strip_literals_and_comments(raw))
    scanner = Scanner(path, text)
    scanner.scan()
    return scanner.functions


def source_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(root, name)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--max-lines", type=int, default=80,
                    help="report functions longer than this (default 80)")
    ap.add_argument("paths", nargs="*", help="files or folders (default: %s)" % " ".join(DEFAULT_DIRS))
    args = ap.parse_args(argv)
    paths = args.paths or [d for d in DEFAULT_DIRS if os.path.exists(d)]
    found = 0
    for path in source_files(paths):
        for line, length, name in scan_file(path):
            if length > args.max_lines:
                print("%s:%d %d %s" % (path, line, length, name))
                found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
