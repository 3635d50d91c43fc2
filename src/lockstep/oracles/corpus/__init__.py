"""The corpus oracle: fixture files → render callable → canonical bytes → sha256 lock."""
