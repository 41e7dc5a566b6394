"""The English rule books of extraction: facts and tastes."""
