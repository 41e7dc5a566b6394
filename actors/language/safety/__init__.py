"""What must never be stored: secrets and identifiers (``secrets``), invisible characters (``invisible``)."""
