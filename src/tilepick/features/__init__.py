"""Model inputs for kernel selection: one declared table of vectorised feature formulas.

See :mod:`tilepick.features.table` for the table (and the rules of its kinds),
:mod:`tilepick.features.spec` for the spec saved beside models, and
:mod:`tilepick.features.candidates` for the fast per-problem candidate path.
"""

from tilepick.features.candidates import (CandidateTable, candidate_ids, candidate_table,
                                          space_configs)
from tilepick.features.columns import Columns, frame_columns
from tilepick.features.compute import FEATURE_INDEX, FEATURE_NAMES, assemble, compute, frame_matrix
from tilepick.features.spec import FeatureSchemaError, FeatureSpec, current_spec
from tilepick.features.table import FEATURE_SCHEMA_VERSION, FEATURES, KINDS, Feature

__all__ = ["FEATURES", "FEATURE_NAMES", "FEATURE_INDEX", "FEATURE_SCHEMA_VERSION", "KINDS",
           "Feature", "FeatureSpec", "FeatureSchemaError", "current_spec", "Columns",
           "frame_columns", "compute", "assemble", "frame_matrix", "CandidateTable",
           "candidate_table", "candidate_ids", "space_configs"]
