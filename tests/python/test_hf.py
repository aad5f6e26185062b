"""from_hf(): outputs shaped as transformers returns them, built with numpy (and torch tensors)."""
import numpy as np
import pytest
import torch
from conftest import softmax_attention

import attnviz


class ModelOutput(dict):
    """The part of transformers' ModelOutput that matters here: a dict whose keys are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class FakeTokenizer:
    all_special_tokens = ["[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"]
    vocab = {101: "[CLS]", 102: "[SEP]", 0: "[PAD]", 1996: "the", 4937: "cat", 2938: "sat", 2006: "##s"}

    def convert_ids_to_tokens(self, ids):
        return [self.vocab[i] for i in ids]


def test_encoder_with_padding_and_wordpiece(rng):
    # BERT, batch of 2, the second item padded from 6 to 4 tokens.
    mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
    layers = tuple(torch.from_numpy(softmax_attention(rng, (2, 4, 6, 6), key_mask=mask)) for _ in range(3))
    outputs = ModelOutput(last_hidden_state=None, attentions=layers)
    tokens = [["[CLS]", "the", "cat", "##s", "sat", "[SEP]"], ["[CLS]", "the", "cat", "[SEP]", "[PAD]", "[PAD]"]]
    doc = attnviz.from_hf(outputs, tokens=tokens, batch=1, attention_mask=torch.tensor(mask),
                          tokenizer=FakeTokenizer())
    (s,) = doc.sets
    assert (s.name, s.kind, s.tokens, s.n_layers, s.heads_per_layer) == ("encoder", "self",
                                                                       ["[CLS]", "the", "cat", "[SEP]"], 3, [4] * 3)
    for l in range(3):
        np.testing.assert_array_equal(s.weights[l], layers[l][1, :, :4, :4].numpy())
    assert not s.warnings  # the kept rows still sum to 1: padding had no weight
    assert doc.tokenizer == {"space_marker": None, "continuation_marker": None, "special_tokens": ["[CLS]", "[SEP]"]}
    # Item 0: markers kept in the tokens and described; ids turned into tokens by the tokenizer.
    doc = attnviz.from_hf(outputs, tokens=torch.tensor([[101, 1996, 4937, 2006, 2938, 102], [0] * 6]),
                          tokenizer=FakeTokenizer(), attention_mask=mask)
    assert doc.sets[0].tokens == tokens[0]
    assert doc.tokenizer["continuation_marker"] == "##" and doc.tokenizer["special_tokens"] == ["[CLS]", "[SEP]"]


def test_decoder_only_left_padding(rng):
    # GPT-2 with left padding: causal, byte-level BPE markers.
    mask = np.array([[0, 0, 1, 1, 1]])
    layers = tuple(softmax_attention(rng, (1, 2, 5, 5), key_mask=mask, causal=True) for _ in range(2))
    for layer in layers:
        layer[0, :, :2] = 0.5  # rows of padded queries: whatever the model wrote there is dropped
    tokens = ["<|endoftext|>", "<|endoftext|>", "Hello", "\u0120world", "!"]
    doc = attnviz.from_hf({"logits": None, "attentions": layers}, tokens=tokens, attention_mask=mask)
    (s,) = doc.sets
    assert (s.name, s.kind, s.tokens) == ("decoder", "causal", ["Hello", "\u0120world", "!"])
    np.testing.assert_array_equal(s.weights[1], layers[1][0][:, 2:, 2:])
    assert doc.tokenizer == {"space_marker": "\u0120", "continuation_marker": None, "special_tokens": []}
    # Tokens without the padding are accepted too; causal=False overrides the detection.
    doc = attnviz.from_hf(layers, tokens=tokens[2:], attention_mask=mask, causal=False)
    assert doc.sets[0].kind == "self" and doc.sets[0].name == "encoder"


def test_decoder_step_with_cache(rng):
    # One generation step with past key values: 1 query over 5 keys.
    layers = [softmax_attention(rng, (1, 2, 1, 5)) for _ in range(2)]
    doc = attnviz.from_hf(ModelOutput(attentions=layers), tokens=["a", "b", "c", "d", "e"])
    s = doc.sets[0]
    assert (s.kind, s.query_tokens, s.key_tokens) == ("causal", ["e"], ["a", "b", "c", "d", "e"])


def test_encoder_decoder(rng):
    # Marian: SentencePiece markers, encoder padded in the batch, three sets.
    enc_mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])
    enc = tuple(softmax_attention(rng, (2, 2, 4, 4), key_mask=enc_mask) for _ in range(2))
    dec = tuple(softmax_attention(rng, (2, 2, 3, 3), causal=True) for _ in range(2))
    cross = tuple(softmax_attention(rng, (2, 2, 3, 4), key_mask=enc_mask) for _ in range(2))
    out = ModelOutput(encoder_attentions=enc, decoder_attentions=dec, cross_attentions=cross)
    src = ["\u2581the", "\u2581cat", "</s>", "<pad>"]
    tgt = ["<pad>", "\u2581le", "\u2581chat"]
    doc = attnviz.from_hf(out, encoder_tokens=src, decoder_tokens=tgt, batch=1, attention_mask=enc_mask)
    e, d, c = doc.sets
    assert [(s.name, s.kind) for s in doc.sets] == [("encoder", "self"), ("decoder", "causal"), ("cross", "cross")]
    assert e.tokens == src[:3] and d.tokens == tgt
    assert (c.query_tokens, c.key_tokens) == (tgt, src[:3])
    np.testing.assert_array_equal(e.weights, np.stack(enc)[:, 1, :, :3, :3])
    np.testing.assert_array_equal(c.weights, np.stack(cross)[:, 1, :, :, :3])
    np.testing.assert_array_equal(d.weights, np.stack(dec)[:, 1])
    assert doc.tokenizer == {"space_marker": "\u2581", "continuation_marker": None, "special_tokens": ["</s>", "<pad>"]}
    # Round trip through a version 2 file.
    back = attnviz.load(attnviz.encode(doc, format="npz"))
    assert [s.kind for s in back.sets] == ["self", "causal", "cross"] and back.tokenizer == doc.tokenizer


def test_errors(rng):
    att = tuple(softmax_attention(rng, (1, 2, 3, 3)) for _ in range(2))
    with pytest.raises(ValueError, match="run the model with output_attentions=True"):
        attnviz.from_hf(ModelOutput(logits=1))
    with pytest.raises(ValueError, match=r"attentions\[1\] is None: load the model with attn_implementation='eager'"):
        attnviz.from_hf(ModelOutput(attentions=(att[0], None)))
    with pytest.raises(ValueError, match="looks like generate"):
        attnviz.from_hf(ModelOutput(attentions=(att, att)))
    with pytest.raises(ValueError, match="batch=3 but attentions holds 1 item"):
        attnviz.from_hf(att, batch=3)
    with pytest.raises(ValueError, match="tokens has 4 tokens, but the attention has 3 positions"):
        attnviz.from_hf(att, tokens=list("abcd"))
    with pytest.raises(ValueError, match=r"must be \[batch, heads, n_q, n_k\], got shape \[3, 3\]"):
        attnviz.from_hf((att[0][0, 0],))
    with pytest.raises(ValueError, match=r"attention_mask must be \[batch, 3\]"):
        attnviz.from_hf(att, attention_mask=np.ones((1, 4)))
    with pytest.raises(ValueError, match="give encoder_tokens= and decoder_tokens="):
        attnviz.from_hf(ModelOutput(encoder_attentions=att, cross_attentions=att), tokens=list("abc"))
    with pytest.raises(ValueError, match=r"attentions\[1\] is \[.., 2, 2\], layer 0 is \[.., 3, 3\]"):
        attnviz.from_hf((att[0], softmax_attention(rng, (1, 2, 2, 2))))
    bad = (np.where(np.eye(3, dtype=bool), np.nan, att[0]),)
    with pytest.raises(ValueError, match="non-finite"):
        attnviz.from_hf(bad)
