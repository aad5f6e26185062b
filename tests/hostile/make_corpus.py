#!/usr/bin/env python3
"""The hostile-file regression corpus (docs/SECURITY.md).

Every case is one hostile input plus what attnviz must do with it: the command, the exit code
and the exact message (a substring of stderr or stdout), and the time and memory it may take.

  make_corpus.py --small DIR   writes the small cases (committed in tests/data/hostile/) and
                               DIR/cases.json, the manifest of every case
  make_corpus.py --bombs DIR   writes the large cases (bombs: hundreds of MB once inflated, or
                               files of 2-260 MB) into a build folder; they are never committed.
                               Files already there from the same version of this script are kept.

Python 3 standard library only. tests/hostile/run_corpus.py runs the manifest.
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import zlib

MiB = 1 << 20
GiB = 1 << 30

# ---------------------------------------------------------------------------------------------
# builders: .npy, .npz (hand-made zip, so every field can lie), deflate bombs
# ---------------------------------------------------------------------------------------------


def npy_header(descr, shape, fortran=False, version=1):
    shape_text = "(" + "".join(f"{d}, " for d in shape) + ")" if len(shape) != 1 else f"({shape[0]},)"
    if not shape:
        shape_text = "()"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shape_text)
    prefix = 10 if version == 1 else 12
    pad = (64 - (prefix + len(d) + 1) % 64) % 64
    h = (d + " " * pad + "\n").encode("latin-1")
    magic = b"\x93NUMPY" + bytes([version, 0])
    return magic + (struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))) + h


def npy(descr, shape, data, fortran=False):
    return npy_header(descr, shape, fortran) + data


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def f16(values):
    return struct.pack("<%de" % len(values), *values)


def u_strings(strings, width=None):
    width = width or max(1, max(len(s) for s in strings))
    out = b""
    for s in strings:
        cps = [ord(c) for c in s] + [0] * (width - len(s))
        out += struct.pack("<%dI" % width, *cps)
    return f"<U{width}", out


def tokens_npy(strings):
    descr, data = u_strings(strings)
    return npy(descr, [len(strings)], data)


class Member:
    """One zip member; every header field can be made to lie."""

    def __init__(self, name, raw=None, method=8, body=None, crc=None, size=None):
        self.name = name.encode("utf-8") if isinstance(name, str) else name
        self.method = method
        if body is None:
            body = raw if method == 0 else deflate(raw)
        self.body = body
        self.crc = zlib.crc32(raw) if crc is None else crc
        self.size = len(raw) if size is None else size
        self.local_name = None  # bytes: a different name in the local header
        self.local_crc = None
        self.shares_local_of = None  # index of the member whose local header this entry reuses
        self.flags = 0


def deflate(raw):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(raw) + c.flush()


def zip_bytes(members, zip64=False, eocd_count=None, disk=0):
    out = bytearray()
    offsets = []
    for m in members:
        offsets.append(len(out))
        if m.shares_local_of is not None:
            continue
        lname = m.local_name if m.local_name is not None else m.name
        crc = m.local_crc if m.local_crc is not None else m.crc
        if zip64:
            extra = struct.pack("<HHQQ", 1, 16, m.size, len(m.body))
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, m.flags, m.method, 0, 0x21, crc, 0xFFFFFFFF,
                               0xFFFFFFFF, len(lname), len(extra)) + lname + extra
        else:
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, m.flags, m.method, 0, 0x21, crc, len(m.body),
                               m.size, len(lname), 0) + lname
        out += m.body
    cd = len(out)
    for i, m in enumerate(members):
        off = offsets[m.shares_local_of] if m.shares_local_of is not None else offsets[i]
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, m.size, len(m.body), off)
            out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, m.flags, m.method, 0, 0x21, m.crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(m.name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + m.name + extra
        else:
            out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, m.flags, m.method, 0, 0x21, m.crc,
                               len(m.body), m.size, len(m.name), 0, 0, 0, 0, 0, off) + m.name
    cd_size = len(out) - cd
    n = len(members) if eocd_count is None else eocd_count
    if zip64:
        rec = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd)
        out += struct.pack("<IIQI", 0x07064B50, 0, rec, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, disk, disk, n & 0xFFFF, n & 0xFFFF, cd_size, cd, 0)
    return bytes(out)


def repeated_deflate(prefix, unit, total):
    """A raw deflate stream of prefix + unit repeated up to `total` bytes, built from one
    full-flushed 1 MiB segment repeated (each segment only refers back into itself), so a
    gigabyte costs a megabyte and no time. Returns (stream, crc32 of the whole content)."""
    chunk = MiB
    assert len(prefix) < chunk and total % chunk == 0 and chunk % len(unit) == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = prefix + (unit * (chunk // len(unit)))[: chunk - len(prefix)]
    head = c.compress(first) + c.flush(zlib.Z_FULL_FLUSH)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = unit * (chunk // len(unit))
    seg = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    n = total // chunk
    crc = zlib.crc32(first)
    for _ in range(n - 1):
        crc = zlib.crc32(block, crc)
    return head + seg * (n - 1) + b"\x03\x00", crc


def npz_bomb_member(name, descr, shape, unit, fortran=False):
    """A zip member holding an .npy of `shape` whose data is `unit` repeated: a deflate bomb of
    about 1 KB per MiB. The data size must be a whole number of MiB."""
    hdr = npy_header(descr, shape, fortran)
    numel = 1
    for d in shape:
        numel *= d
    data_bytes = numel * len(unit)
    # repeated_deflate(hdr, ...) holds hdr + (data_bytes - len(hdr)) bytes of data: add the rest
    stream, crc = repeated_deflate(hdr, unit, data_bytes)
    tail = unit * (len(hdr) // len(unit))
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = stream[:-2] + c.compress(tail) + c.flush()
    return Member(name, raw=b"", body=stream, crc=zlib.crc32(tail, crc), size=len(hdr) + data_bytes)


# ---------------------------------------------------------------------------------------------
# the cases
# ---------------------------------------------------------------------------------------------

CASES = []  # dicts written to cases.json


def case(name, data, cmd="inspect", exit=1, expect=None, stdout=None, forbid=None, open_expect="same",
         seconds=5.0, rss_mb=None, args=None, bomb=False, ext=".npz", pending=None, open_pending=None, note="",
         wasm_open_expect="same"):
    """Registers a case. expect: substring of stderr (exit 1) or stdout; open_expect: substring of
    the viewer's error ("same" = expect, None = the file opens); rss_mb: max RSS (default budget +
    100 MB, i.e. 1124); pending: why this row still fails (the file and function that own the fix)."""
    fname = name + ext
    c = {"name": name, "file": fname, "bomb": bomb, "cmd": cmd, "args": args or [], "exit": exit,
         "stderr": expect if exit != 0 else None, "stdout": stdout if exit != 0 else (stdout or expect),
         "forbid_stdout": forbid or [], "seconds": seconds, "rss_mb": rss_mb or 1124, "note": note}
    if open_expect == "same":
        open_expect = expect if exit != 0 else None
    c["open"] = {"exit": 1 if open_expect else 0, "message": open_expect}
    if wasm_open_expect != "same":  # the page's open path differs (it cannot list an .npz in place)
        c["open_wasm"] = {"exit": 1 if wasm_open_expect else 0, "message": wasm_open_expect}
    if pending:
        c["pending"] = pending
    if open_pending or pending:
        c["open"]["pending"] = open_pending or pending
    CASES.append((c, data))


def safetensors(tensors, data, metadata=None, length=None):
    """A safetensors file: tensors = {name: (dtype, shape, [begin, end])} in that order, then data.
    length: the 8-byte header length to write instead of the true one (a lie)."""
    h = {k: {"dtype": d, "shape": sh, "data_offsets": off} for k, (d, sh, off) in tensors.items()}
    if metadata is not None:
        h["__metadata__"] = metadata
    text = json.dumps(h, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def st_attention(layers=2, heads=2, n=4, lies=None, extra=b""):
    """The attnviz layout, F16, no overviews: attention.0.l [heads, n, n], one-hot rows; lies: a
    function that may change the tensors' header entries before writing; extra: bytes after the
    heads' (for tensors the lies add)."""
    tokens = [f"t{i}" for i in range(n)]
    sets = json.dumps([{"name": "attention", "kind": "self", "tokens": tokens, "layers": layers}])
    tensors, at, data = {}, 0, b""
    head = b"".join(struct.pack("<%de" % n, *[1.0 if c == r else 0.0 for c in range(n)]) for r in range(n))
    for l in range(layers):
        size = heads * len(head)
        tensors[f"attention.0.{l}"] = ("F16", [heads, n, n], [at, at + size])
        data += head * heads
        at += size
    if lies:
        lies(tensors)
    data += extra
    return safetensors(tensors, data, {"format": "attnviz", "version": "2", "sets": sets})


def valid_attention_npz(extra=None, attention=None):
    ms = [Member("attention.npy", npy("<f4", [1, 1, 2, 2], f32(attention or [0.5, 0.5, 1.0, 0.0]))),
          Member("tokens.npy", tokens_npy(["a", "b"]))]
    return zip_bytes(ms + (extra or []))


def small_cases():
    # -- the table: rows whose inputs are small ------------------------------------------------
    case("tokens_terminal_escape",
         json.dumps({"tokens": ["ok", "\x1b]0;pwned\x07\x1b[2J", "\u202eexe.txt"],
                     "weights": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}).encode(),
         exit=0, stdout="\\x1b]0;pwned\\x07\\x1b[2J", forbid=["\x1b", "\x07", "\u202e"], ext=".json",
         note="tokens holding ESC]0;...BEL ESC[2J are printed escaped, not run")
    # -- attention sets (format version 2) and BertViz data --------------------------------------
    many = {"version": 2, "sets": [{"tokens": ["a"], "weights": [[1]]}] * 2000}
    case("v2_2000_sets", json.dumps(many, separators=(",", ":")).encode(), ext=".json", expect="too many sets",
         note="more sets than the limit")
    case("v2_bad_kind", b'{"version": 2, "sets": [{"tokens": ["a"], "kind": "sideways", "weights": [[1]]}]}',
         ext=".json", expect="causal", note="a set kind that does not exist: the message lists self, causal, cross")
    case("v2_weights_5d", b'{"version": 2, "sets": [{"tokens": ["a"], "weights": [[[[[1]]]]]}]}', ext=".json",
         expect="must be nested", note="weights nested deeper than [layers][heads][n_q][n_k]")
    case("bertviz_text_lie", b'{"attention": [{"name": "Cross", "attn": [[[[0.5, 0.5]]]], "left_text": ["x", "y"],'
         b' "right_text": ["a", "b"]}]}', ext=".json", expect="set 'Cross'",
         note="BertViz data whose left_text does not match its rows: the message names the set")
    case("weight_1e300", b'{"tokens": ["a", "b"], "weights": [[1e300, 0], [0, 1]]}', expect="float32 range",
         ext=".json", note="a finite weight too large for float32")
    case("inspect_attention_invalid", valid_attention_npz(attention=[0.5, 0.5, -1.0, 2.0]),
         expect="not a valid attention file: attention: layer 0 ('layer 0') head 0 ('head 0') has a negative weight -1",
         open_expect="has a negative weight -1", note="inspect of an NPZ whose attention fails validation: exit 1 + reason")
    raw = npy("<f4", [1, 1, 1, 2], f32([0.5, 0.5]))
    longer = Member("attention.npy", raw)
    longer.size = len(raw) - 8  # the stream holds 8 bytes more than declared
    case("zip_stream_longer_than_declared", zip_bytes([longer, Member("tokens.npy", tokens_npy(["a", "b"]))]),
         expect="the deflate stream inflates to more than the 128 bytes its header declares",
         note="message says which: longer than declared")
    # A stream that ends before its declared size, over 64 KiB: the inflater has grown its buffer
    # (zip.cpp InflateOutput) and, in the first case, moved it into the member at the declared size.
    ramp = npy("<f4", [1, 1, 160, 160], f32([(i % 97) / 97.0 for i in range(160 * 160)]))
    shorter = (("zip_stream_shorter_moved", len(ramp) + 65536), ("zip_stream_shorter_buffered", 3 * len(ramp)))
    for name, declared in shorter:
        short = Member("attention.npy", ramp, size=declared)
        case(name, zip_bytes([short, Member("tokens.npy", tokens_npy(["a", "b"]))]),
             expect=f"zip: member 'attention.npy' inflated to {len(ramp)} bytes, header says {declared}",
             note="message says which: shorter than declared (after the inflater's last growth step, or before it)")
    layered = {"tokens": ["a", "b"], "layers": [{"name": "wide", "heads": [[[1, 0], [0, 1]]] * 1024}]}
    layered["layers"] += [{"name": f"l{i}", "heads": [[[1, 0], [0, 1]]]} for i in range(1023)]
    case("layers_1x1024_plus_1023x1", json.dumps(layered, separators=(",", ":")).encode(), exit=0,
         stdout="attention: 1024 layers, 2047 heads in total", ext=".json", open_expect=None,
         note="valid: the viewer must not pad layers to the largest head count")

    # -- classics: truncation, magic, dtype and shape lies, overflow --------------------------
    good = npy("<f4", [2, 2], f32([0.5, 0.5, 1.0, 0.0]))
    case("npy_truncated_data", good[:-3], expect="npy: truncated data", ext=".npy")
    case("npy_truncated_header", good[:40], expect="npy: truncated file (header)", ext=".npy")
    case("npy_bad_magic", b"\x93NUMPX" + good[6:], expect="unrecognised file", ext=".npy")
    case("npy_version_9", b"\x93NUMPY\x09\x00" + good[8:], expect="npy: unsupported format version 9.0", ext=".npy")
    case("npy_header_length_lie", good[:8] + struct.pack("<H", 60000) + good[10:],
         expect="npy: truncated file (header)", ext=".npy")
    case("npy_dtype_lie", npy("<f8", [2, 2], f32([0.5, 0.5, 1.0, 0.0])), expect="npy: truncated data", ext=".npy")
    case("npy_shape_lie", npy("<f4", [2, 3], f32([0.5, 0.5, 1.0, 0.0])), expect="npy: truncated data", ext=".npy")
    case("npy_trailing_bytes", good + b"\0" * 8, expect="unexpected trailing bytes", ext=".npy")
    case("npy_shape_overflow", npy("<f4", [2 ** 20, 2 ** 20, 2 ** 20], b""),
         expect="npy: shape has more than 2^31 elements", ext=".npy")
    case("npy_dim_over_2p31", npy("<f4", [2 ** 40], b""), expect="npy: dimension 1099511627776 is too large",
         ext=".npy")
    case("npy_dim_huge", npy("<f4", [10 ** 20], b""), expect="npy: malformed header: dimension too large", ext=".npy")
    # Headers of arrays too big to read whole (over 2^28 weights) on files that hold only the header:
    # read lazily (io/lazy_attention.h), refused from the header with the way out.
    lazy_shape = [64, 64, 8192, 8192]
    case("npy_lazy_shorter_than_its_array", npy("<f2", lazy_shape, b""),
         expect="npy: the file is 128 bytes, but its array needs 549755814016 (truncated?)", ext=".npy")
    case("npy_lazy_fortran_order", npy("<f4", lazy_shape, b"", fortran=True),
         expect="npy: the array is in Fortran order, which is read only whole", ext=".npy")
    case("npy_lazy_big_endian", npy(">f2", lazy_shape, b""), expect="npy: the array is big-endian", ext=".npy")
    case("npy_lazy_int64", npy("<i8", lazy_shape, b""),
         expect="npy: the array is int64; attention weights must be float16, float32 or float64", ext=".npy")
    case("npy_lazy_5dims", npy("<f2", [2] + lazy_shape, b""),
         expect="npy: the array must be [layers, heads, n_q, n_k]", ext=".npy")
    # An .npz whose stored attention member is too big to read whole: listed in place and read
    # lazily natively (io/lazy_npz.cpp); the page reads an .npz only whole, which refuses the shape.
    case("npz_lazy_member_shorter_than_its_array",
         zip_bytes([Member("attention.npy", npy("<f2", lazy_shape, b""), method=0),
                    Member("tokens.npy", tokens_npy(["a", "b"]), method=0)], zip64=True),
         expect="npz: 'attention': the member is 128 bytes, but its array needs 549755814016 (truncated?)",
         wasm_open_expect="npz: member 'attention.npy': npy: shape has more than 2^31 elements")
    case("npy_object_dtype", npy("|O", [2], b"\0" * 16), expect="object arrays", ext=".npy")
    case("npy_structured_dtype", b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) +
         b"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }".ljust(117) + b"\n" + b"\0" * 4,
         expect="structured dtypes", ext=".npy")
    case("npy_python_in_header", b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) +
         b"{'descr': __import__('os').system('echo pwned'), 'shape': (1,), }".ljust(117) + b"\n",
         expect="npy: malformed header: expected a quoted string", ext=".npy")
    case("npy_complex_dtype", npy("<c8", [1], b"\0" * 8), expect="unsupported dtype '<c8'", ext=".npy")
    case("npy_unicode_huge_itemsize", npy("<U99999999", [1], b""), expect="unsupported dtype '<U99999999'",
         ext=".npy")
    case("npy_fortran_wrong_rank", npy("<f4", [1, 2, 2, 1, 1], f32([0.5, 0.5, 1, 0]), fortran=True), exit=0,
         stdout="not an attention file: attention: 'attention' must have shape [layers, heads, n_q, n_k]",
         open_expect="must have shape [layers, heads, n_q, n_k]", ext=".npy",
         note="a bare .npy that is not attention: inspect lists it and says why (exit 0)")

    # -- NaN / Inf / negative ------------------------------------------------------------------
    case("npz_nan_weight", valid_attention_npz(attention=[0.5, float("nan"), 1.0, 0.0]),
         expect="has a non-finite weight at row 0, column 1")
    case("npz_inf_weight", valid_attention_npz(attention=[0.5, 0.5, float("inf"), 0.0]),
         expect="has a non-finite weight at row 1, column 0")
    case("npy_f16_nan_inf_subnormal", npy("<f2", [1, 1, 2, 2], f16([0.5, float("nan"), 2.0 ** -24, float("-inf")])),
         exit=0, stdout="has a non-finite weight at row 0, column 1", open_expect="has a non-finite weight at row 0, column 1",
         ext=".npy", note="half floats widened by core/half.h (stop 33): a NaN, a subnormal and -inf; the first bad one named")
    case("json_nan_literal", b'{"tokens": ["a"], "weights": [[NaN]]}', expect="NaN and Infinity are not valid JSON",
         ext=".json")
    case("json_null_weight", b'{"tokens": ["a"], "weights": [[null]]}', expect="must be an array of numbers",
         ext=".json")
    case("json_1e999", b'{"tokens": ["a"], "weights": [[1e999]]}', expect="number out of range", ext=".json")
    case("json_exponent_overflows_int", b'{"tokens": ["a", "b"], "weights": [[1e99999999999999999999, 0.5]]}',
         expect="number out of range", ext=".json",
         note="an exponent past any int: the fast path for short numbers gives way to strtod, which says inf")
    case("json_mantissa_past_2p53", b'{"tokens": ["a"], "weights": [[0.' + b"9" * 400 + b'e-400]]}', exit=0,
         ext=".json", open_expect=None,
         note="400 significant digits: too long for the fast path, read by strtod (a weight of 0)")

    # -- invalid UTF-8, deep nesting -----------------------------------------------------------
    case("json_invalid_utf8", b'{"tokens": ["\xff\xfe"], "weights": [[1]]}', expect="invalid UTF-8 in string",
         ext=".json")
    case("json_lone_surrogate", b'{"tokens": ["\\ud800"], "weights": [[1]]}', expect="high surrogate without",
         ext=".json")
    case("json_deep_nesting", b"[" * 10000 + b"]" * 10000, expect="nesting deeper than 256 levels", ext=".json")
    case("json_deep_objects", b'{"a":' * 5000 + b"1" + b"}" * 5000, expect="nesting deeper than 256 levels",
         ext=".json")
    bad_utf32 = struct.pack("<4I", 0xD800, ord("x"), ord("o"), ord("k"))  # a lone surrogate in a <U2 token
    case("npz_unicode_surrogate_token", zip_bytes([Member("attention.npy", npy("<f4", [2, 2], f32([1, 0, 0, 1]))),
                                                   Member("tokens.npy", npy("<U2", [2], bad_utf32))]),
         exit=0, stdout="tokens (2): \"\ufffdx\" \"ok\"", note="a UTF-32 surrogate becomes U+FFFD")

    # -- zip: magic, truncation, CRC, methods, lies --------------------------------------------
    z = valid_attention_npz()
    case("zip_truncated", z[: len(z) // 2], expect="zip: no end-of-central-directory record")
    case("zip_not_zip", b"PK" + b"\0" * 100, expect="zip: no end-of-central-directory record")
    bad_crc = Member("attention.npy", npy("<f4", [2, 2], f32([1, 0, 0, 1])))
    bad_crc.crc ^= 0xDEAD
    case("zip_crc_error", zip_bytes([bad_crc]), expect="CRC-32 mismatch in member 'attention.npy'")
    stored = Member("attention.npy", npy("<f4", [2, 2], f32([1, 0, 0, 1])), method=0)
    stored.method = 12
    case("zip_method_bzip2", zip_bytes([stored]), expect="uses compression method 12")
    enc = Member("attention.npy", npy("<f4", [2, 2], f32([1, 0, 0, 1])))
    enc.flags = 1
    case("zip_encrypted", zip_bytes([enc]), expect="is encrypted; not supported")
    case("zip_multi_disk", zip_bytes([Member("a.npy", good)], disk=1), expect="multi-disk archives")
    case("zip_count_lie", zip_bytes([Member("a.npy", good)], eocd_count=60000),
         expect="the central directory is too small for 60000 members")
    ratio = Member("attention.npy", good)
    ratio.size = 3 * GiB // 2
    case("zip_ratio_lie", zip_bytes([ratio]), expect="impossible compression ratio")
    renamed = Member("attention.npy", good)
    renamed.local_name = b"evil.npy"
    case("zip_local_name_differs", zip_bytes([renamed]),
         expect="names a different member than 'attention.npy' in the central directory")
    lied = Member("attention.npy", good)
    lied.local_crc = 0x12345678
    case("zip_local_crc_differs", zip_bytes([lied]), expect="disagree on the CRC or sizes")
    twice = [Member("attention.npy", good), Member("attention.npy", good)]
    twice[1].shares_local_of = 0
    case("zip_same_entry_twice", zip_bytes(twice), expect="overlap (the same data listed twice")
    case("zip_duplicate_name", zip_bytes([Member("attention.npy", good), Member("attention", good)]),
         expect="npz: duplicate array name 'attention'")
    corrupt = Member("attention.npy", good)
    corrupt.body = b"\xff" * len(corrupt.body)
    case("zip_deflate_garbage", zip_bytes([corrupt]), expect="the deflate stream is corrupt")
    cut = Member("attention.npy", npy("<f4", [16, 16], f32([i / 7.0 for i in range(256)])))
    cut.body = cut.body[: len(cut.body) // 2]
    case("zip_deflate_truncated", zip_bytes([cut]), expect="the deflate stream is truncated")
    # An attention array of a shape the viewer cannot use, its stream cut: the viewer refuses it from
    # its .npy header before inflating the member (PeekNpzAttention); inspect meets the cut stream.
    cut5 = Member("attention.npy", npy("<f4", [2, 2, 2, 2, 16], f32([i / 7.0 for i in range(256)])))
    cut5.body = cut5.body[: len(cut5.body) // 2]
    case("npz_attention_5dims_cut_stream", zip_bytes([cut5]), expect="the deflate stream is truncated",
         open_expect="'attention' must have shape [layers, heads, n_q, n_k]")
    case("zip64_locator_outside", zip_bytes([Member("a.npy", good)], zip64=True)[:-42] +
         struct.pack("<IIQI", 0x07064B50, 0, 10 ** 12, 1) + zip_bytes([Member("a.npy", good)], zip64=True)[-22:],
         expect="Zip64 end-of-central-directory record missing or truncated")

    # -- path names: never used as paths (nothing is written from a member name) ---------------
    paths = [Member("../../../tmp/attnviz_pwned.npy", good), Member("/etc/passwd.npy", good),
             Member("C:\\evil\\x.npy", good)]
    case("zip_path_names", zip_bytes(paths), exit=0, stdout="../../../tmp/attnviz_pwned",
         open_expect="no 'attention' array", note="member names with .. and absolute paths are names only")

    # -- safetensors (read lazily: inspect reads the header only; the viewer opens it lazily) ----
    case("st_header_beyond_file", st_attention()[:60], ext=".safetensors", expect="but the file has 52 after the length",
         note="a safetensors header length beyond the end of the file (a truncated download)")
    case("st_header_length_huge", struct.pack("<Q", 1 << 40) + b"{}" + b" " * 6, ext=".safetensors",
         expect="over the limit of 100 MiB", note="a header length of 1 TiB in a 16-byte file: refused before allocating")
    case("st_offsets_beyond_file",
         st_attention(lies=lambda t: t.update({"attention.0.1": ("F16", [2, 4, 4], [10 ** 12, 10 ** 12 + 64])})),
         ext=".safetensors", expect="ends at data byte 1000000000064", note="a tensor's data_offsets far beyond the file")
    case("st_overlapping_tensors",
         st_attention(lies=lambda t: t.update({"attention.0.1": ("F16", [2, 4, 4], [32, 96])})),
         ext=".safetensors", expect="overlap", note="two tensors sharing bytes")
    case("st_shape_lie",
         st_attention(lies=lambda t: t.update({"attention.0.0": ("F16", [2, 4, 8], [0, 64])})),
         ext=".safetensors", expect="attention.0.0", note="shape x dtype says 128 bytes, the offsets hold 64")
    case("st_dtype_lie",
         st_attention(lies=lambda t: t.update({"attention.0.0": ("F32", [2, 4, 4], [0, 64])})),
         ext=".safetensors", expect="attention.0.0", note="dtype F32 where the bytes are F16: the span disagrees")
    case("st_unknown_dtype",
         st_attention(lies=lambda t: t.update({"attention.0.0": ("Q4_K", [2, 4, 4], [0, 64])})),
         ext=".safetensors", expect="unknown dtype 'Q4_K'", note="a dtype safetensors does not define")
    case("st_screen_copy_taller_than_head",
         st_attention(lies=lambda t: t.update({"screen.0.0": ("F16", [2, 8, 4], [128, 256])}), extra=b"\0" * 128),
         ext=".safetensors", expect="tensor 'screen.0.0' is [2, 8, 4]",
         note="a screen copy (max-pooled stand-in) with more rows than the head it stands for")
    stats_rows = struct.pack("<16f", float("nan"), 0, 0.5, 0, 0.5, 1, 0.5, 4,  # NaN entropy
                             1.0, 0.7, 0.5, 0, 0.5, 1e9, 0.5, 4)  # an offset far outside a 4 x 4 head
    case("st_stats_impossible",
         st_attention(lies=lambda t: t.update({"stats.0.0": ("F32", [2, 8], [128, 192]),
                                               "stats.0.1": ("F32", [2, 8], [192, 256])}), extra=stats_rows * 2),
         ext=".safetensors", exit=0, args=["--heads"], expect="stored ones impossible",
         open_expect="the statistics stored for 4 heads are impossible",
         note="stored head statistics that cannot be a head's (NaN, an offset outside the head): refused row by row, "
              "and the viewer says so")
    case("st_stats_wrong_shape",
         st_attention(lies=lambda t: t.update({"stats.0.0": ("F32", [2, 7], [128, 184]),
                                               "stats.0.1": ("F32", [2, 8], [184, 248])}), extra=b"\0" * 120),
         ext=".safetensors", exit=0, expect="stored head statistics are not used", open_expect=None,
         note="a stats tensor of the wrong shape: the file opens without them, with a warning")
    bad = [float("nan"), float("inf"), float("-inf"), -1.0, -0.0, 2.0 ** -24, 65504.0, 0.25]  # >= 8: vector steps
    sets = json.dumps([{"name": "s", "kind": "self", "tokens": ["a", "b", "c", "d"], "layers": 1}])
    case("st_f16_nan_inf_negative",
         safetensors({"attention.0.0": ("F16", [2, 4, 4], [0, 64])},
                     struct.pack("<32e", *(bad + [0.25] * 16 + bad[::-1])),
                     {"format": "attnviz", "version": "2", "sets": sets}),
         ext=".safetensors", exit=0, args=["--heads"], expect="4 NaN, infinite or negative weights written as 0",
         open_expect=None,
         note="F16 heads with NaN, infinities and negatives (-0 and a subnormal kept) among ordinary weights, read "
              "lazily: each head's bad weights are shown as 0 and counted (natively F16C, in the page SIMD lanes)")
    case("st_no_attention", safetensors({"embeddings": ("F32", [2, 2], [0, 16])}, b"\0" * 16), ext=".safetensors",
         expect="not an attention file", open_expect="attention",
         note="a model's weights, not attention: inspect lists the tensor and says why it is no attention file")

    # -- attend: the arrays name the limits ----------------------------------------------------
    qkv = [Member(n + ".npy", npy("<f4", [4, 2], f32([1, 0] * 4))) for n in ("query", "key", "value")]
    qkv[0] = Member("query.npy", npy("<f4", [4, 2], f32([float("nan"), 0] + [1, 0] * 3)))
    case("attend_nan_query", zip_bytes(qkv), cmd="attend", expect="query contains NaN or infinity",
         open_expect="no 'attention' array")


def bomb_cases():
    # 1. the same 1 GiB member listed 8 times (and 300 MiB x 3 under one name)
    big = npz_bomb_member("attention.npy", "<f4", [1, 1, 16384, 16384], b"\0\0\0\0")
    ms = [big]
    for i in range(1, 8):
        m = Member(f"attention{i}.npy", raw=b"", body=big.body, crc=big.crc, size=big.size)
        m.shares_local_of = 0
        ms.append(m)
    case("zip_same_1gib_member_8x", zip_bytes(ms, zip64=True), bomb=True,
         expect="over the memory budget (1 GiB; raise it: --max-memory in the CLI, maxMemory when embedding)")
    mid = npz_bomb_member("attention.npy", "<f4", [1, 1, 8192, 9600], b"\0\0\0\0")
    ms = [mid]
    for _ in range(2):
        m = Member("attention.npy", raw=b"", body=mid.body, crc=mid.crc, size=mid.size)
        m.shares_local_of = 0
        ms.append(m)
    case("zip_same_300mib_member_3x", zip_bytes(ms, zip64=True), bomb=True, expect="overlap (the same data listed twice")

    # 2. string arrays: 2^26 and 2^31 one-byte strings
    att = [Member("attention.npy", npy("<f4", [1, 1, 1, 1], f32([1.0]))), Member("tokens.npy", tokens_npy(["a"]))]
    names = npz_bomb_member("layer_names.npy", "|S1", [1 << 26], b"a")
    case("npz_s1_2p26_layer_names", zip_bytes(att + [names], zip64=True), bomb=True,
         expect="'layer_names' has shape (67108864,), expected (1,)", rss_mb=400)
    names31 = npz_bomb_member("layer_names.npy", "|S1", [1 << 31], b"a")
    case("npz_s1_2p31_layer_names", zip_bytes(att + [names31], zip64=True), bomb=True,
         expect="'layer_names.npy' declares 2147483776 bytes, over the limit of 2147483648", rss_mb=200)

    # 3. render of a 65536 x 4096 map: over the budget; 2048 x 1024: over --max-cells
    huge = npz_bomb_member("attention.npy", "<f4", [65536, 4096], b"\0\0\0\0")
    case("render_65536x4096", zip_bytes([huge], zip64=True), bomb=True, cmd="render",
         expect="over the memory budget", rss_mb=200)
    wide = npz_bomb_member("attention.npy", "<f4", [2048, 1024], b"\0\0\0\0")
    case("render_2048x1024_cells", zip_bytes([wide], zip64=True), bomb=True, cmd="render",
         expect="= 2097152 cells, over --max-cells 1048576", open_expect=None, rss_mb=300)

    # 4. attend with 65536-row query and key
    qkv = [npz_bomb_member(n + ".npy", "<f4", [65536, 4], b"\0\0\0\0") for n in ("query", "key", "value")]
    case("attend_65536x65536", zip_bytes(qkv, zip64=True), bomb=True, cmd="attend",
         expect="attention of 65536 queries over 65536 keys needs 4294967296 weights, over the limit of 53687091",
         open_expect="no 'attention' array", rss_mb=300)

    # 5. JSON of 10^7 []
    case("json_1e7_empty_arrays", b"[" + b"[]," * (10 ** 7 - 1) + b"[]]", bomb=True, ext=".json",
         expect="the document needs more memory than the budget of 1 GiB allows")

    # 6. a 2 MB layer name x 1024 heads (and 32 MB x 1024)
    for mb in (2, 32):
        name = "n" * (mb * MiB)
        doc = '{"tokens":["a","b"],"layers":[{"name":"%s","heads":[%s]}]}' % (name, ",".join(["[[0.5,0.4],[0,1]]"] * 1024))
        case(f"layer_name_{mb}mb_x1024_heads", doc.encode(), bomb=True, ext=".json", expect="longer than 4096 bytes",
             seconds=5.0 if mb == 2 else 10.0)

    # 7. Fortran order, 64 dims, 2^28 elements
    shape = [2 if d % 2 == 0 and d < 56 else 1 for d in range(64)]
    fort = npz_bomb_member("attention.npy", "|u1", shape, b"\1", fortran=True)
    case("npy_fortran_64dims_2p28", zip_bytes([fort], zip64=True), bomb=True,
         expect="must have shape [layers, heads, n_q, n_k]", seconds=5.0, rss_mb=1124)

    # 8. 65536 zip entries with 2 KB names
    tiny = npy("<f4", [], f32([0.5]))
    ms = [Member("n" * 2040 + "%06d.npy" % i, tiny, method=0) for i in range(65536)]
    case("zip_65536_entries_2kb_names", zip_bytes(ms, zip64=True), bomb=True, exit=0, stdout="65536 arrays",
         open_expect="no 'attention' array", seconds=10.0, rss_mb=1124, note="over 10 MB: 10 s allowed")

    # 9. a deflate member declaring 2 GiB with garbage content (and with --max-memory 3G, so the
    #    declared size passes: nothing may be pre-filled to it)
    garbage = bytes((i * 7919 + 13) % 251 for i in range(2 * MiB + 64 * 1024))
    g = Member("attention.npy", raw=b"", body=garbage, crc=0, size=2 * GiB)
    case("zip_2gib_garbage", zip_bytes([g], zip64=True), bomb=True, expect="over the memory budget")
    case("zip_2gib_garbage_big_budget", zip_bytes([g], zip64=True), bomb=True, args=["--max-memory", "3G"],
         expect="the deflate stream is corrupt", rss_mb=120)


def script_version():
    with open(__file__, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", metavar="DIR", help="write the small cases and cases.json here")
    ap.add_argument("--bombs", metavar="DIR", help="write the large cases here (a build folder)")
    a = ap.parse_args()
    if not a.small and not a.bombs:
        ap.error("give --small DIR and/or --bombs DIR")
    small_cases()
    n_small = len(CASES)
    if a.bombs:
        bomb_cases()
    if a.small:
        os.makedirs(a.small, exist_ok=True)
        for c, data in CASES[:n_small]:
            with open(os.path.join(a.small, c["file"]), "wb") as f:
                f.write(data)
        manifest = [c for c, _ in CASES]
        if not a.bombs:  # the manifest lists the bombs too: build them only to describe them
            CASES.clear()
            small_cases()
            bomb_cases()
            manifest = [c for c, _ in CASES]
        with open(os.path.join(a.small, "cases.json"), "w") as f:
            json.dump({"generator": "tests/hostile/make_corpus.py", "cases": manifest}, f, indent=1)
            f.write("\n")
        print(f"{n_small} small cases in {a.small}, {len(manifest)} cases in cases.json")
    if a.bombs:
        os.makedirs(a.bombs, exist_ok=True)
        stamp = os.path.join(a.bombs, "VERSION")
        version = script_version()
        fresh = os.path.exists(stamp) and open(stamp).read().strip() == version
        written = 0
        for c, data in CASES[n_small:]:
            path = os.path.join(a.bombs, c["file"])
            if fresh and os.path.exists(path) and os.path.getsize(path) == len(data):
                continue
            with open(path, "wb") as f:
                f.write(data)
            written += 1
        with open(stamp, "w") as f:
            f.write(version + "\n")
        print(f"{len(CASES) - n_small} bombs in {a.bombs} ({written} written)")


if __name__ == "__main__":
    sys.exit(main())
