#!/usr/bin/env python3
"""Lists C++ functions longer than a line limit.

    python3 scripts/function_lengths.py [--limit 80] [--all] PATH...

PATH is a file or a directory (searched recursively for .cpp .cc .cxx .h .hpp). Prints
"file:line: name: N lines" for every function body longer than --limit lines (--all: every
function, longest first) and exits with 1 if any function is over the limit, else 0.

A heuristic scanner, not a parser: comments, string and character literals (raw strings too)
and preprocessor lines are blanked out, then braces are matched. Namespaces, extern "C" and
class/struct/union bodies are entered; a brace whose header has a parameter list is a function
body and is measured from the first line of its header (template line included) to its closing
brace. Lambdas and local classes count towards the function that holds them. Constructor
initializer lists with braces (`x_{0}`) are recognised; macros that expand to function
definitions are not.
"""
import argparse
import os
import re
import sys

EXTENSIONS = (".cpp", ".cc", ".cxx", ".h", ".hpp")
SCOPE_RE = re.compile(r'^(template\s*<.*>\s*)?(inline\s+)?(namespace\b|extern\s*"\s*")', re.S)
CLASS_RE = re.compile(r"^(template\s*<.*>\s*)?(class|struct|union)\b", re.S)
ENUM_RE = re.compile(r"^(typedef\s+)?enum\b")
NAME_RE = re.compile(r"(~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*|operator\s*[^\s(]+(?:\s*\(\s*\))?)\s*$")


def blank(text):
    """Replaces comments, literals and preprocessor lines by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # preprocessor line, with backslash continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def matching(text, i, open_ch, close_ch):
    """Index just past the bracket that closes the one at text[i]."""
    depth = 0
    while i < len(text):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def parameter_list(header):
    """(start, end) of the first top-level parenthesised group of a header, or None."""
    depth = 0
    for k, ch in enumerate(header):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth > 0:
            depth -= 1
        elif ch == "(":
            return k, matching(header, k, "(", ")")
    return None


def function_name(header, params):
    before = header[:params[0]]
    m = NAME_RE.search(before)
    name = re.sub(r"\s+", "", m.group(1)) if m else "?"
    if re.fullmatch(r"[A-Z][A-Z0-9_]{2,}", name):  # TEST(Suite, Name) and other macros: keep the arguments
        name += re.sub(r"\s+", " ", header[params[0]:params[1]])
    return name


def is_function_header(header):
    params = parameter_list(header)
    if params is None or header.endswith("="):  # `T x[(int)N] = {...}` is an initializer
        return None
    before = header[:params[0]]
    if "=" in before.replace("operator=", "").replace("operator==", ""):
        return None  # `auto f = [](...) {`, `Foo x = Make(...) {` ...
    if re.search(r"\b(if|for|while|switch|return|catch)\s*$", before):
        return None
    return params


def scan(text, line_of):
    """Yields (line, name, length) for every function body in text."""
    i, n = 0, len(text)
    header_start = 0
    stack = []  # 'scope' entries for namespaces / classes entered
    while i < n:
        c = text[i]
        if c in ";":
            header_start = i + 1
        elif c == "}":
            if stack:
                stack.pop()
            header_start = i + 1
        elif c == "{":
            header = text[header_start:i].strip()
            if SCOPE_RE.match(header) or CLASS_RE.match(header) and "(" not in header.split("{")[0]:
                stack.append("scope")
                header_start = i + 1
            elif ENUM_RE.match(header):
                i = matching(text, i, "{", "}")
                header_start = i
                continue
            else:
                params = is_function_header(header)
                tail = header[params[1]:] if params else ""
                init_list = params and re.search(r"(?<!:):(?!:)", tail)
                prev = text[header_start:i].rstrip()[-1:]
                if params and init_list and (prev.isalnum() or prev in "_>"):
                    i = matching(text, i, "{", "}")  # brace initializer inside a constructor's init list
                    continue
                end = matching(text, i, "{", "}")
                if params:
                    first = header_start + (len(text[header_start:i]) - len(text[header_start:i].lstrip()))
                    start_line, end_line = line_of(first), line_of(end - 1)
                    yield start_line, function_name(header, params), end_line - start_line + 1
                    header_start = end
                # a brace initializer (`int a[] = {...}`): keep reading the same declaration
                i = end
                continue
        i += 1


def line_counter(text):
    starts = [0] + [k + 1 for k, ch in enumerate(text) if ch == "\n"]

    def line_of(pos):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    return line_of


def files_under(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for name in sorted(names):
                    if name.endswith(EXTENSIONS):
                        yield os.path.join(root, name)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="files or directories")
    ap.add_argument("--limit", type=int, default=80, help="longest allowed function, in lines (default 80)")
    ap.add_argument("--all", action="store_true", help="list every function, longest first")
    args = ap.parse_args()
    found = []
    for path in files_under(args.paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = blank(f.read())
        for line, name, length in scan(text, line_counter(text)):
            found.append((length, path, line, name))
    found.sort(key=lambda r: (-r[0], r[1], r[2]))
    over = [r for r in found if r[0] > args.limit]
    for length, path, line, name in found if args.all else over:
        mark = "  over the limit" if length > args.limit else ""
        print(f"{path}:{line}: {name}: {length} lines{mark}")
    print(f"{len(found)} functions, {len(over)} longer than {args.limit} lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
