#include "io/attention_loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/file_util.h"
#include "io/safetensors.h"

namespace attnviz {

using attention_file_detail::BeyondFloat32;
using attention_file_detail::CheckHeadWeights;
using attention_file_detail::IndexTokens;
using attention_file_detail::Where;

Status AttentionLoader::Begin(uint64_t total_bytes, const AttentionFileLimits& limits) {
  const bool forward = forward_raw_;
  *this = AttentionLoader();
  forward_raw_ = forward;
  limits_ = limits;
  total_ = total_bytes;
  if (total_bytes == 0) return Fail(Status::Error("attention: the file is empty"));
  return Status::Ok();
}

Status AttentionLoader::BeginHandover(const AttentionFileLimits& limits) {
  *this = AttentionLoader();
  limits_ = limits;
  total_ = UINT64_MAX;  // known at the end
  mode_ = Mode::Handover;
  const Status st = handover_.Begin(limits);
  return st ? st : Fail(st);
}

size_t AttentionLoader::HandoverRoom(uint8_t** dst) {
  return mode_ == Mode::Handover ? handover_.Room(dst) : 0;
}

Status AttentionLoader::HandoverAdvance(size_t n) {
  if (mode_ != Mode::Handover) return mode_ == Mode::Failed ? error_ : Fail(Status::Error("not a handover"));
  const Status st = handover_.Advance(n);
  received_ += n;
  return st ? st : Fail(st);
}

const float* AttentionLoader::StreamedHead(int64_t i) const {
  if (mode_ != Mode::Stream || i < 0 || i >= (int64_t)file_.layers.size() * heads_per_layer_) return nullptr;
  if (!keep_) return nullptr;
  return file_.layers[(size_t)(i / heads_per_layer_)].heads[(size_t)(i % heads_per_layer_)].weights.data();
}

std::string AttentionLoader::StreamHandoverHead() {
  if (mode_ != Mode::Stream) return "";
  AttentionDocument doc;
  WrapStream(&doc);  // moves the matrices (their buffers keep their addresses) ...
  const std::string head = HandoverHeadWithShape(doc, nq_, nk_);
  file_ = std::move(doc.sets[0].data);  // ... and back
  file_.warnings.clear();
  return head;
}

// What ParseAttentionNpzArrays and WrapSingle make of a bare .npy (warnings as far as known).
void AttentionLoader::WrapStream(AttentionDocument* out) {
  AttentionFile& f = file_;
  IndexTokens(nk_, &f.source_tokens);
  IndexTokens(nq_, &f.target_tokens);
  f.warnings.push_back("no source tokens given; using indices");
  f.warnings.push_back("no target tokens given; using indices");
  AttentionDocument doc;
  doc.version = 1;
  doc.warnings = std::move(f.warnings);
  f.warnings.clear();
  AttentionSet set;
  set.name = "attention";
  set.kind = f.source_tokens == f.target_tokens ? AttentionKind::Self : AttentionKind::Cross;
  set.data = std::move(f);
  doc.sets.push_back(std::move(set));
  *out = std::move(doc);
  file_ = AttentionFile();
}

Status AttentionLoader::Fail(Status st) {
  if (mode_ != Mode::Failed) {
    mode_ = Mode::Failed;
    error_ = st;
    file_ = AttentionFile();
    handover_ = HandoverReceiver();
    std::vector<uint8_t>().swap(buffer_);
  }
  return error_;
}

uint64_t AttentionLoader::MemoryBytes() const {
  uint64_t b = buffer_.capacity() + handover_.MemoryBytes() + (uint64_t)scratch_.size() * sizeof(float);
  // Kept heads as they will be (each gets its memory when its floats arrive).
  const uint64_t kept = mode_ == Mode::Stream && keep_ ? (uint64_t)head_size_ : 0;
  for (const AttentionFile::Layer& l : file_.layers)
    for (const AttentionFile::Head& h : l.heads) b += std::max((uint64_t)h.weights.size(), kept) * sizeof(float);
  return b;
}

Status AttentionLoader::Feed(const uint8_t* data, size_t n) {
  if (mode_ == Mode::Failed) return error_;
  if (n > total_ - received_)
    return Fail(Status::Error("attention: the file grew while it was read (more than its " + std::to_string(total_) +
                              " bytes)"));
  received_ += n;
  if (mode_ == Mode::Stream) return StreamBytes(data, n);
  if (mode_ == Mode::Handover) {
    const Status st = handover_.Feed(data, n);
    return st ? st : Fail(st);
  }
  if (mode_ == Mode::Header) {
    buffer_.insert(buffer_.end(), data, data + n);
    const bool npy = buffer_.size() < 6 || std::memcmp(buffer_.data(), "\x93NUMPY", 6) == 0;
    const bool complete = NpyHeaderComplete(buffer_.data(), buffer_.size());
    if (npy && !complete && received_ < total_) return Status::Ok();  // wait for the rest of the header
    if (npy && complete) {
      const Status st = StartStream();  // streams what came after the header, or leaves Header mode as it is
      if (!st) return Fail(st);
      if (mode_ != Mode::Header) return mode_ == Mode::Failed ? error_ : Status::Ok();
    }
    // Not a streamable .npy: the whole file, then the usual reader.
    const uint64_t limit = std::min<uint64_t>(kMaxFileBytes, DefaultMemoryBudget());
    // An .npz (np.savez) that big is read lazily (io/lazy_npz.cpp) when picked or served with Range
    // requests; here it came another way (a server without them): the way out first, where the
    // status line shows it.
    const bool zip = buffer_.size() >= 2 && buffer_[0] == 'P' && buffer_[1] == 'K';
    if (total_ > limit && zip)
      return Fail(Status::Error("the file is " + FormatApproxByteSize(total_) + ", over the limit of " +
                                FormatByteSize(limit) +
                                ": an .npz saved with np.savez is read a head at a time when picked, or served with "
                                "Range requests (scripts/serve.mjs, python3 -m attnviz serve)"));
    if (total_ > limit)
      return Fail(Status::Error("the file is " + std::to_string(total_) + " bytes, over the limit of " +
                                FormatByteSize(limit) + "; refusing to read it"));
    if (!TryAllocate((size_t)total_))
      return Fail(Status::Error("out of memory for a file of " + std::to_string(total_) + " bytes"));
    buffer_.reserve((size_t)total_);
    mode_ = Mode::Buffer;
    return Status::Ok();
  }
  buffer_.insert(buffer_.end(), data, data + n);  // Buffer
  return Status::Ok();
}

Status AttentionLoader::StartStream() {
  NpyHeader& h = npy_;
  Status st = ParseNpyHeader(buffer_.data(), buffer_.size(), &h);
  if (!st) return st;  // the message a whole read gives
  const uint64_t available = total_ - h.data_offset, need = (uint64_t)h.numel * (uint64_t)h.itemsize;
  if (h.data_offset > total_ || need > available)
    return Status::Error("npy: truncated data: shape " + std::to_string(h.numel) + " elements x " +
                         std::to_string(h.itemsize) + " bytes needs " + std::to_string(need) + " bytes, file has " +
                         std::to_string(h.data_offset > total_ ? 0 : available));
  if (need < available)
    return Status::Error("npy: " + std::to_string(available - need) +
                         " unexpected trailing bytes after the data (shape x dtype size mismatch)");
  // Only the plain case streams; anything unusual goes through the whole-file reader and its messages.
  int big_dims = 0;
  for (int64_t d : h.shape) big_dims += d > 1;
  const size_t nd = h.shape.size();
  if (!DTypeIsNumeric(h.dtype) || (h.fortran_order && big_dims >= 2) || nd < 2 || nd > 4) return Status::Ok();
  const int64_t L = nd == 4 ? h.shape[0] : 1, H = nd >= 3 ? h.shape[nd - 3] : 1;
  const int64_t nq = h.shape[nd - 2], nk = h.shape[nd - 1];
  if (L < 1 || H < 1 || nq < 1 || nk < 1 || L > limits_.max_layers || H > limits_.max_heads ||
      nq > limits_.max_tokens || nk > limits_.max_tokens || h.numel > limits_.max_values)
    return Status::Ok();
  keep_ = !(forward_raw_ && h.dtype == DType::Float32 && !h.byte_swap);
  MemoryBudget budget;
  if (!budget.TryCharge((uint64_t)(keep_ ? h.numel : nq * nk) * sizeof(float))) return Status::Ok();
  if (!keep_) {
    if (!TryAllocate((size_t)(nq * nk) * sizeof(float))) return Status::Ok();
    scratch_.resize((Eigen::Index)nq, (Eigen::Index)nk);
  }
  // All the heads allocated and freed once: the WASM heap grows once, and a file that cannot fit
  // goes to the whole-file reader (its message) now. Each head gets its memory when its first
  // floats arrive (DecodeRun): allocating 144 heads at once took 50-140 ms of the page's thread,
  // each fresh page zeroed on first touch; spread over the reads it costs nothing extra.
  if (keep_ && !TryAllocate((size_t)h.numel * sizeof(float))) return Status::Ok();
  file_.layers.assign((size_t)L, AttentionFile::Layer());
  for (int64_t l = 0; l < L; ++l) {
    AttentionFile::Layer& layer = file_.layers[(size_t)l];
    layer.name = "layer " + std::to_string(l);
    layer.heads.resize((size_t)H);
    for (int64_t k = 0; k < H; ++k) layer.heads[(size_t)k].name = "head " + std::to_string(k);
  }
  nq_ = nq;
  nk_ = nk;
  head_size_ = nq * nk;
  heads_per_layer_ = H;
  mode_ = Mode::Stream;
  // Bytes past the header that came with it are the first data.
  std::vector<uint8_t> first(buffer_.begin() + (std::ptrdiff_t)std::min(buffer_.size(), h.data_offset), buffer_.end());
  std::vector<uint8_t>().swap(buffer_);
  return StreamBytes(first.data(), first.size());
}

Status AttentionLoader::StreamBytes(const uint8_t* data, size_t n) {
  const int item = (int)npy_.itemsize;
  if (carry_n_) {  // complete the element split across pieces
    const size_t take = std::min<size_t>(n, (size_t)(item - carry_n_));
    if (take) std::memcpy(carry_ + carry_n_, data, take);
    carry_n_ += (int)take;
    data += take;
    n -= take;
    if (carry_n_ < item) return Status::Ok();
    carry_n_ = 0;
    const Status st = DecodeRun(carry_, 1);
    if (!st) return Fail(st);
  }
  const int64_t whole = (int64_t)(n / (size_t)item);
  const Status st = DecodeRun(data, whole);
  if (!st) return Fail(st);
  carry_n_ = (int)(n - (size_t)whole * (size_t)item);
  if (carry_n_) std::memcpy(carry_, data + (size_t)whole * (size_t)item, (size_t)carry_n_);
  return Status::Ok();
}

Status AttentionLoader::DecodeRun(const uint8_t* src, int64_t n) {
  const int item = (int)npy_.itemsize;
  uint8_t swapped[4096];
  while (n > 0) {
    const int64_t head = next_ / head_size_, in_head = next_ % head_size_;
    AttentionFile::Head& h = file_.layers[(size_t)(head / heads_per_layer_)].heads[(size_t)(head % heads_per_layer_)];
    int64_t k = std::min(n, head_size_ - in_head);
    const uint8_t* p = src;
    if (npy_.byte_swap) {  // big-endian: a small run at a time, swapped here
      k = std::min<int64_t>(k, (int64_t)sizeof(swapped) / item);
      for (int64_t e = 0; e < k; ++e)
        for (int b = 0; b < item; ++b) swapped[e * item + b] = src[e * item + (item - 1 - b)];
      p = swapped;
    }
    MatrixRM& m = keep_ ? h.weights : scratch_;
    if (m.size() == 0) {  // a kept head's first floats: its memory now
      if (!TryAllocate((size_t)head_size_ * sizeof(float))) return Status::Error("npy: out of memory for the weights");
      m.resize((Eigen::Index)nq_, (Eigen::Index)nk_);
    }
    float* dst = m.data() + in_head;
    if (npy_.dtype == DType::Float32) {
      std::memcpy(dst, p, (size_t)k * 4);
    } else if (npy_.dtype == DType::Float16) {
      DecodeFloats(StDType::F16, p, (size_t)k, dst);
    } else {
      for (int64_t e = 0; e < k; ++e) {
        const double x = ElementAsDouble(npy_.dtype, p + e * item);
        if (std::isfinite(x) && std::fabs(x) > 3.4028234663852886e38) {
          const int64_t i = in_head + e;
          return BeyondFloat32(x,
                               "attention: 'attention' layer " + std::to_string(head / heads_per_layer_) + " head " +
                                   std::to_string(head % heads_per_layer_),
                               i / nk_, i % nk_);
        }
        dst[e] = (float)x;
      }
    }
    src += (size_t)k * (size_t)item;
    n -= k;
    next_ += k;
    if (in_head + k == head_size_) {  // the head is complete: check it now
      bool clamped = false;
      const Status st =
          CheckHeadWeights(Where(file_, (size_t)(head / heads_per_layer_), (size_t)(head % heads_per_layer_)), &m,
                           limits_, &row_sums_, &clamped);
      if (!st) return st;
      if (clamped) clamped_.push_back(head);
    }
  }
  return Status::Ok();
}

Status AttentionLoader::Finish(AttentionDocument* out) {
  if (mode_ == Mode::Failed) return error_;
  if (mode_ == Mode::Handover) {
    const Status st = handover_.Finish(out);
    mode_ = Mode::Header;
    return st ? st : Fail(st);
  }
  if (received_ != total_)
    return Fail(Status::Error("the file ended after " + std::to_string(received_) + " of " + std::to_string(total_) +
                              " bytes"));
  if (mode_ != Mode::Stream) {  // Header (a file too short to tell) or Buffer
    const Status st = LoadAttentionDocument(buffer_.data(), buffer_.size(), out, limits_);
    std::vector<uint8_t>().swap(buffer_);
    return st;
  }
  std::vector<std::string> row_sums;
  row_sums_.Finish(&row_sums);
  WrapStream(out);
  out->warnings.insert(out->warnings.end(), row_sums.begin(), row_sums.end());
  mode_ = Mode::Header;
  return Status::Ok();
}

}  // namespace attnviz
