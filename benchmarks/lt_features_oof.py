"""The cuBLASLt entry model's feature lists compared out of fold and on held-out probes (CPU,
~1 min).

Why: session 40 added six features to ``tilepick.features.lt_entries`` (schema 2: last-wave
fill, M and N over whole clusters of tiles, tile and waves against the heuristic's first
entry). Schema 1 is schema 2 without them (they were appended), so both lists are trained
here on the same probe results, one single-seed booster per bagging seed (three seeds), and
scored: out of fold (5 GroupKFold folds by shape) at a few score gaps, and on the held-out
probes (the bf16 rr validation shapes and the LLM suite) at the gaps the shipped models used.

    PYTHONPATH=src python benchmarks/lt_features_oof.py [--out FILE.json]
"""

import argparse

import pandas as pd

from tilepick.data.io import write_json
from tilepick.features import lt_entries as E
from tilepick.model import lt_ranker as L

R = "benchmarks/results/"
TRAIN = [R + "cublaslt_probe_llm_bf16_h200_a77a154.json.gz",
         R + "cublaslt_probe_train_bf16_h200_2ffff36.json.gz",
         R + "cublaslt_probe_train2_bf16_h200_6ed9d62.json.gz"]
HELD = {"validation_rr": R + "cublaslt_probe_validation_rr_h200_e2492d3.json.gz",
        "suite": R + "cublaslt_probe_suite_h200_b12542b.json.gz"}
NEW = ("wave_fill", "eff_m_cluster", "eff_n_cluster", "tile_area_vs_first", "tile_m_vs_first",
       "waves_vs_first")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args()
    df = pd.concat([L.probe_frame(p) for p in TRAIN], ignore_index=True)
    held = {k: L.probe_frame(p) for k, p in HELD.items()}
    full = E.FEATURES
    lists = {"schema 1": tuple(f for f in full if f.name not in NEW), "schema 2": full}
    rows = []
    try:
        for name, feats in lists.items():
            E.FEATURES, E.FEATURE_NAMES = feats, tuple(f.name for f in feats)
            for seed in map(int, args.seeds.split(",")):
                oof = L.out_of_fold(df, seeds=(seed,))
                row = {"features": name, "seed": seed}
                for d in (0.0, 0.2, 0.3, 0.5):
                    s = L.summary(L.choices(df, oof, d))
                    row[f"oof gap {d}"] = s["chosen_geomean"]
                    row[f"oof gap {d} < 0.97x"] = s["chosen_below_0.97"]
                booster = L._train(df, seeds=(seed,))
                for h, hf in held.items():
                    for d in (0.2, 0.3):
                        s = L.summary(L.choices(hf, booster.predict(E.compute(hf)), d))
                        row[f"{h} gap {d}"] = s["chosen_geomean"]
                        row[f"{h} gap {d} < 0.97x"] = s["chosen_below_0.97"]
                rows.append(row)
                print(row, flush=True)
    finally:
        E.FEATURES, E.FEATURE_NAMES = full, tuple(f.name for f in full)
    table = pd.DataFrame(rows).groupby("features").mean(numeric_only=True).drop(columns="seed")
    print(table.T.round(4).to_string())
    if args.out:
        write_json(args.out, {"train": TRAIN, "held_out": HELD, "shapes": int(df["spec"].nunique()),
                              "rows": rows, "mean_over_seeds": table.T.to_dict()})


if __name__ == "__main__":
    main()
