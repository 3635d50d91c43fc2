"""Reference-number and amount parsing, as inherited."""
