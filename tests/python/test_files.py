"""save()/load(): JSON and NPZ, versions 1 and 2, validation, and the C++ CLI reading what Python writes."""
import io
import json
import re
import subprocess
import warnings

import numpy as np
import pytest
from conftest import softmax_attention

import attnviz
from attnviz import AttentionFile, AttentionSet, AttentionWarning

FORMATS = [("json", 1), ("json", 2), ("npz", 1), ("npz", 2)]


def three_sets(rng):
    src = ["\u2581the", "\u2581black", "\u2581cat", "</s>"]
    tgt = ["\u2581le", "\u2581chat", "\u2581noir", "</s>"]
    enc = AttentionSet(softmax_attention(rng, (2, 3, 4, 4)), src, name="encoder",
                       layer_names=["enc.0", "enc.1"], head_names=["a", "b", "c"])
    dec = AttentionSet(softmax_attention(rng, (2, 3, 4, 4), causal=True), tgt, name="decoder", kind="causal")
    cross = AttentionSet(softmax_attention(rng, (2, 3, 4, 4)), query_tokens=tgt, key_tokens=src, name="cross")
    tok = attnviz.detect_tokenizer([src, tgt])
    return AttentionFile([enc, dec, cross], tokenizer=tok, meta={"model": "toy", "step": np.int64(12),
                                                               "loss": float("nan"), "lr": np.float32(0.5)})


def assert_same_set(a, b):
    assert (a.name, a.kind, a.query_tokens, a.key_tokens, a.layer_names) == \
           (b.name, b.kind, b.query_tokens, b.key_tokens, b.layer_names)
    assert a.heads_per_layer == b.heads_per_layer
    for x, y in zip(a.layers, b.layers):
        assert x.dtype == y.dtype == np.float32
        np.testing.assert_array_equal(x, y)  # exact: JSON floats are written to read back to the same float32


@pytest.mark.parametrize("fmt,version", FORMATS)
def test_single_set_round_trip(tmp_path, rng, fmt, version):
    w = softmax_attention(rng, (3, 2, 5, 4))
    s = AttentionSet(w, query_tokens=["le", "chat", "noir", "est", "là"], key_tokens=["the", "black", "cat", "is"],
                     name="decoder.cross", layer_names=["l0", "l1", "l2"], head_names=["h0", "h1"])
    doc = AttentionFile([s], tokenizer={"space_marker": None, "continuation_marker": "##", "special_tokens": []},
                        meta={"checkpoint": 12000, "nested": {"list": [1, 2.5, None]}})
    path = attnviz.save(tmp_path / f"a.{fmt}", doc, version=version)
    back = attnviz.load(path)
    assert back.version == version
    assert_same_set(back.sets[0], s)
    assert back.meta == {"checkpoint": 12000, "nested": {"list": [1, 2.5, None]}}
    assert back.tokenizer == doc.tokenizer
    assert s.head_names == back.sets[0].head_names == [["h0", "h1"]] * 3


@pytest.mark.parametrize("fmt", ["json", "npz"])
def test_three_sets_round_trip(tmp_path, rng, fmt):
    doc = three_sets(rng)
    back = attnviz.load(attnviz.save(tmp_path / f"a.{fmt}", doc))
    assert back.version == 2 and len(back.sets) == 3
    for a, b in zip(back.sets, doc.sets):
        assert_same_set(a, b)
    assert [s.kind for s in back.sets] == ["self", "causal", "cross"]
    assert back.sets[0].head_names[1] == ["a", "b", "c"]
    assert back.tokenizer == {"space_marker": "\u2581", "continuation_marker": None, "special_tokens": ["</s>"]}
    assert back.meta == {"model": "toy", "step": 12, "loss": None, "lr": 0.5}  # NaN is written as null


def test_v2_json_follows_the_spec(rng):
    doc = json.loads(attnviz.encode(three_sets(rng), format="json"))
    assert doc["format"] == "attnviz" and doc["version"] == 2
    enc, dec, cross = doc["sets"]
    assert enc["tokens"] == ["\u2581the", "\u2581black", "\u2581cat", "</s>"] and "query_tokens" not in enc
    assert cross["query_tokens"][0] == "\u2581le" and cross["key_tokens"][0] == "\u2581the"
    assert np.array(enc["weights"]).shape == (2, 3, 4, 4)
    assert enc["layer_names"] == ["enc.0", "enc.1"] and enc["head_names"] == ["a", "b", "c"]
    assert dec["kind"] == "causal"
    assert doc["tokenizer"]["space_marker"] == "\u2581"


def test_v2_npz_follows_the_spec(rng):
    z = np.load(io.BytesIO(attnviz.encode(three_sets(rng), format="npz")))
    assert int(z["attnviz_version"]) == 2
    assert list(z["set_names"]) == ["encoder", "decoder", "cross"]
    assert list(z["set_kinds"]) == ["self", "causal", "cross"]
    assert z["set0_attention"].shape == (2, 3, 4, 4) and z["set0_attention"].dtype == np.float32
    assert z["set0_tokens"].dtype.kind == "U" and "set0_query_tokens" not in z
    assert list(z["set2_query_tokens"]) == ["\u2581le", "\u2581chat", "\u2581noir", "</s>"]
    assert json.loads(str(z["meta_json"]))["model"] == "toy"
    assert json.loads(str(z["tokenizer_json"]))["special_tokens"] == ["</s>"]


def test_v1_holds_one_set(tmp_path, rng):
    with pytest.raises(ValueError, match="version 1 holds one attention set; this file has 3"):
        attnviz.save(tmp_path / "a.json", three_sets(rng), version=1)


def test_v1_keeps_name_kind_and_tokenizer_in_meta(rng):
    doc = three_sets(rng)
    one = AttentionFile([doc["decoder"]], tokenizer=doc.tokenizer)
    text = attnviz.encode(one, format="json", version=1)
    raw = json.loads(text)
    assert raw["version"] == 1 and raw["tokens"][0] == "\u2581le"
    assert raw["meta"]["attnviz_set"] == {"name": "decoder", "kind": "causal", "tokenizer": doc.tokenizer}
    back = attnviz.load(text)
    assert (back.sets[0].name, back.sets[0].kind, back.tokenizer, back.meta) == ("decoder", "causal", doc.tokenizer, {})


def test_layers_with_different_head_counts(tmp_path, rng):
    layers = [softmax_attention(rng, (2, 3, 3)), softmax_attention(rng, (4, 3, 3))]
    s = AttentionSet(layers, ["a", "b", "c"], head_names=[["x", "y"], ["p", "q", "r", "s"]])
    assert s.heads_per_layer == [2, 4] and not s.uniform
    with pytest.raises(ValueError, match="use .layers"):
        s.weights
    back = attnviz.load(attnviz.save(tmp_path / "a.json", s))
    assert_same_set(back.sets[0], s)
    assert back.sets[0].head_names == [["x", "y"], ["p", "q", "r", "s"]]
    with pytest.raises(ValueError, match="save it as JSON"):
        attnviz.save(tmp_path / "a.npz", s)


def test_array_shapes_accepted(rng):
    w = softmax_attention(rng, (3, 3))
    assert AttentionSet(w).weights.shape == (1, 1, 3, 3)
    assert AttentionSet(np.stack([w, w])).weights.shape == (1, 2, 3, 3)
    assert AttentionSet([np.stack([w, w])] * 4).weights.shape == (4, 2, 3, 3)  # a list of per-layer arrays
    assert AttentionSet(w.tolist()).weights.shape == (1, 1, 3, 3)
    assert AttentionSet((w * 0).astype(np.int32) + np.eye(3, dtype=np.int32)).weights.dtype == np.float32
    assert AttentionSet(w.astype(np.float16)).weights.dtype == np.float32
    assert AttentionSet(w).query_tokens == ["0", "1", "2"]
    assert AttentionSet(w, [101, 2023, np.int64(102)]).tokens == ["101", "2023", "102"]


BAD = [
    (lambda w: dict(weights=w[None, None, None]), r"must have shape \[layers, heads, n_q, n_k\].*got \[1, 1, 1, 3, 4\]"),
    (lambda w: dict(weights=w, tokens=["a", "b", "c"]),
     r"weights \[3, 4\] per head but there are 3 query tokens \(rows\) and 3 key tokens \(columns\)"),
    (lambda w: dict(weights=w, query_tokens=["a", "b"], key_tokens=list("wxyz")),
     r"weights \[3, 4\] per head but there are 2 query tokens"),
    (lambda w: dict(weights=np.where(np.arange(12).reshape(3, 4) == 6, np.nan, w)),
     r"non-finite weight \(nan\) at layer 0, head 0, row 1, column 2"),
    (lambda w: dict(weights=np.where(np.arange(12).reshape(3, 4) == 11, np.inf, w)), r"non-finite weight \(inf\)"),
    (lambda w: dict(weights=w - 0.5), r"negative weight -0\.\d+ at layer 0, head 0, row 0, column \d"),
    (lambda w: dict(weights=np.full((3, 4), 1e39)), r"weight 1e\+39 at .* is too large for float32"),
    (lambda w: dict(weights=w.astype(str)), r"must be a float or integer array, got dtype <U"),
    (lambda w: dict(weights=w > 0.2), r"must be a float or integer array, got dtype bool"),
    (lambda w: dict(weights=w.astype(complex)), r"must be a float or integer array, got dtype complex"),
    (lambda w: dict(weights=np.zeros((0, 4))), r"weights are empty"),
    (lambda w: dict(weights=w, kind="bidirectional"), r"kind must be 'self', 'causal' or 'cross'"),
    (lambda w: dict(weights=w, tokens=list("abc"), query_tokens=list("abc")), r"either tokens or query_tokens"),
    (lambda w: dict(weights=np.stack([w, w]), head_names=["one"]), r"head_names has 1 names, expected 2"),
    (lambda w: dict(weights=w, query_tokens="a b c", key_tokens=list("wxyz")), r"got one string"),
    (lambda w: dict(weights=w, query_tokens=["x" * 5000, "b", "c"], key_tokens=list("wxyz")), r"longer than 4096 bytes"),
    (lambda w: dict(weights=w, query_tokens=[1.5, "b", "c"], key_tokens=list("wxyz")), r"query_tokens\[0\] is a float"),
    (lambda w: dict(weights=[[0.5, 0.5], [1.0]]), r"not a rectangular array"),
]


@pytest.mark.parametrize("make,message", BAD)
def test_validation_errors(rng, make, message):
    w = softmax_attention(rng, (3, 4))
    with pytest.raises(ValueError, match=message):
        AttentionSet(**make(w))


def test_save_validates_too(tmp_path):
    with pytest.raises(ValueError, match="non-finite"):
        attnviz.save(tmp_path / "a.npz", np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="cannot tell the format"):
        attnviz.save(tmp_path / "a.txt", np.eye(2))
    with pytest.raises(ValueError, match=r"meta\.ids: a set cannot be written as JSON"):
        attnviz.save(tmp_path / "a.json", np.eye(2), meta={"ids": {1, 2}})
    assert not list(tmp_path.iterdir())  # nothing is written when the data is refused


def test_negative_noise_is_clamped_and_bad_rows_warned(rng):
    w = np.array([[0.5, 0.5, -1e-7], [0.2, 0.2, 0.2]])
    s = AttentionSet(w)
    assert s.weights.min() == 0.0
    assert s.warnings == ["set 'attention' layer 0 ('layer 0') head 0 ('head 0'): 1 of 2 rows do not sum to 1 "
                          "(largest |sum - 1| = 0.4)"]
    with pytest.warns(AttentionWarning, match="1 of 2 rows do not sum to 1"):
        attnviz.load(attnviz.encode(s))


# ---- reading what others write ---------------------------------------------------------------------
SPEC_V1 = """{
  "format": "attnviz",
  "version": 1,
  "source_tokens": ["the", "cat", "sat"],
  "target_tokens": ["le", "chat"],
  "layers": [
    {"name": "decoder.0.cross_attn",
     "heads": [
       {"name": "head 0", "weights": [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]},
       {"name": "head 1", "weights": [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]}
     ]}
  ],
  "meta": {"model": "my-nmt", "checkpoint": 12000}
}"""

SPEC_V2 = """{
  "format": "attnviz", "version": 2,
  "tokenizer": {"space_marker": "\u2581", "continuation_marker": null, "special_tokens": ["</s>", "<pad>"]},
  "sets": [
    {"name": "encoder", "kind": "self", "tokens": ["\u2581the", "\u2581cat", "</s>"],
     "weights": [[[[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]]]},
    {"name": "cross", "kind": "cross", "query_tokens": ["\u2581le", "\u2581chat", "</s>"],
     "key_tokens": ["\u2581the", "\u2581cat", "</s>"],
     "weights": [[[[0.9, 0.05, 0.05], [0.1, 0.85, 0.05], [0.1, 0.1, 0.8]]]]}
  ],
  "meta": {"model": "Helsinki-NLP/opus-mt-en-fr"}
}"""


def test_reads_the_spec_examples():
    v1 = attnviz.load(SPEC_V1.encode())
    s = v1.sets[0]
    assert (v1.version, s.name, s.kind, s.query_tokens, s.key_tokens) == (1, "attention", "cross", ["le", "chat"],
                                                                          ["the", "cat", "sat"])
    assert s.layer_names == ["decoder.0.cross_attn"] and s.head_names == [["head 0", "head 1"]]
    np.testing.assert_allclose(s.weights[0, 0], [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]])
    assert v1.meta == {"model": "my-nmt", "checkpoint": 12000}
    v2 = attnviz.load(("\ufeff  " + SPEC_V2).encode())  # a BOM and white space are fine
    assert [(s.name, s.kind, s.n_q, s.n_k) for s in v2.sets] == [("encoder", "self", 3, 3), ("cross", "cross", 3, 3)]
    assert v2.tokenizer["special_tokens"] == ["</s>", "<pad>"] and v2.meta["model"].startswith("Helsinki")


def test_reads_v1_shorthands():
    doc = attnviz.load(b'{"tokens": ["a", "b"], "layers": [{"heads": [[[0.5, 0.5], [0, 1]]]}]}')
    assert (doc.sets[0].kind, doc.sets[0].layer_names, doc.sets[0].head_names) == ("self", ["layer 0"], [["head 0"]])
    with pytest.warns(AttentionWarning, match="no source tokens given; using indices"):
        doc = attnviz.load(b'{"weights": [[0.25, 0.75]], "target_tokens": [7]}')
    assert (doc.sets[0].query_tokens, doc.sets[0].key_tokens) == (["7"], ["0", "1"])


def test_reads_numpy_written_files(tmp_path, rng):
    w = softmax_attention(rng, (2, 3, 3))
    buf = io.BytesIO()
    np.savez(buf, attention=w.astype(np.float64), tokens=np.array([b"x", b"y", b"z"]), head_names=np.array(["p", "q"]))
    doc = attnviz.load(buf.getvalue())
    assert doc.sets[0].tokens == ["x", "y", "z"] and doc.sets[0].head_names == [["p", "q"]]
    np.testing.assert_array_equal(doc.sets[0].weights[0], w)
    buf = io.BytesIO()
    np.savez_compressed(buf, head_weights=w, source_tokens=np.array([5, 6, 7]), target_tokens=np.array(list("abc")))
    doc = attnviz.load(buf.getvalue())  # attnviz-cli attend output
    assert doc.sets[0].layer_names == ["head_weights"] and doc.sets[0].key_tokens == ["5", "6", "7"]
    np.save(tmp_path / "a.npy", w[0])
    with pytest.warns(AttentionWarning):
        assert attnviz.load(tmp_path / "a.npy").sets[0].weights.shape == (1, 1, 3, 3)


LOAD_ERRORS = [
    (b"", "the file is empty"),
    (b"hello", "unrecognised file"),
    (b'{"weights": [[NaN, 1]]}', "NaN and Infinity are not valid JSON numbers"),
    (b'{"weights": [[null, 1]]}', r"row 0 must be an array of numbers \(null, strings, NaN are not allowed\)"),
    (b'{"weights": [["0.5", 1]]}', "row 0 must be an array of numbers"),
    (b'{"weights": [[0.5, 0.5], [1]]}', "row 1 has 1 values, row 0 has 2"),
    (b'{"weights": [[1e39]]}', "too large for float32"),
    (b'{"weights": [[1e999]]}', "non-finite"),
    (b'{"version": 3, "weights": [[1]]}', "version 3 is not supported"),
    (b'{"format": "other", "weights": [[1]]}', '"format" must be "attnviz"'),
    (b'{"tokens": ["a"], "source_tokens": ["a"], "weights": [[1]]}', 'either "tokens" or "source_tokens"'),
    (b'{"tokens": ["a", "b"], "weights": [[1]]}', r"has weights \[1, 1\] but there are 2 query tokens"),
    (b'{"layers": [{"heads": []}], "tokens": ["a"]}', "has no heads"),
    (b'{"version": 2, "sets": []}', 'version 2 needs "sets"'),
    (b'{"version": 2, "sets": [{"weights": [[1]]}]}', r"sets\[0\] \('set 0'\): needs \"tokens\""),
    (b'{"version": 2, "sets": [{"tokens": ["a"], "kind": "x", "weights": [[1]]}]}', '"kind" must be'),
    (b'{"version": 2, "sets": [{"tokens": ["a"], "weights": [[[[[1]]]]]}]}', "must be nested"),
    (b'{"version": 2, "sets": [{"tokens": ["a"], "weights": [[1]], "layer_names": ["x", "y"]}]}',
     '"layer_names" has 2 names, expected 1'),
    (b'[{"attn": [[[[1]]]], "left_text": ["a"]}]', r'bertviz: attention\[0\] \(\'attention\'\): needs "tokens", or'),
]


@pytest.mark.parametrize("data,message", LOAD_ERRORS)
def test_load_errors(data, message):
    with pytest.raises(ValueError, match=message):
        attnviz.load(data)


def test_load_errors_npz(rng):
    def npz(**arrays):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    w = softmax_attention(rng, (2, 2))
    with pytest.raises(ValueError, match="pickles|allow_pickle|object"):
        attnviz.load(npz(attention=np.array([w, "x"], dtype=object)))
    with pytest.raises(ValueError, match="no 'attention' array .* the file has: other"):
        attnviz.load(npz(other=w))
    with pytest.raises(ValueError, match="version 2 needs 'set_names'"):
        attnviz.load(npz(attnviz_version=np.array(2), set0_attention=w, set0_tokens=np.array(["a", "b"])))
    with pytest.raises(ValueError, match=r"set_kinds\[0\] = 'sideways'"):
        attnviz.load(npz(attnviz_version=np.array(2), set_names=np.array(["s"]), set_kinds=np.array(["sideways"]),
                         set0_attention=w, set0_tokens=np.array(["a", "b"])))
    with pytest.raises(ValueError, match="non-finite"):
        attnviz.load(npz(attention=np.array([[np.nan, 1.0]])))
    with pytest.raises(ValueError, match="cannot read the file"):
        attnviz.load(b"PK\x03\x04 truncated")


# ---- the C++ side reads what Python writes ------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "npz"])
def test_cli_reads_version_1(tmp_path, rng, cli, fmt):
    w = softmax_attention(rng, (2, 3, 3, 4))
    q, k = ["le", "chat", "noir"], ["\u2581the", "black", "cat", "<s>"]
    path = attnviz.save(tmp_path / f"a.{fmt}", w, query_tokens=q, key_tokens=k, version=1,
                        layer_names=["dec.0", "dec.1"], head_names=["h0", "h1", "h2"])
    out = subprocess.run([cli, "inspect", path], capture_output=True, text=True, check=True).stdout
    assert "2 layers, 6 heads in total, n_q=3 (target) x n_k=4 (source)" in out, out
    assert 'source tokens (4): "\u2581the" "black" "cat" "<s>"' in out
    assert 'target tokens (3): "le" "chat" "noir"' in out
    assert 'layer 1 "dec.1": 3 heads: "h0" "h1" "h2"' in out
    svg = tmp_path / "h.svg"
    subprocess.run([cli, "render", "--in", path, "--svg", str(svg), "--layer", "1", "--head", "2", "--values"],
                   capture_output=True, text=True, check=True)
    cells = [float(v) for v in re.findall(r'fill="(?:black|white)">([0-9.]+)</text>', svg.read_text())]
    assert len(cells) == 12
    np.testing.assert_allclose(cells, w[1, 2].ravel(), atol=0.0051)  # the SVG prints two decimals
