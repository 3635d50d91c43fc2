"""A month of invoice lines, as the billing export feeds them."""

LINES = [
    {"amount": "120.00", "currency": "EUR"},
    {"amount": "80.50", "currency": "USD"},
    {"amount": "42.10", "currency": "EUR"},
    {"amount": "15.00", "currency": "GBP"},
    {"amount": "99.99", "currency": "USD"},
]
