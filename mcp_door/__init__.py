"""The Model Context Protocol door: the tool set (``tools``) and its stdio transport (``stdio``)."""
