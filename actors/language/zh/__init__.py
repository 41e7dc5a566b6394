"""The Chinese rule books of extraction: facts and tastes."""
