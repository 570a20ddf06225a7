"""bench/mirror_corpus.py: mirror images and colour-swapped copies of SGF archives (issue 42).

Each copy is checked against a slow implementation written here: sgfmill parses the original
and the copy, and every node's every property of the copy must be the original's transformed
in Python (mirror: sgfmill's (row, col) -> (row, size-1-col); colours: the Black and White
properties renamed, PL and RE's winner swapped; everything else as it was).  On 200 real
Tygem games and hand-written hard cases (compressed point lists, an escaped ``]`` in a
comment, passes, a handicap, 9x9, 13x13 and 25x25 boards, every kind of RE).  The command
itself runs on an archive of them, and a real SQLite book takes original and copies: four
times the games, no duplicate (``fuseki import``'s fingerprint sees new games).
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from sgfmill import sgf

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.store import Book

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("mirror_corpus", ROOT / "bench" / "mirror_corpus.py")
mirror_corpus = importlib.util.module_from_spec(_spec)  # bench/mirror_corpus.py: the copies
_spec.loader.exec_module(mirror_corpus)

VARIANTS = {"mirror": (True, False), "colours": (False, True), "mirror-colours": (True, True)}
# The renamed properties of a colour swap (the slow implementation's own table).
RENAMED = {"B": "W", "AB": "AW", "PB": "PW", "BR": "WR", "BT": "WT", "TB": "TW", "OB": "OW",
           "BL": "WL", "GB": "GW"}
RENAMED.update({w: b for b, w in list(RENAMED.items())})
POINT_SETS = {"AB", "AW", "AE", "TR", "SQ", "CR", "MA", "SL", "TB", "TW", "DD"}

# (RE of the original, RE of the colour-swapped copy), written out by hand.
RESULTS = [("B+R", "W+R"), ("W+Resign", "B+Resign"), ("B+2.5", "W+2.5"), ("W+T", "B+T"),
           ("b+r", "w+r"), ("W", "B"), ("0", "0"), ("Draw", "Draw"), ("Void", "Void"), ("?", "?")]
# A different game each, all left of the middle: no game is another's mirror image.
RESULT_MOVES = ["cd", "dc", "de", "ed", "cc", "dd", "ce", "ec", "cf", "fc"]

HARD = {
    # Compressed lists in setup and markup, an escaped ] (and a B[..] inside) in a comment,
    # passes both ways, labels, arrows, lines, every markup with points, GB and a variation.
    "hard.sgf": (rb"(;FF[4]GM[1]CA[UTF-8]SZ[19]KM[6.5]PB[Black One]PW[White Two]BR[3d]WR[5d]"
                 rb"RE[B+R]DT[2020-01-02]AB[aa:cc][pd]AW[dp:ep][qq]AE[bb]PL[W]"
                 rb";W[qc]C[a comment \] with B[aa\] inside]TR[qq:rr]LB[pd:A][dp:hi\]x]AR[aa:cc]LN[dd:fg]"
                 rb"MA[ab]SQ[bc]CR[cd]SL[de]DD[ef:fg]TB[ss]TW[ra:sb]GB[1]"
                 rb";B[];W[tt];B[oc]BL[30]OB[5](;W[nc])(;W[nd]C[\\]))"),
    # A handicap game: four stones, White to play first, komi 0.5.
    "handicap.sgf": (b"(;FF[4]GM[1]SZ[19]HA[4]KM[0.5]PB[b]PW[w]RE[W+12.5]AB[dd][pd][dp][pp]PL[W]"
                     b";W[qf];B[qh];W[qc];B[pc];W[qd];B[pf])"),
    "nine.sgf": b"(;FF[4]GM[1]SZ[9]KM[7]RE[B+3]AB[aa:bb];B[ee];W[gc];B[cg];W[tt];B[ic];W[])",
    "thirteen.sgf": (b"(;FF[4]GM[1]SZ[13]RE[W+R]AW[aa:bm];B[jj];W[dk];B[jd];W[mm];B[kc]"
                     b"LB[kc:\xb0\xa1\xb0\xa2]C[EUC-KR bytes, kept as they are: \xc7\xd1\xb1\xdb])"),
    # 25x25: tt is a point there (T20), not a pass.
    "twentyfive.sgf": b"(;FF[4]GM[1]SZ[25];B[tt];W[yy];B[ay];W[]TR[xa:yb])",
    # Spaces and line breaks between properties and values.
    "spaced.sgf": b"(;FF[4]GM[1]SZ[19]\n AB [dd]\n [pp] RE [ B+R ]\n;B [qd]\n;W[dq] )",
}
for n, ((before, _), move) in enumerate(zip(RESULTS, RESULT_MOVES)):
    HARD[f"result{n}.sgf"] = f"(;FF[4]GM[1]SZ[19]RE[{before}];B[{move}];W[jj])".encode()


def flipped(point, size):
    """sgfmill's (row, col) reflected left-right; None (a pass) stays None."""
    return None if point is None else (point[0], size - 1 - point[1])


def swapped_result(raw: bytes) -> bytes:
    """RE after a colour swap, by the hand-written table (and the same rule for the real games'
    ``B+...``/``W+...``)."""
    for before, after in RESULTS:
        if raw.strip() == before.encode():
            return raw.replace(before.encode(), after.encode())
    text = raw.decode("latin-1")
    if text[:2] in ("B+", "W+"):
        return ({"B": "W", "W": "B"}[text[0]] + text[1:]).encode("latin-1")
    raise AssertionError(f"no expected result for RE[{text}]")


def nodes(game):
    """Every node of an sgfmill game, depth first."""
    stack = [game.get_root()]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(list(node)))


def read(node, ident: str):
    """A property as sgfmill interprets it (points, point sets, labels, arrows; the raw values
    of the rest)."""
    if ident in ("B", "W", "PL") or ident in POINT_SETS:
        return node.get(ident)
    if ident in ("LB", "AR", "LN"):
        return sorted(node.get(ident))
    return node.get_raw_list(ident)


def expected(node, ident: str, size: int, mirror: bool, colours: bool):
    """The slow implementation: what the copy's property must hold."""
    value = read(node, ident)
    if mirror and ident in ("B", "W"):
        value = flipped(value, size)
    elif mirror and ident in POINT_SETS:
        value = {flipped(p, size) for p in value}
    elif mirror and ident == "LB":
        value = sorted((flipped(p, size), text) for p, text in value)
    elif mirror and ident in ("AR", "LN"):
        value = sorted((flipped(a, size), flipped(b, size)) for a, b in value)
    if colours and ident == "PL":
        value = {"b": "w", "w": "b"}[value]
    elif colours and ident == "RE":
        value = [swapped_result(raw) for raw in value]
    return value


def check_copy(original: bytes, copy: bytes, mirror: bool, colours: bool, name: str) -> None:
    """The copy is the original transformed, node by node and property by property."""
    before, after = sgf.Sgf_game.from_bytes(original), sgf.Sgf_game.from_bytes(copy)
    size = before.get_size()
    assert after.get_size() == size, name
    pairs = list(zip(nodes(before), nodes(after), strict=True))
    for old, new in pairs:
        assert len(old) == len(new), name
        idents = old.properties()
        assert sorted(new.properties()) == sorted(RENAMED.get(i, i) if colours else i for i in idents), name
        for ident in idents:
            target = RENAMED.get(ident, ident) if colours else ident
            assert read(new, target) == expected(old, ident, size, mirror, colours), (name, ident)


@pytest.fixture(scope="module")
def games(tygem_games) -> list[tuple[str, bytes]]:
    """200 real Tygem games (fails under FUSEKI_REQUIRE_SERVICES=1 without the shared data)
    and the hard cases."""
    return tygem_games[:200] + [(f"hard/{name}", data) for name, data in HARD.items()]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_copy_is_the_original_transformed(games, variant):
    mirror, colours = VARIANTS[variant]
    for name, data in games:
        copy = mirror_corpus.transform(data, mirror, colours, name=name)
        check_copy(data, copy, mirror, colours, name)
        assert copy != data, name  # every game here has a point off the middle column


def test_comments_and_names_are_copied_byte_for_byte():
    copy = mirror_corpus.transform(HARD["hard.sgf"], True, True)
    assert rb"C[a comment \] with B[aa\] inside]" in copy  # the escaped ] does not end the value
    assert rb"PW[Black One]PB[White Two]" in copy and rb"LB[dd:A][pp:hi\]x]" in copy
    assert rb"AW[qa:sc][dd]" in copy  # the reflected rectangle, upper left first
    assert b"C[EUC-KR bytes, kept as they are: \xc7\xd1\xb1\xdb]" in mirror_corpus.transform(
        HARD["thirteen.sgf"], True, False)
    assert b"KM[0.5]" in mirror_corpus.transform(HARD["handicap.sgf"], True, True)  # komi as recorded


def test_a_point_off_the_board_is_left_out_with_its_reason():
    with pytest.raises(mirror_corpus.Untransformable, match=r"x\.sgf: column 'z' is off a board of 19 columns"):
        mirror_corpus.transform(b"(;SZ[19]AB[zz];B[pd])", True, False, name="x.sgf")
    assert mirror_corpus.transform(b"(;SZ[19]AB[zz];B[pd])", False, True) == b"(;SZ[19]AW[zz];W[pd])"


def write_archive(path: Path, members: list[tuple[str, bytes]]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_the_command_writes_every_variant_and_the_book_takes_them_as_new_games(games, tmp_path):
    long_name = "long/" + "n" * 120 + ".sgf"  # past ustar's 100 bytes: a GNU long-name header
    kept = games + [(long_name, HARD["nine.sgf"].replace(b"B[ee]", b"B[fe]"))]
    source = tmp_path / "src" / "month.tgz"
    source.parent.mkdir()
    write_archive(source, kept + [("README.txt", b"not a game")])
    into = tmp_path / "copies"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "mirror_corpus.py"), "--into", str(into),
                          "--workers", "2", "--fingerprints", str(source.parent)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    n = len(kept)
    for variant in VARIANTS:
        assert f"{variant}: {n:,} games written" in run.stdout
    assert f"copies: {3 * n:,} games" in run.stdout and f"with the originals: {4 * n:,} games" in run.stdout
    assert "[1/1] month.tgz" in run.stderr and "left" in run.stderr
    assert f"a book of them all would hold {4 * n:,} games (0 duplicates)" in run.stdout  # as the import below
    assert sorted(p.name for p in into.iterdir()) == sorted(f"month.{v}.tgz" for v in VARIANTS)
    originals = dict(kept)
    for variant, (mirror, colours) in VARIANTS.items():
        with tarfile.open(into / f"month.{variant}.tgz") as archive:
            members = [(m.name, archive.extractfile(m).read()) for m in archive.getmembers()]
        assert [name for name, _ in members] == [f"{variant}/{name}" for name, _ in kept]  # README left out
        for name, copy in members:
            check_copy(originals[name.partition("/")[2]], copy, mirror, colours, name)

    with Book.open(str(tmp_path / "book.sqlite")) as book:
        first = importer.import_paths(book, [str(source)], workers=0)
        assert (first.added, first.duplicates) == (n, 0), first
        again = importer.import_paths(book, [str(into)], workers=0)
        assert (again.added, again.duplicates) == (3 * n, 0), again
        assert len(book.game_ids()) == 4 * n


def test_bad_arguments_get_one_line_errors(tmp_path):
    script = str(ROOT / "bench" / "mirror_corpus.py")
    missing = subprocess.run([sys.executable, script, "--into", str(tmp_path), str(tmp_path / "none.tgz")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and missing.stderr.strip().endswith("none.tgz: no such file or folder")
    bad = subprocess.run([sys.executable, script, "--into", str(tmp_path), "--variants", "flip", script],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--variants: flip is not one of mirror, colours, mirror-colours" in bad.stderr
