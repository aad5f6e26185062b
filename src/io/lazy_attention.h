// attnviz io: attention read lazily, head by head, from a safetensors file (docs/FORMATS.md).
//
// Index of this header
//   - LazySet, LazyAttentionIndex  what the file holds: sets, tokens, and where every layer's bytes are
//   - ReadLazyAttentionIndex       a validated safetensors header -> the index (both layouts below)
//   - LazyPool                     the stored max-pooled copies: thumbnails and overviews (grid), screen copies
//   (heatmap)
//   - HeadRowsRange, PooledRange   byte ranges of rows of one head, of a layer's overviews or screen copies
//   - OverviewSide, MaxPoolOverview the max-pooled summary of a head (any size)
//   - LazyRequest, LazyResult      what a viewer asks for, and what it gets back
//   - LazyAttentionFile            index + ByteSource + a queue of reads, pumped a few ms per frame
//   - PlanLazyAttention, WriteLazyAttention   the writer (streams: header, overviews, layer by layer)
//
// The attnviz layout: __metadata__ {"format": "attnviz", "version": "2", "sets": "<JSON>",
// "tokenizer": "<JSON>", "meta": "<JSON>"}; set s, layer l is tensor "attention.s.l" [heads, n_q, n_k]
// (F16, BF16, F32 or F64); its optional overview "overview.s.l" is [heads, R, C] with
// R = min(n_q, 256), C = min(n_k, 256): cell (r, c) is the largest weight of query rows
// [r n_q / R, (r + 1) n_q / R) and key columns [c n_k / C, (c + 1) n_k / C) (integer division).
// Its optional screen copy "screen.s.l" is the same with R = min(n_q, 1024), C = min(n_k, 1024): a
// zoomed-out heatmap draws it at full screen fidelity (a 4096^2 F16 head: 2 MiB instead of 32 MiB).
// Its optional thumbnail "thumb.s.l" is the same with R = min(n_q, 64), C = min(n_k, 64): a grid of
// small cells draws it (8 KiB a head instead of the overview's 128 KiB).
// A plain safetensors file with one float tensor "attention" [layers, heads, n_q, n_k] (or 3-D,
// 2-D) opens too, with tokens from __metadata__ "tokens" / "query_tokens" / "key_tokens" (JSON) or indices.
// So does a bare .npy array of that shape (what np.save writes), when it is too big to read whole
// (NpyOpensLazily): C order, little-endian float16, float32 or float64; its tokens are indices.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/head_stats.h"
#include "core/status.h"
#include "io/attention_sets.h"
#include "io/byte_source.h"
#include "io/safetensors.h"

namespace attnviz {

// ---------------------------------------------------------------------------
// The index
// ---------------------------------------------------------------------------
// The max-pooled copies a file may store per head (blocks as above; R, C at most the side).
enum class LazyPool { Overview = 0, Screen = 1, Thumb = 2 };
constexpr int kLazyPools = 3;
constexpr LazyPool kLazyPoolList[kLazyPools] = {LazyPool::Overview, LazyPool::Screen, LazyPool::Thumb};
constexpr int kOverviewSide = 256;  // overviews are at most 256 x 256: the grid's thumbnails
constexpr int kScreenSide = 1024;   // screen copies at most 1024 x 1024: a zoomed-out heatmap
constexpr int kThumbSide = 64;      // thumbnails at most 64 x 64: a grid of cells up to 64 pixels
// What a LazyPool is, by its index: each per-pool field below is an array indexed the same way.
struct LazyPoolInfo {
  int side;            // R, C at most this
  const char* prefix;  // "overview.": tensor names are prefix + "s.l"
  const char* name;    // "overviews", for messages
};
constexpr LazyPoolInfo kLazyPoolInfo[kLazyPools] = {
    {kOverviewSide, "overview.", "overviews"},
    {kScreenSide, "screen.", "screen copies"},
    {kThumbSide, "thumb.", "thumbnails"},
};
inline int LazyPoolSide(LazyPool p) {
  return kLazyPoolInfo[(int)p].side;
}
inline const char* LazyPoolPrefix(LazyPool p) {
  return kLazyPoolInfo[(int)p].prefix;
}
inline const char* LazyPoolName(LazyPool p) {
  return kLazyPoolInfo[(int)p].name;
}

struct LazyPooled {
  StDType dtype = StDType::F16;  // of the copies
  uint64_t offset = 0;           // file offset of head 0's copy (when the set has them)
};

struct LazyLayer {
  std::string name;               // "layer 3" unless the file names it
  int heads = 0;                  // heads of this layer
  StDType dtype = StDType::F16;   // of its weights
  uint64_t offset = 0;            // file offset of head 0, row 0, column 0
  LazyPooled pooled[kLazyPools];  // its overviews, screen copies and thumbnails, by LazyPool
  const LazyPooled& Pooled(LazyPool p) const { return pooled[(int)p]; }
  LazyPooled& Pooled(LazyPool p) { return pooled[(int)p]; }
  uint64_t stats_offset = 0;  // file offset of head 0's stored statistics (when the set has them)
};

struct LazySet {
  std::string name;                          // "attention", "encoder", "cross", ...
  AttentionKind kind = AttentionKind::Self;  // as in version 2 files
  std::vector<std::string> query_tokens;     // [n_q] rows
  std::vector<std::string> key_tokens;       // [n_k] columns
  bool self_attention = false;               // the file gave one "tokens" list
  std::vector<std::string> head_names;       // [most heads] or empty ("head h")
  std::vector<LazyLayer> layers;             // at least one
  int64_t n_q = 0, n_k = 0;                  // every head is [n_q, n_k]
  int pool_rows[kLazyPools] = {};            // R of each stored copy, by LazyPool; 0 when the file has none
  int pool_cols[kLazyPools] = {};            // C of each
  bool stats = false;                        // every head's statistics are stored ("stats.s.l", one range)
  int Heads() const;                         // heads of all layers
  int MaxHeads() const;                      // the most heads of any layer
  int PoolRows(LazyPool p) const { return pool_rows[(int)p]; }
  int PoolCols(LazyPool p) const { return pool_cols[(int)p]; }
  bool Has(LazyPool p) const { return pool_rows[(int)p] > 0; }  // the file stores these copies
};

struct LazyAttentionIndex {
  SafetensorsHeader header;           // the container
  std::vector<LazySet> sets;          // at least one
  TokenizerInfo tokenizer;            // from __metadata__ "tokenizer"
  JsonValue meta;                     // from __metadata__ "meta" (Null if none)
  bool attnviz_layout = false;        // false: a plain "attention" tensor (or a .npy array)
  bool npy = false;                   // a bare .npy array (header.file_size and data_start are set, no tensors)
  std::vector<std::string> warnings;  // e.g. "no tokens given; using indices"
};

// Reads the attnviz layout (or a plain "attention" tensor) from a validated header. Limits: the
// layers, heads, tokens and name sizes of AttentionFileLimits (max_values does not apply: the
// weights are never all in memory).
Status ReadLazyAttentionIndex(SafetensorsHeader header, LazyAttentionIndex* out,
                              const AttentionFileLimits& limits = AttentionFileLimits());

// A bare .npy array [layers, heads, n_q, n_k], [heads, n_q, n_k] or [n_q, n_k] from its header
// (prefix: the file's first n bytes, at least the header) and the file's size, with the same limits.
Status ReadLazyNpyIndex(const uint8_t* prefix, size_t n, uint64_t file_size, LazyAttentionIndex* out,
                        const AttentionFileLimits& limits = AttentionFileLimits());
// The same for a .npy inside another file (an .npz member stored as it is): its bytes are
// [base, base + bytes) of a file of file_size bytes.
struct LazyNpyArray {
  uint64_t base = 0, bytes = 0, file_size = 0;
};
Status ReadLazyNpyIndexAt(const uint8_t* prefix, size_t n, const LazyNpyArray& where, LazyAttentionIndex* out,
                          const AttentionFileLimits& limits = AttentionFileLimits());
bool LooksLikeNpy(const uint8_t* prefix, size_t n);  // the \x93NUMPY magic
// True when prefix (at least the header) is a .npy file the eager readers refuse for its size
// (over AttentionFileLimits::max_values weights, or over the biggest file they read whole) but
// whose header parses: the viewer and the CLI then read it lazily, which says what else is wrong.
bool NpyOpensLazily(const uint8_t* prefix, size_t n, uint64_t file_size);
// An .npz too big to read whole (np.savez of the attention and its tokens): its attention member,
// if stored as it is (np.savez, not np.savez_compressed), is read lazily like a .npy; its tokens,
// layer and head names come from the small members. The archive is listed from a synchronous source
// (ZipListSource); the page, whose reads end later, answers the reads it asks for and asks again
// (web_lazy.cpp, attnviz_npz_prefix). ReadLazyPrefix gives LazyAttentionFile::Open a descriptor of
// what was found (LooksLikeLazyNpz).
bool LooksLikeZip(const uint8_t* prefix, size_t n);      // PK\3\4
bool LooksLikeLazyNpz(const uint8_t* prefix, size_t n);  // the descriptor ReadLazyNpzPrefix makes
bool NpzOpensLazily(ByteSource* source);                 // mapped, a ZIP, and too big to read whole
Status ReadLazyNpzPrefix(ByteSource* source, std::vector<uint8_t>* out);
Status ReadLazyNpzIndex(const uint8_t* prefix, size_t n, LazyAttentionIndex* out,
                        const AttentionFileLimits& limits = AttentionFileLimits());
// True when a synchronous source holds a file to read lazily: safetensors, or a .npy or .npz as above.
bool OpensLazily(ByteSource* source);

struct ByteRange {
  uint64_t offset = 0;  // first byte in the file
  uint64_t size = 0;    // bytes
};
// Rows [row0, row1) of head `head` of layer `layer` (contiguous: heads are row-major [n_q, n_k]).
ByteRange HeadRowsRange(const LazySet& set, int layer, int head, int64_t row0, int64_t row1);
// The overviews or screen copies of heads [head0, head1) of a layer (contiguous); the set must have them.
ByteRange PooledRange(const LazySet& set, int layer, LazyPool pool, int head0, int head1);
inline ByteRange OverviewRange(const LazySet& set, int layer, int head0, int head1) {
  return PooledRange(set, layer, LazyPool::Overview, head0, head1);
}

// ---------------------------------------------------------------------------
// Overviews
// ---------------------------------------------------------------------------
inline int OverviewSide(int64_t n, int side = kOverviewSide) {
  return (int)(n < side ? n : side);
}
// True when a set of this shape gets screen copies from the writers: a head bigger than 1024 on a side.
inline bool WantsScreenCopies(int64_t n_q, int64_t n_k) {
  return n_q > kScreenSide || n_k > kScreenSide;
}
// True when a set of this shape gets thumbnails from the writers: a head bigger than 64 on a side
// (a smaller head's overview is itself, no bigger than a thumbnail).
inline bool WantsThumbnails(int64_t n_q, int64_t n_k) {
  return n_q > kThumbSide || n_k > kThumbSide;
}
// out [out_rows, out_cols] = the largest weight of each block of head [rows, cols] (blocks as above).
void MaxPoolOverview(const float* head, int64_t rows, int64_t cols, int out_rows, int out_cols, float* out);
// The same for rows [row0, row1) of the head only (head points at its row 0): the blocks they fall in
// take their maximum with what out holds, so rows pooled in pieces, in any order, into an out that
// started at 0 give MaxPoolOverview's result once every row is in.
void MaxPoolRows(const float* head, int64_t rows, int64_t cols, int64_t row0, int64_t row1, int out_rows, int out_cols,
                 float* out);
// The same for rows [row0, row1) held on their own: piece points at row row0.
void MaxPoolPiece(const float* piece, int64_t rows, int64_t cols, int64_t row0, int64_t row1, int out_rows,
                  int out_cols, float* out);
// The bytes MaxPoolPiece keeps between calls on this thread (a row and the column bins' starts): up to
// kMaxPoolKeptBytes; a longer row's buffers are let go after the call (a hostile file's 2^28-column
// head would otherwise hold 1 GiB for as long as the thread lives).
constexpr size_t kMaxPoolKeptBytes = 1 << 20;
size_t MaxPoolKeptBytes();

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------
struct LazyRequest {
  int set = 0, layer = 0;
  int head = 0;                        // the head (rows), or the first head (overviews)
  int head_end = 0;                    // overviews: heads [head, head_end); ignored for rows
  bool overview = false;               // the stored overviews (or screen copies, thumbnails), else rows of one head
  LazyPool pool = LazyPool::Overview;  // with overview: which stored copies
  int64_t row0 = 0, row1 = 0;          // rows [row0, row1) of the head
  // Rows [0, n_q) of the head max-pooled as they are decoded, into its overview [OverviewSide(n_q),
  // OverviewSide(n_k)] (MaxPoolOverview's result): a file without overviews, whose grid reads each
  // head whole, never holds the head's floats (64 MiB for 4096^2) to make a 256 KiB thumbnail.
  bool pooled = false;
  // With pooled: the head's statistics too (core/head_stats.h), from the same decoded pieces, so the
  // grid of a file without overviews can sort every head it made a thumbnail of.
  bool with_stats = false;
  // The set's stored statistics, every layer's ([heads of all layers, kHeadStatsColumns] as stored:
  // no fix-ups; HeadStatsFromRow checks each row). layer, head, rows are ignored.
  bool stats = false;
};

struct LazyResult {
  uint64_t ticket = 0;     // what Submit returned
  LazyRequest request;     // what was asked
  Status status;           // a read error, the file changed, out of memory, ...
  MatrixRM weights;        // rows: [row1 - row0, n_k]; overviews, screen copies: [(head_end - head) * R, C];
                           // pooled: [OverviewSide(n_q), OverviewSide(n_k)]; stats: [heads, kHeadStatsColumns]
  int64_t fixed = 0;       // weights that were NaN, infinite or negative, shown as 0
  float max = 0;           // the largest weight (after those fix-ups): the colour range without a pass
  bool has_stats = false;  // pooled with_stats: stats are the head's (after the fix-ups)
  HeadStats stats;
};

// A lazily read attention file: the index, the bytes' source and the reads in progress. Not
// thread-safe: one owner (the UI thread) submits, pumps and pops.
class LazyAttentionFile {
 public:
  LazyAttentionFile() = default;
  LazyAttentionFile(const LazyAttentionFile&) = delete;
  LazyAttentionFile& operator=(const LazyAttentionFile&) = delete;
  ~LazyAttentionFile();  // cancels the reads under way (an asynchronous source must not write into freed memory)
  // prefix: the file's first bytes, at least the whole header (SafetensorsHeaderLength).
  Status Open(std::unique_ptr<ByteSource> source, const uint8_t* prefix, size_t n);
  const LazyAttentionIndex& index() const { return index_; }  // what the file holds
  ByteSource* source() { return source_.get(); }

  uint64_t Submit(const LazyRequest& r);  // a ticket (> 0); a bad request fails in its result
  void Cancel(uint64_t ticket);           // forgets a request (its read, if one is under way)
  // Works for about budget_ms: starts reads (asynchronous sources: a few at a time), reads and
  // decodes in pieces of kPieceWeights, so a frame never waits on a whole head. Requests of one part
  // (overviews, screen copies, bands) go before whole heads, in reading and in decoding.
  void Pump(double budget_ms);
  // Asynchronous sources: takes the reads that ended and starts the next ones, decoding nothing
  // (what a frame does after asking for what it drew; Pump decodes at least one piece).
  // single_part_only: requests of one part only (overviews, screen copies, bands), not whole heads,
  // and of those only the ones whose buffers fit in `room` bytes together.
  void StartReads(bool single_part_only = false, uint64_t room = UINT64_MAX);
  // An asynchronous source's read `ticket` ended (ok, or why not).
  void CompleteRead(uint64_t ticket, const Status& st);
  bool PopResult(LazyResult* out);  // a finished request, oldest first
  // A request of rows under way: its weights decoded so far (rows [row0, row0 + *rows) of `out`, the
  // rest not yet written). False when the ticket is not a request under way.
  bool Progress(uint64_t ticket, const MatrixRM** out, int64_t* rows) const;

  size_t Pending() const { return jobs_.size(); }     // requests not finished
  bool Knows(uint64_t ticket) const;                  // a request not finished, or its result not popped yet
  bool Busy() const;                                  // work for Pump to do (not only reads under way that end later)
  uint64_t BytesRead() const { return bytes_read_; }  // file bytes read so far
  uint64_t Reads() const { return reads_; }           // reads started so far
  uint64_t LoadingBytes() const;                      // memory held by requests in progress, and results not popped
  uint64_t StagingBytes() const;  // asynchronous sources: the reads' buffers, held or to be held until decoded
  bool Asynchronous() const { return source_ && source_->Asynchronous(); }
  void SetMaxInFlight(int reads) { max_in_flight_ = reads < 1 ? 1 : reads; }  // asynchronous reads at once
  // Asynchronous reads bigger than this come in parts of this size, started in order a few at a
  // time, and the parts in are decoded while the rest arrive (a 4096^2 F16 head: 8 parts).
  static constexpr uint64_t kPartBytes = uint64_t(4) << 20;
  // Weights decoded per step: Pump checks its time budget between steps (~2 ms each in WASM), so a
  // frame's decoding overruns its budget by at most one step.
  static constexpr int64_t kPieceWeights = int64_t(1) << 18;

 private:
  enum class JobState { Queued, Reading, Decoding };
  struct Job {
    uint64_t ticket = 0;
    LazyRequest request;
    ByteRange range;
    StDType dtype = StDType::F16;
    int64_t rows = 0, cols = 0;  // of the result
    JobState state = JobState::Queued;
    std::unique_ptr<uint8_t[]> staging;  // asynchronous: the whole range, written by the source (not zeroed first)
    uint64_t staging_bytes = 0;          // its size
    MatrixRM out;                        // the result, filled piece by piece (pooled: max-pooled into)
    int64_t done = 0;                    // elements decoded (into out, or pooled)
    int64_t fixed = 0;                   // elements set to 0
    float max = 0;                       // the largest weight decoded so far
    std::unique_ptr<HeadStatsAccumulator> stats;  // pooled with_stats: the rows decoded so far
    // Asynchronous parts (kPartBytes each; part 0's read ticket is the job's own).
    std::vector<uint64_t> part_tickets;   // [parts] the source's ticket once started, else 0
    std::vector<char> part_done;          // [parts] its bytes are in staging
    int parts_started = 0, parts_in = 0;  // parts started so far; parts in, from the first on
    int64_t ready = 0;                    // elements whose bytes are in staging (a prefix)
    int Parts() const { return (int)std::max<uint64_t>(1, (range.size + kPartBytes - 1) / kPartBytes); }
    int InFlight() const;  // parts started and not in
  };
  void Finish(std::unique_ptr<Job> job, Status st);        // moves a job to the results
  Status Prepare(Job* job);                                // the range and shape of a request
  Status AllocateOut(Job* job);                            // the result's matrix, once
  Status StartParts(Job* job, int* in_flight, int limit);  // asynchronous: staging, then parts while reads are free
  Job* FindPart(uint64_t ticket, int* part);               // the job reading part `ticket`
  Status Step(Job* job);                                   // one piece: read (synchronous) and decode
  Status DecodePiece(Job* job, const uint8_t* src, int64_t n);
  int64_t PieceWeights(const Job& job, int64_t available) const;  // the next step's elements (whole rows if pooled)

  LazyAttentionIndex index_;
  std::unique_ptr<ByteSource> source_;
  std::deque<std::unique_ptr<Job>> jobs_;
  std::deque<LazyResult> results_;
  std::vector<uint8_t> piece_;  // synchronous reads of non-F32 data land here before decoding
  std::vector<float> pooling_;  // a pooled request's rows decoded, before they are max-pooled into its out
  uint64_t next_ticket_ = 1;
  uint64_t bytes_read_ = 0, reads_ = 0;
  int max_in_flight_ = 4;
};

// The header bytes of a safetensors file from a synchronous source: its 8-byte length, then 8 + N
// (of a .npy file: its magic, version, length and dict).
Status ReadLazyPrefix(ByteSource* source, std::vector<uint8_t>* out);

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------
struct LazyWritePlan {
  std::vector<uint8_t> header;                            // the bytes before the data
  uint64_t file_size = 0;                                 // header + data
  std::vector<std::vector<uint64_t>> attention;           // [set][layer] file offset of "attention.s.l"
  std::vector<std::vector<uint64_t>> stats;               // [set][layer] file offset of "stats.s.l"
  std::vector<std::vector<uint64_t>> pooled[kLazyPools];  // by LazyPool: [set][layer] offset of "overview.s.l"...
  std::vector<std::vector<int>> heads;                    // [set][layer]
  std::vector<int64_t> n_q, n_k;                          // [set]
  std::vector<int> pool_rows[kLazyPools];                 // by LazyPool: [set] R; 0 for a set without these copies
  std::vector<int> pool_cols[kLazyPools];                 // by LazyPool: [set] C
  StDType dtype = StDType::F16;                           // of weights and overviews
};
// The layout of a document's shape (its weights are not read): statistics of every set first, then
// thumbnails (sets with heads over 64 on a side), then overviews, then screen copies (sets with heads
// over 1024 on a side), then the layers in order, so
// a writer can stream a model layer by layer. Sets' layers may differ in heads.
Status PlanLazyAttention(const AttentionDocument& shape, StDType dtype, LazyWritePlan* out);
// Writes doc as an attnviz safetensors file (streamed through a FileSink: no second copy of the weights).
Status WriteLazyAttention(const AttentionDocument& doc, StDType dtype, const std::string& path);
// The same from a document of the shape only (tokens, names, heads without weights), asking for each
// head's weights in file order (set, layer, head) and writing each with its thumbnail, overview and screen copy
// before asking for the next: one head in memory at a time (attnviz-cli convert of a file read lazily).
// Both store each head's statistics as a viewer reading the file computes them (StoredHeadStats).
using LazyHeadSource = std::function<Status(int set, int layer, int head, MatrixRM* weights)>;
// A head's statistics from its weights as a reader of the file gets them: encoded in dtype and decoded
// back with the readers' fix-ups (NaN, infinities, negative weights -> 0). Into row[kHeadStatsColumns].
void StoredHeadStats(const MatrixRM& weights, StDType dtype, float* row);
Status WriteLazyAttentionStreamed(const AttentionDocument& shape, StDType dtype, const std::string& path,
                                  const LazyHeadSource& head);

}  // namespace attnviz
