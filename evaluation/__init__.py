"""The LoCoMo evaluation harness: the memory service against raw-turn BM25 and dense baselines."""
