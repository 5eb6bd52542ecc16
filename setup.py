"""Build the icl_theory extension with CMake (used by `pip install .`, see pyproject.toml).

The package icl_theory is the pure-Python layer python/package/*.py plus the extension
icl_theory._core, the CMake target icl_theory_py (python/CMakeLists.txt). It is configured for
the interpreter that runs this script (sys.executable), with the tests, benchmarks and CLI off,
built alone, and installed (component icl_python) into the wheel's build folder.

Output: pip shows a build backend's output only with -v (or when it fails), so a build of
minutes would be silent. CMake's output goes to build-python/build.log (always, overwritten by
each build); on a terminal (/dev/tty opens) one status, "configuring", "[ 45%] saddle_point.cpp"
(the percentage of `cmake --build` and the file it started last), "installing", is updated in
place after pip's "Building wheel ... " and the log is printed when the build ends (pip -v shows
it; `tail -f build-python/build.log` follows it live); without a terminal it streams to stdout.
A failed step prints the log's last lines and its path, and fails pip with one line.

Environment: CMAKE_BUILD_PARALLEL_LEVEL (default: number of CPUs), CMAKE_CXX_COMPILER_LAUNCHER
(default: ccache when installed, CMake option ICL_CCACHE), ICL_CMAKE_ARGS (extra configure arguments, split on spaces).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import ExecError

ROOT = Path(__file__).resolve().parent
# CMake's tree is build-python/ (see build_extension), setuptools' build folder and egg-info go
# to build-python/setuptools/ (both ignored by git, neither is CMake's build/).
BUILD_BASE = "build-python"
SETUPTOOLS_BASE = BUILD_BASE + "/setuptools"
LOG_NAME = "build.log"
TAIL_LINES = 40  # of the log, printed when a step fails

# A line that reports how far `cmake --build` is: the Makefile generators' "[ 45%] Building CXX
# object theory/CMakeFiles/icl_theory.dir/saddle_point.cpp.o", Ninja's "[12/40] Building ...".
_PERCENT = re.compile(r"^\[\s*(\d{1,3})%\]\s*(.*)$")
_COUNT = re.compile(r"^\[(\d+)/(\d+)\]\s*(.*)$")
_OBJECT = re.compile(r"Building \S+ object (\S+?)(?:\.o|\.obj)?$")
_LINK = re.compile(r"Linking \S+ .*?(\S+)$")
_COLOR = re.compile(r"\x1b\[[0-9;]*m")  # CLICOLOR_FORCE=1 colors the lines even into a pipe


def progress_of(line):
    """(percent, what) for a CMake build progress line, what = the source file it starts
    compiling or "linking NAME" ('' for other steps); None for any other line."""
    line = _COLOR.sub("", line).strip()
    m = _PERCENT.match(line)
    if m:
        percent, rest = int(m.group(1)), m.group(2)
    else:
        m = _COUNT.match(line)
        if not m or int(m.group(2)) == 0:
            return None
        percent, rest = 100 * int(m.group(1)) // int(m.group(2)), m.group(3)
    obj, link = _OBJECT.search(rest), _LINK.search(rest)
    if obj:
        return percent, os.path.basename(obj.group(1))
    return percent, "linking " + os.path.basename(link.group(1)) if link else ""


class TerminalStatus:
    """One status text updated in place on a terminal, the way pip's own spinner updates its
    character: backspaces, spaces, backspaces. It then shares the line of pip's "Building wheel
    for icl-theory (pyproject.toml) ... " and leaves nothing behind when cleared, so pip's
    "done" follows as usual. The text is cut to the terminal's width (a wrapped line could
    not be erased by backspaces)."""

    # pip's "  Building wheel for icl-theory (pyproject.toml) ... ", its spinner's character
    # and the last column (writing there may wrap).
    RESERVED = 55

    def __init__(self, stream, columns):
        self.stream, self.room, self.width = stream, max(0, columns - self.RESERVED), 0

    @classmethod
    def open(cls):
        """The status on the controlling terminal, or None without one (CI, cron, ssh without a
        pty): pip captures stdout and stderr, /dev/tty is the one way to the user's screen."""
        try:
            tty = open("/dev/tty", "w")
        except OSError:
            return None
        try:
            columns = os.get_terminal_size(tty.fileno()).columns
        except OSError:
            columns = 0
        return cls(tty, columns or 80)  # 0: a terminal that does not say (e.g. `script`'s pty)

    def show(self, text):
        text = (" " + text if text else "")[:self.room]  # a space after pip's spinner
        back = "\b" * self.width
        self.stream.write(back + " " * self.width + back + text)
        self.stream.flush()
        self.width = len(text)

    def close(self):
        self.show("")
        self.stream.close()


class BuildLog:
    """Runs the CMake steps with their combined output in one log file (see the module's
    docstring for where the output is shown)."""

    def __init__(self, path, status):
        self.path, self.status = path, status
        path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(path, "w")
        # On a terminal the output is held and printed once the status is cleared: pip turns
        # its spinner for every line it receives, which would write into the status.
        self.held = []

    def run(self, args, step):
        """Run one step (args: a command); raise ExecError naming it and the log when it fails."""
        self.log.write("$ " + " ".join(args) + "\n")
        self.log.flush()
        first, what = len(self.held), ""
        if self.status:
            self.status.show(step)
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="backslashreplace")
        with proc.stdout:
            for line in proc.stdout:
                self.log.write(line)
                if self.status is None:
                    sys.stdout.write(line)
                    sys.stdout.flush()
                    continue
                self.held.append(line)
                progress = progress_of(line)
                if progress:  # the last file or link stays until the next one
                    what = progress[1] or what
                    self.status.show(f"[{progress[0]:3d}%] {what}".rstrip())
        code = proc.wait()
        self.log.flush()
        if code != 0:
            tail = self.held[first:][-TAIL_LINES:]  # streamed output already ends with it
            self.held = self.held[:first]
            self.close()
            if tail:
                print(f"icl_theory: the last lines of {self.path}:", file=sys.stderr)
                sys.stderr.write("".join(tail))
            raise ExecError(f"icl_theory: {step} failed ({os.path.basename(args[0])} exit {code}); "
                            f"full log: {self.path}")

    def close(self):
        """Clear the status, then print the held output (pip -v shows it); idempotent."""
        if not self.log.closed:
            self.log.close()
        if self.status:
            self.status.close()
            self.status = None
        sys.stdout.write("".join(self.held))
        sys.stdout.flush()
        self.held = []


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*icl_theory\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError("no project(icl_theory VERSION ...) in CMakeLists.txt")
    return m.group(1)


class CMakeExtension(Extension):
    def __init__(self, name, target):
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("cmake (>= 3.20) is needed to build icl_theory")
        out = Path(self.get_ext_fullpath(ext.name)).resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        # The CMake tree is build-python/ itself, one level below the source like CMake's own
        # build/: with ccache (CCACHE_BASEDIR at or above the source, CCACHE_NOHASHDIR=1) the
        # compile commands are then the same relative to their folders, and a `pip install .`
        # after `cmake --build build` (or in another copy of the source) reuses its objects.
        build = ROOT / BUILD_BASE
        build.mkdir(parents=True, exist_ok=True)

        cfg = "Debug" if self.debug else "Release"
        args = [
            cmake, "-S", str(ROOT), "-B", str(build),
            f"-DCMAKE_BUILD_TYPE={cfg}",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DICL_BUILD_PYTHON=ON",
            "-DICL_BUILD_TESTS=OFF", "-DICL_BUILD_BENCH=OFF", "-DICL_BUILD_CLI=OFF",
            "-DICL_PYTHON_INSTALL_DIR=.",
        ]
        try:  # pybind11 from pip (PEP 517 route); Debian's pybind11-dev is found by CMake itself
            import pybind11
            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        args += os.environ.get("ICL_CMAKE_ARGS", "").split()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(self.parallel or os.cpu_count() or 1)
        stage = build / "stage"
        shutil.rmtree(stage, ignore_errors=True)

        log = BuildLog(build / LOG_NAME, TerminalStatus.open())
        try:
            log.run(args, "configuring")
            log.run([cmake, "--build", str(build), "--target", ext.target, "-j", jobs], "building")
            log.run([cmake, "--install", str(build), "--component", "icl_python",
                     "--prefix", str(stage)], "installing")
        finally:
            log.close()
        built = sorted(stage.glob("icl_theory/_core*"))
        if len(built) != 1:
            raise RuntimeError(f"expected one icl_theory/_core module in {stage}, found {built}")
        shutil.copyfile(built[0], out)


# setuptools.build_meta (pip) runs this file as __main__; tests import it for progress_of.
if __name__ == "__main__":
    (ROOT / SETUPTOOLS_BASE).mkdir(parents=True, exist_ok=True)
    setup(
        version=project_version(),
        ext_modules=[CMakeExtension("icl_theory._core", target="icl_theory_py")],
        cmdclass={"build_ext": CMakeBuild},
        packages=["icl_theory"],
        package_dir={"icl_theory": "python/package"},
        options={"build": {"build_base": SETUPTOOLS_BASE}, "egg_info": {"egg_base": SETUPTOOLS_BASE}},
        zip_safe=False,
    )
