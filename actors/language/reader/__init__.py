"""The learned reader: over the token states of the embedder's forward pass, a span tagger that finds a
clause's value and a clause classifier for its act, slot, polarity and flags (``reader.LearnedReader``),
trained on the labelled corpus of ``corpus/``."""
