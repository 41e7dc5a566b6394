"""Text processing without an LLM: extraction rules for English and Chinese, keywords and redaction."""
