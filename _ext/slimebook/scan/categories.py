"""The category table of the usage scanner: data only, in one place (issue 8).

Every rule the scanner applies to a *name* lives here, so a new API, type or category is a table
edit, not a code path:

* :data:`CATEGORIES` lists the 19 categories; every record carries exactly one.
* :data:`API_PREFIXES` maps a qualified-name prefix to its category. A resolved dotted name
  (``asyncio.gather``, ``concurrent.futures.ThreadPoolExecutor``, ``os.getpid``) belongs to the
  category of its *longest* listed prefix; a name with no listed prefix (``os.path.join``) is not
  an API of the book and gives no record. Whole modules are listed for the ten concurrency modules;
  for ``os``, ``time``, ``inspect``, ``typing``, ``contextlib``, ``types`` only the listed names count.
* :data:`BUILTINS` are the builtins reported as ``api_call`` / ``api_reference`` when not shadowed.
* :data:`TYPES` maps each tracked stdlib type (by its public qualified name) to its method names;
  a method call on a receiver with evidence of one of these types is a ``method_call`` named
  ``Type.method``. :data:`TYPE_ALIASES` folds implementation names onto the public ones;
  :data:`TYPE_BASES` says which tracked type inherits from which (a use of ``asyncio.Task.done`` also
  counts for ``asyncio.Future.done``).
* :data:`CONSTRUCTORS`, :data:`AWAIT_CONSTRUCTORS` and :data:`METHOD_RETURNS` say what a call
  returns (constructor evidence); :data:`ENTER_RETURNS_SELF` says which types bind themselves in
  ``with X() as name`` (context-manager evidence).
* :data:`CANDIDATE_METHODS` are the method names reported as ``instance_candidate`` on a receiver
  of unknown type, except the calls of :data:`STRING_ARG_METHODS` with a string;
  :data:`BUILTIN_TYPES` are the builtin constructors whose result rules a receiver out (negative
  evidence).

Sources of the names: the Python 3.11–3.14 standard library reference (``asyncio``, ``threading``,
``queue``, ``concurrent.futures``, ``multiprocessing``, ``subprocess``, ``signal``, ``contextvars``,
``contextlib``, ``inspect``, ``collections.abc``, ``typing``, ``time``, ``os``, ``fcntl``,
``select``, ``selectors``, ``types``).
"""

from __future__ import annotations

import hashlib
import json

__all__ = [
    "API_PREFIXES",
    "AWAIT_CONSTRUCTORS",
    "BUILTINS",
    "BUILTIN_TYPES",
    "CANDIDATE_METHODS",
    "CATEGORIES",
    "CONSTRUCTORS",
    "ENTER_RETURNS_SELF",
    "STRING_ARG_METHODS",
    "METHOD_RETURNS",
    "TYPES",
    "TYPE_ALIASES",
    "TYPE_BASES",
    "ancestors",
    "canonical_type",
    "category_of",
    "inherited_names",
    "split_method",
    "table_digest",
]

#: The categories, in the order reports list them (19).
CATEGORIES: tuple[str, ...] = (
    "asyncio",
    "threading",
    "queue",
    "executors",
    "multiprocessing",
    "subprocess",
    "signal",
    "contextvars",
    "contextlib-async",
    "inspect-async",
    "async-builtins",
    "async-typing",
    "time-sleep",
    "os-process",
    "fcntl",
    "select",
    "coroutine-helpers",
    "syntax",
    "candidates",
)

_ASYNC_ABCS = ("Awaitable", "Coroutine", "AsyncIterator", "AsyncIterable", "AsyncGenerator")
_OS_PROCESS = (
    "getpid", "getppid", "kill", "killpg", "fork", "forkpty", "wait", "waitpid", "wait3", "wait4",
    "waitid", "waitstatus_to_exitcode", "WIFEXITED", "WEXITSTATUS", "WIFSIGNALED", "WTERMSIG",
    "WIFSTOPPED", "WSTOPSIG", "system", "popen", "execl", "execle", "execlp", "execlpe", "execv",
    "execve", "execvp", "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve",
    "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp", "_exit", "abort", "setsid", "getsid",
    "setpgrp", "getpgrp", "setpgid", "getpgid", "pidfd_open", "register_at_fork", "nice",
    "sched_getaffinity", "sched_setaffinity",
)
_INSPECT_ASYNC = (
    "iscoroutinefunction", "iscoroutine", "isawaitable", "isasyncgenfunction", "isasyncgen",
    "getcoroutinestate", "getcoroutinelocals", "getasyncgenstate", "getasyncgenlocals",
    "markcoroutinefunction",
)

#: Qualified-name prefix → category; the longest listed prefix of a dotted name wins.
API_PREFIXES: dict[str, str] = {
    "asyncio": "asyncio",
    "threading": "threading",
    "_thread": "threading",
    "queue": "queue",
    "concurrent.futures": "executors",
    "multiprocessing": "multiprocessing",
    "subprocess": "subprocess",
    "signal": "signal",
    "contextvars": "contextvars",
    "fcntl": "fcntl",
    "select": "select",
    "selectors": "select",
    "contextlib.asynccontextmanager": "contextlib-async",
    "contextlib.AsyncExitStack": "contextlib-async",
    "contextlib.aclosing": "contextlib-async",
    "contextlib.AbstractAsyncContextManager": "contextlib-async",
    **{f"inspect.{name}": "inspect-async" for name in _INSPECT_ASYNC},
    **{f"typing.{name}": "async-typing" for name in (*_ASYNC_ABCS, "AsyncContextManager")},
    # structural capability checks (lesson 21): an async interface declared as a Protocol, checked by isinstance
    "typing.Protocol": "async-typing",
    "typing.runtime_checkable": "async-typing",
    **{f"collections.abc.{name}": "async-typing" for name in _ASYNC_ABCS},
    "time.sleep": "time-sleep",
    **{f"os.{name}": "os-process" for name in _OS_PROCESS},
    "types.coroutine": "coroutine-helpers",
    "types.CoroutineType": "coroutine-helpers",
    "types.AsyncGeneratorType": "coroutine-helpers",
}

#: Builtins reported when the name is not bound in any enclosing scope: name → category.
BUILTINS: dict[str, str] = {"aiter": "async-builtins", "anext": "async-builtins"}

_FUTURE = ("cancel", "cancelled", "done", "result", "exception", "add_done_callback",
           "remove_done_callback", "set_result", "set_exception", "get_loop")
_TASK = (*_FUTURE, "get_name", "set_name", "get_coro", "get_context", "get_stack", "print_stack",
         "uncancel", "cancelling")
_AQUEUE = ("put", "get", "put_nowait", "get_nowait", "join", "task_done", "qsize", "empty", "full",
           "shutdown")
_EVENT = ("set", "clear", "wait", "is_set")
_LOCK = ("acquire", "release", "locked")
_CONDITION = ("acquire", "release", "locked", "wait", "wait_for", "notify", "notify_all")
_LOOP = (
    "run_forever", "run_until_complete", "stop", "is_running", "is_closed", "close",
    "shutdown_asyncgens", "shutdown_default_executor", "call_soon", "call_soon_threadsafe",
    "call_later", "call_at", "time", "create_future", "create_task", "set_task_factory",
    "get_task_factory", "run_in_executor", "set_default_executor", "add_reader", "remove_reader",
    "add_writer", "remove_writer", "add_signal_handler", "remove_signal_handler",
    "set_exception_handler", "get_exception_handler", "default_exception_handler",
    "call_exception_handler", "get_debug", "set_debug", "create_connection", "create_server",
    "create_unix_connection", "create_unix_server", "create_datagram_endpoint", "subprocess_exec",
    "subprocess_shell", "getaddrinfo", "getnameinfo", "sock_recv", "sock_sendall", "sock_connect",
    "sock_accept", "connect_read_pipe", "connect_write_pipe", "start_tls", "sendfile",
)
_EXECUTOR = ("submit", "map", "shutdown")
_POOL = ("apply", "apply_async", "map", "map_async", "imap", "imap_unordered", "starmap",
         "starmap_async", "close", "terminate", "join")
_MPQUEUE = ("put", "get", "put_nowait", "get_nowait", "qsize", "empty", "full", "close",
            "join_thread", "cancel_join_thread")
_SELECTOR = ("register", "unregister", "modify", "select", "close", "get_key", "get_map")
_CONTEXT = ("Process", "Queue", "JoinableQueue", "SimpleQueue", "Pool", "Event", "Lock", "RLock",
            "Semaphore", "BoundedSemaphore", "Condition", "Barrier", "Pipe", "Manager", "Value",
            "Array", "get_start_method", "set_start_method")

#: Tracked stdlib types (public qualified name) → method names.
TYPES: dict[str, tuple[str, ...]] = {
    "asyncio.AbstractEventLoop": _LOOP,
    "asyncio.Future": _FUTURE,
    "asyncio.Task": _TASK,
    "asyncio.Handle": ("cancel", "cancelled", "get_context"),
    "asyncio.TimerHandle": ("cancel", "cancelled", "get_context", "when"),
    "asyncio.Queue": _AQUEUE,
    "asyncio.PriorityQueue": _AQUEUE,
    "asyncio.LifoQueue": _AQUEUE,
    "asyncio.Event": _EVENT,
    "asyncio.Lock": _LOCK,
    "asyncio.Semaphore": _LOCK,
    "asyncio.BoundedSemaphore": _LOCK,
    "asyncio.Condition": _CONDITION,
    "asyncio.Barrier": ("wait", "reset", "abort"),
    "asyncio.TaskGroup": ("create_task",),
    "asyncio.Runner": ("run", "close", "get_loop"),
    "asyncio.Timeout": ("when", "reschedule", "expired"),
    "asyncio.Server": ("close", "wait_closed", "serve_forever", "start_serving", "is_serving",
                       "get_loop", "close_clients", "abort_clients"),
    "asyncio.StreamReader": ("read", "readline", "readexactly", "readuntil", "at_eof"),
    "asyncio.StreamWriter": ("write", "writelines", "write_eof", "can_write_eof", "drain", "close",
                             "is_closing", "wait_closed", "get_extra_info", "start_tls"),
    "asyncio.subprocess.Process": ("communicate", "wait", "send_signal", "terminate", "kill"),
    "threading.Thread": ("start", "run", "join", "is_alive", "getName", "setName", "isDaemon",
                         "setDaemon"),
    "threading.Timer": ("start", "run", "join", "is_alive", "cancel"),
    "threading.Lock": _LOCK,
    "threading.RLock": ("acquire", "release"),
    "threading.Event": _EVENT,
    "threading.Condition": _CONDITION,
    "threading.Semaphore": ("acquire", "release"),
    "threading.BoundedSemaphore": ("acquire", "release"),
    "threading.Barrier": ("wait", "reset", "abort"),
    "queue.Queue": _AQUEUE,
    "queue.PriorityQueue": _AQUEUE,
    "queue.LifoQueue": _AQUEUE,
    "queue.SimpleQueue": ("put", "get", "put_nowait", "get_nowait", "qsize", "empty"),
    "concurrent.futures.Executor": _EXECUTOR,
    "concurrent.futures.ThreadPoolExecutor": _EXECUTOR,
    "concurrent.futures.ProcessPoolExecutor": _EXECUTOR,
    "concurrent.futures.Future": (*_FUTURE[:5], "running", "add_done_callback", "set_result",
                                  "set_exception", "set_running_or_notify_cancel"),
    "multiprocessing.Process": ("start", "run", "join", "is_alive", "terminate", "kill", "close"),
    "multiprocessing.Queue": _MPQUEUE,
    "multiprocessing.JoinableQueue": (*_MPQUEUE, "task_done", "join"),
    "multiprocessing.SimpleQueue": ("put", "get", "empty", "close"),
    "multiprocessing.Event": _EVENT,
    "multiprocessing.Lock": ("acquire", "release"),
    "multiprocessing.RLock": ("acquire", "release"),
    "multiprocessing.Semaphore": ("acquire", "release"),
    "multiprocessing.Condition": _CONDITION,
    "multiprocessing.Barrier": ("wait", "reset", "abort"),
    "multiprocessing.pool.Pool": _POOL,
    "multiprocessing.pool.ThreadPool": _POOL,
    "multiprocessing.pool.AsyncResult": ("get", "wait", "ready", "successful"),
    "multiprocessing.connection.Connection": ("send", "recv", "poll", "close", "send_bytes",
                                              "recv_bytes", "recv_bytes_into", "fileno"),
    "multiprocessing.context.BaseContext": _CONTEXT,
    "multiprocessing.managers.SyncManager": ("start", "shutdown", "connect", *_CONTEXT[:12], "dict",
                                             "list", "Namespace"),
    "subprocess.Popen": ("communicate", "wait", "poll", "send_signal", "terminate", "kill"),
    "subprocess.CompletedProcess": ("check_returncode",),
    "contextvars.ContextVar": ("get", "set", "reset"),
    "contextvars.Context": ("run", "copy", "get", "keys", "values", "items"),
    "contextlib.AsyncExitStack": ("enter_async_context", "push_async_exit", "push_async_callback",
                                  "aclose", "enter_context", "push", "callback", "pop_all",
                                  "close"),
    "select.epoll": ("register", "unregister", "modify", "poll", "close", "fileno"),
    "select.poll": ("register", "unregister", "modify", "poll"),
    "selectors.DefaultSelector": _SELECTOR,
    "selectors.SelectSelector": _SELECTOR,
    "selectors.PollSelector": _SELECTOR,
    "selectors.EpollSelector": _SELECTOR,
}

#: Tracked type → the tracked type it inherits from (the standard library's own class hierarchy, as documented
#: in each module's reference). A method call on a receiver of the subclass is recorded under the subclass
#: (``asyncio.Task.add_done_callback``) and counts for the base class's name as well when the base defines the
#: method (:func:`inherited_names`).
TYPE_BASES: dict[str, str] = {
    "asyncio.Task": "asyncio.Future",
    "asyncio.TimerHandle": "asyncio.Handle",
    "asyncio.PriorityQueue": "asyncio.Queue",
    "asyncio.LifoQueue": "asyncio.Queue",
    "asyncio.BoundedSemaphore": "asyncio.Semaphore",
    "threading.Timer": "threading.Thread",
    "threading.BoundedSemaphore": "threading.Semaphore",
    "queue.PriorityQueue": "queue.Queue",
    "queue.LifoQueue": "queue.Queue",
    "concurrent.futures.ThreadPoolExecutor": "concurrent.futures.Executor",
    "concurrent.futures.ProcessPoolExecutor": "concurrent.futures.Executor",
    "multiprocessing.JoinableQueue": "multiprocessing.Queue",
    "multiprocessing.pool.ThreadPool": "multiprocessing.pool.Pool",
}

#: Implementation or alternative names → the public name used in :data:`TYPES`.
TYPE_ALIASES: dict[str, str] = {
    "asyncio.BaseEventLoop": "asyncio.AbstractEventLoop",
    "asyncio.events.AbstractEventLoop": "asyncio.AbstractEventLoop",
    "asyncio.base_events.BaseEventLoop": "asyncio.AbstractEventLoop",
    "asyncio.SelectorEventLoop": "asyncio.AbstractEventLoop",
    "asyncio.futures.Future": "asyncio.Future",
    "asyncio.tasks.Task": "asyncio.Task",
    "asyncio.events.Handle": "asyncio.Handle",
    "asyncio.events.TimerHandle": "asyncio.TimerHandle",
    "asyncio.queues.Queue": "asyncio.Queue",
    "asyncio.queues.PriorityQueue": "asyncio.PriorityQueue",
    "asyncio.queues.LifoQueue": "asyncio.LifoQueue",
    "asyncio.locks.Event": "asyncio.Event",
    "asyncio.locks.Lock": "asyncio.Lock",
    "asyncio.locks.Semaphore": "asyncio.Semaphore",
    "asyncio.locks.BoundedSemaphore": "asyncio.BoundedSemaphore",
    "asyncio.locks.Condition": "asyncio.Condition",
    "asyncio.taskgroups.TaskGroup": "asyncio.TaskGroup",
    "asyncio.timeouts.Timeout": "asyncio.Timeout",
    "asyncio.streams.StreamReader": "asyncio.StreamReader",
    "asyncio.streams.StreamWriter": "asyncio.StreamWriter",
    "concurrent.futures.thread.ThreadPoolExecutor": "concurrent.futures.ThreadPoolExecutor",
    "concurrent.futures.process.ProcessPoolExecutor": "concurrent.futures.ProcessPoolExecutor",
    "concurrent.futures._base.Future": "concurrent.futures.Future",
    "concurrent.futures._base.Executor": "concurrent.futures.Executor",
    "multiprocessing.context.Process": "multiprocessing.Process",
    "multiprocessing.process.BaseProcess": "multiprocessing.Process",
    "multiprocessing.queues.Queue": "multiprocessing.Queue",
    "multiprocessing.queues.JoinableQueue": "multiprocessing.JoinableQueue",
    "multiprocessing.queues.SimpleQueue": "multiprocessing.SimpleQueue",
    "multiprocessing.Pool": "multiprocessing.pool.Pool",
    "multiprocessing.dummy.Pool": "multiprocessing.pool.ThreadPool",
    "multiprocessing.context.SpawnContext": "multiprocessing.context.BaseContext",
    "multiprocessing.context.ForkContext": "multiprocessing.context.BaseContext",
    "multiprocessing.context.ForkServerContext": "multiprocessing.context.BaseContext",
    "multiprocessing.Manager": "multiprocessing.managers.SyncManager",
    "multiprocessing.connection.PipeConnection": "multiprocessing.connection.Connection",
    "selectors.BaseSelector": "selectors.DefaultSelector",
}

#: Non-class callables whose (non-awaited) result is an instance of a tracked type.
CONSTRUCTORS: dict[str, str] = {
    "asyncio.get_running_loop": "asyncio.AbstractEventLoop",
    "asyncio.get_event_loop": "asyncio.AbstractEventLoop",
    "asyncio.new_event_loop": "asyncio.AbstractEventLoop",
    "asyncio.events.get_running_loop": "asyncio.AbstractEventLoop",
    "asyncio.events.get_event_loop": "asyncio.AbstractEventLoop",
    "asyncio.events.new_event_loop": "asyncio.AbstractEventLoop",
    "asyncio.create_task": "asyncio.Task",
    "asyncio.current_task": "asyncio.Task",
    "asyncio.ensure_future": "asyncio.Future",
    "asyncio.gather": "asyncio.Future",
    "asyncio.wrap_future": "asyncio.Future",
    "asyncio.shield": "asyncio.Future",
    "asyncio.run_coroutine_threadsafe": "concurrent.futures.Future",
    "asyncio.timeout": "asyncio.Timeout",
    "asyncio.timeout_at": "asyncio.Timeout",
    "threading.current_thread": "threading.Thread",
    "threading.main_thread": "threading.Thread",
    "multiprocessing.current_process": "multiprocessing.Process",
    "multiprocessing.parent_process": "multiprocessing.Process",
    "multiprocessing.get_context": "multiprocessing.context.BaseContext",
    "subprocess.run": "subprocess.CompletedProcess",
    "contextvars.copy_context": "contextvars.Context",
}

#: Coroutine functions whose *awaited* result is an instance of a tracked type.
AWAIT_CONSTRUCTORS: dict[str, str] = {
    "asyncio.create_subprocess_exec": "asyncio.subprocess.Process",
    "asyncio.create_subprocess_shell": "asyncio.subprocess.Process",
    "asyncio.start_server": "asyncio.Server",
    "asyncio.start_unix_server": "asyncio.Server",
}

#: (tracked type, method) → the tracked type of the method's (non-awaited) result.
METHOD_RETURNS: dict[tuple[str, str], str] = {
    ("asyncio.AbstractEventLoop", "create_task"): "asyncio.Task",
    ("asyncio.AbstractEventLoop", "create_future"): "asyncio.Future",
    ("asyncio.AbstractEventLoop", "run_in_executor"): "asyncio.Future",
    ("asyncio.AbstractEventLoop", "call_soon"): "asyncio.Handle",
    ("asyncio.AbstractEventLoop", "call_soon_threadsafe"): "asyncio.Handle",
    ("asyncio.AbstractEventLoop", "call_later"): "asyncio.TimerHandle",
    ("asyncio.AbstractEventLoop", "call_at"): "asyncio.TimerHandle",
    ("asyncio.TaskGroup", "create_task"): "asyncio.Task",
    ("asyncio.Runner", "get_loop"): "asyncio.AbstractEventLoop",
    ("concurrent.futures.Executor", "submit"): "concurrent.futures.Future",
    ("concurrent.futures.ThreadPoolExecutor", "submit"): "concurrent.futures.Future",
    ("concurrent.futures.ProcessPoolExecutor", "submit"): "concurrent.futures.Future",
    ("multiprocessing.pool.Pool", "apply_async"): "multiprocessing.pool.AsyncResult",
    ("multiprocessing.pool.Pool", "map_async"): "multiprocessing.pool.AsyncResult",
    ("multiprocessing.pool.Pool", "starmap_async"): "multiprocessing.pool.AsyncResult",
    ("multiprocessing.pool.ThreadPool", "apply_async"): "multiprocessing.pool.AsyncResult",
    ("multiprocessing.pool.ThreadPool", "map_async"): "multiprocessing.pool.AsyncResult",
    ("multiprocessing.context.BaseContext", "Process"): "multiprocessing.Process",
    ("multiprocessing.context.BaseContext", "Queue"): "multiprocessing.Queue",
    ("multiprocessing.context.BaseContext", "JoinableQueue"): "multiprocessing.JoinableQueue",
    ("multiprocessing.context.BaseContext", "SimpleQueue"): "multiprocessing.SimpleQueue",
    ("multiprocessing.context.BaseContext", "Pool"): "multiprocessing.pool.Pool",
    ("multiprocessing.context.BaseContext", "Event"): "multiprocessing.Event",
    ("multiprocessing.context.BaseContext", "Lock"): "multiprocessing.Lock",
    ("multiprocessing.context.BaseContext", "Manager"): "multiprocessing.managers.SyncManager",
    ("contextvars.Context", "copy"): "contextvars.Context",
}

#: Tracked types whose ``__enter__`` / ``__aenter__`` returns the instance itself.
ENTER_RETURNS_SELF: frozenset[str] = frozenset({
    "concurrent.futures.Executor",
    "concurrent.futures.ThreadPoolExecutor",
    "concurrent.futures.ProcessPoolExecutor",
    "multiprocessing.pool.Pool",
    "multiprocessing.pool.ThreadPool",
    "multiprocessing.managers.SyncManager",
    "subprocess.Popen",
    "asyncio.TaskGroup",
    "asyncio.Runner",
    "asyncio.Timeout",
    "asyncio.Server",
    "contextlib.AsyncExitStack",
    "selectors.DefaultSelector",
    "selectors.SelectSelector",
    "selectors.PollSelector",
    "selectors.EpollSelector",
    "select.epoll",
    "multiprocessing.connection.Connection",
})

#: Method names reported as ``instance_candidate`` when the receiver's type is unknown.
CANDIDATE_METHODS: frozenset[str] = frozenset({
    "get", "put", "get_nowait", "put_nowait", "join", "task_done", "cancel", "cancelled", "done",
    "result", "exception", "add_done_callback", "set_result", "set_exception", "wait", "wait_for",
    "set", "clear", "is_set", "acquire", "release", "locked", "notify", "notify_all", "submit",
    "shutdown", "start", "is_alive", "terminate", "kill", "communicate", "poll", "send_signal",
    "run_in_executor", "run_until_complete", "run_forever", "create_task", "call_soon",
    "call_soon_threadsafe", "call_later", "qsize", "empty", "full", "reset", "apply_async",
    "map_async", "enter_async_context", "aclose",
})

#: Candidate methods that, called with a string literal as first argument, are not the tracked
#: types' methods: mapping lookups (``d.get("key")``) and logging (``logger.exception("...")``).
#: No tracked type's method of these names takes a string first.
STRING_ARG_METHODS: frozenset[str] = frozenset({"get", "exception"})

#: Builtin constructors and literal kinds whose result is a known, untracked type.
BUILTIN_TYPES: frozenset[str] = frozenset({
    "dict", "list", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float",
    "complex", "bool", "object", "range", "memoryview", "open", "iter", "zip", "map", "filter",
    "enumerate", "reversed", "sorted", "super", "type",
})


def ancestors(type_name: str) -> list[str]:
    """The tracked base classes of ``type_name``, nearest first (``asyncio.Task`` → ``["asyncio.Future"]``)."""
    found: list[str] = []
    while type_name in TYPE_BASES and TYPE_BASES[type_name] not in found:
        type_name = TYPE_BASES[type_name]
        found.append(type_name)
    return found


def split_method(name: str) -> tuple[str, str] | None:
    """``"asyncio.Task.cancel"`` → ``("asyncio.Task", "cancel")`` when the part before the last dot is a tracked
    type (a ``method_call`` record's name), else None."""
    type_name, _, method = name.rpartition(".")
    return (type_name, method) if type_name in TYPES else None


def inherited_names(name: str) -> list[str]:
    """The names a method use ``Type.method`` also counts for: ``Base.method`` for each tracked ancestor
    that defines ``method`` (``asyncio.Task.add_done_callback`` → ``["asyncio.Future.add_done_callback"]``)."""
    split = split_method(name)
    if split is None:
        return []
    type_name, method = split
    return [f"{base}.{method}" for base in ancestors(type_name) if method in TYPES[base]]


def canonical_type(qualname: str) -> str:
    """The public type name for ``qualname`` (``asyncio.queues.Queue`` → ``asyncio.Queue``)."""
    return TYPE_ALIASES.get(qualname, qualname)


def category_of(qualname: str) -> str | None:
    """The category of a resolved dotted name, by its longest prefix in :data:`API_PREFIXES`.

    Args:
        qualname: a resolved dotted name such as ``"asyncio.subprocess.PIPE"``.
    Returns:
        The category string, or None when no prefix of the name is listed.
    """
    name = qualname
    while True:
        category = API_PREFIXES.get(name)
        if category is not None:
            return category
        cut = name.rfind(".")
        if cut < 0:
            return None
        name = name[:cut]


def table_digest() -> str:
    """A short digest of every table above (part of the scanner version, so edits invalidate caches)."""
    data = [API_PREFIXES, BUILTINS, TYPES, TYPE_BASES, TYPE_ALIASES, CONSTRUCTORS, AWAIT_CONSTRUCTORS,
            sorted(f"{t}.{m}={r}" for (t, m), r in METHOD_RETURNS.items()),
            sorted(ENTER_RETURNS_SELF), sorted(CANDIDATE_METHODS), sorted(STRING_ARG_METHODS),
            sorted(BUILTIN_TYPES),
            list(CATEGORIES)]
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:8]
