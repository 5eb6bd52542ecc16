"""Run every ```python block of the given Markdown files, as a reader would paste them.

Usage: run_readme_blocks.py FILE.md [FILE.md ...]

The blocks of one file run in order in one namespace (a later block may use what an earlier
one defined, as in a notebook), in a scratch working directory. A block whose first line is
`# not run: <reason>` is skipped (the reason is printed); none may fail. Exit 77 (ctest
SKIP_RETURN_CODE) when a module the blocks import is not installed for this interpreter.
"""
import os
import re
import sys
import tempfile
import time
import traceback

BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
SKIP = 77


def blocks(path):
    with open(path) as f:
        text = f.read()
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 2  # first line of code
        yield line, m.group(1)


def main():
    failures = 0
    for path in sys.argv[1:]:
        path = os.path.abspath(path)
        namespace = {"__name__": "__readme__"}
        found = list(blocks(path))
        if not found:
            print(f"{path}: no ```python block")
            failures += 1
        with tempfile.TemporaryDirectory() as scratch:
            cwd = os.getcwd()
            os.chdir(scratch)
            try:
                for line, code in found:
                    where = f"{os.path.relpath(path, cwd)}:{line}"
                    first = code.lstrip().splitlines()[0] if code.strip() else ""
                    if first.startswith("# not run:"):
                        print(f"{where}: skipped ({first[len('# not run:'):].strip()})")
                        continue
                    start = time.perf_counter()
                    try:
                        exec(compile(code, where, "exec"), namespace)
                    except ModuleNotFoundError as e:
                        print(f"SKIP: {where} needs {e.name}, which is not installed")
                        sys.exit(SKIP)
                    except BaseException:
                        failures += 1
                        print(f"FAILED: the block at {where}")
                        traceback.print_exc()
                        continue
                    print(f"{where}: ok ({time.perf_counter() - start:.2f} s)")
            finally:
                os.chdir(cwd)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
