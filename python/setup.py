"""pip install ./python: the attnviz package, plus the built web app when there is one.

show() and to_html() inline the built web app. When ../build/web/app (or $ATTNVIZ_APP_DIR) holds
it at install time, it is copied into attnviz/_app so that the installed package works on its
own; otherwise they look for it at run time (docs/PYTHON.md).
"""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

APP_FILES = ("attnviz.js", "attnviz.wasm", "attnviz-embed.js", "attnviz.css")


class BuildPyWithApp(build_py):
    def run(self):
        super().run()
        here = Path(__file__).resolve().parent
        app = Path(os.environ.get("ATTNVIZ_APP_DIR") or here.parent / "build" / "web" / "app")
        if not all((app / f).is_file() for f in APP_FILES):
            print(f"attnviz: no built web app in {app}; show() and to_html() will look for it at run time")
            return
        target = Path(self.build_lib) / "attnviz" / "_app"
        target.mkdir(parents=True, exist_ok=True)
        # Besides the required files: the lazy reader and the exports (PNG, GIF, WebM), which
        # show() and to_html() inline when they are there.
        for f in APP_FILES + ("favicon.svg", "attnviz-lazy.js", "attnviz-export.js", "gifenc.esm.js"):
            if (app / f).is_file():
                shutil.copy2(app / f, target / f)
        print(f"attnviz: copied the web app from {app} into the package")


setup(cmdclass={"build_py": BuildPyWithApp})
