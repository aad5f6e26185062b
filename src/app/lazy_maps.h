// attnviz app: the maps of a lazily read file (io/lazy_attention.h, docs/PERFORMANCE.md "Big files").
// Its heads come into memory when a view draws them and leave, least recently used first, when the
// cache budget needs the room; the grid draws each head's max-pooled overview instead. Heads of F16
// and BF16 files that no view draws any more are first kept in those 16 bits (the file's own
// precision, half the memory) and widened again when a view draws them: a head visited before comes
// back without a read.
//
//   LazyMaps             one open file: the reads in flight, what is in memory, the budget
//   (OpenLazyAttention in app_files.h: a safetensors file -> one example per set, maps without weights)
//   LazyWantRows         a view draws rows of a map this frame (all of them, or a zoomed-in band)
//   LazyOverview         a view draws a map's overview this frame (null until it is read)
//   LazyThumbnail        the grid draws a map's thumbnail (64^2, stored) or overview, by its cells' size
//   LazyScreen           a view draws a map's screen copy (1024^2 max-pooled) this frame (null until read)
//   LazyMaps::HeadStatsOf  a head's statistics without its weights: stored in the file (read once, on
//                        first use), or computed as it was pooled (files without overviews)
//   PumpLazyMaps         once a frame, before the views: a few ms of reading and decoding, results in
//   RequestLazyMaps      once a frame, after the views: what they drew is kept, what is missing asked for
//   SetLazyCacheBudget   the memory heads and overviews may take (the `cache` command)
//   LazyCacheStats       what a lazily read file holds now (the sidebar's CACHE section, describe())
//   DescribeLazy         describe()'s "lazy"
//   LazyWantsFrame       between frames: something the last frame drew may be asked for again now
//   PackAheadLazyMaps    in a frame's pump and in the page's idle time: F16/BF16 heads no view draws
//                        packed into 16 bits a slice at a time, before a switch needs the room
//
// Wants are collected while the views draw a frame and acted on right after it: what the frame drew
// is what the cache keeps until the next frame's requests, everything else may go.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/examples.h"
#include "io/lazy_attention.h"

namespace attnviz {

struct AppState;
struct FrameStats;
class JsonWriter;

constexpr uint64_t kDefaultLazyCacheBytes = uint64_t(256) << 20;  // heads + overviews in memory
uint64_t LazyCacheBudget();
void SetLazyCacheBudget(uint64_t bytes);  // 0 restores the default
// A head a stored screen copy shows at the view's resolution is read whole only once it has stayed in
// view this long (views/heatmap.cpp): stepping through heads reads no head left at once.
constexpr double kDefaultLazyDwellMs = 300;
double LazyDwellMs();
void SetLazyDwellMs(double ms);  // < 0 restores the default (tests: 0 reads at once)
// F16 and BF16 files: a head no view draws any more is packed into 16 bits ahead of need, a slice of
// its rows at a time, at most this long in each call (PackAheadLazyMaps: the frame's pump, never past
// its 3 ms; frames the page skips; the page's idle time, up to its deadline), once the cache has less
// room than the next head read will take. The next read then finds the room made, where packing a
// 4096^2 head at once was one 30-60 ms task on the page's thread (stops 51-53). 0 turns it off: room
// is then made by packing when it is needed, as it still is when a read cannot wait.
constexpr double kDefaultLazyPackAheadMs = 2.0;
double LazyPackAheadMs();
void SetLazyPackAheadMs(double ms);  // < 0 restores the default

struct LazyCacheStats {
  std::string name;                            // the file
  uint64_t file_bytes = 0;                     // its size
  uint64_t budget = 0, resident = 0;           // the cache budget, and the bytes it holds now
  uint64_t loading = 0;                        // bytes of reads and decoding under way
  uint64_t bytes_read = 0, reads = 0;          // so far
  int heads = 0, bands = 0;                    // whole heads and zoomed-in bands as floats (every set)
  int packed = 0, overviews = 0, screens = 0;  // heads and bands in 16 bits, overviews, screen copies
  int thumbs = 0;                              // stored thumbnails
  int pending = 0;                             // requests not finished
};

class LazyMaps {
 public:
  ~LazyMaps();
  // The file's first bytes (at least its header) and where the rest comes from.
  Status Open(const std::string& name, std::unique_ptr<ByteSource> source, const uint8_t* prefix, size_t n);
  const LazyAttentionIndex& index() const { return file_.index(); }
  LazyAttentionFile& file() { return file_; }  // the asynchronous source's completions go here
  const std::string& name() const { return name_; }

  void WantRows(int set, int map, int row0, int row1);  // rows [row0, row1) of a map, this frame
  // Its overview if in memory (and wanted), else its stored thumbnail if in memory, else null.
  const AttentionMap* Overview(int set, int map);
  // What the grid draws of a map in a cell px device pixels on its longer side: the file's stored
  // thumbnail (64^2) when it has them and px <= kThumbSide, else its overview (wanted; null until
  // read). While the one wanted is not in memory, the other if it is. *thumb: the thumbnail was wanted.
  const AttentionMap* Thumbnail(int set, int map, float px, bool* thumb = nullptr);
  const AttentionMap* Screen(int set, int map, bool* partial = nullptr);  // its screen copy likewise; see below
  // Files without stored screen copies: while a head over 1024 on a side is read whole, its screen
  // copy is computed from the rows decoded so far (the overview, stretched, where they are not in
  // yet), so the view fills in as the parts arrive; *partial says it is not all the head's yet.
  // A whole head being read: its rows decoded so far, [0, *rows) of *head (the buffer the head is
  // installed from when all are in), and the read's key. False when no whole-head read is under way.
  bool Arriving(int set, int map, const MatrixRM** head, int64_t* rows, uint64_t* key) const;
  // The key of the read the map's rows in memory came from (0 none). Keys are unique in the process,
  // across files: a texture filled from an arriving head's buffer is that head's only if the keys
  // match (the allocator hands a cancelled head's buffer to the next head read).
  uint64_t InstalledBy(int set, int map) const;
  void Request(AppState* s);  // see RequestLazyMaps
  // Between frames, with no read under way: something the last frame drew is neither in memory nor
  // being read, and may be asked for now (a failed read rested long enough, or a read was lost), or
  // something came in that no frame has drawn yet. The frames of a lazily read file follow its
  // reads, so without this nothing asked for it again until the mouse moved (stops 44-46: a
  // 1024-head grid's last thumbnails). At most one every 100 ms.
  bool WantsFrame();
  // Reads and results only; true if busy. `parts` (a frame's, or null between frames) gets the time.
  bool Work(AppState* s, double budget_ms, FrameStats* parts);
  // F16 and BF16 files: packs the oldest undrawn head into 16 bits ahead of need until `until`, when
  // the cache has less room than the next head read takes (LazyPackAheadMs). True if unfinished.
  bool PackAhead(AppState* s, std::chrono::steady_clock::time_point until);
  void Describe(JsonWriter* w, int heads, int bands) const;  // heads, bands: what the examples hold
  LazyCacheStats Stats(int heads, int bands) const;          // likewise
  // What the sidebar shows of `now`: the last refresh's figures, refreshed when `refresh` (twice a
  // second) and at once when the budget changed (the user picked another).
  const LazyCacheStats& Readout(const LazyCacheStats& now, bool refresh);
  // The last frame drew figures that `now` has moved past (LazyReadoutDue wakes the page for them).
  bool ReadoutStale(const LazyCacheStats& now) const;
  int MapIndex(int set, int layer, int head) const;               // maps[] index of a layer's head
  bool Reading(int set, int map) const;                           // rows of the map are being read
  bool Kept(int set, int map, int64_t row0, int64_t row1) const;  // those rows are held in 16 bits
  // A head's statistics known without its weights in memory: the file's stored ones (the set's are
  // read at the next frame after the first call), or those computed while the head was pooled into
  // its overview. Null when not known (yet). *from_file says which.
  const HeadStats* HeadStatsOf(int set, int map, bool* from_file = nullptr);
  // The grid is sorted by a statistic this frame: a file without overviews then computes each head's
  // statistics as it pools it into its overview (~3 ns a weight more in WASM: not while unsorted),
  // and reads again the heads in view whose overviews came without them.
  void PoolWithStats(int set);

 private:
  // A read that failed is not asked for again until it has rested: 1 s, doubled with each failure
  // in a row up to 30 s (a dead server is not asked every frame; one back is asked again soon).
  struct Retry {
    std::chrono::steady_clock::time_point at{};  // the last failure
    int failures = 0;                            // in a row; 0 none
    void Failed();
    void Succeeded() { failures = 0; }
    bool Resting(std::chrono::steady_clock::time_point now) const;
  };
  struct MapState {
    uint64_t ticket = 0;         // rows being read, 0 none
    uint64_t installed = 0;      // the ticket of the read the rows in memory came from, 0 none
    int64_t row0 = 0, row1 = 0;  // which rows
    uint64_t last_used = 0;      // frame it was last drawn
    Retry rows_retry;            // a read of rows [failed0, failed1) failed: not asked again while it rests
    int64_t failed0 = 0, failed1 = 0;
    uint64_t overview_ticket = 0;  // a whole head read to make its overview (files without overviews)
    Retry pool_retry;              // reading its overview or screen copy failed: likewise
    uint64_t pooled_ticket = 0;    // the whole-head read its computed screen copy comes from
    int64_t pooled_rows = 0;       // rows of it pooled so far
    // F16 and BF16 files: rows [packed_row0, packed_row0 + packed_rows) kept in the file's type while
    // no view draws them (PackOldest); widened when one does (Unpack). 2 bytes a weight in the cache.
    std::unique_ptr<uint16_t[]> packed;
    int64_t packed_row0 = 0, packed_rows = 0;
  };
  struct OverviewState {
    AttentionMap map;     // [R, C] weights; empty while not in memory
    uint64_t ticket = 0;  // being read (a layer's run of heads), 0 none
    uint64_t last_used = 0;
  };
  struct SetState {
    std::vector<MapState> maps;       // [maps]
    std::vector<HeadStats> stats;     // [maps] known without the weights (HeadStatsOf)
    std::vector<uint8_t> stats_from;  // [maps] 0 not known, 1 stored in the file, 2 computed as pooled
    bool stats_wanted = false;        // a view asked for them: the stored ones are read (once)
    uint64_t stats_ticket = 0;        // their read, under way
    bool stats_asked = false;
    bool pool_stats = false;                      // PoolWithStats this frame
    std::vector<OverviewState> pool[kLazyPools];  // [LazyPool][maps]: overviews, screen copies, thumbnails
    std::vector<int> layer_first;                 // [layers] index of each layer's head 0
    int LayerOf(int map) const;                   // the layer a map index falls in
  };
  struct Want {
    int set, map;
    int64_t row0, row1;
  };
  struct OverviewRead {
    int set, layer, head0, head1;        // heads [head0, head1) of a layer, or the whole head (full)
    bool full = false;                   // a whole head read for its overview
    LazyPool pool = LazyPool::Overview;  // overviews or screen copies
  };

  std::vector<Example*> SetExamples(AppState* s);  // each set's example, by pointer (valid until examples change)
  void Results(AppState* s, std::vector<Example*>& examples);
  void Requests(AppState* s, std::vector<Example*>& examples);  // rows the views drew, then overviews
  void RequestOverviews(LazyPool pool, std::vector<Example*>& examples);
  bool PoolHeldHead(int set, int map, std::vector<Example*>& examples);  // an overview from a head in memory
  bool StatsMissing(int set, int map, LazyPool pool, std::vector<Example*>& examples) const;  // read it again
  bool StandInFirst(const Want& w) const;
  // A stored copy of `pool` drawn in place of the one asked for, if in memory (stamped as drawn, so kept).
  const AttentionMap* StandIn(int set, int map,
                              LazyPool pool);  // the head's rows wait for its screen copy, asked for too
  // A stored overview or screen copy the last frame drew: neither in memory nor being read, nor resting.
  bool PoolWantUnmet(LazyPool pool, int set, int map, std::chrono::steady_clock::time_point now) const;
  void ForgetLostReads();  // tickets whose read the file no longer knows (see lost_)
  bool RequestWholeHead(int set, int layer, int head, int* in_flight);  // a file without overviews: pool a head
  // Whole heads read at once for overviews (files without them): the next is read while one is decoded.
  static constexpr int kWholeHeadsForOverviews = 2;
  void CancelUnwantedOverviews();  // reads of overviews that this frame did not draw
  void InstallPooled(AppState* s, const OverviewRead& read, LazyResult* r, std::vector<Example*>& examples);
  bool MakeRoom(uint64_t bytes, std::vector<Example*>& examples);  // evicts what this frame did not draw
  uint64_t AskedBytes() const;                       // the reads under way: their results as floats, and their buffers
  StDType FileType(size_t set, size_t map) const;    // its layer's weights in the file
  bool Packable(size_t set, size_t map) const;       // ... are F16 or BF16
  bool PackOldest(std::vector<Example*>& examples);  // the oldest undrawn F16/BF16 rows -> 16 bits
  bool OldestPackable(std::vector<Example*>& examples, size_t* set, size_t* index) const;  // ... which rows
  // Packing ahead (LazyPackAheadMs): one map's rows turned into 16 bits a slice at a time. Its bits
  // are held beside its floats (AheadBytes, not in resident_) until the last slice is done, as when a
  // head is packed at once; then the floats leave and the bits count in resident_.
  struct AheadPack {
    int set = -1, map = -1;               // none: -1
    std::unique_ptr<uint16_t[]> bits;     // [rows * n_k]
    int64_t rows = 0, done = 0, n_k = 0;  // the map's rows, and those converted so far
    uint64_t version = 0, last_used = 0;  // the map's when it started: drawn again or changed, it is dropped
  };
  static constexpr int64_t kPackAheadStepWeights = 65536;  // converted between two looks at the clock
  bool AheadValid(std::vector<Example*>& examples) const;  // the map is as it was when packing started
  void DropChangedAhead(std::vector<Example*>& examples);  // a pack ahead whose map changed is given up
  uint64_t AheadBytes() const;                             // the bits of the pack ahead under way
  bool RoomShort() const;  // the cache has less room than the next head read takes: time to pack ahead
  void ConvertAhead(const AttentionMap& m, int64_t row1);  // rows [done, row1) into the bits
  void FinishAhead(std::vector<Example*>& examples);       // the last slice done: the floats leave
  // Packs ahead until `until`, if the cache needs it; true if a pack ahead is left unfinished.
  bool PackAheadSlices(std::vector<Example*>& examples, std::chrono::steady_clock::time_point until);
  void KeepPacked(size_t set, size_t index, std::unique_ptr<uint16_t[]> bits, std::vector<Example*>& examples);
  uint64_t RoomForNextRead() const;           // what the next head read takes: its floats, and its buffer
  void DropPacked(size_t set, MapState* ms);  // frees a map's 16-bit copy
  bool Unpack(const Want& w, std::vector<Example*>& examples);  // 16 bits that cover w -> the map's weights
  void Install(int set, int map, LazyResult* r, std::vector<Example*>& examples);
  void InstallOverview(int set, int map, LazyPool pool, MatrixRM weights);
  void ComputeScreens(std::vector<Example*>& examples);  // files without screen copies: pool what was decoded
  void PoolDecodedRows(int set, int map, const MatrixRM& head, int64_t rows, std::vector<Example*>& examples);
  void Failed(AppState* s, const Status& st);
  void DescribeReadout(JsonWriter* w) const;  // "shown" (Describe)
  void RequestStoredStats();                  // the stored statistics of sets whose were asked for
  void InstallStoredStats(AppState* s, const LazyResult& r);

  std::string name_;
  LazyAttentionFile file_;
  LazyCacheStats readout_;  // what the sidebar shows (Readout)
  bool readout_valid_ = false;
  int readout_frame_ = -1;  // the ImGui frame that last drew it
  std::vector<SetState> sets_;
  std::vector<Want> wants_;
  std::vector<std::pair<int, int>> pool_wants_[kLazyPools];  // [LazyPool] (set, map)
  std::vector<std::pair<int, int>> drawn_pool_[kLazyPools];  // the last frame's pool_wants_ (WantsFrame)
  std::vector<Want> drawn_rows_;                             // ... and wants_
  std::chrono::steady_clock::time_point requested_at_{};     // the last Request (WantsFrame's rate)
  bool installed_ = false;                                   // rows or an overview came in since the last Request
  uint64_t wakes_ = 0;                                       // frames WantsFrame asked for
  uint64_t lost_ = 0;  // tickets of reads the file did not know any more (none expected: counted, forgotten)
  std::unordered_map<uint64_t, OverviewRead> overview_reads_;
  uint64_t frame_ = 1;
  uint64_t resident_ = 0, max_resident_ = 0, max_memory_ = 0;  // bytes of weights and overviews held
  uint64_t evictions_ = 0, installs_ = 0, packs_ = 0, unpacks_ = 0, overviews_from_heads_ = 0;
  AheadPack ahead_;
  uint64_t packs_ahead_ = 0, pack_slices_ = 0, packs_dropped_ = 0;  // packs done ahead, their slices, dropped
  uint64_t packs_finished_at_once_ = 0;                             // packs ahead that room could not wait for
  double longest_pack_slice_ms_ = 0, longest_pack_alloc_ms_ = 0;    // packing ahead's longest slice, and allocation
  int stats_stored_ = 0, stats_refused_ = 0, stats_pooled_ = 0;     // heads' statistics: from the file, refused, pooled
  uint64_t pooled_held_frame_ = 0;  // the frame an overview was last pooled from a head in memory
  std::string last_error_;
  uint64_t key_base_ = 0;  // this file's reads' keys: key_base_ + ticket (see InstalledBy)
};

void LazyWantRows(AppState* s, const AttentionMap& map, int row0, int row1);  // of the current example
// The current example's map being read whole: its rows decoded so far (see LazyMaps::Arriving).
bool LazyArriving(AppState* s, int map, const MatrixRM** head, int64_t* rows, uint64_t* key);
uint64_t LazyInstalledBy(AppState* s, int map);          // the current example's; see LazyMaps::InstalledBy
const AttentionMap* LazyOverview(AppState* s, int map);  // of the current example
// The current example's thumbnail for a grid cell px device pixels on its longer side (LazyMaps::Thumbnail).
const AttentionMap* LazyThumbnail(AppState* s, int map, float px, bool* thumb = nullptr);
bool LazyStoresOverviews(AppState* s);  // the current example is lazy and its file stores overviews
const AttentionMap* LazyScreen(AppState* s, int map, bool* partial = nullptr);  // of the current example
void PumpLazyMaps(AppState* s);     // every open lazy file, a few ms of reading in all
void RequestLazyMaps(AppState* s);  // after the views drew: requests for what they want, reads started
// Between frames (the browser calls it when a read ends): decoding and installing only, for about
// budget_ms; what the views want is left for the next frame. True while there is more to do.
bool WorkLazyMaps(AppState* s, double budget_ms, FrameStats* parts = nullptr);
bool LazyWantsFrame(AppState* s);  // between frames: see LazyMaps::WantsFrame (every open file)
// Every open file packs ahead until `until` (LazyMaps::PackAhead). True while a pack is unfinished.
bool PackAheadLazyMaps(AppState* s, std::chrono::steady_clock::time_point until);
bool LazyWaiting(AppState* s);           // the current example is lazy and its current map is not all in memory
bool LazyReading(AppState* s, int map);  // rows of a map of the current example are being read
// The current map is not all in memory and its rows are being read (the readouts refresh less often
// then, FrameStats::RefreshEvery; a grid whose current head is not in memory refreshes as usual).
bool LazyCurrentBeingRead(AppState* s);
bool LazyKept(AppState* s, int map, int64_t row0, int64_t row1);  // ... held in 16 bits (no read to show)
void DescribeLazy(AppState* s, JsonWriter* w);  // "lazy": the current example's file, or null; and "lazy_current"
bool LazyCacheStatsOf(AppState* s, LazyCacheStats* out);  // the current example's file; false when it is not lazy
// Half a second since the readouts refreshed, and the CACHE figures the last frame drew are out of
// date: a frame is wanted (App::NeedsFrames), or they would stay so until something else draws.
bool LazyReadoutDue(AppState* s);
void DescribeLazyCurrent(AppState* s, JsonWriter* w);  // "lazy_current": {map, held rows} of the current map, or null

}  // namespace attnviz
