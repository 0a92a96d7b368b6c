"""How good could a model that ranks only its training catalog be on the validation set?

The catalog is every config id measured in the training data, or (``--model``) the trained
catalog a model ranks (predictor.json's ``trained_configs``: since session 6 only the configs
that came within ``catalog_min_rel`` of some training problem's best); the ceiling is, per
validation problem, the best measured TFLOP/s inside the catalog over the best of all (every
valid config was measured there). A ceiling near 100% says the ranking, not the catalog,
limits the model.

    python benchmarks/catalog_ceiling.py [--train data/gemm/bf16/h200/train_rr ...]
        [--model models/gemm_bf16_h200] [--validation data/gemm/bf16/h200/validation]
"""

import argparse
import json
from pathlib import Path

from tilepick.data.io import read_frame
from tilepick.model.artifacts import catalog_of, read_json


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", nargs="+", default=["data/gemm/bf16/h200/train_rr",
                                                   "data/gemm/bf16/h200/train_rc"])
    ap.add_argument("--model", default=None, help="use this model's trained catalog instead")
    ap.add_argument("--validation", default="data/gemm/bf16/h200/validation")
    args = ap.parse_args()
    catalog = set()
    if args.model:
        catalog = set(catalog_of(read_json(Path(args.model) / "predictor.json"))[1])
    else:
        for path in args.train:
            catalog |= set(read_frame(path).config_id)
    val = read_frame(args.validation)
    val = val[val.valid]
    best = val.groupby("problem_key").tflops.max()
    inside = val[val.config_id.isin(catalog)].groupby("problem_key").tflops.max()
    eff = (inside / best).reindex(best.index).fillna(0.0)
    winners = val.loc[val.groupby("problem_key").tflops.idxmax()]
    print(json.dumps({
        "catalog_configs": len(catalog), "space_configs_measured": int(val.config_id.nunique()),
        "problems": len(best), "winner_in_catalog": float(winners.config_id.isin(catalog).mean()),
        "ceiling_mean": float(eff.mean()), "ceiling_p10": float(eff.quantile(0.1)),
        "ceiling_min": float(eff.min())}, indent=1))


if __name__ == "__main__":
    main()
