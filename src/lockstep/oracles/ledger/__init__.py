"""The ledger oracle: a function's real calls (arguments → result or exception), frozen."""
