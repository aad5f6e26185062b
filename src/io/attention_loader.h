// attnviz io: an attention file read in pieces, as they arrive (the viewer's eager path).
//
// A bare .npy of numbers in C order (what np.save writes for [layers, heads, n_q, n_k] attention)
// is parsed as it arrives: once its header is in, the layers x heads matrices are allocated and every
// piece is decoded straight into them, and each head is validated as soon as its last weight is in.
// No copy of the file is ever held, so peak memory is the weights plus one piece. Anything else
// (JSON, NPZ, Fortran-order or string .npy) is collected into one buffer of the file's size and read
// by LoadAttentionDocument at the end. Either way the document, its messages and warnings are the
// ones LoadAttentionDocument gives for the whole file.
//
//   AttentionLoader loader;
//   loader.Begin(file_size);
//   while (...) loader.Feed(piece, n);   // in order; any size, including 0 or 1 byte
//   loader.Finish(&doc);
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/attention_file_detail.h"
#include "io/attention_handover.h"
#include "io/attention_sets.h"
#include "io/memory_budget.h"
#include "io/npy.h"

namespace attnviz {

class AttentionLoader {
 public:
  // Starts a file of total_bytes bytes (refused above the memory budget, as a whole read would be).
  Status Begin(uint64_t total_bytes, const AttentionFileLimits& limits = AttentionFileLimits());
  // Starts a document that the browser's load worker read and hands over (io/attention_handover.h)
  // instead of a file: the pieces then only fill matrices already allocated. Its size is known
  // only at its end (received() counts the bytes so far).
  Status BeginHandover(const AttentionFileLimits& limits = AttentionFileLimits());
  size_t HandoverRoom(uint8_t** dst);  // HandoverReceiver::Room/Advance, counted in received()
  Status HandoverAdvance(size_t n);
  // While a bare .npy streams (streaming()): the handover's skeleton of the document that Finish will
  // give, and how many heads are complete (decoded and validated, in file order), so that a sender
  // can hand each head over as soon as it is in. The heads' matrices keep their addresses through
  // Finish. "" / 0 when not streaming.
  std::string StreamHandoverHead();
  // Forwarding (the load worker): a bare little-endian float32 .npy's data bytes are already the
  // handover's floats, so the sender may pass them on as they are; with ForwardRawFloats() called
  // before Begin the loader then only checks each head (in one head's scratch memory, not keeping
  // the weights) and RawDataOffset() is where the floats start in the file (else -1: keep and send
  // the decoded heads). ClampedHeads(): heads whose tiny negatives the checks set to 0.
  void ForwardRawFloats() { forward_raw_ = true; }
  int64_t RawDataOffset() const { return mode_ == Mode::Stream && !keep_ ? (int64_t)npy_.data_offset : -1; }
  const std::vector<int64_t>& ClampedHeads() const { return clamped_; }
  int64_t StreamedHeads() const { return mode_ == Mode::Stream && head_size_ ? next_ / head_size_ : 0; }
  const float* StreamedHead(int64_t i) const;  // head i's weights (file order), while streaming
  int64_t StreamHeadCount() const {
    return mode_ == Mode::Stream ? (int64_t)file_.layers.size() * heads_per_layer_ : 0;
  }
  int64_t StreamHeadSize() const { return mode_ == Mode::Stream ? head_size_ : 0; }  // floats per head
  // The next bytes of the file. An error ends the load (Finish then returns it too).
  Status Feed(const uint8_t* data, size_t n);
  // Once every byte was fed: the validated document.
  Status Finish(AttentionDocument* out);

  uint64_t received() const { return received_; }           // bytes fed so far
  uint64_t total() const { return total_; }                 // the file's size
  bool streaming() const { return mode_ == Mode::Stream; }  // the .npy fast path (else buffered)
  uint64_t MemoryBytes() const;                             // what the loader holds now

 private:
  enum class Mode { Header, Stream, Buffer, Handover, Failed };
  Status Fail(Status st);                             // keeps the first error
  Status StartStream();                               // the header is in: allocate or fall back
  Status StreamBytes(const uint8_t* data, size_t n);  // data bytes of the .npy
  Status DecodeRun(const uint8_t* src, int64_t n);    // n whole elements at element index next_
  void WrapStream(AttentionDocument* doc);            // what Finish makes of file_ (moved in)

  Mode mode_ = Mode::Header;
  Status error_;
  AttentionFileLimits limits_;
  uint64_t total_ = 0, received_ = 0;
  std::vector<uint8_t> buffer_;  // Header: the first bytes; Buffer: the whole file
  NpyHeader npy_;
  AttentionFile file_;     // Stream: the matrices being filled
  int64_t head_size_ = 0;  // n_q * n_k
  int64_t heads_per_layer_ = 1;
  int64_t next_ = 0;        // elements decoded so far
  uint8_t carry_[16] = {};  // the start of an element split between two pieces
  int carry_n_ = 0;
  attention_file_detail::RowSumWarnings row_sums_;
  HandoverReceiver handover_;  // Handover: the document being filled
  bool forward_raw_ = false;   // ForwardRawFloats()
  bool keep_ = true;           // Stream: the heads' weights are kept (else checked in scratch_)
  MatrixRM scratch_;           // !keep_: the head being checked
  int64_t nq_ = 0, nk_ = 0;
  std::vector<int64_t> clamped_;
};

}  // namespace attnviz
