"""Session 40's cuBLASLt entry-probe shapes: LLM projections at prefill and batch token counts,
in the two layouts the LLM suite runs (`cublaslt_llm_bf16.txt`).

Why: the entry model (``tilepick.model.lt_ranker``) learned from 1,720 shapes of the main
training datasets, of which only ~300 have >= 1e11 flop, the size of the suite's rows with
M >= 1000. There it ran an entry that lost to torch.matmul on rc M = 1024 x 10240 x 8192
(0.962x) and rr 4096 x 8192 x 28672 (0.977x), and missed gains at rc M = 128 that hybrid found
(1.02-1.06x). So: more shapes of the kind people run, timed in more rounds than before.

Weights: the projections (qkv, attn_out, gate_up, up, down) of every model in
``shapes.MODELS`` and ``shapes.EXTRA_MODELS``, without the held-out families' weights
(``shapes.held_out_weights``: the validation shapes' rule) and without the LLM suite's weights
(Llama-3-8B / 70B, which Mistral-7B and Llama-2-70B share), so the suite stays a test of new
weight shapes. M: token counts from 32 to 16384, odd ones included; at most 2e12 flop a shape
(a probe of a larger one takes seconds). A seeded random order, so a probe that runs out of
budget has measured a random subset.

Session 45's run 4 (`cublaslt_llm2_bf16.txt`): the next shapes of the same order that no
probe result of runs 1-3 holds (run 3 reached 533 of its 700 within its budget), because the
heuristic's LLM-suite rows below 0.97x were entry picks on LLM-shaped problems
(rr 128 x 4096 x 14336, `a66.t15`; rc 8192 x 4096 x 14336, `a66.t29`).

    python benchmarks/problems/make_lt_llm_list.py [--next RESULT.json.gz ...]
"""

import argparse
import json
import random
from pathlib import Path

from tilepick.bench import shapes
from tilepick.data.io import open_text

HERE = Path(__file__).parent
OUT = HERE / "cublaslt_llm_bf16.txt"
OUT_NEXT = HERE / "cublaslt_llm2_bf16.txt"
SUITE_MODELS = ("llama3-8b", "llama3-70b")
LAYERS = ("qkv", "attn_out", "gate_up", "up", "down")
M_VALUES = (32, 48, 64, 96, 100, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1000, 1024, 1280,
            1536, 2000, 2048, 2560, 3000, 3072, 4096, 5000, 6144, 8192, 12288, 16384)
MAX_FLOP = 2e12   # M * N * K
COUNT = 700


def weights() -> list[tuple[int, int]]:
    excluded = set(shapes.held_out_weights())
    excluded |= {(p.n, p.k) for name in SUITE_MODELS for p in shapes.llm_projections(name)}
    models = list(shapes.MODELS.values()) + list(shapes.EXTRA_MODELS.values())
    nk = {(p.n, p.k) for cfg in models for p in shapes.llm_projections(cfg)
          if p.layer in LAYERS and (p.n, p.k) not in excluded and min(p.n, p.k) >= 1024}
    return sorted(nk)


def ordered_specs() -> list[str]:
    specs = [f"{m}x{n}x{k}:{lay}" for n, k in weights() for m in M_VALUES
             for lay in ("rr", "rc") if m * n * k <= MAX_FLOP]
    random.Random("tilepick.lt_llm:40").shuffle(specs)
    return specs


def probed(results: list[str]) -> set[str]:
    """The shapes (``MxNxK:layout``) that probe result files (JSON, gzip or not) hold."""
    out = set()
    for f in results:
        try:
            with open_text(f) as fh:
                out |= {r["spec"] for r in json.load(fh)["rows"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{f}: not a cublaslt_probe.py result ({type(exc).__name__}: "
                             f"{exc})") from None
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--next", nargs="+", default=None, metavar="RESULT",
                    help="write the next COUNT shapes of the order that these results lack")
    args = ap.parse_args()
    specs = ordered_specs()
    out = OUT
    if args.next:
        done = probed(args.next)
        specs, out = [s for s in specs if s not in done], OUT_NEXT
    out.write_text("\n".join(specs[:COUNT]) + "\n")
    print(f"{len(weights())} weights, {len(specs)} shapes, wrote {min(COUNT, len(specs))} "
          f"to {out}")


if __name__ == "__main__":
    main()
