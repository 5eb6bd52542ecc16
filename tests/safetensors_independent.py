"""An independent safetensors writer and reader (standard library + numpy only) that checks the
safetensors support of `icl patch` (docs/patch.md section 2.5) from the outside:

  python3 safetensors_independent.py MODE ICL WORKDIR

  python-writes  models written here (F64, F32, BF16; tensors in a shuffled order) are read by
                 `icl patch check --weights`: the identity passes and the weights icl read back
                 (saved again as text) are exactly the stored values.
  icl-writes     `icl patch train --save X.safetensors --save-dtype f64|f32|bf16` is parsed here:
                 the names and shapes of the documented map, contiguous 8-byte-aligned data, and
                 the values of the same training saved as text, rounded as documented
                 (F32: nearest float; BF16: nearest float, then nearest bfloat16, ties to even).
  bad-files      corrupted files (truncated at random lengths, wrong shapes, missing or unknown
                 tensors, bad dtypes, header past the end, overlapping / out-of-range offsets,
                 holes, missing metadata, NaN) make `icl patch check` exit 2 naming the tensor.

Exit status 0 when every check holds; an AssertionError otherwise."""
import json
import os
import random
import struct
import subprocess
import sys

import numpy as np

# ---- the format, written from the safetensors description -----------------------------------

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


def bf16_bits(a32):
    """float32 array -> bfloat16 bit patterns (uint16), round to nearest, ties to even."""
    u = a32.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = u + 0x7FFF + ((u >> 16) & 1)
    return (u >> 16).astype(np.uint16)


def bf16_value(a):
    """The float64 value of float64 array `a` stored as BF16 (via the nearest float32)."""
    return (bf16_bits(np.asarray(a, np.float64).astype(np.float32)).astype(np.uint32) << 16
            ).view(np.float32).astype(np.float64)


def encode(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if dtype == "F64":
        return a.astype("<f8").tobytes()
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "BF16":
        return bf16_bits(a.astype(np.float32)).astype("<u2").tobytes()
    raise ValueError(dtype)


def decode(b, dtype, shape):
    if dtype == "F64":
        a = np.frombuffer(b, "<f8")
    elif dtype == "F32":
        a = np.frombuffer(b, "<f4").astype(np.float64)
    elif dtype == "BF16":
        a = (np.frombuffer(b, "<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    else:
        raise ValueError(dtype)
    return a.reshape(shape)


def st_bytes(tensors, metadata, order=None, pad=True):
    """tensors: {name: (array, dtype)}. Returns the file bytes."""
    names = list(order or tensors.keys())
    header, data = {}, b""
    for n in names:
        a, dt = tensors[n]
        raw = encode(a, dt)
        header[n] = {"dtype": dt, "shape": list(np.shape(a)),
                     "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    if pad:
        h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def st_read(path):
    b = open(path, "rb").read()
    (n,) = struct.unpack("<Q", b[:8])
    assert 8 + n <= len(b), "header past the end"
    header = json.loads(b[8:8 + n].decode())
    meta = header.pop("__metadata__", {})
    data = b[8 + n:]
    out, spans = {}, []
    for name, e in header.items():
        s, t = e["data_offsets"]
        count = int(np.prod(e["shape"])) if e["shape"] else 1
        assert t - s == count * SIZES[e["dtype"]], name
        spans.append((s, t))
        out[name] = (e["dtype"], tuple(e["shape"]), decode(data[s:t], e["dtype"], e["shape"]))
    spans.sort()
    pos = 0
    for s, t in spans:
        assert s == pos, "offsets not contiguous"
        pos = t
    assert pos == len(data), "trailing bytes"
    return out, meta, n


# ---- the documented name map, written independently of the C++ table -------------------------

def expected_shapes(c):
    T, D, I = c["token_dim"], c["width"], c["heads"] * c["head_dim"]
    out = {}
    if c["embed"]:
        out["embed.weight"], out["embed.bias"] = (D, T), (D,)
    for l in range(c["layers"]):
        p = "layers.%d." % l
        if c["kind"] == "rnn":
            out[p + "rnn.weight_ih"], out[p + "rnn.weight_hh"], out[p + "rnn.bias"] = (D, D), (D, D), (D,)
        else:
            for m in "qkv":
                out[p + "attn.%s_proj.weight" % m], out[p + "attn.%s_proj.bias" % m] = (I, D), (I,)
            out[p + "attn.o_proj.weight"], out[p + "attn.o_proj.bias"] = (D, I), (D,)
        if c["layernorm"]:
            for k in ("ln1", "ln2"):
                out[p + k + ".weight"], out[p + k + ".bias"] = (D,), (D,)
        fan_in = D
        for i in range(c["mlp_depth"]):
            fo = D if i == c["mlp_depth"] - 1 else c["mlp_hidden"]
            out[p + "mlp.fc%d.weight" % (i + 1)], out[p + "mlp.fc%d.bias" % (i + 1)] = (fo, fan_in), (fo,)
            fan_in = fo
    if c["embed"]:
        out["readout.weight"], out["readout.bias"] = (T, D), (T,)
    return out


INTERNAL = {"We": "embed.weight", "bE": "embed.bias", "Wr": "readout.weight", "br": "readout.bias",
            "Wq": "attn.q_proj.weight", "bq": "attn.q_proj.bias", "Wk": "attn.k_proj.weight",
            "bk": "attn.k_proj.bias", "Wv": "attn.v_proj.weight", "bv": "attn.v_proj.bias",
            "Wo": "attn.o_proj.weight", "bo": "attn.o_proj.bias", "Wx": "rnn.weight_ih",
            "Wh": "rnn.weight_hh", "brnn": "rnn.bias", "g1": "ln1.weight", "be1": "ln1.bias",
            "g2": "ln2.weight", "be2": "ln2.bias"}


def external(internal):
    if "." not in internal:
        return INTERNAL[internal]
    block, name = internal.split(".", 1)
    l = block[len("block"):]
    if name in INTERNAL:
        return "layers.%s.%s" % (l, INTERNAL[name])
    kind, k = name[0], name[1:]
    return "layers.%s.mlp.fc%s.%s" % (l, k, "weight" if kind == "W" else "bias")


def read_text_weights(path):
    """The icl-patch-weights text format: {safetensors name: array in the tensor's shape}."""
    tok = open(path).read().split()
    assert tok[0] == "icl-patch-weights" and tok[1] == "1" and tok[2] == "config"
    # 14 configuration fields, or 17 since the block kinds of docs/patch.md §16 (gated, norm,
    # layout: the 16th is the norm's name)
    n = 17 if len(tok) > 3 + 15 and tok[3 + 15] in ("layernorm", "rmsnorm") else 14
    i, out = 3 + n, {}
    while i < len(tok):
        name, r, c = tok[i], int(tok[i + 1]), int(tok[i + 2])
        vals = np.array([float(v) for v in tok[i + 3:i + 3 + r * c]])
        m = vals.reshape((c, r)).T  # column-major
        ext = external(name)
        out[ext] = m[:, 0] if ext.endswith(".bias") or ".ln" in ext else m  # 1-D tensors
        i += 3 + r * c
    return out


def metadata_of(c):
    m = {"icl.format": "icl-patch-weights 1"}
    for k, v in c.items():
        m["icl." + k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return m


CONFIGS = [
    # the default one-block model of `icl patch` (d = 2)
    dict(token_dim=3, width=3, embed=False, layers=1, kind="softmax", heads=8, head_dim=4,
         mlp_hidden=128, mlp_depth=2, act="gelu", residual=False, layernorm=False, causal=True),
    # a 2-layer Pre-LN model with an embedding and a 3-layer MLP
    dict(token_dim=3, width=8, embed=True, layers=2, kind="softmax", heads=2, head_dim=4,
         mlp_hidden=16, mlp_depth=3, act="relu", residual=True, layernorm=True, causal=True),
    # an RNN block
    dict(token_dim=3, width=3, embed=False, layers=1, kind="rnn", heads=8, head_dim=4,
         mlp_hidden=16, mlp_depth=2, act="gelu", residual=False, layernorm=False, causal=True),
]


def random_model(c, rng):
    t = {}
    for name, shape in expected_shapes(c).items():
        if name.endswith("ln1.weight") or name.endswith("ln2.weight"):
            a = 1 + 0.1 * rng.standard_normal(shape)
        elif len(shape) == 2:
            a = rng.standard_normal(shape) / np.sqrt(shape[1])
            if name.endswith("weight_hh"):
                a *= 0.5
        else:
            a = 0.1 * rng.standard_normal(shape)
        t[name] = a
    return t


def run(icl, args, cwd):
    return subprocess.run([icl] + args, cwd=cwd, capture_output=True, text=True)


# ---- modes ---------------------------------------------------------------------------------

def python_writes(icl, work):
    rng = np.random.default_rng(1)
    for ci, c in enumerate(CONFIGS):
        for dt in ("F64", "F32", "BF16"):
            model = random_model(c, rng)
            order = list(model)
            random.Random(ci).shuffle(order)  # the data order is free in the format
            path = os.path.join(work, "py_%d_%s.safetensors" % (ci, dt))
            open(path, "wb").write(st_bytes({k: (v, dt) for k, v in model.items()},
                                            metadata_of(c), order, pad=(dt != "F32")))
            back = os.path.join(work, "py_%d_%s.txt" % (ci, dt))
            r = run(icl, ["patch", "check", "--weights", path, "--context", "8", "--prompts", "2",
                          "--json", "--save", back], work)
            assert r.returncode == 0, (path, r.returncode, r.stderr)
            j = json.loads(r.stdout)
            assert j["pass"] and j["max_rel_diff"] < 1e-12, (path, j["max_rel_diff"])
            stored = {k: v if dt == "F64" else (v.astype(np.float32).astype(np.float64) if dt == "F32"
                                                else bf16_value(v)) for k, v in model.items()}
            got = read_text_weights(back)
            assert set(got) == set(stored), (set(got) ^ set(stored))
            for k in stored:
                assert got[k].shape == stored[k].shape, (k, got[k].shape, stored[k].shape)
                assert np.array_equal(got[k], stored[k]), (path, k)
            print("python-writes %s: icl read %d tensors exactly, identity %.2g"
                  % (os.path.basename(path), len(stored), j["max_rel_diff"]))


def icl_writes(icl, work):
    flags = ["--train-steps", "3", "--batch", "4", "--context", "6", "--eval-every", "1", "--quiet"]
    models = {"plain": [], "preln": ["--layers", "2", "--pre-ln", "--width", "8", "--heads", "2",
                                     "--mlp", "16", "--mlp-depth", "3"]}
    for label, extra in models.items():
        text = os.path.join(work, "icl_%s.txt" % label)
        r = run(icl, ["patch", "train"] + flags + extra + ["--save", text], work)
        assert r.returncode == 0, r.stderr
        ref = read_text_weights(text)
        for dt in ("f64", "f32", "bf16"):
            path = os.path.join(work, "icl_%s_%s.safetensors" % (label, dt))
            r = run(icl, ["patch", "train"] + flags + extra + ["--save", path, "--save-dtype", dt], work)
            assert r.returncode == 0, r.stderr
            tensors, meta, n = st_read(path)
            assert (8 + n) % 8 == 0, "data section not 8-byte aligned"
            assert meta["icl.format"] == "icl-patch-weights 1"
            c = {k[4:]: v for k, v in meta.items() if k.startswith("icl.") and k != "icl.format"}
            for k in ("token_dim", "width", "layers", "heads", "head_dim", "mlp_hidden", "mlp_depth"):
                c[k] = int(c[k])
            for k in ("embed", "residual", "layernorm", "causal"):
                c[k] = c[k] == "true"
            shapes = expected_shapes(c)
            assert set(tensors) == set(shapes), set(tensors) ^ set(shapes)
            for k, (dtype, shape, a) in tensors.items():
                assert dtype == dt.upper(), (k, dtype)
                assert shape == shapes[k], (k, shape, shapes[k])
                want = ref[k] if dt == "f64" else (ref[k].astype(np.float32).astype(np.float64)
                                                   if dt == "f32" else bf16_value(ref[k]))
                assert np.array_equal(a, want), (path, k, np.max(np.abs(a - want)))
            print("icl-writes %s: %d tensors, dtypes and values as documented"
                  % (os.path.basename(path), len(tensors)))


def bad_files(icl, work):
    c = dict(CONFIGS[0], heads=2, mlp_hidden=8)
    model = random_model(c, np.random.default_rng(2))
    good = st_bytes({k: (v, "F32") for k, v in model.items()}, metadata_of(c))
    path = os.path.join(work, "bad.safetensors")

    def expect_2(data, needle, what):
        open(path, "wb").write(data)
        r = run(icl, ["patch", "check", "--weights", path, "--context", "4", "--prompts", "1"], work)
        assert r.returncode == 2, (what, r.returncode, r.stderr)
        assert needle in r.stderr, (what, needle, r.stderr)
        print("bad-files %-34s exit 2: %s" % (what, r.stderr.strip().split(": ", 3)[-1][:110]))

    def header_edit(fn):
        (n,) = struct.unpack("<Q", good[:8])
        h = json.loads(good[8:8 + n])
        fn(h)
        hb = json.dumps(h).encode()
        return struct.pack("<Q", len(hb)) + hb + good[8 + n:]

    (n,) = struct.unpack("<Q", good[:8])
    h0 = json.loads(good[8:8 + n])
    last = max((k for k in h0 if k != "__metadata__"), key=lambda k: h0[k]["data_offsets"][1])
    q = "layers.0.attn.q_proj.weight"
    # every random truncation: exit 2, never a crash
    rnd = random.Random(3)
    for cut in sorted(rnd.sample(range(len(good)), 25)) + [0, 7, 8, 9, len(good) - 1]:
        open(path, "wb").write(good[:cut])
        r = run(icl, ["patch", "check", "--weights", path, "--context", "4"], work)
        assert r.returncode == 2, ("truncated at %d" % cut, r.returncode, r.stderr)
    print("bad-files 30 random truncations: exit 2 each")
    expect_2(good[:-3], last, "truncated data (last tensor)")

    def wrong_shape(h):
        h[q]["shape"] = list(reversed(h[q]["shape"]))
    expect_2(header_edit(wrong_shape), q, "wrong shape")
    # a tensor dropped from the header but not from the data: its bytes are a hole
    expect_2(header_edit(lambda h: h.pop(q)), "hole", "entry dropped, bytes left")

    def drop_last(h):
        h.pop(last)
    data = header_edit(drop_last)
    expect_2(data[:len(data) - h0[last]["data_offsets"][1] + h0[last]["data_offsets"][0]], last,
             "missing tensor")
    extra = dict(model)
    extra["layers.0.attn.extra.weight"] = np.ones((2, 2))
    expect_2(st_bytes({k: (v, "F32") for k, v in extra.items()}, metadata_of(c)),
             "layers.0.attn.extra.weight", "unknown tensor")

    def bad_dtype(h):
        h[q]["dtype"] = "F128"
    expect_2(header_edit(bad_dtype), q, "unknown dtype")

    def int_dtype(h):
        h[q]["dtype"] = "I32"
    expect_2(header_edit(int_dtype), q, "unsupported dtype")
    expect_2(struct.pack("<Q", 1 << 40) + good[8:], "header length", "header past the end")
    expect_2(struct.pack("<Q", 3) + b"{x}" + good[8 + 3:], "JSON", "header not JSON")

    def overlap(h):  # k_proj.weight has q_proj.weight's shape: point it at the same bytes
        h["layers.0.attn.k_proj.weight"]["data_offsets"] = list(h[q]["data_offsets"])
    expect_2(header_edit(overlap), "overlaps", "overlapping offsets")

    def out_of_range(h):
        b, e = h[last]["data_offsets"]
        h[last]["data_offsets"] = [b + 1000, e + 1000]
    expect_2(header_edit(out_of_range), last, "offsets past the end")

    def hole(h):
        b, e = h[last]["data_offsets"]
        h[last]["data_offsets"] = [b + 4, e + 4]
    data = header_edit(hole)
    expect_2(data + b"\0" * 4, last, "hole before a tensor")

    def no_heads(h):
        h["__metadata__"].pop("icl.heads")
    expect_2(header_edit(no_heads), "icl.heads", "missing metadata key")

    def new_key(h):
        h["__metadata__"]["icl.dropout"] = "0.1"
    expect_2(header_edit(new_key), "icl.dropout", "unknown metadata key")
    nan = dict(model)
    nan[q] = model[q].copy()
    nan[q][1, 1] = np.nan
    expect_2(st_bytes({k: (v, "F32") for k, v in nan.items()}, metadata_of(c)), q, "NaN value")
    # the unmodified file is accepted
    open(path, "wb").write(good)
    r = run(icl, ["patch", "check", "--weights", path, "--context", "4"], work)
    assert r.returncode == 0, r.stderr


if __name__ == "__main__":
    mode, icl, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    {"python-writes": python_writes, "icl-writes": icl_writes, "bad-files": bad_files}[mode](icl, work)
