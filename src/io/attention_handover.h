// attnviz io: an attention document read elsewhere, handed over as bytes (the browser's load
// worker reads and validates a file with its own WASM instance, then hands the result to the
// viewer's instance a piece at a time, so the page's thread only copies floats).
//
// The stream: the 16-byte magic "\x93ATTNVIZ-HANDOFF", the skeleton's length (uint64, little-endian),
// the skeleton (JSON: everything but the matrices, which it gives as shapes), then every matrix's
// float32 values (little-endian, row-major): set by set, layer by layer, head by head, its weights,
// then its queries and keys when it has them.
//
//   sender:   std::string head = HandoverHead(doc);  for (HandoverBlock b : HandoverBlocks(doc)) ...
//   receiver: HandoverReceiver r; r.Begin(total); r.Feed(piece, n)...; r.Finish(&doc);
//
// The receiver trusts no byte: the skeleton is checked against the limits and the total size, and
// the matrices are allocated within the memory budget before any float is copied. It does not
// check the weights themselves (the sender did, with the reader's messages): only the viewer's own
// load worker sends a handover, and the viewer accepts one only where it asked for it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/attention_sets.h"

namespace attnviz {

struct HandoverBlock {
  const float* data;
  size_t count;  // floats
};

std::string HandoverHead(const AttentionDocument& doc);                   // magic, length, skeleton
std::vector<HandoverBlock> HandoverBlocks(const AttentionDocument& doc);  // the floats after it, in order
uint64_t HandoverSize(const AttentionDocument& doc);                      // the whole stream's bytes

class HandoverReceiver {
 public:
  Status Begin(uint64_t total_bytes, const AttentionFileLimits& limits = AttentionFileLimits());
  Status Feed(const uint8_t* data, size_t n);  // the next bytes, in order (any size)
  Status Finish(AttentionDocument* out);       // once every byte is in
  uint64_t MemoryBytes() const;                // what it holds now

 private:
  Status Fail(Status st);
  Status StartData();  // the skeleton is in: build the document, allocate its matrices

  Status error_;
  bool failed_ = false;
  AttentionFileLimits limits_;
  uint64_t total_ = 0, received_ = 0;
  std::vector<uint8_t> head_;  // the magic, length and skeleton while they arrive
  uint64_t head_bytes_ = 0;    // their size once the length is in (0 before)
  bool in_data_ = false;
  AttentionDocument doc_;
  std::vector<std::pair<float*, size_t>> blocks_;  // where the floats go, in order
  size_t block_ = 0;                               // the block being filled
  size_t block_at_ = 0;                            // bytes of it filled
};

}  // namespace attnviz
