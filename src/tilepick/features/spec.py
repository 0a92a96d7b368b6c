"""The feature spec: what a saved model was trained on, generated from the feature table.

A model file is only meaningful next to the exact ordered feature list and encodings it was
trained with. The spec is written beside every model and checked on load, so a model trained by
an older (or newer) tilepick is refused with the difference named, instead of being fed columns
it never saw.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from tilepick.features.columns import DTYPE_CODES, FAMILY_CODES, LAYOUT_CODES
from tilepick.features.table import FEATURE_SCHEMA_VERSION, FEATURES


class FeatureSchemaError(ValueError):
    """A saved model whose feature spec does not match the code's; the message names how."""


@dataclass(frozen=True)
class FeatureSpec:
    schema_version: int
    names: tuple[str, ...]
    kinds: tuple[str, ...]
    categorical: tuple[str, ...]
    encodings: dict

    @property
    def families(self) -> tuple[str, ...]:
        """The kernel families the model was trained to know (its family encoding)."""
        return tuple(self.encodings.get("family", ()))

    @property
    def digest(self) -> str:
        payload = json.dumps([self.schema_version, self.names, self.kinds, self.categorical,
                              self.encodings], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "digest": self.digest,
                "names": list(self.names), "kinds": list(self.kinds),
                "categorical": list(self.categorical), "encodings": self.encodings}

    @classmethod
    def from_dict(cls, d: dict) -> "FeatureSpec":
        try:
            return cls(int(d["schema_version"]), tuple(d["names"]), tuple(d["kinds"]),
                       tuple(d["categorical"]), dict(d["encodings"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise FeatureSchemaError(f"malformed feature spec: {exc!r}") from exc

    def check_matches(self, expected: "FeatureSpec", where: str = "model") -> None:
        """Raise FeatureSchemaError naming the first differences between self and expected.
        One difference is allowed: a family list that is a prefix of the code's (families are
        only ever appended, so a model trained before one existed keeps its codes; it never
        ranks the new family: :attr:`families` bounds its candidates)."""
        problems = []
        if self.schema_version != expected.schema_version:
            problems.append(f"schema version {self.schema_version} != code's "
                            f"{expected.schema_version}")
        if self.names != expected.names:
            missing = [n for n in expected.names if n not in self.names]
            extra = [n for n in self.names if n not in expected.names]
            if missing:
                problems.append(f"features the code computes but the {where} lacks: {missing}")
            if extra:
                problems.append(f"features the {where} has but the code does not compute: {extra}")
            if not missing and not extra:
                first = next(i for i, (a, b) in enumerate(zip(self.names, expected.names))
                             if a != b)
                problems.append(f"feature order differs from position {first} "
                                f"({self.names[first]!r} vs {expected.names[first]!r})")
        if self.categorical != expected.categorical:
            problems.append(f"categorical features {list(self.categorical)} != "
                            f"{list(expected.categorical)}")
        for key in sorted(set(self.encodings) | set(expected.encodings)):
            mine, code = self.encodings.get(key), expected.encodings.get(key)
            if key == "family" and mine and code and code[:len(mine)] == mine:
                continue   # families appended since: the model's codes are unchanged
            if mine != code:
                problems.append(f"encoding of {key} {self.encodings.get(key)} != code's "
                                f"{expected.encodings.get(key)}")
        if problems:
            raise FeatureSchemaError(f"{where} feature schema does not match this tilepick: "
                                     + "; ".join(problems)
                                     + " (retrain the model with `tilepick train`)")


def current_spec() -> FeatureSpec:
    """The spec of the feature table as the code declares it now."""
    return FeatureSpec(
        schema_version=FEATURE_SCHEMA_VERSION,
        names=tuple(f.name for f in FEATURES),
        kinds=tuple(f.kind for f in FEATURES),
        categorical=tuple(f.name for f in FEATURES if f.categorical),
        encodings={"family": list(FAMILY_CODES), "dtype": list(DTYPE_CODES),
                   "layout": list(LAYOUT_CODES)})
