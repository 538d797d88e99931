"""The ``vllm:`` backend: vLLM's offline engine for throughput on GPUs.

An optional extra (``pip install matpcr[vllm]``), imported only when used. Parallelism is vLLM's own:
``tensor_parallel_size``, ``pipeline_parallel_size``, ``data_parallel_size``, and
``distributed_executor_backend`` (``ray`` for a model spread over several nodes, ``mp`` on one node); all
are ``--model-args`` (docs/scaling.md). Any other vLLM engine argument passes through unchanged.
"""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response


class VLLMBackend:
    def __init__(self, model: str, revision: str | None = None, *, tensor_parallel_size: int = 1,
                 pipeline_parallel_size: int = 1, data_parallel_size: int = 1, dtype: str = "auto",
                 max_model_len: int | None = None, gpu_memory_utilization: float = 0.9, images: bool = False,
                 limit_images: int = 1, distributed_executor_backend: str | None = None, **engine_args: Any):
        if distributed_executor_backend not in (None, "ray", "mp", "uni", "external_launcher"):
            raise MatpcrError(f"vllm: distributed_executor_backend={distributed_executor_backend!r}; use ray (multi-node), "
                              "mp (one node) or uni")
        self.model, self.revision = model, revision
        self.engine_args = {"tensor_parallel_size": tensor_parallel_size, "pipeline_parallel_size": pipeline_parallel_size,
                            "data_parallel_size": data_parallel_size, "dtype": dtype, "max_model_len": max_model_len,
                            "gpu_memory_utilization": gpu_memory_utilization,
                            "distributed_executor_backend": distributed_executor_backend, **engine_args}
        if images:
            self.engine_args["limit_mm_per_prompt"] = {"image": limit_images}
        self.identity = {"backend": "vllm", "model": model, "revision": revision, "dtype": dtype,
                         "max_model_len": max_model_len}
        self.capabilities = Capabilities(images=images, max_images=limit_images)
        self._llm: Any = None

    def _load(self) -> Any:
        if self._llm is None:
            try:
                from vllm import LLM
            except ImportError as exc:
                raise MatpcrError("the vllm backend needs vLLM and a GPU: pip install 'matpcr[vllm]'") from exc
            self._llm = LLM(model=self.model, revision=self.revision,
                            **{k: v for k, v in self.engine_args.items() if v is not None})
        return self._llm

    def generate(self, requests: list[Request]) -> list[Response]:
        llm = self._load()  # first, so a missing vLLM gives the install hint
        from vllm import SamplingParams

        from matpcr_plugins.backend_openai import to_openai_messages

        conversations = [to_openai_messages(r) for r in requests]
        params = [SamplingParams(max_tokens=r.sampling.max_new_tokens, temperature=r.sampling.temperature,
                                 top_p=r.sampling.top_p, seed=r.seed) for r in requests]
        outputs = llm.chat(conversations, sampling_params=params, use_tqdm=False)
        return [Response(o.outputs[0].text.strip(), prompt_tokens=len(o.prompt_token_ids or []),
                         completion_tokens=len(o.outputs[0].token_ids)) for o in outputs]


def make_vllm(model: str, revision: str | None = None, **args: Any) -> VLLMBackend:
    import importlib.util

    if not model:
        raise MatpcrError("vllm backend needs a model: --model vllm:ORG/NAME")
    if importlib.util.find_spec("vllm") is None:  # before the run directory is written
        raise MatpcrError("the vllm backend needs vLLM and a GPU: pip install 'matpcr[vllm]'")
    return VLLMBackend(model, revision, **args)


@hookimpl
def register_backends(register: Any) -> None:
    register("vllm", make_vllm, "vLLM offline engine (tensor/pipeline/data parallel); optional extra, GPU")
