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
    if args.where is None:
        return opt.run(args)
    from nnc.where import UnknownOperation, places

    try:
        found = places(args.where)
    except UnknownOperation as e:
        print(f"nnc-opt: error: {e}", file=sys.stderr)
        return 2
    try:
        print("\n".join(str(p) for p in found), flush=True)
    except BrokenPipeError:  # `nnc-opt --where OP | head`, as the nnc command does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0


if __name__ == "__main__":
    sys.exit(main())
