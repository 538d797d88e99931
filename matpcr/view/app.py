"""The ``matpcr view`` web app (Starlette + Jinja2, served by uvicorn on 127.0.0.1).

Read-only over run directories; the one thing it writes is an audit reviewer's labels file. Model output
is untrusted text: templates autoescape everything, chains are cut into text segments in Python (never
concatenated into markup), and every response carries a Content-Security-Policy that allows no inline
script, so even a escaping mistake could not run a chain's ``<script>``.
"""

from __future__ import annotations

import logging
import socket
import threading
import urllib.parse
import webbrowser
from pathlib import Path
from typing import Any, Callable

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from matpcr.errors import MatpcrError
from matpcr.view import data
from matpcr.view.data import Library
from matpcr.view.figures import FigureCache, to_png
from matpcr.view.workbench import Workbench

log = logging.getLogger("matpcr.view")
HERE = Path(__file__).parent
PAGE_SIZE = 100
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
LABEL_KEYS = (("real", "1", "r", "real violation"), ("false positive", "2", "f", "false positive"),
              ("unsure", "3", "u", "unsure"))


class SecurityHeaders:
    """Adds the CSP and friends to every response (pure ASGI, so streaming file responses work)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                            (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
                            (b"cache-control", b"no-store")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, wrapped)


def _fmt_rate(rate: Any, digits: int = 3) -> str:
    if not data.is_rate(rate) or rate.get("value") is None:
        return "–"
    if rate.get("ci_low") is None:
        return f"{rate['value']:.{digits}f}"
    return f"{rate['value']:.{digits}f} [{rate['ci_low']:.{digits}f}, {rate['ci_high']:.{digits}f}]"


def _fmt_num(value: Any, digits: int = 3) -> str:
    v = data.number(value)
    return "–" if v is None else f"{v:.{digits}g}"


def make_env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["rate"] = _fmt_rate
    env.filters["num"] = _fmt_num
    env.filters["q"] = lambda value: urllib.parse.quote(str(value), safe="")
    env.filters["pretty"] = data.pretty
    return env


def create_app(run_dirs: list[str | Path], audit_sheet: str | Path | None = None, reviewer: str | None = None,
               figure_dir: str | Path | None = None) -> Starlette:
    library = Library(run_dirs)
    figures = FigureCache(figure_dir)
    bench = Workbench(audit_sheet, reviewer or "reviewer", library, figures) if audit_sheet else None
    env = make_env()
    nav_runs = list(library.runs)  # the runs named on the command line (audited runs join the library later)

    def page(template: str, code: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(template).render(nav=nav_runs, audit=bench, label_keys=LABEL_KEYS, **context)
        return HTMLResponse(html, status_code=code)

    def guarded(handler: Callable[..., Response]) -> Callable[[Request], Any]:
        def endpoint(request: Request) -> Response:
            try:
                return handler(request)
            except (KeyError, IndexError, ValueError) as exc:
                return page("error.html", 404, title="Not found", message=f"Nothing here ({type(exc).__name__}: {exc}).")
            except MatpcrError as exc:
                return page("error.html", 500, title="Cannot read this", message=str(exc))
            except Exception as exc:  # a page that fails says so, and the server goes on
                log.exception("%s failed", request.url.path)
                return page("error.html", 500, title="Something went wrong",
                            message=f"{type(exc).__name__}: {exc} (the traceback is in the server's log)")
        return endpoint

    def run_of(request: Request) -> data.RunView:
        return library.get(int(request.path_params["run"]))

    def record_of(request: Request) -> tuple[data.RunView, Any]:
        run = run_of(request)
        key = request.query_params.get("key", "")
        record = run.records_by_key().get(key)
        if record is None:
            raise KeyError(f"record {key!r}")
        return run, record

    # -- the pages --------------------------------------------------------------------------------
    def index(request: Request) -> Response:
        if not nav_runs and bench is not None:
            return RedirectResponse("/audit", 303)
        return page("runs.html", view=data.compare(nav_runs))

    def samples(request: Request) -> Response:
        run = run_of(request)
        filters = {k: request.query_params.get(k, "") for k in ("task", "status", "kind", "seed", "round")}
        sort = request.query_params.get("sort", "")
        rows, options = data.sample_rows(run, filters, sort)
        pages = max(1, (len(rows) + PAGE_SIZE - 1) // PAGE_SIZE)
        n = min(max(1, int(request.query_params.get("page", "1") or 1)), pages)
        base = {k: v for k, v in {**filters, "sort": sort}.items() if v}
        return page("samples.html", run=run, rows=rows[(n - 1) * PAGE_SIZE:n * PAGE_SIZE], total=len(rows),
                    options=options, filters=filters, sort=sort, page_no=n, pages=pages,
                    query=lambda **kw: urllib.parse.urlencode({**base, **kw}), live=run.metrics()[1],
                    status=run.status())

    def sample(request: Request) -> Response:
        run, record = record_of(request)
        item = run.item_of(record)
        rounds = run.siblings(record)
        return page("sample.html", run=run, record=record, item=item, prompt=data.prompt_view(record),
                    segments=data.chain_segments(record), rounds=rounds if len(rounds) > 1 else [],
                    segments_of=data.chain_segments, feedback_of=data.feedback_of,
                    oracle=run.oracle_for(record.task) is not None, judges_error=run.judges_error,
                    distance=data.record_distance(record))

    def figure(request: Request) -> Response:
        run, record = record_of(request)
        path, why = figures.claim_figure(run, record, int(request.query_params.get("claim", "0")))
        if path is None:
            return Response(why, status_code=404, media_type="text/plain")
        return FileResponse(path, media_type="image/png")

    def image(request: Request) -> Response:
        run, record = record_of(request)
        path = data.image_path(record, int(request.query_params.get("m", "0")), int(request.query_params.get("p", "0")))
        if path is None:
            return Response("no such image", status_code=404, media_type="text/plain")
        return FileResponse(to_png(path, figures))

    # -- the audit workbench ----------------------------------------------------------------------
    def need_bench() -> Workbench:
        if bench is None:
            raise KeyError("no audit sheet: start with `matpcr view --audit SHEET` or `matpcr audit serve SHEET`")
        return bench

    def audit_home(request: Request) -> Response:
        b = need_bench()
        nxt = b.next_unlabelled()
        if nxt is None:
            return RedirectResponse("/audit/summary", 303)
        return RedirectResponse(f"/audit/case/{urllib.parse.quote(nxt, safe='')}", 303)

    def audit_summary(request: Request) -> Response:
        b = need_bench()
        return page("audit_summary.html", bench=b, families=b.summary(), rows=b.cases(), labels=b.labels())

    def audit_case(request: Request) -> Response:
        b = need_bench()
        case = b.case(request.path_params["case_id"])
        record = case["record"]
        return page("audit_case.html", bench=b, case=case, saved=request.query_params.get("saved", ""),
                    segments=data.chain_segments(record) if record is not None else [],
                    prompt=data.prompt_view(record) if record is not None else [])

    async def audit_label(request: Request) -> Response:
        b = need_bench()
        origin = request.headers.get("origin")
        if origin and origin not in (f"http://{request.headers.get('host', '')}", "null"):
            return Response("cross-origin label rejected", status_code=403, media_type="text/plain")
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
        case_id = request.path_params["case_id"]
        judgement = (form.get("judgement") or [""])[0]
        notes = (form.get("notes") or [""])[0]
        try:
            await run_in_threadpool(b.save, case_id, judgement, notes)
        except KeyError:
            return page("error.html", 404, title="Not found", message=f"No case {case_id!r} in the sheet.")
        except MatpcrError as exc:
            return page("error.html", 400, title="Label not saved", message=str(exc))
        nxt = b.next_unlabelled(after=case_id)
        target = "/audit/summary" if nxt is None else f"/audit/case/{urllib.parse.quote(nxt, safe='')}"
        return RedirectResponse(f"{target}?saved={urllib.parse.quote(case_id, safe='')}", 303)

    def audit_figure(request: Request) -> Response:
        path, why = need_bench().figure(request.path_params["case_id"])
        if path is None:
            return Response(why, status_code=404, media_type="text/plain")
        return FileResponse(path, media_type="image/png")

    def health(request: Request) -> Response:
        return Response("ok", media_type="text/plain")

    routes = [
        Route("/", guarded(index)),
        Route("/health", health),
        Route("/runs/{run:int}/samples", guarded(samples)),
        Route("/runs/{run:int}/sample", guarded(sample)),
        Route("/runs/{run:int}/figure", guarded(figure)),
        Route("/runs/{run:int}/image", guarded(image)),
        Route("/audit", guarded(audit_home)),
        Route("/audit/summary", guarded(audit_summary)),
        Route("/audit/case/{case_id}", guarded(audit_case)),
        Route("/audit/case/{case_id}", audit_label, methods=["POST"]),
        Route("/audit/figure/{case_id}", guarded(audit_figure)),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"]),
        Middleware(SecurityHeaders)])
    app.state.library, app.state.figures, app.state.bench = library, figures, bench
    return app


def listen(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise MatpcrError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); pick another --port "
                          "(0: any free one)") from None
    sock.listen(128)
    return sock


def serve(app: Starlette, port: int = 0, open_browser: bool = False, path: str = "/",
          echo: Callable[[str], None] = print) -> None:
    """Serve ``app`` with uvicorn until interrupted, printing the address (``--open``: in a browser too)."""
    import uvicorn

    sock = listen(port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"
    echo(url)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, [url]).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    server.run(sockets=[sock])
