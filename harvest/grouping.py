"""Failing runs into groups: pure (no Django), over already-loaded runs.

A run's **signature** is what failed and how it ran: the failed checks (scorer names),
negative feedback (``feedback:<name>``), judge abstentions (``abstained:<criterion>``),
the shape of its tool calls (names in order, a repeated call written once with ``+``) and
its error type (``TimeoutError`` of ``TimeoutError: upstream took 30 s``). Runs of two
signatures are never in one group.

Inside a signature, runs are grouped by the similarity of their inputs: scikit-learn's
TF-IDF (words of two letters or more, digits left out so that "room 12" and "room 31"
read the same; sublinear term frequency; l2 norm) and its average-linkage agglomerative
clustering on cosine distance, cut at ``1 - SIMILARITY``. The clustering is quadratic, so
it runs on at most ``SAMPLE`` distinct inputs at a time: the groups found in the sample
take every other input whose cosine similarity to a group's centroid is at least
``SIMILARITY``; the inputs left over make the next sample, until none is left. The
result depends only on the runs given (their order included), never on a random draw.

A built signature keeps its vocabulary with the idf of each term (``Vocabulary``) and
each group its centroid (the top ``CENTROID_TERMS`` terms, l2-normed): ``assign`` places
a new run in the nearest group of its signature at ``SIMILARITY`` or more, or says it
belongs to none (a new group), without fitting anything again.
"""

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

# scikit-learn is imported where it is used, not here: it is the largest part of what a
# worker imports when it starts (1.2 of 3.5 s of CPU on the benchmarks' machine), every
# worker imports this module, and only a build of the failure groups needs it. A worker
# restarted by `serve` is ready that much sooner (BENCHMARKS.md, the soak).

# Inputs of one group are at least this similar (cosine of TF-IDF vectors) to its centroid.
SIMILARITY = 0.3
# Distinct inputs clustered at once: AgglomerativeClustering holds SAMPLE² distances.
SAMPLE = 1500
CENTROID_TERMS = 200
VOCABULARY_TERMS = 20_000
TEXT_MAX = 2000
TOOLS_MAX = 12
REPRESENTATIVES = 3
REASONS_MAX = 5
TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"
_ERROR_TYPE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit|Interrupt|Warning)?)\s*(?::|$)")


@dataclass(frozen=True)
class FailingRun:
    """One failing run as grouping sees it: ``key`` is the caller's id (a trace pk)."""

    key: int
    signature: str
    text: str
    reasons: tuple = ()  # ((scorer, reason), ...) of its failing checks


@dataclass
class Group:
    signature: str
    keys: list
    centroid: dict  # {term: weight}, l2-normed
    representatives: list  # up to three keys, nearest the centroid first
    reasons: list = field(default_factory=list)  # [{"scorer", "reason", "n"}], most frequent first
    label: str = ""


@dataclass
class Vocabulary:
    """What a signature's groups were built with: ``{term: idf}``."""

    signature: str
    idf: dict


def tool_shape(tool_names):
    """The shape of a run's tool calls: ``search+ > book_room`` (a name repeated in a row is written once, with +)."""
    shape = []
    for name in tool_names:
        if shape and shape[-1].rstrip("+") == name:
            shape[-1] = name + "+"
        else:
            shape.append(name)
    return shape[:TOOLS_MAX]


def error_type(status, error):
    """``TimeoutError`` of ``TimeoutError: ...``; ``error`` when a failed run gave no type; "" when it did not fail."""
    if status != "error" and not error:
        return ""
    match = _ERROR_TYPE.match(error or "")
    return match.group(1)[:100] if match else "error"


def signature_parts(*, failed=(), feedback=(), abstained=(), tools=(), error=""):
    """The parts of a signature: sorted, de-duplicated check names, the tool shape, the error type."""
    checks = sorted({*failed, *(f"feedback:{n}" for n in feedback), *(f"abstained:{n}" for n in abstained)})
    return {"checks": checks, "tools": tool_shape(tools), "error": error}


def signature_text(parts):
    """A signature as one line: ``checks: json_valid, tool_choice | tools: search > book | error: none``."""
    checks = ", ".join(parts["checks"]) or "none"
    tools = " > ".join(parts["tools"]) or "none"
    return f"checks: {checks} | tools: {tools} | error: {parts['error'] or 'none'}"[:500]


def input_text(value):
    """The words of a run's input: a text as is, the texts inside a JSON value, joined (``TEXT_MAX`` characters)."""
    out = []

    def walk(item):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            for inner in item.values():
                walk(inner)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)

    walk(value)
    return " ".join(out)[:TEXT_MAX]


def _vectorizer(vocabulary=None):
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        token_pattern=TOKEN_PATTERN,
        sublinear_tf=True,
        max_features=VOCABULARY_TERMS,
        vocabulary=vocabulary,
        dtype=np.float32,
    )


def _cluster_sample(matrix):
    """Labels of the rows of a small dense matrix by average-linkage clustering on cosine distance."""
    if matrix.shape[0] == 1:
        return np.zeros(1, dtype=int)
    from sklearn.cluster import AgglomerativeClustering

    clustering = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=1 - SIMILARITY
    )
    # A row of zeros (no word in the vocabulary) has no cosine: it is given one tiny weight of its own.
    dense = matrix.toarray()
    empty = ~dense.any(axis=1)
    if empty.any():
        dense = np.hstack([dense, empty[:, None].astype(dense.dtype) * 1e-6])
    return clustering.fit_predict(dense)


def _centroids(matrix, labels):
    """One l2-normed centroid row per label (a dense array, labels in order 0..k-1)."""
    k = int(labels.max()) + 1
    rows = []
    for label in range(k):
        mean = np.asarray(matrix[labels == label].mean(axis=0)).ravel()
        norm = np.linalg.norm(mean)
        rows.append(mean / norm if norm else mean)
    return np.vstack(rows)


def _distinct_clusters(matrix):
    """A cluster index for each row of ``matrix`` (distinct texts of one signature), and the centroids."""
    assigned = np.full(matrix.shape[0], -1, dtype=int)
    centroids = []
    while (assigned < 0).any():
        left = np.flatnonzero(assigned < 0)
        if len(left) > SAMPLE:
            # Evenly spaced over what is left: the result depends on the input order, not on chance.
            sample = left[np.linspace(0, len(left) - 1, SAMPLE).astype(int)]
        else:
            sample = left
        labels = _cluster_sample(matrix[sample])
        found = _centroids(matrix[sample], labels)
        offset = len(centroids)
        assigned[sample] = labels + offset
        centroids.extend(found)
        rest = np.flatnonzero(assigned < 0)
        if len(rest):
            similarity = np.asarray(matrix[rest] @ found.T)
            best = similarity.argmax(axis=1)
            close = similarity[np.arange(len(rest)), best] >= SIMILARITY
            assigned[rest[close]] = best[close] + offset
    return assigned, np.vstack(centroids)


def _top_terms(row, terms):
    top = np.argsort(row)[::-1][:CENTROID_TERMS]
    kept = {terms[i]: float(row[i]) for i in top if row[i] > 0}
    norm = math.sqrt(sum(w * w for w in kept.values()))
    return {t: round(w / norm, 6) for t, w in kept.items()} if norm else {}


def _reasons(runs):
    counts = Counter(pair for run in runs for pair in run.reasons)
    return [{"scorer": s, "reason": r, "n": n} for (s, r), n in counts.most_common(REASONS_MAX)]


def signature_groups(signature, runs):
    """``(groups, vocabulary)`` of the runs of one signature."""
    texts = [run.text for run in runs]
    distinct = list(dict.fromkeys(texts))
    index = {text: i for i, text in enumerate(distinct)}
    vectorizer = _vectorizer()
    try:
        matrix = vectorizer.fit_transform(distinct).tocsr()
    except ValueError:  # not one word in any input: one group of the signature
        return [group_of(signature, runs, {}, [r.key for r in runs[:REPRESENTATIVES]])], Vocabulary(signature, {})
    terms = vectorizer.get_feature_names_out()
    vocabulary = Vocabulary(signature, {t: round(float(w), 6) for t, w in zip(terms, vectorizer.idf_, strict=True)})
    assigned, centroids = _distinct_clusters(matrix)
    closeness = np.asarray(matrix.multiply(centroids[assigned]).sum(axis=1)).ravel()
    members = {}
    for run in runs:
        members.setdefault(int(assigned[index[run.text]]), []).append(run)
    groups = []
    for label, group_runs in members.items():
        ranked = sorted(group_runs, key=lambda r: (-closeness[index[r.text]], r.key))
        representatives = _representatives(ranked)
        groups.append(group_of(signature, group_runs, _top_terms(centroids[label], terms), representatives))
    return groups, vocabulary


def _representatives(ranked):
    """Three runs nearest the centroid, of distinct inputs when there are enough."""
    chosen, texts = [], set()
    for run in ranked:
        if run.text not in texts:
            chosen.append(run.key)
            texts.add(run.text)
        if len(chosen) == REPRESENTATIVES:
            return chosen
    return (chosen + [r.key for r in ranked if r.key not in chosen])[:REPRESENTATIVES]


def group_of(signature, runs, centroid, representatives):
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    label = ", ".join([t for t in centroid if t not in ENGLISH_STOP_WORDS][:4])
    return Group(signature, [r.key for r in runs], centroid, representatives, _reasons(runs), label)


def runs_group(runs):
    """``(groups, vocabularies)`` of ``runs`` (``FailingRun``): biggest groups first."""
    by_signature = {}
    for run in runs:
        by_signature.setdefault(run.signature, []).append(run)
    groups, vocabularies = [], []
    for signature, signature_runs in by_signature.items():
        found, vocabulary = signature_groups(signature, signature_runs)
        groups.extend(found)
        vocabularies.append(vocabulary)
    groups.sort(key=lambda g: (-len(g.keys), g.signature, g.keys[0]))
    return groups, vocabularies


def texts_vectors(texts, idf):
    """The TF-IDF vectors of ``texts`` over a built vocabulary, as ``[{term: weight}]``, l2-normed over every
    word of the text: a word the vocabulary lacks counts as the rarest term would, so that a text sharing
    one common word with a group is not read as made of that word alone ({} when no term is known)."""
    if not idf:
        return [{} for _ in texts]
    vectorizer = _vectorizer(vocabulary={t: i for i, t in enumerate(idf)})
    vectorizer.norm = None
    vectorizer.idf_ = np.fromiter(idf.values(), dtype=np.float64, count=len(idf))
    matrix = vectorizer.transform(texts).tocsr()
    analyze, rarest, terms = vectorizer.build_analyzer(), max(idf.values()), list(idf)
    vectors = []
    for text, a, b in zip(texts, matrix.indptr[:-1], matrix.indptr[1:], strict=True):
        unknown = Counter(token for token in analyze(text) if token not in idf)
        unknown_sq = sum(((1 + math.log(n)) * rarest) ** 2 for n in unknown.values())
        weights = matrix.data[a:b]
        norm = math.sqrt(float((weights**2).sum()) + unknown_sq)
        vectors.append({terms[i]: float(w) / norm for i, w in zip(matrix.indices[a:b], weights, strict=True)})
    return vectors


def cosine(vector, centroid):
    """Cosine of two l2-normed sparse vectors given as dicts."""
    if len(vector) > len(centroid):
        vector, centroid = centroid, vector
    return sum(w * centroid.get(t, 0.0) for t, w in vector.items())


def nearest(vector, centroids):
    """``(key, similarity)`` of the centroid (``{key: centroid}``) nearest ``vector``; ``(None, 0.0)`` for none."""
    best, best_key = 0.0, None
    for key, centroid in centroids.items():
        value = cosine(vector, centroid)
        if value > best:
            best, best_key = value, key
    return best_key, best


def assign_many(texts, idf, centroids):
    """For each text, ``(key, similarity)`` of the nearest centroid (``{key: centroid}``) at ``SIMILARITY`` or
    more, else ``(None, similarity)``: the run belongs to no group yet."""
    placed = []
    for vector in texts_vectors(texts, idf):
        key, value = nearest(vector, centroids)
        placed.append((key, value) if key is not None and value >= SIMILARITY else (None, value))
    return placed
