"""Late fees: 1.5% of the total per started month late, at least 5 EUR."""

from decimal import ROUND_HALF_UP, Decimal


def late_fee(total, days_late):
    months = -(-days_late // 30)
    fee = (total * Decimal("0.015") * months).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return max(fee, Decimal("5.00"))
