"""The zygote: a process that has imported what the `bonnieboard` command imports, then forks a process per
request that runs the command's main(). A command started this way is main() in a process of its own (its own
arguments, environment, working directory, output, and process group for a server), as on a command line; it
skips only the interpreter's start and the imports, together about a CPU-second a command. tests/zygote.py is the test
process's end.

It never imports app.main: that module builds the app from the settings at import, which must be the server's.

Requests and answers are one JSON object a line on stdin and stdout:
- {"start": {"argv", "env", "cwd", "stdout", "stderr", "session", "preload"}} → {"pid": N}: the command, a child
  of this process, its standard input /dev/null, its output appended to the files stdout and stderr name (made
  when missing; one file for both is fine);
- {"poll": N} → {"returncode": None or its exit code, negative for a signal}, as subprocess.Popen.poll.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_the_zygote() -> None:
    """SIGTERM when the zygote ends, which it does when its test process does (its standard input ends): a killed
    test run leaves no command behind."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def serve_requests(bonnieboard: str) -> None:
    # sys.path as the `bonnieboard` command has it: its own directory first, not this one's (tests/).
    sys.path[0] = os.path.dirname(bonnieboard)
    # What `bonnieboard` imports, and `serve` up to app.main (uvicorn imports it in the server).
    import uvicorn.lifespan.on
    import uvicorn.loops.asyncio
    import uvicorn.protocols.http.h11_impl
    import uvicorn.protocols.websockets.auto  # noqa: F401

    import app.cli
    import app.web.routes.api
    import app.web.routes.history
    import app.web.routes.login
    import app.web.routes.pages
    import app.web.server
    import app.web.static_assets  # noqa: F401

    exit_codes: dict[int, int] = {}
    answers = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        if "start" in request:
            answer = {"pid": start(request["start"], app.cli.main)}
        else:
            answer = {"returncode": poll(request["poll"], exit_codes)}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def start(request: dict, main) -> int:
    """Forks the command; in it, runs main() and exits as `sys.exit(main())` would (an exception up to the
    interpreter prints its traceback, exit 1)."""
    files = [
        os.open(os.devnull, os.O_RDONLY),
        os.open(request["stdout"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
        os.open(request["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
    ]
    zygote = os.getpid()
    pid = os.fork()
    if pid:
        for fd in files:
            os.close(fd)
        return pid
    if request["session"]:
        os.setsid()  # a process group of its own, killed whole
    die_with_the_zygote()
    if os.getppid() != zygote:  # the zygote ended before the death signal was asked for
        os._exit(1)
    for number, fd in enumerate(files):
        os.dup2(fd, number)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # the command's PYTHONPATH, where a new interpreter puts it: after the command's own directory
    sys.path[1:1] = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.argv = request["argv"]
    if request["preload"]:
        sys.path[0] = ""  # as `python -c "import PRELOAD; ..."` has it: the working directory
        importlib.import_module(request["preload"])
    sys.exit(main(request["argv"][1:]))


def poll(pid: int, exit_codes: dict[int, int]) -> int | None:
    if pid not in exit_codes:
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            return None
        exit_codes[pid] = os.waitstatus_to_exitcode(status)
    return exit_codes[pid]


if __name__ == "__main__":
    serve_requests(sys.argv[1])
