"""from_bertviz() and load() of BertViz's data: the `attention` list its views hand to JavaScript."""
import json

import numpy as np
import pytest
import torch
from conftest import inlined, softmax_attention

import attnviz


def bertviz_params(rng):
    """What BertViz's head_view builds for an encoder-decoder model (params of head_view.js)."""
    enc_tokens = ["\u2581the", "\u2581cat", "</s>"]
    dec_tokens = ["<pad>", "\u2581le", "\u2581chat", "</s>"]
    enc = softmax_attention(rng, (2, 2, 3, 3))
    dec = softmax_attention(rng, (2, 2, 4, 4), causal=True)
    cross = softmax_attention(rng, (2, 2, 4, 3))
    attention = [
        {"name": "Encoder", "attn": enc.tolist(), "left_text": enc_tokens, "right_text": enc_tokens},
        {"name": "Decoder", "attn": dec.tolist(), "left_text": dec_tokens, "right_text": dec_tokens},
        {"name": "Cross", "attn": cross.tolist(), "left_text": dec_tokens, "right_text": enc_tokens},
    ]
    params = {"attention": attention, "default_filter": "0", "root_div_id": "bertviz-1", "layer": None,
              "heads": None, "include_layers": [0, 1]}
    return params, (enc, dec, cross), (enc_tokens, dec_tokens)


def check_encoder_decoder(doc, arrays, tokens):
    enc, dec, cross = arrays
    assert [(s.name, s.kind) for s in doc.sets] == [("Encoder", "self"), ("Decoder", "causal"), ("Cross", "cross")]
    assert doc.sets[0].tokens == tokens[0] and doc.sets[1].tokens == tokens[1]
    assert (doc.sets[2].query_tokens, doc.sets[2].key_tokens) == (tokens[1], tokens[0])  # left = rows, right = columns
    for s, a in zip(doc.sets, arrays):
        np.testing.assert_allclose(s.weights, a, rtol=0, atol=1e-7)


def test_params_dict_list_and_json(rng, tmp_path):
    params, arrays, tokens = bertviz_params(rng)
    check_encoder_decoder(attnviz.from_bertviz(params), arrays, tokens)
    check_encoder_decoder(attnviz.from_bertviz(params["attention"]), arrays, tokens)
    check_encoder_decoder(attnviz.from_bertviz(json.dumps(params)), arrays, tokens)
    doc = attnviz.from_bertviz(params)
    assert doc.tokenizer == {"space_marker": "\u2581", "continuation_marker": None, "special_tokens": ["</s>", "<pad>"]}
    # load() opens the same data from a file, as the C++ reader does.
    (tmp_path / "bertviz.json").write_text(json.dumps(params))
    loaded = attnviz.load(tmp_path / "bertviz.json")
    assert loaded.version == 0
    check_encoder_decoder(loaded, arrays, tokens)
    (tmp_path / "list.json").write_text(json.dumps(params["attention"]))
    check_encoder_decoder(attnviz.load(tmp_path / "list.json"), arrays, tokens)


def test_unnamed_single_set(rng):
    tokens = ["[CLS]", "the", "cat", "[SEP]"]
    att = softmax_attention(rng, (3, 2, 4, 4))
    doc = attnviz.from_bertviz([{"name": None, "attn": att.tolist(), "left_text": tokens, "right_text": tokens}])
    assert (doc.sets[0].name, doc.sets[0].kind, doc.sets[0].tokens) == ("attention", "self", tokens)


def test_head_view_arguments(rng):
    params, (enc, dec, cross), tokens = bertviz_params(rng)
    per_layer = [lambda a, l=l: torch.from_numpy(a[l][None]) for l in range(2)]  # [1, heads, q, k] per layer
    doc = attnviz.from_bertviz(encoder_attention=[f(enc) for f in per_layer],
                               decoder_attention=[f(dec) for f in per_layer],
                               cross_attention=[f(cross) for f in per_layer],
                               encoder_tokens=tokens[0], decoder_tokens=tokens[1])
    check_encoder_decoder(doc, (enc, dec, cross), tokens)
    only = attnviz.from_bertviz(cross_attention=[f(cross) for f in per_layer], encoder_tokens=tokens[0],
                                decoder_tokens=tokens[1], include_layers=[1])
    assert only.sets[0].n_layers == 1
    np.testing.assert_array_equal(only.sets[0].weights[0], cross[1])


def test_sentence_pair(rng):
    tokens = ["[CLS]", "a", "b", "[SEP]", "c", "d", "[SEP]"]
    att = softmax_attention(rng, (2, 2, 7, 7))
    doc = attnviz.from_bertviz(tuple(torch.from_numpy(a[None]) for a in att), tokens, sentence_b_start=4)
    assert [s.name for s in doc.sets] == ["All", "Sentence A -> Sentence A", "Sentence B -> Sentence B",
                                          "Sentence A -> Sentence B", "Sentence B -> Sentence A"]
    ab = doc["Sentence A -> Sentence B"]
    assert (ab.kind, ab.query_tokens, ab.key_tokens) == ("cross", tokens[:4], tokens[4:])
    np.testing.assert_array_equal(ab.weights, att[:, :, :4, 4:])
    assert doc["All"].kind == "self" and doc["All"].tokens == tokens


def test_errors(rng):
    att = [torch.from_numpy(softmax_attention(rng, (2, 2, 3, 3)))]
    with pytest.raises(ValueError, match="'tokens' is required"):
        attnviz.from_bertviz(att)
    with pytest.raises(ValueError, match="batch size 2; BertViz takes one item"):
        attnviz.from_bertviz(att, ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"must be \[1, heads, n_q, n_k\]"):
        attnviz.from_bertviz([att[0][0]], ["a", "b", "c"])
    with pytest.raises(ValueError, match="'encoder_tokens' required"):
        attnviz.from_bertviz(encoder_attention=[att[0][:1]])
    with pytest.raises(ValueError, match="no 'attention' list"):
        attnviz.from_bertviz({"heads": None})
    with pytest.raises(ValueError, match=r"set 'x' layer 0 .*has weights \[3, 3\] but there are 2"):
        attnviz.from_bertviz([{"name": "x", "attn": att[0][:1].tolist(), "left_text": ["a", "b"],
                               "right_text": ["a", "b", "c"]}])


def _page_data_and_commands(html):
    """The attention file and the viewer commands inlined in show()'s HTML."""
    import re

    data = inlined(html)[0]
    commands = json.loads(re.search(r'"commands": (\[[^\]]*\])', html).group(1))
    return attnviz.load(data), commands


def test_head_view_and_model_view_take_bertviz_arguments(rng):
    """from attnviz import head_view, model_view: BertViz's calls, drawn by the Lines and Grid views."""
    att = softmax_attention(rng, (3, 4, 5, 5))
    per_layer = tuple(torch.from_numpy(att[l][None]) for l in range(3))  # as outputs.attentions
    tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
    doc, commands = _page_data_and_commands(attnviz.head_view(per_layer, tokens, html_action="return").data)
    np.testing.assert_allclose(doc.sets[0].weights, att, rtol=1e-6)
    assert commands == ["view lines", "layer-head 0 0", "lines-queries left", "lines-heads all"]
    _, commands = _page_data_and_commands(
        attnviz.head_view(per_layer, tokens, layer=2, heads=[1, 3], html_action="return", hide="special").data)
    assert commands == ["view lines", "hide special", "layer-head 2 1", "lines-queries left", "lines-heads 1 3"]
    doc, commands = _page_data_and_commands(
        attnviz.model_view(per_layer, tokens, display_mode="light", include_heads=[0, 2], html_action="return").data)
    assert commands == ["view grid", "theme light"]
    np.testing.assert_allclose(doc.sets[0].weights, att[:, [0, 2]], rtol=1e-6)
    with pytest.raises(ValueError, match="include_heads"):
        attnviz.model_view(per_layer, tokens, include_heads=[4], html_action="return")
    with pytest.raises(ValueError, match="html_action"):
        attnviz.head_view(per_layer, tokens, html_action="save")
