"""The installed client side: `meson install` into a staging directory, then build
examples/client.c against pyfence.h and libpyfence through the pkg-config file `pyfence`, and run
it against the real daemon. Also: only the pyfence_* API is exported."""

import os
import shutil
import subprocess

import pytest

from conftest import REPO, is_asan_build


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = os.environ.get("PYFENCE_BUILD_ROOT")
    if not root:
        pytest.skip("PYFENCE_BUILD_ROOT is not set (run through meson test)")
    if not shutil.which("pkg-config") or not shutil.which("cc"):
        pytest.skip("pkg-config or cc is missing")
    dest = tmp_path_factory.mktemp("stage")
    r = subprocess.run(["meson", "install", "-C", root, "--no-rebuild", "--quiet", "--destdir", str(dest)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest


def only(paths, what):
    assert len(paths) == 1, f"expected one {what}, found {paths}"
    return paths[0]


def test_pkg_config_build_and_run(staged, daemon, tmp_path):
    pc = only(list(staged.rglob("pkgconfig/pyfence.pc")), "pyfence.pc")
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc.parent), PKG_CONFIG_SYSROOT_DIR=str(staged))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "pyfence"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    exe = tmp_path / "client"
    lib = only(list(staged.rglob("libpyfence.so.*.*.*")), "libpyfence.so.X.Y.Z")
    # A sanitized build's library needs its runtime linked into the program first.
    sanitize = ["-fsanitize=address,undefined"] if is_asan_build(str(lib)) else []
    r = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *sanitize,
                        str(REPO / "examples" / "client.c"), "-o", str(exe), *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    libdir = only([f[2:] for f in flags if f.startswith("-L")], "-L flag")
    run_env = dict(os.environ, LD_LIBRARY_PATH=libdir, PYFENCE_SOCKET=daemon.socket_path)
    r = subprocess.run([str(exe), "print('hi')\nsum(range(10))"], env=run_env, capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "hi\n45\n"), r.stderr
    r = subprocess.run([str(exe), "1/0"], env=run_env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.startswith("error: Code execution failed"), r.stderr


def test_installed_files(staged):
    names = {p.name for p in staged.rglob("*")}
    for name in ("pyfence.h", "pyfence", "pyfence.py", "libpyfence.so", "libpyfence.so.0"):
        assert name in names, name


def test_systemd_units_installed(staged):
    """systemd/pyfenced.service (the source DESIGN.md names) is installed with @sbindir@ filled
    in, beside pyfenced.socket."""
    unit = only(list(staged.rglob("systemd/system/pyfenced.service")), "pyfenced.service")
    text = unit.read_text()
    assert "@" not in text, text
    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    sbin = exec_start.split("=", 1)[1].split()[0]
    assert sbin.endswith("/sbin/pyfenced") and (staged / sbin.lstrip("/")).is_file(), exec_start
    only(list(staged.rglob("systemd/system/pyfenced.socket")), "pyfenced.socket")
    assert not list((REPO / "systemd").glob("*.in")), "the unit sources are named as installed"


def test_only_the_api_is_exported(staged):
    lib = only([p for p in staged.rglob("libpyfence.so.*.*.*")], "libpyfence.so.X.Y.Z")
    r = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    symbols = [line.split()[-1] for line in r.stdout.splitlines() if line.split()[-2] in ("T", "D", "B")]
    assert symbols and all(s.startswith("pyfence_") for s in symbols), symbols


@pytest.mark.skipif(not shutil.which("c++"), reason="no C++ compiler")
def test_header_compiles_as_cplusplus(tmp_path):
    src = tmp_path / "t.cc"
    src.write_text('#include "pyfence.h"\nint main() { return pyfence_code_from_name("ok"); }\n')
    r = subprocess.run(["c++", "-fsyntax-only", "-Wall", "-Werror", f"-I{REPO / 'client'}", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
