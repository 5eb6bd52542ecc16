"""Run every ```python block of the given Markdown files, as a reader would paste them.

Usage: run_doc_python_blocks.py FILE.md [FILE.md ...]   (ctest docs_python_blocks)

The blocks of one file run in order in one namespace (a later block may use what an earlier
one defined, as in a notebook), in a scratch working directory of that file; a file without a
```python block is passed over (the test fails if no file has one). A block whose first line
is `# not run: <reason>` is skipped (the reason is printed); none may fail, and a failure is
reported as FILE:LINE of the block's first line of code with its traceback. When a module the
blocks import is not installed for this interpreter, the rest of that file is skipped and the
exit status is 77 (ctest SKIP_RETURN_CODE) unless some block failed.
"""
import os
import re
import sys
import tempfile
import time
import traceback

BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blocks(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 2  # first line of code
        yield line, m.group(1)


def run_file(path):
    """Run one file's blocks; returns (blocks run, failed block locations, skip reason or None)."""
    name = os.path.relpath(path, ROOT)
    name = path if name.startswith("..") else name  # a file outside the source tree
    found = list(blocks(path))
    namespace = {"__name__": "__readme__"}
    ran, failed = 0, []
    if not found:
        print(f"== {name}: no ```python block")
        return ran, failed, None
    print(f"== {name}: {len(found)} python blocks", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        cwd = os.getcwd()
        os.chdir(scratch)
        try:
            for line, code in found:
                where = f"{name}:{line}"
                first = code.lstrip().splitlines()[0] if code.strip() else ""
                if first.startswith("# not run:"):
                    print(f"{where}: skipped ({first[len('# not run:'):].strip()})")
                    continue
                start = time.perf_counter()
                try:
                    exec(compile(code, where, "exec"), namespace)
                except ModuleNotFoundError as e:
                    reason = f"{where} needs {e.name}, which is not installed"
                    print(f"SKIP: {reason} (the rest of {name} is not run)")
                    return ran, failed, reason
                except BaseException:
                    failed.append(where)
                    print(f"FAILED: the block at {where}")
                    traceback.print_exc()
                    continue
                ran += 1
                print(f"{where}: ok ({time.perf_counter() - start:.2f} s)", flush=True)
        finally:
            os.chdir(cwd)
    return ran, failed, None


def main():
    total, failed, skipped = 0, [], []
    for path in sys.argv[1:]:
        ran, bad, skip = run_file(os.path.abspath(path))
        total += ran
        failed += bad
        skipped += [skip] if skip else []
    print(f"{total} python blocks ran in {len(sys.argv) - 1} files")
    for where in failed:
        print(f"FAILED: the block at {where}")
    if failed or (total == 0 and not skipped):
        sys.exit(1)
    sys.exit(SKIP if skipped else 0)


if __name__ == "__main__":
    main()
