"""attnviz.capture on real torch modules (Debian's python3-torch): recorded weights equal what torch
returns with need_weights=True, average_attn_weights=False, and the model's outputs do not change,
also where torch's fast paths would skip the attention modules (eval mode under no_grad)."""
import numpy as np
import pytest
import torch
from torch import nn

import attnviz

ATOL = 1e-6  # float32 rounding between torch's fused and regular paths


def largest_error(a, b):
    return float((torch.as_tensor(a) - torch.as_tensor(b)).abs().max())


def reference(mha, q, k, v, **kwargs):
    """torch's own per-head weights for this call."""
    with torch.no_grad():
        return mha(q, k, v, need_weights=True, average_attn_weights=False, **kwargs)[1].numpy()


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_modules(batch_first):
    torch.manual_seed(0)
    self_attn = nn.MultiheadAttention(8, 2, batch_first=batch_first).eval()
    cross_attn = nn.MultiheadAttention(8, 4, kdim=6, vdim=6, batch_first=batch_first).eval()
    x = torch.randn(2, 5, 8) if batch_first else torch.randn(5, 2, 8)
    mem = torch.randn(2, 3, 6) if batch_first else torch.randn(3, 2, 6)
    kpm = torch.tensor([[False, False, False, False, False], [False, False, False, True, True]])
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    model = nn.ModuleDict({"self_attn": self_attn, "cross_attn": cross_attn})

    with torch.no_grad():  # the fast path of MultiheadAttention itself (batch_first, even heads, eval, no grad)
        expect = [self_attn(x, x, x, need_weights=False)[0], self_attn(x, x, x, key_padding_mask=kpm),
                  self_attn(x, x, x, attn_mask=causal, average_attn_weights=False), cross_attn(x, mem, mem)]
        with attnviz.capture(model) as cap:
            got = [self_attn(x, x, x, need_weights=False), self_attn(x, x, x, key_padding_mask=kpm),
                   self_attn(x, x, x, attn_mask=causal, average_attn_weights=False), cross_attn(x, mem, mem)]

    # What the caller asked for is what it gets: no weights, the mean over heads, or per head.
    assert got[0][1] is None
    assert largest_error(got[0][0], expect[0]) <= ATOL
    for (o, w), (eo, ew) in zip(got[1:], expect[1:]):
        assert largest_error(o, eo) <= ATOL and largest_error(w, ew) <= ATOL and w.shape == ew.shape
    assert got[2][1].shape == (2, 2, 5, 5)

    refs = [reference(self_attn, x, x, x), reference(self_attn, x, x, x, key_padding_mask=kpm),
            reference(self_attn, x, x, x, attn_mask=causal), reference(cross_attn, x, mem, mem)]
    assert [(r.module_name, r.call, r.self_attention) for r in cap.records] == [
        ("self_attn", 0, True), ("self_attn", 1, True), ("self_attn", 2, True), ("cross_attn", 0, False)]
    for r, ref in zip(cap.records, refs):
        assert r.weights.shape == ref.shape
        err = largest_error(r.weights, ref)
        assert err <= ATOL, f"{r}: largest error {err:.2e}"
    assert cap.records[1].key_padding_mask.tolist() == kpm.tolist()

    # One set per module; call= picks the call, padding is dropped, kinds come from the weights.
    doc = cap.attention(tokens=list("abcde"), source_tokens=["m0", "m1", "m2"])  # the last call of each
    assert [(s.name, s.kind) for s in doc.sets] == [("self_attn", "causal"), ("cross_attn", "cross")]
    assert doc["cross_attn"].key_tokens == ["m0", "m1", "m2"]
    doc = cap.attention(tokens=list("abcde"), source_tokens=["m0", "m1", "m2"], call=0)
    assert [(s.name, s.kind) for s in doc.sets] == [("self_attn", "self"), ("cross_attn", "cross")]
    assert [s.name for s in cap.attention(tokens=list("abcde"), source_tokens=list("xyz"), call=2).sets] == ["self_attn"]  # cross ran once
    doc = cap.attention(tokens=list("abcde"), source_tokens=["m0", "m1", "m2"], call=1, batch=1)
    s = doc["self_attn"]
    assert (s.kind, s.tokens) == ("self", ["a", "b", "c"])
    np.testing.assert_array_equal(s.weights[0], refs[1][1][:, :3, :3])
    # Restored: no instance forward left behind.
    assert "forward" not in self_attn.__dict__ and "forward" not in cross_attn.__dict__


def manual_transformer(model, src, tgt, tgt_mask, src_kpm=None):
    """nn.Transformer (post-norm, eval) step by step, with torch's own weights for every attention module."""
    weights = {}
    with torch.no_grad():
        x = src
        for i, layer in enumerate(model.encoder.layers):
            weights[f"encoder.layers.{i}.self_attn"] = reference(layer.self_attn, x, x, x, key_padding_mask=src_kpm)
            a = layer.self_attn(x, x, x, key_padding_mask=src_kpm, need_weights=False)[0]
            x = layer.norm1(x + a)
            x = layer.norm2(x + layer.linear2(layer.activation(layer.linear1(x))))
        memory = model.encoder.norm(x)
        y = tgt
        for i, layer in enumerate(model.decoder.layers):
            weights[f"decoder.layers.{i}.self_attn"] = reference(layer.self_attn, y, y, y, attn_mask=tgt_mask)
            y = layer.norm1(y + layer.self_attn(y, y, y, attn_mask=tgt_mask, need_weights=False)[0])
            weights[f"decoder.layers.{i}.multihead_attn"] = reference(layer.multihead_attn, y, memory, memory,
                                                                      key_padding_mask=src_kpm)
            y = layer.norm2(y + layer.multihead_attn(y, memory, memory, key_padding_mask=src_kpm,
                                                     need_weights=False)[0])
            y = layer.norm3(y + layer.linear2(layer.activation(layer.linear1(y))))
        return model.decoder.norm(y), weights


def small_transformer():
    torch.manual_seed(0)
    return nn.Transformer(d_model=16, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=32,
                          batch_first=True).eval()


def test_transformer_fast_path():
    model = small_transformer()
    src, tgt = torch.randn(1, 5, 16), torch.randn(1, 4, 16)
    tgt_mask = model.generate_square_subsequent_mask(4)
    calls = []
    hook = model.encoder.layers[0].self_attn.register_forward_hook(lambda *a: calls.append(1))
    with torch.no_grad():
        out0 = model(src, tgt, tgt_mask=tgt_mask)
        assert not calls, "torch no longer skips the encoder's attention modules here: the test lost its point"
        with attnviz.capture(model) as cap:
            out1 = model(src, tgt, tgt_mask=tgt_mask)
        assert calls, "capture did not get the encoder's attention modules called"
        calls.clear()
        out2 = model(src, tgt, tgt_mask=tgt_mask)
        assert not calls, "the fast path was not restored"
    hook.remove()
    manual_out, ref = manual_transformer(model, src, tgt, tgt_mask)
    print(f"outputs: fused vs captured {largest_error(out0, out1):.2e}, manual {largest_error(out0, manual_out):.2e}")
    assert largest_error(out0, out1) <= 1e-5 and largest_error(out0, out2) == 0.0
    assert largest_error(out1, manual_out) <= 1e-5
    assert sorted(r.module_name for r in cap.records) == sorted(ref)
    for r in cap.records:
        err = largest_error(r.weights, ref[r.module_name])
        print(f"{r.module_name}: largest error {err:.2e}")
        assert err <= ATOL
    assert all(layer.activation_relu_or_gelu == 1 for layer in model.encoder.layers)

    src_words, tgt_words = ["the", "black", "cat", "sat", "."], ["le", "chat", "noir", "."]
    doc = cap.attention(source_tokens=src_words, target_tokens=tgt_words)
    assert [(s.name, s.kind, s.n_layers, s.heads_per_layer) for s in doc.sets] == [
        ("encoder.layers.self_attn", "self", 2, [2, 2]), ("decoder.layers.self_attn", "causal", 2, [2, 2]),
        ("decoder.layers.multihead_attn", "cross", 2, [2, 2])]
    enc, dec, cross = doc.sets
    assert enc.tokens == src_words and dec.tokens == tgt_words
    assert (cross.query_tokens, cross.key_tokens) == (tgt_words, src_words)
    assert enc.layer_names == ["encoder.layers.0.self_attn", "encoder.layers.1.self_attn"]
    np.testing.assert_array_equal(cross.weights[1], cap.records[-1].weights[0])
    back = attnviz.load(attnviz.encode(doc, format="npz"))
    assert [s.kind for s in back.sets] == ["self", "causal", "cross"]


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_encoder_padding_nested_tensor_path():
    """With src_key_padding_mask, TransformerEncoder uses nested tensors; capture takes the regular path."""
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2).eval()
    x = torch.randn(2, 5, 8)
    kpm = torch.tensor([[False] * 5, [False, False, False, True, True]])
    with torch.no_grad():
        out0 = model(x, src_key_padding_mask=kpm)
        with attnviz.capture(model) as cap:
            out1 = model(x, src_key_padding_mask=kpm)
        ref = {}
        h = x
        for i, l in enumerate(model.layers):
            ref[f"layers.{i}.self_attn"] = reference(l.self_attn, h, h, h, key_padding_mask=kpm)
            h = l.norm1(h + l.self_attn(h, h, h, key_padding_mask=kpm, need_weights=False)[0])
            h = l.norm2(h + l.linear2(l.activation(l.linear1(h))))
    keep = ~kpm
    assert largest_error(out0[keep], out1[keep]) <= 1e-5  # padded positions: zeros from the nested path
    assert largest_error(out1[keep], h[keep]) <= 1e-5
    for r in cap.records:
        assert largest_error(r.weights, ref[r.module_name]) <= ATOL
    doc = cap.attention(tokens=["a", "b", "c", "<pad>", "<pad>"], batch=1)
    s = doc.sets[0]
    assert (s.name, s.kind, s.tokens, s.weights.shape) == ("layers.self_attn", "self", ["a", "b", "c"], (2, 2, 3, 3))
    np.testing.assert_array_equal(s.weights[1], ref["layers.1.self_attn"][1][:, :3, :3])


def test_training_mode_with_grad():
    torch.manual_seed(2)
    mha = nn.MultiheadAttention(6, 3, dropout=0.0)  # training mode, grad enabled, odd heads: the regular path
    x = torch.randn(4, 1, 6, requires_grad=True)
    out0, w0 = mha(x, x, x)
    with attnviz.capture(mha) as cap:
        out1, w1 = mha(x, x, x)
    assert largest_error(out0.detach(), out1.detach()) == 0.0 and largest_error(w0.detach(), w1.detach()) == 0.0
    out1.sum().backward()  # the graph is intact
    assert x.grad is not None
    rec = cap.records[0]
    assert (rec.module_name, rec.weights.shape) == ("", (1, 3, 4, 4))
    assert cap.attention().sets[0].name == "attention"


def test_unbatched_input_and_module_filter():
    torch.manual_seed(3)
    model = nn.ModuleDict({"a": nn.MultiheadAttention(4, 2), "b": nn.MultiheadAttention(4, 2)}).eval()
    x = torch.randn(3, 4)  # unbatched: [n, embed]
    with torch.no_grad(), attnviz.capture(model, modules=["b"]) as cap:
        model["a"](x, x, x)
        _, w = model["b"](x, x, x)
    assert w.shape == (3, 3)  # averaged, unbatched, as torch returns it
    assert [(r.module_name, r.weights.shape) for r in cap.records] == [("b", (1, 2, 3, 3))]
    assert largest_error(cap.records[0].weights[0], reference(model["b"], x, x, x)) <= ATOL
    with pytest.raises(ValueError, match="no MultiheadAttention named"):
        attnviz.capture(model, modules=["c"])


def test_repr_says_what_was_recorded():
    """A notebook cell ending in `cap` shows the modules and calls (it showed <... object at 0x...>)."""
    torch.manual_seed(4)
    model = nn.ModuleDict({"a": nn.MultiheadAttention(4, 2), "b": nn.MultiheadAttention(4, 2)}).eval()
    cap = attnviz.capture(model)
    assert "2 MultiheadAttention module(s) watched, 0 call(s) recorded; run the model inside" in repr(cap)
    x, y = torch.randn(3, 4), torch.randn(5, 4)
    with torch.no_grad(), cap:
        assert repr(cap).endswith("(recording)")
        model["a"](x, x, x)
        model["b"](x, y, y)
    lines = repr(cap).split("\n")
    assert lines[0] == "attnviz.capture: 2 MultiheadAttention module(s) watched, 2 call(s) recorded:"
    assert lines[1].split() == ["a", "call", "0", "[batch,", "heads,", "n_q,", "n_k]", "=", "[1,", "2,", "3,", "3]", "self"]
    assert lines[2].split()[-5:] == ["[1,", "2,", "3,", "5]", "cross"]
    with torch.no_grad(), cap:
        for _ in range(13):
            model["a"](x, x, x)
    assert repr(cap).split("\n")[-1] == "  ... and 1 more"
    assert "has no torch.nn.MultiheadAttention" in repr(attnviz.capture(nn.Linear(2, 2)))


def test_restored_after_an_exception_and_errors():
    model = small_transformer()
    with pytest.raises(RuntimeError):
        with attnviz.capture(model):
            model(torch.randn(1, 3, 16), torch.randn(1, 2, 7))  # wrong embedding size
    assert all("forward" not in m.__dict__ for m in model.modules())
    assert all(l.activation_relu_or_gelu == 1 for l in model.encoder.layers)
    with attnviz.capture(model) as cap:
        pass
    with pytest.raises(ValueError, match="nothing was recorded"):
        cap.attention()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(torch.randn(1, 3, 16), torch.randn(1, 2, 16))
    with pytest.raises(ValueError, match=r"set 'encoder.layers.self_attn' has 3 columns, but the tokens given have \[2, 4\]"):
        cap.attention(source_tokens=list("abcd"), target_tokens=list("xy"))


def test_show_and_save_accept_a_capture(tmp_path):
    model = small_transformer()
    with torch.no_grad(), attnviz.capture(model) as cap:
        model(torch.randn(1, 3, 16), torch.randn(1, 2, 16))
    path = attnviz.save(tmp_path / "t.json", cap, source_tokens=list("abc"), target_tokens=list("xy"))
    assert [s.n_q for s in attnviz.load(path).sets] == [3, 2, 2]
