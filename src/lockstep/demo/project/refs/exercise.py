"""Exercise parse_amount the way the billing export and the importer call it."""

from refs.messy import parse_amount

SAMPLES = [
    None, "", "  ", "9.99", b"9.99", "$12", "€3,50", "1,250.5", "12 GBP", "7 JPY",
    "10-20", "$5-7.5", "abc", "-3.2", "0.005",
]


def main():
    for raw in SAMPLES:
        for strict in (False, True):
            try:
                parse_amount(raw, strict=strict)
            except (ValueError, KeyError):
                pass
    parse_amount("4.20", default_currency="EUR")


if __name__ == "__main__":
    main()
