"""What must never be stored: secrets and identifiers (``secrets``), invisible characters (``invisible``),
prompt injection (``injection``) and orders to the assistant (``orders``); ``spans`` replaces what the
checks find."""
