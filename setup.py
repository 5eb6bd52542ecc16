"""Build the icl_theory extension with CMake (used by `pip install .`, see pyproject.toml).

The package icl_theory is the pure-Python layer python/package/*.py plus the extension
icl_theory._core, the CMake target icl_theory_py (python/CMakeLists.txt). It is configured for
the interpreter that runs this script (sys.executable), with the tests, benchmarks and CLI off,
built alone, and installed (component icl_python) into the wheel's build folder.

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

ROOT = Path(__file__).resolve().parent


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
        subprocess.run(args, check=True)

        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(self.parallel or os.cpu_count() or 1)
        subprocess.run([cmake, "--build", str(build), "--target", ext.target, "-j", jobs],
                       check=True)

        stage = build / "stage"
        shutil.rmtree(stage, ignore_errors=True)
        subprocess.run([cmake, "--install", str(build), "--component", "icl_python",
                        "--prefix", str(stage)], check=True)
        built = sorted(stage.glob("icl_theory/_core*"))
        if len(built) != 1:
            raise RuntimeError(f"expected one icl_theory/_core module in {stage}, found {built}")
        shutil.copyfile(built[0], out)


# CMake's tree is build-python/ (above), setuptools' build folder and egg-info go to
# build-python/setuptools/ (both ignored by git, neither is CMake's build/).
BUILD_BASE = "build-python"
SETUPTOOLS_BASE = BUILD_BASE + "/setuptools"
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
