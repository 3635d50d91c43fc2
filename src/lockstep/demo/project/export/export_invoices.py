"""Nightly invoice export.  Ops greps stderr; finance diffs stdout.  Handle with care."""
import csv
import datetime
import os
import secrets
import sys


def main(argv):
    currency = os.environ.get("CURRENCY", "USD")
    rate = os.environ.get("TAX_RATE")
    tax = float(rate) if rate else 0.0
    src = argv[1] if len(argv) > 1 else "-"
    if src == "-":
        fh = sys.stdin
    else:
        try:
            fh = open(src, newline="", encoding="utf-8")
        except OSError as e:
            sys.stderr.write("export: cannot open %s: %s\n" % (src, e.strerror))
            return 2
    run_id = "run-" + secrets.token_hex(4)
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    sys.stdout.write("# invoice export %s at %s\n" % (run_id, stamp))
    rows = list(csv.DictReader(fh))
    if not rows:
        sys.stdout.write("# no invoices\n")
        sys.stderr.write("export: 0 invoices\n")
        return 0
    sys.stdout.write("invoice,customer,net,tax,gross,currency\n")
    total = 0
    for r in rows:
        net = int(r["qty"]) * int(r["unit_cents"])
        t = int(round(net * tax))
        total = total + net + t
        sys.stdout.write("%s,%s,%d.%02d,%d.%02d,%d.%02d,%s\n" % (
            r["invoice"], r["customer"].strip(), net // 100, net % 100, t // 100, t % 100,
            (net + t) // 100, (net + t) % 100, currency))
    sys.stderr.write("export: %d invoices, %d.%02d %s\n" % (len(rows), total // 100, total % 100, currency))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
