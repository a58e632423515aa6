#!/usr/bin/env python3
"""Fills @LIMITS_TABLE@ in an scdoc page with the output of the limits-table program, then runs
scdoc: the man page's table is generated from the code's own table."""
import subprocess
import sys


def main():
    scdoc, table_prog, template, out = sys.argv[1:5]
    table = subprocess.run([table_prog], check=True, capture_output=True, text=True).stdout
    with open(template, encoding="utf-8") as f:
        text = f.read().replace("@LIMITS_TABLE@", table.rstrip("\n"))
    page = subprocess.run([scdoc], input=text, check=True, capture_output=True, text=True).stdout
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
