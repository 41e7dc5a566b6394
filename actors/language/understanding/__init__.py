"""The semantic reader beside the rules: labelled utterances, their prototype vectors, the reader and the
value extractor (docs/quality.md#8-a-semantic-reader-beside-the-rules)."""
