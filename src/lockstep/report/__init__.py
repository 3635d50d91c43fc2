"""What the user sees: terminal text, and machine formats for CI (JUnit XML)."""
