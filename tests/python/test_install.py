"""pip install ./python: the package installs offline and carries the built web app."""
import gzip
import os
import shutil
import subprocess
import sys

from conftest import ROOT


def test_pip_install_carries_the_app(tmp_path, app_dir):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "python", src, ignore=shutil.ignore_patterns("build", "*.egg-info", "_app", "__pycache__"))
    env = dict(os.environ, ATTNVIZ_APP_DIR=str(app_dir), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    # --no-build-isolation: setuptools comes from Debian (PyPI is not reachable here).
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                    "--target", str(tmp_path / "site"), str(src)], env=env, check=True, capture_output=True, text=True)
    assert (tmp_path / "site" / "attnviz" / "_app" / "attnviz.wasm").read_bytes() == (app_dir / "attnviz.wasm").read_bytes()
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"), PYTHONDONTWRITEBYTECODE="1")
    env.pop("ATTNVIZ_APP_DIR", None)
    code = ("import attnviz, numpy as np; print(attnviz.find_app()); "
            "print(attnviz.to_html('page.html', np.eye(2), tokens=['a', 'b']))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True, capture_output=True,
                         text=True).stdout.split("\n")
    assert out[0] == str(tmp_path / "site" / "attnviz" / "_app")
    wasm_gz = len(gzip.compress((app_dir / "attnviz.wasm").read_bytes()))
    assert (tmp_path / "page.html").stat().st_size > wasm_gz * 4 // 3  # the inlined app
    # ... with its lazy reader and its exports: a figure or a clip saved from the installed package
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "global.AttnVizLazy = {" in page and "window.AttnVizExport = window.AttnVizExport ||" in page
    assert "GIFEncoder" in page
