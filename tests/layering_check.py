#!/usr/bin/env python3
"""The layering of the libraries and front ends, checked on their #include lines.

Each rule mirrors the target graph (verify/CMakeLists.txt): a folder may include only what the
library built from it links. `python3 layering_check.py SOURCE_DIR` prints every offending line
as FILE:LINE: #include ... (RULE) and exits 1; exit 0 when there is none.

  numerics/        nothing of theory/ verify/ cli/ python/ paper_figs/
  theory/          nothing of verify/ cli/ python/ paper_figs/
  verify/          nothing of cli/ python/ paper_figs/
  verify/lowrank/  nothing of verify/softmax/ verify/patch/
  verify/softmax/  nothing of verify/patch/
  verify/patch/    nothing of theory/ verify/lowrank/ verify/softmax/ (icl::verify_patch links
                   icl::numerics only)
  verify/multistep/ nothing of verify/lowrank/ verify/softmax/ verify/patch/
  paper_figs/      nothing of cli/ python/
  python/          nothing of cli/ paper_figs/
  cli/ python/ paper_figs/ (the front ends): only public headers of the libraries, no
                   .../detail/... or .../impl/... of another of our folders
"""
import os
import re
import sys

FRONT_ENDS = ("cli/", "python/", "paper_figs/")
OURS = ("numerics/", "theory/", "verify/") + FRONT_ENDS
# (folder, forbidden include prefixes)
RULES = [
    ("numerics/", ("theory/", "verify/", "cli/", "python/", "paper_figs/")),
    ("theory/", ("verify/", "cli/", "python/", "paper_figs/")),
    ("verify/", ("cli/", "python/", "paper_figs/")),
    ("verify/lowrank/", ("verify/softmax/", "verify/patch/")),
    ("verify/softmax/", ("verify/patch/",)),
    ("verify/patch/", ("theory/", "verify/lowrank/", "verify/softmax/")),
    ("verify/multistep/", ("verify/lowrank/", "verify/softmax/", "verify/patch/")),
    ("paper_figs/", ("cli/", "python/")),
    ("python/", ("cli/", "paper_figs/")),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
PRIVATE = re.compile(r"(^|/)(detail|impl)/")
SOURCES = (".hpp", ".cpp", ".h", ".hh", ".cc", ".ipp", ".tpp")


def resolve(root, including, target):
    """The include as a path from the source root (a relative "../x.hpp" or a same-folder
    "x.hpp" is resolved against the including file when that file exists there)."""
    local = os.path.normpath(os.path.join(os.path.dirname(including), target))
    if os.path.isfile(os.path.join(root, local)) and not local.startswith(".."):
        return local.replace(os.sep, "/")
    return os.path.normpath(target).replace(os.sep, "/")


def check(root):
    problems = []
    folders = sorted({f for f, _ in RULES} | set(FRONT_ENDS))
    for top in {f.split("/")[0] for f in folders}:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
                for number, line in enumerate(lines, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = resolve(root, path, m.group(1))
                    for folder, forbidden in RULES:
                        if path.startswith(folder):
                            for bad in forbidden:
                                if inc.startswith(bad):
                                    problems.append(f"{path}:{number}: {line.strip()}  "
                                                    f"({folder} must not include {bad})")
                    own = path.split("/")[0] + "/"
                    if (path.startswith(FRONT_ENDS) and inc.startswith(OURS)
                            and not inc.startswith(own) and PRIVATE.search(inc)):
                        problems.append(f"{path}:{number}: {line.strip()}  (front end {own} "
                                        "includes only public headers, no detail/ or impl/)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layering (tests/layering_check.py)")
        return 1
    print("layering: every #include respects the target graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
