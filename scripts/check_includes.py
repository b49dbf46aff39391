#!/usr/bin/env python3
"""Include boundary check: every `#include "x/..."` must follow an allowed component edge.

The table below is the component graph of /README.md ("What is in the box") and the top-level
CMakeLists.txt comment. A file belongs to the component its path names (longest prefix in
COMPONENT_PREFIXES); an include of another component's header is allowed only when the
including component lists it in ALLOWED (a component may always include itself). Includes that
name no component of ours (absl/, gtest/, google/, imgui ...) are not checked.

Usage:
  scripts/check_includes.py [ROOT]   check the tree (default: the repository); exit 1 and list
                                     file:line and the forbidden edge on a violation
  scripts/check_includes.py --edges  print the edges in use (component -> component: count)
  scripts/check_includes.py --self-test
                                     check the checker on fixture trees in a temp dir
"""
import os
import re
import sys
import tempfile

# Headers stored under format/ that count as the bottom layer ("ddi"): the header-only status
# macros (Abseil glue) lower components use too. The DDI vocabulary itself (the catalog, its
# generated C ABI ddi/ddi_abi.h, call ids and per-call traits) lives in ddi/.
DDI_HEADERS = {
    "format/status_macros.h",
}

# Path prefix -> component; the longest matching prefix wins.
COMPONENT_PREFIXES = {
    "rules/": "rules",  # rule registry, Finding, §3 state-machine table
    "ddi/": "ddi",
    "format/": "format",
    "wddm/": "wddm",
    "dx6/": "dx6",
    "umd/": "umd",
    "runtime/": "runtime",
    "refdriver/": "refdriver",
    "recorder/": "recorder",
    "replayer/": "replayer",
    "check/": "check",  # the contract checker (issue 13 §3)
    "inspector/": "inspector",
    "cli/": "cli",
    "corpus/": "corpus",
    "bench/": "bench",
    "tests/": "tests",
    "tests/testing/": "testing",
}

# The inspector's UI (ImGui) files; every other inspector/ file is its model, which never
# includes them.
INSPECTOR_UI = re.compile(
    r"^inspector/(app|theme|view|headless|main|\w+_panel|panels_test|screenshot_test)\.(h|cc)$")

ABOVE_ALL = {"rules", "ddi", "format", "wddm", "dx6", "umd", "runtime", "refdriver", "recorder",
             "replayer", "check", "inspector", "inspector_ui", "corpus", "testing"}

# component -> components it may include (itself is always allowed).
ALLOWED = {
    "rules": set(),
    "ddi": set(),
    "format": {"rules", "ddi"},
    "wddm": {"rules", "ddi"},
    "dx6": {"rules", "ddi", "wddm"},
    "umd": {"rules", "ddi", "wddm"},
    "runtime": {"rules", "ddi", "wddm"},
    "refdriver": {"rules", "ddi", "umd", "wddm"},
    "recorder": {"rules", "ddi", "format"},
    "check": {"rules", "ddi", "format"},
    "replayer": {"rules", "ddi", "format", "check", "wddm"},
    "inspector": {"rules", "ddi", "format", "check"},
    "inspector_ui": {"rules", "ddi", "format", "inspector"},
    "corpus": {"rules", "ddi", "format", "runtime", "wddm", "dx6"},
    "testing": {"rules", "ddi", "format"},
    "cli": ABOVE_ALL - {"testing"},
    "bench": ABOVE_ALL | {"cli"},
    "tests": ABOVE_ALL | {"cli", "bench"},
}

# Test sources (*_test.cc, *_fuzz.cc) of any component may also use the shared test helpers.
TEST_EXTRA = {"testing"}

# A folder's internal/ headers are for that folder only; benchmarks and tests on top may use
# fixtures kept there.
INTERNAL_OK_FROM = {"bench", "tests"}

# Known violations left for later items: (file, included header) -> the issue item that removes
# it. Keep this list minimal.
ALLOWED_EXCEPTIONS = {}

SOURCE_EXT = (".h", ".hh", ".hpp", ".c", ".cc", ".cpp", ".inc")
SKIP_DIRS = {".git", "build", "third_party"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def component_of(path):
    if path in DDI_HEADERS:
        return "ddi"
    if path.startswith("inspector/") and INSPECTOR_UI.match(path):
        return "inspector_ui"
    best = None
    for prefix, comp in COMPONENT_PREFIXES.items():
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, comp)
    return best[1] if best else None


def is_test_source(path):
    name = os.path.basename(path)
    return re.search(r"_(test|fuzz)\.(cc|cpp|c)$", name) is not None


def scan(root):
    """Yields (file, line number, including component, included path, included component)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(filenames):
            if not name.endswith(SOURCE_EXT):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            comp = component_of(rel)
            if comp is None:
                continue
            with open(full, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    tcomp = component_of(target)
                    if tcomp is not None:
                        yield rel, lineno, comp, target, tcomp


def violations(root):
    out = []
    for rel, lineno, comp, target, tcomp in scan(root):
        if (rel, target) in ALLOWED_EXCEPTIONS:
            continue
        if "/internal/" in target and comp not in INTERNAL_OK_FROM:
            owner = target[:target.index("/internal/") + 1]
            if not rel.startswith(owner):
                out.append(f"{rel}:{lineno}: {comp} -> {owner}internal/ reaches into another "
                           f'folder\'s internals (#include "{target}")')
                continue
        if tcomp == comp or tcomp in ALLOWED.get(comp, set()):
            continue
        if is_test_source(rel) and tcomp in TEST_EXTRA:
            continue
        out.append(f"{rel}:{lineno}: {comp} -> {tcomp} is not an allowed edge "
                   f'(#include "{target}")')
    return out


def check(root):
    problems = violations(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_includes: {len(problems)} include(s) across a forbidden edge "
              "(table: scripts/check_includes.py ALLOWED)")
        return 1
    return 0


def print_edges(root):
    edges = {}
    for _, _, comp, _, tcomp in scan(root):
        if comp != tcomp:
            edges[(comp, tcomp)] = edges.get((comp, tcomp), 0) + 1
    for (a, b), n in sorted(edges.items()):
        print(f"{a} -> {b}: {n}")
    return 0


def self_test():
    def make(files):
        d = tempfile.mkdtemp(prefix="check_includes_")
        for path, text in files.items():
            full = os.path.join(d, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        return d

    ok_tree = {
        "wddm/a.h": '#include "ddi/ddi_abi.h"\n#include "absl/status/status.h"\n',
        "umd/b.cc": '#include "wddm/a.h"\n#include "umd/b.h"\n',
        "umd/b_test.cc": '#include "tests/testing/golden.h"\n',
        "refdriver/c.cc": '#include "umd/b.h"\n',
        "check/d.cc": '#include "format/event.h"\n',
        "format/e.cc": '#include "ddi/catalog.h"\n',
        "runtime/f.cc": '#include "ddi/call_traits.h"\n',
        "inspector/app.cc": '#include "inspector/model.h"\n',
        "refdriver/e.cc": '#include "rules/finding.h"\n',
        "wddm/f.h": '#include "rules/rules.h"\n',
    }
    bad_tree = {
        "runtime/x.cc": '// a comment\n#include "wddm/a.h"\n#include "refdriver/command_stream.h"\n',
        "wddm/y.h": '#include "format/trace_reader.h"\n',
        "umd/z.cc": '#include "tests/testing/golden.h"\n',
        "inspector/model.cc": '#include "inspector/theme.h"\n',
        "replayer/r.cc": '#include "runtime/internal/state.h"\n',
        "rules/s.h": '#include "format/call_ids.h"\n',
        "ddi/q.h": '#include "wddm/a.h"\n',
    }
    failures = []
    if violations(make(ok_tree)):
        failures.append(f"clean tree reported: {violations(make(ok_tree))}")
    got = violations(make(bad_tree))
    want = ["runtime/x.cc:3: runtime -> refdriver", "wddm/y.h:1: wddm -> format",
            "umd/z.cc:1: umd -> testing", "inspector/model.cc:1: inspector -> inspector_ui",
            "replayer/r.cc:1: replayer -> runtime/internal/", "rules/s.h:1: rules -> format",
            "ddi/q.h:1: ddi -> wddm"]
    for w in want:
        if not any(g.startswith(w) for g in got):
            failures.append(f"missing violation {w!r} in {got}")
    if len(got) != len(want):
        failures.append(f"expected {len(want)} violations, got {got}")
    with open(os.devnull, "w") as quiet:
        saved, sys.stdout = sys.stdout, quiet
        try:
            codes = (check(make(bad_tree)), check(make(ok_tree)))
        finally:
            sys.stdout = saved
    if codes != (1, 0):
        failures.append("exit codes: want 1 for the bad tree, 0 for the clean one")
    for f in failures:
        print("self-test FAILED:", f)
    if not failures:
        print("check_includes self-test passed")
    return 1 if failures else 0


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = argv[1:]
    if args[:1] == ["--self-test"]:
        return self_test()
    if args[:1] == ["--edges"]:
        return print_edges(args[1] if len(args) > 1 else repo)
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(__doc__)
        return 2
    return check(args[0] if args else repo)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
