"""A row transformer inherited from the billing team."""
