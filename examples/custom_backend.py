"""Register a custom backend class from Python, then evaluate with it.

The pattern for a lab's own inference stack: any object with ``identity``, ``capabilities`` and a
batched ``generate(requests) -> responses`` is a backend. This one adds a domain system prompt in
front of every request and delegates generation to the embedded SmolLM2 model.

    python examples/custom_backend.py --data-dir ../shared/data --limit 2
"""

from __future__ import annotations

import argparse
from typing import Any

import matpcr
from matpcr.protocols import Capabilities
from matpcr.records import Message, Request, Response, text_part

PERSONA = "You are a crystallographer. Always answer with explicit numbers and units."


class PersonaBackend:
    """Prepends a system message, then hands the whole batch to an inner backend."""

    def __init__(self, inner: Any, persona: str = PERSONA):
        self.inner, self.persona = inner, persona
        self.identity = {"backend": "persona", "persona": persona, "inner": inner.identity}
        self.capabilities = Capabilities(images=inner.capabilities.images)

    def generate(self, requests: list[Request]) -> list[Response]:
        wrapped = [Request([Message("system", [text_part(self.persona)]),
                            *[m for m in r.messages if m.role != "system"]], r.sampling, r.seed, r.key)
                   for r in requests]
        return self.inner.generate(wrapped)


class PersonaPlugin:
    """A plugin object registered at run time with ``matpcr.register``."""

    @matpcr.hookimpl
    def register_backends(self, register: Any) -> None:
        def factory(model: str, revision: str | None = None, **args: Any) -> PersonaBackend:
            from matpcr_plugins.backend_hf import make_smollm2

            return PersonaBackend(make_smollm2(), persona=args.get("persona", PERSONA))

        register("persona", factory, "example: SmolLM2 with a crystallographer persona")


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--output-dir", default="runs")
    parser.add_argument("--cache", default="default")
    args = parser.parse_args()
    matpcr.register(PersonaPlugin(), name="persona-example")
    results = matpcr.evaluate("xrd_text", model="persona", limit=args.limit, data_dir=args.data_dir,
                              output_dir=args.output_dir, cache=args.cache, generation={"max_new_tokens": 48},
                              progress=False)
    pcr = results["metrics"]["overall"]["pcr"]
    print(f"persona backend: PCR {pcr['value']} over {pcr['n']} checkable items -> {results['run_dir']}")
    return results


if __name__ == "__main__":
    main()
