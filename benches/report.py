"""Turn pytest-benchmark JSON into throughputs and native/pure ratios.

Usage: python benches/report.py RAW.json OUT.json
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any


def main(raw_path: str, out_path: str) -> None:
    with open(raw_path) as f:
        raw = json.load(f)
    ops: dict[str, dict[str, Any]] = defaultdict(dict)
    for b in raw["benchmarks"]:
        x = b["extra_info"]
        median = b["stats"]["median"]
        ops[x["op"]][x["impl"]] = {
            "median_s": median,
            "per_s": x["amount"] / median,
            "unit": x["unit"],
        }
    table = []
    for op, impls in ops.items():
        row: dict[str, Any] = {"op": op, **{k: v for k, v in impls.items()}}
        if "native" in impls and "pure" in impls:
            row["native/pure"] = impls["native"]["per_s"] / impls["pure"]["per_s"]
        for ref in impls:
            if ref not in ("native", "pure") and "native" in impls:
                row[f"native/{ref}"] = impls["native"]["per_s"] / impls[ref]["per_s"]
        table.append(row)
    with open(out_path, "w") as f:
        json.dump({"machine": raw.get("machine_info", {}), "ops": table}, f, indent=2)

    def fmt(v: dict[str, Any] | None) -> str:
        if not v:
            return "-"
        if v["unit"] == "bytes":
            return f"{v['per_s'] / 1e6:,.1f} MB/s"
        return f"{v['median_s'] * 1e9:,.0f} ns/call"

    print(f"\n{'operation':44} {'native':>16} {'pure':>16} {'native/pure':>12}  reference")
    for row in table:
        ratio = row.get("native/pure")
        refs = ", ".join(
            f"{k.split('/', 1)[1]} {fmt(row[k.split('/', 1)[1]])} (native = {row[k]:.0%})"
            for k in row
            if k.startswith("native/") and k != "native/pure"
        )
        print(
            f"{row['op']:44} {fmt(row.get('native')):>16} {fmt(row.get('pure')):>16} "
            f"{(f'{ratio:,.0f}x' if ratio else '-'):>12}  {refs}"
        )
    print(f"\nwritten to {out_path}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
