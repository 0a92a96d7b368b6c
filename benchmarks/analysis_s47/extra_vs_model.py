"""Session 47: a model that never saw the extra problems against the out-of-fold models that
trained on the rest of them, problem by problem, scored the same way (CPU, ~30 s).

`benchmarks/extra_data_oof.py` scores the extra problems out of fold (five fold models, each
trained on the base data and 80% of the extra problems); its docstring points at `tilepick
validate` for the model without them, but `validate` scores inside each problem's latest pass
and the out-of-fold scores do not, so the two means are not of one rule. Here the model is
scored on the extra files as `extra_data_oof.py` loads them and paired with its per-problem
efficiencies.

    python benchmarks/analysis_s47/extra_vs_model.py OOF_JSON MODEL_DIR [EXTRA_FILE ...]

EXTRA_FILE: the files the out-of-fold run read, where its folders have grown since (default:
the JSON's ``extra``). Session 47: `benchmarks/results/extra_data_oof_low_flop_layouts_s47.json.gz`
read `train_low_flop_{cc,cr,rc}/` when each held `chunk-001` and `retime-001` only (rc's
`retime-002` came after), so pass those six files; the model: session 46's bf16 one
(`git show deb73b7~1:models/gemm_bf16_h200/<file>` for each model file into a folder).
"""

import json
import sys

import numpy as np

from tilepick.data.io import open_text
from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores
from tilepick.problem import GemmProblem


def main(oof_path, model, *files):
    with open_text(oof_path) as f:
        oof = json.load(f)
    after = oof["extra_out_of_fold"]["gated"]["per_problem"]
    pred = Predictor(model)
    ds = load(list(files) or oof["extra"], pred.dtype, pred.arch)
    t = metrics.per_problem(ds.problem_index, ds.tflops, model_scores(pred, ds))
    before = dict(zip(ds.problem_keys[t["problem"]], t["efficiency"]))
    keys = [k for k in before if k in after]
    layouts = np.array([GemmProblem.from_key(k).layout for k in keys])
    a = np.array([before[k] for k in keys])
    b = np.array([after[k] for k in keys])
    print("| problems | count | model | out of fold with the extra data | difference |")
    print("|---|---|---|---|---|")
    for name in ["all", *sorted(set(layouts))]:
        m = np.ones(len(keys), bool) if name == "all" else layouts == name
        d = b[m] - a[m]
        print(f"| {name} | {m.sum()} | {100 * a[m].mean():.2f} | {100 * b[m].mean():.2f} | "
              f"{100 * d.mean():+.2f} +- {100 * d.std(ddof=1) / np.sqrt(m.sum()):.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
