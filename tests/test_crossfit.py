"""Cross-fitted efficiency (tilepick.model.metrics.crossfit): each round of a pass scored
against the config that is best over the other rounds, hand-computed cases."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tilepick.model import metrics


def _ds(problems):
    """A dataset stand-in: ``problems`` is a list of per-problem lists of round times (None
    for a row without them)."""
    rounds = [r for rows in problems for r in rows]
    sizes = np.array([len(rows) for rows in problems])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    return SimpleNamespace(frame=pd.DataFrame({"round_ms": rounds}), starts=starts,
                           sizes=sizes, n_problems=len(problems))


def test_the_pick_that_is_best_every_time_scores_one():
    ds = _ds([[[1.0, 1.1, 1.0, 1.2], [2.0, 2.0, 2.1, 2.0]]])
    cf = metrics.crossfit(ds, np.array([1.0, 0.0]), ks=(1, 2))
    assert cf["crossfit_top1"].iloc[0] == pytest.approx(1.0)
    assert cf["crossfit_top2"].iloc[0] == pytest.approx(1.0)


def test_a_slower_pick_scores_its_round_ratios_median():
    # the oracle (row 0) is best on any 3 of 4 rounds; the pick is row 1
    t0, t1 = [1.0, 1.0, 1.0, 1.0], [1.25, 2.0, 1.6, 1.1]
    ds = _ds([[t0, t1]])
    cf = metrics.crossfit(ds, np.array([0.0, 1.0]), ks=(1,))
    assert cf["crossfit_top1"].iloc[0] == pytest.approx(np.median(np.divide(t0, t1)))


def test_two_configs_of_one_speed_are_not_a_loss_the_best_median_makes_them():
    """The winner's curse: two configs of the same true speed (1.0) with noisy rounds. The
    best median picks the luckier one as the oracle, and the pick reads 1% slow; scored on
    held-out rounds, the pick is not slower."""
    a = [0.97, 1.00, 1.03, 0.98, 1.02]   # median 1.00: the usual oracle
    b = [1.01, 0.99, 1.02, 1.04, 1.00]   # median 1.01: the model's pick
    ds = _ds([[a, b]])
    assert np.median(a) / np.median(b) == pytest.approx(1.00 / 1.01)
    cf = metrics.crossfit(ds, np.array([0.0, 1.0]), ks=(1,))
    # leaving round r out, the oracle is a, except for r = 3 (b's median is then lower): the
    # ratios are 0.97/1.01, 1.00/0.99, 1.03/1.02, 1 (b against itself), 1.02/1.00
    want = np.median([0.97 / 1.01, 1.00 / 0.99, 1.03 / 1.02, 1.0, 1.02 / 1.00])
    assert cf["crossfit_top1"].iloc[0] == pytest.approx(want)
    assert want > 1.0


def test_top_k_is_chosen_on_the_other_rounds():
    # the model ranks rows 2, 1, 0; row 1 is faster than row 2 on every round
    rows = [[1.0] * 4, [1.5] * 4, [3.0] * 4]
    ds = _ds([rows])
    cf = metrics.crossfit(ds, np.array([0.0, 1.0, 2.0]), ks=(1, 2, 4))
    assert cf["crossfit_top1"].iloc[0] == pytest.approx(1 / 3)
    assert cf["crossfit_top2"].iloc[0] == pytest.approx(1 / 1.5)
    assert cf["crossfit_top4"].iloc[0] == pytest.approx(1.0)   # more than it has: every row


def test_fixed_picks_and_problems_without_rounds():
    good = [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    no_rounds = [None, [1.0, 1.0, 1.0]]
    ragged = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    too_few = [[1.0, 1.0], [1.0, 1.0]]
    ds = _ds([good, no_rounds, ragged, too_few])
    scores = np.zeros(8)
    cublas = np.array([1, -1, 4, -1])   # absolute rows; -1: no such candidate
    cf = metrics.crossfit(ds, scores, ks=(1,), fixed={"cublas": cublas})
    assert cf["crossfit_cublas"].iloc[0] == pytest.approx(0.5)
    assert cf["crossfit_top1"].iloc[0] == pytest.approx(1.0)
    assert cf.iloc[1:][["crossfit_top1", "crossfit_cublas"]].isna().all().all()


def test_a_frame_without_the_column_gives_nothing():
    ds = SimpleNamespace(frame=pd.DataFrame({"x": [1, 2]}), starts=np.array([0]),
                         sizes=np.array([2]), n_problems=1)
    cf = metrics.crossfit(ds, np.array([1.0, 0.0]), ks=(1,))
    assert cf["crossfit_top1"].isna().all()


def test_noise_ceiling_is_one_for_a_clear_winner_and_below_for_a_tie():
    clear = [[1.0, 1.1, 0.9, 1.0, 1.05], [2.0, 2.1, 1.9, 2.0, 2.2]]      # never overtaken
    tie = [[0.97, 1.00, 1.03, 0.98, 1.02], [1.01, 0.99, 1.02, 1.04, 1.00]]
    alone = [[1.0, 1.2, 0.8]]
    ds = _ds([clear, tie, alone, [None, [1.0, 1.0, 1.0]]])
    c = metrics.noise_ceiling(ds, draws=500, seed=1)
    assert c[0] == pytest.approx(1.0) and c[2] == pytest.approx(1.0)
    assert 0.97 < c[1] < 1.0          # the true best loses to its twin's lucky draws
    assert np.isnan(c[3])              # a row without rounds: no pass to resample
    assert np.array_equal(c, metrics.noise_ceiling(ds, draws=500, seed=1), equal_nan=True)
