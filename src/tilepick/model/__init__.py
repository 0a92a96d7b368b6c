"""Learned kernel selection: training, evaluation, prediction and surrogate search.

Heavy dependencies (LightGBM, scikit-learn) are imported by the submodules that need them;
``from tilepick.model import Predictor`` loads only what prediction needs.
"""

from tilepick.features.spec import FeatureSchemaError
from tilepick.model.artifacts import ModelError
from tilepick.model.predictor import Predictor

__all__ = ["Predictor", "FeatureSchemaError", "ModelError"]
