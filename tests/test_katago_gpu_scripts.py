"""The scripts that carry KataGo to a lent GPU machine and start it there (docs/katago.md, "Deep
values for the built-in book"), in the parts that need no GPU and no network (issue 60).

- ``.ci/katago-gpu-pieces``: the network split as ``.ci/katago-gpu-pack`` splits it (one folder
  a piece, each sent on its own call) and joined as ``.ci/katago-gpu`` joins it comes back byte
  for byte; a piece that did not come is named at the join.  Once ``tail -c +N | head -c M``
  under pipefail died of SIGPIPE (status 141) and the pack stopped without a word, .gpu3 empty.
- ``.ci/katago-gpu-pack``: a failing step says which step and exits non-zero; ``.ci/katago-gpu``
  logs a failing command in OUT's run.log, the log that comes back, before it stops.
- ``.ci/katago-gpu-tuning``: KataGo's name for the GPU from ``nvidia-smi`` (a fake one on PATH,
  written here), the same chip's tuning file copied under that name when none carries it, and
  a file KataGo tuned anew kept for OUT.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / ".ci"
MIB = 1 << 20
H100_FILE = "tune13_gpuNVIDIAH10080GBHBM3_x19_y19_c384_mv14.txt"
H200_FILE = "tune13_gpuNVIDIAH200_x19_y19_c384_mv14.txt"


def run(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, cwd=cwd)


def network(path: Path, size: int) -> bytes:
    """A stand-in for KataGo's network: ``size`` bytes of a seeded random draw."""
    data = random.Random(60).randbytes(size)
    path.write_bytes(data)
    return data


# --- the network in pieces --------------------------------------------------------------------

def test_the_pieces_of_the_pack_join_back_byte_for_byte(tmp_path):
    """Three pieces, as the pack makes them (1 and 2 MiB here instead of 11 and 44, the rest in
    the third), each in its own folder; moved into one PACK folder as the calls do, the join
    of .ci/katago-gpu gives the same bytes.  After the middle piece come 1.5 MB: more than a
    pipe holds, so a `tail | head` would have died of SIGPIPE there."""
    data = network(tmp_path / "model.bin.gz", 4_700_000)
    gpu = [tmp_path / f".gpu{n}" for n in (1, 2, 3)]
    done = run(CI / "katago-gpu-pieces", "split", tmp_path / "model.bin.gz",
               f"{gpu[0]}:{MIB}", f"{gpu[1]}:{2 * MIB}", gpu[2])
    assert done.returncode == 0, done.stderr
    assert [(g / f"model.part.{n}").stat().st_size for n, g in enumerate(gpu, 1)] == [MIB, 2 * MIB, 4_700_000 - 3 * MIB]
    pack = tmp_path / "pack"
    pack.mkdir()
    for folder in gpu:  # `mv .gpuN/* /tmp/pack/`, one call each
        for file in folder.iterdir():
            file.rename(pack / file.name)
    done = run(CI / "katago-gpu-pieces", "join", pack, tmp_path / "joined.bin.gz")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "joined.bin.gz").read_bytes() == data


@pytest.mark.parametrize("lost", ["model.part.2", "model.part.3"])
def test_a_piece_that_did_not_come_is_named_at_the_join(tmp_path, lost):
    network(tmp_path / "model.bin.gz", 3 * MIB + 5)
    pack = tmp_path / "pack"
    assert run(CI / "katago-gpu-pieces", "split", tmp_path / "model.bin.gz",
               f"{pack}:{MIB}", f"{pack}:{MIB}", pack).returncode == 0
    (pack / lost).unlink()
    done = run(CI / "katago-gpu-pieces", "join", pack, tmp_path / "joined.bin.gz")
    assert done.returncode == 1
    assert "katago-gpu-pieces: join:" in done.stderr and ("did not come" in done.stderr or "missing" in done.stderr)
    assert not (tmp_path / "joined.bin.gz").exists() and not (tmp_path / "joined.bin.gz.tmp").exists()


def test_a_network_too_small_for_its_pieces_is_refused_not_split_into_an_empty_one(tmp_path):
    network(tmp_path / "model.bin.gz", 2 * MIB)
    done = run(CI / "katago-gpu-pieces", "split", tmp_path / "model.bin.gz",
               f"{tmp_path / 'a'}:{MIB}", f"{tmp_path / 'b'}:{MIB}", tmp_path / "c")
    assert done.returncode == 1
    assert "piece 2" in done.stderr and "leaves none for the pieces after it" in done.stderr
    assert not (tmp_path / "c").exists()


# --- the pack names the step that failed -------------------------------------------------------

@pytest.fixture
def pack_checkout(tmp_path) -> Path:
    """A checkout holding the GPU scripts (the pack writes .gpu1-3 into its checkout: not this one)."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    for script in CI.glob("katago-gpu*"):
        shutil.copy(script, checkout / ".ci" / script.name)
    subprocess.run(["git", "init", "-q", str(checkout)], check=True, timeout=60)
    return checkout


@pytest.mark.parametrize(("network_size", "step"), [
    (3 * MIB, "the network in three pieces"),  # too small for 11 + 44 MiB and a rest
    (56 * MIB, "KataGo's binary and libraries"),  # split, then `tar | xz` of an AppImage not there
])
def test_a_failing_step_of_the_pack_says_which_and_exits_non_zero(tmp_path, pack_checkout, network_size, step):
    katago = tmp_path / "katago"  # what `bash .ci/katago` leaves, less the AppImage
    katago.mkdir()
    with open(katago / "model.bin.gz", "wb") as model:
        model.truncate(network_size)
    done = run(pack_checkout / ".ci" / "katago-gpu-pack", env={"FUSEKI_KATAGO_DIR": str(katago)},
               cwd=pack_checkout)
    assert done.returncode != 0
    if network_size > 55 * MIB:  # the pieces were made: the third too, what .gpu3 once lacked
        assert (pack_checkout / ".gpu3" / "model.part.3").stat().st_size == network_size - 55 * MIB
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f'katago-gpu-pack: stopped at step "{step}')
    assert "exit status" in last, last


def test_the_gpu_script_logs_a_failing_command_before_it_stops(tmp_path):
    """A PACK without KataGo's binary: the untar fails, and run.log (in OUT, what comes back
    from the lent machine) says so with the command, instead of the script ending unlogged."""
    (tmp_path / "pack").mkdir()
    out = tmp_path / "out"
    done = run(CI / "katago-gpu", tmp_path / "pack", out, 60,
               env={"KATAGO_GPU_WORK": str(tmp_path / "work"), "KATAGO_GPU_KATAGO": ""})
    assert done.returncode != 0
    last = (out / "run.log").read_text().strip().splitlines()[-1]
    assert "stopped: exit status" in last and "katago-appimage.tar.xz" in last, last


# --- the tuning file for the GPU ----------------------------------------------------------------

@pytest.fixture
def gpu(tmp_path):
    """``gpu("NVIDIA H200")``: an ``nvidia-smi`` on PATH that names that GPU, answering only the
    question the script asks; the environment for the script."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()

    def make(*names: str, status: int = 0) -> dict[str, str]:
        lines = "".join(f"echo '{name}'\n" for name in names)
        (bin_folder / "nvidia-smi").write_text(
            '#!/bin/sh\n[ "$*" = "--query-gpu=name --format=csv,noheader" ] || { echo "asked: $*" >&2; exit 2; }\n'
            f"{lines}exit {status}\n")
        (bin_folder / "nvidia-smi").chmod(0o755)
        return {"PATH": f"{bin_folder}{os.pathsep}{os.environ['PATH']}"}
    return make


def place(tmp_path, env, *sources) -> tuple[subprocess.CompletedProcess, Path]:
    tuning = tmp_path / "opencltuning"
    done = run(CI / "katago-gpu-tuning", "place", tuning, *sources, env=env)
    assert done.returncode == 0, done.stderr
    return done, tuning


def test_a_gpu_with_a_file_of_its_own_name_takes_it(tmp_path, gpu):
    done, tuning = place(tmp_path, gpu("NVIDIA H100 80GB HBM3"), CI / "katago-tuning")
    assert sorted(p.name for p in tuning.iterdir()) == [H100_FILE]
    assert f"NVIDIA H100 80GB HBM3 (NVIDIAH10080GBHBM3): {H100_FILE}" in done.stdout


def test_the_h200_takes_the_h100s_file_under_its_own_name(tmp_path, gpu):
    done, tuning = place(tmp_path, gpu("NVIDIA H200", "NVIDIA H200"), CI / "katago-tuning")
    assert sorted(p.name for p in tuning.iterdir()) == [H100_FILE, H200_FILE]
    assert (tuning / H200_FILE).read_bytes() == (CI / "katago-tuning" / H100_FILE).read_bytes()
    (line,) = done.stdout.splitlines()  # two GPUs of one model: said once
    assert f"{H100_FILE}, of the same chip (GH100), copied as {H200_FILE}" in line


def test_the_h200s_file_from_its_run_is_the_one_the_mapping_makes(tmp_path, gpu):
    """The file the H200's run used (shared data) is byte for byte what the mapping gives it:
    the repository needs no copy of its own."""
    ran = ROOT.parent / "shared" / "data" / "ai-values" / H200_FILE
    if not ran.exists():
        pytest.skip(f"no {ran}")
    _, tuning = place(tmp_path, gpu("NVIDIA H200"), CI / "katago-tuning")
    assert (tuning / H200_FILE).read_bytes() == ran.read_bytes()


def test_a_file_of_the_gpus_own_name_is_preferred_to_the_same_chips(tmp_path, gpu):
    """A file tuned on the H200 itself (in PACK) is taken, not replaced by the H100's."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / H200_FILE).write_text("tuned on the H200\n")
    done, tuning = place(tmp_path, gpu("NVIDIA H200"), CI / "katago-tuning", pack)
    assert (tuning / H200_FILE).read_text() == "tuned on the H200\n"
    assert "same chip" not in done.stdout


def test_a_gpu_of_another_chip_gets_no_file_and_the_log_says_katago_tunes(tmp_path, gpu):
    done, tuning = place(tmp_path, gpu("NVIDIA A100-SXM4-80GB"), CI / "katago-tuning")
    assert sorted(p.name for p in tuning.iterdir()) == [H100_FILE]
    assert "NVIDIA A100-SXM4-80GB (NVIDIAA100SXM480GB): no tuning file for it nor for its chip" in done.stdout
    assert "KataGo tunes" in done.stdout


def test_without_an_answer_from_nvidia_smi_the_files_are_placed_as_they_came(tmp_path, gpu):
    done, tuning = place(tmp_path, gpu(status=9), CI / "katago-tuning")  # as with no driver loaded
    assert sorted(p.name for p in tuning.iterdir()) == [H100_FILE]
    assert "nvidia-smi failed" in done.stdout


def test_a_file_katago_tuned_anew_is_kept_for_out_and_the_copies_placed_are_not(tmp_path, gpu):
    _, tuning = place(tmp_path, gpu("NVIDIA H200"), CI / "katago-tuning")
    tuned = "tune13_gpuNVIDIAA100SXM480GB_x19_y19_c384_mv14.txt"
    (tuning / tuned).write_text("tuned here\n")  # as KataGo writes it on its first start
    out = tmp_path / "out"
    done = run(CI / "katago-gpu-tuning", "keep", out, tuning, CI / "katago-tuning")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [tuned]
    assert f"KataGo tuned anew: {tuned}" in done.stdout
