"""``wheeldoctor imports``: small packages written here, imported by a real venv's interpreter.

The packages live in a temporary directory that a ``.pth`` file puts on the venv's ``sys.path``.
/dev/zero stands in for a GPU device node, by extending the patterns (they are data).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import Venv, find_interpreter, make_venv, run_cli

from wheeldoctor.commands.imports import run_imports
from wheeldoctor.probes.accelerators import GPU_DEVICE_NODES, DevicePattern, gpu_vendor, is_gpu_runtime
from wheeldoctor.probes.imports import ImportProbeError, Origin
from wheeldoctor.results.imports import Effect, Forbid, ImportsResult

ZERO_IS_GPU = (*GPU_DEVICE_NODES, DevicePattern("test", "/dev/zero"))

PACKAGES = {
    # A chain whose leaf alone opens a device node, starts a thread and prints to stdout.
    "chain/__init__.py": "from chain import middle\n",
    "chain/middle.py": "import json\nfrom chain import leaf\n",
    "chain/leaf.py": (
        "import threading\n"
        "HELD = open('/dev/zero', 'rb')\n"
        "HELD_TOO = open('/dev/zero', 'rb')\n"
        "STOP = threading.Event()\n"
        "threading.Thread(target=STOP.wait, daemon=True).start()\n"
        "print('leaf says hello on stdout')\n"
    ),
    # Its own code starts a thread before importing a quiet child and opens a device after it.
    "outer/__init__.py": (
        "import threading\n"
        "STOP = threading.Event()\n"
        "threading.Thread(target=STOP.wait, daemon=True).start()\n"
        "from outer import inner\n"
        "HELD = open('/dev/zero', 'rb')\n"
    ),
    "outer/inner.py": "ANSWER = 42\n",
    "spawner/__init__.py": "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'], check=True)\n",
    # Two processes: subprocess through os.posix_spawn (one process, two audit events), then
    # os.posix_spawn directly.
    "twice/__init__.py": (
        "import os, shutil, subprocess\n"
        "TRUE = shutil.which('true')\n"
        "subprocess.run([TRUE], check=True, close_fds=False)\n"
        "os.waitpid(os.posix_spawn(TRUE, [TRUE], dict(os.environ)), 0)\n"
    ),
    # Forks, and the child carries on importing as its parent does: only the parent may report.
    "forker/__init__.py": "import os, time\nCHILD = os.fork()\nif CHILD:\n    os.waitpid(CHILD, 0)\n",
    "raiser/__init__.py": "from raiser import inner\n",
    "raiser/inner.py": "raise RuntimeError('CUDA driver initialization failed')\n",
    # Hangs after starting a child that would outlive it, and says where the child is.
    "hanger/__init__.py": (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "with open(os.environ['HANGER_PID_FILE'], 'w') as f:\n"
        "    f.write(str(child.pid))\n"
        "while True:\n"
        "    time.sleep(0.05)\n"
    ),
    # Leaves a daemon (double fork, own session) holding stderr open: the report must not wait for it.
    "daemon/__init__.py": (
        "import os, subprocess, sys\n"
        "CODE = (\n"
        "    'import os, sys, time\\n'\n"
        "    'if os.fork():\\n    sys.exit(0)\\n'\n"
        "    'os.setsid()\\n'\n"
        "    'open(sys.argv[1], \"w\").write(str(os.getpid()))\\n'\n"
        "    'time.sleep(120)\\n'\n"
        ")\n"
        "subprocess.run([sys.executable, '-c', CODE, os.environ['DAEMON_PID_FILE']], check=True)\n"
    ),
    "quitter/__init__.py": "import os\nos._exit(3)\n",
    "quiet/__init__.py": "ANSWER = 42\n",
}


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the packages above."""
    root = tmp_path_factory.mktemp("import-packages")
    for name, text in PACKAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, packages: Path, uv_bin: Path, uv_cache: Path) -> Venv:
    """A real venv whose sys.path holds the packages (through a .pth file)."""
    made = make_venv(tmp_path_factory.mktemp("imports") / "venv", sys.executable, uv_bin=uv_bin, cache_dir=uv_cache)
    (made.site_packages / "imports_test_packages.pth").write_text(f"{packages}\n")
    return made


def imports_json(venv: Venv, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    done = run_cli("imports", *args, "--python", venv.python, "--json", env=env)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def only(document: dict[str, Any]) -> dict[str, Any]:
    (entry,) = document["imports"]
    assert isinstance(entry, dict)
    return entry


def run(venv: Venv, module: str, **kwargs: Any) -> ImportsResult:
    return run_imports((module,), str(venv.python), **kwargs)


def test_the_leaf_is_named_for_the_device_and_the_thread_not_its_importers(venv: Venv) -> None:
    result = run(venv, "chain", devices=ZERO_IS_GPU)
    (verdict,) = result.verdicts
    report = verdict.report
    assert report.error is None
    chain = ("chain", "chain.middle", "chain.leaf")
    assert [(d.path, d.opened_by.module, d.opened_by.chain) for d in report.open_device_files] == [
        ("/dev/zero", "chain.leaf", chain)
    ]
    assert report.gpu_initialized_by is not None
    assert (report.gpu_initialized_by.module, report.gpu_initialized_by.chain) == ("chain.leaf", chain)
    assert [(s.by.module, s.by.chain, s.count) for s in report.threads] == [("chain.leaf", chain, 1)]
    assert report.processes_started == 0
    assert report.modules_loaded >= 3
    assert {t.module for t in report.heaviest} >= {"chain.middle", "chain.leaf"}
    # The default --forbid is gpu-init: with /dev/zero counted as a GPU node, the run fails.
    assert verdict.forbidden == (Effect.GPU_INIT,)
    assert not result.healthy


def test_effects_around_a_quiet_import_stay_with_the_importer(venv: Venv) -> None:
    (verdict,) = run(venv, "outer").verdicts
    report = verdict.report
    assert [(d.path, d.opened_by) for d in report.open_device_files] == [("/dev/zero", Origin("outer", ("outer",)))]
    assert [(s.by, s.count) for s in report.threads] == [(Origin("outer", ("outer",)), 1)]


def test_without_the_extra_pattern_dev_zero_is_a_device_but_no_gpu(venv: Venv) -> None:
    (verdict,) = run(venv, "chain").verdicts
    assert not verdict.report.gpu_driver_initialized
    assert [d.gpu_vendor for d in verdict.report.open_device_files] == [None]
    assert verdict.forbidden == ()


@pytest.mark.parametrize(
    ("module", "forbid", "code", "forbidden"),
    [
        ("chain", "gpu-init", 0, []),
        ("chain", "devices", 1, ["devices"]),
        ("chain", "threads", 1, ["threads"]),
        ("chain", "processes", 0, []),
        ("chain", "gpu-init,threads,devices", 1, ["threads", "devices"]),
        ("chain", "slow:0", 1, ["slow"]),
        ("chain", "slow:3600", 0, []),
        ("spawner", "processes", 1, ["processes"]),
        ("spawner", "threads,devices", 0, []),
        ("forker", "processes", 1, ["processes"]),
        ("quiet", "gpu-init,threads,processes,devices", 0, []),
    ],
)
def test_exit_codes_follow_forbid(venv: Venv, module: str, forbid: str, code: int, forbidden: list[str]) -> None:
    rc, document = imports_json(venv, module, "--forbid", forbid)
    entry = only(document)
    assert (rc, document["healthy"], entry["forbidden"], entry["error"]) == (code, code == 0, forbidden, None)


def test_processes_are_attributed_to_the_module_that_started_them(venv: Venv) -> None:
    for module in ("spawner", "forker"):
        _, document = imports_json(venv, module)
        entry = only(document)
        assert entry["processes_started"] == 1
        assert entry["processes_by"] == [{"module": module, "count": 1, "chain": [module]}]


def test_a_process_is_counted_once_whichever_way_it_was_started(venv: Venv) -> None:
    _, document = imports_json(venv, "twice")
    assert only(document)["processes_by"] == [{"module": "twice", "count": 2, "chain": ["twice"]}]


def test_json_entry_has_exactly_the_documented_keys(venv: Venv) -> None:
    _, document = imports_json(venv, "chain")
    assert (document["command"], document["schema_version"], document["forbid"]) == ("imports", "1.2", ["gpu-init"])
    entry = only(document)
    assert set(entry) == {
        "module",
        "seconds",
        "modules_loaded",
        "heaviest",
        "device_files",
        "gpu_driver_initialized",
        "gpu_initialized_by",
        "threads_started",
        "processes_started",
        "threads_by",
        "processes_by",
        "shared_libraries",
        "error",
        "forbidden",
    }
    assert entry["device_files"] == [
        {"path": "/dev/zero", "opened_by": "chain.leaf", "chain": ["chain", "chain.middle", "chain.leaf"]}
    ]
    assert entry["threads_by"] == [
        {"module": "chain.leaf", "count": 1, "chain": ["chain", "chain.middle", "chain.leaf"]}
    ]
    assert (entry["threads_started"], entry["gpu_driver_initialized"], entry["gpu_initialized_by"]) == (1, False, None)
    assert all(set(h) == {"module", "seconds"} for h in entry["heaviest"])


def test_an_import_that_raises_is_a_finding_with_its_last_line(venv: Venv) -> None:
    rc, document = imports_json(venv, "raiser", "--forbid", "")
    entry = only(document)
    assert (rc, entry["error"], entry["forbidden"]) == (1, "RuntimeError: CUDA driver initialization failed", [])
    rc, document = imports_json(venv, "no_such_module_here")
    assert (rc, only(document)["error"]) == (1, "ModuleNotFoundError: No module named 'no_such_module_here'")


def test_an_interpreter_that_exits_mid_import_is_a_finding(venv: Venv) -> None:
    rc, document = imports_json(venv, "quitter")
    assert (rc, only(document)["error"]) == (1, "the interpreter exited with status 3 while importing quitter")


def test_a_hanging_import_is_cut_at_the_timeout_with_its_process_group(venv: Venv, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    rc, document = imports_json(venv, "hanger", "quiet", "--timeout", "5", env={"HANGER_PID_FILE": str(pid_file)})
    hanger, quiet = document["imports"]
    assert rc == 1
    assert hanger["error"] == "timed out after 5 s while importing hanger; its process group was killed"
    assert quiet["error"] is None  # the next module still runs
    child = int(pid_file.read_text())
    assert not _alive(child), "the hanging import's child outlived the timeout"


def test_a_daemon_holding_stderr_does_not_hold_the_report(venv: Venv, tmp_path: Path) -> None:
    pid_file = tmp_path / "daemon.pid"
    try:
        rc, document = imports_json(venv, "daemon", "--timeout", "60", env={"DAEMON_PID_FILE": str(pid_file)})
        entry = only(document)
        assert (rc, entry["error"], entry["processes_started"]) == (0, None, 1)
    finally:
        for _ in range(100):  # the daemon writes its pid just after it detaches
            if pid_file.exists() and pid_file.read_text():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
                break
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody has reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_wheeldoctor_itself_imports_clean() -> None:
    done = run_cli("imports", "wheeldoctor", "--json", "--forbid", "gpu-init,threads,processes,devices")
    assert done.returncode == 0, done.stdout + done.stderr
    entry = only(json.loads(done.stdout))
    assert (entry["error"], entry["forbidden"], entry["threads_started"], entry["processes_started"]) == (
        None,
        [],
        0,
        0,
    )
    assert (entry["device_files"], entry["gpu_driver_initialized"]) == ([], False)
    assert not any(lib["gpu_runtime"] for lib in entry["shared_libraries"])


def test_plain_output_names_the_leaf_with_its_chain(venv: Venv) -> None:
    done = run_cli("imports", "chain", "--python", venv.python, "--forbid", "threads")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == "chain: FAILED (forbidden: threads)"
    assert "  device files  /dev/zero opened by chain.leaf (chain -> chain.middle -> chain.leaf)" in lines
    assert "leaf says hello" not in done.stdout  # the module's own prints go to stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("chain", "--forbid", "bogus"), "unknown effect 'bogus'"),
        (("chain", "--forbid", "slow"), "needs one"),
        (("chain", "--forbid", "threads:3"), "only slow takes a value"),
        (("chain", "--python", "/no/such/python"), "no such interpreter"),
        (("not a module",), "is not a module name"),
        (("chain", "--timeout", "0"), "--timeout"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    done = run_cli("imports", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_an_interpreter_too_old_for_the_probe_is_exit_2() -> None:
    interpreter = find_interpreter("2.7")
    if interpreter is None:
        pytest.skip("no Python 2.7 here")
    done = run_cli("imports", "json", "--python", interpreter)
    assert done.returncode == 2
    assert "could not run" in done.stderr and "3.7+" in done.stderr
    assert "Traceback" not in done.stderr


def test_off_linux_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(ImportProbeError, match="Linux only"):
        run_imports(("json",))


@pytest.mark.parametrize(
    ("path", "vendor"),
    [
        ("/dev/nvidiactl", "nvidia"),
        ("/dev/nvidia0", "nvidia"),
        ("/dev/nvidia13", "nvidia"),
        ("/dev/nvidia-uvm", "nvidia"),
        ("/dev/nvidia-caps/nvidia-cap1", "nvidia"),
        ("/dev/kfd", "amd"),
        ("/dev/dri/renderD128", "dri"),
        ("/dev/accel/accel0", "accel"),
        ("/dev/neuron0", "aws-neuron"),
        ("/dev/nvidia-modeset", None),
        ("/dev/zero", None),
        ("/dev/null", None),
    ],
)
def test_device_patterns(path: str, vendor: str | None) -> None:
    assert gpu_vendor(path) == vendor


def test_library_patterns() -> None:
    assert is_gpu_runtime("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    assert is_gpu_runtime("/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so")
    assert is_gpu_runtime("/opt/rocm/lib/libamdhip64.so.6")
    assert not is_gpu_runtime("/usr/lib/x86_64-linux-gnu/libcurl.so.4")
    assert not is_gpu_runtime("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")


@pytest.mark.parametrize(
    ("text", "effects", "slow"),
    [
        ("gpu-init", {Effect.GPU_INIT}, None),
        ("", set(), None),
        ("threads, processes", {Effect.THREADS, Effect.PROCESSES}, None),
        ("slow:2.5,devices", {Effect.SLOW, Effect.DEVICES}, 2.5),
    ],
)
def test_forbid_parses(text: str, effects: set[Effect], slow: float | None) -> None:
    forbid = Forbid.parse(text)
    assert (forbid.effects, forbid.slow_seconds) == (effects, slow)


@pytest.mark.parametrize("version", ["3.8", "3.13"])
def test_other_interpreters_run_the_probe_with_nothing_of_ours(
    version: str, packages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The probe is standard library only and valid on old Pythons: a bare pyenv interpreter,
    # with nothing but the test packages on its path, attributes as the venv does.
    interpreter = find_interpreter(version)
    if interpreter is None:
        pytest.skip(f"no Python {version} here")
    monkeypatch.setenv("PYTHONPATH", str(packages))
    (verdict,) = run_imports(("chain",), str(interpreter), devices=ZERO_IS_GPU).verdicts
    by = verdict.report.gpu_initialized_by
    assert by is not None
    assert (by.module, by.chain, verdict.report.threads_started) == (
        "chain.leaf",
        ("chain", "chain.middle", "chain.leaf"),
        1,
    )


def test_rich_table_names_the_leaf(venv: Venv) -> None:
    from rich.console import Console

    from wheeldoctor.report import imports_text

    result = run(venv, "chain", devices=ZERO_IS_GPU)
    console = Console(record=True, width=250, force_terminal=False)
    imports_text.render_rich(result, console)
    text = console.export_text()
    assert "chain: FAILED (forbidden: gpu-init)" in text
    assert "initialised by chain.leaf (chain -> chain.middle -> chain.leaf)" in text
    assert "/dev/zero [test] opened by chain.leaf" in text
