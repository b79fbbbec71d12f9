#!/usr/bin/env python3
"""Writes tests/data/sklearn/: small scikit-learn models converted with skl2onnx, their inputs and
scikit-learn's own predictions, for tests/e2e/sklearn_test.cpp (the ai.onnx.ml operators).

Each model trains on fixed-seed synthetic data. A folder <name>/ holds
    model.onnx          the converted model (ZipMap left out: zipmap=False, see below)
    in_<input>.npy      one file per model input, named after it (strings as unicode arrays)
    out_<output>.npy    scikit-learn's result for that output: labels (int64 or unicode) from
                        predict(), probabilities from predict_proba() (float64), regression
                        values from predict(), k-means distances from transform()
    keys_<output>.npy   for an output that is a sequence of maps (ZipMap's), the maps' keys in
                        the order of out_<output>.npy's columns (the classifier's classes_)
and README.md lists the models and the package versions that made them.

Needs scikit-learn, skl2onnx, onnx and numpy (pandas for the ColumnTransformer pipelines); it
does not belong to the build. Make a separate environment:

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn skl2onnx onnx==1.23.2 \
        numpy pandas onnxruntime
    /tmp/skl/bin/python tools/make_sklearn_models.py [--out tests/data/sklearn] [--only A,B]

--only rewrites only the named folders (README.md keeps the other rows as they are).

onnxruntime is optional: when present, its results are checked against scikit-learn's too and
the largest differences printed (a reference point for polyinfer's tolerances).

Classifiers are converted with options {'zipmap': False}: the probabilities tensor is what the
operators under test compute. The *_zipmap folders keep skl2onnx's default, a ZipMap at the end
that turns the probabilities into a sequence of maps class -> probability (one per row).
"""
import argparse
import os
import pathlib
import shutil
import warnings

import numpy as np
import onnx
import sklearn
import skl2onnx
from skl2onnx import convert_sklearn, to_onnx
from skl2onnx.common.data_types import FloatTensorType, StringTensorType

warnings.filterwarnings("ignore")  # convergence and deprecation chatter

# skl2onnx 1.20 with numpy 2 hands numpy booleans and unsigned ints to onnx.helper.make_node in
# the HistGradientBoosting converter, which onnx 1.23 refuses; plain ints are what it means.
import skl2onnx.common._container as _container  # noqa: E402

_make_node = _container.make_node


def _plain_ints(v):
    if isinstance(v, list):
        return [int(x) if isinstance(x, (bool, np.bool_, np.integer)) else x for x in v]
    return v


def _make_node_with_ints(*args, **kwargs):
    return _make_node(*args, **{k: _plain_ints(v) for k, v in kwargs.items()})


_container.make_node = _make_node_with_ints

OPSETS = {"": 17, "ai.onnx.ml": 3}
ONLY = set()    # --only: the folders to rewrite
OLD_ROWS = {}   # README.md's rows of the others, kept
NO_ZIPMAP = {"zipmap": False}


def classification(n, features, classes, seed):
    from sklearn.datasets import make_classification
    x, y = make_classification(n_samples=n, n_features=features, n_informative=features - 1,
                               n_redundant=0, n_classes=classes, n_clusters_per_class=1,
                               random_state=seed)
    return x.astype(np.float32), y


def regression(n, features, seed):
    from sklearn.datasets import make_regression
    x, y = make_regression(n_samples=n, n_features=features, noise=5.0, random_state=seed)
    return x.astype(np.float32), y


def save(out, name, onx, inputs, expected, note, keys=None):
    """Writes folder `name`; `keys` gives, per sequence-of-maps output, the maps' keys in the
    order of its expected matrix's columns."""
    keys = keys or {}
    if ONLY and name not in ONLY:
        return OLD_ROWS.get(name, f"| `{name}` | {note} | ? |")
    folder = out / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    onnx.checker.check_model(onx)
    (folder / "model.onnx").write_bytes(onx.SerializeToString())
    for key, value in inputs.items():
        np.save(folder / f"in_{key}.npy", value)
    names = [o.name for o in onx.graph.output]
    for key, value in expected.items():
        assert key in names, (name, key, names)
        np.save(folder / f"out_{key}.npy", value)
    for key, value in keys.items():
        np.save(folder / f"keys_{key}.npy", value)
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
        got = dict(zip(names, sess.run(None, inputs)))
        diffs = []
        for key, value in expected.items():
            if key in keys:  # a list of dicts, one per row
                got[key] = [[row[k] for k in keys[key].tolist()] for row in got[key]]
            g = np.asarray(got[key]).reshape(np.asarray(value).shape)
            if value.dtype.kind in "fc":
                diffs.append(f"{key} max|d| {np.max(np.abs(g.astype(np.float64) - value)):.2e}")
            else:
                diffs.append(f"{key} mismatches {int(np.sum(g != value))}")
        print(f"{name}: onnxruntime vs scikit-learn: {', '.join(diffs)}")
    except ImportError:
        print(f"{name}: written")
    sizes = sum(f.stat().st_size for f in folder.iterdir())
    return f"| `{name}` | {note} | {sizes // 1024} KB |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent /
                                             "tests" / "data" / "sklearn"))
    parser.add_argument("--only", default="", help="comma-separated folders to rewrite")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    ONLY.update(n for n in args.only.split(",") if n)
    readme_path = out / "README.md"
    if ONLY and readme_path.exists():
        for line in readme_path.read_text().splitlines():
            if line.startswith("| `"):
                OLD_ROWS[line.split("`")[1]] = line

    from sklearn.cluster import KMeans
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,
                                  HistGradientBoostingClassifier, RandomForestClassifier,
                                  RandomForestRegressor)
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import (Binarizer, LabelEncoder, Normalizer, OneHotEncoder,
                                       OrdinalEncoder, StandardScaler)
    from sklearn.svm import SVC, SVR
    from sklearn.tree import DecisionTreeClassifier

    def classifier(name, model, x, y, n_test, note):
        model.fit(x[n_test:], y[n_test:])
        xt = x[:n_test]
        onx = to_onnx(model, xt[:1], options={id(model): NO_ZIPMAP}, target_opset=OPSETS)
        rows.append(save(out, name, onx, {"X": xt},
                         {"label": model.predict(xt).astype(np.int64),
                          "probabilities": model.predict_proba(xt)}, note))

    def classifier_zipmap(name, model, x, y, n_test, note):
        # skl2onnx's default conversion: a ZipMap at the end.
        model.fit(x[n_test:], y[n_test:])
        xt = x[:n_test]
        onx = to_onnx(model, xt[:1], target_opset=OPSETS)
        labels = model.predict(xt)
        labels = labels.astype(np.str_ if labels.dtype.kind in "OUS" else np.int64)
        classes = model.classes_
        classes = classes.astype(np.str_ if classes.dtype.kind in "OUS" else np.int64)
        rows.append(save(out, name, onx, {"X": xt},
                         {"output_label": labels, "output_probability": model.predict_proba(xt)},
                         note, keys={"output_probability": classes}))

    def regressor(name, model, x, y, n_test, note):
        model.fit(x[n_test:], y[n_test:])
        xt = x[:n_test]
        onx = to_onnx(model, xt[:1], target_opset=OPSETS)
        rows.append(save(out, name, onx, {"X": xt},
                         {onx.graph.output[0].name: model.predict(xt).reshape(-1, 1)}, note))

    x, y = classification(340, 6, 3, seed=0)
    classifier("rf_classifier", RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0),
               x, y, 40, "RandomForestClassifier, 3 classes (TreeEnsembleClassifier, SUM of votes)")
    classifier_zipmap("rf_zipmap", RandomForestClassifier(n_estimators=8, max_depth=5,
                                                          random_state=0),
                      x, y, 40, "RandomForestClassifier, 3 classes, default conversion: ZipMap "
                      "to a sequence of map(int64, float)")
    x, y = regression(340, 6, seed=1)
    regressor("rf_regressor", RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0),
              x, y, 40, "RandomForestRegressor (TreeEnsembleRegressor, AVERAGE-like weights)")
    x, y = classification(340, 5, 2, seed=2)
    classifier("gb_binary", GradientBoostingClassifier(n_estimators=20, max_depth=3,
                                                       random_state=0),
               x, y, 40, "GradientBoostingClassifier, 2 classes (one score, LOGISTIC, base value)")
    x, y = classification(340, 5, 3, seed=3)
    classifier("gb_multiclass", GradientBoostingClassifier(n_estimators=10, max_depth=3,
                                                           random_state=0),
               x, y, 40, "GradientBoostingClassifier, 3 classes (SOFTMAX, base values)")
    x, y = regression(340, 5, seed=4)
    regressor("gb_regressor", GradientBoostingRegressor(n_estimators=20, max_depth=3,
                                                        random_state=0),
              x, y, 40, "GradientBoostingRegressor (TreeEnsembleRegressor, SUM, base value)")

    # Missing values: the trees learn which way a NaN goes (nodes_missing_value_tracks_true).
    x, y = classification(400, 5, 2, seed=5)
    rng = np.random.RandomState(5)
    x[rng.rand(*x.shape) < 0.25] = np.nan
    classifier("hgb_nan", HistGradientBoostingClassifier(max_iter=15, max_depth=4,
                                                         random_state=0),
               x, y, 60, "HistGradientBoostingClassifier on data with NaNs (missing-value tracks)")

    x, y = classification(300, 4, 3, seed=6)
    classifier("svc_rbf", SVC(probability=True, random_state=0), x, y, 40,
               "SVC(probability=True), RBF kernel, 3 classes (libsvm's probability coupling)")
    x, y = classification(300, 4, 2, seed=7)
    classifier("svc_poly_binary", SVC(kernel="poly", degree=3, probability=True, random_state=0),
               x, y, 40, "SVC(probability=True), polynomial kernel, 2 classes")
    x, y = regression(300, 4, seed=8)
    regressor("svr", SVR(kernel="rbf", C=50.0), x, y, 40, "SVR, RBF kernel (SVMRegressor)")

    x, y = classification(300, 5, 3, seed=9)
    classifier("logreg_multiclass", LogisticRegression(max_iter=500), x, y, 40,
               "LogisticRegression, 3 classes (LinearClassifier SOFTMAX, Normalizer L1)")
    x, y = classification(300, 5, 2, seed=10)
    classifier("logreg_binary", LogisticRegression(max_iter=500), x, y, 40,
               "LogisticRegression, 2 classes (LinearClassifier LOGISTIC)")
    x, y = classification(300, 5, 3, seed=15)
    classifier_zipmap("logreg_zipmap_strings", LogisticRegression(max_iter=500), x,
                      np.array(["ant", "bee", "cow"])[y], 40,
                      "LogisticRegression, 3 string classes, default conversion: ZipMap to a "
                      "sequence of map(string, float)")

    x, _ = classification(300, 4, 3, seed=11)
    km = KMeans(n_clusters=4, n_init=4, random_state=0).fit(x[40:])
    xt = x[:40]
    onx = to_onnx(km, xt[:1], target_opset=OPSETS)
    rows.append(save(out, "kmeans", onx, {"X": xt},
                     {"label": km.predict(xt).astype(np.int64), "scores": km.transform(xt)},
                     "KMeans, 4 clusters (standard ONNX operators only)"))

    # Preprocessing chain: Imputer, Scaler, Normalizer (MAX, negative values in), Binarizer,
    # LinearRegressor.
    x, y = regression(300, 5, seed=12)
    x[np.random.RandomState(12).rand(*x.shape) < 0.1] = np.nan
    pipe = Pipeline([("impute", SimpleImputer()), ("scale", StandardScaler()),
                     ("norm", Normalizer(norm="max")), ("reg", LinearRegression())])
    regressor("preprocess_linreg", pipe, x, y, 40,
              "SimpleImputer, StandardScaler, Normalizer(max), LinearRegression")
    pipe = Pipeline([("scale", StandardScaler()), ("bin", Binarizer(threshold=0.1)),
                     ("lr", LogisticRegression(max_iter=500))])
    x, y = classification(300, 5, 2, seed=13)
    classifier("binarizer_logreg", pipe, x, y, 40,
               "StandardScaler, Binarizer, LogisticRegression")

    # A string column: OneHotEncoder (cats_strings) and StandardScaler in a ColumnTransformer,
    # string class labels.
    import pandas as pd
    rng = np.random.RandomState(14)
    n = 300
    colors = rng.choice(["red", "green", "blue", "violet"], n)
    a = rng.randn(n).astype(np.float32)
    b = rng.randn(n).astype(np.float32)
    score = a - 0.5 * b + (colors == "red") * 1.5 - (colors == "blue") * 1.0
    labels = np.where(score > 0.3, "yes", np.where(score < -0.7, "no", "maybe"))
    df = pd.DataFrame({"color": colors, "a": a, "b": b})
    inits = [("color", StringTensorType([None, 1])), ("a", FloatTensorType([None, 1])),
             ("b", FloatTensorType([None, 1]))]
    test = {"color": colors[:40].reshape(-1, 1).astype(np.str_), "a": a[:40].reshape(-1, 1),
            "b": b[:40].reshape(-1, 1)}
    # One test row of a color the encoder never saw: handle_unknown='ignore' gives zeros.
    test["color"][3, 0] = "orange"
    dft = pd.DataFrame({"color": test["color"][:, 0], "a": a[:40], "b": b[:40]})
    pipe = Pipeline([("ct", ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["color"]),
        ("num", StandardScaler(), ["a", "b"])])), ("lr", LogisticRegression(max_iter=500))])
    pipe.fit(df.iloc[40:], labels[40:])
    onx = convert_sklearn(pipe, initial_types=inits, options={id(pipe): NO_ZIPMAP},
                          target_opset=OPSETS)
    rows.append(save(out, "column_transformer", onx, test,
                     {"label": pipe.predict(dft).astype(np.str_),
                      "probabilities": pipe.predict_proba(dft)},
                     "ColumnTransformer(OneHotEncoder on strings, StandardScaler), "
                     "LogisticRegression, string labels"))

    # OrdinalEncoder (LabelEncoder operators) and SimpleImputer before a decision tree with
    # string labels; NaNs in the numeric columns.
    a2, b2 = a.copy(), b.copy()
    a2[rng.rand(n) < 0.15] = np.nan
    df2 = pd.DataFrame({"color": colors, "a": a2, "b": b2})
    test2 = {"color": colors[:40].reshape(-1, 1).astype(np.str_), "a": a2[:40].reshape(-1, 1),
             "b": b2[:40].reshape(-1, 1)}
    pipe = Pipeline([("ct", ColumnTransformer([("cat", OrdinalEncoder(), ["color"]),
                                               ("num", SimpleImputer(), ["a", "b"])])),
                     ("dt", DecisionTreeClassifier(max_depth=5, random_state=0))])
    pipe.fit(df2.iloc[40:], labels[40:])
    onx = convert_sklearn(pipe, initial_types=inits, options={id(pipe): NO_ZIPMAP},
                          target_opset=OPSETS)
    rows.append(save(out, "ordinal_tree", onx, test2,
                     {"label": pipe.predict(df2.iloc[:40]).astype(np.str_),
                      "probabilities": pipe.predict_proba(df2.iloc[:40])},
                     "ColumnTransformer(OrdinalEncoder, SimpleImputer), DecisionTreeClassifier, "
                     "string labels"))

    # sklearn's LabelEncoder on its own: strings to their class index (ai.onnx.ml LabelEncoder
    # opset 2); an unseen string gets the default, -1.
    le = LabelEncoder().fit(["cat", "dog", "bird", "fish"])
    words = np.array(["dog", "bird", "cat", "fish", "dog", "cat"], dtype=np.str_)
    onx = convert_sklearn(le, initial_types=[("X", StringTensorType([None]))],
                          target_opset={"": 17, "ai.onnx.ml": 2})
    rows.append(save(out, "label_encoder", onx, {"X": words},
                     {onx.graph.output[0].name: le.transform(words).astype(np.int64)},
                     "LabelEncoder (strings to class indices)"))

    readme = [
        "# scikit-learn models for tests/e2e/sklearn_test.cpp",
        "",
        "Written by `tools/make_sklearn_models.py` (see its docstring for the layout and how to",
        "run it). Each folder: `model.onnx`, `in_<input>.npy`, and scikit-learn's own results",
        "`out_<output>.npy` (labels from `predict`, probabilities from `predict_proba`).",
        "Classifiers are converted with `zipmap=False`, but for the `*_zipmap*` folders: those",
        "keep skl2onnx's default ZipMap, whose output is a sequence of maps class -> probability;",
        "`keys_<output>.npy` holds the classes in the order of `out_<output>.npy`'s columns.",
        "",
        f"Made with scikit-learn {sklearn.__version__}, skl2onnx {skl2onnx.__version__}, "
        f"onnx {onnx.__version__}, numpy {np.__version__}; opsets {OPSETS}.",
        "",
        "| model | what | size |",
        "|---|---|---|",
    ] + rows
    (out / "README.md").write_text("\n".join(readme) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
