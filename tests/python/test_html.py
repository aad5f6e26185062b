"""to_html() and show(): one self-contained piece of HTML holding the app and the data."""
import html.parser
import re

import numpy as np
import pytest
from conftest import inlined, softmax_attention

import attnviz
from attnviz import AttentionFile, AttentionSet


def attribute_urls(page):
    """The src and href attributes of the page's elements (script bodies are text, not elements)."""
    urls = []

    class Parser(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            urls.extend(v for k, v in attrs if k in ("src", "href"))

    Parser().feed(page)
    return urls


def test_big_inlined_data_gets_a_warning_with_the_lazy_alternative(tmp_path, rng, app_dir, monkeypatch):
    """A BERT-base at 512 tokens inlined made a 182 MB page that took ~40 s to open, without a word."""
    from attnviz import _html

    import warnings

    w = softmax_attention(rng, (2, 3, 20, 20))
    with warnings.catch_warnings():
        warnings.simplefilter("error", attnviz.AttentionWarning)  # none below the limit
        attnviz.to_html(tmp_path / "small.html", w, tokens=[f"t{i}" for i in range(20)], app_dir=app_dir)
    monkeypatch.setattr(_html, "INLINE_WARN_BYTES", 1000)
    with pytest.warns(attnviz.AttentionWarning, match=r"attention.npz is \d+ MiB inlined into the page") as caught:
        attnviz.to_html(tmp_path / "big.html", w, tokens=[f"t{i}" for i in range(20)], app_dir=app_dir)
    message = str(caught[0].message)
    assert "attnviz.save('attention.safetensors', data)" in message and "python3 -m attnviz serve" in message
    assert caught[0].filename == __file__, "the warning points at the caller's line"
    assert (tmp_path / "big.html").stat().st_size > 0, "the page is still written"


def test_big_inlined_data_is_stored_not_deflated(rng, monkeypatch):
    """Deflate shrank a 151 MB BERT-base by ~10 % for ~12 s of to_html (and as long in the page)."""
    import io
    import zipfile

    from attnviz import _html

    w = softmax_attention(rng, (2, 3, 20, 20))  # 9600 bytes of weights

    def methods(fragment):
        return {i.compress_type for i in zipfile.ZipFile(io.BytesIO(inlined(fragment)[0])).infolist()}

    assert methods(attnviz.html_fragment(w)) == {zipfile.ZIP_DEFLATED}
    monkeypatch.setattr(_html, "COMPRESS_MAX_BYTES", 9599)
    big = attnviz.html_fragment(w)
    assert methods(big) == {zipfile.ZIP_STORED}
    assert np.array_equal(attnviz.load(inlined(big)[0]).sets[0].layers[0], w[0])


def test_to_html_is_one_self_contained_file(tmp_path, rng, app_dir):
    w = softmax_attention(rng, (2, 2, 3, 4))
    before = set(tmp_path.iterdir())
    path = attnviz.to_html(tmp_path / "view.html", w, query_tokens=["le", "chat", "noir"],
                           key_tokens=["the", "black", "cat", "."], title="my <model>")
    assert set(tmp_path.iterdir()) - before == {tmp_path / "view.html"}  # one file, nothing next to it
    page = open(path, encoding="utf-8").read()
    assert page.startswith("<!doctype html>") and "<title>attnviz: my &lt;model&gt;</title>" in page
    refs = attribute_urls(page)
    assert refs and all(r.startswith("data:") for r in refs), refs  # nothing to fetch: no http(s), no files
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, flags=re.I)
    assert "createAttnviz" in page and "AttnViz.mount" in page  # the loader and the embed script are inlined
    data, wasm, ids = inlined(page)
    assert wasm == (app_dir / "attnviz.wasm").read_bytes()
    assert len(ids) == 1
    doc = attnviz.load(data)
    assert doc.version == 1  # a single set goes to the viewer as version 1
    np.testing.assert_array_equal(doc.sets[0].weights, w)
    assert doc.sets[0].key_tokens == ["the", "black", "cat", "."]


def test_versions_and_sets(rng):
    a = AttentionSet(softmax_attention(rng, (3, 3)), list("abc"), name="encoder")
    b = AttentionSet(softmax_attention(rng, (2, 3)), query_tokens=list("xy"), key_tokens=list("abc"), name="cross")
    two = AttentionFile([a, b])
    data, _, _ = inlined(attnviz.html_fragment(two))
    assert attnviz.load(data).version == 2 and len(attnviz.load(data).sets) == 2  # several sets: version 2
    data, _, _ = inlined(attnviz.html_fragment(two, set="cross"))
    assert attnviz.load(data).version == 1 and attnviz.load(data).sets[0].name == "cross"
    data, _, _ = inlined(attnviz.html_fragment(a, version=2, encoding="json"))
    assert data.startswith(b'{"format": "attnviz", "version": 2')


def test_fragments_get_their_own_ids_and_survive_hostile_tokens(rng):
    hostile = ["</script><script>alert(1)</script>", "<!--", "]]>"]
    f1 = attnviz.html_fragment(softmax_attention(rng, (3, 3)), tokens=hostile, height=300, view="lines",
                               colormap="viridis", commands=["numbers off"])
    f2 = attnviz.html_fragment(softmax_attention(rng, (3, 3)), tokens=hostile)
    assert inlined(f1)[2] != inlined(f2)[2]
    assert f1.count("<script") == f1.count("</script>") == 2  # the data and the code; tokens travel base64-encoded
    assert "height:300px" in f1
    assert '"commands": ["view lines", "colormap viridis", "numbers off"]' in f1
    assert attnviz.load(inlined(f1)[0]).sets[0].tokens == hostile


def test_hide_renormalize_and_sort_become_viewer_commands(rng):
    a = softmax_attention(rng, (3, 3))
    f = attnviz.html_fragment(a, tokens=["[CLS]", "x", "[SEP]"], view="grid", hide=["special", "x"], renormalize=True,
                              sort="entropy", commands=["numbers off"])
    assert ('"commands": ["view grid", "hide special", "hide x", "renormalize on", "grid-sort entropy", '
            '"numbers off"]') in f
    assert '"hide punctuation"' in attnviz.html_fragment(a, hide="punctuation")  # one string is one word
    with pytest.raises(ValueError, match="sort='loudest': one of layer, entropy"):
        attnviz.html_fragment(a, sort="loudest")
    with pytest.raises(ValueError, match="hide"):
        attnviz.html_fragment(a, hide=[""])


def test_show_displays_html(monkeypatch, rng):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    attnviz.show(softmax_attention(rng, (2, 2)), tokens=["a", "b"], embed=True)
    assert len(shown) == 1 and isinstance(shown[0], IPython.display.HTML)
    assert '"embed": true' in shown[0].data and 'class="attnviz-output"' in shown[0].data


def test_missing_app(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_APP_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="ATTNVIZ_APP_DIR = .* does not hold the built web app"):
        attnviz.to_html(tmp_path / "x.html", np.eye(2))
    assert not (tmp_path / "x.html").exists()
