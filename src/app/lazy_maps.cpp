#include "app/lazy_maps.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "app/app_state.h"
#include "core/half.h"
#include "io/json.h"
#include "io/memory_budget.h"
#include "io/safetensors.h"
#include "io/utf8.h"

namespace attnviz {

namespace {

std::atomic<uint64_t> g_cache_budget{kDefaultLazyCacheBytes};
std::atomic<double> g_dwell_ms{kDefaultLazyDwellMs};
std::atomic<double> g_pack_ahead_ms{kDefaultLazyPackAheadMs};

uint64_t Bytes(const MatrixRM& m) {
  return (uint64_t)m.size() * sizeof(float);
}

}  // namespace

uint64_t LazyCacheBudget() {
  return g_cache_budget.load(std::memory_order_relaxed);
}

void SetLazyCacheBudget(uint64_t bytes) {
  g_cache_budget.store(bytes ? bytes : kDefaultLazyCacheBytes, std::memory_order_relaxed);
}

double LazyDwellMs() {
  return g_dwell_ms.load(std::memory_order_relaxed);
}

void SetLazyDwellMs(double ms) {
  g_dwell_ms.store(ms >= 0 ? ms : kDefaultLazyDwellMs, std::memory_order_relaxed);
}

double LazyPackAheadMs() {
  return g_pack_ahead_ms.load(std::memory_order_relaxed);
}

void SetLazyPackAheadMs(double ms) {
  g_pack_ahead_ms.store(ms >= 0 ? ms : kDefaultLazyPackAheadMs, std::memory_order_relaxed);
}

LazyMaps::~LazyMaps() = default;  // the file cancels the reads under way (LazyAttentionFile's destructor)

Status LazyMaps::Open(const std::string& name, std::unique_ptr<ByteSource> source, const uint8_t* prefix, size_t n) {
  name_ = name;
  static std::atomic<uint64_t> files{0};
  key_base_ = ++files << 40;  // a file's reads number far fewer than 2^40
  const Status st = file_.Open(std::move(source), prefix, n);
  if (!st) return st;
  for (const LazySet& set : file_.index().sets) {
    SetState ss;
    int at = 0;
    for (const LazyLayer& l : set.layers) {
      ss.layer_first.push_back(at);
      at += l.heads;
    }
    ss.maps.resize((size_t)at);
    ss.stats.resize((size_t)at);
    ss.stats_from.assign((size_t)at, 0);
    for (auto& pool : ss.pool) pool.resize((size_t)at);
    sets_.push_back(std::move(ss));
  }
  return Status::Ok();
}

int LazyMaps::MapIndex(int set, int layer, int head) const {
  return sets_[(size_t)set].layer_first[(size_t)layer] + head;
}

bool LazyMaps::Reading(int set, int map) const {
  return sets_[(size_t)set].maps[(size_t)map].ticket != 0;
}

bool LazyMaps::Kept(int set, int map, int64_t row0, int64_t row1) const {
  const MapState& ms = sets_[(size_t)set].maps[(size_t)map];
  return ms.packed && ms.packed_row0 <= row0 && row1 <= ms.packed_row0 + ms.packed_rows;
}

bool LazyMaps::Arriving(int set, int map, const MatrixRM** head, int64_t* rows, uint64_t* key) const {
  const MapState& ms = sets_[(size_t)set].maps[(size_t)map];
  const LazySet& ls = file_.index().sets[(size_t)set];
  if (!ms.ticket || ms.row0 != 0 || ms.row1 != ls.n_q || !file_.Progress(ms.ticket, head, rows)) return false;
  *key = key_base_ + ms.ticket;
  return true;
}

uint64_t LazyMaps::InstalledBy(int set, int map) const {
  const uint64_t t = sets_[(size_t)set].maps[(size_t)map].installed;
  return t ? key_base_ + t : 0;
}

void LazyMaps::WantRows(int set, int map, int row0, int row1) {
  wants_.push_back({set, map, row0, row1});
}

const AttentionMap* LazyMaps::Overview(int set, int map) {
  pool_wants_[(int)LazyPool::Overview].push_back({set, map});
  const OverviewState& o = sets_[(size_t)set].pool[(int)LazyPool::Overview][(size_t)map];
  if (o.map.weights.size()) return &o.map;
  return StandIn(set, map, LazyPool::Thumb);  // the thumbnail the grid drew (a head opened from small cells)
}

const AttentionMap* LazyMaps::StandIn(int set, int map, LazyPool pool) {
  OverviewState& o = sets_[(size_t)set].pool[(int)pool][(size_t)map];
  if (!o.map.weights.size()) return nullptr;
  o.last_used = frame_;  // drawn, so kept
  return &o.map;
}

const AttentionMap* LazyMaps::Thumbnail(int set, int map, float px, bool* thumb) {
  SetState& ss = sets_[(size_t)set];
  const bool small = file_.index().sets[(size_t)set].Has(LazyPool::Thumb) && px <= (float)kThumbSide;
  const LazyPool want = small ? LazyPool::Thumb : LazyPool::Overview;
  if (thumb) *thumb = small;
  pool_wants_[(int)want].push_back({set, map});
  const OverviewState& o = ss.pool[(int)want][(size_t)map];
  if (o.map.weights.size()) return &o.map;
  // The other one, while it is still in memory (the window was resized across kThumbSide).
  return StandIn(set, map, small ? LazyPool::Overview : LazyPool::Thumb);
}

const AttentionMap* LazyMaps::Screen(int set, int map, bool* partial) {
  OverviewState& o = sets_[(size_t)set].pool[(int)LazyPool::Screen][(size_t)map];
  const LazySet& ls = file_.index().sets[(size_t)set];
  if (partial) *partial = false;
  if (!ls.Has(LazyPool::Screen)) {  // computed while the head is read (ComputeScreens), never asked for
    if (!o.map.weights.size()) return nullptr;
    o.last_used = frame_;
    if (partial) *partial = sets_[(size_t)set].maps[(size_t)map].pooled_rows < ls.n_q;
    return &o.map;
  }
  pool_wants_[(int)LazyPool::Screen].push_back({set, map});
  return o.map.weights.size() ? &o.map : nullptr;
}

// Files without stored screen copies: the rows of whole heads being read that were decoded since the
// last call are max-pooled into the heads' screen copies (a part's worth at a time: each update is a
// 4 MiB texture upload).
void LazyMaps::ComputeScreens(std::vector<Example*>& examples) {
  for (size_t s = 0; s < sets_.size(); ++s) {
    const LazySet& ls = file_.index().sets[s];
    if (ls.Has(LazyPool::Screen) || !WantsScreenCopies(ls.n_q, ls.n_k)) continue;
    const int64_t step =
        std::max<int64_t>(1, (int64_t)LazyAttentionFile::kPartBytes / (ls.n_k * StDTypeSize(ls.layers[0].dtype)));
    for (size_t i = 0; i < sets_[s].maps.size(); ++i) {
      MapState& ms = sets_[s].maps[i];
      const MatrixRM* head = nullptr;
      int64_t rows = 0;
      if (!ms.ticket || ms.row0 != 0 || ms.row1 != ls.n_q || !file_.Progress(ms.ticket, &head, &rows)) continue;
      if (ms.pooled_ticket != ms.ticket) ms.pooled_ticket = ms.ticket, ms.pooled_rows = 0;
      if (rows >= ms.pooled_rows + step || (rows == ls.n_q && rows > ms.pooled_rows))
        PoolDecodedRows((int)s, (int)i, *head, rows, examples);
    }
  }
}

void LazyMaps::PoolDecodedRows(int set, int map, const MatrixRM& head, int64_t rows, std::vector<Example*>& examples) {
  const LazySet& ls = file_.index().sets[(size_t)set];
  MapState& ms = sets_[(size_t)set].maps[(size_t)map];
  OverviewState& o = sets_[(size_t)set].pool[(int)LazyPool::Screen][(size_t)map];
  const int R = OverviewSide(ls.n_q, kScreenSide), C = OverviewSide(ls.n_k, kScreenSide);
  MatrixRM& w = o.map.weights;
  if (w.rows() != R) {  // not in memory (or evicted): pooled from the first row again
    const uint64_t bytes = (uint64_t)R * C * sizeof(float);
    if (!MakeRoom(bytes, examples) || !TryAllocate((size_t)bytes)) return;  // shown from the overview
    w.resize(R, C);
    resident_ += Bytes(w);
    ms.pooled_rows = 0;
  }
  if (ms.pooled_rows == 0) {  // the overview stretched, where rows are not in yet
    const AttentionMap& ov = sets_[(size_t)set].pool[(int)LazyPool::Overview][(size_t)map].map;
    const int64_t orows = ov.weights.rows(), ocols = ov.weights.cols();
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) w(r, c) = orows ? ov.weights(r * orows / R, c * ocols / C) : 0.0f;
  }
  // Blocks that start in the new rows are cleared (they held the overview), then the rows pooled in.
  for (int r = 0; r < R; ++r) {
    const int64_t start = (int64_t)r * ls.n_q / R;
    if (start >= ms.pooled_rows && start < rows) w.row(r).setZero();
  }
  MaxPoolRows(head.data(), ls.n_q, ls.n_k, ms.pooled_rows, rows, R, C, w.data());
  ms.pooled_rows = rows;
  o.last_used = frame_;
  o.map.Touch();
}

int LazyMaps::SetState::LayerOf(int map) const {
  int layer = 0;
  while (layer + 1 < (int)layer_first.size() && layer_first[(size_t)layer + 1] <= map) ++layer;
  return layer;
}

StDType LazyMaps::FileType(size_t set, size_t map) const {
  return file_.index().sets[set].layers[(size_t)sets_[set].LayerOf((int)map)].dtype;
}

bool LazyMaps::Packable(size_t set, size_t map) const {
  const StDType t = FileType(set, map);
  return t == StDType::F16 || t == StDType::BF16;
}

namespace {

// A BF16 file's weights as floats back to BF16: their top 16 bits (exact: they came from BF16, or
// are a fixed-up 0).
void FloatsToBf16(const float* src, size_t n, uint16_t* dst) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, src + i, 4);
    dst[i] = (uint16_t)(u >> 16);
  }
}

}  // namespace

void LazyMaps::DropPacked(size_t set, MapState* ms) {
  if (!ms->packed) return;
  resident_ -= (uint64_t)ms->packed_rows * (uint64_t)file_.index().sets[set].n_k * sizeof(uint16_t);
  ms->packed.reset();
  ms->packed_row0 = ms->packed_rows = 0;
}

// F16 and BF16 files: the least recently drawn head or band that this frame does not draw is kept in
// the file's 16 bits, half its memory. The file stored them, so nothing is lost (a fixed-up weight
// is 0, in either type too). False when there is none, or no memory for the 16 bits (MakeRoom then
// evicts). A map being packed ahead (PackAheadSlices) gets the rest of its rows now.
bool LazyMaps::PackOldest(std::vector<Example*>& examples) {
  DropChangedAhead(examples);
  size_t set = 0, index = 0;
  if (!OldestPackable(examples, &set, &index)) return false;
  AttentionMap& m = examples[set]->maps[index];
  if (ahead_.set == (int)set && ahead_.map == (int)index) {  // the rest at once (not counted as packed ahead)
    ConvertAhead(m, ahead_.rows);
    FinishAhead(examples);
    ++packs_finished_at_once_;
    return true;
  }
  const size_t n = (size_t)m.weights.size();
  std::unique_ptr<uint16_t[]> bits(new (std::nothrow) uint16_t[n]);
  if (!bits) return false;
  if (FileType(set, index) == StDType::F16)
    FloatsToHalves(m.weights.data(), n, 1.0f, bits.get());
  else
    FloatsToBf16(m.weights.data(), n, bits.get());
  KeepPacked(set, index, std::move(bits), examples);
  return true;
}

bool LazyMaps::OldestPackable(std::vector<Example*>& examples, size_t* set, size_t* index) const {
  uint64_t oldest = frame_;
  bool found = false;
  for (size_t s = 0; s < sets_.size(); ++s) {
    Example* ex = examples[s];
    for (size_t i = 0; ex && i < sets_[s].maps.size(); ++i)
      if (ex->maps[i].weights.size() && sets_[s].maps[i].last_used < oldest && Packable(s, i))
        oldest = sets_[s].maps[i].last_used, *set = s, *index = i, found = true;
  }
  return found;
}

// The map's floats leave for its 16 bits (bits: all its rows, not yet counted in resident_).
void LazyMaps::KeepPacked(size_t set, size_t index, std::unique_ptr<uint16_t[]> bits, std::vector<Example*>& examples) {
  AttentionMap& m = examples[set]->maps[index];
  MapState& ms = sets_[set].maps[index];
  const uint64_t n = (uint64_t)m.weights.size();
  DropPacked(set, &ms);
  ms.packed = std::move(bits);
  ms.packed_row0 = m.row_offset;
  ms.packed_rows = m.weights.rows();
  resident_ = resident_ - Bytes(m.weights) + n * sizeof(uint16_t);
  m.weights.resize(0, 0);
  m.row_offset = 0;
  m.Touch();
  ++packs_;
}

// ---- packing ahead -------------------------------------------------------------------------------
// MakeRoom packs the oldest undrawn F16/BF16 head when a read needs the room: for a 4096^2 head that
// was one 30-60 ms task in the page (FloatsToHalves over 16 M weights, bound by memory traffic), in
// the command that switched heads (bench/lazy_browser_bench.mjs, command_ms; stops 51-53). Packing
// ahead does the same work earlier, in slices between and within frames, as soon as the cache has
// less room than the next head read takes: by the next switch the room is there. As when a head is
// packed at once, its floats and its 16 bits are both held until the last slice is done; the 16 bits
// count in the cache from then on (AheadBytes() says what is held meanwhile: at most one head's 16
// bits beside the budget, what packing at once took too, for a moment).

uint64_t LazyMaps::RoomForNextRead() const {
  // A whole head of the largest set as floats with its stored screen copy, and, from an asynchronous
  // source, their 16-bit file bytes in the reads' buffers (the files packing ahead serves are F16/BF16).
  const uint64_t per_weight = sizeof(float) + (file_.Asynchronous() ? sizeof(uint16_t) : 0);
  uint64_t room = 0;
  for (const LazySet& ls : file_.index().sets) {
    const uint64_t weights = (uint64_t)ls.n_q * (uint64_t)ls.n_k +
                             (uint64_t)ls.PoolRows(LazyPool::Screen) * (uint64_t)ls.PoolCols(LazyPool::Screen);
    room = std::max(room, weights * per_weight);
  }
  return room;
}

bool LazyMaps::AheadValid(std::vector<Example*>& examples) const {
  if (ahead_.set < 0 || (size_t)ahead_.set >= examples.size() || !examples[(size_t)ahead_.set]) return false;
  const AttentionMap& m = examples[(size_t)ahead_.set]->maps[(size_t)ahead_.map];
  const MapState& ms = sets_[(size_t)ahead_.set].maps[(size_t)ahead_.map];
  // Drawn again, or its weights changed (evicted, replaced by other rows): the slices so far are lost.
  return m.version == ahead_.version && ms.last_used == ahead_.last_used && m.weights.rows() == ahead_.rows &&
         m.weights.cols() == ahead_.n_k;
}

void LazyMaps::DropChangedAhead(std::vector<Example*>& examples) {
  if (ahead_.set < 0 || AheadValid(examples)) return;
  ahead_ = AheadPack{};
  ++packs_dropped_;
}

bool LazyMaps::RoomShort() const {
  return resident_ + AskedBytes() + RoomForNextRead() > LazyCacheBudget();
}

uint64_t LazyMaps::AheadBytes() const {
  return ahead_.set < 0 ? 0 : (uint64_t)ahead_.rows * (uint64_t)ahead_.n_k * sizeof(uint16_t);
}

void LazyMaps::ConvertAhead(const AttentionMap& m, int64_t row1) {
  const size_t a = (size_t)(ahead_.done * ahead_.n_k), b = (size_t)(row1 * ahead_.n_k);
  if (b <= a) return;
  if (FileType((size_t)ahead_.set, (size_t)ahead_.map) == StDType::F16)
    FloatsToHalves(m.weights.data() + a, b - a, 1.0f, ahead_.bits.get() + a);
  else
    FloatsToBf16(m.weights.data() + a, b - a, ahead_.bits.get() + a);
  ahead_.done = row1;
}

void LazyMaps::FinishAhead(std::vector<Example*>& examples) {
  const size_t set = (size_t)ahead_.set, index = (size_t)ahead_.map;
  std::unique_ptr<uint16_t[]> bits = std::move(ahead_.bits);
  ahead_ = AheadPack{};
  KeepPacked(set, index, std::move(bits), examples);
}

bool LazyMaps::PackAheadSlices(std::vector<Example*>& examples, std::chrono::steady_clock::time_point until) {
  DropChangedAhead(examples);
  const auto t0 = std::chrono::steady_clock::now();
  if (t0 >= until) return ahead_.set >= 0;
  if (ahead_.set < 0) {
    if (!RoomShort()) return false;
    size_t set = 0, index = 0;
    if (!OldestPackable(examples, &set, &index)) return false;
    const AttentionMap& m = examples[set]->maps[index];
    const uint64_t n = (uint64_t)m.weights.size();
    std::unique_ptr<uint16_t[]> bits(new (std::nothrow) uint16_t[(size_t)n]);
    if (!bits) return false;  // room is made when it is needed, as before
    ahead_.set = (int)set, ahead_.map = (int)index;
    ahead_.bits = std::move(bits);
    ahead_.rows = m.weights.rows(), ahead_.done = 0, ahead_.n_k = m.weights.cols();
    ahead_.version = m.version;
    ahead_.last_used = sets_[set].maps[index].last_used;
    // The allocation is a slice of its own (growing the WASM memory for 32 MiB can take a while).
    const auto t = std::chrono::steady_clock::now();
    longest_pack_alloc_ms_ =
        std::max(longest_pack_alloc_ms_, std::chrono::duration<double, std::milli>(t - t0).count());
    return true;
  }
  const AttentionMap& m = examples[(size_t)ahead_.set]->maps[(size_t)ahead_.map];
  const int64_t step = std::max<int64_t>(1, kPackAheadStepWeights / std::max<int64_t>(1, ahead_.n_k));
  auto t = t0;
  while (ahead_.done < ahead_.rows && t < until) {
    ConvertAhead(m, std::min(ahead_.rows, ahead_.done + step));
    t = std::chrono::steady_clock::now();
  }
  ++pack_slices_;
  longest_pack_slice_ms_ = std::max(longest_pack_slice_ms_, std::chrono::duration<double, std::milli>(t - t0).count());
  if (ahead_.done < ahead_.rows) return true;
  FinishAhead(examples);
  ++packs_ahead_;
  return false;
}

bool LazyMaps::PackAhead(AppState* s, std::chrono::steady_clock::time_point until) {
  if (ahead_.set < 0 && !RoomShort()) return false;  // the usual case, every frame: nothing to do, nothing built
  std::vector<Example*> examples = SetExamples(s);
  return PackAheadSlices(examples, until);
}

// Rows kept in 16 bits that cover what a view wants come back as floats, with no read: about 1 ns a
// weight (16 ms for a 4096^2 head in WASM) against a read of 32 MiB.
bool LazyMaps::Unpack(const Want& w, std::vector<Example*>& examples) {
  MapState& ms = sets_[(size_t)w.set].maps[(size_t)w.map];
  if (!ms.packed || w.row0 < ms.packed_row0 || w.row1 > ms.packed_row0 + ms.packed_rows) return false;
  AttentionMap& m = examples[(size_t)w.set]->maps[(size_t)w.map];
  const int64_t n_k = file_.index().sets[(size_t)w.set].n_k;
  const size_t n = (size_t)(ms.packed_rows * n_k);
  resident_ -= Bytes(m.weights);  // rows held beside that do not cover the view
  m.weights.resize(0, 0);
  m.Touch();
  resident_ -= n * sizeof(uint16_t);  // the 16 bits make way for the floats they become
  const bool room = MakeRoom(n * sizeof(float), examples) && TryAllocate(n * sizeof(float));
  resident_ += n * sizeof(uint16_t);
  if (!room) return false;  // read as any rows not in memory are (a budget too small says so then)
  m.weights.resize(ms.packed_rows, n_k);
  float max = 0;
  size_t fixed = 0;
  DecodeWeights(FileType((size_t)w.set, (size_t)w.map), reinterpret_cast<const uint8_t*>(ms.packed.get()), n,
                m.weights.data(), &max, &fixed);
  m.row_offset = (int)ms.packed_row0;
  m.Touch();
  m.range_stats = MapRangeStats{};
  m.range_stats.version = m.version;
  m.range_stats.max = max;
  resident_ += Bytes(m.weights);
  DropPacked(w.set, &ms);
  ++unpacks_;
  return true;
}

uint64_t LazyMaps::AskedBytes() const {
  uint64_t b = 0;
  for (size_t s = 0; s < sets_.size(); ++s) {
    const LazySet& ls = file_.index().sets[s];
    for (const MapState& ms : sets_[s].maps)
      if (ms.ticket) b += (uint64_t)(ms.row1 - ms.row0) * (uint64_t)ls.n_k * sizeof(float);
  }
  for (const auto& kv : overview_reads_) {
    const OverviewRead& r = kv.second;
    const LazySet& ls = file_.index().sets[(size_t)r.set];
    if (r.full) {  // its overview, pooled as the head is decoded (the head's bytes: below)
      b += (uint64_t)OverviewSide(ls.n_q) * (uint64_t)OverviewSide(ls.n_k) * sizeof(float);
      continue;
    }
    b += (uint64_t)(r.head1 - r.head0) * (uint64_t)ls.PoolRows(r.pool) * (uint64_t)ls.PoolCols(r.pool) * sizeof(float);
  }
  // The file's bytes while they are read: an asynchronous source writes each read whole into a buffer
  // of its own, decoded later (a synchronous one reads a piece at a time).
  return b + file_.StagingBytes();
}

bool LazyMaps::MakeRoom(uint64_t bytes, std::vector<Example*>& examples) {
  constexpr int kPackedKind = 1 + kLazyPools;
  const uint64_t budget = LazyCacheBudget();
  while (resident_ + bytes > budget) {
    if (PackOldest(examples)) continue;  // F16, BF16 files: heads go to 16 bits before anything leaves
    // The least recently drawn head, band, 16-bit copy, overview or screen copy that this frame does not draw.
    uint64_t oldest = frame_;
    int kind = -1;  // 0 rows, 1 + LazyPool, kPackedKind a 16-bit copy
    size_t set = 0, index = 0;
    for (size_t s = 0; s < sets_.size(); ++s) {
      Example* ex = examples[s];
      for (size_t i = 0; i < sets_[s].maps.size(); ++i) {
        if (ex && ex->maps[i].weights.size() && sets_[s].maps[i].last_used < oldest)
          oldest = sets_[s].maps[i].last_used, kind = 0, set = s, index = i;
        if (sets_[s].maps[i].packed && sets_[s].maps[i].last_used < oldest)
          oldest = sets_[s].maps[i].last_used, kind = kPackedKind, set = s, index = i;
        for (int p = 0; p < kLazyPools; ++p)
          if (sets_[s].pool[p][i].map.weights.size() && sets_[s].pool[p][i].last_used < oldest)
            oldest = sets_[s].pool[p][i].last_used, kind = 1 + p, set = s, index = i;
      }
    }
    if (kind < 0) return false;
    ++evictions_;
    if (kind == kPackedKind) {
      DropPacked(set, &sets_[set].maps[index]);
      continue;
    }
    AttentionMap& m = kind == 0 ? examples[set]->maps[index] : sets_[set].pool[kind - 1][index].map;
    resident_ -= Bytes(m.weights);
    m.weights.resize(0, 0);
    if (kind == 0) m.row_offset = 0;
    m.Touch();
  }
  return true;
}

void LazyMaps::Install(int set, int map, LazyResult* r, std::vector<Example*>& examples) {
  Example* ex = examples[(size_t)set];
  if (!ex) return;  // the set's example is gone
  AttentionMap& m = ex->maps[(size_t)map];
  resident_ -= Bytes(m.weights);  // a band replaced by more rows
  m.weights.resize(0, 0);
  DropPacked((size_t)set, &sets_[(size_t)set].maps[(size_t)map]);  // 16 bits of other rows
  if (!MakeRoom(Bytes(r->weights), examples)) {
    m.Touch();
    r->status = Status::Error(PrintableText(m.name, 80) + " needs " + FormatByteSize(Bytes(r->weights)) +
                              ", more than the cache budget of " + FormatByteSize(LazyCacheBudget()) +
                              " holds; zoom in to read only the rows in view, or raise it: cache 1G");
    return;
  }
  m.weights = std::move(r->weights);
  m.row_offset = (int)r->request.row0;
  m.Touch();
  sets_[(size_t)set].maps[(size_t)map].installed = r->ticket;
  // The largest weight was kept as the rows were decoded: the auto colour range needs no pass over
  // a 4096^2 head in the frame it arrives (~36 ms in WASM).
  m.range_stats = MapRangeStats{};
  m.range_stats.version = m.version;
  m.range_stats.max = r->max;
  resident_ += Bytes(m.weights);
  sets_[(size_t)set].maps[(size_t)map].last_used = frame_;
  ++installs_;
  installed_ = true;
}

void LazyMaps::InstallOverview(int set, int map, LazyPool pool, MatrixRM weights) {
  OverviewState& o = sets_[(size_t)set].pool[(int)pool][(size_t)map];
  resident_ -= Bytes(o.map.weights);
  o.map.weights = std::move(weights);
  o.map.Touch();
  resident_ += Bytes(o.map.weights);
  o.ticket = 0;
  installed_ = true;
}

void LazyMaps::Failed(AppState* s, const Status& st) {
  if (st.message == last_error_) return;  // said once, not every frame
  last_error_ = st.message;
  s->Notify(PrintableText(name_, 60) + ": " + st.message, true);
}

const HeadStats* LazyMaps::HeadStatsOf(int set, int map, bool* from_file) {
  if (set < 0 || set >= (int)sets_.size()) return nullptr;
  SetState& ss = sets_[(size_t)set];
  if (map < 0 || map >= (int)ss.stats.size()) return nullptr;
  ss.stats_wanted = true;
  if (!ss.stats_from[(size_t)map]) return nullptr;
  if (from_file) *from_file = ss.stats_from[(size_t)map] == 1;
  return &ss.stats[(size_t)map];
}

void LazyMaps::PoolWithStats(int set) {
  if (set >= 0 && set < (int)sets_.size()) sets_[(size_t)set].pool_stats = true;
}

void LazyMaps::RequestStoredStats() {
  for (size_t s = 0; s < sets_.size(); ++s) {
    SetState& ss = sets_[s];
    if (!ss.stats_wanted || ss.stats_asked || !file_.index().sets[s].stats) continue;
    LazyRequest r;
    r.set = (int)s, r.stats = true;
    ss.stats_ticket = file_.Submit(r);
    ss.stats_asked = true;  // once: a failed read is said, and the grid sorts the heads it reads
  }
}

// A set's stored statistics: each head's row checked (a file may hold anything there).
void LazyMaps::InstallStoredStats(AppState* s, const LazyResult& r) {
  SetState& ss = sets_[(size_t)r.request.set];
  if (r.ticket != ss.stats_ticket) return;
  ss.stats_ticket = 0;
  if (!r.status) {
    Failed(s, Status::Error("the stored head statistics could not be read (" + r.status.message + ")"));
    return;
  }
  const LazySet& ls = file_.index().sets[(size_t)r.request.set];
  int refused = 0;
  for (size_t i = 0; i < ss.stats.size() && (Eigen::Index)i < r.weights.rows(); ++i) {
    if (ss.stats_from[i] == 2) continue;  // computed from the weights already
    if (HeadStatsFromRow(r.weights.data() + i * kHeadStatsColumns, ls.n_q, ls.n_k, &ss.stats[i])) {
      ss.stats_from[i] = 1;
      ++stats_stored_;
    } else {
      ++refused;
    }
  }
  stats_refused_ += refused;
  if (refused)
    s->Notify(PrintableText(name_, 60) + ": the statistics stored for " + std::to_string(refused) +
                  " heads are impossible (not finite, or out of range); those heads are sorted once read",
              true);
}

// A run of heads' stored overviews or screen copies, or a whole head pooled into its overview.
void LazyMaps::InstallPooled(AppState* s, const OverviewRead& read, LazyResult* r, std::vector<Example*>& examples) {
  const int set = read.set;
  const LazySet& ls = file_.index().sets[(size_t)set];
  SetState& ss = sets_[(size_t)set];
  std::vector<OverviewState>& pool = ss.pool[(int)read.pool];
  if (!r->status) {
    for (int h = read.head0; h < read.head1; ++h) {
      const int i = MapIndex(set, read.layer, h);
      pool[(size_t)i].ticket = 0;
      ss.maps[(size_t)i].overview_ticket = 0;
      ss.maps[(size_t)i].pool_retry.Failed();
    }
    Failed(s, r->status);
    return;
  }
  for (int h = read.head0; h < read.head1; ++h) {
    const int i = MapIndex(set, read.layer, h);
    MatrixRM o;
    if (read.full) {  // pooled as it was decoded (LazyRequest::pooled), its statistics with it
      o = std::move(r->weights);
      ss.maps[(size_t)i].overview_ticket = 0;
      if (r->has_stats && ss.stats_from[(size_t)i] != 1) {
        stats_pooled_ += ss.stats_from[(size_t)i] == 0;
        ss.stats[(size_t)i] = r->stats;
        ss.stats_from[(size_t)i] = 2;
      }
    } else {
      const int R = ls.PoolRows(read.pool), C = ls.PoolCols(read.pool);
      o.resize((Eigen::Index)R, (Eigen::Index)C);
      std::memcpy(o.data(), r->weights.data() + (size_t)(h - read.head0) * R * C, (size_t)R * C * sizeof(float));
    }
    if (MakeRoom(Bytes(o), examples)) {
      InstallOverview(set, i, read.pool, std::move(o));
      ss.maps[(size_t)i].pool_retry.Succeeded();
    } else {  // not asked again for a while: the budget cannot hold what is in view
      ss.maps[(size_t)i].pool_retry.Failed();
      Failed(s, Status::Error("the cache budget of " + FormatByteSize(LazyCacheBudget()) + " cannot hold the " +
                              LazyPoolName(read.pool) + " in view; raise it: cache 1G"));
    }
    pool[(size_t)i].ticket = 0;
    pool[(size_t)i].last_used = frame_;
  }
}

void LazyMaps::Results(AppState* s, std::vector<Example*>& examples) {
  LazyResult r;
  while (file_.PopResult(&r)) {
    const int set = r.request.set;
    if (r.request.stats) {
      InstallStoredStats(s, r);
      continue;
    }
    const auto ov = overview_reads_.find(r.ticket);
    if (ov != overview_reads_.end()) {  // overviews or screen copies of a run of heads, or a whole head
      const OverviewRead read = ov->second;
      overview_reads_.erase(ov);
      InstallPooled(s, read, &r, examples);
      continue;
    }
    // Rows of a head.
    const int layer = r.request.layer, head = r.request.head;
    const int i = MapIndex(set, layer, head);
    MapState& ms = sets_[(size_t)set].maps[(size_t)i];
    if (ms.ticket != r.ticket) continue;  // superseded
    ms.ticket = 0;
    // A computed screen copy (files without stored ones) gets the last rows; a head the cache cannot
    // hold gets one whole, to stand in for it.
    const LazySet& ls = file_.index().sets[(size_t)set];
    const bool whole = r.request.row0 == 0 && r.request.row1 == ls.n_q;
    if (r.status && whole && !ls.Has(LazyPool::Screen) && WantsScreenCopies(ls.n_q, ls.n_k) &&
        (ms.pooled_ticket == r.ticket || Bytes(r.weights) > LazyCacheBudget())) {
      if (ms.pooled_ticket != r.ticket) ms.pooled_ticket = r.ticket, ms.pooled_rows = 0;
      PoolDecodedRows(set, i, r.weights, ls.n_q, examples);
    }
    if (r.status) Install(set, i, &r, examples), ms.rows_retry.Succeeded();
    if (!r.status) {
      ms.rows_retry.Failed();
      ms.failed0 = r.request.row0;
      ms.failed1 = r.request.row1;
      Failed(s, r.status);
    } else if (r.fixed) {
      s->Notify(std::to_string(r.fixed) + " weights of layer " + std::to_string(layer) + " head " +
                    std::to_string(head) + " were NaN, infinite or negative; shown as 0",
                true);
    }
  }
}

void LazyMaps::Requests(AppState*, std::vector<Example*>& examples) {
  const auto now = std::chrono::steady_clock::now();
  // Everything this frame drew is kept before any room is made below (Compare draws two maps; the
  // heatmap a stand-in beside the rows).
  for (const Want& w : wants_) sets_[(size_t)w.set].maps[(size_t)w.map].last_used = frame_;
  for (int p = 0; p < kLazyPools; ++p)
    for (const auto& sm : pool_wants_[p]) sets_[(size_t)sm.first].pool[p][(size_t)sm.second].last_used = frame_;
  // Rows the views drew: in memory (kept), being read, or asked for now.
  std::vector<uint64_t> wanted;
  for (const Want& w : wants_) {
    Example* ex = examples[(size_t)w.set];
    if (!ex) continue;
    const AttentionMap& m = ex->maps[(size_t)w.map];
    MapState& ms = sets_[(size_t)w.set].maps[(size_t)w.map];
    const int64_t have0 = m.row_offset, have1 = m.row_offset + (int64_t)m.weights.rows();
    if (m.weights.size() && have0 <= w.row0 && w.row1 <= have1) continue;  // kept (stamped above)
    if (Unpack(w, examples)) continue;                                     // kept in 16 bits: widened, not read
    // A read under way that covers the rows is waited for, unless it is far bigger than what is in
    // view now (a whole head asked for before the view zoomed in): then the band goes first.
    if (ms.ticket && ms.row0 <= w.row0 && w.row1 <= ms.row1 && (ms.row1 - ms.row0) <= 4 * (w.row1 - w.row0)) {
      wanted.push_back(ms.ticket);
      continue;
    }
    // Not every frame after a failure (other rows, e.g. a band once zoomed in, may be asked at once).
    if (ms.rows_retry.Resting(now) && ms.failed0 == w.row0 && ms.failed1 == w.row1) continue;
    if (StandInFirst(w)) continue;
    if (ms.ticket) file_.Cancel(ms.ticket);
    const int layer = sets_[(size_t)w.set].LayerOf(w.map);
    LazyRequest r;
    r.set = w.set;
    r.layer = layer;
    r.head = w.map - sets_[(size_t)w.set].layer_first[(size_t)layer];
    r.row0 = w.row0;
    r.row1 = w.row1;
    ms.ticket = file_.Submit(r);
    ms.row0 = w.row0;
    ms.row1 = w.row1;
    wanted.push_back(ms.ticket);
  }
  // Rows no view draws any more are not read (a head clicked past quickly).
  for (SetState& ss : sets_) {
    for (MapState& ms : ss.maps) {
      if (!ms.ticket || std::find(wanted.begin(), wanted.end(), ms.ticket) != wanted.end()) continue;
      file_.Cancel(ms.ticket);
      ms.ticket = 0;
    }
  }
  RequestOverviews(LazyPool::Screen, examples);  // a heatmap's stand-in first: the grid's overviews are many
  RequestOverviews(LazyPool::Thumb, examples);
  RequestOverviews(LazyPool::Overview, examples);
  CancelUnwantedOverviews();
}

// Many rows of a head wait for its stored screen copy while the view asks for that too: the stand-in
// (2 MiB for a 4096^2 F16 head) shows the head at the view's resolution, and read beside the rows'
// first 4 MiB piece it arrived 4x later on a 2-vCPU machine (bench/lazy_browser_bench.mjs, stop 26:
// 622 against 143 ms). A band (zoomed in) is read at once, and so is a head whose copy failed.
bool LazyMaps::StandInFirst(const Want& w) const {
  const SetState& ss = sets_[(size_t)w.set];
  const int screen_rows = file_.index().sets[(size_t)w.set].PoolRows(LazyPool::Screen);
  if (!screen_rows || w.row1 - w.row0 <= 2 * (int64_t)screen_rows) return false;
  if (ss.pool[(int)LazyPool::Screen][(size_t)w.map].map.weights.size()) return false;  // in memory
  if (ss.maps[(size_t)w.map].pool_retry.Resting(std::chrono::steady_clock::now())) return false;
  const auto& wants = pool_wants_[(int)LazyPool::Screen];
  return std::find(wants.begin(), wants.end(), std::make_pair(w.set, w.map)) != wants.end();
}

// A file without overviews: a wanted head is read whole (kWholeHeadsForOverviews at a time) and pooled
// into its overview as it is decoded.
bool LazyMaps::RequestWholeHead(int set, int layer, int head, int* in_flight) {
  if (*in_flight >= kWholeHeadsForOverviews) return false;
  MapState& ms = sets_[(size_t)set].maps[(size_t)MapIndex(set, layer, head)];
  LazyRequest r;
  r.set = set, r.layer = layer, r.head = head, r.pooled = true;
  r.with_stats = sets_[(size_t)set].pool_stats;  // the grid sorts by them
  ms.overview_ticket = file_.Submit(r);
  overview_reads_[ms.overview_ticket] = {set, layer, head, head + 1, true, LazyPool::Overview};
  ++*in_flight;
  return true;
}

// A file without overviews: the overview of a head whose floats are all in memory (a view read it
// whole) is pooled from them, not read again. At most one a frame (~5 ms for 4096^2 in WASM).
bool LazyMaps::PoolHeldHead(int set, int map, std::vector<Example*>& examples) {
  const Example* ex = examples[(size_t)set];
  const LazySet& ls = file_.index().sets[(size_t)set];
  if (!ex || pooled_held_frame_ == frame_) return false;
  const AttentionMap& m = ex->maps[(size_t)map];
  if (m.row_offset != 0 || m.weights.rows() != ls.n_q || m.weights.cols() != ls.n_k) return false;
  MatrixRM o((Eigen::Index)OverviewSide(ls.n_q), (Eigen::Index)OverviewSide(ls.n_k));
  MaxPoolOverview(m.weights.data(), ls.n_q, ls.n_k, (int)o.rows(), (int)o.cols(), o.data());
  pooled_held_frame_ = frame_;
  if (!MakeRoom(Bytes(o), examples)) return false;  // then read as any other (and refused the same way)
  InstallOverview(set, map, LazyPool::Overview, std::move(o));
  sets_[(size_t)set].pool[(int)LazyPool::Overview][(size_t)map].last_used = frame_;
  ++overviews_from_heads_;
  return true;
}

// A file without overviews or stored statistics, its grid sorted by a statistic: a head whose overview
// is in memory but whose statistics are not (pooled before the sort was chosen), and whose weights are
// not in memory whole (the grid computes those itself), is read again, its overview drawn meanwhile.
bool LazyMaps::StatsMissing(int set, int map, LazyPool pool, std::vector<Example*>& examples) const {
  const SetState& ss = sets_[(size_t)set];
  const LazySet& ls = file_.index().sets[(size_t)set];
  if (pool != LazyPool::Overview || !ss.pool_stats || ls.Has(pool) || ls.stats || ss.stats_from[(size_t)map])
    return false;
  const Example* ex = examples[(size_t)set];
  return !ex || !ex->maps[(size_t)map].Complete() || ex->maps[(size_t)map].weights.rows() != ls.n_q;
}

// Overviews (or screen copies): in memory (kept), or read a run of a layer's missing heads at once.
void LazyMaps::RequestOverviews(LazyPool pool, std::vector<Example*>& examples) {
  // Heads per read: 1 MiB of 256 x 256 F16 overviews; thumbnails, 16 times smaller, a layer's run of
  // up to 32 (256 KiB of 64 x 64 F16).
  const int kOverviewRun = pool == LazyPool::Thumb ? 32 : 8;
  std::vector<std::pair<int, int>>& wants = pool_wants_[(int)pool];
  std::sort(wants.begin(), wants.end());
  wants.erase(std::unique(wants.begin(), wants.end()), wants.end());
  int whole_heads_in_flight = 0;
  for (const auto& kv : overview_reads_) whole_heads_in_flight += kv.second.full;
  const auto now = std::chrono::steady_clock::now();
  for (size_t k = 0; k < wants.size(); ++k) {
    const int set = wants[k].first, map = wants[k].second;
    SetState& ss = sets_[(size_t)set];
    std::vector<OverviewState>& held = ss.pool[(int)pool];
    const OverviewState& o = held[(size_t)map];  // stamped as drawn in Requests
    MapState& ms = ss.maps[(size_t)map];
    if ((o.map.weights.size() && !StatsMissing(set, map, pool, examples)) || o.ticket || ms.overview_ticket) continue;
    if (ms.pool_retry.Resting(now)) continue;
    const LazySet& ls = file_.index().sets[(size_t)set];
    const int layer = ss.LayerOf(map);
    const int head = map - ss.layer_first[(size_t)layer];
    if (!ls.Has(pool)) {  // not stored: overviews are pooled from the whole head, screen copies not made
      // A head a view is reading whole gives its overview once it is in (a heatmap's stand-in asked
      // for one too, and the head was read twice).
      const bool coming = ms.ticket && ms.row0 == 0 && ms.row1 == ls.n_q;
      if (pool == LazyPool::Overview && !coming && !PoolHeldHead(set, map, examples))
        RequestWholeHead(set, layer, head, &whole_heads_in_flight);
      continue;
    }
    // The run of wanted, missing heads of this layer that follow, at most kOverviewRun: reads of a
    // few heads each arrive one after another, so the grid's first thumbnails show while the rest
    // are still read (a whole layer per read made them all wait for the slowest).
    int end = head + 1;
    while (k + 1 < wants.size() && wants[k + 1].first == set && wants[k + 1].second == map + (end - head) &&
           end < ls.layers[(size_t)layer].heads && end - head < kOverviewRun) {
      const OverviewState& next = held[(size_t)(map + (end - head))];
      if (next.map.weights.size() || next.ticket) break;
      ++end, ++k;
    }
    LazyRequest r;
    r.set = set, r.layer = layer, r.head = head, r.head_end = end, r.overview = true;
    r.pool = pool;
    const uint64_t t = file_.Submit(r);
    overview_reads_[t] = {set, layer, head, end, false, pool};
    for (int h = head; h < end; ++h) held[(size_t)(ss.layer_first[(size_t)layer] + h)].ticket = t;
  }
}

// Overview reads of which no head was drawn this frame are not read on (the grid scrolled on, or a
// view that draws one head took over): they would hold back what is in view now.
void LazyMaps::CancelUnwantedOverviews() {
  for (auto it = overview_reads_.begin(); it != overview_reads_.end();) {
    const OverviewRead& read = it->second;
    SetState& ss = sets_[(size_t)read.set];
    std::vector<OverviewState>& pool = ss.pool[(int)read.pool];
    bool wanted = false;
    for (int h = read.head0; h < read.head1 && !wanted; ++h)
      wanted = pool[(size_t)MapIndex(read.set, read.layer, h)].last_used == frame_;
    if (wanted) {
      ++it;
      continue;
    }
    file_.Cancel(it->first);
    for (int h = read.head0; h < read.head1; ++h) {
      const size_t i = (size_t)MapIndex(read.set, read.layer, h);
      pool[i].ticket = 0;
      if (read.full) ss.maps[i].overview_ticket = 0;
    }
    it = overview_reads_.erase(it);
  }
}

std::vector<Example*> LazyMaps::SetExamples(AppState* s) {
  std::vector<Example*> examples(sets_.size(), nullptr);  // each set's example (by pointer: for now only)
  for (Example& ex : s->examples)
    if (ex.lazy.get() == this && ex.lazy_set >= 0 && ex.lazy_set < (int)sets_.size())
      examples[(size_t)ex.lazy_set] = &ex;
  return examples;
}

void LazyMaps::Request(AppState* s) {
  std::vector<Example*> examples = SetExamples(s);
  ++frame_;
  ForgetLostReads();
  Requests(s, examples);  // this frame's wants: kept from eviction, or asked for now
  // Reads of one part (a head's stand-ins, overviews, a band) start before room is made: making it may
  // pack a 4096^2 head into 16 bits, ~50 ms in the page, which held a paced switch's first reads back
  // that long (bench/lazy_browser_bench.mjs, command_ms; stop 51). Only those that fit in the budget
  // beside what is held start now (usually there is room: the buffer of the last head read, freed
  // once it was decoded); the rest wait for the room.
  const uint64_t budget = LazyCacheBudget(), held = resident_ + file_.LoadingBytes();
  file_.StartReads(/*single_part_only=*/true, budget > held ? budget - held : 0);
  max_memory_ = std::max(max_memory_, resident_ + file_.LoadingBytes());
  // Room for what is being read now, not only when it arrives: what this frame does not draw goes to
  // 16 bits or out first, so the reads' buffers can take the blocks that leave (with halves filling
  // the cache, a head read without this raised the WASM peak by ~70 MB: no free 64 MiB block among
  // 32 MiB ones). A budget just lowered (the cache command) holds at once too.
  MakeRoom(AskedBytes(), examples);
  RequestStoredStats();
  for (SetState& ss : sets_) ss.pool_stats = false;  // the grid says so again next frame, if still sorted
  // Asynchronous reads start at once (decoding waits for the time between frames and the next
  // frame's pump: a piece decoded here made frames 20-30 ms longer on a slow machine); synchronous
  // ones are read at the next frame (PumpLazyMaps), so a burst of commands reads only what is wanted last.
  file_.StartReads();
  max_memory_ = std::max(max_memory_, resident_ + file_.LoadingBytes());
  Results(s, examples);
  drawn_rows_.swap(wants_);
  wants_.clear();
  for (int p = 0; p < kLazyPools; ++p) drawn_pool_[p].swap(pool_wants_[p]), pool_wants_[p].clear();
  requested_at_ = std::chrono::steady_clock::now();
  installed_ = false;
}

void LazyMaps::Retry::Failed() {
  at = std::chrono::steady_clock::now();
  failures = std::min(failures + 1, 16);
}

bool LazyMaps::Retry::Resting(std::chrono::steady_clock::time_point now) const {
  if (failures == 0) return false;
  const auto rest = std::chrono::milliseconds(std::min<int64_t>(int64_t(1000) << (failures - 1), 30000));
  return now - at < rest;
}

// (Files without stored overviews pool a head read whole: under way, or asked for at the next frame.)
bool LazyMaps::PoolWantUnmet(LazyPool pool, int set, int map, std::chrono::steady_clock::time_point now) const {
  const SetState& ss = sets_[(size_t)set];
  const OverviewState& o = ss.pool[(int)pool][(size_t)map];
  const MapState& ms = ss.maps[(size_t)map];
  if (o.map.weights.size() || ms.pool_retry.Resting(now)) return false;
  return !(o.ticket && file_.Knows(o.ticket)) && !(ms.overview_ticket && file_.Knows(ms.overview_ticket));
}

bool LazyMaps::WantsFrame() {
  const auto now = std::chrono::steady_clock::now();
  if (file_.Pending() > 0 || now - requested_at_ < std::chrono::milliseconds(100)) return false;
  bool unmet = false;
  for (int p = 0; p < kLazyPools && !unmet; ++p)
    for (const auto& sm : drawn_pool_[p])
      if ((unmet = PoolWantUnmet((LazyPool)p, sm.first, sm.second, now))) break;
  for (const Want& w : drawn_rows_) {  // rows whose read failed, rested now (others are asked at once)
    const MapState& ms = sets_[(size_t)w.set].maps[(size_t)w.map];
    unmet = unmet || (ms.rows_retry.failures && !ms.rows_retry.Resting(now) && !ms.ticket && ms.failed0 == w.row0 &&
                      ms.failed1 == w.row1);
  }
  // Something came in after the last frame was drawn (the page asks for a frame then, and so does
  // the grid while thumbnails wait for their uploads; this one does not depend on either).
  if (!unmet && !installed_) return false;
  requested_at_ = now;  // not again before the frame this asks for has had its time
  ++wakes_;
  return true;
}

// Tickets left on a map whose read the file no longer knows (neither reading nor finished): none is
// expected, but one left would keep its map from being asked for again, so it is counted and dropped.
void LazyMaps::ForgetLostReads() {
  for (auto it = overview_reads_.begin(); it != overview_reads_.end();) {
    if (file_.Knows(it->first)) {
      ++it;
      continue;
    }
    ++lost_;
    it = overview_reads_.erase(it);
  }
  for (SetState& ss : sets_) {
    for (int p = 0; p < kLazyPools; ++p)
      for (OverviewState& o : ss.pool[p])
        if (o.ticket && !overview_reads_.count(o.ticket)) o.ticket = 0, ++lost_;
    for (MapState& ms : ss.maps) {
      if (ms.overview_ticket && !overview_reads_.count(ms.overview_ticket)) ms.overview_ticket = 0, ++lost_;
      if (ms.ticket && !file_.Knows(ms.ticket)) ms.ticket = 0, ++lost_;
    }
  }
}

bool LazyMaps::Work(AppState* s, double budget_ms, FrameStats* parts) {
  std::vector<Example*> examples = SetExamples(s);
  const auto t0 = std::chrono::steady_clock::now();
  file_.Pump(budget_ms);
  max_memory_ = std::max(max_memory_, resident_ + file_.LoadingBytes());  // heads read, not yet installed
  const auto t1 = std::chrono::steady_clock::now();
  ComputeScreens(examples);
  Results(s, examples);
  if (parts) {
    parts->decode_ms += std::chrono::duration<float, std::milli>(t1 - t0).count();
    parts->install_ms += std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t1).count();
  }
  max_resident_ = std::max(max_resident_, resident_);
  max_memory_ = std::max(max_memory_, resident_ + file_.LoadingBytes());
  return file_.Busy();
}

const LazyCacheStats& LazyMaps::Readout(const LazyCacheStats& now, bool refresh) {
  readout_frame_ = ImGui::GetFrameCount();
  if (refresh || !readout_valid_ || now.budget != readout_.budget) readout_ = now, readout_valid_ = true;
  return readout_;
}

bool LazyMaps::ReadoutStale(const LazyCacheStats& now) const {
  if (!readout_valid_ || readout_frame_ != ImGui::GetFrameCount()) return false;  // not drawn last frame
  const LazyCacheStats& r = readout_;
  return r.resident != now.resident || r.loading != now.loading || r.bytes_read != now.bytes_read ||
         r.reads != now.reads || r.heads != now.heads || r.bands != now.bands || r.packed != now.packed ||
         r.overviews != now.overviews || r.screens != now.screens || r.thumbs != now.thumbs || r.pending != now.pending;
}

LazyCacheStats LazyMaps::Stats(int heads, int bands) const {
  LazyCacheStats st;
  st.name = name_;
  st.file_bytes = file_.index().header.file_size;
  st.budget = LazyCacheBudget();
  st.resident = resident_;
  st.loading = file_.LoadingBytes();
  st.bytes_read = file_.BytesRead();
  st.reads = file_.Reads();
  st.heads = heads, st.bands = bands;
  st.pending = (int)file_.Pending();
  for (const SetState& ss : sets_) {
    for (const MapState& ms : ss.maps) st.packed += ms.packed != nullptr;
    for (const OverviewState& o : ss.pool[(int)LazyPool::Overview]) st.overviews += o.map.weights.size() > 0;
    for (const OverviewState& o : ss.pool[(int)LazyPool::Screen]) st.screens += o.map.weights.size() > 0;
    for (const OverviewState& o : ss.pool[(int)LazyPool::Thumb]) st.thumbs += o.map.weights.size() > 0;
  }
  return st;
}

// "shown": what the sidebar's CACHE section shows (Readout: refreshed twice a second), [bytes read,
// reads, resident bytes, budget]; null before it was first drawn.
void LazyMaps::DescribeReadout(JsonWriter* w) const {
  w->Key("shown");
  if (!readout_valid_) {
    w->Null();
    return;
  }
  w->BeginArray(true);
  w->Number((double)readout_.bytes_read);
  w->Number((double)readout_.reads);
  w->Number((double)readout_.resident);
  w->Number((double)readout_.budget);
  w->EndArray();
}

void LazyMaps::Describe(JsonWriter* w, int heads, int bands) const {
  const LazyCacheStats st = Stats(heads, bands);
  w->BeginObject();
  w->Key("name");
  w->String(name_);
  w->Key("budget");
  w->Number((double)st.budget);
  w->Key("resident_bytes");
  w->Number((double)st.resident);
  w->Key("max_resident_bytes");
  w->Number((double)max_resident_);
  DescribeReadout(w);
  w->Key("max_memory_bytes");  // resident + reads in flight, the most seen
  w->Number((double)max_memory_);
  w->Key("loading_bytes");
  w->Number((double)st.loading);
  w->Key("pending");
  w->Number(st.pending);
  w->Key("reads");
  w->Number((double)st.reads);
  w->Key("bytes_read");
  w->Number((double)st.bytes_read);
  w->Key("installs");
  w->Number((double)installs_);
  w->Key("evictions");
  w->Number((double)evictions_);
  w->Key("packs");  // heads and bands turned into 16 bits (F16 files: halves; BF16 files: BF16)
  w->Number((double)packs_);
  w->Key("overviews_from_heads");  // files without overviews: pooled from a head in memory, not read again
  w->Number((double)overviews_from_heads_);
  w->Key("stats_stored");  // heads whose statistics came from the file (read once the grid asked)
  w->Number(stats_stored_);
  w->Key("stats_refused");  // ... whose stored statistics were impossible
  w->Number(stats_refused_);
  w->Key("stats_pooled");  // files without overviews: computed as a head was pooled
  w->Number(stats_pooled_);
  w->Key("packs_ahead");  // ... of them packed ahead of need, in slices (LazyPackAheadMs)
  w->Number((double)packs_ahead_);
  w->Key("pack_slices");  // the slices they took
  w->Number((double)pack_slices_);
  w->Key("longest_pack_slice_ms");  // the longest slice of converting
  w->Number(longest_pack_slice_ms_);
  w->Key("longest_pack_alloc_ms");  // the longest allocation of a pack's 16 bits (a call of its own)
  w->Number(longest_pack_alloc_ms_);
  w->Key("packs_finished_at_once");  // packs ahead whose last rows were packed at once (room was needed first)
  w->Number((double)packs_finished_at_once_);
  w->Key("packs_dropped");  // packs ahead given up: the head was drawn again or changed
  w->Number((double)packs_dropped_);
  w->Key("packing_ahead_bytes");  // its 16 bits, held beside the floats until it is done
  w->Number((double)AheadBytes());
  w->Key("packing_ahead");  // rows of a head converted so far, of its rows (0 0: none under way)
  w->BeginArray();
  w->Number((double)ahead_.done);
  w->Number((double)ahead_.rows);
  w->EndArray();
  w->Key("unpacks");  // ... and widened again for a view, with no read
  w->Number((double)unpacks_);
  w->Key("packed");  // heads and bands held in 16 bits now
  w->Number(st.packed);
  w->Key("overviews");
  w->Number(st.overviews);
  w->Key("screens");  // screen copies in memory
  w->Number(st.screens);
  w->Key("thumbs");  // stored thumbnails in memory
  w->Number(st.thumbs);
  w->Key("heads");  // whole heads in memory
  w->Number(heads);
  w->Key("bands");
  w->Number(bands);
  w->Key("wakes");  // frames WantsFrame asked for: a failed read rested, a read was lost, or one came in undrawn
  w->Number((double)wakes_);
  w->Key("lost");  // tickets of reads the file did not know any more (expected 0)
  w->Number((double)lost_);
  w->Key("error");
  w->String(last_error_);
  w->EndObject();
}

// ---- the app's side ------------------------------------------------------------------------------

void LazyWantRows(AppState* s, const AttentionMap& map, int row0, int row1) {
  Example& ex = s->Current();
  if (!ex.lazy) return;
  const int i = (int)(&map - ex.maps.data());
  if (i < 0 || i >= (int)ex.maps.size()) return;
  ex.lazy->WantRows(ex.lazy_set, i, row0, row1);
}

bool LazyArriving(AppState* s, int map, const MatrixRM** head, int64_t* rows, uint64_t* key) {
  Example& ex = s->Current();
  if (!ex.lazy || map < 0 || map >= (int)ex.maps.size()) return false;
  return ex.lazy->Arriving(ex.lazy_set, map, head, rows, key);
}

uint64_t LazyInstalledBy(AppState* s, int map) {
  Example& ex = s->Current();
  if (!ex.lazy || map < 0 || map >= (int)ex.maps.size()) return 0;
  return ex.lazy->InstalledBy(ex.lazy_set, map);
}

const AttentionMap* LazyOverview(AppState* s, int map) {
  Example& ex = s->Current();
  if (!ex.lazy || map < 0 || map >= (int)ex.maps.size()) return nullptr;
  return ex.lazy->Overview(ex.lazy_set, map);
}

const AttentionMap* LazyThumbnail(AppState* s, int map, float px, bool* thumb) {
  Example& ex = s->Current();
  if (thumb) *thumb = false;
  if (!ex.lazy || map < 0 || map >= (int)ex.maps.size()) return nullptr;
  return ex.lazy->Thumbnail(ex.lazy_set, map, px, thumb);
}

bool LazyStoresOverviews(AppState* s) {
  const Example& ex = s->Current();
  return ex.lazy && ex.lazy->file().index().sets[(size_t)ex.lazy_set].Has(LazyPool::Overview);
}

const AttentionMap* LazyScreen(AppState* s, int map, bool* partial) {
  Example& ex = s->Current();
  if (partial) *partial = false;
  if (!ex.lazy || map < 0 || map >= (int)ex.maps.size()) return nullptr;
  return ex.lazy->Screen(ex.lazy_set, map, partial);
}

namespace {

std::vector<LazyMaps*> OpenFiles(AppState* s) {
  std::vector<LazyMaps*> files;
  for (Example& ex : s->examples)
    if (ex.lazy && std::find(files.begin(), files.end(), ex.lazy.get()) == files.end()) files.push_back(ex.lazy.get());
  return files;
}

}  // namespace

void PumpLazyMaps(AppState* s) {
  // 3 ms a frame: the browser decodes between frames too (WorkLazyMaps, as reads end), so a frame
  // stays short however slow the renderer is. The grid's statistics and the uploads get the rest of
  // the frame's 6 ms (AppState::upload_deadline). Packing ahead gets what the reads left of the 3 ms,
  // at most LazyPackAheadMs (the page's idle time gives it more: App::Idle).
  const auto t0 = std::chrono::steady_clock::now();
  (void)WorkLazyMaps(s, 3.0, &s->frame);
  const double ahead_ms = LazyPackAheadMs();
  if (!(ahead_ms > 0)) return;
  const auto now = std::chrono::steady_clock::now();
  const auto until =
      std::min(t0 + std::chrono::microseconds(3000), now + std::chrono::microseconds((int64_t)(ahead_ms * 1000)));
  (void)PackAheadLazyMaps(s, until);  // (in the frame's pump_ms)
}

bool PackAheadLazyMaps(AppState* s, std::chrono::steady_clock::time_point until) {
  if (!(LazyPackAheadMs() > 0)) return false;
  bool left = false;
  for (LazyMaps* f : OpenFiles(s)) left = f->PackAhead(s, until) || left;
  return left;
}

void RequestLazyMaps(AppState* s) {
  Example& cur = s->Current();
  // Views other than the grid and the heatmap (which say what they draw) need the whole map.
  if (cur.lazy && !s->ActiveView().DrawsLazyMaps()) {
    const AttentionMap& m = s->CurrentMap();
    cur.lazy->WantRows(cur.lazy_set, (int)(&m - cur.maps.data()), 0, m.Rows());
  }
  for (LazyMaps* f : OpenFiles(s)) f->Request(s);
}

bool WorkLazyMaps(AppState* s, double budget_ms, FrameStats* parts) {
  const std::vector<LazyMaps*> files = OpenFiles(s);
  bool busy = false;
  for (LazyMaps* f : files) busy = f->Work(s, budget_ms / (double)files.size(), parts) || busy;
  return busy;
}

bool LazyWantsFrame(AppState* s) {
  bool wants = false;
  for (LazyMaps* f : OpenFiles(s)) wants = f->WantsFrame() || wants;
  return wants;
}

bool LazyWaiting(AppState* s) {
  return s->Current().lazy && !s->CurrentMap().Complete();
}

bool LazyReading(AppState* s, int map) {
  Example& ex = s->Current();
  return ex.lazy && map >= 0 && map < (int)ex.maps.size() && ex.lazy->Reading(ex.lazy_set, map);
}

bool LazyCurrentBeingRead(AppState* s) {
  return LazyWaiting(s) && LazyReading(s, s->current_map);
}

bool LazyKept(AppState* s, int map, int64_t row0, int64_t row1) {
  Example& ex = s->Current();
  return ex.lazy && map >= 0 && map < (int)ex.maps.size() && ex.lazy->Kept(ex.lazy_set, map, row0, row1);
}

namespace {

// Whole heads and bands held as floats by every set of the current example's file.
void CountHeld(AppState* s, int* heads, int* bands) {
  *heads = *bands = 0;
  const Example& ex = s->Current();
  for (const Example& e : s->examples) {
    if (e.lazy != ex.lazy) continue;
    for (const AttentionMap& m : e.maps) {
      *heads += m.weights.size() && m.Complete();
      *bands += m.weights.size() && !m.Complete();
    }
  }
}

}  // namespace

void DescribeLazy(AppState* s, JsonWriter* w) {
  DescribeLazyCurrent(s, w);
  w->Key("lazy");
  Example& ex = s->Current();
  if (!ex.lazy) {
    w->Null();
    return;
  }
  int heads, bands;
  CountHeld(s, &heads, &bands);
  ex.lazy->Describe(w, heads, bands);
}

bool LazyReadoutDue(AppState* s) {
  LazyCacheStats now;
  const std::chrono::duration<double> since = std::chrono::steady_clock::now() - s->frame.refreshed_at;
  if (since.count() < FrameStats::RefreshEvery(LazyCurrentBeingRead(s)) || !LazyCacheStatsOf(s, &now)) return false;
  if (!s->Current().lazy->ReadoutStale(now)) return false;
  s->frame.refresh_asked = true;  // the frame asked for refreshes, whatever ImGui's clock says
  return true;
}

bool LazyCacheStatsOf(AppState* s, LazyCacheStats* out) {
  Example& ex = s->Current();
  if (!ex.lazy) return false;
  int heads, bands;
  CountHeld(s, &heads, &bands);
  *out = ex.lazy->Stats(heads, bands);
  return true;
}

void DescribeLazyCurrent(AppState* s, JsonWriter* w) {
  // The current map's rows in memory now (describe().heatmaps says what the last frame drew).
  const AttentionMap& m = s->CurrentMap();
  w->Key("lazy_current");
  if (!s->Current().lazy) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Key("map");
  w->Number(s->current_map);
  w->Key("held");
  w->BeginArray(true);
  w->Number(m.row_offset);
  w->Number(m.row_offset + (double)m.weights.rows());
  w->EndArray();
  w->Key("reading");  // rows of it are being read
  w->Bool(LazyReading(s, s->current_map));
  w->EndObject();
}

}  // namespace attnviz
