"""``nnc-opt``'s command line: :mod:`nnc.passes.opt` (passes on an IR file)
plus ``--where OPERATION``, which reads every layer (the operation table,
rules, lowerings, kernels, the TFLite importer, the lit tests) and so lives
above them all (:mod:`nnc.where`)."""

from __future__ import annotations

import os
import sys

from nnc.passes import opt


def main(argv: list[str] | None = None) -> int:
    ap = opt.parser()
    ap.add_argument("--where", metavar="OPERATION",
                    help="print where an NNAPI operation lives (record, rule, lowering, kernels, TFLite converters, "
                         "lit tests) as path:line, and exit")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        return opt.run(args) if args.where is None else _where(args.where)
    except BrokenPipeError:  # `nnc-opt ... | head`: the reader left, as the nnc command handles it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _where(name: str) -> int:
    """0 and one ``what path:line`` line per place, or 2 and an error for a
    name that is not an operation (an argument error, as argparse's)."""
    from nnc.where import UnknownOperation, places

    try:
        found = places(name)
    except UnknownOperation as e:
        print(f"nnc-opt: error: {e}", file=sys.stderr)
        return 2
    print("\n".join(str(p) for p in found), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
