// attnviz io: an attention document read elsewhere, handed over as bytes (the browser's load
// worker reads and validates a file with its own WASM instance, then hands the result to the
// viewer's instance a piece at a time, so the page's thread only copies floats).
//
// The stream: the 16-byte magic "\x93ATTNVIZ-HANDOFF", the skeleton's length (uint64, little-endian),
// the skeleton (JSON: everything but the matrices, which it gives as shapes, and the warnings),
// then every matrix's float32 values (little-endian, row-major): set by set, layer by layer, head by
// head, its weights, then its queries and keys when it has them; last the trailer's length (uint64)
// and the trailer (JSON: the warnings, known only once the whole file was read). So a sender that
// reads a file as it arrives (a bare .npy) can send the skeleton and each head as soon as it has
// them, and the receiver copies them in while the rest is still being read.
//
//   sender:   HandoverHead(doc), then HandoverBlocks(doc)' floats, then HandoverTrailer(doc)
//   receiver: HandoverReceiver r; r.Begin(); r.Feed(piece, n)...; r.Finish(&doc);
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
std::string HandoverTrailer(const AttentionDocument& doc);                // length, warnings
// For a sender that forwards a file's float32 bytes as they are instead of keeping the matrices:
// the skeleton with every head [rows, cols], and a trailer that also names the matrices (in stream
// order) whose tiny negative weights the sender's checks set to 0 (the receiver does the same).
std::string HandoverHeadWithShape(const AttentionDocument& doc, int64_t rows, int64_t cols);
std::string HandoverTrailer(const AttentionDocument& doc, const std::vector<int64_t>& clamped);
uint64_t HandoverSize(const AttentionDocument& doc);  // the whole stream's bytes

class HandoverReceiver {
 public:
  Status Begin(const AttentionFileLimits& limits = AttentionFileLimits());
  Status Feed(const uint8_t* data, size_t n);  // the next bytes, in order (any size)
  // Where the next bytes go when they are a matrix's (else 0): the caller may copy up to that many
  // there itself, then Advance past them (one copy instead of two for a page handing pieces over).
  size_t Room(uint8_t** dst);
  Status Advance(size_t n);
  Status Finish(AttentionDocument* out);  // once every byte is in (the trailer complete)
  uint64_t MemoryBytes() const;           // what it holds now

 private:
  enum class Part { Head, Data, Trailer, Done };
  Status Fail(Status st);
  Status StartData();  // the skeleton is in: build the document (its matrices allocated as they arrive)
  Status Collect(const uint8_t** data, size_t* n, size_t prefix, uint64_t limit, bool* complete);  // head_
  Status ReadTrailer();

  Status error_;
  bool failed_ = false;
  AttentionFileLimits limits_;
  Part part_ = Part::Head;
  std::vector<uint8_t> head_;  // the magic, length and skeleton (then the trailer) while they arrive
  uint64_t head_bytes_ = 0;    // their size once the length is in (0 before)
  AttentionDocument doc_;
  struct Block {
    MatrixRM* m;   // rows x 0 until its floats arrive (Reach)
    int64_t cols;  // its width
  };
  Status Reach();              // the block being filled gets its memory
  size_t BlockBytes() const;   // its size
  std::vector<Block> blocks_;  // where the floats go, in order
  size_t block_ = 0;           // the block being filled
  size_t block_at_ = 0;        // bytes of it filled
};

}  // namespace attnviz
