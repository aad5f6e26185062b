"""Shared pieces of the Python package tests (run by ctest as python_tests; see tests.cmake)."""
import base64
import gzip
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # also works without PYTHONPATH=python


def softmax_attention(rng, shape, key_mask=None, causal=False):
    """Softmax weights [..., n_q, n_k] of random scores; key_mask [n_k] or [batch, n_k] (False = masked)."""
    scores = rng.normal(size=shape) * 2.0
    n_q, n_k = shape[-2:]
    if key_mask is not None:
        m = np.asarray(key_mask, dtype=bool)
        m = m[:, None, None, :] if m.ndim == 2 else m
        scores = np.where(m, scores, -np.inf)
    if causal:
        scores = np.where(np.tril(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q), scores, -np.inf)
    with np.errstate(invalid="ignore"):  # a row with every key masked becomes zeros
        scores = scores - scores.max(axis=-1, keepdims=True)
        e = np.exp(scores)
        w = e / e.sum(axis=-1, keepdims=True)
    return np.nan_to_num(w, nan=0.0).astype(np.float32)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def app_dir():
    """The built web app: ATTNVIZ_APP_DIR (set by tests.cmake), else the repository's build/web/app."""
    import attnviz

    return attnviz.find_app()


@pytest.fixture(scope="session")
def cli():
    """attnviz-cli: ATTNVIZ_CLI (tests.cmake sets it to the target's file), else build/native/attnviz-cli."""
    path = os.environ.get("ATTNVIZ_CLI") or str(ROOT / "build" / "native" / "attnviz-cli")
    assert os.access(path, os.X_OK), f"attnviz-cli not found at {path}: build it (make cli) or set ATTNVIZ_CLI"
    return path


def inlined(page):
    """(data bytes, wasm bytes, config) from a page written by to_html/show."""
    # the data: base64 in a script element the browser does not run (faster to load than a JS string)
    data = base64.b64decode(re.search(r'<script type="application/octet-stream" id="attnviz-[0-9a-f]+-data">'
                                      r'([A-Za-z0-9+/=]*)</script>', page).group(1))
    wasm = gzip.decompress(base64.b64decode(re.search(r'var wasmGz = "([A-Za-z0-9+/=]*)";', page).group(1)))
    ids = re.findall(r'<div id="(attnviz-[0-9a-f]+)" class="attnviz-output"', page)
    return data, wasm, ids
