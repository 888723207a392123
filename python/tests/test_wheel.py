"""The wheel: ``maturin build`` gives one abi3 wheel (``cp39-abi3``, for every CPython >= 3.9) that installs and
runs in a clean venv with no Rust toolchain and nothing of this checkout.

The wheel is ``$LTRKIT_WHEEL`` when set (a ``maturin build --release`` wheel, say), else the dev-profile wheel built
here with ``maturin build --profile dev``: the same pyproject features (``pyo3/abi3-py39``), so the same tags and
files, and after ``pip install ./python`` cargo has nothing left to compile (packing it takes seconds, a release
build minutes). Its models must equal the installed package's bit for bit.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import numpy as np
import pytest

import ltrkit

from conftest import ROOT

SMOKE = r"""
import json, sys
import numpy as np
import ltrkit
rng = np.random.default_rng(4)
X = rng.random((60, 5), dtype=np.float32)
y = (X[:, 0] + 0.3 * X[:, 1] > 0.8).astype(np.float32) + (X[:, 2] > 0.7)
qid = np.repeat(np.arange(6), 10)
svm = ltrkit.RankSVM(c=0.1).fit(X, y, qid=qid)
lm = ltrkit.LambdaMART(trees=5, leaves=4, min_docs_in_leaf=3).fit(X, y, qid=qid)
try:
    ltrkit.pt
    pt = "imported"
except ImportError as e:
    pt = str(e)
print(json.dumps({
    "file": ltrkit.__file__,
    "svm": svm.predict(X).tolist(),
    "lm": lm.predict(X).tolist(),
    "ndcg": ltrkit.evaluate(y, lm.predict(X), qid=qid, metrics=["NDCG@10"])["NDCG@10"],
    "best": lm.best_params_,
    "algorithms": len(ltrkit.algorithms()),
    "pt": pt,
}))
"""


def expected():
    """The smoke script's numbers from the package under test (the same Rust code, built once more)."""
    scope: dict = {}
    out = []
    scope["print"] = out.append
    exec(SMOKE, scope)
    return json.loads(out[0])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    given = os.environ.get("LTRKIT_WHEEL")
    if given:
        return pathlib.Path(given)
    if shutil.which("cargo") is None:
        pytest.skip("SKIP: no cargo on PATH to build the wheel (set LTRKIT_WHEEL to a built wheel)")
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "maturin", "build", "--profile", "dev", "-m", "python/Cargo.toml", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = out.glob("*.whl")
    return built


def test_one_abi3_wheel_with_every_module(wheel):
    m = re.fullmatch(r"ltrkit-([^-]+)-cp39-abi3-((?:manylinux|musllinux|linux)[^-]*|macosx[^-]+|win[^-]+)\.whl", wheel.name)
    assert m, f"not a cp39-abi3 wheel: {wheel.name}"
    assert m.group(1) == ltrkit.__version__
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        meta = z.read(info.replace("WHEEL", "METADATA")).decode()
        wheel_file = z.read(info).decode()
        native = [n for n in names if re.search(r"\.(so|pyd|dylib)$", n)]
        so = z.read(native[0]) if native else b""
    assert re.search(r"^Tag: cp39-abi3-", wheel_file, re.M) and "Root-Is-Purelib: false" in wheel_file
    # One compiled module, named for the stable ABI, beside every source file of the package.
    assert native == ["ltrkit/_native.abi3.so"] or native == ["ltrkit/_native.pyd"], native
    package = ROOT / "python" / "ltrkit"
    want = {f"ltrkit/{p.name}" for p in package.iterdir() if p.suffix in (".py", ".pyi", ".typed")}
    assert want <= names, sorted(want - names)
    # numpy is the one dependency; scipy, scikit-learn and PyTerrier are extras or optional.
    requires = re.findall(r"^Requires-Dist: (.*)$", meta, re.M)
    assert [r for r in requires if "extra ==" not in r] == ["numpy>=1.21"], requires
    assert re.search(r"^Requires-Python: >=3.9$", meta, re.M)
    # An abi3 extension module on Linux leaves libpython to the interpreter that loads it.
    readelf = shutil.which("readelf")
    if native == ["ltrkit/_native.abi3.so"] and readelf:
        lib = wheel.parent / "_native.abi3.so.check"
        lib.write_bytes(so)
        dynamic = subprocess.run([readelf, "-d", str(lib)], capture_output=True, text=True).stdout
        assert "NEEDED" in dynamic and "libpython" not in dynamic, dynamic


def clean_env(home: pathlib.Path) -> dict:
    """An environment with no Rust toolchain (no cargo, rustc, rustup, CARGO_* or RUSTUP_* variables) and no
    PYTHONPATH: only the system's binaries on PATH."""
    path = os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))
    env = {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8"}
    for tool in ("cargo", "rustc", "rustup", "maturin"):
        assert shutil.which(tool, path=path) is None, f"{tool} is on the clean PATH {path}"
    return env


def test_installs_in_a_clean_venv_without_rust(wheel, tmp_path):
    """A venv with nothing but the wheel and numpy (linked from the test venv, so no index is needed), run from
    outside the checkout with no Rust on PATH: the same models and measures as the package under test."""
    venv = tmp_path / "clean"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(py)]
    subprocess.run([*pip, "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True)
    # numpy alone (no other package of the test venv) through a .pth file.
    deps = tmp_path / "deps"
    deps.mkdir()
    site = pathlib.Path(np.__file__).parent.parent
    for name in ("numpy", "numpy.libs"):
        if (site / name).exists():
            (deps / name).symlink_to(site / name)
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    pathlib.Path(purelib, "numpy-from-test-venv.pth").write_text(str(deps) + "\n")
    out = subprocess.run([str(py), "-c", SMOKE], cwd=tmp_path, env=clean_env(tmp_path), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["file"].startswith(str(venv)), got["file"]
    assert "ltrkit.pt needs PyTerrier" in got["pt"]
    want = expected()
    for key in ("svm", "lm", "ndcg", "best", "algorithms"):
        assert got[key] == want[key], key
    assert got["best"] == {"trees": 5, "leaves": 4, "min-docs-in-leaf": 3}


def other_python() -> "str | None":
    """The oldest CPython >= 3.9 other than the one running the tests: ``python3.N`` on PATH, or a pyenv
    version."""
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    pyenv = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv")) / "versions"
    for minor in range(9, 20):
        v = f"3.{minor}"
        if v == mine:
            continue
        found = [shutil.which(f"python{v}")] + sorted(str(p) for p in pyenv.glob(f"{v}.*/bin/python{v}"))
        for exe in filter(None, found):
            ok = subprocess.run([exe, "-c", "import venv, sys; print(sys.version_info[:2])"], capture_output=True)
            if ok.returncode == 0 and ok.stdout.decode().strip() == f"(3, {minor})":
                return exe
    return None


def test_the_same_wheel_runs_on_another_python(wheel, tmp_path):
    """abi3 in practice: the one wheel imported by another CPython (the oldest >= 3.9 found), with numpy for that
    Python from the package index. Skips with the reason when no other Python or no index is reachable."""
    exe = other_python()
    if exe is None:
        print("SKIP: no other CPython >= 3.9 on PATH (python3.9 ... python3.13) to load the abi3 wheel")
        pytest.skip("no other CPython >= 3.9 on PATH")
    venv = tmp_path / "other"
    subprocess.run([exe, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    numpy = subprocess.run(
        [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--only-binary=:all:", "numpy"],
        capture_output=True,
        text=True,
    )
    if numpy.returncode != 0:
        print(f"SKIP: numpy for {exe} could not be installed (no package index?): {numpy.stderr[-300:]}")
        pytest.skip("numpy for the other Python could not be installed")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True)
    out = subprocess.run([py, "-c", SMOKE], cwd=tmp_path, env=clean_env(tmp_path), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got, want = json.loads(out.stdout), expected()
    for key in ("svm", "lm", "ndcg", "best", "algorithms"):
        assert got[key] == want[key], key
    assert sysconfig.get_python_version() not in got["file"]
