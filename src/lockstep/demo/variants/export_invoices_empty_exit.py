"""Nightly invoice export.  Ops greps stderr; finance diffs stdout.  Handle with care."""
import csv
import datetime
import os
import secrets
import sys


def _money(cents):
    return "%d.%02d" % (cents // 100, cents % 100)


def _header():
    run_id = "run-" + secrets.token_hex(4)
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return "# invoice export %s at %s\n" % (run_id, stamp)


def _open(src):
    if src == "-":
        return sys.stdin
    return open(src, newline="", encoding="utf-8")


def main(argv):
    currency = os.environ.get("CURRENCY", "USD")
    rate = os.environ.get("TAX_RATE")
    tax = float(rate) if rate else 0.0
    src = argv[1] if len(argv) > 1 else "-"
    try:
        fh = _open(src)
    except OSError as e:
        sys.stderr.write("export: cannot open %s: %s\n" % (src, e.strerror))
        return 2
    sys.stdout.write(_header())
    rows = list(csv.DictReader(fh))
    if not rows:
        sys.stdout.write("# no invoices\n")
        sys.stderr.write("export: 0 invoices\n")
        return 1  # an empty export is a failure, surely
    sys.stdout.write("invoice,customer,net,tax,gross,currency\n")
    total = 0
    for r in rows:
        net = int(r["qty"]) * int(r["unit_cents"])
        t = int(round(net * tax))
        total += net + t
        fields = [r["invoice"], r["customer"].strip(), _money(net), _money(t), _money(net + t)]
        sys.stdout.write(",".join([*fields, currency]) + "\n")
    sys.stderr.write("export: %d invoices, %s %s\n" % (len(rows), _money(total), currency))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
