"""What `pip install .` shows of the CMake build (setup.py's progress_of, TerminalStatus, BuildLog).

The whole route on a pseudo-terminal is tests/pip_install_check.sh; here the parts, with a fake
terminal (a StringIO whose backspaces are replayed) and small shell commands for CMake.
"""
import contextlib
import importlib.util
import io
import os
import pathlib
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]

try:
    _spec = importlib.util.spec_from_file_location("icl_setup", ROOT / "setup.py")
    setup_py = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(setup_py)  # not __main__: defines, does not build
except ImportError as e:  # setuptools missing
    setup_py, _why = None, str(e)


def screen(text):
    """The line a terminal shows after `text` (backspace moves left, other characters overwrite)."""
    cells, at = [], 0
    for ch in text:
        if ch == "\b":
            at = max(0, at - 1)
            continue
        if at == len(cells):
            cells.append(ch)
        else:
            cells[at] = ch
        at += 1
    return "".join(cells)


class FakeTerminal(io.StringIO):
    def close(self):  # keep the text readable after TerminalStatus.close
        pass


def shell(script):
    return ["sh", "-c", script]


@unittest.skipIf(setup_py is None, "setup.py needs setuptools (python3-setuptools)")
class ProgressOf(unittest.TestCase):
    def test_makefile_lines(self):
        self.assertEqual(setup_py.progress_of(
            "[ 45%] Building CXX object theory/CMakeFiles/icl_theory.dir/saddle_point.cpp.o"),
            (45, "saddle_point.cpp"))
        self.assertEqual(setup_py.progress_of(
            "[100%] Linking CXX shared module icl_theory/_core.cpython-311-x86_64-linux-gnu.so"),
            (100, "linking _core.cpython-311-x86_64-linux-gnu.so"))
        self.assertEqual(setup_py.progress_of("[ 26%] Built target icl_numerics"), (26, ""))
        self.assertEqual(setup_py.progress_of(  # CLICOLOR_FORCE=1
            "\x1b[32m[ 45%] Building CXX object t/CMakeFiles/t.dir/a.cpp.o\x1b[0m"), (45, "a.cpp"))

    def test_ninja_lines(self):
        self.assertEqual(setup_py.progress_of("[12/40] Building CXX object a/CMakeFiles/x.dir/b.cpp.o"),
                         (30, "b.cpp"))
        self.assertIsNone(setup_py.progress_of("[0/0] nothing"))

    def test_other_lines(self):
        for line in ["-- Configuring done", "", "warning: [-Wfoo]", "x [ 45%]", "[abc%] x"]:
            self.assertIsNone(setup_py.progress_of(line), line)
        self.assertEqual(setup_py.progress_of("  [ 45%] Building CXX object a.cpp.o\n"), (45, "a.cpp"))


@unittest.skipIf(setup_py is None, "setup.py needs setuptools (python3-setuptools)")
class Output(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log_path = pathlib.Path(self.dir.name) / "build-python" / "build.log"
        self.addCleanup(self.dir.cleanup)

    def test_status_in_place_cut_and_cleared(self):
        term = FakeTerminal()
        status = setup_py.TerminalStatus(term, 80)
        status.show("configuring")
        self.assertEqual(screen(term.getvalue()), " configuring")
        status.show("[ 45%] a_very_long_source_file_name.cpp")
        self.assertEqual(screen(term.getvalue()).rstrip(), " [ 45%] a_very_long_sourc")
        self.assertEqual(len(screen(term.getvalue()).rstrip()), 80 - status.RESERVED)
        status.close()
        self.assertEqual(screen(term.getvalue()).strip(), "")  # pip's "done" goes where we began

    def test_terminal_build_held_then_printed(self):
        term = FakeTerminal()
        log = setup_py.BuildLog(self.log_path, setup_py.TerminalStatus(term, 120))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            log.run(shell("echo '-- Configuring done'"), "configuring")
            log.run(shell("echo '[ 50%] Building CXX object t/CMakeFiles/x.dir/one.cpp.o'; "
                          "echo '[ 60%] Built target x'; echo '[100%] Linking CXX static library libx.a'"),
                    "building")
            self.assertEqual(out.getvalue(), "")  # held: pip would spin into the status
            log.close()
        seen = term.getvalue()
        for text in [" configuring", " [ 50%] one.cpp", " [ 60%] one.cpp", " [100%] linking libx.a"]:
            self.assertIn(text, seen)
        self.assertEqual(screen(seen).strip(), "")
        self.assertIn("[ 60%] Built target x\n", out.getvalue())
        self.assertIn("-- Configuring done\n", out.getvalue())
        self.assertIn("[100%] Linking", self.log_path.read_text())

    def test_no_terminal_streams(self):
        log = setup_py.BuildLog(self.log_path, None)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            log.run(shell("echo one; echo two >&2"), "building")
            log.close()
        self.assertEqual(out.getvalue(), "one\ntwo\n")
        self.assertEqual(self.log_path.read_text().splitlines()[1:], ["one", "two"])

    def test_failure_tail_and_one_line(self):
        term = FakeTerminal()
        log = setup_py.BuildLog(self.log_path, setup_py.TerminalStatus(term, 120))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            log.run(shell("echo configured"), "configuring")
            with self.assertRaises(setup_py.ExecError) as caught:
                log.run(shell("i=1; while [ $i -le 100 ]; do echo line $i; i=$((i+1)); done; "
                              "echo 'x.cpp:1: error: boom'; exit 2"), "building")
            log.close()
        message = str(caught.exception)
        self.assertEqual(message, "icl_theory: building failed (sh exit 2); full log: %s"
                         % self.log_path)
        tail = err.getvalue().splitlines()
        self.assertEqual(tail[0], "icl_theory: the last lines of %s:" % self.log_path)
        self.assertEqual(tail[1:], ["line %d" % i for i in range(62, 101)] + ["x.cpp:1: error: boom"])
        self.assertEqual(out.getvalue(), "configured\n")  # the steps before, in full
        self.assertEqual(screen(term.getvalue()).strip(), "")
        self.assertIn("line 1\n", self.log_path.read_text())  # the log has everything

    def test_open_without_terminal(self):
        # ctest runs without a controlling terminal (setsid): no /dev/tty, no status.
        stat = pathlib.Path("/proc/self/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[4] != "0":  # tty_nr
            self.skipTest("this run has a controlling terminal")
        self.assertIsNone(setup_py.TerminalStatus.open())


if __name__ == "__main__":
    unittest.main()
