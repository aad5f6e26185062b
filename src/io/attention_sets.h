// attnviz io: attention files with several attention sets (docs/FORMATS.md, version 2), and
// BertViz's data. A set is one kind of attention of one model with its own query and key tokens,
// e.g. an encoder's self-attention, a decoder's causal self-attention and its cross-attention.
//
//   AttentionKind          self, causal, cross
//   TokenizerInfo          subword markers kept in the tokens (▁, Ġ, ##) and special tokens
//   AttentionSet           name + kind + the set's tokens and layers (an AttentionFile)
//   AttentionDocument      the sets of one file, its meta and tokenizer
//   LoadAttentionDocument  bytes (JSON v1/v2, BertViz JSON, NPZ v1/v2, NPY) -> validated document
//   SaveAttentionDocument* version 2 JSON and NPZ
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/attention_file.h"

namespace attnviz {

enum class AttentionKind { Self, Causal, Cross };
const char* AttentionKindName(AttentionKind k);                     // "self", "causal", "cross"
bool ParseAttentionKind(const std::string& s, AttentionKind* out);  // inverse of AttentionKindName

struct TokenizerInfo {
  std::string space_marker;                 // prefix meaning "starts a word": "▁", "Ġ" ("" none)
  std::string continuation_marker;          // prefix meaning "continues the word": "##" ("" none)
  std::vector<std::string> special_tokens;  // [CLS], [SEP], <s>, </s>, <pad>, ... (the viewer can hide them)
};

struct AttentionSet {
  std::string name;                          // "encoder", "decoder", "cross", "set 0", ...
  AttentionKind kind = AttentionKind::Self;  // how the viewer plays it (cross: rows fill in as decoded)
  AttentionFile data;                        // target_tokens = queries, source_tokens = keys, layers of heads
};

struct AttentionDocument {
  int version = 1;                    // 1 (one implicit set), 2, or 0 for BertViz data
  std::vector<AttentionSet> sets;     // at least one
  TokenizerInfo tokenizer;            // from the "tokenizer" object (version 2)
  JsonValue meta;                     // free-form "meta" object (Null if none)
  std::vector<std::string> warnings;  // non-fatal findings, prefixed by the set's name when there are several
};

// Sniffs and reads any attention file. Limits apply to the whole document (max_values counts
// the weights of every set together).
Status LoadAttentionDocument(const uint8_t* data, size_t size, AttentionDocument* out,
                             const AttentionFileLimits& limits = AttentionFileLimits());

std::string SaveAttentionDocumentJson(const AttentionDocument& doc, int indent = 1);  // version 2 JSON

}  // namespace attnviz
