"""The contracts plugins implement: backends, task loaders, oracles, scorers, checkers, interventions.

``Backend`` is a ``typing.Protocol`` (any object with ``identity``, ``capabilities`` and ``generate`` will
do). The others are base classes: a plugin subclasses them and overrides what it needs; the defaults
make the optional parts explicit, so the core never probes plugin objects with ``hasattr``.

Three kinds of judgement are kept apart, because they mean different things in a paper:
- an **Oracle** gives physics verdicts on claims (consistent / violated / abstain / unparsable / error);
  its records make the Physical-Consistency Rate;
- a **Scorer** grades a task's answers (MSQA accuracy), optionally after a model-graded stage (a judge);
- a **Checker** predicts verdicts without reference data (the verifier), beside the oracle, never in it.
Each declares the metrics it produces (:class:`Metric`); ``matpcr.results`` aggregates what is declared.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

from matpcr.records import Claim, Extraction, Item, Record, Request, Response, Score, Verdict

if TYPE_CHECKING:
    from matpcr.tasks import TaskConfig


@dataclass
class Control:
    """One validity-gate control (docs/oracles.md, "The validity gate"): claims a model might write about
    one reference, built independently of the oracle's prepared reference. ``kind`` is ``negative`` (a
    real mistake: the gate counts it caught when the item is judged violated) or ``positive`` (an honest
    answer: flagging it is a false alarm). ``values`` are the claimed numbers (in ``unit``, as a model
    would write it: "°", "cm⁻¹", "µm") or class words ("metastable"); the gate writes them into chains
    through the oracle's ``chain_templates``."""

    name: str
    kind: Literal["negative", "positive"]
    values: list[Any]
    unit: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Capabilities:
    images: bool = False
    max_images: int = 0


@runtime_checkable
class Backend(Protocol):
    """Generates whole batches, so HF/vLLM can batch and API backends can run concurrently."""

    identity: dict[str, Any]  # model id, revision or file hash, settings: part of every cache key
    capabilities: Capabilities

    def generate(self, requests: list[Request]) -> list[Response]: ...


@dataclass(frozen=True)
class Metric:
    """A metric a plugin declares (in the spirit of inspect_ai's ``@scorer(metrics=...)`` and lm-eval's
    ``metric_list``). ``aggregation``: ``mean`` of ``record.scores[name].value`` over records that have a
    value, or ``pcr`` / ``claim_rate`` / ``accuracy`` (the oracle verdict aggregates), ``claim_pcr``
    (consistent / checked claims), ``first_claim_pcr`` (the first checked claim only, the paper's
    single-claim PCR), ``chance`` (the distribution of ``verdict.details["p_chance"]``),
    ``chance_corrected_pcr`` ((PCR − p̄)/(1 − p̄), docs/statistics.md), ``corollary2`` (the PCR* range the
    gate's d̂/f̂ in ``params`` allow), ``balanced_accuracy`` (from ``details["true_class"]`` and
    ``details["claimed_class"]``) or ``detail_mean`` (the mean of ``details[name]`` over checked claims
    that carry it, e.g. an accuracy-style rank criterion). ``interval``: ``bootstrap`` (percentile,
    resampling sources) or ``none``."""

    name: str
    aggregation: Literal["mean", "pcr", "claim_rate", "accuracy", "claim_pcr", "first_claim_pcr", "chance",
                         "chance_corrected_pcr", "corollary2", "balanced_accuracy", "detail_mean"] = "mean"
    higher_is_better: bool = True
    interval: Literal["bootstrap", "none"] = "bootstrap"
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "aggregation": self.aggregation, "higher_is_better": self.higher_is_better,
               "interval": self.interval, "description": self.description}
        if self.params:
            out["params"] = dict(self.params)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Metric":
        """A metric as results.json stores it (``judged_by[TASK].metrics``)."""
        return cls(**{k: data[k] for k in ("name", "aggregation", "higher_is_better", "interval", "description",
                                           "params") if k in data})


class TaskLoader:
    """Loads a task's items. ``complete`` finishes one sampled item (reads its reference file, renders
    its image), so a run pays only for the items it uses; ``report`` is what the loader wants recorded
    in results.json (e.g. peak-finding counts)."""

    report: dict[str, Any] | None = None
    #: the data-directory folders it reads (``matpcr data ls`` shows which tasks use which set)
    data_sets: tuple[str, ...] = ()

    def load(self, config: "TaskConfig", data_dir: Path | None) -> list[Item]:
        raise NotImplementedError

    def complete(self, item: Item) -> Item:
        return item

    def cache_key(self, item: Item) -> str | None:
        """A key that changes whenever ``complete(item)`` would give another result (e.g. the reference
        file's hash, the loader's settings and a version of its code), so completed items can be kept on
        disk between runs; None (the default) keeps nothing."""
        return None


class _PlainLoader(TaskLoader):
    """Adapts a loader that only has ``load`` (the minimal third-party form)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.data_sets = tuple(getattr(inner, "data_sets", ()))

    def load(self, config: "TaskConfig", data_dir: Path | None) -> list[Item]:
        return self.inner.load(config, data_dir)


def as_loader(obj: Any) -> TaskLoader:
    return obj if isinstance(obj, TaskLoader) else _PlainLoader(obj)


class Oracle:
    """A physical check. Subclasses set ``name``, ``constraint``, the tolerance ``defaults`` and
    implement ``read`` (or ``extract``) and ``check``."""

    name: str = ""
    constraint: str = ""
    #: named tolerances with the paper's defaults; ``--oracle-args NAME.key=value`` overrides them
    defaults: dict[str, Any] = {}
    #: the tolerance the validity gate sweeps in its sensitivity grid, and the values it tries (empty:
    #: multiples of the default)
    tolerance_param: str | None = None
    sensitivity_values: tuple[float, ...] = ()
    #: what results.json reports for tasks checked by this oracle
    metrics: tuple[Metric, ...] = (
        Metric("pcr", "pcr", description="share of checkable items with no violated claim"),
        Metric("claim_violation_rate", "claim_rate", higher_is_better=False,
               description="violated claims / checked claims"),
        Metric("accuracy", "accuracy", description="non-circular accuracy where the oracle has a criterion"),
        Metric("claim_pcr", "claim_pcr", description="consistent claims / checked claims"),
        Metric("first_claim_pcr", "first_claim_pcr", description="PCR on each item's first checked claim only "
               "(the paper's single-claim PCR)"),
        Metric("p_chance", "chance", higher_is_better=False, interval="none",
               description="chance-pass probability of the checked claims (oracle power; lower is stronger)"),
        Metric("pcr_chance_corrected", "chance_corrected_pcr",
               description="(PCR − p̄)/(1 − p̄), p̄ the mean over checkable items of the chance that uniformly "
                           "random claims in place of the item's claims all pass"),
    )
    #: the validity gate's pooled recall d̂ and false alarm f̂ for this oracle (``matpcr validate``), from
    #: which results report the Corollary-2 range of the true PCR; set by a plugin from its last gate, or
    #: per run from a gate report (``$MATPCR_GATE_FILE``, the JSON ``matpcr validate --output`` writes)
    gate_figures: dict[str, Any] = {}
    #: prepared references kept per oracle instance (arrays worth keeping across seeds and rounds)
    prepared_cache_size: int = 20_000

    def __init__(self, **params: Any) -> None:
        from matpcr.errors import UnknownNameError
        from matpcr.spec import coerce_params

        unknown = set(params) - set(self.defaults)
        if unknown:
            raise UnknownNameError(f"{self.name} oracle parameter", sorted(unknown)[0], self.defaults)
        #: each value coerced to its default's type; a non-number or a negative tolerance is a clear error
        self.params: dict[str, Any] = coerce_params(f"--oracle-args {self.name}", self.defaults, params)
        self._prepared: OrderedDict[str, Any] = OrderedDict()
        figures = self.load_gate_figures()
        if figures.get("recall") is not None and figures.get("false_alarm") is not None:
            self.metrics = (*type(self).metrics, Metric(
                "pcr_true_range", "corollary2", interval="none", params=figures,
                description="Corollary 2: the true PCR lies in [PCR − (1 − d̂), PCR + f̂] for the gate's d̂, f̂"))

    def load_gate_figures(self) -> dict[str, Any]:
        """This oracle's gate figures: from the gate report named by ``$MATPCR_GATE_FILE`` when set (its
        ``families[NAME]``), else the class's stored ``gate_figures``."""
        import os

        path = os.environ.get("MATPCR_GATE_FILE")
        if path:
            try:
                report = json.loads(Path(path).read_text(encoding="utf-8"))
                family = (report.get("families") or {}).get(self.name) or {}
                if family.get("recall") is not None:
                    return {k: family.get(k) for k in ("recall", "false_alarm", "n_negative", "n_positive",
                                                        "references_sha")} | {"source": str(path)}
            except (OSError, ValueError, AttributeError):
                pass
        return dict(self.gate_figures)

    def prepare(self, reference: dict[str, Any]) -> Any:
        """Turn a JSON reference into whatever ``check`` needs (arrays, peak lists); done once per item."""
        return reference

    def prepared(self, item: Item) -> Any:
        """``prepare(item.reference)``, memoised on this instance by the item's task and id."""
        key = f"{item.task}/{item.id}"
        if key in self._prepared:
            self._prepared.move_to_end(key)
            return self._prepared[key]
        value = self.prepare(item.reference)
        self._prepared[key] = value
        if len(self._prepared) > self.prepared_cache_size:
            self._prepared.popitem(last=False)
        return value

    def read(self, chain: str, item: Item | None = None) -> Extraction:
        """Everything the reader saw: claims, rejected numbers with reasons, notes. The engine calls this;
        oracles that only implement ``extract`` report no rejections."""
        return Extraction(self.extract(chain, item))

    def extract(self, chain: str, item: Item | None = None) -> list[Claim]:
        """The claims to check (``read(...).claims`` for oracles that implement ``read``)."""
        if type(self).read is not Oracle.read:
            return self.read(chain, item).claims
        raise NotImplementedError(f"oracle {self.name!r} implements neither read() nor extract()")

    def check(self, claim: Claim, reference: Any) -> Verdict:
        raise NotImplementedError

    def accurate(self, claim: Claim, reference: Any) -> bool | None:
        """Non-circular accuracy where one exists, else ``None``."""
        return None

    def plant_violation(self, reference: Any, rng: np.random.Generator) -> Claim:
        raise NotImplementedError

    # -- the validity gate (matpcr/validate.py) and oracle power ----------------------------------------
    #: the controls this oracle's gate builds, ``{name: "negative" | "positive"}`` (empty: no gate)
    control_names: dict[str, str] = {}

    def controls(self, item: Item, pool: list[Item], rng: np.random.Generator) -> list[Control]:
        """Negative and positive controls for one reference item, built from the raw reference (not from
        ``prepare``); ``pool`` holds the other references (for "another phase" controls). Controls that
        do not apply to this reference are left out."""
        raise NotImplementedError(f"oracle {self.name!r} builds no validity-gate controls")

    def chain_templates(self) -> list[Any]:
        """Callables ``(values, unit, rng) -> str``, each with a ``name``, writing a chain that states
        ``values`` the way a model would (free prose, lists, LaTeX, tables, distractor numbers...); empty:
        the gate uses ``render_claim``'s canonical line only."""
        return []

    def chance(self, reference: Any) -> float | None:
        """Oracle power: the probability that a uniformly random claim over this reference's plausible
        range (instrument window, spectrum range, plausible values) is judged consistent; None where the
        oracle defines none. ``check`` stores it as ``details["p_chance"]``."""
        return None

    def plant_consistent(self, reference: Any, rng: np.random.Generator) -> Claim:
        raise NotImplementedError

    def render_claim(self, claim: Claim) -> str:
        """A chain that states ``claim`` the way a model would; the validity gate parses it back."""
        unit = {"deg": "°", "angstrom": "Å", "cm-1": "cm⁻¹"}.get(claim.unit, claim.unit)
        return f"Reasoning omitted.\nAnswer: {claim.value:g} {unit}".strip()

    def render_case(self, reference: dict[str, Any], claim: Claim, path: Path) -> Path | None:
        """A figure of one verdict (reference with the claim marked) for audits and the viewer; None if
        the oracle draws nothing."""
        return None

    def read_reference(self, spec: str) -> dict[str, Any]:
        """Read a reference for ``matpcr check`` from a file (or id) this oracle understands."""
        from matpcr.errors import MatpcrError

        raise MatpcrError(f"oracle {self.name!r} cannot read references for `matpcr check`")

    @staticmethod
    def read_json_reference(path: str | Path) -> dict[str, Any]:
        """A reference stored as a JSON object (what ``items.jsonl`` holds), with a named error."""
        from matpcr.errors import DataError

        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{path}: not a readable JSON reference ({exc})") from None
        if not isinstance(data, dict):
            raise DataError(f"{path}: a JSON reference must be an object, not a {type(data).__name__}")
        return data


class Scorer:
    """Grades a task's answers where no physical oracle applies (MSQA). ``score`` returns named
    :class:`Score` s; ``primary`` names the one that sets the record's ``accurate`` flag.

    A scorer may ask a model first (a judge): ``stage_request`` builds the request for one answer
    (``None``: no stage), ``stage_parse`` reads the reply (``None``: malformed, retried up to
    ``stage_attempts`` times, then left ungraded — never guessed). The engine batches and caches these
    requests with the ``--judge`` backend; the parsed result reaches ``score`` as ``context["stage"]``."""

    name: str = ""
    constraint: str = ""
    primary: str = "accuracy"
    metrics: tuple[Metric, ...] = (Metric("accuracy"),)
    #: True when a ``--judge`` model is required
    needs_model: bool = False
    stage_attempts: int = 3
    params: dict[str, Any] = {}

    def score(self, chain: str, item: Item, context: dict[str, Any]) -> dict[str, Score]:
        raise NotImplementedError

    def stage_request(self, item: Item, answer: str, attempt: int) -> Request | None:
        return None

    def stage_parse(self, text: str) -> dict[str, Any] | None:
        return None


class Checker:
    """A reference-free predictor run beside the oracles (``--checker NAME:ARG``). ``predict`` gets
    scored records (oracle status set) and their items and returns one ``{score name: Score}`` per
    record; the scores land in ``record.scores`` and are aggregated through ``metrics``."""

    name: str = ""
    metrics: tuple[Metric, ...] = ()
    params: dict[str, Any] = {}

    def predict(self, records: list[Record], items: list[Item]) -> list[dict[str, Score]]:
        raise NotImplementedError


@dataclass
class FollowUp:
    """What an intervention asks the engine to generate next for one record."""

    request: Request
    meta: dict[str, Any] = field(default_factory=dict)


class Intervention:
    """Runs rounds after the first answer. It never calls a backend: it returns follow-up
    requests and the engine batches, caches and records them like first answers."""

    name: str = ""
    #: extra rounds after round 0
    rounds: int = 1
    #: independent samples drawn in round 0 (best-of-N uses N > 1)
    samples: int = 1
    #: constraint types it applies to (None = all)
    constraints: tuple[str, ...] | None = None
    #: generation settings it needs on top of the task's (e.g. a temperature for sampling)
    generation: dict[str, Any] = {}

    def applies(self, constraint: str) -> bool:
        return self.constraints is None or constraint in self.constraints

    def follow_up(self, record: Record, request: Request, verdicts: list[Verdict]) -> FollowUp | None:
        raise NotImplementedError

    def summarize(self, records: list[Record], n_boot: int, seed: int) -> dict[str, Any]:
        """The intervention's own figures for one task's records (all rounds and samples). The default is
        the paired before/after analysis with the exact McNemar test and the retraction counts."""
        from matpcr.results import paired_rounds

        return paired_rounds(records, n_boot, seed)


@dataclass
class ReportSection:
    """A table a plugin adds to ``report.md``/``report.html``."""

    title: str
    header: list[str]
    rows: list[list[str]]
