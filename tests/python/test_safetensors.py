"""The safetensors writer (attnviz.SafetensorsWriter, save(format="safetensors")) and Range serving:
what Python writes, attnviz-cli reads (and the other way round), values F16-rounded, overviews
max-pooled, layers streamed one at a time, PyTorch's attention exported, HTTP Range answered."""
import http.client
import io
import os
import json
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import attnviz
from attnviz import _safetensors, _serve
from conftest import softmax_attention


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n)), 8 + n


def test_writer_round_trips_two_sets(tmp_path, rng):
    enc = softmax_attention(rng, (2, 3, 5, 5))
    dec = [softmax_attention(rng, (2, 4, 5)), softmax_attention(rng, (3, 4, 5))]  # layers differ in heads
    path = tmp_path / "two.safetensors"
    with attnviz.SafetensorsWriter(path, sets=[
            dict(name="encoder", tokens=list("abcde"), layers=2, heads=3, layer_names=["e0", "e1"]),
            dict(name="cross", query_tokens=["w", "x", "y", "z"], key_tokens=list("abcde"), layers=2, heads=[2, 3])],
            tokenizer={"special_tokens": ["e"]}, meta={"model": "tiny"}) as w:
        for l in range(2):
            w.write_layer(l, dec[l], set=1)  # any order
            w.write_layer(l, enc[l], set=0)
    doc = attnviz.load(path)
    assert [s.name for s in doc.sets] == ["encoder", "cross"]
    assert doc.sets[1].kind == "cross" and doc.sets[0].layer_names == ["e0", "e1"]
    assert doc.meta == {"model": "tiny"} and doc.tokenizer["special_tokens"] == ["e"]
    np.testing.assert_array_equal(doc.sets[0].weights, enc.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(doc.sets[1].layers[1], dec[1].astype(np.float16).astype(np.float32))
    header, start = header_of(path)
    assert header["__metadata__"]["format"] == "attnviz" and header["__metadata__"]["version"] == "2"
    assert header["overview.1.1"]["shape"] == [3, 4, 5]
    assert start % 8 == 0


def pooled_reference(heads, R, C):
    """[heads, n_q, n_k] -> [heads, R, C], block by block as docs/FORMATS.md defines it (not the writer's reduceat)."""
    n_q, n_k = heads.shape[1:]
    want = np.zeros((heads.shape[0], R, C), np.float32)
    for r in range(R):
        for c in range(C):
            want[:, r, c] = heads[:, r * n_q // R:(r + 1) * n_q // R, c * n_k // C:(c + 1) * n_k // C].max(axis=(1, 2))
    return want


def test_overviews_are_max_pooled(tmp_path, rng):
    w = softmax_attention(rng, (1, 2, 300, 600))
    path = tmp_path / "pool.safetensors"
    attnviz.save(path, w, dtype="f32")
    header, start = header_of(path)
    t = header["overview.0.0"]
    assert t["shape"] == [2, 256, 256]
    raw = np.fromfile(path, dtype="<f4", count=2 * 256 * 256, offset=start + t["data_offsets"][0]).reshape(2, 256, 256)
    np.testing.assert_array_equal(raw, pooled_reference(w[0], 256, 256))


def test_screen_copies_for_heads_over_1024(tmp_path, rng):
    # A head over 1024 on a side gets a max-pooled screen copy "screen.s.l" [heads, <=1024, <=1024],
    # written in pieces like the rest; smaller heads get none (the overview or the head is as good).
    w = np.zeros((1, 2, 1100, 40), np.float32)
    w[0, 0, 1099, 7] = 0.75  # the last rows' block: rows [1023 * 1100 // 1024, 1100)
    w[0, 1, 3, 39] = 0.5
    path = tmp_path / "screen.safetensors"
    attnviz.save(path, w, dtype="f32")
    header, start = header_of(path)
    t = header["screen.0.0"]
    assert t["shape"] == [2, 1024, 40]
    raw = np.fromfile(path, dtype="<f4", count=2 * 1024 * 40, offset=start + t["data_offsets"][0]).reshape(2, 1024, 40)
    assert raw[0, 1023, 7] == np.float32(0.75) and raw[1, 3, 39] == np.float32(0.5)
    assert raw.sum() == np.float32(1.25)
    small = tmp_path / "small.safetensors"
    attnviz.save(small, w[:, :, :1024], dtype="f32")
    assert not any(k.startswith("screen.") for k in header_of(small)[0])


def test_thumbnails_for_heads_over_64_laid_out_as_the_cli_does(tmp_path, rng, cli):
    # A head over 64 on a side gets a max-pooled thumbnail "thumb.s.l" [heads, <=64, <=64] for the
    # grid's small cells, after the statistics and before the overviews; smaller heads get none. The
    # CLI's writer lays out the same tensors at the same offsets, with the same bytes.
    w = softmax_attention(rng, (2, 2, 100, 70))
    w[1, 1, 99, 69] = 0.875  # the last block: rows [63 * 100 // 64, 100), columns [63 * 70 // 64, 70)
    tokens = [f"t{i}" for i in range(70)]
    path = tmp_path / "thumb.safetensors"
    attnviz.save(path, w, query_tokens=[f"q{i}" for i in range(100)], key_tokens=tokens, dtype="f32")
    header, start = header_of(path)
    t = header["thumb.0.1"]
    assert t["shape"] == [2, 64, 64] and t["dtype"] == "F32"
    assert header["thumb.0.0"]["data_offsets"][0] == header["stats.0.1"]["data_offsets"][1]
    assert header["overview.0.0"]["data_offsets"][0] == t["data_offsets"][1]
    raw = np.fromfile(path, dtype="<f4", count=2 * 64 * 64, offset=start + t["data_offsets"][0]).reshape(2, 64, 64)
    np.testing.assert_array_equal(raw, pooled_reference(w[1], 64, 64))
    assert raw[1, 63, 63] == np.float32(0.875)
    src = tmp_path / "in.npz"
    attnviz.save(src, w, query_tokens=[f"q{i}" for i in range(100)], key_tokens=tokens, version=1)
    out = tmp_path / "cli.safetensors"
    r = subprocess.run([cli, "convert", str(src), str(out), "--dtype", "f32"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cheader, cstart = header_of(out)
    for name in ("thumb.0.0", "thumb.0.1", "overview.0.0", "attention.0.1"):
        assert cheader[name]["shape"] == header[name]["shape"]
        a, b = header[name]["data_offsets"], cheader[name]["data_offsets"]
        assert a == b, name
        assert path.read_bytes()[start + a[0]:start + a[1]] == out.read_bytes()[cstart + b[0]:cstart + b[1]], name
    small = tmp_path / "small.safetensors"
    attnviz.save(small, w[:, :, :64, :64], dtype="f32")
    assert not any(k.startswith("thumb.") for k in header_of(small)[0])


def heads_table(out):
    """The rows of `attnviz-cli inspect --heads`: (layer, head) -> [entropy, max_weight, first_token,
    diagonality, offset, mass], in the order printed."""
    rows = {}
    for line in out[out.index("offset (mass)"):].splitlines()[1:]:
        p = line.replace("(", " ").replace(")", " ").split()
        if "no statistics" in line:
            rows[(int(p[0]), int(p[1]))] = None
        elif len(p) == 8 and p[0].isdigit():
            rows[(int(p[0]), int(p[1]))] = [float(x) for x in p[2:]]
    return rows


def test_every_heads_statistics_are_stored_as_the_viewer_computes_them(tmp_path, rng, cli):
    # 2 layers x 3 heads of 70 x 90: softmax heads, a causal one, a masked query row, NaN and negative
    # weights (the readers show them as 0), a head of zeros; stored F32 [heads, 8] before the rest.
    w = softmax_attention(rng, (2, 3, 70, 90))
    w[0, 1] = softmax_attention(rng, (70, 90), causal=True)
    w[0, 2, 5] = 0.0
    w[1, 0, 3, 4] = np.nan
    w[1, 0, 6, 7] = -0.25
    w[1, 2] = 0.0
    path = tmp_path / "stats.safetensors"
    q, k = [f"q{i}" for i in range(70)], [f"k{i}" for i in range(90)]
    with attnviz.SafetensorsWriter(path, query_tokens=q, key_tokens=k, layers=2, heads=3) as writer:
        for l in range(2):  # save() refuses NaN; the writer takes what a model gives
            writer.write_layer(l, w[l])
    header, start = header_of(path)
    names = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
    assert names[:6] == ["stats.0.0", "stats.0.1", "thumb.0.0", "thumb.0.1", "overview.0.0", "overview.0.1"]
    assert header["stats.0.1"] == {"dtype": "F32", "shape": [3, 8], "data_offsets": [96, 192]}
    stored = np.fromfile(path, dtype="<f4", count=6 * 8, offset=start).reshape(6, 8)
    fixed = np.where(np.isfinite(w) & (w > 0), w, 0)
    keys = ("entropy", "entropy_normalized", "max_weight", "first_token", "diagonality", "dominant_offset",
            "dominant_offset_mass", "rows_counted")
    for i, h in enumerate(attnviz.head_stats(fixed, query_tokens=q, key_tokens=k)):
        np.testing.assert_allclose(stored[i], [h[k] for k in keys], rtol=2e-5, atol=1e-6, err_msg=str(h))
    assert stored[2, 7] == 69 and stored[5, 7] == 0 and stored[5, 0] == 0  # a masked row; a head of zeros
    # The viewer's own computation (attnviz-cli inspect --recompute reads every head, F16-rounded):
    # the stored table, within that rounding.
    r = subprocess.run([cli, "inspect", "--sort", "entropy", str(path)], capture_output=True, text=True)
    again = subprocess.run([cli, "inspect", "--recompute", "--sort", "entropy", str(path)], capture_output=True,
                           text=True)
    assert r.returncode == 0 and again.returncode == 0, r.stderr + again.stderr
    assert "statistics stored in the file" in r.stdout and "statistics stored in the file" not in again.stdout
    a, b = heads_table(r.stdout), heads_table(again.stdout)
    assert len(a) == 6 and a.keys() == b.keys()
    for k in a:
        if a[k] is None or b[k] is None:
            assert a[k] is None and b[k] is None and k == (1, 2), k  # the head of zeros: none
        else:
            np.testing.assert_allclose(a[k], b[k], atol=2e-3, err_msg=str(k))
    assert list(a) == list(b) and list(a)[-1] == (1, 2)  # sorted alike, the head of zeros last


def test_stored_stats_of_long_heads_are_summed_a_block_of_rows_at_a_time(rng):
    # The mass by diagonal goes a block of rows at a time (a 32k-token head skewed at once: 8 GiB):
    # several blocks give what attnviz.head_stats gives in float64.
    keys = ("entropy", "entropy_normalized", "max_weight", "first_token", "diagonality", "dominant_offset",
            "dominant_offset_mass", "rows_counted")
    for n_q, n_k in ((5000, 3), (2049, 700), (3, 5000)):
        a = (rng.random((n_q, n_k)) ** 6).astype(np.float32)
        a /= a.sum(axis=1, keepdims=True)
        a[1] = 0.0
        want = attnviz.head_stats(a, query_tokens=[str(i) for i in range(n_q)],
                                  key_tokens=[str(i) for i in range(n_k)])[0]
        np.testing.assert_allclose(_safetensors.stored_stats(a), [want[k] for k in keys], rtol=2e-5, atol=1e-6,
                                   err_msg=f"{n_q} x {n_k}")
    import tracemalloc
    tall = np.zeros((20000, 8), np.float32)  # skewed whole: 20000 x 20007 floats, 1.6 GB
    tall[:, 0] = 1.0
    tracemalloc.start()
    got = _safetensors.stored_stats(tall)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 << 20, f"{peak / 2 ** 20:.0f} MiB for a 20000 x 8 head"
    assert got[3] == 1.0 and got[7] == 20000  # all on the first token


def test_head_stats_of_a_safetensors_file_are_its_stored_ones_read_without_the_weights(tmp_path, rng, cli,
                                                                                        monkeypatch):
    w = softmax_attention(rng, (2, 3, 40, 40)) ** 2
    w /= w.sum(axis=-1, keepdims=True)
    w[1, 1] = 0.0  # no statistics: last
    tokens = [f"t{i}" for i in range(40)]
    path = attnviz.save(tmp_path / "m.safetensors", w, tokens=tokens, dtype="f32")
    converted = tmp_path / "c.safetensors"  # the C++ writer's statistics
    subprocess.run([cli, "convert", str(path), str(converted)], check=True, capture_output=True)
    want = attnviz.head_stats(w, tokens=tokens, sort="entropy")

    def no_load(*a, **k):
        raise AssertionError("the weights were read")
    monkeypatch.setattr(attnviz._io, "load", no_load)
    for f in (path, converted):
        got = attnviz.head_stats(f, sort="entropy")
        assert [(r["layer"], r["head"]) for r in got] == [(r["layer"], r["head"]) for r in want], f
        assert (got[-1]["layer"], got[-1]["head"], got[-1]["rows_counted"]) == (1, 1, 0)
        for a, b in zip(got, want):
            for k in ("entropy", "max_weight", "first_token", "diagonality", "dominant_offset_mass"):
                assert abs(a[k] - b[k]) < 2e-3, (f, a, b)  # F16-rounded heads for the converted file
            assert a["dominant_offset"] == b["dominant_offset"] and a["rows_counted"] == b["rows_counted"]
    with pytest.raises(ValueError, match="set='nope'"):
        attnviz.head_stats(path, set="nope")


def test_bf16_rounds_like_torch(tmp_path, rng):
    import torch
    x = rng.random(1000).astype(np.float32)
    x[::97] = np.nan
    ours = np.frombuffer(_safetensors.encode(x, "bf16"), dtype="<u2")
    theirs = torch.from_numpy(x).bfloat16().view(torch.int16).numpy().view(np.uint16)
    finite = ~np.isnan(x)
    np.testing.assert_array_equal(ours[finite], theirs[finite])
    assert np.isnan((ours[~finite].astype(np.uint32) << 16).view(np.float32)).all()


def test_layers_stream_from_torch_outputs(tmp_path, rng, cli):
    import torch
    # transformers' outputs.attentions: one [batch=1, heads, n, n] tensor per layer.
    layers = tuple(torch.from_numpy(softmax_attention(rng, (1, 4, 6, 6))) for _ in range(3))
    path = tmp_path / "hf.safetensors"
    attnviz.save(path, layers, tokens=["[CLS]", "the", "cat", "sat", ".", "[SEP]"])
    out = tmp_path / "hf.json"
    r = subprocess.run([cli, "convert", str(path), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = attnviz.load(out)
    assert doc.sets[0].tokens[0] == "[CLS]" and doc.sets[0].n_layers == 3
    np.testing.assert_allclose(doc.sets[0].layers[2], layers[2][0].numpy().astype(np.float16).astype(np.float32),
                               rtol=0, atol=1e-7)


def test_pytorch_attention_exports_to_the_lazy_format(tmp_path, rng):
    import torch
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True), 2)
    model.eval()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(torch.randn(1, 7, 16))
    doc = cap.attention(tokens=[f"w{i}" for i in range(7)])
    path = tmp_path / "captured.safetensors"
    attnviz.save(path, doc)
    back = attnviz.load(path)
    assert back.sets[0].n_layers == 2 and back.sets[0].heads_per_layer == [2, 2]
    np.testing.assert_array_equal(back.sets[0].weights, doc.sets[0].weights.astype(np.float16).astype(np.float32))


def test_cli_convert_writes_what_python_reads(tmp_path, rng, cli):
    w = softmax_attention(rng, (2, 3, 9, 9))
    src = tmp_path / "in.npz"
    attnviz.save(src, w, tokens=[f"t{i}" for i in range(9)], version=1)
    out = tmp_path / "out.safetensors"
    r = subprocess.run([cli, "convert", str(src), str(out), "--dtype", "bf16"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    doc = attnviz.load(out)
    np.testing.assert_allclose(doc.sets[0].weights, w, rtol=2 ** -8, atol=0)
    assert doc.sets[0].tokens == [f"t{i}" for i in range(9)]
    r = subprocess.run([cli, "convert", str(src), str(tmp_path / "x.txt")], capture_output=True, text=True)
    assert r.returncode == 2 and ".safetensors, .json or .npz" in r.stderr


def test_missing_layers_and_bad_shapes_are_refused(tmp_path, rng):
    path = tmp_path / "half.safetensors"
    with pytest.raises(ValueError, match="not every layer was written"):
        with attnviz.SafetensorsWriter(path, tokens=list("abc"), layers=2, heads=1) as w:
            w.write_layer(0, softmax_attention(rng, (1, 3, 3)))
    assert not path.exists()
    with pytest.raises(ValueError, match=r"expected \[1, 3, 3\]"):
        with attnviz.SafetensorsWriter(path, tokens=list("abc"), layers=1, heads=1) as w:
            w.write_layer(0, softmax_attention(rng, (2, 3, 3)))
    assert not path.exists()


def test_serve_answers_range_requests(tmp_path, rng, app_dir):
    path = tmp_path / "big.safetensors"
    attnviz.save(path, softmax_attention(rng, (2, 2, 40, 40)), tokens=[str(i) for i in range(40)])
    data = path.read_bytes()
    server = _serve.make_server(str(path), app_dir=app_dir, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        def get(headers, method="GET"):
            c = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
            c.request(method, "/data/big.safetensors", headers=headers)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()

        status, h, body = get({"Range": "bytes=8-99"})
        assert status == 206 and body == data[8:100] and h["Content-Range"] == f"bytes 8-99/{len(data)}"
        status, h, body = get({"Range": "bytes=-16"})
        assert status == 206 and body == data[-16:]
        status, h, body = get({})
        assert status == 200 and body == data and h["Accept-Ranges"] == "bytes"
        status, h, body = get({"Range": f"bytes={len(data)}-"})
        assert status == 416 and h["Content-Range"] == f"bytes */{len(data)}"
        status, h, body = get({}, "HEAD")
        assert status == 200 and body == b"" and int(h["Content-Length"]) == len(data)
    finally:
        server.shutdown()
        server.server_close()


def sparse_npy(path, shape, dtype="<f2"):
    """A .npy of `shape` whose data is a hole (truncate): np.save's header, no weights written."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": dtype, "fortran_order": False, "shape": shape})
        f.truncate(f.tell() + int(np.prod(shape)) * np.dtype(dtype).itemsize)
    return path


def test_serve_gives_a_npy_too_big_to_read_whole_as_it_is(tmp_path, rng, app_dir):
    # [16, 8, 2048, 2048] float16: 2^29 weights, 1 GiB (a hole): served from disk, with Range requests.
    big = sparse_npy(tmp_path / "big.npy", (16, 8, 2048, 2048))
    assert _serve.npy_too_big(str(big))
    assert _serve.prepare(str(big)) == ("big.npy", None)
    small = tmp_path / "small.npy"
    np.save(small, softmax_attention(rng, (2, 2, 5, 5)))
    assert not _serve.npy_too_big(str(small))
    name, body = _serve.prepare(str(small))
    assert name == "small.npy" and body == small.read_bytes()  # read whole by the viewer, from these bytes
    server = _serve.make_server(str(big), app_dir=app_dir, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        c = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
        c.request("GET", "/data/big.npy", headers={"Range": "bytes=0-127"})
        r = c.getresponse()
        head = r.read()
        assert r.status == 206 and head[:6] == b"\x93NUMPY" and b"(16, 8, 2048, 2048)" in head
        assert r.getheader("Content-Range") == f"bytes 0-127/{big.stat().st_size}"
        c.request("GET", "/")
        page = c.getresponse().read().decode()
        assert "safetensors|np[yz]" in page  # the page opens it with openUrl, which reads it lazily
    finally:
        server.shutdown()
        server.server_close()


def test_inspect_describes_a_npy_too_big_to_read_whole_from_its_header(tmp_path):
    # 1 GiB of holes: read whole it would take a second and a GiB; the header says what it is.
    big = sparse_npy(tmp_path / "big.npy", (16, 8, 2048, 2048))
    r = subprocess.run([sys.executable, "-m", "attnviz", "inspect", str(big)], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=str(Path(attnviz.__file__).parents[1])))
    assert r.returncode == 0, r.stderr
    assert "npy, 1.0 GiB, <f2 (16, 8, 2048, 2048), too big to read whole" in r.stdout


def fake_big_npz(path, compressed=False):
    """An .npz whose stored attention member's header declares [64, 64, 8192, 8192] float16 (2^38
    weights) and holds nothing after it, and its tokens: what np.savez writes, as far as the headers go."""
    import zipfile
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f2", "fortran_order": False,
                                                  "shape": (64, 64, 8192, 8192)})
    tokens = io.BytesIO()
    np.save(tokens, np.array([f"w{i}" for i in range(8192)]))
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("attention.npy", header.getvalue())
        z.writestr("tokens.npy", tokens.getvalue())
    return path


def test_an_npz_too_big_to_read_whole_is_served_as_it_is_if_stored_and_inspected_from_its_headers(tmp_path, rng):
    big = fake_big_npz(tmp_path / "big.npz")
    assert _serve.npz_too_big(str(big)) and _serve.npz_stored(str(big))
    assert _serve.prepare(str(big)) == ("big.npz", None)  # from disk, with Range requests: the page reads it lazily
    small = tmp_path / "small.npz"
    np.savez(small, attention=softmax_attention(rng, (2, 2, 5, 5)), tokens=np.array(list("abcde")))
    assert not _serve.npz_too_big(str(small))
    assert _serve.prepare(str(small))[1] is not None  # read whole, as before
    zipped = fake_big_npz(tmp_path / "zipped.npz", compressed=True)
    with pytest.raises(ValueError, match=r"zipped.npz \(0.0 GiB\) is too big for the page to read whole, and its "
                                         r"attention is compressed \(np.savez_compressed\)"):
        _serve.prepare(str(zipped))
    env = dict(os.environ, PYTHONPATH=str(Path(attnviz.__file__).parents[1]))
    r = subprocess.run([sys.executable, "-m", "attnviz", "inspect", str(zipped)], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert "npz, 0.0 GiB, too big for the page to read whole" in r.stdout
    assert "attention.npy: <f2 (64, 64, 8192, 8192) (compressed)" in r.stdout
    assert "tokens.npy: <U5 (8192,) (compressed)" in r.stdout
    assert "its attention is compressed" in r.stdout
    r = subprocess.run([sys.executable, "-m", "attnviz", "inspect", str(big)], capture_output=True, text=True,
                       timeout=60, env=env)
    assert "the viewer reads it lazily, head by head" in r.stdout, r.stdout
    r = subprocess.run([sys.executable, "-m", "attnviz", "serve", str(zipped), "--port", "0"], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 1 and "its attention is compressed" in r.stderr, r.stderr
