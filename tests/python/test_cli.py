"""python3 -m attnviz serve | html | inspect, run as a user runs them."""
import gzip
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, softmax_attention

import attnviz
from attnviz import AttentionFile, AttentionSet


def run_module(*args, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.Popen([sys.executable, "-m", "attnviz", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read()


@pytest.fixture
def served(tmp_path, rng, app_dir):
    """A version 2 JSON file with one set, served on a free port; yields (url, file, process)."""
    w = softmax_attention(rng, (2, 2, 3, 4))
    path = attnviz.save(tmp_path / "my attention.json", w, query_tokens=["le", "chat", "noir"],
                        key_tokens=["the", "black", "cat", "."])
    proc = run_module("serve", path, "--port", "0", "--quiet", "--app", str(app_dir))
    try:
        line = proc.stdout.readline()
        m = re.search(r"serving .* at (http://127\.0\.0\.1:\d+/)", line)
        assert m, f"no URL printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        yield m.group(1), path, w
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def test_serve(served, app_dir):
    url, path, w = served
    status, ctype, page = get(url)
    assert status == 200 and ctype.startswith("text/html")
    page = page.decode()
    assert '<script src="attnviz.js"></script>' in page and '"data/my%20attention.json"' in page
    status, _, data = get(url + "data/my%20attention.json")
    doc = attnviz.load(data)
    assert doc.version == 1  # one set: handed to the viewer as version 1
    np.testing.assert_array_equal(doc.sets[0].weights, w)
    status, ctype, wasm = get(url + "attnviz.wasm")
    assert ctype == "application/wasm" and wasm == (app_dir / "attnviz.wasm").read_bytes()
    assert get(url + "attnviz-embed.js")[2] == (app_dir / "attnviz-embed.js").read_bytes()
    for missing in ("nope.js", "../index.html", "%2e%2e/%2e%2e/etc/passwd", "data/other.json"):
        with pytest.raises(urllib.error.HTTPError) as e:
            get(url + missing)
        assert e.value.code == 404


def test_serve_versions(tmp_path, rng, app_dir):
    from attnviz._serve import prepare

    a = AttentionSet(softmax_attention(rng, (3, 3)), list("abc"), name="encoder")
    b = AttentionSet(softmax_attention(rng, (2, 3)), query_tokens=list("xy"), key_tokens=list("abc"), name="cross")
    two = attnviz.save(tmp_path / "two.npz", AttentionFile([a, b]))
    raw = Path(two).read_bytes()
    assert prepare(two) == ("two.npz", raw)  # several sets: as they are (version 2)
    assert prepare(two, "raw") == ("two.npz", raw)
    name, body = prepare(attnviz.save(tmp_path / "one.npz", a), "auto")
    assert name == "one.npz" and attnviz.load(body).version == 1
    with pytest.raises(ValueError, match="version 1 holds one attention set"):
        prepare(two, "1")


def test_serve_refuses_a_bad_file(tmp_path, app_dir):
    bad = tmp_path / "bad.json"
    bad.write_text('{"weights": [[NaN]]}')
    proc = run_module("serve", str(bad), "--port", "0", "--app", str(app_dir))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and "NaN and Infinity are not valid JSON numbers" in err


def test_html_and_inspect(tmp_path, rng, app_dir):
    src = attnviz.save(tmp_path / "a.npz", softmax_attention(rng, (2, 3)), query_tokens=["x", "y"],
                       key_tokens=["\u2581a", "\u2581b", "c"], name="cross")
    proc = run_module("html", src, "-o", str(tmp_path / "a.html"), "--app", str(app_dir))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    # The app is inside: the wasm, gzipped and base64-encoded (4/3), is most of the file.
    wasm_gz = len(gzip.compress((app_dir / "attnviz.wasm").read_bytes()))
    assert (tmp_path / "a.html").stat().st_size > wasm_gz * 4 // 3
    proc = run_module("inspect", src)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "version 2, 1 set(s)" in out and "set 'cross' (cross): 1 layer(s) x 1 head(s), n_q=2 x n_k=3" in out


def test_head_stats_match_the_cli_and_sort_as_the_grid(tmp_path, rng, cli):
    """attnviz.head_stats: the numbers `attnviz-cli inspect --heads` prints (core/head_stats.h), in
    the grid's order; a fully masked row counts in no mean."""
    w = softmax_attention(rng, (2, 3, 5, 6)) ** 3
    w /= w.sum(axis=-1, keepdims=True)
    w[1, 2, 4] = 0.0  # a masked query
    path = attnviz.save(tmp_path / "a.npz", w, query_tokens=list("abcde"), key_tokens=list("uvwxyz"))
    ours = attnviz.head_stats(path, sort="entropy")
    assert [r["entropy"] for r in ours] == sorted(r["entropy"] for r in ours)
    assert [(r["layer"], r["head"]) for r in ours] != [(l, h) for l in range(2) for h in range(3)]
    assert ours[[(r["layer"], r["head"]) for r in ours].index((1, 2))]["rows_counted"] == 4
    out = subprocess.run([cli, "inspect", str(path), "--sort", "entropy"], capture_output=True, text=True, check=True)
    table = out.stdout.split("offset (mass)\n", 1)[1].strip().splitlines()
    assert len(table) == len(ours) == 6
    for line, r in zip(table, ours):
        layer, head, ent, mx, first, diag, off, mass = line.replace("(", " ").replace(")", " ").split()
        assert (int(layer), int(head), int(off)) == (r["layer"], r["head"], r["dominant_offset"]), line
        for got, key in ((ent, "entropy"), (mx, "max_weight"), (first, "first_token"), (diag, "diagonality"),
                         (mass, "dominant_offset_mass")):
            assert abs(float(got) - r[key]) < 6e-4, (line, key, r[key])
    by_first = attnviz.head_stats(w, sort="first_token", query_tokens=list("abcde"), key_tokens=list("uvwxyz"))
    assert [r["first_token"] for r in by_first] == sorted((r["first_token"] for r in by_first), reverse=True)
    with pytest.raises(ValueError, match="sort='loudest'"):
        attnviz.head_stats(w, sort="loudest")
    with pytest.raises(ValueError, match="set='cross' is not in the data"):
        attnviz.head_stats(path, set="cross")


def test_heads_whose_every_row_is_zero_have_no_statistics_and_sort_last(tmp_path, rng, cli):
    # Zero entropy and weights would sort them first, as the "most focused" heads (a hole in a file
    # being written, a head of masked rows): head_stats, inspect and the grid put them last.
    w = softmax_attention(rng, (1, 3, 5, 6))
    w[0, 0] = 0.0
    path = attnviz.save(tmp_path / "z.npz", w, query_tokens=list("abcde"), key_tokens=list("uvwxyz"))
    ours = attnviz.head_stats(path, sort="entropy")
    assert [(r["head"], r["rows_counted"]) for r in ours][-1] == (0, 0)
    out = subprocess.run([cli, "inspect", str(path), "--sort", "entropy"], capture_output=True, text=True, check=True)
    table = out.stdout.split("offset (mass)\n", 1)[1].strip().splitlines()
    assert table[-1].split()[:2] == ["0", "0"] and "every row is zero" in table[-1], table
