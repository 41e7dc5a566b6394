"""Text processing without an LLM (docs/design.md#language-packs): one language pack per language (``en/``,
``zh/``), the script module (``text``), the tokenizer (``tokens``), extraction, keywords and
what must never be stored (``safety``)."""
