// Attention files with several sets (format version 2, JSON and NPZ) and BertViz's data.
#include "io/attention_sets.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/ndarray.h"
#include "io/npz.h"

namespace {

using namespace attnviz;

Status Load(const std::string& text, AttentionDocument* doc) {
  return LoadAttentionDocument(reinterpret_cast<const uint8_t*>(text.data()), text.size(), doc);
}

const char* kMarian = R"({"format":"attnviz","version":2,
  "tokenizer":{"space_marker":"\u2581","continuation_marker":null,"special_tokens":["</s>"]},
  "sets":[
   {"name":"encoder","kind":"self","tokens":["\u2581the","\u2581cat","</s>"],
    "weights":[[[[0.8,0.1,0.1],[0.2,0.7,0.1],[0.3,0.3,0.4]],[[1,0,0],[0,1,0],[0,0,1]]]]},
   {"name":"decoder","kind":"causal","tokens":["\u2581le","\u2581chat"],
    "weights":[[[1,0],[0.5,0.5]]], "head_names":["h0"]},
   {"name":"cross","query_tokens":["\u2581le","\u2581chat"],"key_tokens":["\u2581the","\u2581cat","</s>"],
    "layers":[{"name":"dec.0.cross","heads":[{"name":"a","weights":[[0.9,0.05,0.05],[0.1,0.85,0.05]]}]},
              {"name":"dec.1.cross","heads":[[[0.5,0.5,0],[0,1,0]],[[1,0,0],[0,0,1]]]}]}],
  "meta":{"model":"opus-mt-en-fr"}})";

}  // namespace

TEST(AttentionSets, Version2JsonHoldsSetsWithTheirOwnTokensAndKinds) {
  AttentionDocument doc;
  const Status st = Load(kMarian, &doc);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(doc.version, 2);
  ASSERT_EQ(doc.sets.size(), 3u);
  EXPECT_EQ(doc.sets[0].name, "encoder");
  EXPECT_EQ(doc.sets[0].kind, AttentionKind::Self);
  EXPECT_EQ(doc.sets[0].data.layers.size(), 1u);
  EXPECT_EQ(doc.sets[0].data.layers[0].heads.size(), 2u);
  EXPECT_FLOAT_EQ(doc.sets[0].data.layers[0].heads[0].weights(1, 1), 0.7f);
  EXPECT_EQ(doc.sets[1].kind, AttentionKind::Causal);
  EXPECT_EQ(doc.sets[1].data.layers[0].heads[0].name, "h0");
  EXPECT_EQ(doc.sets[2].kind, AttentionKind::Cross) << "different query and key tokens default to cross";
  EXPECT_EQ(doc.sets[2].data.target_tokens.size(), 2u);
  EXPECT_EQ(doc.sets[2].data.source_tokens.size(), 3u);
  EXPECT_EQ(doc.sets[2].data.layers[1].name, "dec.1.cross");
  EXPECT_EQ(doc.sets[2].data.layers[1].heads.size(), 2u) << "layers may differ in head count";
  EXPECT_EQ(doc.tokenizer.space_marker, "\xe2\x96\x81");
  EXPECT_EQ(doc.tokenizer.continuation_marker, "");
  ASSERT_EQ(doc.tokenizer.special_tokens.size(), 1u);
  ASSERT_NE(doc.meta.Find("model"), nullptr);
}

TEST(AttentionSets, SavedVersion2ReadsBackTheSame) {
  AttentionDocument doc, back;
  ASSERT_TRUE(Load(kMarian, &doc).ok);
  const std::string text = SaveAttentionDocumentJson(doc);
  const Status st = Load(text, &back);
  ASSERT_TRUE(st.ok) << st.message;
  ASSERT_EQ(back.sets.size(), doc.sets.size());
  for (size_t i = 0; i < doc.sets.size(); ++i) {
    EXPECT_EQ(back.sets[i].name, doc.sets[i].name);
    EXPECT_EQ(back.sets[i].kind, doc.sets[i].kind);
    EXPECT_EQ(back.sets[i].data.target_tokens, doc.sets[i].data.target_tokens);
    ASSERT_EQ(back.sets[i].data.layers.size(), doc.sets[i].data.layers.size());
    for (size_t l = 0; l < doc.sets[i].data.layers.size(); ++l)
      for (size_t h = 0; h < doc.sets[i].data.layers[l].heads.size(); ++h)
        EXPECT_EQ(back.sets[i].data.layers[l].heads[h].weights, doc.sets[i].data.layers[l].heads[h].weights);
  }
  EXPECT_EQ(back.tokenizer.space_marker, doc.tokenizer.space_marker);
}

TEST(AttentionSets, ErrorsNameTheSet) {
  AttentionDocument doc;
  Status st = Load(R"({"version":2,"sets":[{"name":"enc","tokens":["a","b"],"weights":[[[0.5,0.5,0]]]}]})", &doc);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("enc"), std::string::npos) << st.message;
  st = Load(R"({"version":2,"sets":[{"tokens":["a"],"kind":"sideways","weights":[[1]]}]})", &doc);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("kind"), std::string::npos) << st.message;
  st = Load(R"({"version":2,"sets":[{"query_tokens":["a"],"weights":[[1]]}]})", &doc);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("key_tokens"), std::string::npos) << st.message;
  st = Load(R"({"version":2,"sets":[]})", &doc);
  EXPECT_FALSE(st.ok);
  st = Load(R"({"version":3,"layers":[]})", &doc);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("version"), std::string::npos) << st.message;
}

TEST(AttentionSets, TheWeightBudgetCoversEverySet) {
  AttentionFileLimits limits;
  limits.max_values = 30;  // the sets of kMarian hold 18, 4 and 6 + 12 weights: each fits, not all
  AttentionDocument doc;
  const std::string text = kMarian;
  const Status st = LoadAttentionDocument(reinterpret_cast<const uint8_t*>(text.data()), text.size(), &doc, limits);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("cross"), std::string::npos) << "the third set breaks the budget: " << st.message;
  limits.max_values = 40;
  EXPECT_TRUE(LoadAttentionDocument(reinterpret_cast<const uint8_t*>(text.data()), text.size(), &doc, limits).ok);
}

TEST(AttentionSets, BertvizParamsAndBareListOpen) {
  const std::string params = R"({"attention":[
     {"name":"Encoder","attn":[[[[0.6,0.4],[0.3,0.7]]]],"left_text":["a","b"],"right_text":["a","b"]},
     {"name":"Decoder","attn":[[[[1,0],[0.5,0.5]]]],"left_text":["x","y"],"right_text":["x","y"]},
     {"name":"Cross","attn":[[[[0.9,0.1],[0.2,0.8]]]],"left_text":["x","y"],"right_text":["a","b"]}],
     "default_filter":"0","root_div_id":"bertviz-1","layer":null,"heads":null,"include_layers":[0]})";
  AttentionDocument doc;
  Status st = Load(params, &doc);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(doc.version, 0);
  ASSERT_EQ(doc.sets.size(), 3u);
  EXPECT_EQ(doc.sets[0].kind, AttentionKind::Self);
  EXPECT_EQ(doc.sets[1].kind, AttentionKind::Causal);
  EXPECT_EQ(doc.sets[2].kind, AttentionKind::Cross);
  EXPECT_EQ(doc.sets[2].data.target_tokens[0], "x") << "left_text are the queries (rows)";
  EXPECT_EQ(doc.sets[2].data.source_tokens[1], "b") << "right_text are the keys (columns)";
  EXPECT_FLOAT_EQ(doc.sets[2].data.layers[0].heads[0].weights(1, 1), 0.8f);
  const std::string bare =
      R"([{"name":null,"attn":[[[[0.6,0.4],[0.3,0.7]]],[[[1,0],[0,1]]]],"left_text":["a","b"],"right_text":["a","b"]}])";
  st = Load(bare, &doc);
  ASSERT_TRUE(st.ok) << st.message;
  ASSERT_EQ(doc.sets.size(), 1u);
  EXPECT_EQ(doc.sets[0].data.layers.size(), 2u);
}

TEST(AttentionSets, Version1FilesAreOneSet) {
  const std::string v1 = R"({"format":"attnviz","version":1,"source_tokens":["a","b"],"target_tokens":["x"],
      "layers":[{"name":"L","heads":[{"name":"h","weights":[[0.25,0.75]]}]}],"meta":{"k":1}})";
  AttentionDocument doc;
  const Status st = Load(v1, &doc);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(doc.version, 1);
  ASSERT_EQ(doc.sets.size(), 1u);
  EXPECT_EQ(doc.sets[0].kind, AttentionKind::Cross);
  EXPECT_NE(doc.meta.Find("k"), nullptr);
}

TEST(AttentionSets, TheVersion1ApiReadsTheFirstSetAndSaysSo) {
  AttentionFile f;
  const std::string text = kMarian;
  const Status st = LoadAttentionFile(reinterpret_cast<const uint8_t*>(text.data()), text.size(), &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.source_tokens.size(), 3u);
  ASSERT_FALSE(f.warnings.empty());
  EXPECT_NE(f.warnings.back().find("3 attention sets"), std::string::npos) << f.warnings.back();
}

TEST(AttentionSets, Version2NpzReadsSetsAndMeta) {
  NpzFile z;
  const double version = 2;
  z.Add("attnviz_version", FromDoubles({}, &version));
  z.Add("set_names", FromStrings({"encoder", "cross"}));
  z.Add("set_kinds", FromStrings({"self", "cross"}));
  const float enc[2 * 2 * 2] = {0.5f, 0.5f, 0.1f, 0.9f, 1, 0, 0, 1};  // [1, 2, 2, 2]
  z.Add("set0_attention", FromFloats({1, 2, 2, 2}, enc));
  z.Add("set0_tokens", FromStrings({"a", "b"}));
  const float cross[3 * 2] = {0.7f, 0.3f, 0.2f, 0.8f, 0.5f, 0.5f};  // [3, 2]
  z.Add("set1_attention", FromFloats({3, 2}, cross));
  z.Add("set1_query_tokens", FromStrings({"x", "y", "z"}));
  z.Add("set1_key_tokens", FromStrings({"a", "b"}));
  z.Add("set0_head_names", FromStrings({"h0", "h1"}));
  z.Add("meta_json", FromStrings({R"({"model":"m"})"}));
  z.Add("tokenizer_json", FromStrings({R"({"continuation_marker":"##"})"}));
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(WriteNpz(z, NpzWriteOptions(), &bytes).ok);
  AttentionDocument doc;
  const Status st = LoadAttentionDocument(bytes.data(), bytes.size(), &doc);
  ASSERT_TRUE(st.ok) << st.message;
  ASSERT_EQ(doc.sets.size(), 2u);
  EXPECT_EQ(doc.sets[0].data.layers[0].heads[1].name, "h1");
  EXPECT_FLOAT_EQ(doc.sets[0].data.layers[0].heads[0].weights(1, 1), 0.9f);
  EXPECT_EQ(doc.sets[1].kind, AttentionKind::Cross);
  EXPECT_EQ(doc.sets[1].data.target_tokens.size(), 3u);
  EXPECT_EQ(doc.tokenizer.continuation_marker, "##");
  ASSERT_NE(doc.meta.Find("model"), nullptr);
  // A set without tokens is refused with the array names it needs.
  NpzFile bad = z;
  bad.arrays.clear();
  bad.names.clear();
  bad.Add("attnviz_version", FromDoubles({}, &version));
  bad.Add("set_names", FromStrings({"s"}));
  bad.Add("set0_attention", FromFloats({3, 2}, cross));
  ASSERT_TRUE(WriteNpz(bad, NpzWriteOptions(), &bytes).ok);
  const Status st2 = LoadAttentionDocument(bytes.data(), bytes.size(), &doc);
  EXPECT_FALSE(st2.ok);
  EXPECT_NE(st2.message.find("set0_query_tokens"), std::string::npos) << st2.message;
}
