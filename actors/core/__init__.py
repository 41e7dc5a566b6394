"""The domain: memory items, the two gates, recall, the profile and the session context; plain Python
(no Ray, no SQL)."""
